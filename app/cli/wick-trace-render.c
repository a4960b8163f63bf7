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
  g_autofree char *view = NULL, *output_arg = NULL, *size = NULL, *range = NULL;
  gboolean dark = FALSE;
  const GOptionEntry entries[] = {
    { "view", 0, 0, G_OPTION_ARG_STRING, &view,
      "The view to draw: timeline, memory, coverage or health (required)", "VIEW" },
    { "output", 0, 0, G_OPTION_ARG_FILENAME, &output_arg,
      "The image to write; .png, .svg or .pdf (required)", "FILE" },
    { "size", 0, 0, G_OPTION_ARG_STRING, &size,
      "Width and height in pixels, each 16 to 20000 (default 1600x900)", "WxH" },
    { "range", 0, 0, G_OPTION_ARG_STRING, &range,
      "The time range drawn, in trace nanoseconds (default: all)", "START_NS:END_NS" },
    { "dark", 0, 0, G_OPTION_ARG_NONE, &dark, "Draw with the dark style", NULL },
    G_OPTION_ENTRY_NULL,
  };
  int parsed = wick_trace_parse_options (
    "render", "TRACE",
    "Draw a view of a trace (candle-graph JSONL or trace-event JSON) to an image.\n"
    "A trace that fails to parse is drawn from the records read before the error; "
    "the exit status is then 2.",
    entries, FALSE, &argc, &argv);
  if (parsed >= 0)
    return parsed;
  if (view == NULL || output_arg == NULL || argc < 2)
    return wick_trace_usage_error ("render", "--view, --output and TRACE are required");
  if (argc > 2)
    return wick_trace_usage_error ("render", "only one TRACE may be given");
  if (!wick_render_view_from_string (view, &options.view))
    return wick_trace_usage_error ("render", "--view must be timeline, memory, coverage or health");
  if (size != NULL && !parse_size (size, &options.width, &options.height))
    return wick_trace_usage_error ("render", "--size must be WxH, each between 16 and 20000");
  if (range != NULL && !parse_range (range, &options.start_ns, &options.end_ns))
    return wick_trace_usage_error ("render",
                                   "--range must be START_NS:END_NS with END_NS > START_NS");
  options.dark = dark;
  output = output_arg;
  trace = argv[1];

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
