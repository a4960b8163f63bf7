/* wick-chrome-import.c — Chrome trace-event JSON into a document, streamed
 * (see the header for the mapping). */
#include "config.h"

#include "wick-chrome-import.h"
#include "wick-chrome-import-private.h"

#include <glib/gi18n-lib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "wick-chrome-stream.h"
#include "wick-document-private.h"
#include "wick-input.h"
#include "wick-record.h"
#include "wick-tracks.h"

typedef struct
{
  gint64 ts_ns; /* raw */
  gint64 addr, bytes, allocated, reserved, device_type, device_id;
  gboolean has_addr, has_allocated, has_reserved;
  guint32 process;
} MemoryEvent;

typedef struct
{
  guint32 process, thread; /* builder indices */
  guint32 device_track;    /* +1; the device track of its last device event */
  gint64 last_device, last_stream; /* of that event; with flags below */
  gboolean last_has_device, last_has_stream;
} ThreadRef;

/* Host args are kept whatever their length, up to this many bytes in all
 * (device, async and instant args always): a bound on memory that no trace
 * of ordinary size reaches; what it leaves out is counted, never dropped
 * silently. */
#define HOST_ARGS_BUDGET ((guint64)1 << 30)
#define TIME_LIMIT ((gint64)1 << 61)

typedef struct
{
  WickDocument *doc;
  WickTracks *tracks;
  const char *name;
  GHashTable *threads;   /* "pid\ntid" -> ThreadRef* */
  GHashTable *processes; /* "pid" -> index+1 */
  GHashTable *ids;       /* non-numeric pid/tid text -> synthetic id */
  gint64 next_synthetic;
  /* the threads of the last few events ("pid\ntid"): a GPU stream's events
   * alternate with the launching thread's */
  struct
  {
    char key[56];
    gsize len;
    ThreadRef *ref;
  } recent[4];
  guint recent_next;
  GString *args_error;  /* scratch for reading args */
  GArray *memory;       /* MemoryEvent */
  GHashTable *memory_counters; /* "pid\ndevice\nwhat" -> track+1 */
  guint64 imported[128];
  guint64 host_args_bytes, host_args_budget;
  guint64 frees_before_window;
  gint64 min_ns, max_ns;
  gboolean has_time;
  GString *scratch;
  guint64 invalid_utf8; /* strings whose bad bytes were replaced by U+FFFD */
} Import;

/* ---- the information kept on the document ----------------------------- */

static void
chrome_info_free (gpointer data)
{
  WickChromeInfo *info = data;

  g_ptr_array_unref (info->imported);
  g_ptr_array_unref (info->skipped);
  g_ptr_array_unref (info->metadata);
  g_ptr_array_unref (info->warnings);
  g_free (info->format);
  g_free (info);
}

const WickChromeInfo *
wick_chrome_info_get (WickDocument *document)
{
  return g_object_get_data (G_OBJECT (document), "wick-chrome-info");
}

static WickChromeInfo *
chrome_info_new (WickDocument *doc, const char *format)
{
  WickChromeInfo *info = g_new0 (WickChromeInfo, 1);

  info->format = g_strdup (format);
  info->imported = g_ptr_array_new_with_free_func (g_free);
  info->skipped = g_ptr_array_new_with_free_func (g_free);
  info->metadata = g_ptr_array_new_with_free_func (g_free);
  info->warnings = g_ptr_array_new_with_free_func (g_free);
  g_object_set_data_full (G_OBJECT (doc), "wick-chrome-info", info, chrome_info_free);
  return info;
}

static void
info_count (GPtrArray *pairs, const char *key, guint64 n)
{
  g_ptr_array_add (pairs, g_strdup (key));
  g_ptr_array_add (pairs, g_strdup_printf ("%" G_GUINT64_FORMAT, n));
}

/* ---- the import's tables ---------------------------------------------- */

/* Every string the document keeps is valid UTF-8: JSON's are, but a trace's
 * writer may put raw bytes in a name (and the views hand names to Pango and
 * GTK, the JSON outputs to other programs). Bad bytes become U+FFFD, counted
 * and said in a warning. */
static WickStr
intern (Import *im, const char *s, gsize len)
{
  if (s == NULL)
    return 0;
  if (G_UNLIKELY (!g_utf8_validate_len (s, len, NULL)))
    {
      g_autofree char *valid = g_utf8_make_valid (s, (gssize)len);
      im->invalid_utf8++;
      return wick_tracks_intern (im->tracks, valid, strlen (valid));
    }
  return wick_tracks_intern (im->tracks, s, len);
}

static void
skip (Import *im, const char *construct, guint64 n)
{
  if (n > 0)
    wick_tracks_skip (im->tracks, construct, n);
}

static gboolean
str_is (const char *s, gsize len, const char *lit)
{
  gsize n = strlen (lit);

  return s != NULL && len == n && memcmp (s, lit, n) == 0;
}

/* A pid or tid: its number, or a stable synthetic negative id for text. */
static gint64
id_of (Import *im, const char *text, gsize len, gboolean *synthetic)
{
  char small[32];
  char *end = NULL;
  gint64 v;
  gpointer found;
  char *key;

  *synthetic = FALSE;
  if (len > 0 && len < sizeof small)
    {
      memcpy (small, text, len);
      small[len] = '\0';
      v = g_ascii_strtoll (small, &end, 10);
      if (end != small && *end == '\0')
        return v;
      if (*end == '.')
        {
          double d = g_ascii_strtod (small, &end);
          if (*end == '\0' && fabs (d) < 9e18)
            return (gint64)d;
        }
    }
  *synthetic = TRUE;
  key = g_strndup (text, len);
  if (g_hash_table_lookup_extended (im->ids, key, NULL, &found))
    {
      g_free (key);
      return GPOINTER_TO_SIZE (found) > 0 ? -(gint64)GPOINTER_TO_SIZE (found) : 0;
    }
  im->next_synthetic++;
  g_hash_table_insert (im->ids, key, GSIZE_TO_POINTER ((gsize)im->next_synthetic));
  return -im->next_synthetic;
}

static guint32
process_of (Import *im, const char *pid, gsize pid_len)
{
  gpointer found;
  gboolean synthetic;
  guint32 process;
  char *key = g_strndup (pid, pid_len);

  if (g_hash_table_lookup_extended (im->processes, key, NULL, &found))
    {
      g_free (key);
      return GPOINTER_TO_UINT (found) - 1;
    }
  process = wick_tracks_add_process (im->tracks, id_of (im, pid, pid_len, &synthetic));
  if (synthetic)
    /* a pid given as text names its process until process_name says otherwise */
    wick_tracks_set_process_name (im->tracks, process, intern (im, pid, pid_len));
  g_hash_table_insert (im->processes, key, GUINT_TO_POINTER (process + 1));
  return process;
}

static ThreadRef *
thread_of (Import *im, const WickChromeEvent *e)
{
  const char *pid = e->has_pid ? e->pid : "0";
  gsize pid_len = e->has_pid ? e->pid_len : 1;
  /* a missing tid is the pid's, as Perfetto has it */
  const char *tid = e->has_tid ? e->tid : pid;
  gsize tid_len = e->has_tid ? e->tid_len : pid_len;
  gsize key_len = pid_len + 1 + tid_len;
  ThreadRef *ref;
  gboolean synthetic;

  for (guint i = 0; i < G_N_ELEMENTS (im->recent); i++)
    if (im->recent[i].ref != NULL && im->recent[i].len == key_len
        && memcmp (im->recent[i].key, pid, pid_len) == 0 && im->recent[i].key[pid_len] == '\n'
        && memcmp (im->recent[i].key + pid_len + 1, tid, tid_len) == 0)
      return im->recent[i].ref;
  g_string_truncate (im->scratch, 0);
  g_string_append_len (im->scratch, pid, (gssize)pid_len);
  g_string_append_c (im->scratch, '\n');
  g_string_append_len (im->scratch, tid, (gssize)tid_len);
  ref = g_hash_table_lookup (im->threads, im->scratch->str);
  if (ref == NULL)
    {
      ref = g_new0 (ThreadRef, 1);
      ref->process = process_of (im, pid, pid_len);
      ref->thread = wick_tracks_add_thread (im->tracks, ref->process,
                                            id_of (im, tid, tid_len, &synthetic));
      if (synthetic)
        wick_tracks_set_thread_name (im->tracks, ref->thread, intern (im, tid, tid_len));
      g_hash_table_insert (im->threads, g_strdup (im->scratch->str), ref);
    }
  if (key_len <= sizeof im->recent[0].key)
    {
      guint i = im->recent_next++ % G_N_ELEMENTS (im->recent);
      memcpy (im->recent[i].key, im->scratch->str, key_len);
      im->recent[i].len = key_len;
      im->recent[i].ref = ref;
    }
  return ref;
}

