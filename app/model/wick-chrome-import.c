/* wick-chrome-import.c — Chrome trace-event JSON into a document, streamed
 * (see the header for the mapping). */
#include "config.h"

#include "wick-chrome-import.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "wick-chrome-stream.h"
#include "wick-document-private.h"
#include "wick-input.h"

typedef enum
{
  ROLE_SPAN,
  ROLE_OP,
  ROLE_DEVICE,
  ROLE_MEMORY,
} Role;

enum
{
  EV_HAS_CORRELATION = 1 << 0,
  EV_HAS_DEVICE = 1 << 1,
  EV_HAS_STREAM = 1 << 2,
  EV_OPEN = 1 << 3, /* a B never closed */
};

/* A host slice, runtime call, device interval or [memory] event. Strings are
 * offsets in the import's own pool. */
typedef struct
{
  guint8 role;
  guint8 flags;
  guint32 name, cat;
  guint32 thread; /* index into threads */
  double ts, dur; /* µs, as read */
  guint64 start_ns, dur_ns;
  gint32 span;   /* ROLE_SPAN: its own span number; others: enclosing span */
  gint32 parent; /* ROLE_SPAN: parent span number (0 = root) */
  gint64 correlation;
  gint32 device, stream; /* ROLE_DEVICE */
  guint32 memory;        /* ROLE_MEMORY: index into memory */
} ChromeEvent;

typedef struct
{
  gint64 addr, bytes, allocated, reserved, device_type, device_id;
  gboolean has_addr, has_allocated, has_reserved;
} MemoryArgs;

typedef struct
{
  guint32 pid, tid; /* pool strings */
  guint32 name;     /* thread_name, 0 when none */
  gint32 sort_index;
  gboolean has_sort_index;
} Thread;

typedef struct
{
  guint32 pid;
  guint32 name;
  GString *labels;
  gint32 sort_index;
  gboolean has_sort_index;
} Process;

/* B and E, matched after reading per thread in timestamp order. */
typedef struct
{
  double ts;
  guint32 thread;
  guint32 order; /* file order */
  guint32 event; /* B: index into events; E: G_MAXUINT32 */
} BeginEnd;

typedef struct
{
  double ts;
  guint32 thread;
  gboolean start; /* s (or t) */
  guint32 id;     /* pool */
} Flow;

/* Instants, counters, async, flows: kept for the track model. */
typedef struct
{
  double ts;
  guint32 thread;
  char ph;
  char scope; /* 't', 'p', 'g' */
  guint32 name, cat, id;
} Mark;

typedef struct
{
  double ts;
  guint32 series; /* index into series names */
  double value;
} CounterSample;

