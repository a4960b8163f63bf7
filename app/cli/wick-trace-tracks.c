/* wick-trace-tracks.c — `wick-trace tracks [--json] FILE`: the track model of
 * a trace, for scripts.
 *
 * Reads candle-graph JSONL (Wick extension records allowed) or Chrome/Perfetto
 * JSON, and prints its processes and tracks in display order. With --json,
 * one object on one line:
 *   {"file":…, "format":"candle-graph"|"chrome",
 *    "processes":[{"pid":N,"name":S|null}],
 *    "tracks":[{"kind":"slices"|"async"|"counter"|"instants"|"device"|"objects"|"samples",
 *               "process":PID|null, "thread":TID|null, "name":S|null,
 *               "events":N, "max_depth":D}],
 *    "flows":N, "skipped":{construct: count}}
 * events counts slices (a B never closed included), async slices (their
 * instant steps are not counted), counter samples, instants, device
 * intervals, object events (Chrome O/N/D, an instants track of the process)
 * or samples (Chrome P, an instants track of the thread); max_depth is the deepest row as the timeline lays it out.
 * A trace that failed to parse still prints what was read before the error
 * (the error goes to stderr). Exit status as `check`: 0 valid, 1 health
 * errors, 2 parse error, 3 usage or I/O error.
 */
#include "config.h"

#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#include "wick-chrome-import.h"
#include "wick-document.h"
#include "wick-trace-commands.h"
#include "wick-tracks.h"

static void
add_str_or_null (JsonBuilder *b, WickDocument *doc, WickStr s)
{
  if (s == 0)
    json_builder_add_null_value (b);
  else
    json_builder_add_string_value (b, wick_document_str (doc, s));
}

static void
print_json (const char *file, WickDocument *doc, WickTracks *t)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  guint n_processes, n_threads, n_tracks, n_order, n_flows;
  const WickProcess *processes = wick_tracks_get_processes (t, &n_processes);
  const WickThread *threads = wick_tracks_get_threads (t, &n_threads);
  const WickTrack *tracks = wick_tracks_get_tracks (t, &n_tracks);
  const guint32 *order = wick_tracks_get_display_order (t, &n_order);
  wick_tracks_get_flows (t, &n_flows);

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "file");
  json_builder_add_string_value (b, file);
  json_builder_set_member_name (b, "format");
  json_builder_add_string_value (b, wick_trace_format_to_string (wick_tracks_get_format (t)));
  json_builder_set_member_name (b, "processes");
  json_builder_begin_array (b);
  for (guint i = 0; i < n_processes; i++)
    {
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "pid");
      json_builder_add_int_value (b, processes[i].pid);
      json_builder_set_member_name (b, "name");
      add_str_or_null (b, doc, processes[i].name);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "tracks");
  json_builder_begin_array (b);
  for (guint k = 0; k < n_order; k++)
    {
      const WickTrack *track = &tracks[order[k]];
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "kind");
      json_builder_add_string_value (b, wick_track_describe_kind (track));
      json_builder_set_member_name (b, "process");
      if (track->process >= 0)
        json_builder_add_int_value (b, processes[track->process].pid);
      else
        json_builder_add_null_value (b);
      json_builder_set_member_name (b, "thread");
      if (track->thread >= 0)
        json_builder_add_int_value (b, threads[track->thread].tid);
      else
        json_builder_add_null_value (b);
      json_builder_set_member_name (b, "name");
      add_str_or_null (b, doc, track->name);
      json_builder_set_member_name (b, "events");
      json_builder_add_int_value (b, track->n_events);
      json_builder_set_member_name (b, "max_depth");
      json_builder_add_int_value (b, track->max_depth);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "flows");
  json_builder_add_int_value (b, n_flows);
  json_builder_set_member_name (b, "skipped");
  json_builder_begin_object (b);
  for (guint i = 0; i < wick_tracks_get_n_skipped (t); i++)
    {
      guint64 count;
      const char *name = wick_tracks_get_skipped (t, i, &count);
      json_builder_set_member_name (b, name);
      json_builder_add_int_value (b, (gint64)count);
    }
  json_builder_end_object (b);
  json_builder_end_object (b);

  g_autoptr (JsonNode) root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  g_autofree char *text = json_generator_to_data (gen, NULL);
  printf ("%s\n", text);
}

