/* bench-tracks-document.h — the track-list benchmarks' document (bench-timeline's
 * track list, bench-timeline-window): @n_spans spans over @n_threads threads of one
 * Chrome-format process, built through the track model's builder in units of ten (a
 * 9.9 µs "step", three 3 µs children, two 1 µs grandchildren under each), threads
 * offset in time; @n_samples counter samples over four counter tracks and @n_flows
 * flows between threads. */
#pragma once

#include <string.h>

#include "model/wick-document.h"
#include "model/wick-tracks.h"
#include "model/wick-tracks-private.h"

/* 10 M spans over 64 threads, 1 M counter samples, 100 k flows. */
static inline WickDocument *
build_tracks_document (guint64 n_spans, guint n_threads, guint n_samples, guint n_flows)
{
  WickDocument *document = wick_document_new ();
  WickTracks *tracks = wick_document_begin_tracks (document, WICK_TRACE_FORMAT_CHROME);
  guint32 process = wick_tracks_add_process (tracks, 1);
  wick_tracks_set_process_name (tracks, process, wick_tracks_intern (tracks, "bench", 5));
  static const char *names[] = { "step", "forward", "matmul", "relu", "backward", "adamw" };
  WickStr name[6], cat = wick_tracks_intern (tracks, "cpu_op", 6);
  for (guint i = 0; i < 6; i++)
    name[i] = wick_tracks_intern (tracks, names[i], strlen (names[i]));
  guint64 units = MAX (n_spans / 10 / n_threads, 1);
  for (guint th = 0; th < n_threads; th++)
    {
      guint32 thread = wick_tracks_add_thread (tracks, process, 100 + th);
      char tname[32];
      snprintf (tname, sizeof tname, "worker %u", th);
      wick_tracks_set_thread_name (tracks, thread,
                                   wick_tracks_intern (tracks, tname, strlen (tname)));
      gint64 skew = th * 37;
      for (guint64 u = 0; u < units; u++)
        {
          gint64 t = 5 + (gint64)u * 10000 + skew;
          wick_tracks_slice_complete (tracks, thread, t, 9900, name[0], cat, 0);
          for (guint c = 0; c < 3; c++)
            {
              gint64 tc = t + 100 + c * 3200;
              wick_tracks_slice_complete (tracks, thread, tc, 3000, name[1 + c % 2], cat, 0);
              for (guint g = 0; g < 2; g++)
                wick_tracks_slice_complete (tracks, thread, tc + 200 + g * 1300, 1000, name[3 + g],
                                            cat, 0);
            }
        }
    }
  gint64 span_ns = (gint64)units * 10000;
  for (guint k = 0; k < 4; k++)
    {
      char cname[32];
      snprintf (cname, sizeof cname, "counter %u", k);
      guint32 counter = wick_tracks_counter_track (
        tracks, (gint32)process, wick_tracks_intern (tracks, cname, strlen (cname)));
      guint per = n_samples / 4;
      for (guint i = 0; i < per; i++)
        wick_tracks_counter_add (tracks, counter, (gint64)((double)span_ns * i / per),
                                 (double)((i * 2654435761u) % 1000) + k * 100);
    }
  WickStr fcat = wick_tracks_intern (tracks, "flow", 4),
          fname = wick_tracks_intern (tracks, "launch", 6);
  for (guint f = 0; f < n_flows; f++)
    {
      char id[24];
      snprintf (id, sizeof id, "%u", f);
      WickStr fid = wick_tracks_intern (tracks, id, strlen (id));
      guint from = f % n_threads, to = (f + 1) % n_threads;
      gint64 t = 5 + (gint64)((double)(units - 1) * f / n_flows) * 10000;
      wick_tracks_flow_add (tracks, WICK_FLOW_START, from, t + from * 37 + 500, fcat, fname, fid,
                            FALSE);
      wick_tracks_flow_add (tracks, WICK_FLOW_END, to, t + to * 37 + 2000, fcat, fname, fid, TRUE);
    }
  wick_tracks_finish (tracks);
  return document;
}
