/* wick-health.c — structural health and gradient verdicts (spec §6–7).
 *
 * Issues are appended in the spec's order: provenance, terminal, spans (in id
 * byte order), evidence records (file order, by group), edges, memory pairing,
 * gradients and the exact contract, absent planes, semantic labels. Messages
 * are candle-graph's where the spec or its source fix them; codes and
 * severities always are.
 */
#include "config.h"

#include "wick-health.h"

#include <glib/gi18n-lib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct
{
  WickDocument *doc;
  GArray *issues;
  gboolean failed;
  gboolean live;
  gboolean provisional; /* live and not finished: end-only rules are pending */
  /* records the stream said it lost (a lapped reader, a full ring): memory
   * events that then do not pair are counted, not errors (their partners may
   * be among the lost) */
  guint64 records_lost;
  guint64 unpaired_after_loss;
} Health;

static const char *
S (Health *h, WickStr str)
{
  const char *s = wick_document_str (h->doc, str);
  return s ? s : "";
}

static void
add_issue (Health *h, const char *code, WickSeverity severity, char *message, WickRecordType type,
           gint64 index, const char *record_id)
{
  WickHealthIssue issue = { code, severity, message, type, index, g_strdup (record_id) };

  g_array_append_val (h->issues, issue);
}

static void
error (Health *h, const char *code, char *message)
{
  add_issue (h, code, WICK_SEVERITY_ERROR, message, WICK_RECORD_NONE, -1, NULL);
}

static void
warning (Health *h, const char *code, char *message)
{
  add_issue (h, code, WICK_SEVERITY_WARNING, message, WICK_RECORD_NONE, -1, NULL);
}

/* A rule only the end of the capture decides, on a document still being fed. */
static void
pending (Health *h, const char *code, char *message, WickRecordType type, gint64 index,
         const char *record_id)
{
  add_issue (h, code, WICK_SEVERITY_PENDING, message, type, index, record_id);
}

static WickSeverity
failed_severity (Health *h)
{
  return h->failed ? WICK_SEVERITY_WARNING : WICK_SEVERITY_ERROR;
}

static void
debug_str (Health *h, GString *out, WickStr str)
{
  wick_rust_debug_str (out, S (h, str), wick_document_str_len (h->doc, str));
}

static gboolean
blank (Health *h, WickStr str)
{
  return str == 0 || wick_document_str_is_blank (h->doc, str);
}

static int
compare_strs (WickDocument *doc, WickStr a, WickStr b)
{
  gsize la = wick_document_str_len (doc, a), lb = wick_document_str_len (doc, b);
  int c = memcmp (wick_document_str (doc, a), wick_document_str (doc, b), MIN (la, lb));

  if (c != 0)
    return c;
  return la < lb ? -1 : la > lb;
}

static inline guint64
saturating_add (guint64 a, guint64 b)
{
  return a > G_MAXUINT64 - b ? G_MAXUINT64 : a + b;
}

/* ---- provenance ------------------------------------------------------- */

