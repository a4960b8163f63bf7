/* wick-trace-render.c — `wick-trace render`: draw a view of a trace to a file.
 *
 *   wick-trace render --view timeline|memory|coverage|health --output FILE.png|.svg|.pdf
 *                     [--size WxH] [--range START_NS:END_NS] [--dark] TRACE
 *
 * TRACE is candle-graph JSONL or Chrome / Perfetto trace-event JSON (e.g. the
 * PyTorch profiler's), told apart by its first bytes.
 *
 * Uses the app's drawing code (wick_views_dep) with no window. A trace that
 * fails to parse is still drawn from the records read before the error (the
 * health view shows the error), and the exit status says so (2).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wick-trace-commands.h"
#include "model/wick-chrome-import.h"
#include "ui/wick-render.h"

static int
render_usage (const char *problem)
{
  if (problem)
    fprintf (stderr, "wick-trace render: %s\n", problem);
  fprintf (stderr, "Usage: wick-trace render --view timeline|memory|coverage|health --output "
                   "FILE.png|.svg|.pdf [--size WxH] [--range START_NS:END_NS] [--dark] TRACE\n");
  return WICK_TRACE_EXIT_USAGE;
}

static gboolean
parse_size (const char *text, int *width, int *height)
{
  char *end;
  long w = strtol (text, &end, 10);
  if (end == text || (*end != 'x' && *end != 'X'))
    return FALSE;
  const char *rest = end + 1;
  long h = strtol (rest, &end, 10);
  if (end == rest || *end != '\0' || w < 16 || h < 16 || w > 20000 || h > 20000)
    return FALSE;
  *width = (int)w;
  *height = (int)h;
  return TRUE;
}

static gboolean
parse_range (const char *text, guint64 *start, guint64 *end)
{
  g_auto (GStrv) parts = g_strsplit (text, ":", 2);
  if (g_strv_length (parts) != 2)
    return FALSE;
  if (!g_ascii_string_to_unsigned (parts[0], 10, 0, G_MAXUINT64, start, NULL)
      || !g_ascii_string_to_unsigned (parts[1], 10, 0, G_MAXUINT64, end, NULL))
    return FALSE;
  return *end > *start;
}

int
wick_trace_render (int argc, char **argv)
{
  WickRenderOptions options = { WICK_RENDER_TIMELINE, 1600, 900, 0, 0, FALSE };
  const char *output = NULL, *trace = NULL;
  gboolean have_view = FALSE;

  for (int i = 1; i < argc; i++)
    {
      const char *arg = argv[i];
      const char *value = i + 1 < argc ? argv[i + 1] : NULL;
      if (strcmp (arg, "--view") == 0 && value)
        {
          if (!wick_render_view_from_string (value, &options.view))
            return render_usage ("--view must be timeline, memory, coverage or health");
          have_view = TRUE;
          i++;
        }
      else if (strcmp (arg, "--output") == 0 && value)
        output = argv[++i];
      else if (strcmp (arg, "--size") == 0 && value)
        {
          if (!parse_size (value, &options.width, &options.height))
            return render_usage ("--size must be WxH, each between 16 and 20000");
          i++;
        }
      else if (strcmp (arg, "--range") == 0 && value)
        {
          if (!parse_range (value, &options.start_ns, &options.end_ns))
            return render_usage ("--range must be START_NS:END_NS with END_NS > START_NS");
          i++;
        }
      else if (strcmp (arg, "--dark") == 0)
        options.dark = TRUE;
      else if (arg[0] == '-' && arg[1] != '\0')
        {
          g_autofree char *message = g_strdup_printf ("unknown or incomplete option “%s”", arg);
          return render_usage (message);
        }
      else if (trace == NULL)
        trace = arg;
      else
        return render_usage ("only one TRACE may be given");
    }
  if (!have_view || output == NULL || trace == NULL)
    return render_usage ("--view, --output and TRACE are required");

  g_autoptr (WickDocument) document = wick_document_new_with_extensions (TRUE);
  g_autoptr (GError) error = NULL;
  int status = WICK_TRACE_EXIT_OK;
  if (!wick_document_load_file_auto (document, trace, NULL, NULL, NULL, &error))
    {
      const WickParseError *parse = wick_document_get_parse_error (document);
      if (parse == NULL || !parse->failed)
        {
          fprintf (stderr, "wick-trace render: %s\n", error->message);
          return WICK_TRACE_EXIT_USAGE;
        }
      fprintf (stderr, "wick-trace render: %s%s%s (drawing the records read before it)\n",
               parse->message, parse->cause ? ": " : "", parse->cause ? parse->cause : "");
      status = WICK_TRACE_EXIT_PARSE;
    }
  g_clear_error (&error);
  if (!wick_render_to_file (document, &options, output, &error))
    {
      fprintf (stderr, "wick-trace render: %s\n", error->message);
      return WICK_TRACE_EXIT_USAGE;
    }
  return status;
}
