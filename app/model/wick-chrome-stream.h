/* wick-chrome-stream.h — a streaming reader of Chrome trace-event JSON.
 *
 * Reads the JSON Object Format ({"traceEvents": [...], other members}) and the
 * JSON Array Format ([event, ...]) from a WickInput, one event at a time, with
 * Wick's own JSON scanner (wick-json-scanner.h): no DOM, memory bounded by the
 * largest single event (or top-level metadata member) plus one read chunk.
 *
 * Tolerated as Chrome and Perfetto tolerate them, each with a warning: a
 * trailing comma after the last event, and a file cut off inside the events
 * (the events read before the cut are delivered). Anything else that is not
 * JSON is an error naming the file, the line and the column (1-based, column
 * in bytes).
 *
 * The format is judged from the top-level structure, never from a prefix: a
 * top-level object is Chrome when it has a "traceEvents" member, candle-graph
 * JSONL when one of its members (before any "traceEvents") is "kind", or when
 * another value follows it in the file; a top-level array holding objects is
 * Chrome's array format, one holding arrays the torch memory timeline.
 */
#pragma once

#include <gio/gio.h>

#include "wick-document-error.h"
#include "wick-input.h"
#include "wick-json-scanner.h"

G_BEGIN_DECLS

typedef enum
{
  WICK_FILE_FORMAT_UNKNOWN,
  WICK_FILE_FORMAT_JSONL,           /* candle-graph JSONL */
  WICK_FILE_FORMAT_CHROME,          /* trace-event JSON */
  WICK_FILE_FORMAT_MEMORY_TIMELINE, /* torch export_memory_timeline JSON */
} WickFileFormat;

/* One event as read. Strings point into the reader's buffer and stay valid
 * until the next event is read; absent strings are NULL with length 0. Numbers
 * given as numeric strings are read as numbers. */
typedef struct
{
  const char *ph, *name, *cat, *id, *scope, *s, *bp, *bind_id;
  gsize ph_len, name_len, cat_len, id_len, scope_len, s_len, bp_len, bind_id_len;
  /* pid and tid as text: a number's digits or a string's content */
  const char *pid, *tid;
  gsize pid_len, tid_len;
  gboolean has_pid, has_tid;
  double ts, dur; /* µs */
  gint64 ts_ns, dur_ns; /* the same in ns, converted exactly from the decimal text */
  gboolean has_ts, has_dur;
  gboolean flow_in, flow_out;
  /* the args object's JSON text, NULL when absent or not an object */
  const char *args;
  gsize args_len;
  /* 0-based index among the events */
  guint64 index;
  /* the event's whole JSON text in the reader's buffer: every string above
   * points into it or into the reader's unescape scratch. A string field
   * added here must be added to wick_chrome_event_copy() too (a static
   * assertion there on this struct's size is the reminder). */
  const char *raw;
  gsize raw_len;
  gsize scratch_len; /* bytes of that scratch in use: at most this many outside raw */
} WickChromeEvent;

/* Copies @event's strings into @arena (at least wick_chrome_event_copy_size()
 * bytes: raw_len + scratch_len) and points @copy's strings there, so that it
 * outlives the reader's next event. Returns the bytes used. */
gsize wick_chrome_event_copy_size (const WickChromeEvent *event);
gsize wick_chrome_event_copy (const WickChromeEvent *event, WickChromeEvent *copy, char *arena);

typedef struct _WickChromeReader WickChromeReader;

/* Takes @input. @name names the file in messages. */
WickChromeReader *wick_chrome_reader_new (WickInput *input, const char *name);
void wick_chrome_reader_free (WickChromeReader *reader);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickChromeReader, wick_chrome_reader_free)

/* Reads the top-level structure up to the first event and judges the format.
 * For CHROME, events follow; for MEMORY_TIMELINE, call
 * wick_chrome_reader_memory_timeline(). FALSE with @error when the file is not
 * JSON at all or is empty. */
gboolean wick_chrome_reader_start (WickChromeReader *reader, WickFileFormat *format,
                                   GError **error);

/* Where wick_chrome_reader_start() stopped when it judged no format (its
 * error, in WICK_DOCUMENT_ERROR, words it). */
typedef enum
{
  WICK_CHROME_START_NOT_JSON,    /* not JSON at the top, or broken before a deciding member */
  WICK_CHROME_START_EMPTY,       /* nothing but a byte-order mark, or nothing */
  WICK_CHROME_START_DAMAGED,     /* Chrome's structure seen, then damage */
  WICK_CHROME_START_NOT_A_TRACE, /* a whole JSON object with none of a trace's members */
} WickChromeStartFailure;
WickChromeStartFailure wick_chrome_reader_get_start_failure (WickChromeReader *reader);

/* The reader's last error as values: returns its reason without the file's
 * name (NULL when there was none), with @line and @column, 1-based, where it
 * has a place (0 when not: an empty file, an object with no trace member, the
 * input's own errors, whose reason names the file). Errors are
 * WICK_DOCUMENT_ERROR: INVALID (broken JSON or structure), TRUNCATED (the
 * input ends inside a value), TOO_LARGE (a value longer than the limit),
 * EMPTY, NOT_A_TRACE, or the input's codes (wick-input.h). */
const char *wick_chrome_reader_get_failure (WickChromeReader *reader, guint64 *line,
                                            guint64 *column);

/* The next event: TRUE with @event filled, FALSE at the end (with @error NULL)
 * or on an error. Elements of traceEvents that are not objects are counted
 * (wick_chrome_reader_get_non_objects) and skipped. */
gboolean wick_chrome_reader_next (WickChromeReader *reader, WickChromeEvent *event,
                                  GError **error);

/* Top-level members other than traceEvents, in file order, as (key, JSON text)
 * pairs; complete after the end was reached. Members larger than 1 MiB are
 * counted, not kept. */
const GPtrArray *wick_chrome_reader_get_metadata (WickChromeReader *reader); /* char* pairs */
guint64 wick_chrome_reader_get_non_objects (WickChromeReader *reader);
/* Warnings for tolerated damage (trailing comma, cut-off file), NULL when none. */
const GPtrArray *wick_chrome_reader_get_warnings (WickChromeReader *reader);
/* TRUE when the file was cut off inside the events. */
gboolean wick_chrome_reader_was_cut_off (WickChromeReader *reader);

/* The torch memory timeline: [[t_us, ...], [[bytes per category, ...], ...]].
 * Fills @times (gint64) and @sizes (gint64, n_times rows of *n_categories). */
gboolean wick_chrome_reader_memory_timeline (WickChromeReader *reader, GArray *times,
                                             GArray *sizes, guint *n_categories, GError **error);

/* Helpers over an event's args text. */
gboolean wick_chrome_args_number (const char *args, gsize len, const char *key, double *value);
gboolean wick_chrome_args_string (const char *args, gsize len, const char *key, GString *out);
/* The numbers (or numeric strings) of @n_keys members in one pass over the
 * args; as wick_chrome_args_number(), the first member of a name counts and
 * found[k] is FALSE when it is absent or not a number. @error: scratch. */
void wick_chrome_args_numbers (const char *args, gsize len, const char *const *keys, guint n_keys,
                               double *values, gboolean *found, GString *error);

/* A string's content read as a decimal number ("1.59", " 2e3"), as
 * chrome://tracing and Perfetto read a counter value written as a string:
 * FALSE for anything else (hexadecimal, "nan", words, longer than 63 bytes). */
gboolean wick_chrome_numeric_string (const char *text, gsize len, double *value);

G_END_DECLS