static char *
provenance_error (Health *h)
{
  const WickTraceMeta *m = &h->doc->meta;
  const WickComparisonIdentityMeta *c = &m->comparison_identity;
  struct
  {
    WickStr value;
    const char *name;
  } required[] = {
    { m->run_id, "run_id" },         { m->correlation_id, "correlation_id" },
    { m->entrypoint, "entrypoint" }, { m->timestamp, "timestamp" },
    { m->device, "device" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (required); i++)
    if (blank (h, required[i].value))
      /* Translators: %s is a field of the trace's run metadata (run_id, device, ...), a name
       * kept as the trace spells it. */
      return g_strdup_printf (_ ("run metadata %s must not be empty"), required[i].name);
  if (m->capture_step == 0)
    /* Translators: capture_step is a field name of the trace, kept as it is. */
    return g_strdup (_ ("run metadata capture_step must be one-based"));
  if (m->warmup_steps >= m->capture_step)
    /* Translators: warmup_steps and capture_step are field names of the trace, kept as they
     * are; the numbers are their values. */
    return g_strdup_printf (_ ("run metadata warmup_steps %llu must be less than capture_step "
                               "%llu"),
                            (unsigned long long)m->warmup_steps,
                            (unsigned long long)m->capture_step);
  if (c->present)
    {
      struct
      {
        WickStr value;
        const char *name;
      } identity[] = {
        { c->workload_id, "workload_id" },   { c->model_id, "model_id" },
        { c->config_id, "config_id" },       { c->data_id, "data_id" },
        { c->seed_policy, "seed_policy" },   { c->precision, "precision" },
        { c->device_state, "device_state" },
      };
      for (gsize i = 0; i < G_N_ELEMENTS (identity); i++)
        if (blank (h, identity[i].value))
          /* Translators: "comparison identity" is the trace's comparison_identity object; %s
           * is one of its field names (workload_id, model_id, ...), kept as it is. */
          return g_strdup_printf (_ ("comparison identity %s must not be empty"),
                                  identity[i].name);
      if (c->implementation_id != 0 && blank (h, c->implementation_id))
        return g_strdup (
          /* Translators: implementation_id (and below pair_id, physical_batch,
           * accumulation_steps) are field names of the trace, kept as they are. */
          _ ("comparison identity implementation_id must not be empty when present"));
      if (c->pair_id != 0 && blank (h, c->pair_id))
        return g_strdup (_ ("comparison identity pair_id must not be empty when present"));
      if (c->physical_batch == 0)
        return g_strdup (_ ("comparison identity physical_batch must be positive"));
      if (c->accumulation_steps == 0)
        return g_strdup (_ ("comparison identity accumulation_steps must be positive"));
    }
  return NULL;
}

/* ---- spans ------------------------------------------------------------ */

typedef struct
{
  guint64 prefix; /* first 8 bytes, big-endian, zero padded */
  guint32 span;
} SpanSortKey;

static int
compare_span_keys (gconstpointer a, gconstpointer b, gpointer user_data)
{
  const SpanSortKey *x = a, *y = b;
  WickDocument *doc = user_data;
  const WickSpan *spans = (const WickSpan *)(gpointer)doc->spans->data;

  if (x->prefix != y->prefix)
    return x->prefix < y->prefix ? -1 : 1;
  return compare_strs (doc, spans[x->span].id, spans[y->span].id);
}

/* Spans in id byte order: most ids differ in their first eight bytes, so an
 * integer comparison decides and the strings are compared only on ties. */
static void
sort_spans_by_id (WickDocument *doc)
{
  const WickSpan *spans = (const WickSpan *)(gpointer)doc->spans->data;
  guint n = doc->spans->len;
  SpanSortKey *keys = g_new (SpanSortKey, MAX (1, n));

  for (guint i = 0; i < n; i++)
    {
      const guint8 *id = (const guint8 *)wick_document_str (doc, spans[i].id);
      gsize len = wick_document_str_len (doc, spans[i].id);
      guint64 prefix = 0;
      for (gsize k = 0; k < 8; k++)
        prefix = (prefix << 8) | (k < len ? id[k] : 0);
      keys[i].prefix = prefix;
      keys[i].span = i;
    }
  g_qsort_with_data (keys, (gint)n, sizeof (SpanSortKey), compare_span_keys, doc);
  g_free (doc->spans_by_id);
  doc->n_spans_by_id = n;
  doc->spans_by_id = g_new (guint32, MAX (1, n));
  for (guint i = 0; i < n; i++)
    doc->spans_by_id[i] = keys[i].span;
  g_free (keys);
}

enum
{
  WALK_UNKNOWN,
  WALK_ACTIVE,
  WALK_ACYCLIC,
  WALK_CYCLE
};

/* Resolves parent indices and depths; marks spans whose ancestor walk revisits
 * a span (members of a cycle and spans below one). */
static guint8 *
resolve_hierarchy (WickDocument *doc)
{
  WickSpan *spans = (WickSpan *)(gpointer)doc->spans->data;
  guint n = doc->spans->len;
  guint8 *state = g_new0 (guint8, MAX (1, n));
  gint32 *parent = g_new (gint32, MAX (1, n));
  g_autoptr (GArray) stack = g_array_new (FALSE, FALSE, sizeof (guint32));

  for (guint i = 0; i < n; i++)
    parent[i]
      = spans[i].parent_id ? (gint32)wick_id_map_lookup (&doc->span_ids, spans[i].parent_id) : -1;
  for (guint i = 0; i < n; i++)
    {
      gint32 j = (gint32)i;
      guint8 outcome;

      if (state[i] != WALK_UNKNOWN)
        continue;
      g_array_set_size (stack, 0);
      while (j >= 0 && state[j] == WALK_UNKNOWN)
        {
          state[j] = WALK_ACTIVE;
          g_array_append_val (stack, j);
          j = parent[j];
        }
      outcome = (j >= 0 && (state[j] == WALK_ACTIVE || state[j] == WALK_CYCLE)) ? WALK_CYCLE
                                                                                : WALK_ACYCLIC;
      for (gint k = (gint)stack->len - 1; k >= 0; k--)
        {
          guint32 s = g_array_index (stack, guint32, k);
          state[s] = outcome;
          if (outcome == WALK_CYCLE)
            {
              spans[s].parent = -1;
              spans[s].depth = 0;
            }
          else
            {
              spans[s].parent = parent[s];
              spans[s].depth
                = parent[s] < 0 ? 0 : (guint16)MIN (spans[parent[s]].depth + 1u, G_MAXUINT16);
            }
        }
    }
  g_free (parent);
  doc->resolved_records = doc->n_records + 1;
  return state;
}

void
wick_document_resolve_hierarchy (WickDocument *self)
{
  if (self->resolved_records == self->n_records + 1)
    return; /* nothing read since the last resolution */
  g_free (resolve_hierarchy (self));
}

static void
check_span (Health *h, guint i, const guint8 *state)
{
  WickDocument *doc = h->doc;
  const WickSpan *spans = (const WickSpan *)(gpointer)doc->spans->data;
  const WickSpan *span = &spans[i];
  const char *id = S (h, span->id);

  if (!(span->flags & WICK_SPAN_FLAG_CLOSED) && !h->live)
    add_issue (h, "open_span", failed_severity (h),
               /* Translators: %s is a span's id, as the trace spells it. */
               g_strdup_printf (h->failed ? _ ("span `%s` was interrupted")
                                          : _ ("span `%s` was not closed"),
                                id),
               WICK_RECORD_SPAN, i, id);
  else if (!(span->flags & WICK_SPAN_FLAG_CLOSED) && h->provisional)
    /* Translators: %s is a span's id; the run is still being written. */
    pending (h, "open_span", g_strdup_printf (_ ("span `%s` is still open"), id),
             WICK_RECORD_SPAN, i, id);
  if (span->flags & WICK_SPAN_FLAG_HAS_PARENT_ID)
    {
      gint64 p = wick_id_map_lookup (&doc->span_ids, span->parent_id);
      if (p < 0)
        add_issue (
          h, "unknown_parent", WICK_SEVERITY_ERROR,
          /* Translators: the span's id and its parent_id, as the trace spells them. */
          g_strdup_printf (_ ("span `%s` refers to missing parent `%s`"), id,
                           S (h, span->parent_id)),
          WICK_RECORD_SPAN, i, id);
      else if ((span->flags & WICK_SPAN_FLAG_CLOSED) && (spans[p].flags & WICK_SPAN_FLAG_CLOSED))
        {
          guint64 child_end = saturating_add (span->start_ns, span->duration_ns);
          guint64 parent_end = saturating_add (spans[p].start_ns, spans[p].duration_ns);
          if (span->start_ns < spans[p].start_ns || child_end > parent_end)
            add_issue (
              h, "child_outside_parent", WICK_SEVERITY_ERROR,
              /* Translators: the span's id and its parent's id: the child's time is not
               * inside its parent's. */
              g_strdup_printf (_ ("span `%s` lies outside parent `%s`"), id,
                               S (h, span->parent_id)),
              WICK_RECORD_SPAN, i, id);
        }
    }
  if (state[i] == WALK_CYCLE)
    add_issue (h, "span_cycle", WICK_SEVERITY_ERROR,
               /* Translators: %s is a span's id; following its parents leads back to it. */
               g_strdup_printf (_ ("span `%s` participates in a parent cycle"), id),
               WICK_RECORD_SPAN, i, id);
}

static void
check_spans (Health *h)
{
  WickDocument *doc = h->doc;
  const WickSpan *spans;
  guint roots = 0, measured = 0;
  guint8 *state;

  sort_spans_by_id (doc);
  state = resolve_hierarchy (doc);
  spans = (const WickSpan *)(gpointer)doc->spans->data;
  for (guint i = 0; i < doc->spans->len; i++)
    {
      roots += !(spans[i].flags & WICK_SPAN_FLAG_HAS_PARENT_ID);
      measured += !!(spans[i].flags & WICK_SPAN_FLAG_MEASURED);
    }
  if (roots != 1)
    error (h, "root_count",
           g_strdup_printf (_ ("expected exactly one root span, found %u"), roots));
  if (measured != 1 && !h->failed)
    error (h, "measurement_count",
           /* Translators: the measured region is the span marked "measured": true. */
           g_strdup_printf (_ ("expected exactly one measured region, found %u"), measured));
  for (guint k = 0; k < doc->n_spans_by_id; k++)
    check_span (h, doc->spans_by_id[k], state);
  g_free (state);
}

/* ---- evidence records ------------------------------------------------- */

static gint32
resolve_span (Health *h, WickStr span_id)
{
  return (gint32)wick_id_map_lookup (&h->doc->span_ids, span_id);
}

/* @message: the sentence, naming S (h, span_id); taken. */
static void
unknown_span (Health *h, char *message, WickStr span_id, WickRecordType type, guint index)
{
  add_issue (h, "unknown_span", WICK_SEVERITY_ERROR, message, type, index, S (h, span_id));
}

static void
check_evidence_spans (Health *h)
{
  WickDocument *doc = h->doc;

  for (guint i = 0; i < doc->ops->len; i++)
    {
      WickOp *op = &g_array_index (doc->ops, WickOp, i);
      if ((op->span = resolve_span (h, op->span_id)) < 0)
        unknown_span (h,
                      /* Translators: %s is the id of the span the record names; evidence:
                       * the trace's records of what ran inside a span. */
                      g_strdup_printf (_ ("operation evidence refers to missing span `%s`"),
                                       S (h, op->span_id)),
                      op->span_id, WICK_RECORD_OP, i);
    }
  for (guint i = 0; i < doc->tensors->len; i++)
    {
      WickTensor *t = &g_array_index (doc->tensors, WickTensor, i);
      if ((t->span = resolve_span (h, t->span_id)) < 0)
        unknown_span (h,
                      g_strdup_printf (_ ("tensor evidence refers to missing span `%s`"),
                                       S (h, t->span_id)),
                      t->span_id, WICK_RECORD_TENSOR, i);
    }
  for (guint i = 0; i < doc->tensor_stats->len; i++)
    {
      WickTensorStats *s = &g_array_index (doc->tensor_stats, WickTensorStats, i);
      if ((s->span = resolve_span (h, s->span_id)) < 0)
        unknown_span (h,
                      g_strdup_printf (_ ("tensor statistics evidence refers to missing span `%s`"),
                                       S (h, s->span_id)),
                      s->span_id, WICK_RECORD_TENSOR_STATS, i);
    }
  for (guint i = 0; i < doc->memory->len; i++)
    {
      WickMemoryEvent *m = &g_array_index (doc->memory, WickMemoryEvent, i);
      if ((m->span = resolve_span (h, m->span_id)) < 0)
        unknown_span (h,
                      g_strdup_printf (_ ("memory evidence refers to missing span `%s`"),
                                       S (h, m->span_id)),
                      m->span_id, WICK_RECORD_MEMORY, i);
    }
  for (guint i = 0; i < doc->device_intervals->len; i++)
    {
      WickDeviceInterval *d = &g_array_index (doc->device_intervals, WickDeviceInterval, i);
      if ((d->span = resolve_span (h, d->span_id)) < 0)
        unknown_span (h,
                      g_strdup_printf (_ ("device interval evidence refers to missing span `%s`"),
                                       S (h, d->span_id)),
                      d->span_id, WICK_RECORD_DEVICE_INTERVAL, i);
    }
}

static void
check_evidence_timing (Health *h)
{
  WickDocument *doc = h->doc;
  const WickSpan *spans = (const WickSpan *)(gpointer)doc->spans->data;

  for (guint i = 0; i < doc->device_intervals->len; i++)
    {
      const WickDeviceInterval *d = &g_array_index (doc->device_intervals, WickDeviceInterval, i);
      if (d->duration_ns == 0)
        add_issue (
          h, "empty_device_interval", WICK_SEVERITY_ERROR,
          /* Translators: %s is a span's id. */
          g_strdup_printf (_ ("device interval for `%s` has zero duration"), S (h, d->span_id)),
          WICK_RECORD_DEVICE_INTERVAL, i, S (h, d->span_id));
    }
  for (guint i = 0; i < doc->ops->len; i++)
    {
      const WickOp *op = &g_array_index (doc->ops, WickOp, i);
      const WickSpan *span;
      if (op->span < 0 || !((span = &spans[op->span])->flags & WICK_SPAN_FLAG_CLOSED))
        continue;
      if (op->timestamp_ns < span->start_ns
          || saturating_add (op->timestamp_ns, op->duration_ns)
               > saturating_add (span->start_ns, span->duration_ns))
        add_issue (h, "operation_outside_span", WICK_SEVERITY_ERROR,
                   /* Translators: an operation's name and its span's id. */
                   g_strdup_printf (_ ("operation `%s` lies outside span `%s`"),
                                    S (h, op->op_name), S (h, op->span_id)),
                   WICK_RECORD_OP, i, S (h, op->span_id));
    }
  for (guint i = 0; i < doc->memory->len; i++)
    {
      const WickMemoryEvent *m = &g_array_index (doc->memory, WickMemoryEvent, i);
      const WickSpan *span;
      if (m->span < 0 || !((span = &spans[m->span])->flags & WICK_SPAN_FLAG_CLOSED))
        continue;
      if (m->timestamp_ns < span->start_ns
          || m->timestamp_ns > saturating_add (span->start_ns, span->duration_ns))
        add_issue (h, "memory_outside_span", WICK_SEVERITY_ERROR,
                   /* Translators: a storage id, a timestamp in nanoseconds and a span's id. */
                   g_strdup_printf (_ ("memory event for storage `%s` at %llu ns lies outside "
                                       "span `%s`"),
                                    S (h, m->storage_id), (unsigned long long)m->timestamp_ns,
                                    S (h, m->span_id)),
                   WICK_RECORD_MEMORY, i, S (h, m->span_id));
    }
  for (guint i = 0; i < doc->device_memory->len; i++)
    {
      const WickDeviceMemorySample *s
        = &g_array_index (doc->device_memory, WickDeviceMemorySample, i);
      if (s->present == 0)
        add_issue (h, "empty_device_memory_sample", WICK_SEVERITY_ERROR,
                   /* Translators: %s is a device name (cuda:0, ...). */
                   g_strdup_printf (_ ("device-memory sample for `%s` contains no measurements"),
                                    S (h, s->device)),
                   WICK_RECORD_DEVICE_MEMORY, i, NULL);
    }
}

static void
check_edges (Health *h)
{
  WickDocument *doc = h->doc;
  const WickSpan *spans = (const WickSpan *)(gpointer)doc->spans->data;
  WickIdMap known;

  wick_id_map_init (&known);
  for (guint i = 0; i < doc->tensors->len; i++)
    wick_id_map_insert (&known, g_array_index (doc->tensors, WickTensor, i).tensor_id, 1);
  for (guint i = 0; i < doc->ops->len; i++)
    {
      const WickOp *op = &g_array_index (doc->ops, WickOp, i);
      const WickStr *inputs = wick_document_get_op_inputs (doc, op);
      for (guint j = 0; j < op->n_inputs; j++)
        wick_id_map_insert (&known, inputs[j], 1);
      if (op->output != 0)
        wick_id_map_insert (&known, op->output, 1);
    }

  for (guint i = 0; i < doc->edges->len; i++)
    {
      const WickEdge *e = &g_array_index (doc->edges, WickEdge, i);
      const char *from = S (h, e->from), *to = S (h, e->to);
      if (e->edge_kind == WICK_EDGE_CALL)
        {
          gint64 f = wick_id_map_lookup (&doc->span_ids, e->from);
          gint64 t = wick_id_map_lookup (&doc->span_ids, e->to);
          if (f < 0 || t < 0)
            {
              add_issue (
                h, "unknown_call_edge_span", WICK_SEVERITY_ERROR,
                /* Translators: a call edge from one span to another: the two span ids. */
                g_strdup_printf (_ ("call edge `%s` -> `%s` refers to a missing span"), from, to),
                WICK_RECORD_EDGE, i, NULL);
              continue;
            }
          if (!(spans[t].flags & WICK_SPAN_FLAG_HAS_PARENT_ID) || spans[t].parent_id != e->from)
            add_issue (h, "call_edge_hierarchy_mismatch", WICK_SEVERITY_ERROR,
                       /* Translators: the call edge's two span ids. */
                       g_strdup_printf (_ ("call edge `%s` -> `%s` does not match the span "
                                           "hierarchy"),
                                        from, to),
                       WICK_RECORD_EDGE, i, to);
          if ((spans[t].flags & WICK_SPAN_FLAG_CLOSED)
              && e->host_duration_ns != spans[t].duration_ns)
            add_issue (h, "call_edge_duration_mismatch", WICK_SEVERITY_ERROR,
                       /* Translators: the call edge's two span ids, then the durations in
                        * nanoseconds the edge and the called span report. */
                       g_strdup_printf (_ ("call edge `%s` -> `%s` reports %llu ns but the span "
                                           "reports %llu ns"),
                                        from, to, (unsigned long long)e->host_duration_ns,
                                        (unsigned long long)spans[t].duration_ns),
                       WICK_RECORD_EDGE, i, to);
        }
      else if (wick_document_str_len (doc, e->from) == 0 || wick_document_str_len (doc, e->to) == 0)
        add_issue (h, "empty_data_edge_endpoint", WICK_SEVERITY_ERROR,
                   g_strdup (_ ("data-edge tensor IDs cannot be empty")), WICK_RECORD_EDGE, i,
                   NULL);
      else if (wick_id_map_lookup (&known, e->from) < 0 || wick_id_map_lookup (&known, e->to) < 0)
        add_issue (
          h, "unknown_data_edge_tensor", WICK_SEVERITY_ERROR,
          /* Translators: a data edge between two tensors: the two tensor ids. */
          g_strdup_printf (_ ("data edge `%s` -> `%s` refers to unknown tensor evidence"), from,
                           to),
          WICK_RECORD_EDGE, i, NULL);
    }
  wick_id_map_clear (&known);
}

/* ---- memory pairing (§6.1) -------------------------------------------- */

/* Live storages: an open-addressing map from (device, storage) to a slot in
 * `live`; aliases beyond the first tensor id are chained in `aliases`.
 * Removal leaves a tombstone. */
typedef struct
{
  guint64 key; /* device << 32 | storage_id; 0 empty, 1 tombstone */
  guint64 bytes;
  WickStr first_tensor;
  gint32 more; /* index into aliases, -1 when none */
} LiveStorage;

typedef struct
{
  WickStr tensor;
  gint32 next;
} Alias;

typedef struct
{
  LiveStorage *slots;
  gsize n_slots;
  gsize n_used; /* live + tombstones */
  gsize n_live;
  GArray *aliases;
} LiveMap;

#define LIVE_EMPTY 0
#define LIVE_TOMBSTONE 1

static gsize
live_hash (guint64 key)
{
  key *= 0x9E3779B97F4A7C15ull;
  return (gsize)(key >> 17);
}

static LiveStorage *
live_find (LiveMap *map, guint64 key, gboolean for_insert)
{
  gsize mask = map->n_slots - 1;
  gsize j = live_hash (key) & mask;
  LiveStorage *tombstone = NULL;

  for (;;)
    {
      LiveStorage *slot = &map->slots[j];
      if (slot->key == key)
        return slot;
      if (slot->key == LIVE_EMPTY)
        return for_insert ? (tombstone ? tombstone : slot) : NULL;
      if (slot->key == LIVE_TOMBSTONE && tombstone == NULL)
        tombstone = slot;
      j = (j + 1) & mask;
    }
}

static void
live_rehash (LiveMap *map)
{
  LiveMap bigger = { NULL, map->n_slots, 0, 0, map->aliases };

  while (bigger.n_slots < 4 * (map->n_live + 1))
    bigger.n_slots *= 2;
  bigger.slots = g_new0 (LiveStorage, bigger.n_slots);
  for (gsize i = 0; i < map->n_slots; i++)
    if (map->slots[i].key > LIVE_TOMBSTONE)
      {
        *live_find (&bigger, map->slots[i].key, TRUE) = map->slots[i];
        bigger.n_used++;
        bigger.n_live++;
      }
  g_free (map->slots);
  *map = bigger;
}

static gboolean
live_has_tensor (LiveMap *map, const LiveStorage *storage, WickStr tensor)
{
  if (storage->first_tensor == tensor)
    return TRUE;
  for (gint32 a = storage->more; a >= 0; a = g_array_index (map->aliases, Alias, a).next)
    if (g_array_index (map->aliases, Alias, a).tensor == tensor)
      return TRUE;
  return FALSE;
}

static int
compare_memory_time (gconstpointer a, gconstpointer b, gpointer user_data)
{
  const WickMemoryEvent *events = user_data;
  guint64 x = events[*(const guint32 *)a].timestamp_ns;
  guint64 y = events[*(const guint32 *)b].timestamp_ns;

  return x < y ? -1 : x > y;
}

/* Memory events stably sorted by timestamp_ns (ties keep file order). */
static guint32 *
memory_sorted_indices (WickDocument *doc)
{
  const WickMemoryEvent *events = (const WickMemoryEvent *)(gpointer)doc->memory->data;
  guint n = doc->memory->len;
  guint32 *order = g_new (guint32, MAX (1, n));
  gboolean sorted = TRUE;

  for (guint i = 0; i < n; i++)
    {
      order[i] = i;
      if (i > 0 && events[i].timestamp_ns < events[i - 1].timestamp_ns)
        sorted = FALSE;
    }
  if (!sorted)
    g_qsort_with_data (order, (gint)n, sizeof (guint32), compare_memory_time, (gpointer)events);
  return order;
}

/* What the trace says was lost: the wick_lost and wick_dropped records'
 * counts (extension mode), else the terminal's sentence of libwick's
 * formatter ("records were lost: D dropped by the recorder, L lost by the
 * reader", a strict trace's only account). */
static guint64
records_lost (Health *h)
{
  guint n = 0;
  const WickExtensionRecord *records = wick_document_get_extensions (h->doc, &n);
  guint64 lost = 0;
  for (guint i = 0; i < n; i++)
    {
      const char *kind = S (h, records[i].kind);
      if (strcmp (kind, "wick_lost") != 0 && strcmp (kind, "wick_dropped") != 0)
        continue;
      const char *count = strstr (S (h, records[i].json), "\"count\":");
      guint64 value = count != NULL ? g_ascii_strtoull (count + 8, NULL, 10) : 1;
      lost += MAX (value, 1);
    }
  if (lost > 0 || h->doc->terminal_reason == 0)
    return lost;
  const char *sentence = strstr (S (h, h->doc->terminal_reason), "records were lost: ");
  unsigned long long dropped = 0, reader = 0;
  if (sentence != NULL
      && sscanf (sentence, "records were lost: %llu dropped by the recorder, %llu lost by the reader",
                 &dropped, &reader)
           == 2)
    lost = (guint64)dropped + (guint64)reader;
  return lost;
}

/* A pairing error, or, after losses, one more event counted as unpaired. */
static gboolean
counted_as_lost (Health *h)
{
  if (h->records_lost == 0)
    return FALSE;
  h->unpaired_after_loss++;
  return TRUE;
}

static void
pair_alloc (Health *h, LiveMap *map, const WickMemoryEvent *m, guint32 i, guint64 key)
{
  LiveStorage *storage = live_find (map, key, FALSE);

  if (storage == NULL)
    {
      storage = live_find (map, key, TRUE);
      if (storage->key == LIVE_EMPTY)
        map->n_used++;
      *storage = (LiveStorage){ key, m->bytes, m->tensor_id, -1 };
      map->n_live++;
      if (map->n_used * 2 > map->n_slots)
        live_rehash (map);
    }
  else if ((storage->bytes != m->bytes || live_has_tensor (map, storage, m->tensor_id))
           && counted_as_lost (h))
    {
      /* its free was lost: the storage was reused; pair from here on */
      storage->bytes = m->bytes;
      storage->first_tensor = m->tensor_id;
      storage->more = -1;
    }
  else if (storage->bytes != m->bytes)
    add_issue (h, "allocation_size_mismatch", WICK_SEVERITY_ERROR,
               /* Translators: a storage id and a device name (cuda:0, ...). */
               g_strdup_printf (_ ("storage `%s` on `%s` has conflicting allocation sizes"),
                                S (h, m->storage_id), S (h, m->device)),
               WICK_RECORD_MEMORY, i, NULL);
  else if (live_has_tensor (map, storage, m->tensor_id))
    add_issue (h, "duplicate_allocation", WICK_SEVERITY_ERROR,
               /* Translators: a tensor id, a storage id and a device name. */
               g_strdup_printf (_ ("tensor `%s` repeated an allocation for storage `%s` on `%s`"),
                                S (h, m->tensor_id), S (h, m->storage_id), S (h, m->device)),
               WICK_RECORD_MEMORY, i, NULL);
  else
    {
      Alias alias = { m->tensor_id, storage->more };
      storage->more = (gint32)map->aliases->len;
      g_array_append_val (map->aliases, alias);
    }
}

static void
pair_free (Health *h, LiveMap *map, const WickMemoryEvent *m, guint32 i, guint64 key)
{
  LiveStorage *storage = live_find (map, key, FALSE);
  guint64 bytes;

  if (storage == NULL && counted_as_lost (h))
    return; /* its allocation was lost */
  if (storage == NULL)
    {
      add_issue (h, "unpaired_free", WICK_SEVERITY_ERROR,
                 /* Translators: a storage id and a device name. */
                 g_strdup_printf (_ ("storage `%s` on `%s` was freed while not live"),
                                  S (h, m->storage_id), S (h, m->device)),
                 WICK_RECORD_MEMORY, i, NULL);
      return;
    }
  bytes = storage->bytes;
  storage->key = LIVE_TOMBSTONE;
  map->n_live--;
  if (bytes != m->bytes && !counted_as_lost (h))
    add_issue (h, "allocation_size_mismatch", WICK_SEVERITY_ERROR,
               /* Translators: a storage id, then the bytes allocated and the bytes freed. */
               g_strdup_printf (_ ("storage `%s` allocated %llu bytes but freed %llu"),
                                S (h, m->storage_id), (unsigned long long)bytes,
                                (unsigned long long)m->bytes),
               WICK_RECORD_MEMORY, i, NULL);
}

static void
check_memory_pairing (Health *h)
{
  WickDocument *doc = h->doc;
  const WickMemoryEvent *events = (const WickMemoryEvent *)(gpointer)doc->memory->data;
  guint32 *order = memory_sorted_indices (doc);
  LiveMap map
    = { g_new0 (LiveStorage, 1024), 1024, 0, 0, g_array_new (FALSE, FALSE, sizeof (Alias)) };

  h->records_lost = records_lost (h);

  for (guint k = 0; k < doc->memory->len; k++)
    {
      guint32 i = order[k];
      const WickMemoryEvent *m = &events[i];
      /* WickStr offsets are >= 4, so a key is never 0 or 1 */
      guint64 key = ((guint64)m->device << 32) | m->storage_id;

      if (m->action == WICK_MEMORY_ALLOC)
        pair_alloc (h, &map, m, i, key);
      else
        pair_free (h, &map, m, i, key);
    }
  g_free (order);
  if (h->unpaired_after_loss > 0)
    warning (h, "memory_unpaired_after_loss",
             g_strdup_printf (
               g_dngettext (GETTEXT_PACKAGE,
                            "%lu memory event could not be paired: %llu records were lost "
                            "(allocations or frees among them), so it is counted as lost",
                            "%lu memory events could not be paired: %llu records were lost "
                            "(allocations or frees among them), so they are counted as lost",
                            (gulong)h->unpaired_after_loss),
               (gulong)h->unpaired_after_loss, (unsigned long long)h->records_lost));
  if (map.n_live > 0 && h->provisional)
    pending (h, "retained_allocations",
             g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%lu storage is live now",
                                           "%lu storages are live now", map.n_live),
                              (gulong)map.n_live),
             WICK_RECORD_NONE, -1, NULL);
  else if (map.n_live > 0)
    warning (
      h, "retained_allocations",
      g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%lu storage remained live at capture end",
                                    "%lu storages remained live at capture end", map.n_live),
                       (gulong)map.n_live));
  g_free (map.slots);
  g_array_unref (map.aliases);
}

