/* wick-trace — the command-line face of Wick, for scripts and CI. */
#include "config.h"

#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "wick-input.h"
#include "wick-trace-commands.h"
#include "wick-trace-locale.h"
#include "wick-trace-remote.h"

typedef struct
{
  const char *name;
  WickTraceCommandFunc func;
  const char *synopsis;
} WickTraceCommand;

static const WickTraceCommand commands[] = {
  { "check", wick_trace_check, "check [--json] FILE...          parse status, health issues, gradient verdict" },
  { "summary", wick_trace_summary, "summary FILE                    run identity, counts, top spans, peak memory" },
  { "tracks", wick_trace_tracks, "tracks [--json] FILE            processes, threads and tracks of a trace" },
  { "convert", wick_trace_convert, "convert [--strict|--chrome] FILE --output OUT   rewrite a trace" },
  { "compare", wick_trace_compare, "compare [--json] [--allow-mismatch] A B | --cohort A... -- B...   what changed" },
  { "ranks", wick_trace_ranks, "ranks [--json] FILE...            the ranks of one job: clock offsets, collectives, stragglers" },
  { "memory", wick_trace_memory, "memory [--json] [--top N] FILE   a PyTorch CUDA memory snapshot (pickle, read as data only)" },
  { "gpu", wick_trace_gpu, "gpu [--json] FILE               kernels, operators, steps and launches of a GPU trace" },
  { "arrays", wick_trace_arrays, "arrays FILE                     tracks, slices, kernels, collectives as binary columns (wick.trace.open)" },
#ifdef WICK_TRACE_HAVE_RENDER
  { "render", wick_trace_render, "render --view V --output FILE [--size WxH] [--range A:B] TRACE" },
#endif
  { "sessions", wick_trace_sessions, "sessions [--json]               list live sessions" },
  { "attach", wick_trace_attach, "attach [--duration S] --output FILE PID|--follow TRACE   save a live session or a growing file" },
  { "control", wick_trace_control, "control PID COMMAND [ARGS...]   send one control command" },
  { "serve", wick_trace_serve, "serve --stdio                   the node's end of --remote (run by ssh)" },
};

static char *
commands_text (void)
{
  GString *text = g_string_new ("Commands:\n");
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    g_string_append_printf (text, "  %s\n", commands[i].synopsis);
  g_string_append (text, "\n“wick-trace COMMAND --help” lists a command’s options.");
  return g_string_free (text, FALSE);
}

int
wick_trace_usage_error (const char *name, const char *format, ...)
{
  va_list args;
  g_autofree char *message = NULL;
  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  fprintf (stderr, "wick-trace %s: %s (see “wick-trace %s --help”)\n", name, message, name);
  return WICK_TRACE_EXIT_USAGE;
}

int
wick_trace_parse_options (const char *name, const char *parameters, const char *summary,
                          const GOptionEntry *entries, gboolean keep_separator, int *argc,
                          char ***argv)
{
  gboolean help = FALSE;
  const GOptionEntry help_entries[] = {
    { "help", 'h', 0, G_OPTION_ARG_NONE, &help, "Show this help", NULL },
    G_OPTION_ENTRY_NULL,
  };
  g_autofree char *prgname = g_strdup_printf ("wick-trace %s", name);
  g_autoptr (GOptionContext) context = g_option_context_new (parameters);
  g_autoptr (GError) error = NULL;

  /* The "Usage:" line names the program by g_get_prgname(). */
  g_set_prgname (prgname);
  g_option_context_set_help_enabled (context, FALSE);
  g_option_context_set_summary (context, summary);
  if (entries != NULL)
    g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_add_main_entries (context, help_entries, NULL);
  if (!g_option_context_parse (context, argc, argv, &error))
    return wick_trace_usage_error (name, "%s", error->message);
  if (help)
    {
      g_autofree char *text = g_option_context_get_help (context, TRUE, NULL);
      fputs (text, stdout);
      return WICK_TRACE_EXIT_OK;
    }
  for (int i = 1; !keep_separator && i < *argc; i++)
    if (strcmp ((*argv)[i], "--") == 0)
      {
        memmove (&(*argv)[i], &(*argv)[i + 1], (size_t)(*argc - i) * sizeof (char *));
        (*argc)--;
        break;
      }
  return -1;
}