/* Several integer members of an event's args, in one pass over them. */
static void
args_ints (Import *im, const WickChromeEvent *e, const char *const *keys, guint n, gint64 *values,
           gboolean *has)
{
  double v[8];

  g_assert (n <= G_N_ELEMENTS (v));
  wick_chrome_args_numbers (e->args, e->args_len, keys, n, v, has, im->args_error);
  for (guint k = 0; k < n; k++)
    {
      has[k] = has[k] && fabs (v[k]) < 9e18;
      values[k] = has[k] ? (gint64)v[k] : 0;
    }
}

static gboolean
is_device_category (const WickChromeEvent *e)
{
  const char *c = e->cat;
  gsize n = e->cat_len;

  return str_is (c, n, "kernel") || str_is (c, n, "gpu_memcpy") || str_is (c, n, "gpu_memset")
         || str_is (c, n, "gpu_user_annotation") || str_is (c, n, "Kernel")
         || str_is (c, n, "Memcpy") || str_is (c, n, "Memset") || str_is (c, n, "gpu_op")
         || str_is (c, n, "mtia_ccp_events") || str_is (c, n, "hip_kernel");
}

/* A runtime call's category: the calls that launch kernels and copies
 * (cudaLaunchKernel, cudaMemcpyAsync, cudaGraphLaunch, ...) carry the
 * correlation id of what they launched. */
static gboolean
is_runtime_category (const WickChromeEvent *e)
{
  const char *c = e->cat;
  gsize n = e->cat_len;

  return str_is (c, n, "cuda_runtime") || str_is (c, n, "cuda_driver")
         || str_is (c, n, "hip_runtime") || str_is (c, n, "hip_driver") || str_is (c, n, "Runtime")
         || str_is (c, n, "privateuse1_runtime") || str_is (c, n, "mtia_runtime");
}

static void
note_time (Import *im, gint64 start, gint64 end)
{
  if (!im->has_time || start < im->min_ns)
    im->min_ns = start;
  if (!im->has_time || end > im->max_ns)
    im->max_ns = end;
  im->has_time = TRUE;
}

static WickStr
args_of (Import *im, const WickChromeEvent *e, gboolean host)
{
  if (e->args == NULL || e->args_len <= 2)
    return 0;
  if (host)
    {
      if (im->host_args_bytes + e->args_len > im->host_args_budget)
        {
          skip (im, "slice args past 1 GiB of slice args (not kept)", 1);
          return 0;
        }
      im->host_args_bytes += e->args_len;
    }
  return intern (im, e->args, e->args_len);
}

static void
add_device (Import *im, const WickChromeEvent *e, gint64 ts, gint64 dur)
{
  ThreadRef *ref = thread_of (im, e);
  static const char *const keys[] = { "device", "stream", "correlation", "External id" };
  gint64 values[4];
  gboolean has[4];
  args_ints (im, e, keys, 4, values, has);
  gboolean has_device = has[0], has_stream = has[1];
  gint64 device = values[0], stream = values[1], correlation = has[2] ? values[2] : 0;
  gint64 external = has[3] ? values[3] : 0;
  char device_text[32], stream_text[48];
  guint32 track;

  if (ref->device_track > 0 && ref->last_has_device == has_device
      && ref->last_has_stream == has_stream && ref->last_device == device
      && ref->last_stream == stream)
    {
      /* the same stream as the thread's last device event (the common case) */
      wick_tracks_device_add_linked (im->tracks, ref->device_track - 1, ts, dur,
                                     intern (im, e->name, e->name_len),
                                     intern (im, e->cat, e->cat_len), args_of (im, e, FALSE),
                                     correlation, external);
      im->imported['d']++;
      return;
    }
  ref->last_has_device = has_device;
  ref->last_has_stream = has_stream;
  ref->last_device = device;
  ref->last_stream = stream;
  if (has_device)
    g_snprintf (device_text, sizeof device_text, "cuda:%" G_GINT64_FORMAT, device);
  else
    g_snprintf (device_text, sizeof device_text, "%.*s", (int)MIN (e->pid_len, 24),
                e->has_pid ? e->pid : "0");
  if (has_stream)
    g_snprintf (stream_text, sizeof stream_text, "stream %" G_GINT64_FORMAT, stream);
  else
    g_snprintf (stream_text, sizeof stream_text, "stream %.*s", (int)MIN (e->tid_len, 24),
                e->has_tid ? e->tid : "0");
  g_string_printf (im->scratch, "%s %s", device_text, stream_text);
  /* An event naming neither (torch 2.x's gpu_user_annotation) joins the
   * thread's stream of its tid: the annotation over its kernels. */
  track = (has_device || has_stream ? wick_tracks_thread_device_track
                                    : wick_tracks_thread_implied_device_track) (
    im->tracks, ref->thread, intern (im, device_text, strlen (device_text)),
    intern (im, stream_text + 7, strlen (stream_text + 7)),
    intern (im, im->scratch->str, im->scratch->len));
  im->imported['d']++;
  if (ref->device_track != track + 1)
    {
      wick_tracks_set_thread_device_track (im->tracks, ref->thread, track);
      ref->device_track = track + 1;
    }
  wick_tracks_device_add_linked (im->tracks, track, ts, dur, intern (im, e->name, e->name_len),
                                 intern (im, e->cat, e->cat_len), args_of (im, e, FALSE),
                                 correlation, external);
}

static void
add_memory (Import *im, const WickChromeEvent *e, gint64 ts)
{
  static const char *const keys[]
    = { "Addr", "Bytes", "Total Allocated", "Total Reserved", "Device Type", "Device Id" };
  MemoryEvent m = { 0 };
  ThreadRef *ref = thread_of (im, e);
  gint64 values[6];
  gboolean has[6];

  m.ts_ns = ts;
  args_ints (im, e, keys, 6, values, has);
  m.addr = values[0];
  m.has_addr = has[0];
  m.bytes = values[1];
  m.allocated = values[2];
  m.has_allocated = has[2];
  m.reserved = values[3];
  m.has_reserved = has[3];
  m.device_type = values[4];
  m.device_id = values[5];
  m.process = ref->process;
  if (m.has_allocated || m.has_reserved)
    note_time (im, ts, ts); /* the totals go to the tracks as counter samples */
  g_array_append_val (im->memory, m);
}

/* A C event's member value as a number: a JSON number, or a string holding
 * one (Bazel writes "cpu":"1.59", a counter to chrome://tracing and Perfetto).
 * FALSE with *ok FALSE for another value; FALSE alone on a JSON error. */