/* Memory records whose "wick_address" is not an address (extension mode):
 * read as records with no address, said here, never a load failure. */
static void
check_addresses (Health *h)
{
  WickDocument *doc = h->doc;

  if (doc->bad_addresses == 0)
    return;
  add_issue (h, "wick_address_invalid", WICK_SEVERITY_WARNING,
             g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                           /* Translators: the count, the first one's line and
                                            * what is wrong with it ("not a string", ...). */
                                           "%llu memory record has a wick_address that is not "
                                           "a device address, so none is known for it "
                                           "(line %llu: %s)",
                                           "%llu memory records have a wick_address that is not "
                                           "a device address, so none is known for them "
                                           "(the first at line %llu: %s)",
                                           (gulong)MIN (doc->bad_addresses, G_MAXULONG)),
                              (unsigned long long)doc->bad_addresses,
                              (unsigned long long)doc->bad_address_line,
                              wick_address_problem_to_string (doc->bad_address_problem)),
             WICK_RECORD_MEMORY, doc->bad_address_index, NULL);
}

/* ---- gradients (§7) --------------------------------------------------- */

static gboolean
norm_is_valid (const WickGradient *g)
{
  switch (g->state)
    {
      case WICK_GRADIENT_PRESENT:
        return g->has_norm && isfinite (g->norm) && g->norm > 0.0;
      case WICK_GRADIENT_ZERO:
        return g->has_norm && g->norm == 0.0 && !signbit (g->norm);
      default:
        return !g->has_norm;
    }
}

