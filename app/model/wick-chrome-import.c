/* wick-chrome-import.c — Chrome trace-event JSON into candle-graph records
 * (see the header for the mapping). */
#include "config.h"

#include "wick-chrome-import.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "wick-document-private.h"

typedef enum
{
  ROLE_SPAN,
  ROLE_OP,
  ROLE_DEVICE,
  ROLE_MEMORY,
} Role;

typedef struct
{
  Role role;
  const char *name;
  const char *cat;
  double ts, dur; /* µs, as read */
  guint64 start_ns, dur_ns;
  char *thread; /* "pid/tid" */
  JsonObject *args;
  gint32 span;   /* ROLE_SPAN: its own span number; others: enclosing span */
  gint32 parent; /* ROLE_SPAN: parent span number (0 = root) */
} ChromeEvent;

typedef struct
{
  char *thread;
  double ts;
  gboolean start; /* ph "s" (else "f") */
  gint64 id;
} ChromeFlow;

typedef struct
{
  GArray *events;   /* ChromeEvent */
  GArray *flows;    /* ChromeFlow */
  GHashTable *open; /* thread -> GArray of B events (indices into events) */
  guint n_spans;
  guint64 end_ns;
} Import;

static void
chrome_event_clear (gpointer data)
{
  g_free (((ChromeEvent *)data)->thread);
}

static void
chrome_flow_clear (gpointer data)
{
  g_free (((ChromeFlow *)data)->thread);
}

gboolean
wick_chrome_sniff (const char *data, gsize len)
{
  gsize i = 0;
  const char *kind, *events;
  g_autofree char *head = NULL;

  while (i < len && g_ascii_isspace (data[i]))
    i++;
  if (i + 2 < len && (guchar)data[i] == 0xEF && (guchar)data[i + 1] == 0xBB
      && (guchar)data[i + 2] == 0xBF)
    i += 3;
  if (i < len && data[i] == '[')
    return TRUE;
  if (i >= len || data[i] != '{')
    return FALSE;
  head = g_strndup (data + i, MIN (len - i, 65536));
  events = strstr (head, "\"traceEvents\"");
  kind = strstr (head, "\"kind\"");
  return events != NULL && (kind == NULL || events < kind);
}

/* ---- reading events --------------------------------------------------- */

static gboolean
member_double (JsonObject *o, const char *name, double *out)
{
  JsonNode *node = json_object_get_member (o, name);

  if (node == NULL || JSON_NODE_TYPE (node) != JSON_NODE_VALUE)
    return FALSE;
  if (json_node_get_value_type (node) == G_TYPE_STRING)
    {
      const char *text = json_node_get_string (node);
      char *end = NULL;
      *out = g_ascii_strtod (text, &end);
      return end != text && isfinite (*out);
    }
  if (json_node_get_value_type (node) == G_TYPE_BOOLEAN)
    return FALSE;
  *out = json_node_get_double (node);
  return isfinite (*out);
}

static gboolean
member_int (JsonObject *o, const char *name, gint64 *out)
{
  double value;

  if (o == NULL || !member_double (o, name, &value) || fabs (value) > 9e18)
    return FALSE;
  *out = (gint64)value;
  return TRUE;
}

static char *
member_text (JsonObject *o, const char *name)
{
  JsonNode *node = json_object_get_member (o, name);

  if (node == NULL || JSON_NODE_TYPE (node) != JSON_NODE_VALUE)
    return g_strdup ("0");
  if (json_node_get_value_type (node) == G_TYPE_STRING)
    return g_strdup (json_node_get_string (node));
  return g_strdup_printf ("%" G_GINT64_FORMAT, (gint64)json_node_get_double (node));
}

static const char *
member_string (JsonObject *o, const char *name)
{
  JsonNode *node = json_object_get_member (o, name);

  if (node == NULL || JSON_NODE_TYPE (node) != JSON_NODE_VALUE
      || json_node_get_value_type (node) != G_TYPE_STRING)
    return "";
  return json_node_get_string (node);
}

static char *
thread_key (JsonObject *o)
{
  g_autofree char *pid = member_text (o, "pid");
  g_autofree char *tid = member_text (o, "tid");

  return g_strdup_printf ("%s/%s", pid, tid);
}