typedef struct
{
  WickDocument *doc;
  const char *name;
  WickStringPool *pool;
  GArray *events; /* ChromeEvent */
  GArray *memory; /* MemoryArgs */
  GArray *threads;
  GHashTable *thread_index; /* "pid\0tid" -> index+1 */
  GArray *processes;
  GHashTable *process_index; /* pid -> index+1 */
  GArray *begin_end;
  GArray *flows; /* ac2g-style s/f, for attaching kernels */
  GArray *marks; /* instants, async, flows, objects, samples */
  GArray *counters;
  GPtrArray *series_names;
  GHashTable *series_index; /* "pid\0name\0key" -> index+1 */
  guint64 imported[128];    /* by ph byte */
  GHashTable *skipped;      /* construct -> count */
  GPtrArray *skipped_order;
  guint64 frees_before_window;
  guint64 n_flow_points;
  guint n_spans;
  guint64 end_ns;
  double t0;
  gboolean has_t0;
  GString *scratch;
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

static guint32
intern (Import *im, const char *s, gsize len)
{
  return wick_string_pool_intern (im->pool, s ? s : "", s ? len : 0);
}

static const char *
pooled (Import *im, guint32 s)
{
  return s ? wick_string_pool_get (im->pool, s) : "";
}

static void
skip (Import *im, const char *construct, guint64 n)
{
  gpointer old;

  if (n == 0)
    return;
  if (!g_hash_table_lookup_extended (im->skipped, construct, NULL, &old))
    {
      char *key = g_strdup (construct);
      g_ptr_array_add (im->skipped_order, key);
      g_hash_table_insert (im->skipped, key, GSIZE_TO_POINTER ((gsize)n));
      return;
    }
  g_hash_table_insert (im->skipped, g_strdup (construct),
                       GSIZE_TO_POINTER (GPOINTER_TO_SIZE (old) + (gsize)n));
}

static guint32
process_of (Import *im, guint32 pid)
{
  guint32 index = GPOINTER_TO_UINT (g_hash_table_lookup (im->process_index, GUINT_TO_POINTER (pid)));
  Process p = { 0 };

  if (index > 0)
    return index - 1;
  p.pid = pid;
  g_array_append_val (im->processes, p);
  g_hash_table_insert (im->process_index, GUINT_TO_POINTER (pid),
                       GUINT_TO_POINTER (im->processes->len));
  return im->processes->len - 1;
}

static guint32
thread_of (Import *im, const WickChromeEvent *e)
{
  const char *pid = e->has_pid ? e->pid : "0";
  gsize pid_len = e->has_pid ? e->pid_len : 1;
  /* a missing tid is the pid's, as Perfetto has it */
  const char *tid = e->has_tid ? e->tid : pid;
  gsize tid_len = e->has_tid ? e->tid_len : pid_len;
  guint32 index;
  Thread t = { 0 };

  g_string_truncate (im->scratch, 0);
  g_string_append_len (im->scratch, pid, (gssize)pid_len);
  g_string_append_c (im->scratch, '\n');
  g_string_append_len (im->scratch, tid, (gssize)tid_len);
  index = GPOINTER_TO_UINT (g_hash_table_lookup (im->thread_index, im->scratch->str));
  if (index > 0)
    return index - 1;
  t.pid = intern (im, pid, pid_len);
  t.tid = intern (im, tid, tid_len);
  process_of (im, t.pid);
  g_array_append_val (im->threads, t);
  g_hash_table_insert (im->thread_index, g_strdup (im->scratch->str),
                       GUINT_TO_POINTER (im->threads->len));
  return im->threads->len - 1;
}

static gint64
args_int (const WickChromeEvent *e, const char *key, gboolean *has)
{
  double v;

  *has = wick_chrome_args_number (e->args, e->args_len, key, &v) && fabs (v) < 9e18;
  return *has ? (gint64)v : 0;
}

static gboolean
str_is (const char *s, gsize len, const char *lit)
{
  gsize n = strlen (lit);

  return s != NULL && len == n && memcmp (s, lit, n) == 0;
}

static Role
role_for (const WickChromeEvent *e)
{
  const char *c = e->cat;
  gsize n = e->cat_len;

  if (str_is (c, n, "cuda_runtime") || str_is (c, n, "cuda_driver") || str_is (c, n, "Runtime")
      || str_is (c, n, "hip_runtime") || str_is (c, n, "mtia_runtime")
      || str_is (c, n, "privateuse1_runtime"))
    return ROLE_OP;
  if (str_is (c, n, "kernel") || str_is (c, n, "gpu_memcpy") || str_is (c, n, "gpu_memset")
      || str_is (c, n, "gpu_user_annotation") || str_is (c, n, "Kernel")
      || str_is (c, n, "Memcpy") || str_is (c, n, "Memset") || str_is (c, n, "mtia_ccp_events")
      || str_is (c, n, "gpu_op"))
    return ROLE_DEVICE;
  return ROLE_SPAN;
}

static void
note_time (Import *im, double ts)
{
  if (!im->has_t0 || ts < im->t0)
    im->t0 = ts;
  im->has_t0 = TRUE;
}

static guint32
add_event (Import *im, Role role, const WickChromeEvent *e, double dur)
{
  ChromeEvent ev = { 0 };
  gboolean has;

  ev.role = (guint8)role;
  ev.name = intern (im, e->name, e->name_len);
  ev.cat = intern (im, e->cat, e->cat_len);
  ev.ts = e->ts;
  ev.dur = dur > 0 && isfinite (dur) ? dur : 0;
  ev.thread = thread_of (im, e);
  if (role == ROLE_OP || role == ROLE_DEVICE)
    {
      ev.correlation = args_int (e, "correlation", &has);
      if (has)
        ev.flags |= EV_HAS_CORRELATION;
    }
  if (role == ROLE_DEVICE)
    {
      gint64 v = args_int (e, "device", &has);
      if (has)
        ev.flags |= EV_HAS_DEVICE, ev.device = (gint32)CLAMP (v, G_MININT32, G_MAXINT32);
      v = args_int (e, "stream", &has);
      if (has)
        ev.flags |= EV_HAS_STREAM, ev.stream = (gint32)CLAMP (v, G_MININT32, G_MAXINT32);
    }
  note_time (im, e->ts);
  g_array_append_val (im->events, ev);
  return im->events->len - 1;
}

static void
add_memory (Import *im, const WickChromeEvent *e)
{
  MemoryArgs m = { 0 };
  gboolean has;
  guint32 index;

  m.addr = args_int (e, "Addr", &m.has_addr);
  m.bytes = args_int (e, "Bytes", &has);
  m.allocated = args_int (e, "Total Allocated", &m.has_allocated);
  m.reserved = args_int (e, "Total Reserved", &m.has_reserved);
  m.device_type = args_int (e, "Device Type", &has);
  m.device_id = args_int (e, "Device Id", &has);
  g_array_append_val (im->memory, m);
  index = add_event (im, ROLE_MEMORY, e, 0);
  g_array_index (im->events, ChromeEvent, index).memory = im->memory->len - 1;
}

static void
add_mark (Import *im, const WickChromeEvent *e, char scope)
{
  Mark m = { 0 };

  m.ts = e->ts;
  m.thread = thread_of (im, e);
  m.ph = e->ph[0];
  m.scope = scope;
  m.name = intern (im, e->name, e->name_len);
  m.cat = intern (im, e->cat, e->cat_len);
  m.id = e->id ? intern (im, e->id, e->id_len) : 0;
  note_time (im, e->ts);
  g_array_append_val (im->marks, m);
}

static guint32
series_of (Import *im, const WickChromeEvent *e, const char *key, gsize key_len)
{
  guint32 index;

  g_string_truncate (im->scratch, 0);
  g_string_append_len (im->scratch, e->has_pid ? e->pid : "", e->has_pid ? (gssize)e->pid_len : 0);
  g_string_append_c (im->scratch, '\n');
  g_string_append_len (im->scratch, e->name ? e->name : "", (gssize)e->name_len);
  if (e->id != NULL)
    {
      g_string_append_c (im->scratch, ' ');
      g_string_append_len (im->scratch, e->id, (gssize)e->id_len);
    }
  g_string_append_c (im->scratch, '\n');
  g_string_append_len (im->scratch, key, (gssize)key_len);
  index = GPOINTER_TO_UINT (g_hash_table_lookup (im->series_index, im->scratch->str));
  if (index > 0)
    return index - 1;
  g_ptr_array_add (im->series_names, g_strdup (im->scratch->str));
  g_hash_table_insert (im->series_index, g_strdup (im->scratch->str),
                       GUINT_TO_POINTER (im->series_names->len));
  return im->series_names->len - 1;
}

/* C: one sample per numeric member of args, one series per (pid, name, id, key). */
static void
add_counter (Import *im, const WickChromeEvent *e)
{
  g_autoptr (GString) error = g_string_new (NULL);
  g_autofree char *scratch = NULL;
  WickJsonScanner s;
  gboolean first = TRUE;
  const char *key;
  gsize key_len;
  guint64 n = 0;

  if (e->args == NULL)
    {
      skip (im, "C without args", 1);
      return;
    }
  scratch = g_malloc (e->args_len + 1);
  wick_json_scanner_init (&s, e->args, e->args + e->args_len, error, scratch);
  if (!wick_json_object_begin (&s))
    return;
  while (wick_json_object_next (&s, &first, &key, &key_len))
    {
      WickJsonType type;
      g_autofree char *k = g_strndup (key, key_len);
      if (!wick_json_peek_type (&s, &type))
        return;
      if (type == WICK_JSON_NUMBER)
        {
          WickJsonNumber num;
          CounterSample c;
          if (!wick_json_read_number (&s, &num))
            return;
          c.ts = e->ts;
          c.series = series_of (im, e, k, key_len);
          c.value = num.f64;
          g_array_append_val (im->counters, c);
          n++;
        }
      else
        {
          if (!wick_json_skip_value (&s))
            return;
          skip (im, "C value that is not a number", 1);
        }
    }
  if (n > 0)
    note_time (im, e->ts);
}

static void
metadata_event (Import *im, const WickChromeEvent *e)
{
  g_autoptr (GString) value = g_string_new (NULL);
  guint32 thread = thread_of (im, e);
  Thread *t = &g_array_index (im->threads, Thread, thread);
  Process *p = &g_array_index (im->processes, Process, process_of (im, t->pid));
  double number;

  if (str_is (e->name, e->name_len, "thread_name")
      && wick_chrome_args_string (e->args, e->args_len, "name", value))
    t->name = intern (im, value->str, value->len);
  else if (str_is (e->name, e->name_len, "process_name")
           && wick_chrome_args_string (e->args, e->args_len, "name", value))
    p->name = intern (im, value->str, value->len);
  else if (str_is (e->name, e->name_len, "process_labels")
           && wick_chrome_args_string (e->args, e->args_len, "labels", value))
    {
      if (p->labels == NULL)
        p->labels = g_string_new (NULL);
      if (p->labels->len > 0)
        g_string_append (p->labels, ", ");
      g_string_append_len (p->labels, value->str, (gssize)value->len);
    }
  else if (str_is (e->name, e->name_len, "thread_sort_index")
           && wick_chrome_args_number (e->args, e->args_len, "sort_index", &number))
    {
      t->sort_index = (gint32)CLAMP (number, G_MININT32, G_MAXINT32);
      t->has_sort_index = TRUE;
    }
  else if (str_is (e->name, e->name_len, "process_sort_index")
           && wick_chrome_args_number (e->args, e->args_len, "sort_index", &number))
    {
      p->sort_index = (gint32)CLAMP (number, G_MININT32, G_MAXINT32);
      p->has_sort_index = TRUE;
    }
  else
    {
      g_autofree char *what = g_strdup_printf ("M %.*s", (int)MIN (e->name_len, 64),
                                               e->name ? e->name : "");
      skip (im, what, 1);
      return;
    }
  im->imported['M']++;
}

static char
instant_scope (const WickChromeEvent *e)
{
  if (e->s_len == 1 && (e->s[0] == 'g' || e->s[0] == 'p'))
    return e->s[0];
  return 't';
}

static void
read_event (Import *im, const WickChromeEvent *e)
{
  char ph;

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
  switch (ph)
    {
      case 'X':
        {
          guint32 index = add_event (im, role_for (e), e, e->has_dur ? e->dur : 0);
          (void)index;
          if (e->bind_id != NULL || e->flow_in || e->flow_out)
            im->n_flow_points++;
          break;
        }
      case 'B':
        {
          BeginEnd be;
          be.ts = e->ts;
          be.event = add_event (im, role_for (e), e, 0);
          be.thread = g_array_index (im->events, ChromeEvent, be.event).thread;
          be.order = im->begin_end->len;
          g_array_append_val (im->begin_end, be);
          break;
        }
      case 'E':
        {
          BeginEnd be;
          be.ts = e->ts;
          be.event = G_MAXUINT32;
          be.thread = thread_of (im, e);
          be.order = im->begin_end->len;
          note_time (im, e->ts);
          g_array_append_val (im->begin_end, be);
          break;
        }
      case 'i':
      case 'I':
        if (str_is (e->name, e->name_len, "[memory]"))
          {
            add_memory (im, e);
            im->imported['m']++; /* counted apart as "[memory]" */
            return;
          }
        add_mark (im, e, instant_scope (e));
        break;
      case 'R':
        add_mark (im, e, 't');
        break;
      case 'C':
        add_counter (im, e);
        break;
      case 'b':
      case 'e':
      case 'n':
      case 'S':
      case 'T':
      case 'p':
      case 'F':
        add_mark (im, e, 'p');
        break;
      case 's':
      case 't':
      case 'f':
        {
          Flow flow;
          flow.ts = e->ts;
          flow.thread = thread_of (im, e);
          flow.start = ph != 'f';
          flow.id = intern (im, e->id, e->id_len);
          if (e->id == NULL)
            {
              skip (im, "flow without id", 1);
              return;
            }
          g_array_append_val (im->flows, flow);
          add_mark (im, e, 't');
          break;
        }
      case 'O':
      case 'N':
      case 'D':
        add_mark (im, e, 'p');
        break;
      case 'P':
        add_mark (im, e, 't');
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

/* ---- B/E ---------------------------------------------------------------- */

static int
compare_begin_end (gconstpointer a, gconstpointer b)
{
  const BeginEnd *x = a, *y = b;

  if (x->thread != y->thread)
    return x->thread < y->thread ? -1 : 1;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

/* Per thread in timestamp order (file order for ties), an E closes the
 * innermost open B; a B never closed runs to the end of the trace. */
static void
match_begin_end (Import *im, double t_end)
{
  BeginEnd *be = (BeginEnd *)(gpointer)im->begin_end->data;
  guint n = im->begin_end->len;
  g_autoptr (GArray) stack = g_array_new (FALSE, FALSE, sizeof (guint32));
  guint64 unmatched_e = 0, open_b = 0;

  qsort (be, n, sizeof *be, compare_begin_end);
  for (guint i = 0; i < n; i++)
    {
      if (i == 0 || be[i].thread != be[i - 1].thread)
        {
          for (guint k = 0; k < stack->len; k++)
            {
              ChromeEvent *open = &g_array_index (im->events, ChromeEvent,
                                                  g_array_index (stack, guint32, k));
              open->dur = MAX (0, t_end - open->ts);
              open->flags |= EV_OPEN;
              open_b++;
            }
          g_array_set_size (stack, 0);
        }
      if (be[i].event != G_MAXUINT32)
        g_array_append_val (stack, be[i].event);
      else if (stack->len == 0)
        unmatched_e++;
      else
        {
          ChromeEvent *begin
            = &g_array_index (im->events, ChromeEvent, g_array_index (stack, guint32, stack->len - 1));
          begin->dur = be[i].ts > begin->ts ? be[i].ts - begin->ts : 0;
          g_array_set_size (stack, stack->len - 1);
        }
    }
  for (guint k = 0; k < stack->len; k++)
    {
      ChromeEvent *open
        = &g_array_index (im->events, ChromeEvent, g_array_index (stack, guint32, k));
      open->dur = MAX (0, t_end - open->ts);
      open->flags |= EV_OPEN;
      open_b++;
    }
  skip (im, "E without B", unmatched_e);
  if (open_b > 0)
    im->imported['o'] = open_b;
}

/* ---- nesting ---------------------------------------------------------- */

static int
compare_thread_time (gconstpointer a, gconstpointer b, gpointer user_data)
{
  const ChromeEvent *events = user_data;
  const ChromeEvent *x = &events[*(const guint *)a], *y = &events[*(const guint *)b];

  if (x->thread != y->thread)
    return x->thread < y->thread ? -1 : 1;
  if (x->start_ns != y->start_ns)
    return x->start_ns < y->start_ns ? -1 : 1;
  /* at the same start, spans (outermost first) before what they contain */
  if ((x->role == ROLE_SPAN) != (y->role == ROLE_SPAN))
    return x->role == ROLE_SPAN ? -1 : 1;
  if (x->dur_ns != y->dur_ns)
    return x->dur_ns > y->dur_ns ? -1 : 1;
  return *(const guint *)a < *(const guint *)b ? -1 : 1;
}

static gboolean
contains (const ChromeEvent *outer, guint64 start, guint64 dur)
{
  return outer->start_ns <= start && start + dur <= outer->start_ns + outer->dur_ns;
}

/* Per thread, in time order: spans nest by containment (a span that overlaps
 * its would-be parent's end goes up to an ancestor that holds it); ops and
 * memory events take the innermost span that holds them. */
static void
nest (Import *im)
{
  ChromeEvent *events = (ChromeEvent *)(gpointer)im->events->data;
  guint n = im->events->len;
  g_autofree guint *order = g_new (guint, MAX (1, n));
  g_autoptr (GArray) stack = g_array_new (FALSE, FALSE, sizeof (guint));
  guint32 thread = G_MAXUINT32;

  for (guint i = 0; i < n; i++)
    order[i] = i;
  g_qsort_with_data (order, (gint)n, sizeof (guint), compare_thread_time, events);
  for (guint k = 0; k < n; k++)
    {
      ChromeEvent *e = &events[order[k]];
      gint s;
      if (e->thread != thread)
        {
          g_array_set_size (stack, 0);
          thread = e->thread;
        }
      if (e->role == ROLE_DEVICE)
        continue;
      if (e->role == ROLE_SPAN)
        {
          while (stack->len > 0
                 && !contains (&events[g_array_index (stack, guint, stack->len - 1)], e->start_ns,
                               e->dur_ns))
            g_array_set_size (stack, stack->len - 1);
          e->parent
            = stack->len > 0 ? events[g_array_index (stack, guint, stack->len - 1)].span : 0;
          e->span = (gint32)++im->n_spans;
          g_array_append_val (stack, order[k]);
          continue;
        }
      e->span = 0;
      for (s = (gint)stack->len - 1; s >= 0; s--)
        if (contains (&events[g_array_index (stack, guint, s)], e->start_ns, e->dur_ns))
          {
            e->span = events[g_array_index (stack, guint, s)].span;
            break;
          }
    }
}

static int
compare_start (gconstpointer a, gconstpointer b, gpointer events)
{
  double x = ((const ChromeEvent *)events)[*(const guint *)a].ts;
  double y = ((const ChromeEvent *)events)[*(const guint *)b].ts;

  return x < y ? -1 : x > y;
}

/* The span of the runtime call a flow starts from: the last op on the flow's
 * thread that starts at or before it and holds it; the root when none. */
static gint32
launch_span (Import *im, GArray *ops, const Flow *flow)
{
  const ChromeEvent *events = (const ChromeEvent *)(gpointer)im->events->data;
  guint lo = 0, hi;

  if (ops == NULL)
    return 0;
  hi = ops->len;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (events[g_array_index (ops, guint, mid)].ts <= flow->ts)
        lo = mid + 1;
      else
        hi = mid;
    }
  if (lo > 0)
    {
      const ChromeEvent *op = &events[g_array_index (ops, guint, lo - 1)];
      if (flow->ts <= op->ts + op->dur)
        return op->span;
    }
  return 0;
}

typedef struct
{
  guint32 thread;
  double ts;
} FlowEndKey;

static guint
flow_end_hash (gconstpointer key)
{
  const FlowEndKey *k = key;
  return g_double_hash (&k->ts) ^ (k->thread * 2654435761u);
}

static gboolean
flow_end_equal (gconstpointer a, gconstpointer b)
{
  const FlowEndKey *x = a, *y = b;
  return x->thread == y->thread && x->ts == y->ts;
}

/* Device events take the span that launched them: by args.correlation, by a
 * flow from the launch, else the root. */
static void
attach_launches (Import *im)
{
  ChromeEvent *events = (ChromeEvent *)(gpointer)im->events->data;
  g_autoptr (GHashTable) by_correlation = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr (GHashTable) flow_span = g_hash_table_new (g_direct_hash, g_direct_equal);
  g_autoptr (GHashTable) flow_end
    = g_hash_table_new_full (flow_end_hash, flow_end_equal, g_free, NULL);
  g_autoptr (GHashTable) ops_by_thread
    = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)g_array_unref);
  GHashTableIter iter;
  gpointer value;

  for (guint i = 0; i < im->events->len; i++)
    {
      GArray *ops;
      if (events[i].role != ROLE_OP)
        continue;
      if (events[i].flags & EV_HAS_CORRELATION)
        g_hash_table_insert (by_correlation, &events[i].correlation, &events[i]);
      ops = g_hash_table_lookup (ops_by_thread, GUINT_TO_POINTER (events[i].thread));
      if (ops == NULL)
        {
          ops = g_array_new (FALSE, FALSE, sizeof (guint));
          g_hash_table_insert (ops_by_thread, GUINT_TO_POINTER (events[i].thread), ops);
        }
      g_array_append_val (ops, i);
    }
  g_hash_table_iter_init (&iter, ops_by_thread);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_array_sort_with_data (value, compare_start, events);
  for (guint i = 0; i < im->flows->len; i++)
    {
      const Flow *flow = &g_array_index (im->flows, Flow, i);
      if (flow->start)
        g_hash_table_insert (
          flow_span, GUINT_TO_POINTER (flow->id),
          GINT_TO_POINTER (
            launch_span (im, g_hash_table_lookup (ops_by_thread, GUINT_TO_POINTER (flow->thread)),
                         flow)
            + 1));
      else
        {
          FlowEndKey *key = g_new (FlowEndKey, 1);
          key->thread = flow->thread;
          key->ts = flow->ts;
          g_hash_table_insert (flow_end, key, GUINT_TO_POINTER (flow->id));
        }
    }
  for (guint i = 0; i < im->events->len; i++)
    {
      ChromeEvent *e = &events[i];
      ChromeEvent *launch;
      FlowEndKey key;
      gpointer id;
      if (e->role != ROLE_DEVICE)
        continue;
      e->span = 0;
      if ((e->flags & EV_HAS_CORRELATION)
          && (launch = g_hash_table_lookup (by_correlation, &e->correlation)) != NULL)
        {
          e->span = launch->span;
          continue;
        }
      key.thread = e->thread;
      key.ts = e->ts;
      if (g_hash_table_lookup_extended (flow_end, &key, NULL, &id))
        e->span = MAX (0, GPOINTER_TO_INT (g_hash_table_lookup (flow_span, id)) - 1);
    }
}

/* ---- writing records -------------------------------------------------- */

static void
feed (WickDocument *doc, GString *line, gboolean *ok)
{
  if (*ok && !wick_document_feed_line (doc, line->str, line->len, NULL))
    *ok = FALSE;
  g_string_truncate (line, 0);
}

static void
append_kv_str (GString *out, const char *key, const char *value)
{
  g_string_append_printf (out, ",\"%s\":", key);
  wick_json_append_string (out, value, strlen (value));
}

static void
append_kv_pooled (Import *im, GString *out, const char *key, guint32 value)
{
  g_string_append_printf (out, ",\"%s\":", key);
  wick_json_append_string (out, pooled (im, value),
                           value ? wick_string_pool_get_len (im->pool, value) : 0);
}

static void
emit_meta (WickDocument *doc, GString *line, const char *name, gboolean has_memory,
           gboolean has_device, gboolean has_ops, gboolean *ok)
{
  g_autofree char *run = g_strconcat ("chrome:", name, NULL);

  g_string_append (line, "{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/10\"");
  append_kv_str (line, "run_id", run);
  append_kv_str (line, "correlation_id", run);
  append_kv_str (line, "entrypoint", name);
  g_string_append (line, ",\"phase\":\"infer\"");
  /* a fixed stamp: importing the same file twice gives the same document */
  append_kv_str (line, "timestamp", "1970-01-01T00:00:00Z");
  g_string_append_printf (line,
                          ",\"capture_step\":1,\"warmup_steps\":0,\"device\":\"%s\","
                          "\"measured_region_device_synchronized\":false,\"timing_mode\":\"host\","
                          "\"capture_contract\":{\"measurement_scope\":\"unknown\","
                          "\"operations\":\"%s\",\"tensors\":\"none\",\"gradients\":\"none\","
                          "\"logical_memory\":\"%s\",\"physical_memory\":\"%s\","
                          "\"device_timing\":\"%s\",\"required_semantic_labels\":[]},"
                          "\"tags\":{\"source\":\"chrome-trace-event\"}}",
                          has_device ? "cuda:0" : "cpu", has_ops ? "partial" : "none",
                          has_memory ? "partial" : "none", has_memory ? "partial" : "none",
                          has_device ? "partial" : "none");
  feed (doc, line, ok);
}

static void
emit_span_start (Import *im, GString *line, const ChromeEvent *e, gboolean *ok)
{
  const char *cat = pooled (im, e->cat);
  const char *kind = strcmp (cat, "cpu_op") == 0            ? "op"
                     : strcmp (cat, "python_function") == 0 ? "function"
                                                            : "module";

  g_string_append_printf (line, "{\"kind\":\"span_start\",\"id\":\"s%d\",\"parent_id\":\"s%d\"",
                          e->span + 1, e->parent + 1);
  append_kv_pooled (im, line, "name", e->name);
  g_string_append_printf (line,
                          ",\"start_ns\":%" G_GUINT64_FORMAT ",\"span_kind\":\"%s\","
                          "\"measured\":false}",
                          e->start_ns, kind);
  feed (im->doc, line, ok);
}

static void
emit_op (Import *im, GString *line, const ChromeEvent *e, gboolean *ok)
{
  g_string_append_printf (line, "{\"kind\":\"op\",\"span_id\":\"s%d\"", e->span + 1);
  append_kv_pooled (im, line, "op_name", e->name);
  g_string_append_printf (line,
                          ",\"inputs\":[],\"shape\":[],\"dtype\":\"\",\"device\":\"cpu\","
                          "\"duration_ns\":%" G_GUINT64_FORMAT
                          ",\"timestamp_ns\":%" G_GUINT64_FORMAT ",\"input_dense_bytes\":0}",
                          e->dur_ns, e->start_ns);
  feed (im->doc, line, ok);
}

static void
emit_device_interval (Import *im, GString *line, const ChromeEvent *e, gboolean *ok)
{
  const Thread *t = &g_array_index (im->threads, Thread, e->thread);
  char device[32], stream[32];

  g_snprintf (device, sizeof device, "cuda:%d", (e->flags & EV_HAS_DEVICE) ? e->device : 0);
  if (e->flags & EV_HAS_STREAM)
    g_snprintf (stream, sizeof stream, "%d", e->stream);
  else
    g_snprintf (stream, sizeof stream, "%s", pooled (im, t->tid));
  g_string_append_printf (line, "{\"kind\":\"device_interval\",\"span_id\":\"s%d\"", e->span + 1);
  append_kv_str (line, "device", device);
  append_kv_str (line, "stream_id", stream);
  g_string_append_printf (
    line,
    ",\"clock_id\":\"chrome-trace\",\"backend\":\"cuda\",\"start_ns\":%" G_GUINT64_FORMAT
    ",\"duration_ns\":%" G_GUINT64_FORMAT "}",
    e->start_ns, e->dur_ns);
  feed (im->doc, line, ok);
}

static char *
memory_device (const MemoryArgs *m)
{
  if (m->device_type == 1)
    return g_strdup_printf ("cuda:%" G_GINT64_FORMAT, m->device_id);
  return g_strdup ("cpu");
}

/* [memory] with Addr: alloc/free paired by (device, Addr); a free of a block
 * allocated before the profile started is counted as information. Without
 * Addr (PyTorch <= 1.9) nothing is paired: only the totals, as samples. */
static void
emit_memory (Import *im, GString *line, const ChromeEvent *e, GHashTable *live, gboolean *ok)
{
  const MemoryArgs *m = &g_array_index (im->memory, MemoryArgs, e->memory);
  g_autofree char *device = memory_device (m);

  if (m->has_addr && m->bytes != 0)
    {
      g_autofree char *storage
        = g_strdup_printf ("%s/0x%" G_GINT64_MODIFIER "x", device, (guint64)m->addr);
      gboolean is_free = m->bytes < 0;
      guint64 bytes = is_free ? (guint64)(-(m->bytes + 1)) + 1 : (guint64)m->bytes;
      if (is_free && !g_hash_table_remove (live, storage))
        im->frees_before_window++;
      else
        {
          if (!is_free)
            {
              if (g_hash_table_contains (live, storage))
                skip (im, "[memory] alloc of a live address", 1);
              else
                g_hash_table_add (live, g_strdup (storage));
            }
          if (!is_free || TRUE)
            {
              g_string_append_printf (line,
                                      "{\"kind\":\"memory\",\"timestamp_ns\":%" G_GUINT64_FORMAT,
                                      e->start_ns);
              append_kv_str (line, "storage_id", storage);
              append_kv_str (line, "tensor_id", storage);
              g_string_append_printf (line, ",\"span_id\":\"s%d\"", e->span + 1);
              append_kv_str (line, "device", device);
              g_string_append_printf (line,
                                      ",\"bytes\":%" G_GUINT64_FORMAT
                                      ",\"action\":\"%s\",\"shape\":[],"
                                      "\"dtype\":\"\",\"category\":\"other\"}",
                                      bytes, is_free ? "free" : "alloc");
              feed (im->doc, line, ok);
            }
        }
    }
  if (!(m->has_allocated && m->allocated >= 0) && !(m->has_reserved && m->reserved >= 0))
    return;
  g_string_append_printf (line, "{\"kind\":\"device_memory\",\"timestamp_ns\":%" G_GUINT64_FORMAT,
                          e->start_ns);
  append_kv_str (line, "device", device);
  if (m->has_allocated && m->allocated >= 0)
    g_string_append_printf (line, ",\"used_bytes\":%" G_GINT64_FORMAT, m->allocated);
  if (m->has_reserved && m->reserved >= 0)
    g_string_append_printf (line, ",\"reserved_bytes\":%" G_GINT64_FORMAT, m->reserved);
  g_string_append_c (line, '}');
  feed (im->doc, line, ok);
}

static int
compare_span_number (gconstpointer a, gconstpointer b, gpointer events)
{
  const ChromeEvent *x = &((const ChromeEvent *)events)[*(const guint *)a];
  const ChromeEvent *y = &((const ChromeEvent *)events)[*(const guint *)b];

  return x->span - y->span;
}

static int
compare_index_time (gconstpointer a, gconstpointer b, gpointer events)
{
  const ChromeEvent *x = &((const ChromeEvent *)events)[*(const guint *)a];
  const ChromeEvent *y = &((const ChromeEvent *)events)[*(const guint *)b];

  if (x->start_ns != y->start_ns)
    return x->start_ns < y->start_ns ? -1 : 1;
  return *(const guint *)a < *(const guint *)b ? -1 : 1;
}

static gboolean
emit (Import *im, GError **error)
{
  WickDocument *doc = im->doc;
  ChromeEvent *events = (ChromeEvent *)(gpointer)im->events->data;
  g_autoptr (GString) line = g_string_new (NULL);
  g_autoptr (GArray) spans = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr (GArray) memory = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr (GHashTable) live = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  gboolean has_memory = FALSE, has_device = FALSE, has_ops = FALSE, ok = TRUE;

  for (guint i = 0; i < im->events->len; i++)
    {
      has_memory |= events[i].role == ROLE_MEMORY;
      has_device |= events[i].role == ROLE_DEVICE;
      has_ops |= events[i].role == ROLE_OP;
      if (events[i].role == ROLE_SPAN)
        g_array_append_val (spans, i);
      else if (events[i].role == ROLE_MEMORY)
        g_array_append_val (memory, i);
    }
  g_array_sort_with_data (spans, compare_span_number, events);
  g_array_sort_with_data (memory, compare_index_time, events);
  emit_meta (doc, line, im->name, has_memory, has_device, has_ops, &ok);
  g_string_append (line, "{\"kind\":\"span_start\",\"id\":\"s1\"");
  append_kv_str (line, "name", im->name);
  g_string_append (line, ",\"start_ns\":0,\"span_kind\":\"function\",\"measured\":true}");
  feed (doc, line, &ok);
  for (guint i = 0; i < spans->len; i++)
    emit_span_start (im, line, &events[g_array_index (spans, guint, i)], &ok);
  for (guint i = 0; i < im->events->len; i++)
    if (events[i].role == ROLE_OP)
      emit_op (im, line, &events[i], &ok);
  for (guint i = 0; i < memory->len; i++)
    emit_memory (im, line, &events[g_array_index (memory, guint, i)], live, &ok);
  for (guint i = 0; i < im->events->len; i++)
    if (events[i].role == ROLE_DEVICE)
      emit_device_interval (im, line, &events[i], &ok);
  for (guint i = 0; i < spans->len; i++)
    {
      const ChromeEvent *e = &events[g_array_index (spans, guint, i)];
      g_string_append_printf (
        line, "{\"kind\":\"span_end\",\"id\":\"s%d\",\"duration_ns\":%" G_GUINT64_FORMAT "}",
        e->span + 1, e->dur_ns);
      feed (doc, line, &ok);
    }
  g_string_append_printf (
    line, "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":%" G_GUINT64_FORMAT "}",
    im->end_ns);
  feed (doc, line, &ok);
  g_string_append_printf (
    line, "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":%" G_GUINT64_FORMAT "}",
    im->end_ns);
  feed (doc, line, &ok);
  if (!ok)
    {
      const WickParseError *pe = wick_document_get_parse_error (doc);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "cannot convert the trace: %s: %s",
                   pe->message, pe->cause ? pe->cause : "");
      return FALSE;
    }
  return wick_document_finish_quietly (doc, error);
}