static void
gradient_key_debug (Health *h, GString *out, WickStr root, WickStr key)
{
  g_string_append_c (out, '(');
  debug_str (h, out, root);
  g_string_append (out, ", ");
  debug_str (h, out, key);
  g_string_append_c (out, ')');
}

static void
check_gradient_events (Health *h)
{
  WickDocument *doc = h->doc;
  WickIdMap seen;

  wick_id_map_init (&seen);
  for (guint i = 0; i < doc->gradients->len; i++)
    {
      const WickGradient *g = &g_array_index (doc->gradients, WickGradient, i);
      const char *id = S (h, g->event_id);
      if (blank (h, g->event_id))
        add_issue (h, "empty_gradient_event_id", WICK_SEVERITY_ERROR,
                   g_strdup (_ ("gradient event IDs must not be empty")), WICK_RECORD_GRADIENT,
                   i, id);
      if (blank (h, g->root) || blank (h, g->key))
        add_issue (h, "empty_gradient_parameter_key", WICK_SEVERITY_ERROR,
                   g_strdup (_ ("gradient roots and parameter keys must not be empty")),
                   WICK_RECORD_GRADIENT, i, id);
      if (wick_id_map_insert (&seen, g->event_id, i) != i)
        {
          g_autoptr (GString) quoted = g_string_new (NULL);
          debug_str (h, quoted, g->event_id);
          add_issue (h, "duplicate_gradient_event_id", WICK_SEVERITY_ERROR,
                     /* Translators: %s is the event id, quoted ("g1"). */
                     g_strdup_printf (_ ("gradient event ID %s occurs more than once"),
                                      quoted->str),
                     WICK_RECORD_GRADIENT, i, id);
        }
      if (!norm_is_valid (g))
        {
          g_autoptr (GString) key = g_string_new (NULL);
          g_autoptr (GString) norm = g_string_new (NULL);
          gradient_key_debug (h, key, g->root, g->key);
          if (g->has_norm)
            {
              g_string_append (norm, "Some(");
              wick_rust_debug_f64 (norm, g->norm);
              g_string_append_c (norm, ')');
            }
          else
            g_string_append (norm, "None");
          add_issue (h, "gradient_state_norm_inconsistent", WICK_SEVERITY_ERROR,
                     /* Translators: the gradient's ("root", "key") pair, its state (present,
                      * missing, zero or non_finite: kept as they are) and its norm as
                      * candle-graph writes it (Some(0.5) or None). */
                     g_strdup_printf (_ ("gradient %s state `%s` is inconsistent with norm %s"),
                                      key->str, wick_gradient_state_to_string ((WickGradientState)g->state), norm->str),
                     WICK_RECORD_GRADIENT, i, id);
        }
    }
  wick_id_map_clear (&seen);
}

