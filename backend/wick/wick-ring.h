/* wick-ring.h — reading a session's live ring from any process, and turning
 * its records into candle-graph/trace/10 JSONL lines. The protocol is
 * docs/ring.md.
 *
 * A session keeps everything it records in one memfd: a header (magic,
 * version, producer pid, start time, policy, counters), the session's meta
 * line, an arena of interned strings and one ring per recording thread.
 * Another process gets the fd (the control socket passes it with SCM_RIGHTS;
 * in-process: wick_session_get_ring_fd) and reads it with a WickRingReader.
 *
 * Typical use (wick-trace attach, the app's live window):
 *
 *   WickRingReader *reader = wick_ring_reader_new (fd, &error);
 *   WickJsonlFormatter *formatter = wick_jsonl_formatter_new (false);
 *   while (running) {
 *     wick_ring_reader_drain (reader, 0, on_record, formatter, &error);
 *     if (wick_ring_reader_get_producer_state (reader) != WICK_PRODUCER_RUNNING
 *         && wick_ring_reader_is_drained (reader)) break;
 *     sleep a frame;
 *   }
 *   wick_jsonl_formatter_finish (formatter, "capture detached before the process finished",
 *                                on_line, user_data);
 *
 *   on_record (record, formatter) calls
 *   wick_jsonl_formatter_feed (formatter, record, on_line, user_data).
 *
 * Guarantees of the reader:
 * - Shared memory is untrusted: every offset, length and string is checked
 *   before use; a record whose length is zero, not 8-aligned, beyond its ring
 *   chunk or beyond the data the producer committed ends that ring with an
 *   error (wick_ring_reader_get_stats: broken_rings, and the first error's
 *   sentence); a malformed record inside a well-framed length is skipped and
 *   counted; kinds it does not know are skipped and counted. Never a spin,
 *   never a crash.
 * - drain never blocks and never waits for the producer. A producer that dies
 *   (SIGKILL) is seen as WICK_PRODUCER_DEAD; what it committed stays readable.
 * - The first records a new reader delivers describe the session as it is
 *   now: WICK_RING_RECORD_META, the root span s1, then a span_start for every
 *   span open at that moment (synthesized: true), then records as recorded.
 *   A reader that attaches late therefore still produces a parseable trace.
 * - A follow reader (the default) never affects the producer: when it falls a
 *   whole ring behind it loses the oldest records, and reports exactly how many
 *   as a WICK_RING_RECORD_LOST record (and in stats.lost). A hold reader makes
 *   the producer respect its position, so the ring's policy applies to it:
 *   drop -> the producer drops new records (counted, announced to every reader
 *   with a WICK_RING_RECORD_DROPPED record saying how many and when); block ->
 *   the producer waits. At most 8 hold readers; a hold reader that dies is
 *   detected and released by the producer, and one that holds the producer
 *   back without draining for longer than the session's hold timeout
 *   (WickSessionOptions.hold_timeout_ms, 2 s by default) is detached: the
 *   producer writes a wick_reader_detached record and goes on, and the
 *   reader, when it drains again, follows (stats.detached). The session's own JSONL writer is a
 *   hold reader.
 *
 * Pointers in a delivered record (strings, arrays) are valid only during the
 * callback. A reader is used by one thread at a time.
 */
#pragma once

#if !defined(WICK_INSIDE) && !defined(WICK_COMPILATION)
#error "Only <wick/wick.h> can be included directly."
#endif

#include "wick-session.h"

WICK_BEGIN_DECLS