static gboolean
counter_value (WickJsonScanner *s, double *value, gboolean *ok)
{
  WickJsonType type;
  WickJsonNumber num;
  const char *text;
  gsize text_len;

  *ok = FALSE;
  if (!wick_json_peek_type (s, &type))
    return FALSE;
  if (type == WICK_JSON_NUMBER)
    {
      if (!wick_json_read_number (s, &num))
        return FALSE;
      *value = num.f64;
      *ok = TRUE;
      return TRUE;
    }
  if (type == WICK_JSON_STRING)
    {
      if (!wick_json_read_string (s, &text, &text_len))
        return FALSE;
      *ok = wick_chrome_numeric_string (text, text_len, value);
      return TRUE;
    }
  return wick_json_skip_value (s);
}

/* A C event's series carries no unit in the format: a series whose name says
 * it is memory (PyTorch's "Total Allocated" / "Total Reserved", a "memory …"
 * or "… bytes" series) holds bytes, any other a plain number. */
static WickCounterUnit
counter_unit (const char *series)
{
  if (g_str_has_prefix (series, "memory ") || g_str_has_prefix (series, "device memory ")
      || strstr (series, "Allocated") || strstr (series, "Reserved") || strstr (series, "bytes"))
    return WICK_COUNTER_UNIT_BYTES;
  return WICK_COUNTER_UNIT_COUNT;
}

/* C: one sample per numeric member of args, a counter track per (process,
 * name [id], key) named "name key" as Perfetto does. */
static void
add_counter (Import *im, const WickChromeEvent *e, gint64 ts)
{
  g_autoptr (GString) error = g_string_new (NULL);
  g_autofree char *scratch = NULL;
  WickJsonScanner s;
  gboolean first = TRUE;
  const char *key;
  gsize key_len;
  guint32 process;

  if (e->args == NULL)
    {
      skip (im, "C without args", 1);
      return;
    }
  process = thread_of (im, e)->process;
  scratch = g_malloc (e->args_len + 1);
  wick_json_scanner_init (&s, e->args, e->args + e->args_len, error, scratch);
  if (!wick_json_object_begin (&s))
    return;
  while (wick_json_object_next (&s, &first, &key, &key_len))
    {
      double value = 0;
      gboolean ok;
      guint32 track;
      if (!counter_value (&s, &value, &ok))
        return;
      if (!ok)
        {
          skip (im, "C value that is not a number", 1);
          continue;
        }
      g_string_truncate (im->scratch, 0);
      g_string_append_len (im->scratch, e->name ? e->name : "", (gssize)e->name_len);
      if (e->id != NULL)
        {
          g_string_append_c (im->scratch, ' ');
          g_string_append_len (im->scratch, e->id, (gssize)e->id_len);
        }
      g_string_append_c (im->scratch, ' ');
      g_string_append_len (im->scratch, key, (gssize)key_len);
      track = wick_tracks_counter_track (im->tracks, (gint32)process,
                                         intern (im, im->scratch->str, im->scratch->len));
      if (wick_tracks_get_tracks (im->tracks, NULL)[track].n_events == 0)
        wick_tracks_counter_set_unit (im->tracks, track, counter_unit (im->scratch->str));
      wick_tracks_counter_add (im->tracks, track, ts, value);
      note_time (im, ts, ts);
    }
}

static void
metadata_event (Import *im, const WickChromeEvent *e)
{
  g_autoptr (GString) value = g_string_new (NULL);
  ThreadRef *ref = thread_of (im, e);
  double number;

  if (str_is (e->name, e->name_len, "thread_name")
      && wick_chrome_args_string (e->args, e->args_len, "name", value))
    wick_tracks_set_thread_name (im->tracks, ref->thread, intern (im, value->str, value->len));
  else if (str_is (e->name, e->name_len, "process_name")
           && wick_chrome_args_string (e->args, e->args_len, "name", value))
    wick_tracks_set_process_name (im->tracks, ref->process, intern (im, value->str, value->len));
  else if (str_is (e->name, e->name_len, "process_labels")
           && wick_chrome_args_string (e->args, e->args_len, "labels", value))
    wick_tracks_add_process_label (im->tracks, ref->process, intern (im, value->str, value->len));
  else if (str_is (e->name, e->name_len, "thread_sort_index")
           && wick_chrome_args_number (e->args, e->args_len, "sort_index", &number))
    wick_tracks_set_thread_sort_index (im->tracks, ref->thread,
                                       (gint32)CLAMP (number, G_MININT32, G_MAXINT32));
  else if (str_is (e->name, e->name_len, "process_sort_index")
           && wick_chrome_args_number (e->args, e->args_len, "sort_index", &number))
    wick_tracks_set_process_sort_index (im->tracks, ref->process,
                                        (gint32)CLAMP (number, G_MININT32, G_MAXINT32));
  else
    {
      g_autofree char *what = g_strdup_printf ("M %.*s", (int)MIN (e->name_len, 64),
                                               e->name ? e->name : "");
      skip (im, what, 1);
      return;
    }
  im->imported['M']++;
}

static WickInstantScope
instant_scope (const WickChromeEvent *e)
{
  if (e->s_len == 1 && e->s[0] == 'g')
    return WICK_INSTANT_SCOPE_GLOBAL;
  if (e->s_len == 1 && e->s[0] == 'p')
    return WICK_INSTANT_SCOPE_PROCESS;
  return WICK_INSTANT_SCOPE_THREAD;
}

/* The process of an async id: -1 for id2.global ids. */
static gint32
async_process (Import *im, const WickChromeEvent *e)
{
  if (e->id != NULL && e->id_len > 7 && memcmp (e->id, "global:", 7) == 0)
    return -1;
  return (gint32)thread_of (im, e)->process;
}