static guint64
to_ns (double us)
{
  double ns = us * 1000.0;

  if (!(ns > 0))
    return 0;
  return ns < 1.8e19 ? (guint64)llround (ns) : G_MAXUINT64 / 4;
}

/* µs to ns from the earliest event; the end of the host evidence. */
static void
convert_times (Import *im)
{
  ChromeEvent *events = (ChromeEvent *)(gpointer)im->events->data;

  for (guint i = 0; i < im->events->len; i++)
    {
      events[i].start_ns = to_ns (events[i].ts - im->t0);
      events[i].dur_ns = to_ns (events[i].dur);
      if (events[i].start_ns > G_MAXUINT64 / 4 - events[i].dur_ns)
        events[i].dur_ns = 0;
      if (events[i].role != ROLE_DEVICE)
        im->end_ns = MAX (im->end_ns, events[i].start_ns + events[i].dur_ns);
    }
}

static double
latest_time (Import *im)
{
  double t = im->t0;

  for (guint i = 0; i < im->events->len; i++)
    {
      const ChromeEvent *e = &g_array_index (im->events, ChromeEvent, i);
      t = MAX (t, e->ts + e->dur);
    }
  for (guint i = 0; i < im->begin_end->len; i++)
    t = MAX (t, g_array_index (im->begin_end, BeginEnd, i).ts);
  for (guint i = 0; i < im->marks->len; i++)
    t = MAX (t, g_array_index (im->marks, Mark, i).ts);
  for (guint i = 0; i < im->counters->len; i++)
    t = MAX (t, g_array_index (im->counters, CounterSample, i).ts);
  return t;
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

static const char *const phase_names[128] = {
  ['X'] = "X", ['B'] = "B", ['i'] = "i", ['I'] = "I", ['R'] = "R", ['C'] = "C",
  ['b'] = "b", ['e'] = "e", ['n'] = "n", ['S'] = "S", ['T'] = "T", ['p'] = "p",
  ['F'] = "F", ['s'] = "s", ['t'] = "t", ['f'] = "f", ['M'] = "M", ['O'] = "O",
  ['N'] = "N", ['D'] = "D", ['P'] = "P", ['E'] = "E", ['m'] = "[memory]",
};

static void
keep_info (Import *im, WickChromeReader *reader, GError *syntax_error)
{
  WickChromeInfo *info = chrome_info_new (im->doc, "chrome");
  const GPtrArray *meta = reader ? wick_chrome_reader_get_metadata (reader) : NULL;
  const GPtrArray *warnings = reader ? wick_chrome_reader_get_warnings (reader) : NULL;
  g_autoptr (GString) imported = g_string_new (NULL);
  guint64 total = 0;

  for (int ph = 0; ph < 128; ph++)
    if (im->imported[ph] > 0 && phase_names[ph] != NULL)
      {
        info_count (info->imported, phase_names[ph], im->imported[ph]);
        g_string_append_printf (imported, "%s%" G_GUINT64_FORMAT " %s", imported->len ? ", " : "",
                                im->imported[ph], phase_names[ph]);
        total += im->imported[ph];
      }
  for (guint i = 0; i < im->skipped_order->len; i++)
    {
      const char *key = g_ptr_array_index (im->skipped_order, i);
      info_count (info->skipped, key, GPOINTER_TO_SIZE (g_hash_table_lookup (im->skipped, key)));
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
  if (syntax_error != NULL)
    g_ptr_array_add (info->warnings, g_strdup (syntax_error->message));
  info->frees_before_window = im->frees_before_window;
  info->cut_off = reader != NULL && wick_chrome_reader_was_cut_off (reader);

  /* the same in the health list: nothing read is dropped silently */
  add_health (im->doc, "chrome_imported", WICK_SEVERITY_INFO,
              g_strdup_printf ("Chrome trace: %" G_GUINT64_FORMAT " events imported (%s)", total,
                               imported->len ? imported->str : "none"));
  for (guint i = 0; i + 1 < info->skipped->len; i += 2)
    add_health (im->doc, "chrome_skipped", WICK_SEVERITY_WARNING,
                g_strdup_printf ("%s events read and not modelled: %s",
                                 (const char *)g_ptr_array_index (info->skipped, i + 1),
                                 (const char *)g_ptr_array_index (info->skipped, i)));
  for (guint i = 0; i < info->warnings->len; i++)
    add_health (im->doc, "chrome_damaged", WICK_SEVERITY_WARNING,
                g_strdup (g_ptr_array_index (info->warnings, i)));
  if (im->frees_before_window > 0)
    add_health (im->doc, "chrome_free_before_window", WICK_SEVERITY_INFO,
                g_strdup_printf ("%" G_GUINT64_FORMAT
                                 " [memory] frees of blocks allocated before the profile "
                                 "started (not paired, not counted as live memory)",
                                 im->frees_before_window));
}

static void
import_init (Import *im, WickDocument *doc, const char *name)
{
  memset (im, 0, sizeof *im);
  im->doc = doc;
  im->name = name;
  im->pool = wick_string_pool_new ();
  im->events = g_array_new (FALSE, FALSE, sizeof (ChromeEvent));
  im->memory = g_array_new (FALSE, FALSE, sizeof (MemoryArgs));
  im->threads = g_array_new (FALSE, FALSE, sizeof (Thread));
  im->thread_index = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  im->processes = g_array_new (FALSE, FALSE, sizeof (Process));
  im->process_index = g_hash_table_new (g_direct_hash, g_direct_equal);
  im->begin_end = g_array_new (FALSE, FALSE, sizeof (BeginEnd));
  im->flows = g_array_new (FALSE, FALSE, sizeof (Flow));
  im->marks = g_array_new (FALSE, FALSE, sizeof (Mark));
  im->counters = g_array_new (FALSE, FALSE, sizeof (CounterSample));
  im->series_names = g_ptr_array_new_with_free_func (g_free);
  im->series_index = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  im->skipped = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  im->skipped_order = g_ptr_array_new ();
  im->scratch = g_string_new (NULL);
}

static void
import_clear (Import *im)
{
  wick_string_pool_free (im->pool);
  g_array_unref (im->events);
  g_array_unref (im->memory);
  g_array_unref (im->threads);
  g_hash_table_unref (im->thread_index);
  for (guint i = 0; i < im->processes->len; i++)
    if (g_array_index (im->processes, Process, i).labels)
      g_string_free (g_array_index (im->processes, Process, i).labels, TRUE);
  g_array_unref (im->processes);
  g_hash_table_unref (im->process_index);
  g_array_unref (im->begin_end);
  g_array_unref (im->flows);
  g_array_unref (im->marks);
  g_array_unref (im->counters);
  g_ptr_array_unref (im->series_names);
  g_hash_table_unref (im->series_index);
  g_ptr_array_unref (im->skipped_order);
  g_hash_table_unref (im->skipped);
  g_string_free (im->scratch, TRUE);
}

/* The document holds what was read; its parse error names the place. */
static void
set_chrome_parse_error (WickDocument *doc, const GError *syntax)
{
  const char *colon = strstr (syntax->message, ": ");

  g_clear_pointer (&doc->parse_error.message, g_free);
  g_clear_pointer (&doc->parse_error.cause, g_free);
  doc->parse_error.failed = TRUE;
  doc->parse_error.record_index = -1;
  if (colon != NULL)
    {
      doc->parse_error.message = g_strdup_printf ("parse Chrome trace JSON %.*s",
                                                  (int)(colon - syntax->message), syntax->message);
      doc->parse_error.cause = g_strdup (colon + 2);
    }
  else
    doc->parse_error.message = g_strdup (syntax->message);
  {
    /* "file:L:C" -> line L */
    const char *p = colon;
    int colons = 0;
    while (p != NULL && p > syntax->message && colons < 2)
      {
        p--;
        if (*p == ':')
          colons++;
      }
    if (colons == 2)
      doc->parse_error.line = g_ascii_strtoull (p + 1, NULL, 10);
  }
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
  g_autoptr (GString) line = g_string_new (NULL);
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
  emit_meta (doc, line, name, TRUE, FALSE, FALSE, &ok);
  g_string_append (line, "{\"kind\":\"span_start\",\"id\":\"s1\"");
  append_kv_str (line, "name", name);
  g_string_append (line, ",\"start_ns\":0,\"span_kind\":\"function\",\"measured\":true}");
  feed (doc, line, &ok);
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
              g_string_append_printf (line,
                                      "{\"kind\":\"memory\",\"timestamp_ns\":%" G_GUINT64_FORMAT
                                      ",\"storage_id\":\"%s/%u/%" G_GUINT64_FORMAT
                                      "\",\"tensor_id\":\"%s/%u/%" G_GUINT64_FORMAT
                                      "\",\"span_id\":\"s1\",\"device\":\"cuda:0\",\"bytes\":%"
                                      G_GINT64_FORMAT ",\"action\":\"%s\",\"shape\":[],"
                                      "\"dtype\":\"\",\"category\":\"%s\"}",
                                      ns, category, c, block[c], category, c, block[c], bytes,
                                      pass == 0 ? "free" : "alloc", category);
              feed (doc, line, &ok);
            }
          level[c] = v;
        }
    }
  g_string_append_printf (
    line, "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":%" G_GINT64_FORMAT "}", t_end);
  feed (doc, line, &ok);
  g_string_append_printf (
    line, "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":%" G_GINT64_FORMAT "}",
    t_end);
  feed (doc, line, &ok);
  if (!ok || !wick_document_finish_quietly (doc, error))
    {
      if (error != NULL && *error == NULL)
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s: cannot convert the timeline",
                     name);
      return FALSE;
    }
  info = chrome_info_new (doc, "torch-memory-timeline");
  info_count (info->imported, "times", times->len);
  info_count (info->imported, "category changes", changes);
  add_health (doc, "chrome_imported", WICK_SEVERITY_INFO,
              g_strdup_printf ("torch memory timeline: %u times, %u categories, %" G_GUINT64_FORMAT
                               " changes",
                               times->len, n_cat, changes));
  return TRUE;
}

