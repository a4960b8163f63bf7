/* wick-tracks.h — the track tree of a document: processes → threads → tracks.
 *
 * Every trace Wick reads (candle-graph JSONL, Chrome/Perfetto JSON) becomes
 * one WickTracks, owned by its WickDocument (wick_document_get_tracks()):
 *
 *   process (pid, name, sort index, labels)
 *     thread (tid, name, sort index)
 *       tracks of five kinds:
 *         slices   nested spans of one thread (candle-graph spans, Chrome X, B/E)
 *         async    slices keyed by (category, id, scope), laid out in lanes
 *         counter  one numeric series over time
 *         instants zero-duration events, scope thread / process / global
 *         device   intervals of one device and stream (kernel, memcpy, op)
 *   flows: directed links between two events (each end a track and a time)
 *
 * Storage is struct-of-arrays as in the document: one array of small plain
 * structs per event kind, strings as WickStr offsets into the document's
 * string pool. Slices ARE the document's spans (WickSpan, with the track and
 * depth filled in): a slice is named by its index in
 * wick_document_get_spans(), so the costs table, the details pane and the
 * selection keep working with span indices whatever the format. Device
 * intervals of a candle-graph trace are the document's WickDeviceInterval
 * rows; those of a Chrome trace are added by the builder.
 *
 * Two sides:
 *  - the BUILDER (wick_tracks_add_*, wick_tracks_slice_*, ...), called by an
 *    importer while it streams; B/E pairs, async begin/end and flows are
 *    matched in wick_tracks_finish() per thread / key in timestamp order, so
 *    the importer may call in file order. Times given to the builder are raw
 *    nanoseconds (any gint64); finish rebases them so the earliest event is at
 *    wick_tracks_get_origin_ns() and stores them as guint64 from there
 *    (candle-graph documents keep origin 0: their ns are the trace's own).
 *  - the QUERY side the timeline and `wick-trace tracks` read after finish:
 *    tracks in display order, per-track rows with an overlap index and a
 *    per-zoom summary (mipmap), max depth, event at (track, row, time), flows
 *    of an event, args of an event, the skipped-construct counts.
 *
 * The index replaced app/ui/wick-timeline-index.h (now removed), per track instead of for
 * one flame chart: get_n_depths -> wick_tracks_track_n_rows, get_depth ->
 * wick_tracks_track_row, get_base_ns / pick_level -> wick_tracks_get_base_ns /
 * wick_tracks_pick_level, depth_first_overlapping ->
 * wick_tracks_row_first_overlapping, span_at -> wick_tracks_event_at,
 * span_end -> wick_tracks_event_end, get_start_ns / get_end_ns ->
 * wick_tracks_get_start_ns / get_end_ns. Built in linear time from the
 * parent indices the document resolved.
 *
 * A candle-graph document builds its model when it finishes; a live one
 * (still fed) brings it up to date on the first wick_document_get_tracks()
 * after each batch of lines: by appending the new records to the model it
 * has (new events at the end of their rows, new tracks and rows, the
 * summaries recomputed from the first bucket that changed; the open spans'
 * ends move with the end of what was read) when the growth allows it, else
 * by a whole rebuild, counted (wick_tracks_get_update_stats()). Either way
 * the model equals a whole build of the document as it stands (the model
 * suite's tracks-live test checks it batch by batch), but for indices: a
 * counter sample's may differ (not its track, time and value), and so may a
 * track's that an append made after the counters (a new thread or stream;
 * the display order is the same). Pointers from the model
 * are valid until the document changes; indices of events and tracks stay
 * valid across appends and change only with a whole rebuild
 * (wick_tracks_get_build_serial()).
 *
 * Not thread-safe; build on one thread, then read from any number.
 */
#pragma once

#include "wick-document.h"

G_BEGIN_DECLS

typedef struct _WickTracks WickTracks;

typedef enum
{
  WICK_TRACE_FORMAT_CANDLE_GRAPH,
  WICK_TRACE_FORMAT_CHROME,
} WickTraceFormat;

typedef enum
{
  WICK_TRACK_SLICES,
  WICK_TRACK_ASYNC,
  WICK_TRACK_COUNTER,
  WICK_TRACK_INSTANTS,
  WICK_TRACK_DEVICE,
} WickTrackKind;