int
main (int argc, char **argv)
{
  g_autofree char *max_line_bytes = NULL;
  g_autofree char *max_decompressed = NULL, *max_ratio = NULL;
  gboolean help = FALSE, version = FALSE;
  g_auto (GStrv) remotes = NULL;
  g_autofree char *remote_command = NULL;
  const GOptionEntry entries[] = {
    { "remote", 0, 0, G_OPTION_ARG_STRING_ARRAY, &remotes,
      "sessions, attach, control on another machine, through ssh (repeat for sessions)",
      "ssh://[USER@]HOST[:PORT]" },
    { "remote-command", 0, 0, G_OPTION_ARG_FILENAME, &remote_command,
      "wick-trace on the remote machine (default: wick-trace on its PATH)", "PATH" },
    { "max-line-bytes", 0, 0, G_OPTION_ARG_STRING, &max_line_bytes,
      "Longest JSONL line, or JSON event, string or member, read (default 256M; K, M, G "
      "suffixes)",
      "N" },
    { "max-decompressed-bytes", 0, 0, G_OPTION_ARG_STRING, &max_decompressed,
      "Most bytes decompressed from a .gz/.zst file (default 32G)", "N" },
    { "max-compression-ratio", 0, 0, G_OPTION_ARG_STRING, &max_ratio,
      "Highest decompressed:compressed ratio past 64 MiB (default 200)", "R" },
    { "version", 0, 0, G_OPTION_ARG_NONE, &version, "Show the version", NULL },
    { "help", 'h', 0, G_OPTION_ARG_NONE, &help, "Show this help", NULL },
    G_OPTION_ENTRY_NULL,
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("COMMAND [ARGS...]");
  g_autoptr (GError) error = NULL;
  g_autofree char *description = commands_text ();

  /* The user's locale, but English messages: scripts read candle-graph's verdicts
   * (check --json), which must not change with LANG (see wick-trace-locale.h). */
  wick_trace_setup_locale ();
  g_set_prgname ("wick-trace");
  g_option_context_set_help_enabled (context, FALSE);
  /* Global options only before the command: its own come after it. */
  g_option_context_set_strict_posix (context, TRUE);
  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_set_description (context, description);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      fprintf (stderr, "wick-trace: %s (see “wick-trace --help”)\n", error->message);
      return WICK_TRACE_EXIT_USAGE;
    }
  if (help)
    {
      g_autofree char *text = g_option_context_get_help (context, TRUE, NULL);
      fputs (text, stdout);
      return WICK_TRACE_EXIT_OK;
    }
  if (version)
    {
      printf ("wick-trace %s\n", WICK_VERSION);
      return WICK_TRACE_EXIT_OK;
    }
  if (!wick_max_line_length_from_environment (&error))
    {
      fprintf (stderr, "wick-trace: %s\n", error->message);
      return WICK_TRACE_EXIT_USAGE;
    }
  if (max_line_bytes != NULL)
    {
      gsize bytes;
      if (!wick_parse_byte_size (max_line_bytes, &bytes))
        {
          fprintf (stderr, "wick-trace: --max-line-bytes needs a size such as 512M, not “%s”\n",
                   max_line_bytes);
          return WICK_TRACE_EXIT_USAGE;
        }
      wick_set_max_line_length (bytes);
    }
  if (max_decompressed != NULL)
    {
      gsize bytes;
      if (!wick_parse_byte_size (max_decompressed, &bytes))
        {
          fprintf (stderr,
                   "wick-trace: --max-decompressed-bytes needs a size such as 64G, not “%s”\n",
                   max_decompressed);
          return WICK_TRACE_EXIT_USAGE;
        }
      wick_set_max_decompressed_bytes (bytes);
    }
  if (max_ratio != NULL)
    {
      guint ratio;
      if (!wick_parse_ratio (max_ratio, &ratio))
        {
          fprintf (stderr,
                   "wick-trace: --max-compression-ratio needs a whole number such as 1000, not "
                   "“%s”\n",
                   max_ratio);
          return WICK_TRACE_EXIT_USAGE;
        }
      wick_set_max_compression_ratio (ratio);
    }
  if (argc >= 2 && strcmp (argv[1], "--") == 0)
    {
      argv[1] = argv[0];
      argv++;
      argc--;
    }
  if (argc < 2)
    {
      fprintf (stderr, "wick-trace: a COMMAND is required\n\n%s\n", description);
      return WICK_TRACE_EXIT_USAGE;
    }

  if (remote_command != NULL && remotes == NULL)
    {
      fprintf (stderr, "wick-trace: --remote-command goes with --remote\n");
      return WICK_TRACE_EXIT_USAGE;
    }
  if (remotes != NULL)
    {
      static const char *const remote_commands[]
        = { "sessions", "attach", "control", "convert", NULL };
      if (!g_strv_contains (remote_commands, argv[1]))
        {
          fprintf (stderr, "wick-trace: --remote works with sessions, attach, control and "
                           "convert, not “%s”\n",
                   argv[1]);
          return WICK_TRACE_EXIT_USAGE;
        }
      wick_trace_remotes = remotes;
      wick_trace_remote_command = remote_command;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    if (strcmp (argv[1], commands[i].name) == 0)
      return commands[i].func (argc - 1, argv + 1);

  fprintf (stderr, "wick-trace: unknown command “%s”\n\n%s\n", argv[1], description);
  return WICK_TRACE_EXIT_USAGE;
}