static Role
role_for (const char *cat)
{
  if (g_strcmp0 (cat, "cuda_runtime") == 0 || g_strcmp0 (cat, "cuda_driver") == 0
      || g_strcmp0 (cat, "Runtime") == 0)
    return ROLE_OP;
  if (g_strcmp0 (cat, "kernel") == 0 || g_strcmp0 (cat, "gpu_memcpy") == 0
      || g_strcmp0 (cat, "gpu_memset") == 0 || g_strcmp0 (cat, "gpu_user_annotation") == 0
      || g_strcmp0 (cat, "Kernel") == 0 || g_strcmp0 (cat, "Memcpy") == 0
      || g_strcmp0 (cat, "Memset") == 0)
    return ROLE_DEVICE;
  return ROLE_SPAN;
}

static void
add_event (Import *im, Role role, JsonObject *o, double ts, double dur)
{
  ChromeEvent e = { 0 };
  JsonNode *args = json_object_get_member (o, "args");

  e.role = role;
  e.name = member_string (o, "name");
  e.cat = member_string (o, "cat");
  e.ts = ts;
  e.dur = dur > 0 ? dur : 0;
  e.thread = thread_key (o);
  e.args = args != NULL && JSON_NODE_HOLDS_OBJECT (args) ? json_node_get_object (args) : NULL;
  g_array_append_val (im->events, e);
}

static void
read_event (Import *im, JsonObject *o)
{
  const char *ph = member_string (o, "ph");
  double ts = 0, dur = 0;

  if (!member_double (o, "ts", &ts))
    return;
  if (strcmp (ph, "X") == 0)
    {
      member_double (o, "dur", &dur);
      add_event (im, role_for (member_string (o, "cat")), o, ts, dur);
    }
  else if (strcmp (ph, "B") == 0)
    {
      g_autofree char *key = thread_key (o);
      GArray *stack = g_hash_table_lookup (im->open, key);
      guint index = im->events->len;
      if (stack == NULL)
        {
          stack = g_array_new (FALSE, FALSE, sizeof (guint));
          g_hash_table_insert (im->open, g_steal_pointer (&key), stack);
        }
      add_event (im, role_for (member_string (o, "cat")), o, ts, 0);
      g_array_append_val (stack, index);
    }
  else if (strcmp (ph, "E") == 0)
    {
      g_autofree char *key = thread_key (o);
      GArray *stack = g_hash_table_lookup (im->open, key);
      if (stack != NULL && stack->len > 0)
        {
          ChromeEvent *begin = &g_array_index (im->events, ChromeEvent,
                                               g_array_index (stack, guint, stack->len - 1));
          begin->dur = ts > begin->ts ? ts - begin->ts : 0;
          g_array_set_size (stack, stack->len - 1);
        }
    }
  else if ((strcmp (ph, "i") == 0 || strcmp (ph, "I") == 0)
           && strcmp (member_string (o, "name"), "[memory]") == 0)
    add_event (im, ROLE_MEMORY, o, ts, 0);
  else if (strcmp (ph, "s") == 0 || strcmp (ph, "f") == 0)
    {
      ChromeFlow flow = { thread_key (o), ts, ph[0] == 's', 0 };
      if (!member_int (o, "id", &flow.id))
        {
          g_free (flow.thread);
          return;
        }
      g_array_append_val (im->flows, flow);
    }
}

static JsonArray *
events_of (JsonNode *root, GError **error)
{
  if (root != NULL && JSON_NODE_HOLDS_ARRAY (root))
    return json_node_get_array (root);
  if (root != NULL && JSON_NODE_HOLDS_OBJECT (root))
    {
      JsonNode *events = json_object_get_member (json_node_get_object (root), "traceEvents");
      if (events != NULL && JSON_NODE_HOLDS_ARRAY (events))
        return json_node_get_array (events);
    }
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
               "not a Chrome trace: expected an array of events or an object with a "
               "\"traceEvents\" array");
  return NULL;
}

/* ---- nesting ---------------------------------------------------------- */