typedef enum
{
  WICK_RING_RECORD_META = 1,        /* meta: the session's meta JSONL line */
  WICK_RING_RECORD_SPAN_START,      /* span */
  WICK_RING_RECORD_SPAN_END,        /* span (with duration_ns) */
  WICK_RING_RECORD_OP,              /* op */
  WICK_RING_RECORD_TENSOR,          /* tensor */
  WICK_RING_RECORD_TENSOR_STATS,    /* tensor_stats */
  WICK_RING_RECORD_MEMORY,          /* memory */
  WICK_RING_RECORD_DEVICE_MEMORY,   /* device_memory */
  WICK_RING_RECORD_DEVICE_INTERVAL, /* device_interval */
  WICK_RING_RECORD_GRADIENT,        /* gradient */
  WICK_RING_RECORD_CALL_EDGE,       /* call_edge */
  WICK_RING_RECORD_DATA_EDGE,       /* data_edge */
  WICK_RING_RECORD_TERMINAL,        /* terminal */
  WICK_RING_RECORD_EXTENSION,       /* extension: a wick_ record (marks included) */
  WICK_RING_RECORD_DROPPED,         /* dropped: the producer dropped records */
  WICK_RING_RECORD_LOST,            /* lost: this reader lost records (lapped) */
  WICK_RING_RECORD_THREAD,          /* thread: a recording thread's identity (wick_thread) */
} WickRingRecordKind;

typedef struct
{
  WickSpanId id;
  WickSpanId parent; /* 0 for the root */
  const char *name;
  WickSpanKind span_kind;
  WickStep step;
  bool measured;
  bool synthesized; /* made by the reader from the open-span snapshot */
  uint64_t start_ns;
  uint64_t duration_ns; /* span_end only */
  uint32_t thread;      /* the recording thread's number (wick_thread), 0 if unknown */
} WickRingSpan;

typedef enum
{
  WICK_OUTCOME_COMPLETE,
  WICK_OUTCOME_FAILED
} WickOutcome;

typedef struct
{
  WickRingRecordKind kind;
  uint32_t ring; /* index of the producer thread's ring */
  union
  {
    struct
    {
      const char *line; /* {"kind":"meta",...} without newline */
    } meta;
    WickRingSpan span;
    WickOpRecord op;
    WickTensorRecord tensor;
    WickTensorStatsRecord tensor_stats;
    WickMemoryRecord memory;
    WickDeviceMemoryRecord device_memory;
    WickDeviceIntervalRecord device_interval;
    struct
    {
      uint64_t event_number; /* event_id is gradient-<event_number> */
      const char *root;
      const char *key;
      WickGradientState state;
      bool has_norm;
      double norm;
    } gradient;
    struct
    {
      WickSpanId from;
      WickSpanId to;
      uint64_t host_duration_ns;
    } call_edge;
    struct
    {
      const char *from_tensor;
      const char *to_tensor;
    } data_edge;
    struct
    {
      WickOutcome outcome;
      uint64_t timestamp_ns;
      const char *reason; /* NULL when complete */
    } terminal;
    struct
    {
      const char *kind; /* starts with "wick_" */
      uint64_t timestamp_ns;
      const char *json_fields; /* inside of a JSON object, possibly "" */
    } extension;
    struct
    {
      uint64_t count;    /* records the producer could not store */
      uint64_t first_ns; /* session time of the first and last of them */
      uint64_t last_ns;
      uint64_t total; /* dropped on this ring so far */
    } dropped;
    struct
    {
      uint64_t count;    /* records this reader lost on this ring */
      uint64_t after_ns; /* timestamp of the last record read before the loss, 0 if none */
    } lost;
    struct
    {
      uint32_t number; /* small, per session; 1 = the thread that opened it */
      int32_t os_tid;  /* gettid() */
      uint64_t timestamp_ns;
      const char *name; /* pthread_getname_np or wick_thread_set_name */
    } thread;
  };
} WickRingRecord;

typedef enum
{
  WICK_PRODUCER_RUNNING,  /* recording */
  WICK_PRODUCER_FINISHED, /* finish / finish_failed / close happened */
  WICK_PRODUCER_DEAD,     /* the process is gone without finishing */
} WickProducerState;

typedef enum
{
  WICK_RING_READER_FOLLOW, /* never affects the producer; may lose (reported) */
  WICK_RING_READER_HOLD,   /* the producer respects this reader's position */
} WickRingReaderMode;

