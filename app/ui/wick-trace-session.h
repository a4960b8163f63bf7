/* wick-trace-session.h — what the pages of one window share: the document,
 * the selection, and the models derived from the document.
 *
 * A window holds one WickTraceSession and binds it into every page
 * (wick-page.h: the "session" property); pages read the document and the
 * derived models through it and never talk to each other or to the window.
 *
 * The document. wick_trace_session_set_document() replaces it (notify
 * "document"); a document that grows (live, followed) is fed on the main
 * thread and wick_trace_session_document_changed() says so ("changed"). The
 * generation counts both: a page that saw generation g is current while the
 * session's generation is still g.
 *
 * Derived models. The document's track model and GPU analysis (both the
 * model's, computed once per document version) and the span costs by name
 * (model/wick-span-costs.h), kept here for the generation they were computed
 * at. What a loading worker already derived comes in with the document
 * (wick_trace_session_set_document_derived()): the span costs are the
 * session's from then on; the timeline scene and the memory chart are each
 * taken once by the page that draws them.
 *
 * Threads. Everything here is main-thread only, except that
 * wick_trace_session_costs_async() computes on a worker from a copy of what
 * the costs read (the span names, durations and parents, taken on the main
 * thread: a growing document is never read off it).
 */
#pragma once

#include <gio/gio.h>

#include "model/wick-document.h"
#include "model/wick-gpu-analysis.h"
#include "model/wick-tracks.h"
#include "wick-memory-chart.h"
#include "wick-selection.h"
#include "wick-timeline-scene.h"

G_BEGIN_DECLS

#define WICK_TYPE_TRACE_SESSION (wick_trace_session_get_type ())
G_DECLARE_FINAL_TYPE (WickTraceSession, wick_trace_session, WICK, TRACE_SESSION, GObject)

/* A session without a document on @selection (NULL: a new one). */
WickTraceSession *wick_trace_session_new (WickSelection *selection);

WickSelection *wick_trace_session_get_selection (WickTraceSession *self);
WickDocument *wick_trace_session_get_document (WickTraceSession *self);

/* Replaces the document (NULL: none), dropping every derived model. */
void wick_trace_session_set_document (WickTraceSession *self, WickDocument *document);
/* Same, with what a worker derived from @document; the session takes each
 * (any may be NULL). */
void wick_trace_session_set_document_derived (WickTraceSession *self, WickDocument *document,
                                              WickTimelineScene *scene, WickMemoryChart *chart,
                                              GArray *costs);
/* The document grew (main thread): the generation moves and "changed" is
 * emitted. */
void wick_trace_session_document_changed (WickTraceSession *self);

/* Counts every document set and every change. */
guint64 wick_trace_session_get_generation (WickTraceSession *self);
/* Counts every document set only. */
guint64 wick_trace_session_get_document_serial (WickTraceSession *self);

/* The loading worker's scene and chart for the current document, each
 * given once (NULL when none or taken). */
WickTimelineScene *wick_trace_session_take_scene (WickTraceSession *self);
WickMemoryChart *wick_trace_session_take_chart (WickTraceSession *self);

/* TRUE when @document has GPU work (a kernel, memcpy or memset of a
 * trace-event file): the GPU pages are shown. */
gboolean wick_trace_session_document_has_gpu_work (WickDocument *document);
/* The document's GPU analysis when it has GPU work (the GPU pages are
 * shown), else NULL. */
const WickGpuAnalysis *wick_trace_session_get_gpu_analysis (WickTraceSession *self);

/* The span costs by name (WickSpanCost) of the current generation,
 * computed here when they are not (NULL without a document); the session
 * keeps them. */
GArray *wick_trace_session_get_costs (WickTraceSession *self);
/* The same when current, else NULL (never computes). */
GArray *wick_trace_session_peek_costs (WickTraceSession *self);
/* The costs of the generation at the call, computed on a worker; finish
 * returns a reference (NULL with G_IO_ERROR_CANCELLED when cancelled), and
 * the session keeps them while that generation is current. */
void wick_trace_session_costs_async (WickTraceSession *self, GCancellable *cancellable,
                                     GAsyncReadyCallback callback, gpointer user_data);
GArray *wick_trace_session_costs_finish (WickTraceSession *self, GAsyncResult *result,
                                         GError **error);

G_END_DECLS