static int
compare_thread_time (gconstpointer a, gconstpointer b, gpointer user_data)
{
  const ChromeEvent *events = user_data;
  const ChromeEvent *x = &events[*(const guint *)a], *y = &events[*(const guint *)b];
  int c = strcmp (x->thread, y->thread);

  if (c != 0)
    return c;
  if (x->start_ns != y->start_ns)
    return x->start_ns < y->start_ns ? -1 : 1;
  /* at the same start, spans (outermost first) before what they contain */
  if ((x->role == ROLE_SPAN) != (y->role == ROLE_SPAN))
    return x->role == ROLE_SPAN ? -1 : 1;
  if (x->dur_ns != y->dur_ns)
    return x->dur_ns > y->dur_ns ? -1 : 1;
  return 0;
}

static gboolean
contains (const ChromeEvent *outer, guint64 start, guint64 dur)
{
  return outer->start_ns <= start && start + dur <= outer->start_ns + outer->dur_ns;
}

/* Per thread, in time order: spans nest by containment (a span that overlaps
 * its would-be parent's end goes up to an ancestor that holds it); ops,
 * memory events and launches take the innermost span that holds them. */
static void
nest (Import *im)
{
  ChromeEvent *events = (ChromeEvent *)(gpointer)im->events->data;
  guint n = im->events->len;
  g_autofree guint *order = g_new (guint, MAX (1, n));
  g_autoptr (GArray) stack = g_array_new (FALSE, FALSE, sizeof (guint));
  const char *thread = NULL;

  for (guint i = 0; i < n; i++)
    order[i] = i;
  g_qsort_with_data (order, (gint)n, sizeof (guint), compare_thread_time, events);
  for (guint k = 0; k < n; k++)
    {
      ChromeEvent *e = &events[order[k]];
      gint s;
      if (thread == NULL || strcmp (thread, e->thread) != 0)
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

/* thread -> its ops (runtime calls), by start time */
static GHashTable *
index_ops (Import *im)
{
  ChromeEvent *events = (ChromeEvent *)(gpointer)im->events->data;
  GHashTable *by_thread
    = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify)g_array_unref);
  GHashTableIter iter;
  gpointer value;

  for (guint i = 0; i < im->events->len; i++)
    {
      GArray *ops;
      if (events[i].role != ROLE_OP)
        continue;
      ops = g_hash_table_lookup (by_thread, events[i].thread);
      if (ops == NULL)
        {
          ops = g_array_new (FALSE, FALSE, sizeof (guint));
          g_hash_table_insert (by_thread, events[i].thread, ops);
        }
      g_array_append_val (ops, i);
    }
  g_hash_table_iter_init (&iter, by_thread);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_array_sort_with_data (value, compare_start, events);
  return by_thread;
}

/* The span of the runtime call a flow starts from: the last op on the flow's
 * thread that starts at or before it and holds it; the root when none. */