typedef struct
{
  int pid;
  char program[256];
  char entrypoint[256];
  char run_id[128];
  uint64_t start_unix_ns; /* when the session opened */
  WickRingPolicy policy;
  uint32_t version; /* ring format version */
  uint32_t n_rings;
  uint64_t ring_bytes; /* capacity of each thread's ring */
  bool strict;
  uint64_t _wick_reserved[8]; /* room to grow: written as zero by libwick */
} WickRingInfo;

typedef struct
{
  uint64_t records;          /* delivered, synthesized ones included */
  uint64_t lost;             /* lost by this reader (follow mode, lapped) */
  uint64_t producer_dropped; /* dropped by the producer, all rings (header counters) */
  uint64_t unknown_skipped;  /* records of kinds this reader does not know */
  uint64_t malformed;        /* well-framed records whose payload was invalid */
  uint32_t broken_rings;     /* rings ended by a framing error (what they lost is in lost) */
  char first_error[256];     /* sentence of the first framing or payload error, "" if none */
  uint64_t detached_readers; /* hold readers the producer detached for stalling (session) */
  bool detached;             /* this hold reader was detached: it follows since */
  uint64_t _wick_reserved[6]; /* room to grow: written as zero by libwick */
} WickRingReaderStats;

/* A reader of another process's ring cuts longer span names (at a UTF-8
 * boundary, "…" appended) and counts them in names_cut. */
#define WICK_RING_READER_MAX_NAME_BYTES 4096
/* The names of the open spans a late reader synthesizes, together: past this
 * many bytes each further one is cut to WICK_RING_READER_INTRO_CUT_BYTES. */
#define WICK_RING_READER_INTRO_NAME_BUDGET (4u << 20)
#define WICK_RING_READER_INTRO_CUT_BYTES 64
/* Ring positions (commit counters) past 2^62 break the ring: no producer
 * writes 4 EiB, and position arithmetic below it never wraps. */
#define WICK_RING_MAX_POSITION (UINT64_C (1) << 62)
/* One drain call reads for at most this long, then returns (the caller's
 * loop checks its deadline and signals between calls). */
#define WICK_RING_READER_DRAIN_BUDGET_NS UINT64_C (200000000)
/* Where a reader began (wick_ring_reader_get_start): a reader opened after
 * the session recorded reads from "now" and misses what came before. */
typedef struct
{
  uint64_t records_before;    /* records committed to the rings before the reader opened */
  uint64_t redelivered;       /* of them, delivered again as its opening records: the thread
                                 identities, the root and the spans open then */
  bool exact;                 /* false when a ring's count could not be placed (lapped at open) */
  uint64_t opened_ns;         /* session time when it opened (from the wall clock: about 1 ms) */
  uint64_t _wick_reserved[4]; /* room to grow: written as zero by libwick */
} WickRingReaderStart;

typedef struct WickRingReader WickRingReader;

/* Maps the ring (fd is dup'ed; the caller keeps its own). Refuses a
 * descriptor that is not a memfd sealed against shrinking (another process
 * could truncate it under the mapping: SIGBUS). Validates the
 * header: "not a Wick ring (bad magic)", "ring format version N is not
 * supported (this reader reads 1)", sizes that do not fit the file. Follow
 * mode. */
WICK_AVAILABLE_IN_1_0
WickRingReader *wick_ring_reader_new (int fd, WickError *error);
/* mode HOLD is refused here ("a hold reader needs the session's cursors
 * fd: wick_ring_reader_new_hold"); FOLLOW is wick_ring_reader_new. */
WICK_AVAILABLE_IN_1_0
WickRingReader *wick_ring_reader_new_full (int fd, WickRingReaderMode mode, WickError *error);
/* A hold reader: ring_fd (read-only is enough) and the session's cursors fd
 * (wick_session_get_cursors_fd), checked to belong to that ring; needs a
 * free reader slot ("all 8 hold-reader slots are taken"). */
