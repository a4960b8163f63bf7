/* wick-document-finish.c — what runs once a document's stream has ended.
 *
 * Storage (wick-document.c) knows the arrays and the stream rules; the
 * derived models stand on it (wick-health.c, the track model). This floor,
 * above both, puts them in order for every reader and feeder:
 *
 *   1. the end of the stream (spec §4 rule 6, wick_document_end_stream);
 *   2. the health verdicts (spec §6–7) when it ended cleanly, else the span
 *      hierarchy of what was read, so that views show it at its depths;
 *   3. the track model (it interns its names);
 *   4. compaction of the intern tables no reader needs any more.
 *
 * The JSONL file reader, the Chrome importer, the line feeders (tests, live
 * sessions) all finish here; wick_document_analyze() is the live step 2.
 */
#include "config.h"

#include "wick-document-private.h"
#include "wick-health.h"
#include "wick-tracks.h"

gboolean
wick_document_finish_quietly (WickDocument *self, GError **error)
{
  if (wick_document_is_finished (self))
    return !wick_document_get_parse_error (self)->failed;
  if (!wick_document_end_stream (self, error))
    {
      wick_document_resolve_hierarchy (self); /* what was read, at its depths */
      return FALSE;
    }
  wick_health_analyze (self, FALSE);
  wick_document_get_tracks (self);
  wick_document_compact (self);
  return TRUE;
}

gboolean
wick_document_finish (WickDocument *self, GError **error)
{
  gboolean ok;

  g_return_val_if_fail (WICK_IS_DOCUMENT (self), FALSE);
  ok = wick_document_finish_quietly (self, error);
  wick_document_emit_changed (self);
  return ok;
}

void
wick_document_analyze (WickDocument *self)
{
  g_return_if_fail (WICK_IS_DOCUMENT (self));
  if (!wick_document_is_finished (self) || wick_document_get_parse_error (self)->failed)
    wick_health_analyze (self, TRUE);
  wick_document_emit_changed (self);
}