static gint32
launch_span (Import *im, GHashTable *ops_by_thread, const ChromeFlow *flow)
{
  const ChromeEvent *events = (const ChromeEvent *)(gpointer)im->events->data;
  GArray *ops = g_hash_table_lookup (ops_by_thread, flow->thread);
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

/* Device events take the span that launched them: by args.correlation, by a
 * flow from the launch, else the root. */
static void
attach_launches (Import *im)
{
  ChromeEvent *events = (ChromeEvent *)(gpointer)im->events->data;
  g_autoptr (GHashTable) by_correlation = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr (GHashTable) flow_span
    = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  g_autoptr (GHashTable) flow_end = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GArray) correlations = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GHashTable) ops_by_thread = index_ops (im);

  g_array_set_size (correlations, im->events->len);
  for (guint i = 0; i < im->events->len; i++)
    {
      gint64 *c = &g_array_index (correlations, gint64, i);
      if (events[i].role == ROLE_OP && member_int (events[i].args, "correlation", c))
        g_hash_table_insert (by_correlation, c, &events[i]);
    }
  for (guint i = 0; i < im->flows->len; i++)
    {
      const ChromeFlow *flow = &g_array_index (im->flows, ChromeFlow, i);
      if (flow->start)
        g_hash_table_insert (flow_span, g_memdup2 (&flow->id, sizeof flow->id),
                             GINT_TO_POINTER (launch_span (im, ops_by_thread, flow) + 1));
      else
        g_hash_table_insert (flow_end, g_strdup_printf ("%s@%.3f", flow->thread, flow->ts),
                             g_memdup2 (&flow->id, sizeof flow->id));
    }
  for (guint i = 0; i < im->events->len; i++)
    {
      ChromeEvent *e = &events[i];
      gint64 correlation;
      ChromeEvent *launch;
      g_autofree char *key = NULL;
      gint64 *flow;
      if (e->role != ROLE_DEVICE)
        continue;
      e->span = 0;
      if (member_int (e->args, "correlation", &correlation)
          && (launch = g_hash_table_lookup (by_correlation, &correlation)) != NULL)
        {
          e->span = launch->span;
          continue;
        }
      key = g_strdup_printf ("%s@%.3f", e->thread, e->ts);
      if ((flow = g_hash_table_lookup (flow_end, key)) != NULL)
        e->span = MAX (0, GPOINTER_TO_INT (g_hash_table_lookup (flow_span, flow)) - 1);
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
emit_meta (WickDocument *doc, GString *line, const char *name, gboolean has_memory,
           gboolean has_device, gboolean has_ops, gboolean *ok)
{
  g_autoptr (GDateTime) now = g_date_time_new_now_utc ();
  g_autofree char *stamp = g_date_time_format_iso8601 (now);
  g_autofree char *run = g_strconcat ("chrome:", name, NULL);

  g_string_append (line, "{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/10\"");
  append_kv_str (line, "run_id", run);
  append_kv_str (line, "correlation_id", run);
  append_kv_str (line, "entrypoint", name);
  g_string_append (line, ",\"phase\":\"infer\"");
  append_kv_str (line, "timestamp", stamp);
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
emit_span_start (WickDocument *doc, GString *line, const ChromeEvent *e, gboolean *ok)
{
  const char *kind = g_strcmp0 (e->cat, "cpu_op") == 0            ? "op"
                     : g_strcmp0 (e->cat, "python_function") == 0 ? "function"
                                                                  : "module";

  g_string_append_printf (line, "{\"kind\":\"span_start\",\"id\":\"s%d\",\"parent_id\":\"s%d\"",
                          e->span + 1, e->parent + 1);
  append_kv_str (line, "name", e->name);
  g_string_append_printf (line,
                          ",\"start_ns\":%" G_GUINT64_FORMAT ",\"span_kind\":\"%s\","
                          "\"measured\":false}",
                          e->start_ns, kind);
  feed (doc, line, ok);
}

static void
emit_op (WickDocument *doc, GString *line, const ChromeEvent *e, gboolean *ok)
{
  g_string_append_printf (line, "{\"kind\":\"op\",\"span_id\":\"s%d\"", e->span + 1);
  append_kv_str (line, "op_name", e->name);
  g_string_append_printf (line,
                          ",\"inputs\":[],\"shape\":[],\"dtype\":\"\",\"device\":\"cpu\","
                          "\"duration_ns\":%" G_GUINT64_FORMAT
                          ",\"timestamp_ns\":%" G_GUINT64_FORMAT ",\"input_dense_bytes\":0}",
                          e->dur_ns, e->start_ns);
  feed (doc, line, ok);
}

static void
emit_device_interval (WickDocument *doc, GString *line, const ChromeEvent *e, gboolean *ok)
{
  gint64 device = 0, stream = 0;
  g_autofree char *device_text = NULL, *stream_text = NULL;

  device_text = member_int (e->args, "device", &device)
                  ? g_strdup_printf ("cuda:%" G_GINT64_FORMAT, device)
                  : g_strdup ("cuda:0");
  stream_text = member_int (e->args, "stream", &stream)
                  ? g_strdup_printf ("%" G_GINT64_FORMAT, stream)
                  : g_strdup (e->thread);
  g_string_append_printf (line, "{\"kind\":\"device_interval\",\"span_id\":\"s%d\"", e->span + 1);
  append_kv_str (line, "device", device_text);
  append_kv_str (line, "stream_id", stream_text);
  g_string_append_printf (
    line,
    ",\"clock_id\":\"chrome-trace\",\"backend\":\"cuda\",\"start_ns\":%" G_GUINT64_FORMAT
    ",\"duration_ns\":%" G_GUINT64_FORMAT "}",
    e->start_ns, e->dur_ns);
  feed (doc, line, ok);
}

static void
emit_memory (WickDocument *doc, GString *line, const ChromeEvent *e, gboolean *ok)
{
  gint64 addr = 0, bytes = 0, device_type = 0, device_id = 0, allocated, reserved;
  g_autofree char *device = NULL, *storage = NULL;
  gboolean has_allocated, has_reserved;

  member_int (e->args, "Addr", &addr);
  member_int (e->args, "Bytes", &bytes);
  member_int (e->args, "Device Type", &device_type);
  member_int (e->args, "Device Id", &device_id);
  device
    = device_type == 1 ? g_strdup_printf ("cuda:%" G_GINT64_FORMAT, device_id) : g_strdup ("cpu");
  storage = g_strdup_printf ("0x%" G_GINT64_MODIFIER "x", addr);
  g_string_append_printf (line, "{\"kind\":\"memory\",\"timestamp_ns\":%" G_GUINT64_FORMAT,
                          e->start_ns);
  append_kv_str (line, "storage_id", storage);
  append_kv_str (line, "tensor_id", storage);
  g_string_append_printf (line, ",\"span_id\":\"s%d\"", e->span + 1);
  append_kv_str (line, "device", device);
  g_string_append_printf (line,
                          ",\"bytes\":%" G_GUINT64_FORMAT ",\"action\":\"%s\",\"shape\":[],"
                          "\"dtype\":\"\",\"category\":\"other\"}",
                          bytes < 0 ? (guint64) - (bytes + 1) + 1 : (guint64)bytes,
                          bytes < 0 ? "free" : "alloc");
  feed (doc, line, ok);

  has_allocated = member_int (e->args, "Total Allocated", &allocated) && allocated >= 0;
  has_reserved = member_int (e->args, "Total Reserved", &reserved) && reserved >= 0;
  if (!has_allocated && !has_reserved)
    return;
  g_string_append_printf (line, "{\"kind\":\"device_memory\",\"timestamp_ns\":%" G_GUINT64_FORMAT,
                          e->start_ns);
  append_kv_str (line, "device", device);
  if (has_allocated)
    g_string_append_printf (line, ",\"used_bytes\":%" G_GINT64_FORMAT, allocated);
  if (has_reserved)
    g_string_append_printf (line, ",\"reserved_bytes\":%" G_GINT64_FORMAT, reserved);
  g_string_append_c (line, '}');
  feed (doc, line, ok);
}

static int
compare_span_number (gconstpointer a, gconstpointer b, gpointer events)
{
  const ChromeEvent *x = &((const ChromeEvent *)events)[*(const guint *)a];
  const ChromeEvent *y = &((const ChromeEvent *)events)[*(const guint *)b];

  return x->span - y->span;
}

static gboolean
emit (WickDocument *doc, Import *im, const char *name, GError **error)
{
  ChromeEvent *events = (ChromeEvent *)(gpointer)im->events->data;
  g_autoptr (GString) line = g_string_new (NULL);
  g_autoptr (GArray) spans = g_array_new (FALSE, FALSE, sizeof (guint));
  gboolean has_memory = FALSE, has_device = FALSE, has_ops = FALSE, ok = TRUE;

  for (guint i = 0; i < im->events->len; i++)
    {
      has_memory |= events[i].role == ROLE_MEMORY;
      has_device |= events[i].role == ROLE_DEVICE;
      has_ops |= events[i].role == ROLE_OP;
      if (events[i].role == ROLE_SPAN)
        g_array_append_val (spans, i);
    }
  g_array_sort_with_data (spans, compare_span_number, events);
  emit_meta (doc, line, name, has_memory, has_device, has_ops, &ok);
  g_string_append (line, "{\"kind\":\"span_start\",\"id\":\"s1\"");
  append_kv_str (line, "name", name);
  g_string_append (line, ",\"start_ns\":0,\"span_kind\":\"function\",\"measured\":true}");
  feed (doc, line, &ok);
  for (guint i = 0; i < spans->len; i++)
    emit_span_start (doc, line, &events[g_array_index (spans, guint, i)], &ok);
  for (guint i = 0; i < im->events->len; i++)
    if (events[i].role == ROLE_OP)
      emit_op (doc, line, &events[i], &ok);
  for (guint i = 0; i < im->events->len; i++)
    if (events[i].role == ROLE_MEMORY)
      emit_memory (doc, line, &events[i], &ok);
  for (guint i = 0; i < im->events->len; i++)
    if (events[i].role == ROLE_DEVICE)
      emit_device_interval (doc, line, &events[i], &ok);
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

/* µs to ns from the earliest event; the end of the host evidence. */
static void
convert_times (Import *im)
{
  ChromeEvent *events = (ChromeEvent *)(gpointer)im->events->data;
  double t0 = G_MAXDOUBLE;

  for (guint i = 0; i < im->events->len; i++)
    t0 = MIN (t0, events[i].ts);
  for (guint i = 0; i < im->events->len; i++)
    {
      double start = (events[i].ts - t0) * 1000.0;
      double dur = events[i].dur * 1000.0;
      events[i].start_ns = start < 1.8e19 ? (guint64)llround (start) : G_MAXUINT64 / 4;
      events[i].dur_ns = dur < 1.8e19 ? (guint64)llround (dur) : G_MAXUINT64 / 4;
      if (events[i].role != ROLE_DEVICE)
        im->end_ns = MAX (im->end_ns, events[i].start_ns + events[i].dur_ns);
    }
}

gboolean
wick_chrome_import_data (WickDocument *document, const char *data, gsize len, const char *name,
                         GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new_immutable ();
  Import im = { 0 };
  JsonArray *array;
  gboolean ok;

  g_return_val_if_fail (WICK_IS_DOCUMENT (document), FALSE);
  if (!json_parser_load_from_data (parser, data, (gssize)len, error))
    return FALSE;
  array = events_of (json_parser_get_root (parser), error);
  if (array == NULL)
    return FALSE;
  im.events = g_array_new (FALSE, TRUE, sizeof (ChromeEvent));
  g_array_set_clear_func (im.events, chrome_event_clear);
  im.flows = g_array_new (FALSE, TRUE, sizeof (ChromeFlow));
  g_array_set_clear_func (im.flows, chrome_flow_clear);
  im.open = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_array_unref);
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *node = json_array_get_element (array, i);
      if (JSON_NODE_HOLDS_OBJECT (node))
        read_event (&im, json_node_get_object (node));
    }
  convert_times (&im);
  nest (&im);
  attach_launches (&im);
  ok = emit (document, &im, name ? name : "trace", error);
  g_array_unref (im.events);
  g_array_unref (im.flows);
  g_hash_table_unref (im.open);
  return ok;
}

gboolean
wick_chrome_import_file (WickDocument *document, const char *path, GCancellable *cancellable,
                         GError **error)
{
  g_autofree char *data = NULL;
  g_autofree char *name = g_path_get_basename (path);
  gsize len;

  if (!g_file_get_contents (path, &data, &len, error))
    return FALSE;
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;
  g_free (document->path);
  document->path = g_strdup (path);
  return wick_chrome_import_data (document, data, len, name, error);
}

gboolean
wick_document_load_file_auto (WickDocument *document, const char *path, GCancellable *cancellable,
                              WickProgressFunc progress, gpointer user_data, GError **error)
{
  char head[4096];
  gssize n = 0;
  FILE *file = fopen (path, "rb");

  if (file != NULL)
    {
      n = (gssize)fread (head, 1, sizeof head, file);
      fclose (file);
    }
  if (n > 0 && wick_chrome_sniff (head, (gsize)n))
    return wick_chrome_import_file (document, path, cancellable, error);
  return wick_document_load_file (document, path, cancellable, progress, user_data, error);
}