static void
print_text (const char *file, WickDocument *doc, WickTracks *t)
{
  guint n_processes, n_threads, n_tracks, n_order, n_flows;
  const WickProcess *processes = wick_tracks_get_processes (t, &n_processes);
  const WickThread *threads = wick_tracks_get_threads (t, &n_threads);
  const WickTrack *tracks = wick_tracks_get_tracks (t, &n_tracks);
  const guint32 *order = wick_tracks_get_display_order (t, &n_order);
  wick_tracks_get_flows (t, &n_flows);

  g_autofree char *p_text = wick_trace_count (n_processes, "process", "processes");
  g_autofree char *th_text = wick_trace_count (n_threads, "thread", "threads");
  g_autofree char *tr_text = wick_trace_count (n_tracks, "track", "tracks");
  g_autofree char *f_text = wick_trace_count (n_flows, "flow", "flows");
  printf ("%s: %s, %s, %s, %s, %s\n", file,
          wick_trace_format_to_string (wick_tracks_get_format (t)), p_text, th_text, tr_text,
          f_text);
  gint32 process = G_MININT32;
  for (guint k = 0; k < n_order; k++)
    {
      const WickTrack *track = &tracks[order[k]];
      if (track->process != process)
        {
          process = track->process;
          if (process >= 0)
            printf ("process %" G_GINT64_FORMAT " %s\n", processes[process].pid,
                    processes[process].name ? wick_document_str (doc, processes[process].name)
                                            : "");
          else
            printf ("no process\n");
        }
      printf ("  %-8s", wick_track_describe_kind (track));
      if (track->thread >= 0)
        printf (" tid %-8" G_GINT64_FORMAT, threads[track->thread].tid);
      else
        printf (" %-12s", "");
      printf (" %-32s %10u events", track->name ? wick_document_str (doc, track->name) : "-",
              track->n_events);
      if (track->kind == WICK_TRACK_SLICES || track->kind == WICK_TRACK_ASYNC)
        printf (", %u rows", (guint)track->max_depth + 1);
      printf ("\n");
    }
  for (guint i = 0; i < wick_tracks_get_n_skipped (t); i++)
    {
      guint64 count;
      const char *name = wick_tracks_get_skipped (t, i, &count);
      printf ("skipped %s: %" G_GUINT64_FORMAT "\n", name, count);
    }
}

int
wick_trace_tracks (int argc, char **argv)
{
  gboolean json = FALSE;
  const char *file = NULL;
  const GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "One JSON object for the trace", NULL },
    G_OPTION_ENTRY_NULL,
  };
  int parsed = wick_trace_parse_options (
    "tracks", "FILE", "Processes, threads and tracks of a trace, as the timeline lays them out.",
    entries, FALSE, &argc, &argv);
  if (parsed >= 0)
    return parsed;
  if (argc != 2)
    return wick_trace_usage_error ("tracks", argc < 2 ? "a FILE is required"
                                                      : "only one FILE may be given");
  file = argv[1];

  g_autoptr (WickDocument) doc = wick_document_new_with_extensions (TRUE);
  g_autoptr (GError) error = NULL;
  int status = WICK_TRACE_EXIT_OK;
  if (!wick_document_load_file_auto (doc, file, NULL, NULL, NULL, &error))
    {
      fprintf (stderr, "wick-trace tracks: %s\n", error->message);
      gboolean parse = wick_document_get_parse_error (doc)->failed
                       || !(error->domain == G_FILE_ERROR || error->domain == G_IO_ERROR);
      if (!parse)
        return WICK_TRACE_EXIT_USAGE;
      status = WICK_TRACE_EXIT_PARSE;
    }
  else if (!wick_document_get_structurally_valid (doc))
    status = WICK_TRACE_EXIT_HEALTH;

  WickTracks *t = wick_document_get_tracks (doc);
  if (json)
    print_json (file, doc, t);
  else
    print_text (file, doc, t);
  return status;
}
