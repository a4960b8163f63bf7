/* wick-live-stream.h — a live session's ring turned into trace/10 JSONL lines.
 *
 * Wraps libwick's ring reader (follow mode: it never slows the producer) and
 * its stateful JSONL formatter, so the lines always make a parseable trace:
 * meta first, open spans synthesized at attach, span_end only after its
 * span_start, the terminal last. Counts what the producer dropped and what this
 * reader lost (lapped) from the ring's own records, so the UI can show them.
 * wick_live_stream_drain() never blocks; call it from one thread.
 */
#pragma once

#include <glib.h>
#include <wick/wick.h>

#include "wick-live-client.h"

/* wick-record.h's builder, declared here alone: the ring reader's users
 * (wick-trace attach, the fuzz targets) include libwick's ring layout, whose
 * record kinds share names with the model's. */
typedef struct _WickRecordBuilder WickRecordBuilder;

G_BEGIN_DECLS

typedef struct _WickLiveStream WickLiveStream;

/* @line has no newline and is valid only during the call. */
typedef void (*WickLiveLineFunc) (const char *line, gsize length, gpointer user_data);
/* A line of the stream for a reader that commits records (the app's live
 * view): @builder holds it as values (wick-record.h), or is NULL when the
 * line is to be decoded as text (the meta, a snapshot allocation, a value
 * the values cannot say as the line does); @line is the line, as the line
 * callback gets it. Both valid only during the call. */
typedef void (*WickLiveRecordFunc) (WickRecordBuilder *builder, const char *line, gsize length,
                                    gpointer user_data);

/* A stream fed records by the caller (the remote client: records decoded
 * from a node's frames) instead of a ring; the same lines, snapshot and
 * counters. wick_live_stream_drain does nothing on it; producer state is
 * RUNNING and the reader stats are zero (the node reports its own). */
WickLiveStream *wick_live_stream_new_fed (gboolean strict);
void wick_live_stream_feed (WickLiveStream *self, const WickRingRecord *record,
                            WickLiveLineFunc emit, gpointer user_data);
void wick_live_stream_free (WickLiveStream *self);
/* With @func set (NULL: unset), every line also goes to @func, with the
 * user_data of the drain, feed or finish that made it; the line callback of
 * those may then be NULL. */
void wick_live_stream_set_record_func (WickLiveStream *self, WickLiveRecordFunc func);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickLiveStream, wick_live_stream_free)

const WickRingInfo *wick_live_stream_get_info (WickLiveStream *self);

/* Delivers lines for up to @max_records records (0: all available) and
 * returns the number of records read. */
guint64 wick_live_stream_drain (WickLiveStream *self, gsize max_records, WickLiveLineFunc emit,
                                gpointer user_data);

WickProducerState wick_live_stream_get_producer_state (WickLiveStream *self);
gboolean wick_live_stream_is_drained (WickLiveStream *self);
/* Whether the session's terminal record arrived. */
gboolean wick_live_stream_has_terminal (WickLiveStream *self);

/* Records the producer dropped (announced in the ring), records this reader
 * lost, and the session time of the last drop (0 when none). */
guint64 wick_live_stream_get_dropped (WickLiveStream *self);
guint64 wick_live_stream_get_lost (WickLiveStream *self);
/* Records read and lines emitted so far. */
guint64 wick_live_stream_get_records (WickLiveStream *self);
guint64 wick_live_stream_get_lines (WickLiveStream *self);
/* Long span names the ring reader cut (wick_ring_reader_get_names_cut). */
guint64 wick_live_stream_get_names_cut (WickLiveStream *self);
void wick_live_stream_get_reader_stats (WickLiveStream *self, WickRingReaderStats *stats);

/* The attach snapshot (docs/protocol.md, "snapshot"): call after
 * wick_live_stream_new and before the first drain, so that the reader began
 * before the snapshot was taken. The live storages it lists come out as
 * memory alloc records at the snapshot's time on the root span (flagged
 * "wick_snapshot":true with their own time in extension mode), its modules and
 * stages as wick_snapshot_module / wick_snapshot_stage records (extension mode
 * only), right after the reader's opening records. Memory records of those
 * storages stamped at or before the snapshot are left out (counted), since the
 * snapshot holds them. apply reads a snapshot file (its fd is not kept);
 * request asks the session for one on @connection. */
gboolean wick_live_stream_apply_snapshot (WickLiveStream *self, int fd, GError **error);

/* Says hello on @connection, opens the ring and takes the attach snapshot.
 * NULL with @error when there is no stream; a stream without snapshot sets
 * @snapshot_error (an older libwick, or a snapshot that could not be read:
 * storages allocated before the attach are then missing). */
WickLiveStream *wick_live_stream_attach (WickLiveConnection *connection, gboolean strict,
                                         WickLiveSessionInfo **info, GError **snapshot_error,
                                         GError **error);

/* Where the stream began: the session time of the attach
 * (the snapshot's, else the reader's from the wall clocks), the records the
 * rings held before it that it cannot deliver (its opening records aside),
 * whether that makes the file partial, and the sentence that says so (NULL
 * when it is complete): "attached at 2.1 s: records before that are
 * missing (...)". A partial stream's terminal is failed with that reason
 * first; the meta line carries "wick_attach" (extension mode). */
guint64 wick_live_stream_get_attached_ns (WickLiveStream *self);
gboolean wick_live_stream_is_partial (WickLiveStream *self);

/* Emits the terminal (once): the session's own, or a failed one with @reason. */
void wick_live_stream_finish (WickLiveStream *self, const char *reason, WickLiveLineFunc emit,
                              gpointer user_data);

G_END_DECLS