char *
wick_manifest_digest (WickDocument *self, const GArray *expected)
{
  static const char domain[] = "candle-graph/gradient-manifest/1";
  g_autoptr (GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  guint8 zero = 0;

  g_checksum_update (sum, (const guchar *)domain, sizeof domain - 1);
  g_checksum_update (sum, &zero, 1);
  for (guint i = 0; i < expected->len; i++)
    {
      const WickExpectedGradientEntry *e = &g_array_index (expected, WickExpectedGradientEntry, i);
      WickStr parts[3] = { e->root, e->key, e->family };
      for (int k = 0; k < 3; k++)
        {
          guint64 len = wick_document_str_len (self, parts[k]);
          guint8 le[8];
          for (int b = 0; b < 8; b++)
            le[b] = (guint8)(len >> (8 * b));
          g_checksum_update (sum, le, 8);
          g_checksum_update (sum, (const guchar *)wick_document_str (self, parts[k]), (gssize)len);
        }
    }
  return g_strconcat ("sha256:", g_checksum_get_string (sum), NULL);
}

static guint
family_members (WickDocument *doc, WickStr family)
{
  guint n = 0;

  for (guint i = 0; i < doc->meta.expected->len; i++)
    n += g_array_index (doc->meta.expected, WickExpectedGradientEntry, i).family == family;
  return n;
}

static int
compare_strs_qsort (gconstpointer a, gconstpointer b, gpointer doc)
{
  return compare_strs (doc, *(const WickStr *)a, *(const WickStr *)b);
}

char *
wick_gradient_contract_validate (WickDocument *self)
{
  const WickTraceMeta *m = &self->meta;
  Health hh = { self, NULL, FALSE, FALSE };
  Health *h = &hh;
  g_autofree char *digest = NULL;
  g_autoptr (GHashTable) declared = NULL;
  g_autoptr (GArray) used = NULL;

  if (m->expected->len == 0)
    return g_strdup (_ ("gradient manifest must not be empty"));
  if (m->families->len == 0)
    return g_strdup (_ ("gradient families must not be empty"));
  digest = wick_manifest_digest (self, m->expected);
  if (strcmp (digest, S (h, m->manifest_sha256)) != 0
      || wick_document_str_len (self, m->manifest_sha256) != strlen (digest))
    return g_strdup (_ ("gradient manifest SHA-256 does not match its ordered parameter manifest"));

  declared = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  for (guint i = 0; i < m->expected->len; i++)
    {
      WickExpectedGradientEntry *e = &g_array_index (m->expected, WickExpectedGradientEntry, i);
      gint64 *key = g_new (gint64, 1);
      if (blank (h, e->root) || blank (h, e->key) || blank (h, e->family))
        {
          g_free (key);
          return g_strdup (_ ("gradient manifest root, key, and family must not be empty"));
        }
      *key = (gint64)(((guint64)e->root << 32) | e->key);
      if (g_hash_table_contains (declared, key))
        {
          g_autoptr (GString) pair = g_string_new (NULL);
          gradient_key_debug (h, pair, e->root, e->key);
          g_free (key);
          /* Translators: %s is a ("root", "key") pair of the manifest. */
          return g_strdup_printf (_ ("gradient manifest declares %s more than once"), pair->str);
        }
      g_hash_table_add (declared, key);
    }

  for (guint i = 0; i < m->families->len; i++)
    {
      const WickGradientFamilyContract *f
        = &g_array_index (m->families, WickGradientFamilyContract, i);
      guint members;
      GString *name = g_string_new (NULL);
      debug_str (h, name, f->family);
      if (blank (h, f->family))
        {
          g_string_free (name, TRUE);
          return g_strdup (_ ("gradient family name must not be empty"));
        }
      for (guint j = 0; j < i; j++)
        if (g_array_index (m->families, WickGradientFamilyContract, j).family == f->family)
          {
            /* Translators: %s is a gradient family's name, quoted ("embed"). */
            char *msg
              = g_strdup_printf (_ ("gradient family %s is declared more than once"), name->str);
            g_string_free (name, TRUE);
            return msg;
          }
      members = family_members (self, f->family);
      if (members == 0)
        {
          char *msg
            = g_strdup_printf (_ ("gradient family %s has no manifest members"), name->str);
          g_string_free (name, TRUE);
          return msg;
        }
      if (f->expectation == WICK_EXPECT_INACTIVE && f->min_present != 0)
        {
          char *msg
            /* Translators: %s is a family's name; min_present is a field, kept as it is. */
            = g_strdup_printf (_ ("inactive gradient family %s must have min_present=0"),
                               name->str);
          g_string_free (name, TRUE);
          return msg;
        }
      if (f->expectation != WICK_EXPECT_INACTIVE
          && (f->min_present < 1 || f->min_present > members))
        {
          /* Translators: %s is a family's name; min_present is a field, kept as it is;
           * 1..=%u is the range of values it may take (1 to the family's members). */
          char *msg = g_strdup_printf (_ ("active or data-conditional gradient family %s needs "
                                          "min_present in 1..=%u"),
                                       name->str, members);
          g_string_free (name, TRUE);
          return msg;
        }
      g_string_free (name, TRUE);
    }

  used = g_array_new (FALSE, FALSE, sizeof (WickStr));
  for (guint i = 0; i < m->expected->len; i++)
    g_array_append_val (used, g_array_index (m->expected, WickExpectedGradientEntry, i).family);
  g_array_sort_with_data (used, compare_strs_qsort, self);
  for (guint i = 0; i < used->len; i++)
    {
      WickStr family = g_array_index (used, WickStr, i);
      gboolean has_contract = FALSE;
      if (i > 0 && g_array_index (used, WickStr, i - 1) == family)
        continue;
      for (guint j = 0; j < m->families->len; j++)
        has_contract |= g_array_index (m->families, WickGradientFamilyContract, j).family == family;
      if (!has_contract)
        {
          g_autoptr (GString) quoted = g_string_new (NULL);
          debug_str (h, quoted, family);
          /* Translators: %s is a gradient family's name, quoted ("embed"). */
          return g_strdup_printf (_ ("gradient manifest family %s has no family contract"),
                                  quoted->str);
        }
    }
  return NULL;
}

typedef struct
{
  WickStr root, key;
  guint count;
  guint first;
} ObservedKey;

static int
compare_observed (gconstpointer a, gconstpointer b, gpointer doc)
{
  const ObservedKey *x = a, *y = b;
  int c = compare_strs (doc, x->root, y->root);

  return c != 0 ? c : compare_strs (doc, x->key, y->key);
}

/* (root, key) -> ObservedKey, in sorted order; also a lookup table. */
static GArray *
observe_gradients (WickDocument *doc, GHashTable **index_out)
{
  GArray *observed = g_array_new (FALSE, FALSE, sizeof (ObservedKey));
  GHashTable *index = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);

  for (guint i = 0; i < doc->gradients->len; i++)
    {
      const WickGradient *g = &g_array_index (doc->gradients, WickGradient, i);
      gint64 key = (gint64)(((guint64)g->root << 32) | g->key);
      gpointer slot;
      if (g_hash_table_lookup_extended (index, &key, NULL, &slot))
        g_array_index (observed, ObservedKey, GPOINTER_TO_UINT (slot)).count++;
      else
        {
          ObservedKey o = { g->root, g->key, 1, i };
          g_hash_table_insert (index, g_memdup2 (&key, sizeof key),
                               GUINT_TO_POINTER (observed->len));
          g_array_append_val (observed, o);
        }
    }
  g_array_sort_with_data (observed, compare_observed, doc);
  g_hash_table_remove_all (index);
  for (guint i = 0; i < observed->len; i++)
    {
      const ObservedKey *o = &g_array_index (observed, ObservedKey, i);
      gint64 key = (gint64)(((guint64)o->root << 32) | o->key);
      g_hash_table_insert (index, g_memdup2 (&key, sizeof key), GUINT_TO_POINTER (i));
    }
  *index_out = index;
  return observed;
}