static void
read_event (Import *im, const WickChromeEvent *e)
{
  char ph;
  gint64 ts;

  if (e->ph == NULL || e->ph_len != 1)
    {
      if (e->ph == NULL)
        skip (im, "event without ph", 1);
      else
        {
          g_autofree char *what
            = g_strdup_printf ("ph=%.*s", (int)MIN (e->ph_len, 16), e->ph);
          skip (im, what, 1);
        }
      return;
    }
  ph = e->ph[0];
  if (ph == 'M')
    {
      metadata_event (im, e);
      return;
    }
  if (!e->has_ts)
    {
      g_autofree char *what = g_strdup_printf ("%c without ts", ph);
      skip (im, what, 1);
      return;
    }
  /* times are kept within ±2^61 ns (±73 years) so that start + duration and
   * differences of two times never overflow */
  ts = CLAMP (e->ts_ns, -TIME_LIMIT, TIME_LIMIT);
  switch (ph)
    {
      case 'X':
        {
          gint64 dur;
          if (e->has_dur && e->dur_ns < 0)
            {
              /* a slice cannot end before it begins: not made a 0 ns one */
              skip (im, "X with a negative dur", 1);
              return;
            }
          dur = e->has_dur ? MIN (e->dur_ns, TIME_LIMIT) : 0;
          /* the end stays within TIME_LIMIT too (ts + dur could reach 2^63) */
          dur = MIN (dur, TIME_LIMIT - MAX (ts, 0));
          note_time (im, ts, ts + dur);
          if (is_device_category (e))
            add_device (im, e, ts, dur);
          else
            {
              ThreadRef *ref = thread_of (im, e);
              WickPendingSlice slice = wick_tracks_slice_complete (
                im->tracks, ref->thread, ts, dur, intern (im, e->name, e->name_len),
                intern (im, e->cat, e->cat_len), args_of (im, e, TRUE));
              if (is_runtime_category (e))
                {
                  static const char *const keys[] = { "correlation", "External id" };
                  gint64 ids[2];
                  gboolean has[2];
                  args_ints (im, e, keys, 2, ids, has);
                  if (has[0] && ids[0] != 0)
                    wick_tracks_slice_set_correlation (im->tracks, slice, ids[0]);
                  if (has[1] && ids[1] != 0)
                    wick_tracks_slice_set_external_id (im->tracks, slice, ids[1]);
                }
              else if (e->cat_len == 6 && memcmp (e->cat, "cpu_op", 6) == 0)
                {
                  /* an operator's External id: the launch of kernels no
                   * runtime call of the trace launched */
                  static const char *const key[] = { "External id" };
                  gint64 id;
                  gboolean has;
                  args_ints (im, e, key, 1, &id, &has);
                  if (has && id != 0)
                    wick_tracks_slice_set_operator_external_id (im->tracks, slice, id);
                }
              if (e->bind_id != NULL || e->flow_in || e->flow_out)
                {
                  /* flow v2; bind_id defaults to the event's id */
                  const char *id = e->bind_id ? e->bind_id : e->id;
                  gsize id_len = e->bind_id ? e->bind_id_len : e->id_len;
                  if (id != NULL)
                    wick_tracks_flow_bind (im->tracks, slice, intern (im, id, id_len), e->flow_in,
                                           e->flow_out);
                  else
                    skip (im, "flow v2 without bind_id or id", 1);
                }
            }
          break;
        }
      case 'B':
        note_time (im, ts, ts);
        wick_tracks_slice_begin (im->tracks, thread_of (im, e)->thread, ts,
                                 intern (im, e->name, e->name_len), intern (im, e->cat, e->cat_len),
                                 args_of (im, e, TRUE));
        break;
      case 'E':
        note_time (im, ts, ts);
        wick_tracks_slice_end (im->tracks, thread_of (im, e)->thread, ts, args_of (im, e, TRUE));
        break;
      case 'i':
      case 'I':
      case 'R':
        note_time (im, ts, ts);
        if (ph != 'R' && str_is (e->name, e->name_len, "[memory]"))
          {
            add_memory (im, e, ts);
            im->imported['m']++; /* counted apart as "[memory]" */
            return;
          }
        {
          ThreadRef *ref = thread_of (im, e);
          wick_tracks_instant_add (im->tracks, ph == 'R' ? WICK_INSTANT_SCOPE_THREAD : instant_scope (e),
                                   (gint32)ref->process, (gint32)ref->thread, ts,
                                   intern (im, e->name, e->name_len),
                                   intern (im, e->cat, e->cat_len), args_of (im, e, FALSE));
        }
        break;
      case 'C':
        add_counter (im, e, ts);
        break;
      case 'b':
      case 'S':
      case 'e':
      case 'F':
      case 'n':
      case 'T':
      case 'p':
        {
          gint32 process = async_process (im, e);
          WickStr cat = intern (im, e->cat ? e->cat : "", e->cat_len);
          WickStr id = intern (im, e->id ? e->id : "", e->id_len);
          WickStr scope = e->scope ? intern (im, e->scope, e->scope_len) : 0;
          note_time (im, ts, ts);
          if (e->id == NULL)
            skip (im, "async event without id", 1);
          if (ph == 'b' || ph == 'S')
            wick_tracks_async_begin (im->tracks, process, cat, id, scope, ts,
                                     intern (im, e->name, e->name_len), args_of (im, e, FALSE));
          else if (ph == 'e' || ph == 'F')
            wick_tracks_async_end (im->tracks, process, cat, id, scope, ts, args_of (im, e, FALSE));
          else
            wick_tracks_async_instant (im->tracks, process, cat, id, scope, ts,
                                       intern (im, e->name, e->name_len), args_of (im, e, FALSE));
          break;
        }
      case 's':
      case 't':
      case 'f':
        if (e->id == NULL)
          {
            skip (im, "flow without id", 1);
            return;
          }
        note_time (im, ts, ts);
        wick_tracks_flow_add (im->tracks,
                              ph == 's'   ? WICK_FLOW_START
                              : ph == 't' ? WICK_FLOW_STEP
                                          : WICK_FLOW_END,
                              thread_of (im, e)->thread, ts, intern (im, e->cat ? e->cat : "", e->cat_len),
                              intern (im, e->name ? e->name : "", e->name_len),
                              intern (im, e->id, e->id_len), str_is (e->bp, e->bp_len, "e"));
        break;
      case 'O':
      case 'N':
      case 'D':
        /* object snapshots and lifetimes: instants of the process's objects
         * track (Perfetto does not import them; `tracks` counts them apart) */
        note_time (im, ts, ts);
        if (e->id == NULL)
          skip (im, "object event without id", 1);
        wick_tracks_object_add (im->tracks, async_process (im, e), ph, ts,
                                intern (im, e->name, e->name_len), intern (im, e->cat, e->cat_len),
                                intern (im, e->id ? e->id : "", e->id_len), args_of (im, e, FALSE));
        break;
      case 'P':
        note_time (im, ts, ts);
        wick_tracks_sample_add (im->tracks, thread_of (im, e)->thread, ts,
                                intern (im, e->name, e->name_len), intern (im, e->cat, e->cat_len),
                                args_of (im, e, FALSE));
        break;
      default:
        {
          g_autofree char *what = g_strdup_printf ("ph=%c", ph);
          skip (im, what, 1);
          return;
        }
    }
  im->imported[(guchar)ph & 127]++;
}

/* ---- writing records -------------------------------------------------- */

/* The candle-graph records are committed as values through the model's one
 * door (wick-record.h), never written as text to be parsed again. */
static void
commit (WickDocument *doc, WickRecordBuilder *b, gboolean *ok)
{
  if (*ok && !wick_document_commit_built (doc, b, NULL))
    *ok = FALSE;
}

static void
emit_meta (WickDocument *doc, WickRecordBuilder *b, const char *name, gboolean has_memory,
           gboolean has_device, gboolean *ok)
{
  /* the name is a file's: shown, so valid UTF-8 (feeding text checked it) */
  g_autofree char *valid = g_utf8_make_valid (name, -1);
  g_autofree char *run = g_strconcat ("chrome:", valid, NULL);
  const char *memory = has_memory ? "partial" : "none";
  guint32 cc, tags;

  wick_record_builder_begin (b, WICK_KIND_META, 0);
  wick_record_builder_str (b, META_SCHEMA, "candle-graph/trace/10", -1);
  wick_record_builder_str (b, META_RUN_ID, run, -1);
  wick_record_builder_str (b, META_CORRELATION_ID, run, -1);
  wick_record_builder_str (b, META_ENTRYPOINT, valid, -1);
  wick_record_builder_enum_name (b, META_PHASE, "infer");
  /* a fixed stamp: importing the same file twice gives the same document */
  wick_record_builder_str (b, META_TIMESTAMP, "1970-01-01T00:00:00Z", -1);
  wick_record_builder_u64 (b, META_CAPTURE_STEP, 1);
  wick_record_builder_u64 (b, META_WARMUP_STEPS, 0);
  wick_record_builder_str (b, META_DEVICE, has_device ? "cuda:0" : "cpu", -1);
  wick_record_builder_bool (b, META_MEASURED_REGION_DEVICE_SYNCHRONIZED, FALSE);
  wick_record_builder_enum_name (b, META_TIMING_MODE, "host");
  cc = wick_record_builder_object (b, META_CAPTURE_CONTRACT);
  wick_record_builder_enum_name (b, cc + CC_MEASUREMENT_SCOPE, "unknown");
  wick_record_builder_enum_name (b, cc + CC_OPERATIONS, "none");
  wick_record_builder_enum_name (b, cc + CC_TENSORS, "none");
  wick_record_builder_enum_name (b, cc + CC_GRADIENTS, "none");
  wick_record_builder_enum_name (b, cc + CC_LOGICAL_MEMORY, memory);
  wick_record_builder_enum_name (b, cc + CC_PHYSICAL_MEMORY, memory);
  wick_record_builder_enum_name (b, cc + CC_DEVICE_TIMING, "none");
  wick_record_builder_list (b, cc + CC_REQUIRED_LABELS, 0);
  tags = wick_record_builder_list (b, META_TAGS, 1);
  wick_record_builder_str (b, tags, "source", -1);
  wick_record_builder_str (b, tags + 1, "chrome-trace-event", -1);
  commit (doc, b, ok);
}

