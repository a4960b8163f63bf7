/* wick-trace — the command-line face of Wick, for scripts and CI. */
#include "config.h"

#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "wick-input.h"
#include "wick-trace-commands.h"

typedef struct
{
  const char *name;
  WickTraceCommandFunc func;
  const char *synopsis;
} WickTraceCommand;

static const WickTraceCommand commands[] = {
#ifdef WICK_TRACE_HAVE_CHECK
  { "check", wick_trace_check, "check [--json] FILE...          parse status, health issues, gradient verdict" },
#endif
#ifdef WICK_TRACE_HAVE_SUMMARY
  { "summary", wick_trace_summary, "summary FILE                    run identity, counts, top spans, peak memory" },
#endif
#ifdef WICK_TRACE_HAVE_TRACKS
  { "tracks", wick_trace_tracks, "tracks [--json] FILE            processes, threads and tracks of a trace" },
#endif
#ifdef WICK_TRACE_HAVE_CONVERT
  { "convert", wick_trace_convert, "convert [--strict|--chrome] FILE --output OUT   rewrite a trace" },
#endif
#ifdef WICK_TRACE_HAVE_COMPARE
  { "compare", wick_trace_compare, "compare [--json] [--allow-mismatch] A B | --cohort A... -- B...   what changed" },
#endif
#ifdef WICK_TRACE_HAVE_RENDER
  { "render", wick_trace_render, "render --view V --output FILE [--size WxH] [--range A:B] TRACE" },
#endif
#ifdef WICK_TRACE_HAVE_LIVE
  { "sessions", wick_trace_sessions, "sessions [--json]               list live sessions" },
  { "attach", wick_trace_attach, "attach [--duration S] --output FILE PID|--follow TRACE   save a live session or a growing file" },
  { "control", wick_trace_control, "control PID COMMAND [ARGS...]   send one control command" },
#endif
};

static int
usage (FILE *out)
{
  fprintf (out, "Usage: wick-trace [--max-line-bytes N] COMMAND [ARGS...]\n\nCommands:\n");
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    fprintf (out, "  %s\n", commands[i].synopsis);
  fprintf (out, "\n--max-line-bytes N   longest JSONL line read (default 256M; K, M, G suffixes)\n");
  return WICK_TRACE_EXIT_USAGE;
}

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");

  /* global options before the command */
  while (argc >= 2 && g_str_has_prefix (argv[1], "--max-line-bytes"))
    {
      const char *value = NULL;
      gsize bytes;
      if (argv[1][strlen ("--max-line-bytes")] == '=')
        value = argv[1] + strlen ("--max-line-bytes=");
      else if (argv[1][strlen ("--max-line-bytes")] == '\0' && argc >= 3)
        {
          value = argv[2];
          argv++;
          argc--;
        }
      if (!wick_parse_byte_size (value, &bytes))
        {
          fprintf (stderr, "wick-trace: --max-line-bytes needs a size such as 512M, not “%s”\n",
                   value ? value : "");
          return WICK_TRACE_EXIT_USAGE;
        }
      wick_set_max_line_length (bytes);
      argv[1] = argv[0];
      argv++;
      argc--;
    }
  if (argc < 2)
    return usage (stderr);
  if (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0)
    {
      usage (stdout);
      return WICK_TRACE_EXIT_OK;
    }
  if (strcmp (argv[1], "--version") == 0)
    {
      printf ("wick-trace %s\n", WICK_VERSION);
      return WICK_TRACE_EXIT_OK;
    }

  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    if (strcmp (argv[1], commands[i].name) == 0)
      return commands[i].func (argc - 1, argv + 1);

  fprintf (stderr, "wick-trace: unknown command “%s”\n", argv[1]);
  return usage (stderr);
}