static void
check_manifest (Health *h)
{
  WickDocument *doc = h->doc;
  const WickTraceMeta *m = &doc->meta;
  GHashTable *index;
  GArray *observed = observe_gradients (doc, &index);
  g_autoptr (GHashTable) expected
    = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);

  for (guint i = 0; i < m->expected->len; i++)
    {
      const WickExpectedGradientEntry *e
        = &g_array_index (m->expected, WickExpectedGradientEntry, i);
      gint64 key = (gint64)(((guint64)e->root << 32) | e->key);
      g_hash_table_add (expected, g_memdup2 (&key, sizeof key));
    }
  for (guint i = 0; i < observed->len; i++)
    {
      const ObservedKey *o = &g_array_index (observed, ObservedKey, i);
      gint64 key = (gint64)(((guint64)o->root << 32) | o->key);
      const char *id = S (h, g_array_index (doc->gradients, WickGradient, o->first).event_id);
      if (o->count != 1)
        {
          g_autoptr (GString) pair = g_string_new (NULL);
          gradient_key_debug (h, pair, o->root, o->key);
          add_issue (h, "gradient_manifest_duplicate_key", WICK_SEVERITY_ERROR,
                     g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                                   /* Translators: a ("root", "key") pair and
                                                    * how often it was recorded (two or
                                                    * more). */
                                                   "gradient %s occurs %u time; expected "
                                                   "exactly once",
                                                   "gradient %s occurs %u times; expected "
                                                   "exactly once",
                                                   o->count),
                                      pair->str, o->count),
                     WICK_RECORD_GRADIENT, o->first, id);
        }
      if (!g_hash_table_contains (expected, &key))
        {
          g_autoptr (GString) pair = g_string_new (NULL);
          gradient_key_debug (h, pair, o->root, o->key);
          add_issue (h, "gradient_manifest_undeclared_key", WICK_SEVERITY_ERROR,
                     /* Translators: %s is a ("root", "key") pair. */
                     g_strdup_printf (_ ("gradient %s is absent from the manifest"), pair->str),
                     WICK_RECORD_GRADIENT, o->first, id);
        }
    }
  guint not_yet = 0;
  for (guint i = 0; i < m->expected->len; i++)
    {
      const WickExpectedGradientEntry *e
        = &g_array_index (m->expected, WickExpectedGradientEntry, i);
      gint64 key = (gint64)(((guint64)e->root << 32) | e->key);
      if (!g_hash_table_contains (index, &key) && h->provisional)
        not_yet++;
      else if (!g_hash_table_contains (index, &key))
        {
          g_autoptr (GString) pair = g_string_new (NULL);
          gradient_key_debug (h, pair, e->root, e->key);
          add_issue (h, "gradient_manifest_missing_key", failed_severity (h),
                     /* Translators: %s is a ("root", "key") pair of the manifest. */
                     g_strdup_printf (_ ("manifest gradient %s was not captured"), pair->str),
                     WICK_RECORD_NONE, -1, NULL);
        }
    }
  /* While the run goes on, one issue counts what has not arrived yet. */
  if (not_yet > 0)
    pending (h, "gradient_manifest_missing_key",
             g_strdup_printf (
               g_dngettext (GETTEXT_PACKAGE, "%u of %u manifest gradient not captured yet",
                            "%u of %u manifest gradients not captured yet", m->expected->len),
               not_yet, m->expected->len),
             WICK_RECORD_NONE, -1, NULL);

  for (guint i = 0; i < m->families->len; i++)
    {
      const WickGradientFamilyContract *f
        = &g_array_index (m->families, WickGradientFamilyContract, i);
      guint expected_members = 0, members = 0, present = 0, attached = 0, non_finite = 0;
      gboolean complete_family;
      GString *name = g_string_new (NULL);

      debug_str (h, name, f->family);
      for (guint j = 0; j < m->expected->len; j++)
        {
          const WickExpectedGradientEntry *e
            = &g_array_index (m->expected, WickExpectedGradientEntry, j);
          gint64 key = (gint64)(((guint64)e->root << 32) | e->key);
          gpointer slot;
          const WickGradient *g;
          if (e->family != f->family)
            continue;
          expected_members++;
          if (!g_hash_table_lookup_extended (index, &key, NULL, &slot))
            continue;
          g = &g_array_index (doc->gradients, WickGradient,
                              g_array_index (observed, ObservedKey, GPOINTER_TO_UINT (slot)).first);
          members++;
          present += g->state == WICK_GRADIENT_PRESENT;
          attached += g->state != WICK_GRADIENT_MISSING;
          non_finite += g->state == WICK_GRADIENT_NON_FINITE;
        }
      complete_family = members == expected_members;
      if (non_finite > 0)
        error (h, "gradient_family_non_finite",
               g_strdup_printf (
                 g_dngettext (GETTEXT_PACKAGE, "gradient family %s contains %u non-finite gradient",
                              "gradient family %s contains %u non-finite gradients", non_finite),
                 name->str, non_finite));
      if (h->provisional && f->expectation == WICK_EXPECT_ACTIVE && present < f->min_present)
        pending (h, "gradient_active_family_below_minimum",
                 g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                               "active gradient family %s has %u present gradient "
                                               "so far; requires at least %llu",
                                               "active gradient family %s has %u present gradients "
                                               "so far; requires at least %llu",
                                               present),
                                  name->str, present, (unsigned long long)f->min_present),
                 WICK_RECORD_NONE, -1, NULL);
      else if (f->expectation == WICK_EXPECT_ACTIVE && (!h->failed || complete_family)
               && present < f->min_present)
        error (h, "gradient_active_family_below_minimum",
               g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                             "active gradient family %s has %u present gradient; "
                                             "requires at least %llu",
                                             "active gradient family %s has %u present gradients; "
                                             "requires at least %llu",
                                             present),
                                name->str, present, (unsigned long long)f->min_present));
      else if (f->expectation == WICK_EXPECT_INACTIVE && attached > 0)
        error (
          h, "gradient_inactive_family_leakage",
          g_strdup_printf (
            g_dngettext (GETTEXT_PACKAGE, "inactive gradient family %s has %u attached gradient",
                         "inactive gradient family %s has %u attached gradients", attached),
            name->str, attached));
      else if (h->provisional && f->expectation == WICK_EXPECT_DATA_CONDITIONAL && present > 0
               && present < f->min_present)
        pending (h, "gradient_conditional_family_below_minimum",
                 g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                               "data-conditional gradient family %s was attached "
                                               "but has %u present gradient so far; requires at "
                                               "least %llu",
                                               "data-conditional gradient family %s was attached "
                                               "but has %u present gradients so far; requires at "
                                               "least %llu",
                                               present),
                                  name->str, present, (unsigned long long)f->min_present),
                 WICK_RECORD_NONE, -1, NULL);
      else if (f->expectation == WICK_EXPECT_DATA_CONDITIONAL && (!h->failed || complete_family)
               && present > 0 && present < f->min_present)
        error (h, "gradient_conditional_family_below_minimum",
               g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                             "data-conditional gradient family %s was attached "
                                             "but has %u present gradient; requires at least "
                                             "%llu",
                                             "data-conditional gradient family %s was attached "
                                             "but has %u present gradients; requires at least "
                                             "%llu",
                                             present),
                                name->str, present, (unsigned long long)f->min_present));
      g_string_free (name, TRUE);
    }
  g_hash_table_unref (index);
  g_array_unref (observed);
}