/* The root span over everything, named after the file: made here, not read. */
static void
emit_root (WickDocument *doc, WickRecordBuilder *b, const char *name, gboolean *ok)
{
  g_autofree char *valid = g_utf8_make_valid (name, -1);
  gint32 root;

  wick_record_builder_begin (b, WICK_KIND_SPAN_START, 0);
  wick_record_builder_str (b, SS_ID, WICK_CHROME_ROOT_SPAN_ID, -1);
  wick_record_builder_str (b, SS_NAME, valid, -1);
  wick_record_builder_u64 (b, SS_START_NS, 0);
  wick_record_builder_enum_name (b, SS_SPAN_KIND, "function");
  wick_record_builder_bool (b, SS_MEASURED, TRUE);
  commit (doc, b, ok);
  root = wick_document_find_span (doc, WICK_CHROME_ROOT_SPAN_ID);
  if (root >= 0)
    wick_document_mark_synthetic_span (doc, (guint)root);
}

/* The root's end and the terminal, at @end_ns. */
static void
emit_end (WickDocument *doc, WickRecordBuilder *b, guint64 end_ns, gboolean *ok)
{
  wick_record_builder_begin (b, WICK_KIND_SPAN_END, 0);
  wick_record_builder_str (b, SE_ID, WICK_CHROME_ROOT_SPAN_ID, -1);
  wick_record_builder_u64 (b, SE_DURATION_NS, end_ns);
  commit (doc, b, ok);
  wick_record_builder_begin (b, WICK_KIND_TERMINAL, 0);
  wick_record_builder_enum_name (b, TERM_OUTCOME, "complete");
  wick_record_builder_u64 (b, TERM_TIMESTAMP_NS, end_ns);
  commit (doc, b, ok);
}

/* A memory record on the root span, with no shape or dtype. */
static void
emit_memory_record (WickDocument *doc, WickRecordBuilder *b, guint64 t_ns, const char *storage,
                    const char *device, guint64 bytes, gboolean is_free, const char *category,
                    gboolean *ok)
{
  wick_record_builder_begin (b, WICK_KIND_MEMORY, 0);
  wick_record_builder_u64 (b, MEM_TIMESTAMP_NS, t_ns);
  wick_record_builder_str (b, MEM_STORAGE_ID, storage, -1);
  wick_record_builder_str (b, MEM_TENSOR_ID, storage, -1);
  wick_record_builder_str (b, MEM_SPAN_ID, WICK_CHROME_ROOT_SPAN_ID, -1);
  wick_record_builder_str (b, MEM_DEVICE, device, -1);
  wick_record_builder_u64 (b, MEM_BYTES, bytes);
  wick_record_builder_enum_name (b, MEM_ACTION, is_free ? "free" : "alloc");
  wick_record_builder_list (b, MEM_SHAPE, 0);
  wick_record_builder_str (b, MEM_DTYPE, "", 0);
  wick_record_builder_enum_name (b, MEM_CATEGORY, category);
  commit (doc, b, ok);
}

static char *
memory_device (const MemoryEvent *m)
{
  if (m->device_type == 1)
    return g_strdup_printf ("cuda:%" G_GINT64_FORMAT, m->device_id);
  return g_strdup ("cpu");
}