WICK_AVAILABLE_IN_1_0
WickRingReader *wick_ring_reader_new_hold (int ring_fd, int cursors_fd, WickError *error);
WICK_AVAILABLE_IN_1_0
void wick_ring_reader_free (WickRingReader *reader);

WICK_AVAILABLE_IN_1_0
const WickRingInfo *wick_ring_reader_get_info (WickRingReader *reader);

/* Return false to stop the drain after this record (it counts as consumed). */
typedef bool (*WickRingRecordFunc) (const WickRingRecord *record, void *user_data);

/* Delivers up to max_records records (0: all available now, read for at
 * most WICK_RING_READER_DRAIN_BUDGET_NS) and returns how many it delivered;
 * never blocks. Returns -1 only for misuse (NULL args);
 * data errors are counted in stats, never fatal to the reader. */
WICK_AVAILABLE_IN_1_0
long wick_ring_reader_drain (WickRingReader *reader, size_t max_records,
                             WickRingRecordFunc callback, void *user_data, WickError *error);
/* True when the last drain left nothing committed unread. */
WICK_AVAILABLE_IN_1_0
bool wick_ring_reader_is_drained (WickRingReader *reader);
/* Checks the producer's state flag and, while it says running, whether the
 * producer process still exists (one kill(pid, 0)). */
WICK_AVAILABLE_IN_1_0
WickProducerState wick_ring_reader_get_producer_state (WickRingReader *reader);
WICK_AVAILABLE_IN_1_0
void wick_ring_reader_get_stats (WickRingReader *reader, WickRingReaderStats *stats);
/* Names longer than WICK_RING_READER_MAX_NAME_BYTES (a reader of another
 * process's ring) or past the synthesized spans' name budget that this
 * reader cut (docs/ring.md, "Limits of a reader"); counted once per copy of
 * a name out of shared memory. */
WICK_AVAILABLE_IN_1_0
uint64_t wick_ring_reader_get_names_cut (WickRingReader *reader);
/* Where this reader began (see WickRingReaderStart): records_before minus
 * redelivered is what it cannot deliver, so a file written from it is partial
 * when that is above 0 (wick-trace attach says so in its terminal). */
WICK_AVAILABLE_IN_1_0
void wick_ring_reader_get_start (WickRingReader *reader, WickRingReaderStart *start);

/* ---------------------------------------------------------------------------
 * JSONL formatting
 */

/* Formats one record as its trace/10 line (no newline), as candle-graph's
 * writer lays it out: kind first, fields in spec order, compact, optional
 * fields omitted, floats in shortest round-trip form with .0 for integral
 * values, non-finite optional floats as null, strings JSON-escaped with
 * invalid UTF-8 replaced by U+FFFD. WICK_RING_RECORD_DROPPED and _LOST become
 * wick_dropped and wick_lost extension lines. Writes at most size bytes
 * including the NUL and returns the length the full line needs (as
 * snprintf). */
WICK_AVAILABLE_IN_1_0
size_t wick_ring_record_format (const WickRingRecord *record, char *buffer, size_t size);

/* The stateful formatter that keeps a stream of records a parseable trace:
 * writes meta first (once); emits a span_end only for a span whose start it
 * emitted, and never a duplicate span_start; holds the terminal back until
 * wick_jsonl_formatter_finish so that it is the last line, with its timestamp
 * raised to the latest host evidence if needed; leaves out wick_ records when
 * strict. The JSONL writer of a session and wick-trace attach both use it. */
typedef struct WickJsonlFormatter WickJsonlFormatter;
typedef void (*WickLineFunc) (const char *line, size_t length, void *user_data);

WICK_AVAILABLE_IN_1_0
WickJsonlFormatter *wick_jsonl_formatter_new (bool strict);
WICK_AVAILABLE_IN_1_0
void wick_jsonl_formatter_free (WickJsonlFormatter *formatter);
/* Calls emit for each line (0, 1 or 2 lines; line without newline). */
WICK_AVAILABLE_IN_1_0
void wick_jsonl_formatter_feed (WickJsonlFormatter *formatter, const WickRingRecord *record,
                                WickLineFunc emit, void *user_data);
