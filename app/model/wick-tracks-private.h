/* wick-tracks-private.h — the track model's internals shared by the model's
 * files (the candle-graph track builder, the document). Not for the views. */
#pragma once

#include "wick-document-private.h"
#include "wick-tracks.h"

G_BEGIN_DECLS

WickTracks *wick_tracks_new (WickDocument *document);
void wick_tracks_free (WickTracks *self);

/* A candle-graph document's model when it no longer matches the records
 * read (reset, marked as built from them: fill it now), else NULL. The
 * builder (wick-tracks-candle.c, wick_document_get_tracks) is its caller. */
WickTracks *wick_tracks_begin_rebuild (WickDocument *document);
/* Fills @self (from wick_tracks_new or _begin_rebuild) from its candle-graph
 * document: what wick_document_get_tracks() runs; the span-index benchmark
 * times a second build with it. */
void wick_tracks_build_candle_graph (WickTracks *self);
/* The document's model as it stands (made empty on first use). */
WickTracks *wick_tracks_peek (WickDocument *document);

/* The slices track of @thread, created on first use. */
guint32 wick_tracks_thread_slices_track (WickTracks *self, guint32 thread);
/* Direct placement of existing document rows (candle-graph builder). */
/* Spans whose WickSpan.thread is @key go on slices track @track. */
void wick_tracks_map_thread_key (WickTracks *self, guint16 key, guint32 track);
/* Counts a slice at @row of @track (events, max depth). */
void wick_tracks_note_slice (WickTracks *self, guint32 track, guint row);
/* Each span's row when rows are not depths (taken, freed after indexing);
 * NULL: rows are depths. */
void wick_tracks_set_build_rows (WickTracks *self, guint16 *rows);
/* FALSE: a span's row is not its depth (spans of several threads). */
void wick_tracks_set_rows_are_depths (WickTracks *self, gboolean depths);
void wick_tracks_add_device_slice (WickTracks *self, guint32 track, gint32 source, guint64 start,
                                   guint64 duration, WickStr name, WickStr category);
void wick_tracks_add_counter_sample (WickTracks *self, guint32 track, guint64 t, double value);

/* ---- incremental growth of a candle-graph model (wick-tracks-candle.c) ---- */

/* Begins appending to a finished model: the builder functions work again;
 * what is added from here on is new. */
void wick_tracks_append_begin (WickTracks *self);
/* An event indexed before whose end may have moved (an open span). */
void wick_tracks_append_dirty_span (WickTracks *self, guint32 span);
/* Indexes what was added since wick_tracks_append_begin(): the spans after
 * the ones indexed (their rows in @span_rows, indexed by span), the other
 * kinds' new entries, the dirty spans' new ends, the extent and the
 * summaries. FALSE (with @why, static text) when that cannot equal a whole
 * build: an event that would not be last in its row, a start moved
 * earlier; the model is then unusable until rebuilt. */
gboolean wick_tracks_append_end (WickTracks *self, const guint16 *span_rows, const char **why);
/* Whether the next candle-graph build of the document may append, and the
 * state the candle builder keeps for it (owned, freed with the model's
 * arrays). */
gpointer wick_tracks_get_live (WickTracks *self);
void wick_tracks_set_live (WickTracks *self, gpointer live, GDestroyNotify free_func);
/* A device slice renamed by an append / every one of them
 * (wick_tracks_get_device_renames). */
void wick_tracks_note_device_renamed (WickTracks *self, guint32 slice);
void wick_tracks_note_device_renamed_all (WickTracks *self);
/* The document has records the model has not seen. */
gboolean wick_tracks_is_stale (WickTracks *self);
/* The model now matches the document's records (after an append). */
void wick_tracks_mark_current (WickTracks *self);
/* Counts a whole build, an append or a fallback (@why). */
void wick_tracks_count_build (WickTracks *self);
void wick_tracks_count_append (WickTracks *self);
void wick_tracks_count_fallback (WickTracks *self, const char *why);
/* Off: every growth rebuilds the model whole (the benchmark's baseline). */
void wick_document_set_incremental_tracks (WickDocument *document, gboolean on);
gboolean wick_document_get_incremental_tracks (WickDocument *document);
/* The per-block maximum of ends of a row (tests compare two models). */
const guint64 *wick_tracks_row_block_max (WickTracks *self, guint32 track, guint row, guint *n);

/* What only the tests call. */
/* "count", "bytes", "percent", "ns". */
const char *wick_counter_unit_to_string (WickCounterUnit unit);
/* The same with the interval's correlation id (0: none), which links it to
 * the slice given the same id by wick_tracks_slice_set_correlation(). */
void wick_tracks_device_add_correlated (WickTracks *self, guint32 track, gint64 ts_ns,
                                        gint64 duration_ns, WickStr name, WickStr category,
                                        WickStr args, gint64 correlation);
/* How many of the flows Wick added: the arrows from a launch to a kernel,
 * memcpy or memset the file has no flow to (category "correlation"), after
 * the file's own flows. */
guint wick_tracks_get_n_launch_flows (WickTracks *self);
/* The correlation id a span carries, 0 when none. */
gint64 wick_tracks_span_correlation (WickTracks *self, guint32 span);
/* Bytes held by the model (tables and indices, not the document's spans). */
gsize wick_tracks_get_size (WickTracks *self);

void wick_tracks_get_update_stats (WickTracks *self, WickTracksUpdateStats *stats);

G_END_DECLS