/* ---- entry points ------------------------------------------------------ */

static gboolean
import_stream (WickDocument *document, WickInput *input, const char *name, const char *label,
               gboolean *not_chrome, GError **error)
{
  g_autoptr (WickChromeReader) reader = wick_chrome_reader_new (input, name);
  g_autoptr (GError) syntax = NULL;
  WickFileFormat format;
  WickChromeEvent event;
  Import im;
  gboolean ok;

  if (not_chrome != NULL)
    *not_chrome = FALSE;
  if (!wick_chrome_reader_start (reader, &format, error))
    return FALSE;
  if (format == WICK_FILE_FORMAT_JSONL)
    {
      if (not_chrome != NULL)
        *not_chrome = TRUE;
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "%s: not a Chrome trace: this is candle-graph JSONL (one record per line)",
                   name);
      return FALSE;
    }
  if (format == WICK_FILE_FORMAT_MEMORY_TIMELINE)
    return import_memory_timeline (document, reader, label, error);

  import_init (&im, document, label);
  while (wick_chrome_reader_next (reader, &event, &syntax))
    read_event (&im, &event);
  if (syntax != NULL && g_error_matches (syntax, G_IO_ERROR, G_IO_ERROR_INVALID_DATA) == FALSE
      && im.events->len == 0 && im.marks->len == 0)
    {
      /* an I/O error before anything was read */
      g_propagate_error (error, g_steal_pointer (&syntax));
      import_clear (&im);
      return FALSE;
    }
  if (!im.has_t0)
    im.t0 = 0;
  match_begin_end (&im, latest_time (&im));
  convert_times (&im);
  nest (&im);
  attach_launches (&im);
  ok = emit (&im, error);
  if (ok)
    keep_info (&im, reader, syntax);
  import_clear (&im);
  if (ok && syntax != NULL)
    {
      /* what was read before the error is in the document; the error stands */
      set_chrome_parse_error (document, syntax);
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
                        name ? name : "trace", name ? name : "trace", NULL, error);
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
  return import_stream (document, input, path, label, NULL, error);
}