static int
compare_memory (gconstpointer a, gconstpointer b)
{
  const MemoryEvent *x = a, *y = b;

  return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

/* [memory] with Addr: alloc/free paired by (device, Addr) in time order; a
 * free of a block allocated before the profile started is counted as
 * information. Without Addr (PyTorch <= 1.9) nothing is paired. Total
 * Allocated / Total Reserved: device_memory samples, and counter tracks when
 * there is no Addr (memory_counters). */
static void
emit_memory (Import *im, WickRecordBuilder *b, const MemoryEvent *m, guint64 t_ns, GHashTable *live,
             gboolean *ok)
{
  g_autofree char *device = memory_device (m);

  if (m->has_addr && m->bytes != 0)
    {
      g_autofree char *storage
        = g_strdup_printf ("%s/0x%" G_GINT64_MODIFIER "x", device, (guint64)m->addr);
      gboolean is_free = m->bytes < 0;
      guint64 bytes = is_free ? (guint64)(-(m->bytes + 1)) + 1 : (guint64)m->bytes;
      gboolean write = TRUE;
      if (is_free && !g_hash_table_remove (live, storage))
        {
          im->frees_before_window++;
          write = FALSE;
        }
      else if (!is_free && g_hash_table_contains (live, storage))
        {
          skip (im, "[memory] alloc of a live address", 1);
          write = FALSE;
        }
      else if (!is_free)
        g_hash_table_add (live, g_strdup (storage));
      if (write)
        emit_memory_record (im->doc, b, t_ns, storage, device, bytes, is_free, "other", ok);
    }
  if (!(m->has_allocated && m->allocated >= 0) && !(m->has_reserved && m->reserved >= 0))
    return;
  wick_record_builder_begin (b, WICK_KIND_DEVICE_MEMORY, 0);
  wick_record_builder_u64 (b, DM_TIMESTAMP_NS, t_ns);
  wick_record_builder_str (b, DM_DEVICE, device, -1);
  if (m->has_allocated && m->allocated >= 0)
    wick_record_builder_u64 (b, DM_USED_BYTES, (guint64)m->allocated);
  if (m->has_reserved && m->reserved >= 0)
    wick_record_builder_u64 (b, DM_RESERVED_BYTES, (guint64)m->reserved);
  commit (im->doc, b, ok);
}

/* Counter tracks of the [memory] totals of events without Addr (PyTorch <=
 * 1.9), before the tracks finish (raw times). Events with Addr are paired into
 * allocations instead, and their totals are the memory view's used/reserved
 * lines (device_memory), not counter tracks: Perfetto reads [memory] as
 * neither instants nor counters, and `tracks --json` agrees with it. */
static void
memory_counters (Import *im)
{
  for (guint i = 0; i < im->memory->len; i++)
    {
      const MemoryEvent *m = &g_array_index (im->memory, MemoryEvent, i);
      if (m->has_addr)
        continue;
      g_autofree char *device = memory_device (m);
      for (int which = 0; which < 2; which++)
        {
          gboolean has = which == 0 ? m->has_allocated : m->has_reserved;
          gint64 value = which == 0 ? m->allocated : m->reserved;
          g_autofree char *name = NULL;
          if (!has)
            continue;
          name = g_strdup_printf ("%s %s", device, which == 0 ? "Total Allocated" : "Total Reserved");
          guint32 track = wick_tracks_counter_track (im->tracks, (gint32)m->process,
                                                     intern (im, name, strlen (name)));
          wick_tracks_counter_set_unit (im->tracks, track, WICK_COUNTER_UNIT_BYTES);
          wick_tracks_counter_add (im->tracks, track, m->ts_ns, (double)value);
        }
    }
}

/* The candle-graph side: meta, a root span over everything, memory, terminal;
 * before the tracks finish, so that candle-graph's rules see only these
 * records. Time 0 is the earliest event given to the tracks, which is the
 * origin they will pick. */
static gboolean
emit (Import *im, GError **error)
{
  WickDocument *doc = im->doc;
  WickRecordBuilder b;
  g_autoptr (GHashTable) live = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  gint64 origin = im->has_time ? im->min_ns : 0;
  guint64 end = im->has_time ? (guint64)(im->max_ns - im->min_ns) : 0;
  gboolean has_device = im->imported['d'] > 0, ok = TRUE;
  if (im->memory->len > 1)
    qsort (im->memory->data, im->memory->len, sizeof (MemoryEvent), compare_memory);
  for (guint i = 0; i < im->memory->len; i++)
    {
      gint64 t = g_array_index (im->memory, MemoryEvent, i).ts_ns - origin;
      end = MAX (end, (guint64)MAX (t, 0));
    }
  wick_record_builder_init (&b);
  emit_meta (doc, &b, im->name, im->memory->len > 0, has_device, &ok);
  /* the root (thread key 0, which the builder never maps) is no slice of any track */
  emit_root (doc, &b, im->name, &ok);
  for (guint i = 0; i < im->memory->len; i++)
    {
      const MemoryEvent *m = &g_array_index (im->memory, MemoryEvent, i);
      emit_memory (im, &b, m, (guint64)MAX (0, m->ts_ns - origin), live, &ok);
    }
  emit_end (doc, &b, end, &ok);
  wick_record_builder_clear (&b);
  if (!ok)
    {
      const WickParseError *pe = wick_document_get_parse_error (doc);
      g_set_error (error, WICK_DOCUMENT_ERROR, (int)pe->code, "cannot convert the trace: %s: %s",
                   pe->message, pe->cause ? pe->cause : "");
      return FALSE;
    }
  return wick_document_finish_quietly (doc, error);
}

/* ---- health and the information kept --------------------------------- */

static void
add_health (WickDocument *doc, const char *code, WickSeverity severity, char *message)
{
  WickHealthIssue issue = { 0 };

  if (doc->health == NULL)
    return;
  issue.code = code;
  issue.severity = severity;
  issue.message = message;
  issue.record_type = WICK_RECORD_NONE;
  issue.record_index = -1;
  g_array_append_val (doc->health, issue);
}

/* A count for g_dngettext (), which takes an unsigned long: one beyond its
 * range is still plural. */
static gulong
plural_n (guint64 n)
{
  return n > G_MAXULONG ? G_MAXULONG : (gulong)n;
}

static const char *const phase_names[128] = {
  ['X'] = "X", ['B'] = "B", ['i'] = "i", ['I'] = "I", ['R'] = "R", ['C'] = "C",
  ['b'] = "b", ['e'] = "e", ['n'] = "n", ['S'] = "S", ['T'] = "T", ['p'] = "p",
  ['F'] = "F", ['s'] = "s", ['t'] = "t", ['f'] = "f", ['M'] = "M", ['E'] = "E",
  ['O'] = "O", ['N'] = "N", ['D'] = "D", ['P'] = "P", ['m'] = "[memory]",
};

static void
keep_info (Import *im, WickChromeReader *reader, GError *syntax_error)
{
  WickChromeInfo *info = chrome_info_new (im->doc, "chrome");
  const GPtrArray *meta = reader ? wick_chrome_reader_get_metadata (reader) : NULL;
  const GPtrArray *warnings = reader ? wick_chrome_reader_get_warnings (reader) : NULL;
  g_autoptr (GString) imported = g_string_new (NULL);
  guint64 total = 0;
  guint n_skipped = wick_tracks_get_n_skipped (im->tracks);

  for (int ph = 0; ph < 128; ph++)
    if (im->imported[ph] > 0 && phase_names[ph] != NULL)
      {
        info_count (info->imported, phase_names[ph], im->imported[ph]);
        g_string_append_printf (imported, "%s%" G_GUINT64_FORMAT " %s", imported->len ? ", " : "",
                                im->imported[ph], phase_names[ph]);
        total += im->imported[ph];
      }
  for (guint i = 0; i < n_skipped; i++)
    {
      guint64 count;
      const char *key = wick_tracks_get_skipped (im->tracks, i, &count);
      info_count (info->skipped, key, count);
    }
  if (reader != NULL && wick_chrome_reader_get_non_objects (reader) > 0)
    info_count (info->skipped, "traceEvents element that is not an object",
                wick_chrome_reader_get_non_objects (reader));
  for (guint i = 0; meta != NULL && i + 1 < meta->len; i += 2)
    {
      g_ptr_array_add (info->metadata, g_strdup (g_ptr_array_index (meta, i)));
      g_ptr_array_add (info->metadata, g_strdup (g_ptr_array_index (meta, i + 1)));
    }
  for (guint i = 0; warnings != NULL && i < warnings->len; i++)
    g_ptr_array_add (info->warnings, g_strdup (g_ptr_array_index (warnings, i)));
  if (im->invalid_utf8 > 0)
    g_ptr_array_add (
      info->warnings,
      g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                    /* Translators: the file's name and a count of strings */
                                    "%s: %llu string (a name, category or argument) is not valid "
                                    "UTF-8: its bad bytes are shown as U+FFFD",
                                    "%s: %llu strings (names, categories or arguments) are not "
                                    "valid UTF-8: their bad bytes are shown as U+FFFD",
                                    im->invalid_utf8 > G_MAXULONG ? G_MAXULONG
                                                                   : (gulong)im->invalid_utf8),
                       im->name, (unsigned long long)im->invalid_utf8));
  if (syntax_error != NULL)
    g_ptr_array_add (info->warnings, g_strdup (syntax_error->message));
  info->frees_before_window = im->frees_before_window;
  info->cut_off = reader != NULL && wick_chrome_reader_was_cut_off (reader);

  /* candle-graph's "<plane>_absent" notes speak of its own records; the
   * events of a Chrome trace are on the tracks */
  for (guint i = im->doc->health ? im->doc->health->len : 0; i-- > 0;)
    {
      WickHealthIssue *issue = &g_array_index (im->doc->health, WickHealthIssue, i);
      if (g_str_has_suffix (issue->code, "_absent"))
        g_array_remove_index (im->doc->health, i); /* its clear func frees it */
    }
  /* the same in the health list: nothing read is dropped silently */
  add_health (im->doc, "chrome_imported", WICK_SEVERITY_INFO,
              g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                            /* Translators: the number of events, then the
                                             * count of each Chrome phase ("12 X, 3 i"; the
                                             * phase letters are kept) or "none". */
                                            "Chrome trace: %llu event imported (%s)",
                                            "Chrome trace: %llu events imported (%s)",
                                            plural_n (total)),
                               (unsigned long long)total,
                               /* Translators: no event was imported */
                               imported->len ? imported->str : C_ ("events imported", "none")));
  for (guint i = 0; i < n_skipped; i++)
    {
      guint64 count;
      const char *key = wick_tracks_get_skipped (im->tracks, i, &count);
      add_health (im->doc, "chrome_skipped", WICK_SEVERITY_WARNING,
                  g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                                /* Translators: a count, then the kind of event
                                                 * as the importer names it (ph=Q, M
                                                 * process_labels, ...), kept as it is. */
                                                "%llu event read and not modelled: %s",
                                                "%llu events read and not modelled: %s",
                                                plural_n (count)),
                                   (unsigned long long)count, key));
    }
  if (reader != NULL && wick_chrome_reader_get_non_objects (reader) > 0)
    {
      guint64 count = wick_chrome_reader_get_non_objects (reader);
      add_health (im->doc, "chrome_skipped", WICK_SEVERITY_WARNING,
                  g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                                /* Translators: traceEvents is the name of the
                                                 * trace's array of events, kept as it is. */
                                                "%llu traceEvents element that is not an object "
                                                "was read and not modelled",
                                                "%llu traceEvents elements that are not objects "
                                                "were read and not modelled",
                                                plural_n (count)),
                                   (unsigned long long)count));
    }
  for (guint i = 0; i < info->warnings->len; i++)
    add_health (im->doc, "chrome_damaged", WICK_SEVERITY_WARNING,
                g_strdup (g_ptr_array_index (info->warnings, i)));
  if (im->frees_before_window > 0)
    add_health (im->doc, "chrome_free_before_window", WICK_SEVERITY_INFO,
                g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                              /* Translators: [memory] is the name of PyTorch's
                                               * memory events, kept as it is. */
                                              "%llu [memory] free of a block allocated before "
                                              "the profile started (not paired, not counted as "
                                              "live memory)",
                                              "%llu [memory] frees of blocks allocated before "
                                              "the profile started (not paired, not counted as "
                                              "live memory)",
                                              plural_n (im->frees_before_window)),
                                 (unsigned long long)im->frees_before_window));
}