/* Emits the terminal: the one recorded, else a failed terminal with
 * reason_if_none (e.g. "capture detached before the process finished") at
 * the latest host evidence. */
WICK_AVAILABLE_IN_1_0
void wick_jsonl_formatter_finish (WickJsonlFormatter *formatter, const char *reason_if_none,
                                  WickLineFunc emit, void *user_data);
WICK_AVAILABLE_IN_1_0
bool wick_jsonl_formatter_has_terminal (WickJsonlFormatter *formatter);
/* The trace is partial (a reader that began late): finish's terminal is then
 * failed, its reason @why followed by what the session's own terminal said
 * ("the session completed" for a complete one). NULL clears it. */
WICK_AVAILABLE_IN_1_0
void wick_jsonl_formatter_set_partial (WickJsonlFormatter *formatter, const char *why);
/* A line as the formatter wrote it, with what it is made of, for a reader
 * that keeps records rather than text (the app's live view): @record is the
 * record the line is of (also a span_start the formatter made for an end
 * whose start the reader never saw); the Wick keys it added in extension
 * mode are given apart, decoded: a span_start's thread identity
 * ("wick_thread_name", "wick_os_tid"; @thread_name NULL when none, as
 * recorded: not escaped, possibly not valid UTF-8), the Wick records it
 * carries ("wick_records": comma-separated JSON objects, the same bytes as
 * in the line; NULL when none) and the terminal's losses ("wick_dropped",
 * "wick_lost", "wick_span_ends_foreign", "wick_detached",
 * "wick_records_dropped"; @has_loss_keys false when it has none). Valid
 * during the call only. A meta line's record holds its text. */
typedef struct
{
  const WickRingRecord *record;
  const char *thread_name;
  uint64_t os_tid;
  const char *wick_records;
  size_t wick_records_length;
  bool has_loss_keys;
  uint64_t dropped;
  uint64_t lost;
  uint64_t span_ends_foreign;
  uint64_t detached;
  uint64_t records_dropped;
  uint64_t _wick_reserved[4];
} WickFormattedRecord;
typedef void (*WickFormattedFunc) (const WickFormattedRecord *formatted, const char *line,
                                   size_t length, void *user_data);
/* With @func set (NULL: unset), each line goes to @func instead of the emit
 * function given to feed and finish, with the same user_data. The lines are
 * the same; wick_ring_reader_drain_jsonl then takes its general path for
 * span records too, so that each line has its record. */
WICK_AVAILABLE_IN_1_0
void wick_jsonl_formatter_set_formatted_func (WickJsonlFormatter *formatter,
                                              WickFormattedFunc func);
/* Lines emitted and records left out to keep the trace parseable. */
WICK_AVAILABLE_IN_1_0
uint64_t wick_jsonl_formatter_get_lines (WickJsonlFormatter *formatter);
WICK_AVAILABLE_IN_1_0
uint64_t wick_jsonl_formatter_get_skipped (WickJsonlFormatter *formatter);

/* wick_ring_reader_drain for a reader whose records end up as JSONL lines
 * (the session's file writer, wick-trace attach, the app): span records go
 * straight from the ring to formatter's lines (emit), without a
 * WickRingRecord or a callback, their names escaped once per interned string;
 * every other record goes to callback, which feeds formatter itself (NULL:
 * they are fed to formatter with emit). The lines are exactly those of
 * feeding every decoded record to wick_jsonl_formatter_feed. Returns the
 * records consumed, -1 only for misuse. */
WICK_AVAILABLE_IN_1_0
long wick_ring_reader_drain_jsonl (WickRingReader *reader, size_t max_records,
                                   WickJsonlFormatter *formatter, WickLineFunc emit,
                                   void *emit_data, WickRingRecordFunc callback, void *user_data,
                                   WickError *error);

WICK_END_DECLS