/* What a WickEventRef's index points into. */
typedef enum
{
  WICK_EVENT_NONE,
  WICK_EVENT_SLICE,    /* wick_document_get_spans() */
  WICK_EVENT_ASYNC,    /* wick_tracks_get_async() */
  WICK_EVENT_COUNTER,  /* wick_tracks_get_counter_samples() */
  WICK_EVENT_INSTANT,  /* wick_tracks_get_instants() */
  WICK_EVENT_DEVICE,   /* wick_tracks_get_device_slices() */
} WickEventKind;

typedef struct
{
  guint32 kind; /* WickEventKind */
  guint32 index;
} WickEventRef;

typedef enum
{
  WICK_INSTANT_SCOPE_THREAD,
  WICK_INSTANT_SCOPE_PROCESS,
  WICK_INSTANT_SCOPE_GLOBAL,
} WickInstantScope;

typedef enum
{
  WICK_TRACK_FLAG_HAS_SORT_INDEX = 1 << 0,
} WickTrackFlags;

/* What a counter track's values measure, set by the importer that builds it
 * (wick_tracks_counter_set_unit()); views format values by it. */
typedef enum
{
  WICK_COUNTER_UNIT_COUNT,   /* a plain number (the default) */
  WICK_COUNTER_UNIT_BYTES,   /* memory: allocated, reserved, device memory */
  WICK_COUNTER_UNIT_PERCENT, /* 0–100 */
  WICK_COUNTER_UNIT_NS,      /* a duration in nanoseconds */
} WickCounterUnit;

/* What an instants track holds: instants (Chrome i/I/R, Wick records), the
 * object events of a process (Chrome O/N/D) or the samples of a thread
 * (Chrome P). `wick-trace tracks` names the last two "objects" and "samples". */
typedef enum
{
  WICK_INSTANTS_EVENTS,
  WICK_INSTANTS_OBJECTS,
  WICK_INSTANTS_SAMPLES,
} WickInstantsRole;

typedef struct
{
  gint64 pid;
  WickStr name;   /* 0 when never named */
  WickStr labels; /* process_labels joined with ", "; 0 when none */
  gint32 sort_index;
  guint8 flags; /* WICK_TRACK_FLAG_HAS_SORT_INDEX */
} WickProcess;

typedef struct
{
  gint64 tid;
  guint32 process; /* index into wick_tracks_get_processes() */
  WickStr name;    /* 0 when never named */
  gint32 sort_index;
  guint8 flags; /* WICK_TRACK_FLAG_HAS_SORT_INDEX */
} WickThread;

typedef struct
{
  guint8 kind;       /* WickTrackKind */
  guint8 scope;      /* instants: WickInstantScope */
  guint8 role;       /* instants: WickInstantsRole */
  guint8 unit;       /* counter: WickCounterUnit */
  guint16 max_depth; /* deepest row as laid out (0: one row); async: lanes - 1 */
  gint32 process;    /* index into processes, -1 when none */
  gint32 thread;     /* index into threads, -1 when none */
  WickStr name;      /* thread name, series name, "device / stream", async name */
  WickStr category;  /* async: category; device: the device; 0 otherwise */
  WickStr stream;    /* device: the stream; 0 otherwise */
  guint32 n_events;  /* slices, async slices, samples, instants or intervals */
  guint32 n_instants; /* async: its instant steps (n / T / p), not in n_events */
  double min, max;    /* counter: its samples' extent after finish; 0, 0 when none */
} WickTrack;

/* An async slice (Chrome b/e, S/F). Lane = row within its track. */
typedef struct
{
  guint32 track;
  guint16 lane;
  guint8 flags; /* WICK_SPAN_FLAG_CLOSED when its end was read */
  guint8 instant; /* TRUE for an async step / instant (duration 0) */
  guint64 start_ns;
  guint64 duration_ns; /* open: 0, drawn to the end of the trace */
  WickStr name, category, id;
  WickStr args; /* JSON object text, 0 when none */
} WickAsyncSlice;

typedef struct
{
  guint32 track;
  guint64 timestamp_ns;
  double value;
} WickCounterSample;