static void
import_init (Import *im, WickDocument *doc, const char *name)
{
  memset (im, 0, sizeof *im);
  im->doc = doc;
  im->name = name;
  im->tracks = wick_document_begin_tracks (doc, WICK_TRACE_FORMAT_CHROME);
  im->threads = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  im->processes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  im->ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  im->memory = g_array_new (FALSE, FALSE, sizeof (MemoryEvent));
  im->scratch = g_string_new (NULL);
  im->args_error = g_string_new (NULL);
  im->host_args_budget = HOST_ARGS_BUDGET;
}

static void
import_clear (Import *im)
{
  g_hash_table_unref (im->threads);
  g_hash_table_unref (im->processes);
  g_hash_table_unref (im->ids);
  g_array_unref (im->memory);
  g_string_free (im->scratch, TRUE);
  g_string_free (im->args_error, TRUE);
}

/* The document holds what was read; its parse error says what the reader
 * said of @syntax, its error: the place and the reason, from their values. */
static void
set_chrome_parse_error (WickDocument *doc, WickChromeReader *reader, const char *name,
                        const GError *syntax)
{
  guint64 line, column;
  const char *cause = wick_chrome_reader_get_failure (reader, &line, &column);
  g_autofree char *message = NULL;
  WickDocumentError code = syntax->domain == WICK_DOCUMENT_ERROR ? (WickDocumentError)syntax->code
                                                                 : WICK_DOCUMENT_ERROR_INVALID;

  if (line > 0)
    message = g_strdup_printf (
      "parse Chrome trace JSON %s:%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT, name, line, column);
  else
    message = g_strdup_printf ("parse Chrome trace JSON %s", name);
  wick_document_fail (doc, code, line, -1, message, cause != NULL ? cause : syntax->message, NULL);
}

/* ---- torch memory timeline --------------------------------------------- */

/* torch.profiler's export_memory_timeline JSON: [times µs, sizes], a row per
 * time of live bytes per category, in torch's order (index 0 unused):
 * PARAMETER, OPTIMIZER_STATE, INPUT, TEMPORARY, ACTIVATION, GRADIENT,
 * AUTOGRAD_DETAIL, unknown. Each category's level becomes one block that is
 * freed and allocated again at each change. */
static const char *
timeline_category (guint column, guint n_columns)
{
  static const char *const torch_order[]
    = { NULL, "parameter", "optimizer", "other", "other", "activation", "gradient", "other",
        "other" };

  if (n_columns == G_N_ELEMENTS (torch_order) && column < n_columns)
    return torch_order[column];
  return "other";
}

static gboolean
import_memory_timeline (WickDocument *doc, WickChromeReader *reader, const char *name,
                        GError **error)
{
  g_autoptr (GArray) times = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GArray) sizes = g_array_new (FALSE, FALSE, sizeof (gint64));
  WickRecordBuilder b;
  g_autofree gint64 *level = NULL;
  g_autofree guint64 *block = NULL;
  WickChromeInfo *info;
  guint n_cat = 0;
  gint64 t0 = G_MAXINT64, t_end = 0;
  gboolean ok = TRUE;
  guint64 changes = 0;

  if (!wick_chrome_reader_memory_timeline (reader, times, sizes, &n_cat, error))
    return FALSE;
  for (guint i = 0; i < times->len; i++)
    t0 = MIN (t0, g_array_index (times, gint64, i));
  if (times->len == 0)
    t0 = 0;
  level = g_new0 (gint64, MAX (1, n_cat));
  block = g_new0 (guint64, MAX (1, n_cat));
  wick_record_builder_init (&b);
  emit_meta (doc, &b, name, TRUE, FALSE, &ok);
  emit_root (doc, &b, name, &ok);
  for (guint i = 0; i < times->len; i++)
    {
      gint64 t = g_array_index (times, gint64, i);
      guint64 ns = t > t0 ? (guint64)(t - t0) * 1000 : 0;
      t_end = MAX (t_end, (gint64)ns);
      for (guint c = 0; c < n_cat; c++)
        {
          gint64 v = MAX (0, g_array_index (sizes, gint64, (gsize)i * n_cat + c));
          const char *category = timeline_category (c, n_cat);
          if (v == level[c] || category == NULL)
            continue;
          changes++;
          for (int pass = 0; pass < 2; pass++)
            {
              gint64 bytes = pass == 0 ? level[c] : v;
              if (bytes <= 0)
                continue;
              if (pass == 1)
                block[c]++;
              g_autofree char *storage
                = g_strdup_printf ("%s/%u/%" G_GUINT64_FORMAT, category, c, block[c]);
              emit_memory_record (doc, &b, ns, storage, "cuda:0", (guint64)bytes, pass == 0,
                                  category, &ok);
            }
          level[c] = v;
        }
    }
  emit_end (doc, &b, (guint64)t_end, &ok);
  wick_record_builder_clear (&b);
  if (!ok || !wick_document_finish_quietly (doc, error))
    {
      if (error != NULL && *error == NULL)
        g_set_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID,
                     "%s: cannot convert the timeline", name);
      return FALSE;
    }
  info = chrome_info_new (doc, "torch-memory-timeline");
  info_count (info->imported, "times", times->len);
  info_count (info->imported, "category changes", changes);
  g_autofree char *n_times = g_strdup_printf (
    g_dngettext (GETTEXT_PACKAGE, "%u time", "%u times", times->len), times->len);
  g_autofree char *n_categories = g_strdup_printf (
    g_dngettext (GETTEXT_PACKAGE, "%u category", "%u categories", n_cat), n_cat);
  g_autofree char *n_changes
    = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%llu change", "%llu changes",
                                    plural_n (changes)),
                       (unsigned long long)changes);
  add_health (doc, "chrome_imported", WICK_SEVERITY_INFO,
              /* Translators: the numbers of times, categories and changes ("3 times, 8
               * categories, 12 changes") of a torch.profiler memory timeline. */
              g_strdup_printf (_ ("torch memory timeline: %s, %s, %s"), n_times, n_categories,
                               n_changes));
  return TRUE;
}

/* ---- the pipeline ----------------------------------------------------- */

/* Reading (inflate, scan, decode) and committing (interning, the track
 * builder) run on two cores for inputs of more than PIPELINE_MIN bytes: a
 * reader thread fills batches of events, their strings copied into the
 * batch's arena, and the calling thread commits them in order, as
 * wick-document-loader.c does for JSONL. At most IN_FLIGHT batches exist, so
 * memory stays a few batches beyond the model. Smaller inputs (the corpus)
 * fill and commit the same batches on one thread. Either way the
 * document is the same (tests/model/test-model-chrome-stream.c compares them;
 * the Chrome fuzz target reads both ways). */
#define BATCH_EVENTS 8192
#define BATCH_ARENA (2 << 20)
#define IN_FLIGHT 3
#define PIPELINE_MIN (8 << 20)

typedef struct
{
  WickChromeEvent *events;
  guint n_events;
  char *arena;
  gsize arena_len, arena_cap;
  gboolean end;  /* no batch follows */
  GError *error; /* the reader's error after these events (end only) */
} EventBatch;

typedef struct
{
  WickChromeReader *reader;
  GAsyncQueue *batches;    /* reader -> committer */
  GAsyncQueue *tokens;     /* committer -> reader: permission to fill a batch */
  WickChromeEvent pending; /* read but not yet in a batch (it did not fit) */
  gboolean has_pending;
} Pipeline;

static void
event_batch_free (EventBatch *batch)
{
  g_free (batch->events);
  g_free (batch->arena);
  g_clear_error (&batch->error);
  g_free (batch);
}

