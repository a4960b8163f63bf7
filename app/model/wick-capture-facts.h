/* wick-capture-facts.h — what a live capture says of itself.
 *
 * A file written by a live reader, or a live window's document, carries
 * Wick's own keys (docs/format.md "Wick keys", extension mode): where the
 * reader attached (meta's "wick_attach") and what was lost (the terminal's
 * wick_dropped, wick_lost, wick_detached, wick_records_dropped). Producers
 * hand them over decoded in a record (wick-record.h's WickRecordFacts) and
 * the document reports them (wick_document_get_attach, _get_losses): plain
 * values below both, so a record is defined without the document.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Where a file from a live reader begins (meta's "wick_attach", extension
 * mode; docs/format.md "Wick keys"): the session time of the attach, the
 * records the rings held before it that the reader could not deliver, whether
 * that count is exact, whether an attach snapshot filled in what was live. */
typedef struct
{
  gboolean present;
  guint64 attached_ns;
  guint64 missing;
  gboolean exact;
  gboolean snapshot;
} WickAttachFacts;

/* What the writer says was lost (the terminal's wick_dropped, wick_lost,
 * wick_detached, wick_records_dropped; extension mode), all 0 when nothing. */
typedef struct
{
  guint64 dropped;
  guint64 lost;
  guint64 detached;
  guint64 records_dropped;
} WickLossFacts;

G_END_DECLS