typedef struct
{
  guint32 track;
  guint8 scope; /* WickInstantScope */
  char phase;   /* 0: an instant; 'N' / 'O' / 'D': object created / snapshot / destroyed; 'P' a sample */
  guint64 timestamp_ns;
  WickStr name, category;
  WickStr id; /* object events: the object's id; 0 otherwise */
  WickStr args;
} WickInstant;

/* What a device interval is, from its category (Kineto's cat): a kernel
 * (kernel, Kernel, hip_kernel), a copy (gpu_memcpy, Memcpy), a fill
 * (gpu_memset, Memset), a user annotation of the stream
 * (gpu_user_annotation: record_function ranges as the GPU ran them) or
 * anything else (gpu_op, mtia_ccp_events, candle-graph intervals). */
typedef enum
{
  WICK_DEVICE_OTHER,
  WICK_DEVICE_KERNEL,
  WICK_DEVICE_MEMCPY,
  WICK_DEVICE_MEMSET,
  WICK_DEVICE_ANNOTATION,
} WickDeviceKind;

/* "kernel", "memcpy", "memset", "annotation", "other". */
const char *wick_device_kind_to_string (WickDeviceKind kind);

/* A kernel, memcpy or memset: what a launch reaches and what keeps the GPU busy. */
#define WICK_DEVICE_KIND_IS_WORK(k)                                                                \
  ((k) == WICK_DEVICE_KERNEL || (k) == WICK_DEVICE_MEMCPY || (k) == WICK_DEVICE_MEMSET)

typedef enum
{
  /* launched by a graph launch (cudaGraphLaunch, hipGraphLaunch): the kernel
   * is a node of a CUDA graph replay, its launcher is the graph's launch */
  WICK_DEVICE_FLAG_GRAPH = 1 << 0,
} WickDeviceFlags;

/* A device/stream interval. For candle-graph traces, source is the
 * WickDeviceInterval index and name its span's op (or span name).
 *
 * Rows: on a Chrome device track the stream's annotations nest from row 0
 * (outermost first) and its kernels, copies and fills sit in the rows below
 * all of them (a second row only where two overlap), so an annotation is
 * drawn above the kernels it covers. Candle-graph intervals keep row 0.
 *
 * Launcher: the runtime call (a slice, cuda_runtime / cuda_driver /
 * hip_runtime) that launched a kernel, copy or fill, found by the
 * correlation id both carry in their args (Kineto's `correlation`), else by
 * a flow of the file ending on it; G_MAXUINT32 when none.
 * wick_tracks_span_launched() is the other way. */
typedef struct
{
  guint32 track;
  gint32 source; /* index into wick_document_get_device_intervals(), -1 when none */
  guint64 start_ns;
  guint64 duration_ns;
  WickStr name, category;
  WickStr args;
  gint64 correlation; /* args.correlation, 0 when none */
  guint32 launcher;   /* span index of its launch, G_MAXUINT32 when none */
  guint16 row;
  guint8 kind;  /* WickDeviceKind */
  guint8 flags; /* WickDeviceFlags */
} WickDeviceSlice;

/* One end of a flow: a track and a time, and the event it binds to (kind
 * WICK_EVENT_NONE when no event encloses or follows that point). */
typedef struct
{
  guint32 track;
  guint64 timestamp_ns;
  WickEventRef event;
} WickFlowEnd;

typedef struct
{
  WickStr id, category, name;
  WickFlowEnd from, to;
} WickFlow;

/* Flow v1 phases (Chrome s / t / f). */
typedef enum
{
  WICK_FLOW_START,
  WICK_FLOW_STEP,
  WICK_FLOW_END,
} WickFlowPhase;

/* A handle on a slice given to the builder, valid until finish: used to bind
 * flow v2 ids (bind_id / flow_in / flow_out) and args to it. */
typedef guint32 WickPendingSlice;
#define WICK_PENDING_SLICE_NONE G_MAXUINT32

/* ---- the document's model ----------------------------------------------- */

/* The document's track model. For candle-graph documents it is (re)built
 * from the spans, device intervals and memory records on first use after
 * each finish/analyze, so a cut-off or live document has tracks too. */