static void
check_gradients (Health *h)
{
  WickDocument *doc = h->doc;
  const WickTraceMeta *m = &doc->meta;
  char *contract_error;

  check_gradient_events (h);
  if (m->gradients == WICK_COVERAGE_COMPLETE && !m->has_gradient_contract)
    {
      error (h, "gradient_contract_missing",
             g_strdup (_ ("complete gradient coverage requires an exact gradient contract")));
      return;
    }
  if (m->gradients != WICK_COVERAGE_COMPLETE && m->has_gradient_contract)
    {
      error (h, "gradient_contract_without_complete_coverage",
             g_strdup (
               _ ("an exact gradient contract requires complete declared gradient coverage")));
      return;
    }
  if (!m->has_gradient_contract)
    return;
  if ((contract_error = wick_gradient_contract_validate (doc)) != NULL)
    {
      error (h, "gradient_contract_invalid", contract_error);
      return;
    }
  check_manifest (h);
}

/* ---- planes and labels ------------------------------------------------ */

static guint
step_count (WickDocument *doc, WickStep step)
{
  guint n = 0;

  for (guint i = 0; i < doc->spans->len; i++)
    n += g_array_index (doc->spans, WickSpan, i).step == step;
  return n;
}

static void
check_planes (Health *h)
{
  WickDocument *doc = h->doc;
  gboolean train = doc->meta.phase == WICK_PHASE_TRAIN;
  struct
  {
    gboolean empty;
    const char *code, *message;
  } planes[] = {
    { doc->ops->len == 0, "operations_absent", N_ ("no operation evidence was captured") },
    { doc->tensors->len == 0, "tensors_absent", N_ ("no tensor checkpoints were captured") },
    { doc->memory->len == 0, "logical_memory_absent", N_ ("no logical storage events were captured") },
    { doc->device_memory->len == 0, "physical_memory_absent",
      N_ ("no physical device-memory samples were captured") },
    { doc->device_intervals->len == 0, "device_timing_absent",
      N_ ("no device timing intervals were captured") },
    { train && doc->gradients->len == 0, "gradients_absent",
      N_ ("no gradient facts were captured for this training run") },
    { train && step_count (doc, WICK_STEP_FORWARD) == 0, "forward_absent",
      N_ ("no forward span was tagged") },
    { train && step_count (doc, WICK_STEP_BACKWARD) == 0, "backward_absent",
      N_ ("no backward span was tagged") },
    { train && step_count (doc, WICK_STEP_OPTIMIZER) == 0, "optimizer_absent",
      N_ ("no optimizer span was tagged") },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (planes); i++)
    if (planes[i].empty)
      warning (h, planes[i].code, g_strdup (_ (planes[i].message)));
}

static gboolean
list_contains (const WickStr *list, guint n, WickStr s)
{
  for (guint i = 0; i < n; i++)
    if (list[i] == s)
      return TRUE;
  return FALSE;
}

static void
label_issue (Health *h, const char *code, char *message)
{
  add_issue (h, code, failed_severity (h), message, WICK_RECORD_NONE, -1, NULL);
}

static void
check_required_labels (Health *h)
{
  WickDocument *doc = h->doc;
  const WickTraceMeta *m = &doc->meta;
  const WickStr *labels = wick_document_get_str_list (doc, m->required_labels_offset);

  for (guint i = 0; i < m->n_required_labels; i++)
    {
      guint count = 0;
      if (blank (h, labels[i]))
        label_issue (h, "empty_required_semantic_label",
                     g_strdup (_ ("required semantic labels must not be empty")));
      if (list_contains (labels, i, labels[i]))
        label_issue (h, "duplicate_required_semantic_label",
                     /* Translators: %s is a semantic label, a span name of the trace. */
                     g_strdup_printf (_ ("required semantic label `%s` is declared more than "
                                         "once"),
                                      S (h, labels[i])));
      for (guint j = 0; j < doc->spans->len; j++)
        count += g_array_index (doc->spans, WickSpan, j).name == labels[i];
      if (count != 1)
        label_issue (h, "required_semantic_label_cardinality",
                     /* Translators: a semantic label (a span name) and how many spans have
                      * that name. */
                     g_strdup_printf (_ ("required semantic label `%s` must occur exactly once; "
                                         "observed %u"),
                                      S (h, labels[i]), count));
    }
}

