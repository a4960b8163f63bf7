/* wick-live-stream-private.h — what only the tests call of wick-live-stream.h (the app
 * includes wick-live-stream.h alone). It declares no types: include it after
 * wick-live-stream.h. */
#pragma once

G_BEGIN_DECLS

/* Takes a duplicate of @ring_fd (the caller keeps its own). With @strict the
 * wick_ extension lines are left out (pure trace/10). */
WickLiveStream *wick_live_stream_new (int ring_fd, gboolean strict, GError **error);

guint64 wick_live_stream_get_last_drop_ns (WickLiveStream *self);

/* Frees of storages allocated before the attach, left out of the lines so
 * that the memory pairing of the trace holds. */
guint64 wick_live_stream_get_skipped_frees (WickLiveStream *self);

gboolean wick_live_stream_request_snapshot (WickLiveStream *self, WickLiveConnection *connection,
                                            GError **error);
gboolean wick_live_stream_has_snapshot (WickLiveStream *self);
guint64 wick_live_stream_get_snapshot_allocated_bytes (WickLiveStream *self);
guint64 wick_live_stream_get_snapshot_duplicates (WickLiveStream *self);

G_END_DECLS