WickTracks *wick_document_get_tracks (WickDocument *document);

/* ---- builder ------------------------------------------------------------ */

/* Starts building into the (empty) track model of @document from an
 * importer of @format; drops any model built before. */
WickTracks *wick_document_begin_tracks (WickDocument *document, WickTraceFormat format);

/* Interns @len bytes in the document's string pool (shared with WickStr). */
WickStr wick_tracks_intern (WickTracks *self, const char *str, gsize len);

/* Process @pid, created on first use; returns its index. */
guint32 wick_tracks_add_process (WickTracks *self, gint64 pid);
/* Metadata (Chrome M events process_name, process_labels, process_sort_index). */
void wick_tracks_set_process_name (WickTracks *self, guint32 process, WickStr name);
void wick_tracks_add_process_label (WickTracks *self, guint32 process, WickStr label);
void wick_tracks_set_process_sort_index (WickTracks *self, guint32 process, gint32 sort_index);

/* Thread @tid of @process, created on first use; returns its index. Thread
 * ids are per process, as in Chrome's (pid, tid). */
guint32 wick_tracks_add_thread (WickTracks *self, guint32 process, gint64 tid);
/* thread_name, thread_sort_index. */
void wick_tracks_set_thread_name (WickTracks *self, guint32 thread, WickStr name);
void wick_tracks_set_thread_sort_index (WickTracks *self, guint32 thread, gint32 sort_index);

/* Slices of a thread: B (begin), E (end), X (complete). Matched at finish per
 * thread in timestamp order (stable for ties: ends first, then longer slices
 * first); an E closes the innermost open B; an E with no open B is counted
 * as skipped "E without B"; a B never closed runs to the end of the trace and
 * stays open (no WICK_SPAN_FLAG_CLOSED). @args: JSON object text or 0. */
WickPendingSlice wick_tracks_slice_begin (WickTracks *self, guint32 thread, gint64 ts_ns,
                                          WickStr name, WickStr category, WickStr args);
/* @args of an E are merged into its B's (kept as the E's args when the B had none). */
void wick_tracks_slice_end (WickTracks *self, guint32 thread, gint64 ts_ns, WickStr args);
WickPendingSlice wick_tracks_slice_complete (WickTracks *self, guint32 thread, gint64 ts_ns,
                                             gint64 duration_ns, WickStr name, WickStr category,
                                             WickStr args);

/* Async slices keyed by (@category, @id, @scope) within @process (-1 for
 * global ids, e.g. Chrome id2.global). Nestable begin/end (b/e) nest per key;
 * legacy S/F behave the same. An async track per (process, name of the
 * outermost slice); overlapping trees get separate lanes. */
void wick_tracks_async_begin (WickTracks *self, gint32 process, WickStr category, WickStr id,
                              WickStr scope, gint64 ts_ns, WickStr name, WickStr args);
void wick_tracks_async_end (WickTracks *self, gint32 process, WickStr category, WickStr id,
                            WickStr scope, gint64 ts_ns, WickStr args);
/* n (async instant), T/p (legacy steps): a zero-length mark in the key's slice. */
void wick_tracks_async_instant (WickTracks *self, gint32 process, WickStr category, WickStr id,
                                WickStr scope, gint64 ts_ns, WickStr name, WickStr args);

/* Counter series @name of @process (-1: global), created on first use. */
guint32 wick_tracks_counter_track (WickTracks *self, gint32 process, WickStr name);
void wick_tracks_counter_add (WickTracks *self, guint32 track, gint64 ts_ns, double value);
/* What @track's values measure (WICK_COUNTER_UNIT_COUNT until set). */
void wick_tracks_counter_set_unit (WickTracks *self, guint32 track, WickCounterUnit unit);

/* An instant. THREAD scope needs @thread, PROCESS scope @process; GLOBAL
 * neither. One instants track per thread, per process and one global. */
void wick_tracks_instant_add (WickTracks *self, WickInstantScope scope, gint32 process,
                              gint32 thread, gint64 ts_ns, WickStr name, WickStr category,
                              WickStr args);

