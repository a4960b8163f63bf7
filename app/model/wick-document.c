/* wick-document.c — reading a candle-graph trace into compact arrays.
 *
 * Reading is line by line (spec §1): split on \n, drop a trailing \r, check
 * UTF-8, trim (Rust's str::trim), skip empty lines, decode one record per line
 * (wick-trace-record.c). A decode error stops reading; what was decoded stays.
 * The per-event stream rules of §4 are checked as records arrive, but the
 * first violation is reported only at finish, after every line decoded, as
 * candle-graph applies them after decoding; the end-of-stream rules follow.
 */
#include "config.h"

#include "wick-document-private.h"
#include "wick-record.h"
#include "common/wick-dtype-table.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

enum
{
  PROP_0,
  PROP_EXTENSIONS,
  N_PROPS
};
enum
{
  SIGNAL_CHANGED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (WickDocument, wick_document, G_TYPE_OBJECT)

/* ---- id map ----------------------------------------------------------- */

void
wick_id_map_init (WickIdMap *map)
{
  map->n_slots = 256;
  map->n_items = 0;
  map->keys = g_new0 (guint32, map->n_slots);
  map->values = g_new0 (guint32, map->n_slots);
}

void
wick_id_map_clear (WickIdMap *map)
{
  g_clear_pointer (&map->keys, g_free);
  g_clear_pointer (&map->values, g_free);
  map->n_slots = map->n_items = 0;
}

static inline gsize
id_hash (guint32 key)
{
  guint64 h = (guint64)key * 0x9E3779B97F4A7C15ull;
  return (gsize)(h >> 20);
}

static void
id_map_grow (WickIdMap *map)
{
  WickIdMap bigger;

  bigger.n_slots = map->n_slots * 2;
  bigger.n_items = 0;
  bigger.keys = g_new0 (guint32, bigger.n_slots);
  bigger.values = g_new0 (guint32, bigger.n_slots);
  /* new blocks, not touched yet: on huge pages once big (wick-huge-pages.h) */
  WickHugePagesAdvised none = { 0 };
  wick_huge_pages_advise (bigger.keys, &none);
  wick_huge_pages_advise (bigger.values, &none);
  for (gsize i = 0; i < map->n_slots; i++)
    if (map->keys[i] != 0)
      wick_id_map_insert (&bigger, map->keys[i], map->values[i]);
  wick_id_map_clear (map);
  *map = bigger;
}

guint32
wick_id_map_insert (WickIdMap *map, guint32 key, guint32 value)
{
  gsize mask = map->n_slots - 1;
  gsize j = id_hash (key) & mask;

  while (map->keys[j] != 0)
    {
      if (map->keys[j] == key)
        return map->values[j];
      j = (j + 1) & mask;
    }
  map->keys[j] = key;
  map->values[j] = value;
  if (++map->n_items * 2 > map->n_slots)
    id_map_grow (map);
  return value;
}

gint64
wick_id_map_lookup (const WickIdMap *map, guint32 key)
{
  gsize mask = map->n_slots - 1;
  gsize j = id_hash (key) & mask;

  if (key == 0)
    return -1;
  /* cleared by compact(): callers use wick_document_find_span() */
  g_return_val_if_fail (map->keys != NULL, -1);
  while (map->keys[j] != 0)
    {
      if (map->keys[j] == key)
        return map->values[j];
      j = (j + 1) & mask;
    }
  return -1;
}

/* ---- object ----------------------------------------------------------- */

static void
clear_meta (WickTraceMeta *meta)
{
  g_clear_pointer (&meta->expected, g_array_unref);
  g_clear_pointer (&meta->families, g_array_unref);
  memset (meta, 0, sizeof *meta);
}

static void
wick_document_finalize (GObject *object)
{
  WickDocument *self = WICK_DOCUMENT (object);

  if (self->tracks != NULL)
    self->tracks_free (self->tracks);
  g_clear_pointer (&self->health, g_array_unref);
  g_free (self->spans_by_id);
  g_free (self->coverage_reason);
  g_free (self->path);
  wick_string_pool_free (self->pool);
  g_array_unref (self->spans);
  g_array_unref (self->ops);
  g_array_unref (self->tensors);
  g_array_unref (self->tensor_stats);
  g_array_unref (self->memory);
  g_array_unref (self->device_memory);
  g_array_unref (self->device_intervals);
  g_array_unref (self->gradients);
  g_array_unref (self->edges);
  g_array_unref (self->extension_records);
  g_array_unref (self->u64_pool);
  g_array_unref (self->str_list);
  clear_meta (&self->meta);
  g_free (self->meta_json);
  wick_id_map_clear (&self->span_ids);
  g_free (self->stream_error);
  g_free (self->parse_error.message);
  g_free (self->parse_error.cause);
  wick_trace_decoder_free (self->decoder);
  g_clear_pointer (&self->wick_decoder, wick_trace_decoder_free);
  if (self->wick_scratch != NULL)
    g_string_free (self->wick_scratch, TRUE);
  g_free (self->facts_unescape);
  g_string_free (self->cause, TRUE);

  G_OBJECT_CLASS (wick_document_parent_class)->finalize (object);
}

static void
wick_document_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  WickDocument *self = WICK_DOCUMENT (object);