gboolean
wick_document_load_file_auto (WickDocument *document, const char *path, GCancellable *cancellable,
                              WickProgressFunc progress, gpointer user_data, GError **error)
{
  g_autoptr (GError) local = NULL;
  WickFileFormat format = wick_file_sniff (path, &local);

  if (format == WICK_FILE_FORMAT_CHROME || format == WICK_FILE_FORMAT_MEMORY_TIMELINE)
    return wick_chrome_import_file (document, path, cancellable, error);
  if (format == WICK_FILE_FORMAT_UNKNOWN && local != NULL
      && !g_error_matches (local, G_IO_ERROR, G_IO_ERROR_INVALID_DATA))
    {
      /* cannot open or read */
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  if (format == WICK_FILE_FORMAT_UNKNOWN && local != NULL
      && strstr (local->message, "not a trace Wick can read") != NULL)
    {
      g_free (document->path);
      document->path = g_strdup (path);
      document->finished = TRUE;
      document->parse_error.failed = TRUE;
      document->parse_error.record_index = -1;
      document->parse_error.message = g_strdup (local->message);
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  /* JSONL, or not JSON at all: the JSONL reader words its errors */
  return wick_document_load_file (document, path, cancellable, progress, user_data, error);
}

const char *
wick_chrome_info_lookup_metadata (const WickChromeInfo *info, const char *key)
{
  for (guint i = 0; info != NULL && i + 1 < info->metadata->len; i += 2)
    if (strcmp (g_ptr_array_index (info->metadata, i), key) == 0)
      return g_ptr_array_index (info->metadata, i + 1);
  return NULL;
}