/* Chrome O / N / D (@phase): an object's snapshot, creation or destruction,
 * an instant of the "Objects" track of @process (-1: a global one), named by
 * the object's type, with its @id. */
void wick_tracks_object_add (WickTracks *self, gint32 process, char phase, gint64 ts_ns,
                             WickStr name, WickStr category, WickStr id, WickStr args);
/* Chrome P: a sample of @thread, an instant of its "Samples" track. */
void wick_tracks_sample_add (WickTracks *self, guint32 thread, gint64 ts_ns, WickStr name,
                             WickStr category, WickStr args);

/* Device track of (@device, @stream) in @process (-1: none), created on first
 * use; named "device stream" unless @name is set. */
guint32 wick_tracks_device_track (WickTracks *self, gint32 process, WickStr device,
                                  WickStr stream, WickStr name);
/* Device track of (@device, @stream) as the events of @thread carry them
 * (Chrome: a GPU stream or an accelerator queue written as a (pid, tid)
 * thread): the track is that thread's, so every thread of a file has its
 * track and its name; one per thread, device and stream. */
guint32 wick_tracks_thread_device_track (WickTracks *self, guint32 thread, WickStr device,
                                         WickStr stream, WickStr name);
/* Device track of the events of @thread that name no device or stream of
 * their own (torch 2.x's gpu_user_annotation: only its pid, the device, and
 * its tid, the stream): the thread's track whose stream is the thread's tid
 * (in decimal), so that annotations and the kernels they cover share one
 * track. Until the thread has one, a track of their own (@device, @stream
 * and @name as given: the pid and tid); the first track of @thread made by
 * wick_tracks_thread_device_track() for that stream then takes it over, its
 * events included. */
guint32 wick_tracks_thread_implied_device_track (WickTracks *self, guint32 thread, WickStr device,
                                                 WickStr stream, WickStr name);
/* The same with the interval's External id (Kineto's "External id", the
 * operator that launched it; 0: none), used only when neither a correlation
 * id nor a flow links it (see wick_tracks_slice_set_external_id and
 * wick_tracks_slice_set_operator_external_id). */
void wick_tracks_device_add_linked (WickTracks *self, guint32 track, gint64 ts_ns,
                                    gint64 duration_ns, WickStr name, WickStr category,
                                    WickStr args, gint64 correlation, gint64 external_id);
/* A runtime call carrying External id @external_id (not 0). A work interval
 * that no correlation id or flow links is launched by a call of its
 * External id: within an (External id, kind) group, the unlinked kernels
 * (copies, fills) by start pair with the calls that launch kernels
 * (cudaLaunchKernel...; copies: *Memcpy*, fills: *Memset*; graph launches
 * never) and launched nothing yet, by start; a group whose counts differ is
 * left unlinked, counted as skipped "External id with unequal kernels and
 * launches (not linked)". */
void wick_tracks_slice_set_external_id (WickTracks *self, WickPendingSlice slice,
                                        gint64 external_id);
/* An operator (cpu_op) carrying External id @external_id (not 0): the
 * launch of the work intervals of its External id when the trace has no
 * runtime call of it (a cut trace, runtime events filtered out) and exactly
 * one operator carries it; the kernels are then linked to the operator. */
void wick_tracks_slice_set_operator_external_id (WickTracks *self, WickPendingSlice slice,
                                                 gint64 external_id);
/* A host slice (a runtime call) carrying correlation id @correlation (not 0):
 * the device intervals with that id are the ones it launched. When several
 * slices carry one id the earliest is the launcher; the others are counted
 * as skipped "correlation id on more than one runtime call". */
void wick_tracks_slice_set_correlation (WickTracks *self, WickPendingSlice slice,
                                        gint64 correlation);
/* Flow points of @thread bind to the intervals of device @track when the
 * thread has no slices (Chrome puts GPU streams on (pid, tid) "threads"). */
void wick_tracks_set_thread_device_track (WickTracks *self, guint32 thread, guint32 track);

/* Flow v1 (s / t / f) with id @id, grouped by (@category, @name, @id). A
 * start or step binds to the slice of @thread enclosing @ts_ns; an end binds
 * to the enclosing slice with @bind_enclosing (bp "e"), else to the next slice
 * of the thread starting at or after @ts_ns. In timestamp order, each step or
 * end after a start of its group is a flow from the group's last start or
 * step; a step or end before any start gives none and is counted as skipped
 * ("flow end (f) without a start"), so is a start that nothing follows. */