  switch (prop_id)
    {
      case PROP_EXTENSIONS:
        g_value_set_boolean (value, self->extensions);
        break;
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
wick_document_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  WickDocument *self = WICK_DOCUMENT (object);

  switch (prop_id)
    {
      case PROP_EXTENSIONS:
        self->extensions = g_value_get_boolean (value);
        wick_trace_decoder_free (self->decoder);
        self->decoder = wick_trace_decoder_new (self->extensions);
        break;
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
wick_document_class_init (WickDocumentClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = wick_document_finalize;
  object_class->get_property = wick_document_get_property;
  object_class->set_property = wick_document_set_property;

  properties[PROP_EXTENSIONS]
    = g_param_spec_boolean ("extensions", NULL, NULL, FALSE,
                            G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
wick_document_init (WickDocument *self)
{
  self->pool = wick_string_pool_new ();
  self->spans = g_array_new (FALSE, FALSE, sizeof (WickSpan));
  self->ops = g_array_new (FALSE, FALSE, sizeof (WickOp));
  self->tensors = g_array_new (FALSE, FALSE, sizeof (WickTensor));
  self->tensor_stats = g_array_new (FALSE, FALSE, sizeof (WickTensorStats));
  self->memory = g_array_new (FALSE, FALSE, sizeof (WickMemoryEvent));
  self->device_memory = g_array_new (FALSE, FALSE, sizeof (WickDeviceMemorySample));
  self->device_intervals = g_array_new (FALSE, FALSE, sizeof (WickDeviceInterval));
  self->gradients = g_array_new (FALSE, FALSE, sizeof (WickGradient));
  self->edges = g_array_new (FALSE, FALSE, sizeof (WickEdge));
  self->extension_records = g_array_new (FALSE, FALSE, sizeof (WickExtensionRecord));
  self->u64_pool = g_array_new (FALSE, FALSE, sizeof (guint64));
  self->str_list = g_array_new (FALSE, FALSE, sizeof (WickStr));
  wick_id_map_init (&self->span_ids);
  self->stream_error_index = -1;
  self->synthetic_span = -1;
  self->parse_error.record_index = -1;
  self->decoder = wick_trace_decoder_new (FALSE);
  self->cause = g_string_new (NULL);
}

WickDocument *
wick_document_new (void)
{
  return g_object_new (WICK_TYPE_DOCUMENT, NULL);
}

WickDocument *
wick_document_new_with_extensions (gboolean extensions)
{
  return g_object_new (WICK_TYPE_DOCUMENT, "extensions", extensions, NULL);
}

gboolean
wick_document_get_extensions_enabled (WickDocument *self)
{
  g_return_val_if_fail (WICK_IS_DOCUMENT (self), FALSE);
  return self->extensions;
}

guint64
wick_document_get_first_extension_line (WickDocument *self)
{
  g_return_val_if_fail (WICK_IS_DOCUMENT (self), 0);
  return self->first_extension_line;
}

/* ---- record commit ---------------------------------------------------- */

static WickStr
intern_value (WickDocument *self, const WickValue *value)
{
  gsize index = (gsize)(value - self->record_values);

  if (!value->set)
    return 0;
  if (value >= self->record_values && index < self->n_record_values)
    return wick_string_pool_intern_hashed (self->pool, value->str, value->len,
                                           self->record_hashes[index]);
  return wick_string_pool_intern (self->pool, value->str, value->len);
}

/* Hashes the record's top-level strings and prefetches their table slots, so
 * that the cache misses of new strings overlap instead of queueing. */
static void
prefetch_strings (WickDocument *self, WickRecordKind kind, const WickValue *v)
{
  const WickRecordSchema *schema = wick_trace_record_schema (kind, self->edge_kind);

  self->record_values = v;
  self->n_record_values = MIN (schema->n_fields, G_N_ELEMENTS (self->record_hashes));
  for (guint i = 0; i < self->n_record_values; i++)
    if (schema->fields[i].type == WICK_FIELD_STR && v[i].set)
      {
        self->record_hashes[i] = wick_string_pool_hash (v[i].str, v[i].len);
        wick_string_pool_prefetch (self->pool, self->record_hashes[i]);
      }
}

static guint32
store_shape (WickDocument *self, const WickValue *list, guint32 *rank)
{
  guint32 offset = self->u64_pool->len;
  const WickValue *elements = (self->values_base + list->offset);

  *rank = list->len;
  for (guint32 i = 0; i < list->len; i++)
    g_array_append_val (self->u64_pool, elements[i].u64);
  return offset;
}

static guint32
store_str_list (WickDocument *self, const WickValue *list, guint32 stride, guint32 *count)
{
  guint32 offset = self->str_list->len;
  const WickValue *elements = (self->values_base + list->offset);

  *count = list->len;
  for (guint32 i = 0; i < list->len * stride; i++)
    {
      WickStr s = intern_value (self, &elements[i]);
      g_array_append_val (self->str_list, s);
    }
  return offset;
}

static void
stream_error (WickDocument *self, char *message)
{
  if (self->stream_error == NULL)
    {
      self->stream_error = message;
      self->stream_error_index = (gint64)self->n_records;
    }
  else
    g_free (message);
}

static inline void
extend_end (WickDocument *self, guint64 start, guint64 duration)
{
  guint64 end = start > G_MAXUINT64 - duration ? G_MAXUINT64 : start + duration;

  if (end > self->end_ns)
    self->end_ns = end;
}

static int
dtype_size (const char *dtype, gsize len)
{
  wick_rust_trim (&dtype, &len);
  return (int)wick_dtype_table_size (dtype, len);
}

/* product(shape) × dtype size, saturating; FALSE when the dtype is unknown. */
static gboolean
dense_bytes (WickDocument *self, guint32 shape_offset, guint32 rank, const WickValue *dtype,
             guint64 *out)
{
  int size = dtype_size (dtype->str, dtype->len);
  guint64 n = 1;

  if (size == 0)
    return FALSE;
  for (guint32 i = 0; i < rank; i++)
    {
      guint64 d = g_array_index (self->u64_pool, guint64, shape_offset + i);
      n = (d != 0 && n > G_MAXUINT64 / d) ? G_MAXUINT64 : n * d;
    }
  *out = n > G_MAXUINT64 / (guint64)size ? G_MAXUINT64 : n * (guint64)size;
  return TRUE;
}

static void
commit_meta (WickDocument *self, const WickValue *v, const WickRecord *record)
{
  WickTraceMeta *meta = &self->meta;
  const WickValue *cc = (self->values_base + v[META_CAPTURE_CONTRACT].offset);

  if (self->n_records != 0)
    stream_error (self, g_strdup_printf ("meta event must be the first non-empty trace record, "
                                         "found at index %" G_GUINT64_FORMAT,
                                         self->n_records));
  if (meta->present)
    return;
  meta->present = TRUE;
  if (record->text != NULL)
    self->meta_json = g_strndup (record->text, record->text_len);
  else
    {
      /* a record that came as values: its JSON as the writer lays it out */
      GString *json = g_string_new (NULL);
      wick_trace_record_write (WICK_KIND_META, 0, self->values_base, json);
      self->meta_json = g_string_free (json, FALSE);
    }
  meta->schema = intern_value (self, &v[META_SCHEMA]);
  meta->run_id = intern_value (self, &v[META_RUN_ID]);
  meta->correlation_id = intern_value (self, &v[META_CORRELATION_ID]);
  meta->entrypoint = intern_value (self, &v[META_ENTRYPOINT]);
  meta->timestamp = intern_value (self, &v[META_TIMESTAMP]);
  meta->device = intern_value (self, &v[META_DEVICE]);
  meta->candle_version = intern_value (self, &v[META_CANDLE_VERSION]);
  meta->phase = (guint8)v[META_PHASE].variant;
  meta->timing_mode = (guint8)v[META_TIMING_MODE].variant;
  meta->measured_region_device_synchronized = v[META_MEASURED_REGION_DEVICE_SYNCHRONIZED].boolean;
  meta->capture_step = v[META_CAPTURE_STEP].u64;
  meta->warmup_steps = v[META_WARMUP_STEPS].u64;
  meta->tags_offset = store_str_list (self, &v[META_TAGS], 2, &meta->n_tags);

  if (v[META_COMPARISON_IDENTITY].set)
    {
      const WickValue *ci = (self->values_base + v[META_COMPARISON_IDENTITY].offset);
      WickComparisonIdentityMeta *c = &meta->comparison_identity;
      c->present = TRUE;
      c->implementation_id = intern_value (self, &ci[CI_IMPLEMENTATION_ID]);
      c->workload_id = intern_value (self, &ci[CI_WORKLOAD_ID]);
      c->model_id = intern_value (self, &ci[CI_MODEL_ID]);
      c->config_id = intern_value (self, &ci[CI_CONFIG_ID]);
      c->data_id = intern_value (self, &ci[CI_DATA_ID]);
      c->seed_policy = intern_value (self, &ci[CI_SEED_POLICY]);
      c->physical_batch = ci[CI_PHYSICAL_BATCH].u64;
      c->accumulation_steps = ci[CI_ACCUMULATION_STEPS].u64;
      c->precision = intern_value (self, &ci[CI_PRECISION]);
      c->device_state = intern_value (self, &ci[CI_DEVICE_STATE]);
      c->pair_id = intern_value (self, &ci[CI_PAIR_ID]);
    }

  meta->measurement_scope = (guint8)cc[CC_MEASUREMENT_SCOPE].variant;
  meta->operations = (guint8)cc[CC_OPERATIONS].variant;
  meta->tensors = (guint8)cc[CC_TENSORS].variant;
  meta->gradients = (guint8)cc[CC_GRADIENTS].variant;
  meta->logical_memory = (guint8)cc[CC_LOGICAL_MEMORY].variant;
  meta->physical_memory = (guint8)cc[CC_PHYSICAL_MEMORY].variant;
  meta->device_timing = (guint8)cc[CC_DEVICE_TIMING].variant;
  meta->required_labels_offset
    = store_str_list (self, &cc[CC_REQUIRED_LABELS], 1, &meta->n_required_labels);
  meta->gpu_labels_offset = store_str_list (self, &cc[CC_GPU_LABELS], 1, &meta->n_gpu_labels);
  meta->cpu_labels_offset = store_str_list (self, &cc[CC_CPU_LABELS], 1, &meta->n_cpu_labels);

  if (cc[CC_GRADIENT_CONTRACT].set)
    {
      const WickValue *gc = (self->values_base + cc[CC_GRADIENT_CONTRACT].offset);
      const WickValue *expected = (self->values_base + gc[GC_EXPECTED].offset);
      const WickValue *families = (self->values_base + gc[GC_FAMILIES].offset);
      meta->has_gradient_contract = TRUE;
      meta->manifest_sha256 = intern_value (self, &gc[GC_MANIFEST_SHA256]);
      meta->expected = g_array_new (FALSE, FALSE, sizeof (WickExpectedGradientEntry));
      meta->families = g_array_new (FALSE, FALSE, sizeof (WickGradientFamilyContract));
      for (guint32 i = 0; i < gc[GC_EXPECTED].len; i++)
        {
          const WickValue *e = expected + 3 * i;
          WickExpectedGradientEntry entry = {
            intern_value (self, &e[EXP_ROOT]),
            intern_value (self, &e[EXP_KEY]),
            intern_value (self, &e[EXP_FAMILY]),
          };
          g_array_append_val (meta->expected, entry);
        }
      for (guint32 i = 0; i < gc[GC_FAMILIES].len; i++)
        {
          const WickValue *f = families + 3 * i;
          WickGradientFamilyContract family = {
            intern_value (self, &f[FAM_FAMILY]),
            (guint8)f[FAM_EXPECTATION].variant,
            f[FAM_MIN_PRESENT].u64,
          };
          g_array_append_val (meta->families, family);
        }
    }
}

static void
commit_span_start (WickDocument *self, const WickValue *v)
{
  WickSpan span = { 0 };
  guint32 index = self->spans->len;

  span.id = intern_value (self, &v[SS_ID]);
  span.name = intern_value (self, &v[SS_NAME]);
  span.parent_id = intern_value (self, &v[SS_PARENT_ID]);
  span.parent = -1;
  span.start_ns = v[SS_START_NS].u64;
  span.kind = (guint8)v[SS_SPAN_KIND].variant;
  span.step = v[SS_STEP].set ? (guint8)(v[SS_STEP].variant + 1) : WICK_STEP_NONE;
  span.thread = v[SS_WICK_THREAD].set ? (guint16)v[SS_WICK_THREAD].u64 : 0;
  span.flags = (v[SS_MEASURED].boolean ? WICK_SPAN_FLAG_MEASURED : 0)
               | (v[SS_PARENT_ID].set ? WICK_SPAN_FLAG_HAS_PARENT_ID : 0);
  if (wick_id_map_insert (&self->span_ids, span.id, index) != index)
    {
      GString *message = g_string_new ("duplicate span_start id `");
      g_string_append_len (message, v[SS_ID].str, v[SS_ID].len);
      g_string_append_printf (message, "` at index %" G_GUINT64_FORMAT, self->n_records);
      stream_error (self, g_string_free (message, FALSE));
    }
  extend_end (self, span.start_ns, 0);
  g_array_append_val (self->spans, span);
}

static void
commit_span_end (WickDocument *self, const WickValue *v)
{
  WickStr id = wick_string_pool_lookup (self->pool, v[SE_ID].str, v[SE_ID].len);
  gint64 index = wick_id_map_lookup (&self->span_ids, id);
  WickSpan *span;
  GString *message;

  if (index < 0
      || (span = &g_array_index (self->spans, WickSpan, index))->flags & WICK_SPAN_FLAG_CLOSED)
    {
      message
        = g_string_new (index < 0 ? "span_end for unknown span `" : "duplicate span_end for `");
      g_string_append_len (message, v[SE_ID].str, v[SE_ID].len);
      g_string_append_printf (message, "` at index %" G_GUINT64_FORMAT, self->n_records);
      stream_error (self, g_string_free (message, FALSE));
      return;
    }
  span->flags |= WICK_SPAN_FLAG_CLOSED;
  span->duration_ns = v[SE_DURATION_NS].u64;
  extend_end (self, span->start_ns, span->duration_ns);
}

static void
commit_op (WickDocument *self, const WickValue *v)
{
  WickOp op = { 0 };

  op.span_id = intern_value (self, &v[OP_SPAN_ID]);
  op.span = -1;
  op.op_name = intern_value (self, &v[OP_OP_NAME]);
  op.inputs_offset = store_str_list (self, &v[OP_INPUTS], 1, &op.n_inputs);
  op.output = intern_value (self, &v[OP_OUTPUT]);
  op.shape_offset = store_shape (self, &v[OP_SHAPE], &op.rank);
  op.dtype = intern_value (self, &v[OP_DTYPE]);
  op.device = intern_value (self, &v[OP_DEVICE]);
  op.duration_ns = v[OP_DURATION_NS].u64;
  op.timestamp_ns = v[OP_TIMESTAMP_NS].u64;
  op.input_dense_bytes = v[OP_INPUT_DENSE_BYTES].u64;
  op.has_output_dense_bytes = v[OP_OUTPUT_DENSE_BYTES].set;
  if (op.has_output_dense_bytes)
    op.output_dense_bytes = v[OP_OUTPUT_DENSE_BYTES].u64;
  else
    dense_bytes (self, op.shape_offset, op.rank, &v[OP_DTYPE], &op.output_dense_bytes);
  extend_end (self, op.timestamp_ns, op.duration_ns);
  g_array_append_val (self->ops, op);
}

static void
commit_tensor (WickDocument *self, const WickValue *v)
{
  WickTensor t = { 0 };

  t.span_id = intern_value (self, &v[T_SPAN_ID]);
  t.span = -1;
  t.tensor_id = intern_value (self, &v[T_TENSOR_ID]);
  t.label = intern_value (self, &v[T_LABEL]);
  t.shape_offset = store_shape (self, &v[T_SHAPE], &t.rank);
  t.dtype = intern_value (self, &v[T_DTYPE]);
  t.device = intern_value (self, &v[T_DEVICE]);
  t.requires_grad = v[T_REQUIRES_GRAD].boolean;
  t.has_dense_bytes = v[T_DENSE_BYTES].set;
  if (t.has_dense_bytes)
    t.dense_bytes = v[T_DENSE_BYTES].u64;
  else
    dense_bytes (self, t.shape_offset, t.rank, &v[T_DTYPE], &t.dense_bytes);
  t.category = (guint8)v[T_CATEGORY].variant;
  g_array_append_val (self->tensors, t);
}

/* Spec §3.6. */
static gboolean
tensor_stats_valid (const WickValue *v, const WickValue *base)
{
  const WickValue *shape = base + v[TS_SHAPE].offset;
  guint64 product = 1;

  if (wick_rust_is_blank (v[TS_LABEL].str, v[TS_LABEL].len))
    return FALSE;
  for (guint32 i = 0; i < v[TS_SHAPE].len; i++)
    {
      guint64 d = shape[i].u64;
      if (d != 0 && product > G_MAXUINT64 / d)
        return FALSE;
      product *= d;
    }
  if (product != v[TS_ELEMENTS].u64 || v[TS_NON_FINITE].u64 > v[TS_ELEMENTS].u64)
    return FALSE;
  if (!isfinite (v[TS_RMS].f64) || v[TS_RMS].f64 < 0.0)
    return FALSE;
  if (!isfinite (v[TS_ABS_MAX].f64) || v[TS_ABS_MAX].f64 < 0.0)
    return FALSE;
  return isfinite (v[TS_MEAN].f64);
}

static void
commit_tensor_stats (WickDocument *self, const WickValue *v)
{
  WickTensorStats s = { 0 };

  if (!tensor_stats_valid (v, self->values_base))
    stream_error (self, g_strdup_printf ("invalid tensor_stats event at index %" G_GUINT64_FORMAT,
                                         self->n_records));
  s.span_id = intern_value (self, &v[TS_SPAN_ID]);
  s.span = -1;
  s.label = intern_value (self, &v[TS_LABEL]);
  s.shape_offset = store_shape (self, &v[TS_SHAPE], &s.rank);
  s.dtype = intern_value (self, &v[TS_DTYPE]);
  s.elements = v[TS_ELEMENTS].u64;
  s.non_finite = v[TS_NON_FINITE].u64;
  s.rms = v[TS_RMS].f64;
  s.abs_max = v[TS_ABS_MAX].f64;
  s.mean = v[TS_MEAN].f64;
  g_array_append_val (self->tensor_stats, s);
}

static void
commit_memory (WickDocument *self, const WickValue *v)
{
  WickMemoryEvent m = { 0 };

  m.timestamp_ns = v[MEM_TIMESTAMP_NS].u64;
  m.storage_id = intern_value (self, &v[MEM_STORAGE_ID]);
  m.tensor_id = intern_value (self, &v[MEM_TENSOR_ID]);
  m.span_id = intern_value (self, &v[MEM_SPAN_ID]);
  m.span = -1;
  m.op_name = intern_value (self, &v[MEM_OP_NAME]);
  m.device = intern_value (self, &v[MEM_DEVICE]);
  m.bytes = v[MEM_BYTES].u64;
  m.action = (guint8)v[MEM_ACTION].variant;
  m.category = (guint8)v[MEM_CATEGORY].variant;
  m.shape_offset = store_shape (self, &v[MEM_SHAPE], &m.rank);
  m.dtype = intern_value (self, &v[MEM_DTYPE]);
  if (self->extensions && v[MEM_WICK_ADDRESS].set)
    {
      if (v[MEM_WICK_ADDRESS].u64 != 0)
        m.address = v[MEM_WICK_ADDRESS].u64;
      else if (self->bad_addresses++ == 0)
        {
          self->bad_address_line = self->n_lines;
          self->bad_address_index = self->memory->len;
          self->bad_address_problem = (guint8)MIN (v[MEM_WICK_ADDRESS].len, G_MAXUINT8);
        }
    }
  extend_end (self, m.timestamp_ns, 0);
  g_array_append_val (self->memory, m);
}

static void
commit_device_memory (WickDocument *self, const WickValue *v)
{
  WickDeviceMemorySample s = { 0 };

  s.timestamp_ns = v[DM_TIMESTAMP_NS].u64;
  s.device = intern_value (self, &v[DM_DEVICE]);
  if (v[DM_USED_BYTES].set)
    s.present |= WICK_DEVICE_MEMORY_USED, s.used_bytes = v[DM_USED_BYTES].u64;
  if (v[DM_FREE_BYTES].set)
    s.present |= WICK_DEVICE_MEMORY_FREE, s.free_bytes = v[DM_FREE_BYTES].u64;
  if (v[DM_RESERVED_BYTES].set)
    s.present |= WICK_DEVICE_MEMORY_RESERVED, s.reserved_bytes = v[DM_RESERVED_BYTES].u64;
  if (v[DM_CAPACITY_BYTES].set)
    s.present |= WICK_DEVICE_MEMORY_CAPACITY, s.capacity_bytes = v[DM_CAPACITY_BYTES].u64;
  extend_end (self, s.timestamp_ns, 0);
  g_array_append_val (self->device_memory, s);
}

static void
commit_device_interval (WickDocument *self, const WickValue *v)
{
  WickDeviceInterval d = { 0 };

  d.span_id = intern_value (self, &v[DI_SPAN_ID]);
  d.span = -1;
  d.device = intern_value (self, &v[DI_DEVICE]);
  d.stream_id = intern_value (self, &v[DI_STREAM_ID]);
  d.clock_id = intern_value (self, &v[DI_CLOCK_ID]);
  d.backend = intern_value (self, &v[DI_BACKEND]);
  d.start_ns = v[DI_START_NS].u64;
  d.duration_ns = v[DI_DURATION_NS].u64;
  g_array_append_val (self->device_intervals, d);
}

static void
commit_gradient (WickDocument *self, const WickValue *v)
{
  WickGradient g = { 0 };

  g.event_id = intern_value (self, &v[GR_EVENT_ID]);
  g.root = intern_value (self, &v[GR_ROOT]);
  g.key = intern_value (self, &v[GR_KEY]);
  g.state = (guint8)v[GR_STATE].variant;
  g.has_norm = v[GR_NORM].set;
  g.norm = g.has_norm ? v[GR_NORM].f64 : 0.0;
  g_array_append_val (self->gradients, g);
}

static void
commit_edge (WickDocument *self, const WickValue *v)
{
  WickEdge e = { 0 };

  e.edge_kind = (guint8)self->edge_kind;
  if (e.edge_kind == WICK_EDGE_CALL)
    {
      e.from = intern_value (self, &v[CALL_FROM_SPAN]);
      e.to = intern_value (self, &v[CALL_TO_SPAN]);
      e.host_duration_ns = v[CALL_HOST_DURATION_NS].u64;
    }
  else
    {
      e.from = intern_value (self, &v[DATA_FROM_TENSOR]);
      e.to = intern_value (self, &v[DATA_TO_TENSOR]);
    }
  g_array_append_val (self->edges, e);
}

static void
commit_terminal (WickDocument *self, const WickValue *v)
{
  self->has_terminal = TRUE;
  self->outcome = (guint8)v[TERM_OUTCOME].variant;
  self->terminal_ns = v[TERM_TIMESTAMP_NS].u64;
  self->terminal_reason = intern_value (self, &v[TERM_REASON]);
}

static const WickRecordType record_types[WICK_N_KINDS] = {
  WICK_RECORD_META,     WICK_RECORD_SPAN,          WICK_RECORD_SPAN,
  WICK_RECORD_OP,       WICK_RECORD_TENSOR,        WICK_RECORD_TENSOR_STATS,
  WICK_RECORD_MEMORY,   WICK_RECORD_DEVICE_MEMORY, WICK_RECORD_DEVICE_INTERVAL,
  WICK_RECORD_GRADIENT, WICK_RECORD_EDGE,          WICK_RECORD_TERMINAL,
};

static void commit_facts (WickDocument *self, WickRecordKind kind, const WickRecordFacts *facts);

void
wick_document_commit (WickDocument *self, const WickRecord *record)
{
  WickRecordKind kind = record->kind;
  const WickValue *v = record->values;

  g_return_if_fail (kind < WICK_N_KINDS);
  self->n_lines = record->line != 0 ? record->line : self->n_lines + 1;
  self->values_base = v;
  self->edge_kind = record->edge_kind;
  if (self->has_terminal)
    stream_error (self, g_strdup_printf ("terminal event must be the final trace record; found "
                                         "another event at index %" G_GUINT64_FORMAT,
                                         self->n_records));
  if (kind != WICK_KIND_SPAN_END)
    self->counts[record_types[kind]]++;
  if (kind != WICK_KIND_META)
    prefetch_strings (self, kind, v);
  switch (kind)
    {
      case WICK_KIND_META:
        commit_meta (self, v, record);
        break;
      case WICK_KIND_SPAN_START:
        commit_span_start (self, v);
        break;
      case WICK_KIND_SPAN_END:
        commit_span_end (self, v);
        break;
      case WICK_KIND_OP:
        commit_op (self, v);
        break;
      case WICK_KIND_TENSOR:
        commit_tensor (self, v);
        break;
      case WICK_KIND_TENSOR_STATS:
        commit_tensor_stats (self, v);
        break;
      case WICK_KIND_MEMORY:
        commit_memory (self, v);
        break;
      case WICK_KIND_DEVICE_MEMORY:
        commit_device_memory (self, v);
        break;
      case WICK_KIND_DEVICE_INTERVAL:
        commit_device_interval (self, v);
        break;
      case WICK_KIND_GRADIENT:
        commit_gradient (self, v);
        break;
      case WICK_KIND_EDGE:
        commit_edge (self, v);
        break;
      case WICK_KIND_TERMINAL:
        if (!self->has_terminal)
          commit_terminal (self, v);
        break;
      default:
        g_assert_not_reached ();
    }
  self->record_values = NULL;
  self->n_record_values = 0;
  self->n_records++;
  if (self->extensions && record->facts != NULL && record->facts->present != 0)
    commit_facts (self, kind, record->facts);
}

gboolean
wick_document_commit_built (WickDocument *self, WickRecordBuilder *builder, GError **error)
{
  WickRecord record;
  g_autofree char *missing = NULL;

  g_return_val_if_fail (WICK_IS_DOCUMENT (self), FALSE);
  if (self->decode_failed || self->finished)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "the document no longer accepts lines");
      return FALSE;
    }
  if ((missing = wick_record_builder_missing (builder)) != NULL)
    {
      self->n_lines++;
      return wick_document_set_decode_error (self, WICK_DOCUMENT_ERROR_INVALID, "commit", missing,
                                             error);
    }
  wick_record_builder_get (builder, &record);
  wick_document_commit (self, &record);
  return TRUE;
}

static gboolean scan_facts (WickDocument *self, WickRecordKind kind, const char *line, gsize len,
                            WickRecordFacts *facts);

/* A record decoded from its JSONL line: its Wick keys are decoded from the
 * line here, once, then it goes through the one door. */
void
wick_document_commit_record (WickDocument *self, WickRecordKind kind, const char *line, gsize len)
{
  WickRecordFacts facts;
  WickRecord record = { .kind = kind,
                        .edge_kind = (guint8)self->edge_kind,
                        .line = self->n_lines,
                        .values = self->values_base,
                        .text = line,
                        .text_len = len };

  if (self->extensions && scan_facts (self, kind, line, len, &facts))
    record.facts = &facts;
  wick_document_commit (self, &record);
}

/* The facts Wick reads of a Wick record, from its JSON object's top-level
 * members (the last of a repeated key wins, as a JSON object's reader has
 * it). Decoded once, here. */
static void
decode_extension (WickDocument *self, WickExtensionRecord *r, const char *json, gsize len)
{
  WickJsonScanner scanner;
  GString *error = g_string_new (NULL);
  gboolean first = TRUE;
  const char *key;
  gsize key_len;
  guint32 flags = 0;
  g_autofree char *unescape = g_malloc (len + 16);

  wick_json_scanner_init (&scanner, json, json + len, error, unescape);
  if (!wick_json_object_begin (&scanner))
    goto out;
  while (wick_json_object_next (&scanner, &first, &key, &key_len))
    {
      WickJsonType type;
      WickStr *member = NULL;
      if (!wick_json_peek_type (&scanner, &type))
        goto out;
      if (type == WICK_JSON_STRING)
        {
          if (key_len == 5 && memcmp (key, "label", 5) == 0)
            member = &r->label;
          else if (key_len == 6 && memcmp (key, "module", 6) == 0)
            member = &r->module;
          else if (key_len == 5 && memcmp (key, "stage", 5) == 0)
            member = &r->stage;
          else if (key_len == 7 && memcmp (key, "verdict", 7) == 0)
            member = &r->verdict;
          else if (key_len == 4 && memcmp (key, "name", 4) == 0)
            member = &r->name;
        }
      if (member != NULL)
        {
          const char *str;
          gsize str_len;
          if (!wick_json_read_string (&scanner, &str, &str_len))
            goto out;
          *member = wick_string_pool_intern (self->pool, str, str_len);
          continue;
        }
      if (type == WICK_JSON_NUMBER
          && ((key_len == 6 && memcmp (key, "thread", 6) == 0)
              || (key_len == 6 && memcmp (key, "os_tid", 6) == 0)))
        {
          WickJsonNumber number;
          gboolean is_thread = key[0] == 't';
          if (!wick_json_read_number (&scanner, &number))
            goto out;
          gboolean integer = number.kind == WICK_JSON_U64 || number.kind == WICK_JSON_I64;
          gint64 value = number.kind == WICK_JSON_U64
                           ? (number.u64 > G_MAXINT64 ? -1 : (gint64)number.u64)
                           : number.i64;
          if (is_thread)
            r->thread = integer && value > 0 && value <= G_MAXUINT16 ? (guint32)value : 0;
          else if (integer && !(number.kind == WICK_JSON_U64 && number.u64 > G_MAXINT64))
            r->os_tid = value, r->flags |= WICK_EXTENSION_HAS_OS_TID;
          else
            r->flags &= ~(guint32)WICK_EXTENSION_HAS_OS_TID;
          continue;
        }
      if (!wick_json_skip_value (&scanner))
        goto out;
    }
  if (!wick_json_failed (&scanner))
    flags = WICK_EXTENSION_OBJECT;
out:
  if (flags == 0)
    {
      /* not an object: nothing of it is read */
      WickStr kind = r->kind, text = r->json;
      memset (r, 0, sizeof *r);
      r->kind = kind;
      r->json = text;
    }
  r->flags |= flags;
  g_string_free (error, TRUE);
}

/* @typed: the facts already known (a record Wick made itself), else NULL and
 * they are decoded from @json. */
static void
append_extension (WickDocument *self, const char *json, gsize len, const char *kind, gsize kind_len,
                  guint64 timestamp_ns, const WickExtensionRecord *typed)
{
  WickExtensionRecord r = { 0 };

  if (typed != NULL)
    r = *typed;
  r.kind = wick_string_pool_intern (self->pool, kind, kind_len);
  r.json = wick_string_pool_intern (self->pool, json, len);
  r.timestamp_ns = timestamp_ns;
  r.line = (guint32)self->n_lines;
  if (typed == NULL)
    decode_extension (self, &r, json, len);
  self->counts[WICK_RECORD_EXTENSION]++;
  g_array_append_val (self->extension_records, r);
}

void
wick_document_commit_extension (WickDocument *self, const char *line, gsize len, const char *kind,
                                gsize kind_len, guint64 timestamp_ns)
{
  /* a line of its own: candle-graph stops here */
  if (self->first_extension_line == 0)
    self->first_extension_line = self->n_lines;
  append_extension (self, line, len, kind, kind_len, timestamp_ns, NULL);
}

/* The objects of a "wick_records" array (raw JSON text [start, end)): each a
 * Wick record as older files wrote it on a line of its own, kept the same
 * way. An entry that is not one (not an object, no wick_ kind) is counted. */
static void
commit_wick_records (WickDocument *self, const char *start, const char *end)
{
  WickJsonScanner scanner;
  GString *error = g_string_new (NULL);
  gboolean first = TRUE;

  g_autofree char *unescape = g_malloc ((gsize)(end - start) + 16);

  if (self->wick_decoder == NULL)
    self->wick_decoder = wick_trace_decoder_new (TRUE);
  wick_json_scanner_init (&scanner, start, end, error, unescape);
  if (!wick_json_array_begin (&scanner))
    {
      self->wick_records_skipped++;
      g_string_free (error, TRUE);
      return;
    }
  while (wick_json_array_next (&scanner, &first))
    {
      const char *element = scanner.p;
      WickRecordKind kind;
      if (!wick_json_skip_value (&scanner))
        break;
      if (*element != '{'
          || !wick_trace_decoder_decode (self->wick_decoder, element, (gsize)(scanner.p - element),
                                         &kind, self->cause)
          || kind != WICK_KIND_EXTENSION)
        {
          self->wick_records_skipped++;
          continue;
        }
      gsize kind_len;
      const char *ext = wick_trace_decoder_extension_kind (self->wick_decoder, &kind_len);
      append_extension (self, element, (gsize)(scanner.p - element), ext, kind_len,
                        wick_trace_decoder_extension_timestamp (self->wick_decoder), NULL);
    }
  if (wick_json_failed (&scanner))
    self->wick_records_skipped++;
  g_string_free (error, TRUE);
}

/* A span_start's thread identity ("wick_thread_name", "wick_os_tid"): kept as
 * the wick_thread record older files wrote, so the track model reads both. */
static void
commit_thread_identity (WickDocument *self, const WickRecordFacts *facts)
{
  WickExtensionRecord typed = { 0 };
  const WickSpan *span;
  GString *json;

  if (self->spans->len == 0)
    return;
  span = &g_array_index (self->spans, WickSpan, self->spans->len - 1);
  if (span->thread == 0)
    return;
  if (self->wick_scratch == NULL)
    self->wick_scratch = g_string_new (NULL);
  json = self->wick_scratch;
  typed.flags = WICK_EXTENSION_OBJECT | WICK_EXTENSION_HAS_OS_TID;
  typed.thread = span->thread;
  typed.os_tid = (facts->present & WICK_FACT_OS_TID) ? (gint64)MIN (facts->os_tid, G_MAXINT64)
                                                     : (gint64)span->thread;
  g_string_printf (json, "{\"kind\":\"wick_thread\",\"thread\":%u,\"os_tid\":%" G_GINT64_FORMAT,
                   span->thread, typed.os_tid);
  if (facts->present & WICK_FACT_THREAD_NAME)
    {
      typed.name = wick_string_pool_intern (self->pool, facts->thread_name, facts->thread_name_len);
      g_string_append (json, ",\"name\":");
      wick_json_append_string (json, facts->thread_name, facts->thread_name_len);
    }
  g_string_append_printf (json, ",\"timestamp_ns\":%" G_GUINT64_FORMAT "}", span->start_ns);
  append_extension (self, json->str, json->len, "wick_thread", strlen ("wick_thread"),
                    span->start_ns, &typed);
}

/* An unsigned integer value [value, end) of a Wick key; 0 when it is not one. */
static guint64
wick_key_u64 (const char *value, const char *end)
{
  guint64 n = 0;
  if (value >= end || *value < '0' || *value > '9')
    return 0;
  for (const char *p = value; p < end && *p >= '0' && *p <= '9'; p++)
    {
      guint64 digit = (guint64)(*p - '0');
      if (n > (G_MAXUINT64 - digit) / 10)
        return G_MAXUINT64;
      n = n * 10 + digit;
    }
  return n;
}

/* meta's "wick_attach": {"attached_ns":T,"missing":N,"exact":B,"snapshot":B} */
static gboolean
scan_attach (const char *start, const char *end, WickAttachFacts *out)
{
  WickJsonScanner scanner;
  GString *error = g_string_new (NULL);
  gboolean first = TRUE, ok = FALSE;
  const char *key;
  gsize key_len;
  WickAttachFacts attach = { TRUE, 0, 0, TRUE, FALSE };
  g_autofree char *unescape = g_malloc ((gsize)(end - start) + 16);

  wick_json_scanner_init (&scanner, start, end, error, unescape);
  if (!wick_json_object_begin (&scanner))
    goto out;
  while (wick_json_object_next (&scanner, &first, &key, &key_len))
    {
      wick_json_skip_whitespace (&scanner);
      const char *value = scanner.p;
      if (!wick_json_skip_value (&scanner))
        goto out;
      if (key_len == 11 && memcmp (key, "attached_ns", 11) == 0)
        attach.attached_ns = wick_key_u64 (value, scanner.p);
      else if (key_len == 7 && memcmp (key, "missing", 7) == 0)
        attach.missing = wick_key_u64 (value, scanner.p);
      else if (key_len == 5 && memcmp (key, "exact", 5) == 0)
        attach.exact = scanner.p - value == 4 && memcmp (value, "true", 4) == 0;
      else if (key_len == 8 && memcmp (key, "snapshot", 8) == 0)
        attach.snapshot = scanner.p - value == 4 && memcmp (value, "true", 4) == 0;
    }
  if (!wick_json_failed (&scanner))
    {
      *out = attach;
      ok = TRUE;
    }
out:
  g_string_free (error, TRUE);
  return ok;
}

/* The Wick keys of a standard record's line (docs/format.md, "Wick keys"), in
 * extension mode: candle-graph ignores them, and so does the verdict. FALSE
 * when the line has none. Strings point into the line or into the document's
 * scratch, until the next call. */
static gboolean
scan_facts (WickDocument *self, WickRecordKind kind, const char *line, gsize len,
            WickRecordFacts *facts)
{
  WickJsonScanner scanner;
  GString *error;
  gboolean first = TRUE;
  const char *key;
  gsize key_len;

  if (!(memmem (line, len, "\"wick_records\"", 14) != NULL
        || (kind == WICK_KIND_SPAN_START && memmem (line, len, "\"wick_thread_name\"", 18) != NULL)
        || (kind == WICK_KIND_META && memmem (line, len, "\"wick_attach\"", 13) != NULL)
        || (kind == WICK_KIND_TERMINAL && memmem (line, len, "\"wick_", 6) != NULL)))
    return FALSE;
  memset (facts, 0, sizeof *facts);
  if (self->facts_unescape_size < len + 16)
    {
      g_free (self->facts_unescape);
      self->facts_unescape_size = len + 16;
      self->facts_unescape = g_malloc (self->facts_unescape_size);
    }
  error = g_string_new (NULL);
  wick_json_scanner_init (&scanner, line, line + len, error, self->facts_unescape);
  if (!wick_json_object_begin (&scanner))
    goto out;
  while (wick_json_object_next (&scanner, &first, &key, &key_len))
    {
      const char *value;
      wick_json_skip_whitespace (&scanner);
      value = scanner.p;
      /* the first of a repeated key counts, as candle-graph ignores both */
      if (kind == WICK_KIND_SPAN_START && key_len == 16 && memcmp (key, "wick_thread_name", 16) == 0
          && !(facts->present & WICK_FACT_THREAD_NAME) && *value == '"')
        {
          if (!wick_json_read_string (&scanner, &facts->thread_name, &facts->thread_name_len))
            goto out;
          facts->present |= WICK_FACT_THREAD_NAME;
          continue;
        }
      if (!wick_json_skip_value (&scanner))
        goto out;
      if (key_len == 12 && memcmp (key, "wick_records", 12) == 0
          && !(facts->present & WICK_FACT_RECORDS) && *value == '[')
        {
          facts->records_json = value;
          facts->records_json_len = (gsize)(scanner.p - value);
          facts->present |= WICK_FACT_RECORDS;
        }
      else if (kind == WICK_KIND_SPAN_START && key_len == 11 && memcmp (key, "wick_os_tid", 11) == 0
               && !(facts->present & WICK_FACT_OS_TID) && *value >= '0' && *value <= '9')
        {
          facts->os_tid = wick_key_u64 (value, scanner.p);
          facts->present |= WICK_FACT_OS_TID;
        }
      else if (kind == WICK_KIND_META && key_len == 11 && memcmp (key, "wick_attach", 11) == 0
               && !(facts->present & WICK_FACT_ATTACH) && *value == '{')
        {
          if (scan_attach (value, scanner.p, &facts->attach))
            facts->present |= WICK_FACT_ATTACH;
        }
      else if (kind == WICK_KIND_TERMINAL && key_len == 12 && memcmp (key, "wick_dropped", 12) == 0)
        facts->losses.dropped = wick_key_u64 (value, scanner.p),
        facts->present |= WICK_FACT_DROPPED;
      else if (kind == WICK_KIND_TERMINAL && key_len == 9 && memcmp (key, "wick_lost", 9) == 0)
        facts->losses.lost = wick_key_u64 (value, scanner.p), facts->present |= WICK_FACT_LOST;
      else if (kind == WICK_KIND_TERMINAL && key_len == 13 && memcmp (key, "wick_detached", 13) == 0)
        facts->losses.detached = wick_key_u64 (value, scanner.p),
        facts->present |= WICK_FACT_DETACHED;
      else if (kind == WICK_KIND_TERMINAL && key_len == 20
               && memcmp (key, "wick_records_dropped", 20) == 0)
        facts->losses.records_dropped = wick_key_u64 (value, scanner.p),
        facts->present |= WICK_FACT_RECORDS_DROPPED;
    }
out:
  /* a line that stops making sense keeps the facts read before it, as the
   * scan applied them while reading */
  g_string_free (error, TRUE);
  return facts->present != 0;
}

/* The decoded Wick keys of a standard record (extension mode). */
static void
commit_facts (WickDocument *self, WickRecordKind kind, const WickRecordFacts *facts)
{
  if (kind == WICK_KIND_META && (facts->present & WICK_FACT_ATTACH) && !self->attach.present)
    {
      self->attach = facts->attach;
      self->attach.present = TRUE;
    }
  if (kind == WICK_KIND_TERMINAL)
    {
      if (facts->present & WICK_FACT_DROPPED)
        self->losses.dropped = facts->losses.dropped;
      if (facts->present & WICK_FACT_LOST)
        self->losses.lost = facts->losses.lost;
      if (facts->present & WICK_FACT_DETACHED)
        self->losses.detached = facts->losses.detached;
      if (facts->present & WICK_FACT_RECORDS_DROPPED)
        self->losses.records_dropped = facts->losses.records_dropped;
    }
  if (kind == WICK_KIND_SPAN_START && (facts->present & (WICK_FACT_THREAD_NAME | WICK_FACT_OS_TID)))
    commit_thread_identity (self, facts);
  if (facts->present & WICK_FACT_RECORDS)
    commit_wick_records (self, facts->records_json, facts->records_json + facts->records_json_len);
}

gboolean
wick_document_get_attach (WickDocument *self, WickAttachFacts *out)
{
  g_return_val_if_fail (WICK_IS_DOCUMENT (self), FALSE);
  *out = self->attach;
  return self->attach.present;
}

gboolean
wick_document_is_partial (WickDocument *self)
{
  g_return_val_if_fail (WICK_IS_DOCUMENT (self), FALSE);
  return self->attach.present && (self->attach.missing > 0 || !self->attach.exact);
}

void
wick_document_get_losses (WickDocument *self, WickLossFacts *out)
{
  g_return_if_fail (WICK_IS_DOCUMENT (self));
  *out = self->losses;
}

guint64
wick_document_get_wick_records_skipped (WickDocument *self)
{
  g_return_val_if_fail (WICK_IS_DOCUMENT (self), 0);
  return self->wick_records_skipped;
}

guint64
wick_document_get_bad_addresses (WickDocument *self, guint64 *first_line)
{
  g_return_val_if_fail (WICK_IS_DOCUMENT (self), 0);
  if (first_line != NULL)
    *first_line = self->bad_address_line;
  return self->bad_addresses;
}

/* ---- lines ------------------------------------------------------------ */

static const char *
display_path (WickDocument *self)
{
  return self->path ? self->path : "<stream>";
}

gboolean
wick_document_fail (WickDocument *self, WickDocumentError code, guint64 line, gint64 record_index,
                    const char *message, const char *cause, GError **error)
{
  char *old_message = self->parse_error.message, *old_cause = self->parse_error.cause;

  if (cause != NULL)
    g_set_error (error, WICK_DOCUMENT_ERROR, (int)code, "%s: %s", message, cause);
  else
    g_set_error_literal (error, WICK_DOCUMENT_ERROR, (int)code, message);
  self->parse_error.failed = TRUE;
  self->parse_error.code = code;
  self->parse_error.line = line;
  self->parse_error.record_index = record_index;
  self->parse_error.message = g_strdup (message);
  self->parse_error.cause = g_strdup (cause);
  g_free (old_message);
  g_free (old_cause);
  return FALSE;
}

gboolean
wick_document_set_decode_error (WickDocument *self, WickDocumentError code, const char *verb,
                                const char *cause, GError **error)
{
  g_autofree char *message = g_strdup_printf ("%s trace JSONL line %" G_GUINT64_FORMAT " from %s",
                                              verb, self->n_lines, display_path (self));

  self->decode_failed = TRUE;
  return wick_document_fail (self, code, self->n_lines, -1, message, cause, error);
}

gboolean
wick_document_feed_line (WickDocument *self, const char *line, gsize length, GError **error)
{
  WickRecordKind kind;

  g_return_val_if_fail (WICK_IS_DOCUMENT (self), FALSE);
  if (self->decode_failed || self->finished)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "the document no longer accepts lines");
      return FALSE;
    }
  self->n_lines++;
  if (length > 0 && line[length - 1] == '\r')
    length--;
  if (!wick_utf8_validate (line, length)) /* Rust's str::from_utf8 */
    return wick_document_set_decode_error (self, WICK_DOCUMENT_ERROR_INVALID, "read",
                                           "stream did not contain valid UTF-8", error);
  wick_rust_trim (&line, &length);
  if (length == 0)
    return TRUE;
  if (!wick_trace_decoder_decode (self->decoder, line, length, &kind, self->cause))
    return wick_document_set_decode_error (self, WICK_DOCUMENT_ERROR_INVALID, "parse",
                                           self->cause->str, error);
  if (kind == WICK_KIND_EXTENSION)
    {
      gsize kind_len;
      const char *ext = wick_trace_decoder_extension_kind (self->decoder, &kind_len);
      wick_document_commit_extension (self, line, length, ext, kind_len,
                                      wick_trace_decoder_extension_timestamp (self->decoder));
    }
  else
    {
      self->values_base = wick_trace_decoder_values (self->decoder, 0);
      self->edge_kind = wick_trace_decoder_edge_kind (self->decoder);
      wick_document_commit_record (self, kind, line, length);
    }
  return TRUE;
}

/* Spec §4 rule 6, after every line decoded. */
static char *
end_of_stream_error (WickDocument *self)
{
  const char *schema;

  if (!self->meta.present)
    return g_strdup ("trace stream is missing a meta event with run metadata");
  if (!self->has_terminal)
    return g_strdup ("trace stream is missing its terminal event");
  schema = wick_document_str (self, self->meta.schema);
  if (strcmp (schema, "candle-graph/trace/10") != 0 && strcmp (schema, "candle-graph/trace/9") != 0)
    return g_strdup_printf (
      "unsupported trace schema \"%s\"; expected \"candle-graph/trace/10\" or "
      "\"candle-graph/trace/9\"",
      schema);
  if (strcmp (schema, "candle-graph/trace/9") == 0 && self->tensor_stats->len > 0)
    return g_strdup ("trace schema \"candle-graph/trace/9\" does not define tensor_stats events; "
                     "producers emitting tensor statistics must declare \"candle-graph/trace/10\"");
  if (self->outcome == WICK_OUTCOME_COMPLETE && self->terminal_reason != 0)
    return g_strdup ("complete terminal event cannot contain a failure reason");
  if (self->outcome == WICK_OUTCOME_FAILED
      && (self->terminal_reason == 0 || wick_document_str_is_blank (self, self->terminal_reason)))
    return g_strdup ("failed terminal event requires a non-empty reason");
  if (self->terminal_ns < self->end_ns)
    return g_strdup_printf ("terminal timestamp %" G_GUINT64_FORMAT
                            " precedes host evidence ending at %" G_GUINT64_FORMAT,
                            self->terminal_ns, self->end_ns);
  return NULL;
}

/* A read document needs no intern tables: span ids are found by binary
 * search in spans_by_id, and the string pool's table is rebuilt if anything
 * is interned later. Only for a document that finished cleanly and was
 * analysed (its ids unique and sorted), after its track model was built (it
 * interns its names). */
void
wick_document_compact (WickDocument *self)
{
  if (self->spans_by_id == NULL || self->n_spans_by_id != self->spans->len)
    return;
  wick_id_map_clear (&self->span_ids);
  wick_string_pool_compact (self->pool);
}

gboolean
wick_document_end_stream (WickDocument *self, GError **error)
{
  char *message;

  g_return_val_if_fail (!self->finished, FALSE);
  self->finished = TRUE;
  if (self->decode_failed)
    {
      g_set_error (error, WICK_DOCUMENT_ERROR, (int)self->parse_error.code, "%s: %s",
                   self->parse_error.message, self->parse_error.cause);
      return FALSE;
    }
  if (self->stream_error != NULL)
    return wick_document_fail (self, WICK_DOCUMENT_ERROR_INVALID, self->parse_error.line,
                               self->stream_error_index, self->stream_error, NULL, error);
  message = end_of_stream_error (self);
  if (message != NULL)
    {
      wick_document_fail (self, WICK_DOCUMENT_ERROR_INVALID, self->parse_error.line,
                          self->parse_error.record_index, message, NULL, error);
      g_free (message);
      return FALSE;
    }
  return TRUE;
}

void
wick_document_emit_changed (WickDocument *self)
{
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

gboolean
wick_document_is_finished (WickDocument *self)
{
  return self->finished;
}

/* ---- accessors -------------------------------------------------------- */

const char *
wick_document_str (WickDocument *self, WickStr str)
{
  return wick_string_pool_get (self->pool, str);
}

gsize
wick_document_str_len (WickDocument *self, WickStr str)
{
  return wick_string_pool_get_len (self->pool, str);
}

const char *
wick_document_get_path (WickDocument *self)
{
  return self->path;
}

void
wick_document_set_path (WickDocument *self, const char *path)
{
  g_return_if_fail (WICK_IS_DOCUMENT (self));
  g_free (self->path);
  self->path = g_strdup (path);
}

const WickParseError *
wick_document_get_parse_error (WickDocument *self)
{
  return &self->parse_error;
}

#define ARRAY_GETTER(Type, name, field)                                                            \
  const Type *wick_document_get_##name (WickDocument *self, guint *n)                              \
  {                                                                                                \
    g_return_val_if_fail (WICK_IS_DOCUMENT (self), NULL);                                          \
    if (n != NULL)                                                                                 \
      *n = self->field->len;                                                                       \
    return (const Type *)(gpointer)self->field->data;                                              \
  }

ARRAY_GETTER (WickSpan, spans, spans)
ARRAY_GETTER (WickOp, ops, ops)
ARRAY_GETTER (WickTensor, tensors, tensors)
ARRAY_GETTER (WickTensorStats, tensor_stats, tensor_stats)
ARRAY_GETTER (WickMemoryEvent, memory, memory)
ARRAY_GETTER (WickDeviceMemorySample, device_memory, device_memory)
ARRAY_GETTER (WickDeviceInterval, device_intervals, device_intervals)
ARRAY_GETTER (WickGradient, gradients, gradients)
ARRAY_GETTER (WickEdge, edges, edges)
ARRAY_GETTER (WickExtensionRecord, extensions, extension_records)

const guint64 *
wick_document_get_shape (WickDocument *self, guint32 offset)
{
  static const guint64 empty[1];

  if (offset >= self->u64_pool->len)
    return empty;
  return (const guint64 *)(gpointer)self->u64_pool->data + offset;
}

const WickStr *
wick_document_get_str_list (WickDocument *self, guint32 offset)
{
  static const WickStr empty[1];

  if (offset >= self->str_list->len)
    return empty;
  return (const WickStr *)(gpointer)self->str_list->data + offset;
}

const WickStr *
wick_document_get_op_inputs (WickDocument *self, const WickOp *op)
{
  return wick_document_get_str_list (self, op->inputs_offset);
}

void
wick_document_mark_synthetic_span (WickDocument *self, guint span)
{
  g_return_if_fail (span < self->spans->len);
  self->synthetic_span = (gint32)span;
}

gboolean
wick_document_is_synthetic_span (WickDocument *self, guint span)
{
  g_return_val_if_fail (WICK_IS_DOCUMENT (self), FALSE);
  return self->synthetic_span >= 0 && span == (guint)self->synthetic_span;
}

gint32
wick_document_find_span (WickDocument *self, const char *id)
{
  if (self->span_ids.keys == NULL)
    {
      /* compacted (see compact()): binary search in id byte order */
      const WickSpan *spans = (const WickSpan *)(gpointer)self->spans->data;
      gsize len = strlen (id);
      guint lo = 0, hi = self->n_spans_by_id;
      while (lo < hi)
        {
          guint mid = lo + (hi - lo) / 2;
          WickStr s = spans[self->spans_by_id[mid]].id;
          gsize slen = wick_string_pool_get_len (self->pool, s);
          int c = memcmp (wick_string_pool_get (self->pool, s), id, MIN (slen, len));
          if (c == 0)
            c = slen < len ? -1 : slen > len ? 1 : 0;
          if (c == 0)
            return (gint32)self->spans_by_id[mid];
          if (c < 0)
            lo = mid + 1;
          else
            hi = mid;
        }
      return -1;
    }
  WickStr str = wick_string_pool_lookup (self->pool, id, strlen (id));

  return (gint32)wick_id_map_lookup (&self->span_ids, str);
}

guint64
wick_document_get_record_count (WickDocument *self, WickRecordType type)
{
  g_return_val_if_fail ((int)type < (int)WICK_N_RECORD_TYPES, 0);
  return self->counts[type];
}

guint64
wick_document_get_n_lines (WickDocument *self)
{
  return self->n_lines;
}

guint64
wick_document_get_n_records (WickDocument *self)
{
  return self->n_records;
}

const char *
wick_document_get_meta_json (WickDocument *self)
{
  return self->meta_json;
}

const WickTraceMeta *
wick_document_get_meta (WickDocument *self)
{
  return &self->meta;
}

const char *
wick_document_get_schema (WickDocument *self)
{
  return wick_document_str (self, self->meta.schema);
}

const char *
wick_document_get_entrypoint (WickDocument *self)
{
  return wick_document_str (self, self->meta.entrypoint);
}

const char *
wick_document_get_run_id (WickDocument *self)
{
  return wick_document_str (self, self->meta.run_id);
}

WickPhase
wick_document_get_phase (WickDocument *self)
{
  return (WickPhase)self->meta.phase;
}

gboolean
wick_document_has_terminal (WickDocument *self)
{
  return self->has_terminal;
}

gboolean
wick_document_get_capture_complete (WickDocument *self)
{
  return self->has_terminal && self->outcome == WICK_OUTCOME_COMPLETE;
}

const char *
wick_document_get_terminal_reason (WickDocument *self)
{
  return wick_document_str (self, self->terminal_reason);
}

guint64
wick_document_get_terminal_ns (WickDocument *self)
{
  return self->terminal_ns;
}

guint64
wick_document_get_end_ns (WickDocument *self)
{
  return self->end_ns;
}

const WickHealthIssue *
wick_document_get_health (WickDocument *self, guint *n_issues)
{
  if (self->health == NULL)
    {
      if (n_issues != NULL)
        *n_issues = 0;
      return NULL;
    }
  if (n_issues != NULL)
    *n_issues = self->health->len;
  return (const WickHealthIssue *)(gpointer)self->health->data;
}

gboolean
wick_document_get_structurally_valid (WickDocument *self)
{
  return self->analysed && self->structurally_valid;
}

gboolean
wick_document_get_health_provisional (WickDocument *self)
{
  return self->analysed && self->health_provisional;
}

guint
wick_document_count_health (WickDocument *self, WickSeverity severity)
{
  guint n = 0, count = 0;
  const WickHealthIssue *issues = wick_document_get_health (self, &n);
  for (guint i = 0; i < n; i++)
    count += issues[i].severity == severity;
  return count;
}

WickCoverageVerdict
wick_document_get_gradient_coverage (WickDocument *self)
{
  return self->analysed ? self->coverage : WICK_COVERAGE_VERDICT_UNAVAILABLE;
}

const char *
wick_document_get_gradient_coverage_reason (WickDocument *self)
{
  return self->coverage_reason;
}

const char *
wick_coverage_verdict_to_string (WickCoverageVerdict verdict)
{
  switch (verdict)
    {
      case WICK_COVERAGE_VERDICT_COMPLETE:
        return "complete";
      case WICK_COVERAGE_VERDICT_PARTIAL:
        return "partial";
      case WICK_COVERAGE_VERDICT_INVALID:
        return "invalid";
      case WICK_COVERAGE_VERDICT_UNAVAILABLE:
        return "unavailable";
      case WICK_COVERAGE_VERDICT_PENDING:
        return "pending";
      default:
        return "unknown";
    }
}

const char *
wick_severity_to_string (WickSeverity severity)
{
  switch (severity)
    {
      case WICK_SEVERITY_ERROR:
        return "error";
      case WICK_SEVERITY_WARNING:
        return "warning";
      case WICK_SEVERITY_INFO:
        return "info";
      case WICK_SEVERITY_PENDING:
        return "pending";
    }
  return "warning";
}

/* ---- digest ------------------------------------------------------------ */

static void
digest_u64 (GChecksum *sum, guint64 value)
{
  guint8 bytes[8];
  for (int i = 0; i < 8; i++)
    bytes[i] = (guint8)(value >> (8 * i));
  g_checksum_update (sum, bytes, 8);
}

static void
digest_f64 (GChecksum *sum, double value)
{
  guint64 bits;
  memcpy (&bits, &value, 8);
  digest_u64 (sum, bits);
}

/* A string by its bytes (not its offset, which depends on what else was
 * interned when), 0 apart from "". */
static void
digest_str (WickDocument *self, GChecksum *sum, WickStr str)
{
  if (str == 0)
    {
      digest_u64 (sum, G_MAXUINT64);
      return;
    }
  gsize len = wick_string_pool_get_len (self->pool, str);
  digest_u64 (sum, len);
  g_checksum_update (sum, (const guchar *)wick_string_pool_get (self->pool, str), (gssize)len);
}

static void
digest_shape (WickDocument *self, GChecksum *sum, guint32 offset, guint32 rank)
{
  digest_u64 (sum, rank);
  for (guint32 i = 0; i < rank; i++)
    digest_u64 (sum, g_array_index (self->u64_pool, guint64, offset + i));
}

static void
digest_strs (WickDocument *self, GChecksum *sum, guint32 offset, guint32 n)
{
  digest_u64 (sum, n);
  for (guint32 i = 0; i < n; i++)
    digest_str (self, sum, g_array_index (self->str_list, WickStr, offset + i));
}

#define D(v) digest_u64 (sum, (guint64)(v))
#define DS(s) digest_str (self, sum, (s))

char *
wick_document_digest (WickDocument *self)
{
  g_return_val_if_fail (WICK_IS_DOCUMENT (self), NULL);
  GChecksum *sum = g_checksum_new (G_CHECKSUM_SHA256);
  const WickTraceMeta *m = &self->meta;

  D (self->n_lines), D (self->n_records), D (self->first_extension_line);
  for (guint i = 0; i < WICK_N_RECORD_TYPES; i++)
    D (self->counts[i]);
  /* meta */
  D (m->present), DS (m->schema), DS (m->run_id), DS (m->correlation_id), DS (m->entrypoint);
  DS (m->timestamp), DS (m->device), DS (m->candle_version), D (m->phase), D (m->timing_mode);
  D (m->measured_region_device_synchronized), D (m->capture_step), D (m->warmup_steps);
  const WickComparisonIdentityMeta *c = &m->comparison_identity;
  D (c->present), DS (c->implementation_id), DS (c->workload_id), DS (c->model_id);
  DS (c->config_id), DS (c->data_id), DS (c->seed_policy), D (c->physical_batch);
  D (c->accumulation_steps), DS (c->precision), DS (c->device_state), DS (c->pair_id);
  digest_strs (self, sum, m->tags_offset, 2 * m->n_tags);
  D (m->measurement_scope), D (m->operations), D (m->tensors), D (m->gradients);
  D (m->logical_memory), D (m->physical_memory), D (m->device_timing);
  digest_strs (self, sum, m->required_labels_offset, m->n_required_labels);
  digest_strs (self, sum, m->gpu_labels_offset, m->n_gpu_labels);
  digest_strs (self, sum, m->cpu_labels_offset, m->n_cpu_labels);
  D (m->has_gradient_contract), DS (m->manifest_sha256);
  for (guint i = 0; m->expected != NULL && i < m->expected->len; i++)
    {
      const WickExpectedGradientEntry *e
        = &g_array_index (m->expected, WickExpectedGradientEntry, i);
      DS (e->root), DS (e->key), DS (e->family);
    }
  for (guint i = 0; m->families != NULL && i < m->families->len; i++)
    {
      const WickGradientFamilyContract *f
        = &g_array_index (m->families, WickGradientFamilyContract, i);
      DS (f->family), D (f->expectation), D (f->min_present);
    }
  g_checksum_update (sum, (const guchar *)(self->meta_json ? self->meta_json : ""), -1);
  /* the arrays */
  D (self->spans->len);
  for (guint i = 0; i < self->spans->len; i++)
    {
      const WickSpan *s = &g_array_index (self->spans, WickSpan, i);
      DS (s->id), DS (s->name), DS (s->parent_id), D (s->parent), D (s->start_ns);
      D (s->duration_ns), D (s->depth), D (s->kind), D (s->step), D (s->flags), D (s->thread);
    }
  D (self->ops->len);
  for (guint i = 0; i < self->ops->len; i++)
    {
      const WickOp *o = &g_array_index (self->ops, WickOp, i);
      DS (o->span_id), D (o->span), DS (o->op_name);
      digest_strs (self, sum, o->inputs_offset, o->n_inputs);
      DS (o->output), digest_shape (self, sum, o->shape_offset, o->rank), DS (o->dtype);
      DS (o->device), D (o->duration_ns), D (o->timestamp_ns), D (o->output_dense_bytes);
      D (o->input_dense_bytes), D (o->has_output_dense_bytes);
    }
  D (self->tensors->len);
  for (guint i = 0; i < self->tensors->len; i++)
    {
      const WickTensor *t = &g_array_index (self->tensors, WickTensor, i);
      DS (t->span_id), D (t->span), DS (t->tensor_id), DS (t->label);
      digest_shape (self, sum, t->shape_offset, t->rank), DS (t->dtype), DS (t->device);
      D (t->dense_bytes), D (t->has_dense_bytes), D (t->requires_grad), D (t->category);
    }
  D (self->tensor_stats->len);
  for (guint i = 0; i < self->tensor_stats->len; i++)
    {
      const WickTensorStats *t = &g_array_index (self->tensor_stats, WickTensorStats, i);
      DS (t->span_id), D (t->span), DS (t->label);
      digest_shape (self, sum, t->shape_offset, t->rank), DS (t->dtype), D (t->elements);
      D (t->non_finite), digest_f64 (sum, t->rms), digest_f64 (sum, t->abs_max);
      digest_f64 (sum, t->mean);
    }
  D (self->memory->len);
  for (guint i = 0; i < self->memory->len; i++)
    {
      const WickMemoryEvent *e = &g_array_index (self->memory, WickMemoryEvent, i);
      D (e->timestamp_ns), DS (e->storage_id), DS (e->tensor_id), DS (e->span_id), D (e->span);
      DS (e->op_name), DS (e->device), D (e->bytes), D (e->action), D (e->category);
      digest_shape (self, sum, e->shape_offset, e->rank), DS (e->dtype), D (e->address);
    }
  D (self->device_memory->len);
  for (guint i = 0; i < self->device_memory->len; i++)
    {
      const WickDeviceMemorySample *d
        = &g_array_index (self->device_memory, WickDeviceMemorySample, i);
      D (d->timestamp_ns), DS (d->device), D (d->present), D (d->used_bytes), D (d->free_bytes);
      D (d->reserved_bytes), D (d->capacity_bytes);
    }
  D (self->device_intervals->len);
  for (guint i = 0; i < self->device_intervals->len; i++)
    {
      const WickDeviceInterval *d = &g_array_index (self->device_intervals, WickDeviceInterval, i);
      DS (d->span_id), D (d->span), DS (d->device), DS (d->stream_id), DS (d->clock_id);
      DS (d->backend), D (d->start_ns), D (d->duration_ns);
    }
  D (self->gradients->len);
  for (guint i = 0; i < self->gradients->len; i++)
    {
      const WickGradient *g = &g_array_index (self->gradients, WickGradient, i);
      DS (g->event_id), DS (g->root), DS (g->key), D (g->state), D (g->has_norm);
      digest_f64 (sum, g->norm);
    }
  D (self->edges->len);
  for (guint i = 0; i < self->edges->len; i++)
    {
      const WickEdge *e = &g_array_index (self->edges, WickEdge, i);
      D (e->edge_kind), DS (e->from), DS (e->to), D (e->host_duration_ns);
    }
  D (self->extension_records->len);
  for (guint i = 0; i < self->extension_records->len; i++)
    {
      const WickExtensionRecord *e
        = &g_array_index (self->extension_records, WickExtensionRecord, i);
      DS (e->kind), DS (e->json), D (e->timestamp_ns), D (e->line), D (e->flags), DS (e->label);
      DS (e->module), DS (e->stage), DS (e->verdict), DS (e->name), D (e->thread), D (e->os_tid);
    }
  /* the end, the Wick facts, the stream's verdict */
  D (self->has_terminal), D (self->outcome), D (self->terminal_ns), DS (self->terminal_reason);
  D (self->end_ns), D (self->attach.present), D (self->attach.attached_ns);
  D (self->attach.missing), D (self->attach.exact), D (self->attach.snapshot);
  D (self->losses.dropped), D (self->losses.lost), D (self->losses.detached);
  D (self->losses.records_dropped), D (self->wick_records_skipped), D (self->bad_addresses);
  g_checksum_update (sum, (const guchar *)(self->stream_error ? self->stream_error : ""), -1);
  D (self->stream_error_index), D (self->parse_error.failed), D (self->parse_error.line);

  char *hex = g_strdup (g_checksum_get_string (sum));
  g_checksum_free (sum);
  return hex;
}

#undef D
#undef DS