static void
check_label_classification (Health *h)
{
  WickDocument *doc = h->doc;
  const WickTraceMeta *m = &doc->meta;
  const WickStr *required = wick_document_get_str_list (doc, m->required_labels_offset);
  struct
  {
    const WickStr *labels;
    guint n;
    gboolean gpu; /* the GPU-expected list, else the CPU-only one */
  } lists[] = {
    { wick_document_get_str_list (doc, m->gpu_labels_offset), m->n_gpu_labels, TRUE },
    { wick_document_get_str_list (doc, m->cpu_labels_offset), m->n_cpu_labels, FALSE },
  };
  g_autoptr (GArray) classified = g_array_new (FALSE, FALSE, sizeof (WickStr));
  gboolean partition = TRUE;

  if (m->n_gpu_labels == 0 && m->n_cpu_labels == 0)
    return;
  for (gsize l = 0; l < G_N_ELEMENTS (lists); l++)
    for (guint i = 0; i < lists[l].n; i++)
      {
        WickStr label = lists[l].labels[i];
        const char *text = S (h, label);
        if (blank (h, label))
          label_issue (h, "empty_semantic_label_classification",
                       g_strdup (lists[l].gpu
                                   ? _ ("GPU-expected semantic label classifications must not "
                                        "be empty")
                                   : _ ("CPU-only semantic label classifications must not be "
                                        "empty")));
        if (list_contains (lists[l].labels, i, label))
          label_issue (h, "duplicate_semantic_label_classification",
                       /* Translators: %s is a semantic label, a span name of the trace. */
                       g_strdup_printf (lists[l].gpu
                                          ? _ ("GPU-expected semantic label `%s` is listed more "
                                               "than once")
                                          : _ ("CPU-only semantic label `%s` is listed more than "
                                               "once"),
                                        text));
        if (!list_contains (required, m->n_required_labels, label))
          label_issue (h, "unrequired_semantic_label_classification",
                       /* Translators: %s is a semantic label, a span name of the trace. */
                       g_strdup_printf (lists[l].gpu
                                          ? _ ("GPU-expected semantic label `%s` is not a "
                                               "required semantic label")
                                          : _ ("CPU-only semantic label `%s` is not a required "
                                               "semantic label"),
                                        text));
        if (list_contains ((const WickStr *)(gpointer)classified->data, classified->len, label))
          label_issue (h, "overlapping_semantic_label_classification",
                       /* Translators: %s is a semantic label, a span name of the trace. */
                       g_strdup_printf (_ ("semantic label `%s` is classified more than once"),
                                        text));
        else
          g_array_append_val (classified, label);
      }
  for (guint i = 0; i < m->n_required_labels && partition; i++)
    partition
      = list_contains ((const WickStr *)(gpointer)classified->data, classified->len, required[i]);
  for (guint i = 0; i < classified->len && partition; i++)
    partition
      = list_contains (required, m->n_required_labels, g_array_index (classified, WickStr, i));
  if (!partition)
    label_issue (h, "incomplete_semantic_label_partition",
                 g_strdup (_ ("GPU-expected and CPU-only semantic labels must partition the "
                              "required semantic labels")));
}

/* ---- verdict (§7.6) --------------------------------------------------- */

static gboolean
is_gradient_code (const char *code)
{
  return g_str_has_prefix (code, "gradient_") || strcmp (code, "duplicate_gradient_event_id") == 0
         || strcmp (code, "empty_gradient_event_id") == 0;
}

static void
coverage_verdict (Health *h, gboolean valid)
{
  WickDocument *doc = h->doc;
  const WickTraceMeta *m = &doc->meta;
  WickCoverageVerdict verdict;
  const char *reason;
  g_autofree char *contract_error = NULL;

  if (m->gradients != WICK_COVERAGE_COMPLETE)
    {
      verdict = doc->gradients->len == 0 ? WICK_COVERAGE_VERDICT_UNAVAILABLE
                                         : WICK_COVERAGE_VERDICT_PARTIAL;
      reason = doc->gradients->len == 0
                 ? _ ("gradient coverage is not declared complete and no gradient was recorded")
                 : _ ("gradient coverage is not declared complete: the recorded gradients are "
                      "partial evidence");
    }
  else if (!m->has_gradient_contract)
    verdict = WICK_COVERAGE_VERDICT_INVALID,
    reason = _ ("complete gradient coverage is declared without an exact gradient contract");
  else if ((contract_error = wick_gradient_contract_validate (doc)) != NULL)
    verdict = WICK_COVERAGE_VERDICT_INVALID, reason = _ ("the gradient contract is invalid");
  else
    {
      gboolean any_error = FALSE, any_warning = FALSE, any_pending = FALSE;
      for (guint i = 0; i < h->issues->len; i++)
        {
          const WickHealthIssue *issue = &g_array_index (h->issues, WickHealthIssue, i);
          if (!is_gradient_code (issue->code))
            continue;
          any_error |= issue->severity == WICK_SEVERITY_ERROR;
          any_warning |= issue->severity == WICK_SEVERITY_WARNING;
          any_pending |= issue->severity == WICK_SEVERITY_PENDING;
        }
      if (any_error)
        verdict = WICK_COVERAGE_VERDICT_INVALID, reason = _ ("gradient checks report errors");
      else if (any_pending)
        verdict = WICK_COVERAGE_VERDICT_PENDING,
        reason = _ ("the run is in progress: the gradient counts are judged when it ends");
      else if (any_warning)
        verdict = WICK_COVERAGE_VERDICT_PARTIAL,
        reason = _ ("gradient checks report gaps of an interrupted capture");
      else
        verdict = WICK_COVERAGE_VERDICT_COMPLETE,
        reason = _ ("every manifest gradient was captured once and every family meets its expectation");
    }
  if (!valid
      && (verdict == WICK_COVERAGE_VERDICT_PARTIAL || verdict == WICK_COVERAGE_VERDICT_COMPLETE
          || verdict == WICK_COVERAGE_VERDICT_PENDING))
    verdict = WICK_COVERAGE_VERDICT_INVALID, reason = _ ("the trace is not structurally valid");
  if (h->failed && verdict == WICK_COVERAGE_VERDICT_COMPLETE)
    verdict = WICK_COVERAGE_VERDICT_PARTIAL, reason = _ ("the capture failed");
  doc->coverage = verdict;
  g_free (doc->coverage_reason);
  doc->coverage_reason = g_strdup (reason);
}

/* Frees the strings of the contract validation used only for the verdict. */
static void
free_issue (gpointer data)
{
  WickHealthIssue *issue = data;

  g_free (issue->message);
  g_free (issue->record_id);
}

static void
wick_health_clear (WickDocument *self)
{
  g_clear_pointer (&self->health, g_array_unref);
  g_clear_pointer (&self->spans_by_id, g_free);
  g_clear_pointer (&self->coverage_reason, g_free);
  self->n_spans_by_id = 0;
  self->analysed = FALSE;
}

void
wick_health_analyze (WickDocument *self, gboolean live)
{
  Health h = { self, NULL, FALSE, live, live && !self->finished };
  gboolean has_meta = self->meta.present;
  gboolean valid = TRUE;

  wick_health_clear (self);
  h.issues = g_array_new (FALSE, FALSE, sizeof (WickHealthIssue));
  g_array_set_clear_func (h.issues, free_issue);
  h.failed = self->has_terminal && self->outcome == WICK_OUTCOME_FAILED;
  /* A late attach, live: its file will end failed, saying it is partial
   * (docs/format.md): judged as that partial capture now, not as a complete
   * one missing what came before the attach. */
  gboolean partial_live = h.provisional && !self->has_terminal && wick_document_is_partial (self);
  if (partial_live)
    h.failed = TRUE;

  if (has_meta)
    {
      char *provenance = provenance_error (&h);
      if (provenance != NULL)
        error (&h, "run_provenance_invalid", provenance);
    }
  if (h.provisional && !self->has_terminal)
    pending (&h, "missing_terminal",
             g_strdup (_ ("the run is in progress: its terminal record has not arrived")),
             WICK_RECORD_NONE, -1, NULL);
  if (partial_live)
    {
      g_autofree char *what
        = self->attach.exact
            ? g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%llu record", "%llu records",
                                            (gulong)MIN (self->attach.missing, G_MAXULONG)),
                               (unsigned long long)self->attach.missing)
            : g_strdup (_ ("an unknown number of records"));
      warning (&h, "capture_failed",
               g_strdup_printf (_ ("attached at %.1f s: records before that are missing (%s); "
                                   "the capture is partial"),
                                (double)self->attach.attached_ns / 1e9, what));
    }
  else if (h.failed)
    warning (&h, "capture_failed",
             g_strdup (self->terminal_reason ? S (&h, self->terminal_reason)
                                             : _ ("capture ended with a failed outcome")));
  check_spans (&h);
  check_evidence_spans (&h);
  check_evidence_timing (&h);
  check_edges (&h);
  check_memory_pairing (&h);
  check_addresses (&h);
  if (has_meta)
    {
      check_gradients (&h);
      check_planes (&h);
      check_required_labels (&h);
      check_label_classification (&h);
    }
  for (guint i = 0; i < h.issues->len; i++)
    valid &= g_array_index (h.issues, WickHealthIssue, i).severity != WICK_SEVERITY_ERROR;
  self->health = h.issues;
  self->structurally_valid = valid;
  self->health_provisional = h.provisional;
  if (has_meta)
    coverage_verdict (&h, valid);
  else
    {
      self->coverage = WICK_COVERAGE_VERDICT_UNAVAILABLE;
      self->coverage_reason = g_strdup (_ ("no run metadata was read"));
    }
  self->analysed = TRUE;
}