void wick_tracks_flow_add (WickTracks *self, WickFlowPhase phase, guint32 thread, gint64 ts_ns,
                           WickStr category, WickStr name, WickStr id, gboolean bind_enclosing);
/* Flow v2: @slice carries bind_id @id; flow_out links it to the next slice
 * with the same id and flow_in, in timestamp order. */
void wick_tracks_flow_bind (WickTracks *self, WickPendingSlice slice, WickStr id,
                            gboolean flow_in, gboolean flow_out);

/* Something read but not modelled: counted under @construct (e.g. "ph=Z",
 * "E without B"); `wick-trace tracks` and the health list report the counts. */
void wick_tracks_skip (WickTracks *self, const char *construct, guint64 n);

/* Matches B/E, async pairs and flows, rebases times, lays out lanes, appends
 * the slices to the document's spans and builds every track's index. After
 * this the builder functions must not be called again. */
void wick_tracks_finish (WickTracks *self);

/* ---- query -------------------------------------------------------------- */

WickTraceFormat wick_tracks_get_format (WickTracks *self);
WickDocument *wick_tracks_get_document (WickTracks *self);
/* Raw ns of time 0 (what finish subtracted); 0 for candle-graph. */
gint64 wick_tracks_get_origin_ns (WickTracks *self);
/* Earliest start and latest end of any event (open slices run to end). */
guint64 wick_tracks_get_start_ns (WickTracks *self);
guint64 wick_tracks_get_end_ns (WickTracks *self);

const WickProcess *wick_tracks_get_processes (WickTracks *self, guint *n);
/* A process's heading: a GPU process by its labels ("GPU 0 · python3", from
 * Kineto's process_labels; its process_name is the host's), another by its
 * name and pid ("python3 · 4515", labels after it in parentheses), one
 * never named "process PID". Free with g_free(). */
char *wick_tracks_process_title (WickTracks *self, guint32 process);
const WickThread *wick_tracks_get_threads (WickTracks *self, guint *n);
const WickTrack *wick_tracks_get_tracks (WickTracks *self, guint *n);
/* Track indices in display order: processes by (sort index, pid), in each its
 * threads by (sort index, tid) with each thread's slices then instants track,
 * then the process's async, counter, instants and device tracks; tracks of
 * no process last, the global instants track first of those. */
const guint32 *wick_tracks_get_display_order (WickTracks *self, guint *n);

const WickAsyncSlice *wick_tracks_get_async (WickTracks *self, guint *n);
const WickCounterSample *wick_tracks_get_counter_samples (WickTracks *self, guint *n);
const WickInstant *wick_tracks_get_instants (WickTracks *self, guint *n);
const WickDeviceSlice *wick_tracks_get_device_slices (WickTracks *self, guint *n);
const WickFlow *wick_tracks_get_flows (WickTracks *self, guint *n);

/* Slices track of a span, G_MAXUINT32 when none. */
guint32 wick_tracks_span_track (WickTracks *self, guint32 span);
/* The Chrome category of a span ("cpu_op", "cuda_runtime", ...), NULL when none. */
const char *wick_tracks_span_category (WickTracks *self, guint32 span);
/* Device intervals launched by @span (indices into
 * wick_tracks_get_device_slices(), by start). Returns how many; writes at
 * most @max into @out. */
guint wick_tracks_span_launched (WickTracks *self, guint32 span, guint32 *out, guint max);

/* Start, end (open slices end at the end of the trace), depth/lane, name and
 * args (JSON object text, NULL when none) of any event. */
guint64 wick_tracks_event_start (WickTracks *self, WickEventRef event);
guint64 wick_tracks_event_end (WickTracks *self, WickEventRef event);
guint wick_tracks_event_row (WickTracks *self, WickEventRef event);
guint32 wick_tracks_event_track (WickTracks *self, WickEventRef event);
const char *wick_tracks_event_name (WickTracks *self, WickEventRef event);
const char *wick_tracks_event_args (WickTracks *self, WickEventRef event);
/* TRUE for a slice or async slice whose end was never read. */
gboolean wick_tracks_event_is_open (WickTracks *self, WickEventRef event);