static gboolean
batch_add (EventBatch *batch, const WickChromeEvent *e)
{
  gsize need = wick_chrome_event_copy_size (e);

  if (batch->arena_len + need > batch->arena_cap)
    {
      if (batch->n_events > 0)
        return FALSE;
      /* one event larger than the arena: a batch of its own */
      batch->arena_cap = need;
      g_free (batch->arena);
      batch->arena = g_malloc (MAX (need, 1));
    }
  batch->arena_len += wick_chrome_event_copy (e, &batch->events[batch->n_events++],
                                              batch->arena + batch->arena_len);
  return TRUE;
}

/* Reads events into a new batch until it is full or the events end. */
static EventBatch *
fill_batch (Pipeline *p)
{
  EventBatch *batch = g_new0 (EventBatch, 1);

  batch->events = g_new (WickChromeEvent, BATCH_EVENTS);
  batch->arena_cap = BATCH_ARENA;
  batch->arena = g_malloc (batch->arena_cap);
  if (p->has_pending)
    {
      batch_add (batch, &p->pending);
      p->has_pending = FALSE;
    }
  while (batch->n_events < BATCH_EVENTS)
    {
      if (!wick_chrome_reader_next (p->reader, &p->pending, &batch->error))
        {
          batch->end = TRUE;
          break;
        }
      if (!batch_add (batch, &p->pending))
        {
          /* kept for the next batch: its strings stay valid until the next read */
          p->has_pending = TRUE;
          break;
        }
    }
  return batch;
}

static gpointer
pipeline_thread (gpointer data)
{
  Pipeline *p = data;
  gboolean end = FALSE;

  while (!end)
    {
      EventBatch *batch;
      g_async_queue_pop (p->tokens);
      batch = fill_batch (p);
      end = batch->end;
      g_async_queue_push (p->batches, batch);
    }
  return NULL;
}

/* Every event of @reader through read_event(); the reader's error, if any,
 * in @syntax. */
static void
read_all_events (Import *im, WickChromeReader *reader, gboolean threaded, GError **syntax)
{
  Pipeline p = { reader, NULL, NULL, { 0 }, FALSE };
  GThread *thread = NULL;
  gboolean end = FALSE;

  if (threaded)
    {
      p.batches = g_async_queue_new ();
      p.tokens = g_async_queue_new ();
      for (int i = 0; i < IN_FLIGHT; i++)
        g_async_queue_push (p.tokens, GINT_TO_POINTER (1));
      thread = g_thread_new ("wick-chrome-read", pipeline_thread, &p);
    }
  while (!end)
    {
      EventBatch *batch = threaded ? g_async_queue_pop (p.batches) : fill_batch (&p);
      for (guint i = 0; i < batch->n_events; i++)
        read_event (im, &batch->events[i]);
      end = batch->end;
      if (batch->error != NULL)
        g_propagate_error (syntax, g_steal_pointer (&batch->error));
      event_batch_free (batch);
      if (threaded && !end)
        g_async_queue_push (p.tokens, GINT_TO_POINTER (1));
    }
  if (threaded)
    {
      /* the reader pushed its last batch and returned */
      g_thread_join (thread);
      g_async_queue_unref (p.batches);
      g_async_queue_unref (p.tokens);
    }
}

static int pipeline_mode = -1; /* -1: by size, 0: never, 1: always */

void
wick_chrome_import_set_pipeline (int mode)
{
  pipeline_mode = mode;
}

/* ---- entry points ------------------------------------------------------ */

static gboolean
import_stream (WickDocument *document, WickInput *input, const char *name, const char *label,
               GError **error)
{
  guint64 size = wick_input_get_size (input);
  g_autoptr (WickChromeReader) reader = wick_chrome_reader_new (input, name);
  g_autoptr (GError) syntax = NULL;
  WickFileFormat format;
  Import im;
  gboolean ok;

  if (wick_input_get_compression (input) != WICK_COMPRESSION_NONE)
    size *= 8;
  if (!wick_chrome_reader_start (reader, &format, &syntax))
    {
      if (syntax->domain == WICK_DOCUMENT_ERROR)
        {
          set_chrome_parse_error (document, reader, name, syntax);
          document->finished = TRUE;
        }
      g_propagate_error (error, g_steal_pointer (&syntax));
      return FALSE;
    }
  if (format == WICK_FILE_FORMAT_JSONL)
    {
      g_set_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID,
                   "%s: not a Chrome trace: this is candle-graph JSONL (one record per line)",
                   name);
      return FALSE;
    }
  if (format == WICK_FILE_FORMAT_MEMORY_TIMELINE)
    {
      GError *local = NULL;
      if (import_memory_timeline (document, reader, label, &local))
        return TRUE;
      if (local->domain == WICK_DOCUMENT_ERROR && !document->parse_error.failed)
        {
          set_chrome_parse_error (document, reader, name, local);
          document->finished = TRUE;
        }
      g_propagate_error (error, local);
      return FALSE;
    }

  import_init (&im, document, label);
  read_all_events (&im, reader, pipeline_mode >= 0 ? pipeline_mode > 0 : size >= PIPELINE_MIN,
                   &syntax);
  if (syntax != NULL && !im.has_time
      && (syntax->domain != WICK_DOCUMENT_ERROR || syntax->code == WICK_DOCUMENT_ERROR_TOO_LARGE))
    {
      /* an I/O error, or a value past the limit, before anything was read:
       * there is nothing to show */
      g_propagate_error (error, g_steal_pointer (&syntax));
      import_clear (&im);
      return FALSE;
    }
  memory_counters (&im);
  ok = emit (&im, error);
  wick_tracks_finish (im.tracks);
  if (ok)
    keep_info (&im, reader, syntax);
  import_clear (&im);
  if (ok && syntax != NULL)
    {
      /* what was read before the error is in the document; the error stands */
      set_chrome_parse_error (document, reader, name, syntax);
      g_propagate_error (error, g_steal_pointer (&syntax));
      return FALSE;
    }
  return ok;
}

gboolean
wick_chrome_sniff (const char *data, gsize len)
{
  WickInput *input = wick_input_new_for_data (data, len, "<data>");
  g_autoptr (WickChromeReader) reader = wick_chrome_reader_new (input, "<data>");
  WickFileFormat format = WICK_FILE_FORMAT_UNKNOWN;

  if (!wick_chrome_reader_start (reader, &format, NULL))
    {
      /* an object cut off before any deciding member: judge by what was seen */
      return FALSE;
    }
  return format == WICK_FILE_FORMAT_CHROME || format == WICK_FILE_FORMAT_MEMORY_TIMELINE;
}

gboolean
wick_chrome_import_data (WickDocument *document, const char *data, gsize len, const char *name,
                         GError **error)
{
  g_return_val_if_fail (WICK_IS_DOCUMENT (document), FALSE);
  return import_stream (document, wick_input_new_for_data (data, len, name ? name : "trace"),
                        name ? name : "trace", name ? name : "trace", error);
}

gboolean
wick_chrome_import_file (WickDocument *document, const char *path, GCancellable *cancellable,
                         GError **error)
{
  g_autofree char *label = g_path_get_basename (path);
  WickInput *input = wick_input_open (path, error);

  if (input == NULL)
    return FALSE;
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    {
      wick_input_free (input);
      return FALSE;
    }
  g_free (document->path);
  document->path = g_strdup (path);
  return import_stream (document, input, path, label, error);
}

const char *
wick_chrome_info_lookup_metadata (const WickChromeInfo *info, const char *key)
{
  for (guint i = 0; info != NULL && i + 1 < info->metadata->len; i += 2)
    if (strcmp (g_ptr_array_index (info->metadata, i), key) == 0)
      return g_ptr_array_index (info->metadata, i + 1);
  return NULL;
}
