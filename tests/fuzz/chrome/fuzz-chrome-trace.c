/* fuzz-chrome-trace.c — libFuzzer target for the streaming Chrome trace-event
 * importer (wick-chrome-stream.c on Wick's JSON scanner, gzip/zstd by magic
 * bytes, the structure sniff, the torch memory timeline) and the track model
 * it fills: any bytes are imported into a fresh document; an import that
 * succeeds must give a document the reader accepted, and every track, event
 * and flow of the model must answer its queries. Both ways of reading are
 * fuzzed: on the calling thread and on the reader thread of the pipeline. */
#include "config.h"

#include <stdint.h>

#include "wick-chrome-import.h"
#include "wick-chrome-import-private.h"
#include "wick-tracks.h"
#include "wick-input.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr (WickDocument) doc = wick_document_new ();
  WickTracks *tracks;
  guint n_tracks, n_flows;

  (void)wick_chrome_sniff ((const char *)data, size);
  /* inputs of odd length read on the importer's reader thread, as files of
   * 8 MiB or more do; the others on one thread */
  wick_chrome_import_set_pipeline ((size & 1) ? 1 : 0);
  /* a quarter of the inputs read with a 256-byte value limit: the refusal
   * of a longer event, member or string is fuzzed too */
  wick_set_max_line_length ((size & 6) == 6 ? 256 : 0);
  if (!wick_chrome_import_data (doc, (const char *)data, size, "fuzz", NULL))
    return 0;
  g_assert_false (wick_document_get_parse_error (doc)->failed);
  tracks = wick_document_get_tracks (doc);
  wick_tracks_get_tracks (tracks, &n_tracks);
  for (guint t = 0; t < n_tracks; t++)
    for (guint r = 0; r < wick_tracks_track_n_rows (tracks, t); r++)
      {
        const WickTrackRow *row = wick_tracks_track_row (tracks, t, r);
        for (guint i = 0; i < row->n_events && i < 64; i++)
          {
            WickEventRef ref = { row->event_kind, row->events[i] };
            guint32 flows[4];
            g_assert_cmpuint (wick_tracks_event_end (tracks, ref), >=,
                              wick_tracks_event_start (tracks, ref));
            const char *name = wick_tracks_event_name (tracks, ref);
            /* every name the document keeps is valid UTF-8 */
            g_assert_true (name == NULL || g_utf8_validate (name, -1, NULL));
            (void)wick_tracks_event_args (tracks, ref);
            (void)wick_tracks_event_flows (tracks, ref, flows, G_N_ELEMENTS (flows));
          }
      }
  wick_tracks_get_flows (tracks, &n_flows);
  (void)n_flows;
  return 0;
}