/* Flows that start or end at @event: indices into wick_tracks_get_flows(),
 * outgoing first. Returns how many; writes at most @max into @out. */
guint wick_tracks_event_flows (WickTracks *self, WickEventRef event, guint32 *out, guint max);

/* The per-zoom summary of one row: level L splits time into buckets of
 * wick_tracks_get_base_ns() << L ns from wick_tracks_get_start_ns() and keeps,
 * per non-empty bucket, the longest event starting in it (counters: the
 * sample of largest |value|). */
typedef struct
{
  guint32 bucket;
  guint32 event; /* index in the row's kind table */
} WickTrackMip;

/* One row of a track (a depth of a slices track, a lane of an async track,
 * the only row of the other kinds): its events sorted by start (ties: longer
 * first), as indices into the table of its kind. */
typedef struct
{
  guint32 event_kind; /* WickEventKind */
  guint n_events;
  const guint32 *events;
  guint n_levels;
  const WickTrackMip *const *levels;
  const guint *level_counts;
  /* wick_tracks_get_append_serial() when this row last changed (its events,
   * an open event's end, its summary); 0 since its build */
  guint64 changed;
} WickTrackRow;

guint wick_tracks_track_n_rows (WickTracks *self, guint32 track);
const WickTrackRow *wick_tracks_track_row (WickTracks *self, guint32 track, guint row);
/* Width of a level-0 summary bucket in ns (a power of two, same for all). */
guint64 wick_tracks_get_base_ns (WickTracks *self);
/* Level to draw at @ns_per_px: -1 means the raw events (finer than level 0). */
int wick_tracks_pick_level (WickTracks *self, double ns_per_px);
/* First position in @row whose event may overlap @t (ends after @t); every
 * event overlapping [t, ...) is at or after it. O(log n). */
guint wick_tracks_row_first_overlapping (WickTracks *self, guint32 track, guint row, guint64 t);
/* Event of @row nearest @t within @slop_ns (0 inside it); FALSE when none. */
gboolean wick_tracks_event_at (WickTracks *self, guint32 track, guint row, guint64 t,
                               guint64 slop_ns, WickEventRef *event);
/* Counter value in effect at @t (the last sample at or before it); FALSE before the first. */
gboolean wick_tracks_counter_value_at (WickTracks *self, guint32 track, guint64 t, double *value);

/* How a live document's model kept up with it. */
typedef struct
{
  guint64 builds;            /* whole builds, the first one included */
  guint64 appends;           /* incremental updates (records appended to the model) */
  guint64 fallbacks;         /* whole rebuilds where an append was tried and not possible */
  const char *last_fallback; /* why the last fallback happened (static text), NULL when none */
} WickTracksUpdateStats;

/* Changes with every whole (re)build: event and track indices of an older
 * serial are not valid any more. Appends keep it. */
guint64 wick_tracks_get_build_serial (WickTracks *self);
/* Counts the appends; a row's `changed` is the serial of the append that
 * last changed it. */
guint64 wick_tracks_get_append_serial (WickTracks *self);
/* Device slices whose names changed since the build (an append renames an
 * interval when the live analysis resolves its span, or renames every one
 * when a span's first op changes): the slices renamed one by one, @n indices
 * into wick_tracks_get_device_slices() in the order of the renames, and in
 * @all how many appends renamed them all. What a reader saw before stays
 * where it was: it reads on from its last @n, and renames all when @all grew. */
const guint32 *wick_tracks_get_device_renames (WickTracks *self, guint *n, guint *all);

/* Skipped constructs, in first-seen order (names are static or pooled). */
guint wick_tracks_get_n_skipped (WickTracks *self);
const char *wick_tracks_get_skipped (WickTracks *self, guint i, guint64 *count);

/* The kind as `wick-trace tracks` names it: an instants track of objects or
 * samples is "objects" or "samples". */
const char *wick_track_describe_kind (const WickTrack *track);
const char *wick_trace_format_to_string (WickTraceFormat format);

G_END_DECLS
