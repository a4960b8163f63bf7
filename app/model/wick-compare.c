/* wick-compare.c — two runs or two cohorts, side by side (see wick-compare.h). */
#include "config.h"

#include <math.h>
#include <string.h>

/* json-glib: only a Chrome trace's top-level members (foreign JSON); Wick's go by the scanner. */
#include <json-glib/json-glib.h>

#include "wick-chrome-import.h"
#include "wick-compare.h"
#include "wick-steps.h"
#include "wick-gradient-report.h"
#include "wick-json-scanner.h"
#include "wick-memory-series.h"
#include "wick-tracks.h"

G_DEFINE_QUARK (wick-compare-error-quark, wick_compare_error)

/* ---- random numbers: xoshiro256**, seeded by splitmix64 ---- */

typedef struct
{
  guint64 s[4];
} Rng;

static guint64
splitmix64 (guint64 *x)
{
  guint64 z = (*x += G_GUINT64_CONSTANT (0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94d049bb133111eb);
  return z ^ (z >> 31);
}

static void
rng_seed (Rng *rng, guint64 seed)
{
  for (int i = 0; i < 4; i++)
    rng->s[i] = splitmix64 (&seed);
}

static inline guint64
rotl (guint64 x, int k)
{
  return (x << k) | (x >> (64 - k));
}

static inline guint64
rng_next (Rng *rng)
{
  guint64 *s = rng->s;
  guint64 result = rotl (s[1] * 5, 7) * 9;
  guint64 t = s[1] << 17;

  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl (s[3], 45);
  return result;
}

/* Uniform in [0, n) (Lemire's multiply-shift; the bias is below 2^-32 for n < 2^32). */
static inline guint
rng_below (Rng *rng, guint n)
{
  return (guint) (((rng_next (rng) >> 32) * (guint64) n) >> 32);
}

static guint64
hash_name (const char *name, guint kind)
{
  guint64 h = G_GUINT64_CONSTANT (1469598103934665603) ^ kind;

  for (const guchar *p = (const guchar *) name; *p; p++)
    h = (h ^ *p) * G_GUINT64_CONSTANT (1099511628211);
  return h;
}

/* Inverse of the standard normal CDF (Acklam's rational approximation,
 * relative error below 1.2e-9), for the corrected interval. */
static double
normal_quantile (double p)
{
  static const double a[] = { -3.969683028665376e+01, 2.209460984245205e+02,
                              -2.759285104469687e+02, 1.383577518672690e+02,
                              -3.066479806614716e+01, 2.506628277459239e+00 };
  static const double b[] = { -5.447609879822406e+01, 1.615858368580409e+02,
                              -1.556989798598866e+02, 6.680131188771972e+01,
                              -1.328068155288572e+01 };
  static const double c[] = { -7.784894002430293e-03, -3.223964580411365e-01,
                              -2.400758277161838e+00, -2.549732539343734e+00,
                              4.374664141464968e+00,  2.938163982698783e+00 };
  static const double d[] = { 7.784695709041462e-03, 3.224671290700398e-01,
                              2.445134137142996e+00, 3.754408661907416e+00 };
  double q, r;

  if (p <= 0)
    return -INFINITY;
  if (p >= 1)
    return INFINITY;
  if (p < 0.02425)
    {
      q = sqrt (-2 * log (p));
      return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
             / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    }
  if (p > 1 - 0.02425)
    return -normal_quantile (1 - p);
  q = p - 0.5;
  r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q
         / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

/* The regularized incomplete beta function I_x(a, b) (continued fraction,
 * modified Lentz), for Student's t tail below. */
static double
beta_fraction (double a, double b, double x)
{
  const double tiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1), h;

  d = 1 / (fabs (d) < tiny ? tiny : d);
  h = d;
  for (int m = 1; m <= 300; m++)
    {
      double m2 = 2.0 * m, num, delta;

      num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
      d = 1 + num * d;
      c = 1 + num / c;
      d = 1 / (fabs (d) < tiny ? tiny : d);
      c = fabs (c) < tiny ? tiny : c;
      h *= d * c;
      num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
      d = 1 + num * d;
      c = 1 + num / c;
      d = 1 / (fabs (d) < tiny ? tiny : d);
      c = fabs (c) < tiny ? tiny : c;
      delta = d * c;
      h *= delta;
      if (fabs (delta - 1) < 1e-14)
        break;
    }
  return h;
}

static double
incomplete_beta (double a, double b, double x)
{
  double front;

  if (x <= 0)
    return 0;
  if (x >= 1)
    return 1;
  front = exp (lgamma (a + b) - lgamma (a) - lgamma (b) + a * log (x) + b * log1p (-x));
  if (x < (a + 1) / (a + b + 2))
    return front * beta_fraction (a, b, x) / a;
  return 1 - front * beta_fraction (b, a, 1 - x) / b;
}

/* P(T > t) for Student's t with df degrees of freedom (t >= 0). */
static double
t_upper_tail (double t, double df)
{
  return 0.5 * incomplete_beta (df / 2, 0.5, df / (df + t * t));
}

/* The t with P(T > t) = tail (0 < tail < 0.5), by bisection: the corrected
 * interval's multiplier. df beyond 1e6 is the normal's. */
static double
t_quantile_upper (double tail, double df)
{
  double lo = 0, hi = 8;

  if (!(df < 1e6))
    return normal_quantile (1 - tail);
  while (t_upper_tail (hi, df) > tail && hi < 1e12)
    hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-9 * hi; i++)
    {
      double mid = 0.5 * (lo + hi);
      if (t_upper_tail (mid, df) > tail)
        lo = mid;
      else
        hi = mid;
    }
  return 0.5 * (lo + hi);
}

static int
compare_u64 (gconstpointer a, gconstpointer b)
{
  guint64 x = *(const guint64 *) a, y = *(const guint64 *) b;
  return x < y ? -1 : x > y;
}

static int
compare_double (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* ---- identity ---- */

static void
difference_free (gpointer data)
{
  WickCompareDifference *d = data;

  g_free (d->field);
  g_free (d->a);
  g_free (d->b);
  g_free (d->run);
  g_free (d);
}

static gboolean
is_chrome (WickDocument *doc)
{
  return wick_chrome_info_get (doc) != NULL;
}

static const char *
format_of (WickDocument *doc)
{
  /* a Chrome import's meta is synthesized: the format is where it came from */
  return is_chrome (doc) || !wick_document_get_meta (doc)->present ? "chrome" : "candle-graph";
}

static char *
meta_str (WickDocument *doc, WickStr s)
{
  const char *v = s ? wick_document_str (doc, s) : NULL;
  return g_strdup (v ? v : "(absent)");
}

/* Fields in the order they are reported; informational ones never refuse. */
typedef enum
{
  ID_FORMAT,
  ID_ENTRYPOINT,
  ID_PHASE,
  ID_DEVICE,
  ID_TIMING,
  ID_CAPTURE_STEP,
  ID_WARMUP,
  ID_IDENTITY,
  ID_WORKLOAD,
  ID_MODEL,
  ID_CONFIG,
  ID_DATA,
  ID_SEED_POLICY,
  ID_BATCH,
  ID_ACCUMULATION,
  ID_PRECISION,
  ID_DEVICE_STATE,
  ID_PAIR,
  ID_IMPLEMENTATION,
  N_ID_FIELDS
} IdField;

static const char *const id_field_names[N_ID_FIELDS] = {
  "format",        "entrypoint",        "phase",        "device",
  "timing_mode",   "capture_step",      "warmup_steps", "comparison_identity",
  "workload_id",   "model_id",          "config_id",    "data_id",
  "seed_policy",   "physical_batch",    "accumulation_steps", "precision",
  "device_state",  "pair_id",           "implementation_id",
};

static char *
id_value (WickDocument *doc, IdField field)
{
  const WickTraceMeta *m = wick_document_get_meta (doc);
  const WickComparisonIdentityMeta *c = &m->comparison_identity;

  if (field == ID_FORMAT)
    return g_strdup (format_of (doc));
  if (!m->present)
    return g_strdup ("(absent)");
  switch (field)
    {
    case ID_ENTRYPOINT:
      return meta_str (doc, m->entrypoint);
    case ID_PHASE:
      return g_strdup (wick_phase_to_string (m->phase));
    case ID_DEVICE:
      return meta_str (doc, m->device);
    case ID_TIMING:
      return g_strdup (wick_timing_mode_to_string (m->timing_mode));
    case ID_CAPTURE_STEP:
      return g_strdup_printf ("%" G_GUINT64_FORMAT, m->capture_step);
    case ID_WARMUP:
      return g_strdup_printf ("%" G_GUINT64_FORMAT, m->warmup_steps);
    case ID_IDENTITY:
      return g_strdup (c->present ? "present" : "(absent)");
    default:
      break;
    }
  if (!c->present)
    return NULL; /* reported once, as comparison_identity */
  switch (field)
    {
    case ID_WORKLOAD:
      return meta_str (doc, c->workload_id);
    case ID_MODEL:
      return meta_str (doc, c->model_id);
    case ID_CONFIG:
      return meta_str (doc, c->config_id);
    case ID_DATA:
      return meta_str (doc, c->data_id);
    case ID_SEED_POLICY:
      return meta_str (doc, c->seed_policy);
    case ID_BATCH:
      return g_strdup_printf ("%" G_GUINT64_FORMAT, c->physical_batch);
    case ID_ACCUMULATION:
      return g_strdup_printf ("%" G_GUINT64_FORMAT, c->accumulation_steps);
    case ID_PRECISION:
      return meta_str (doc, c->precision);
    case ID_DEVICE_STATE:
      return meta_str (doc, c->device_state);
    case ID_PAIR:
      return meta_str (doc, c->pair_id);
    case ID_IMPLEMENTATION:
      return meta_str (doc, c->implementation_id);
    default:
      return NULL;
    }
}

/* ---- identity of a Chrome/PyTorch trace: what the file carries ---- */

/* Top-level members that name one file, never its configuration. */
static const char *const chrome_per_file[]
  = { "traceName", "baseTimeNanoseconds", "trace_id", "start_ts", "finish_ts", "time", "pid" };

/* A value as shown: a string's text, else its JSON; a long one (a process
 * group list of 300 ranks) cut, with its length and a hash so that two that
 * differ still differ. */
static char *
json_scalar_text (JsonNode *node)
{
  g_autofree char *text
    = JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING
        ? g_strdup (json_node_get_string (node))
        : json_to_string (node, FALSE);
  gsize len = strlen (text);

  if (len <= 120)
    return g_steal_pointer (&text);
  return g_strdup_printf ("%.100s… (%" G_GSIZE_FORMAT " bytes, hash %08x)", text, len,
                          g_str_hash (text));
}

/* "2 × NVIDIA H100 80GB HBM3 (compute 9.0, 79.1 GiB)": per distinct device. */
static char *
device_properties_text (JsonArray *devices)
{
  g_autoptr (GString) out = g_string_new (NULL);
  g_autoptr (GPtrArray) kinds = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GArray) counts = g_array_new (FALSE, TRUE, sizeof (guint));
  guint n = json_array_get_length (devices);

  for (guint i = 0; i < n; i++)
    {
      JsonNode *node = json_array_get_element (devices, i);
      if (!JSON_NODE_HOLDS_OBJECT (node))
        continue;
      JsonObject *o = json_node_get_object (node);
      JsonNode *name_node = json_object_get_member (o, "name");
      const char *name = name_node != NULL && JSON_NODE_HOLDS_VALUE (name_node)
                             && json_node_get_value_type (name_node) == G_TYPE_STRING
                           ? json_node_get_string (name_node)
                           : "?";
      g_autofree char *kind
        = g_strdup_printf ("%s (compute %" G_GINT64_FORMAT ".%" G_GINT64_FORMAT ", %.1f GiB)", name,
                           json_object_get_int_member_with_default (o, "computeMajor", 0),
                           json_object_get_int_member_with_default (o, "computeMinor", 0),
                           (double)json_object_get_int_member_with_default (o, "totalGlobalMem", 0)
                             / (1024.0 * 1024.0 * 1024.0));
      guint k;
      for (k = 0; k < kinds->len; k++)
        if (strcmp (g_ptr_array_index (kinds, k), kind) == 0)
          break;
      if (k == kinds->len)
        {
          guint zero = 0;
          g_ptr_array_add (kinds, g_steal_pointer (&kind));
          g_array_append_val (counts, zero);
        }
      g_array_index (counts, guint, k)++;
    }
  for (guint k = 0; k < kinds->len; k++)
    g_string_append_printf (out, "%s%u × %s", k ? ", " : "", g_array_index (counts, guint, k),
                            (const char *)g_ptr_array_index (kinds, k));
  if (out->len == 0)
    g_string_append (out, "none");
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* The identity of a Chrome trace as (field, value) pairs in file order: the
 * members of distributedInfo one by one (distributedInfo.rank, .world_size,
 * .backend, .nccl_version, ...), deviceProperties summarised, and every other
 * top-level scalar (schemaVersion, cuda_runtime_version, cuda_driver_version,
 * host_name, ...) but those that name the file. Its file name and the
 * meta Wick made up for it are not part of it. */
static GPtrArray *
chrome_identity (WickDocument *doc)
{
  const WickChromeInfo *info = wick_chrome_info_get (doc);
  GPtrArray *pairs = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; info != NULL && i + 1 < info->metadata->len; i += 2)
    {
      const char *key = g_ptr_array_index (info->metadata, i);
      const char *text = g_ptr_array_index (info->metadata, i + 1);
      /* foreign JSON: a member of the profiler's file (distributedInfo, deviceProperties, ...) */
      g_autoptr (JsonParser) parser = json_parser_new ();
      JsonNode *root;
      gboolean per_file = FALSE;

      for (guint k = 0; k < G_N_ELEMENTS (chrome_per_file); k++)
        per_file |= strcmp (key, chrome_per_file[k]) == 0;
      if (per_file || !json_parser_load_from_data (parser, text, -1, NULL))
        continue;
      root = json_parser_get_root (parser);
      if (strcmp (key, "distributedInfo") == 0 && JSON_NODE_HOLDS_OBJECT (root))
        {
          JsonObject *o = json_node_get_object (root);
          g_autoptr (GList) members = json_object_get_members (o);
          for (GList *m = members; m != NULL; m = m->next)
            {
              g_ptr_array_add (pairs, g_strdup_printf ("distributedInfo.%s", (char *)m->data));
              g_ptr_array_add (pairs, json_scalar_text (json_object_get_member (o, m->data)));
            }
        }
      else if (strcmp (key, "deviceProperties") == 0 && JSON_NODE_HOLDS_ARRAY (root))
        {
          g_ptr_array_add (pairs, g_strdup (key));
          g_ptr_array_add (pairs, device_properties_text (json_node_get_array (root)));
        }
      else if (JSON_NODE_HOLDS_VALUE (root))
        {
          g_ptr_array_add (pairs, g_strdup (key));
          g_ptr_array_add (pairs, json_scalar_text (root));
        }
    }
  return pairs;
}

static const char *
pairs_lookup (GPtrArray *pairs, const char *field)
{
  for (guint i = 0; i + 1 < pairs->len; i += 2)
    if (strcmp (g_ptr_array_index (pairs, i), field) == 0)
      return g_ptr_array_index (pairs, i + 1);
  return NULL;
}

static void
add_difference (GPtrArray *out, const char *field, const char *a, const char *b, guint side,
                guint index, gboolean informational)
{
  WickCompareDifference *d = g_new0 (WickCompareDifference, 1);

  d->field = g_strdup (field);
  d->a = g_strdup (a ? a : "(absent)");
  d->b = g_strdup (b ? b : "(absent)");
  d->run = g_strdup_printf ("%c%u", side == 0 ? 'A' : 'B', index + 1);
  d->informational = informational;
  g_ptr_array_add (out, d);
}

/* Two Chrome traces (two ranks of a job, today's and yesterday's): every
 * field of either that differs, shown, never refused; a file name is not a
 * configuration. */
static void
chrome_differences (GPtrArray *out, WickDocument *a, WickDocument *other, guint side, guint index)
{
  g_autoptr (GPtrArray) pa = chrome_identity (a);
  g_autoptr (GPtrArray) pb = chrome_identity (other);

  for (guint i = 0; i + 1 < pa->len; i += 2)
    {
      const char *field = g_ptr_array_index (pa, i);
      const char *vb = pairs_lookup (pb, field);
      if (vb == NULL || strcmp (g_ptr_array_index (pa, i + 1), vb) != 0)
        add_difference (out, field, g_ptr_array_index (pa, i + 1), vb, side, index, TRUE);
    }
  for (guint i = 0; i + 1 < pb->len; i += 2)
    if (pairs_lookup (pa, g_ptr_array_index (pb, i)) == NULL)
      add_difference (out, g_ptr_array_index (pb, i), NULL, g_ptr_array_index (pb, i + 1), side,
                      index, TRUE);
}

GPtrArray *
wick_compare_identity (WickDocument *const *a, guint n_a, WickDocument *const *b, guint n_b)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (difference_free);

  if (n_a == 0)
    return out;
  for (guint side = 0; side < 2; side++)
    {
      WickDocument *const *docs = side == 0 ? a : b;
      guint n = side == 0 ? n_a : n_b;

      for (guint i = side == 0 ? 1 : 0; i < n; i++)
        if (is_chrome (a[0]) && is_chrome (docs[i]))
          chrome_differences (out, a[0], docs[i], side, i);
        else
          for (guint f = 0; f < N_ID_FIELDS; f++)
            {
              g_autofree char *va = id_value (a[0], f);
              g_autofree char *vb = id_value (docs[i], f);

              /* NULL: that run has no comparison_identity, which the
               * comparison_identity field itself reports */
              if (va == NULL || vb == NULL || strcmp (va, vb) == 0)
                continue;
              add_difference (out, id_field_names[f], va, vb, side, i, f == ID_IMPLEMENTATION);
            }
    }
  return out;
}

/* ---- steps and the measured region of one run ---- */

typedef struct
{
  WickDocument *doc;
  const WickSpan *spans;
  guint n_spans;
  gint32 *step_of;  /* span → index into steps, -1 outside every step */
  GArray *steps;    /* guint32 span indices of the step spans, by start */
  guint64 *self_ns; /* per span */
  guint64 measured_start, measured_ns;
  GPtrArray *memory; /* WickMemorySeries, for the step peaks and the memory table */
} RunInfo;

static void
run_info_init (RunInfo *run, WickDocument *doc)
{
  const WickSpan *spans;
  guint n;
  guint64 root_ns = 0;
  WickSteps *steps = wick_steps_find (doc);

  run->doc = doc;
  run->spans = spans = wick_document_get_spans (doc, &n);
  run->n_spans = n;
  /* the steps by wick-steps.h's rule; this run keeps their arrays */
  run->steps = g_array_ref (steps->spans);
  run->step_of = g_steal_pointer (&steps->step_of);
  wick_steps_free (steps);
  run->self_ns = g_new0 (guint64, MAX (n, 1));
  run->memory = wick_memory_series_build (doc);
  run->measured_start = 0;
  run->measured_ns = 0;

  for (guint i = 0; i < n; i++)
    {
      const WickSpan *s = &spans[i];
      if (s->flags & WICK_SPAN_FLAG_MEASURED && run->measured_ns == 0)
        {
          run->measured_start = s->start_ns;
          run->measured_ns = s->duration_ns;
        }
      if (s->parent < 0 && s->duration_ns > root_ns)
        {
          root_ns = s->duration_ns;
          if (run->measured_ns == 0)
            run->measured_start = s->start_ns;
        }
      if (s->parent >= 0 && (guint) s->parent < n)
        run->self_ns[s->parent] += s->duration_ns;
    }
  if (run->measured_ns == 0)
    run->measured_ns = root_ns ? root_ns : wick_document_get_end_ns (doc);
  for (guint i = 0; i < n; i++)
    run->self_ns[i] = spans[i].duration_ns > run->self_ns[i]
                        ? spans[i].duration_ns - run->self_ns[i]
                        : 0;
}

static void
run_info_clear (RunInfo *run)
{
  g_free (run->step_of);
  g_free (run->self_ns);
  g_array_unref (run->steps);
  g_ptr_array_unref (run->memory);
}

/* ---- per-name aggregation ---- */

typedef struct
{
  GArray *durations; /* guint64, occurrences in file order */
  GArray *steps;     /* gint32 step of each occurrence */
  double self_total;
  guint n_steps; /* of the run */
  /* resampling units, after finish */
  double *unit_sum;
  guint32 *unit_count;
  guint n_units;
} NameRun;

typedef struct
{
  char *name;
  guint8 kind;
  NameRun *runs[2]; /* per side: array of n runs */
} NameEntry;

static void
name_entry_free (gpointer data)
{
  NameEntry *e = data;

  /* e->runs were cleared once the entry was summarised */
  g_free (e->name);
  g_free (e);
}

typedef struct
{
  guint n_runs[2];
  GHashTable *names; /* "kind\x1fname" → NameEntry */
  GPtrArray *order;  /* NameEntry, first-seen order */
} Aggregate;

static NameRun *
name_run (Aggregate *agg, guint kind, const char *name, guint side, guint run)
{
  g_autofree char *key = g_strdup_printf ("%u\x1f%s", kind, name);
  NameEntry *e = g_hash_table_lookup (agg->names, key);
  NameRun *r;

  if (e == NULL)
    {
      e = g_new0 (NameEntry, 1);
      e->name = g_strdup (name);
      e->kind = kind;
      for (int s = 0; s < 2; s++)
        e->runs[s] = g_new0 (NameRun, MAX (agg->n_runs[s], 1));
      g_hash_table_insert (agg->names, g_steal_pointer (&key), e);
      g_ptr_array_add (agg->order, e);
    }
  r = &e->runs[side][run];
  if (r->durations == NULL)
    {
      r->durations = g_array_new (FALSE, FALSE, sizeof (guint64));
      r->steps = g_array_new (FALSE, FALSE, sizeof (gint32));
    }
  return r;
}

static void
add_occurrence (NameRun *r, guint64 duration, gint32 step, double self_ns)
{
  g_array_append_val (r->durations, duration);
  g_array_append_val (r->steps, step);
  r->self_total += self_ns;
}

/* The step whose time range holds @t (steps are sorted by start), -1 when none. */
static gint32
step_at (const RunInfo *run, guint64 t)
{
  guint lo = 0, hi = run->steps->len;

  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (run->spans[g_array_index (run->steps, guint32, mid)].start_ns <= t)
        lo = mid + 1;
      else
        hi = mid;
    }
  if (lo == 0)
    return -1;
  {
    const WickSpan *s = &run->spans[g_array_index (run->steps, guint32, lo - 1)];
    return t - s->start_ns < MAX (s->duration_ns, 1) ? (gint32) (lo - 1) : -1;
  }
}

/* Kernels of a Chrome/PyTorch trace: device-track slices by their name, in
 * the step whose time range holds their start (GPU work of step N usually
 * runs inside ProfilerStep#N; work that spills past it counts by blocks). */
static void
collect_device_slices (Aggregate *agg, const RunInfo *run, guint side, guint index)
{
  WickTracks *tracks = wick_document_get_tracks (run->doc);
  const WickDeviceSlice *slices;
  guint n;

  if (tracks == NULL || wick_tracks_get_format (tracks) != WICK_TRACE_FORMAT_CHROME)
    return;
  slices = wick_tracks_get_device_slices (tracks, &n);
  for (guint i = 0; i < n; i++)
    {
      const char *name = wick_document_str (run->doc, slices[i].name);
      NameRun *r = name_run (agg, WICK_COMPARE_KERNEL, name ? name : "(unnamed)", side, index);
      add_occurrence (r, slices[i].duration_ns, step_at (run, slices[i].start_ns),
                      (double) slices[i].duration_ns);
    }
}

static void
collect_run (Aggregate *agg, const RunInfo *run, guint side, guint index)
{
  WickDocument *doc = run->doc;
  const WickOp *ops;
  const WickDeviceInterval *intervals;
  guint n_ops, n_intervals;

  for (guint i = 0; i < run->n_spans; i++)
    {
      const WickSpan *s = &run->spans[i];
      if (wick_document_is_synthetic_span (doc, i))
        continue;
      NameRun *r = name_run (agg, WICK_COMPARE_SPAN, wick_document_str (doc, s->name), side, index);
      add_occurrence (r, s->duration_ns, run->step_of[i], (double) run->self_ns[i]);
    }
  ops = wick_document_get_ops (doc, &n_ops);
  for (guint i = 0; i < n_ops; i++)
    {
      gint32 step = ops[i].span >= 0 ? run->step_of[ops[i].span] : -1;
      NameRun *r = name_run (agg, WICK_COMPARE_OP, wick_document_str (doc, ops[i].op_name), side,
                             index);
      add_occurrence (r, ops[i].duration_ns, step, (double) ops[i].duration_ns);
    }
  intervals = wick_document_get_device_intervals (doc, &n_intervals);
  for (guint i = 0; i < n_intervals; i++)
    {
      const WickDeviceInterval *d = &intervals[i];
      const char *name = d->span >= 0 ? wick_document_str (doc, run->spans[d->span].name)
                                      : "(no span)";
      gint32 step = d->span >= 0 ? run->step_of[d->span] : -1;
      NameRun *r = name_run (agg, WICK_COMPARE_KERNEL, name, side, index);
      add_occurrence (r, d->duration_ns, step, (double) d->duration_ns);
    }
  collect_device_slices (agg, run, side, index);
}

/* Units of one name in one run: its steps (merged to at most MAX_UNITS
 * consecutive groups) when every occurrence lies in a step, else blocks of
 * consecutive occurrences. */
static void
make_units (NameRun *r, guint n_steps)
{
  guint n = r->durations ? r->durations->len : 0;
  gboolean in_steps = n_steps >= WICK_COMPARE_MIN_STEPS && n > 0;

  if (n == 0)
    return;
  for (guint i = 0; in_steps && i < n; i++)
    if (g_array_index (r->steps, gint32, i) < 0)
      in_steps = FALSE;
  r->n_units = in_steps ? MIN (n_steps, WICK_COMPARE_MAX_UNITS) : MIN (n, WICK_COMPARE_BLOCKS);
  r->unit_sum = g_new0 (double, r->n_units);
  r->unit_count = g_new0 (guint32, r->n_units);
  for (guint i = 0; i < n; i++)
    {
      guint64 u = in_steps ? (guint64) g_array_index (r->steps, gint32, i) * r->n_units / n_steps
                           : (guint64) i * r->n_units / n;
      r->unit_sum[u] += (double) g_array_index (r->durations, guint64, i);
      r->unit_count[u]++;
    }
}

static void
name_run_clear (NameRun *r)
{
  if (r->durations)
    g_array_unref (r->durations);
  if (r->steps)
    g_array_unref (r->steps);
  g_free (r->unit_sum);
  g_free (r->unit_count);
}

/* One side of a resample: the mean duration per occurrence. */
static double
resample_side (Rng *rng, const NameRun *runs, guint n_runs)
{
  double sum = 0;
  guint64 count = 0;

  for (guint k = 0; k < n_runs; k++)
    {
      const NameRun *r = n_runs >= 2 ? &runs[rng_below (rng, n_runs)] : &runs[k];
      for (guint j = 0; j < r->n_units; j++)
        {
          guint u = rng_below (rng, r->n_units);
          sum += r->unit_sum[u];
          count += r->unit_count[u];
        }
    }
  return count ? sum / (double) count : NAN;
}

static void
side_summary (const NameRun *runs, guint n_runs, guint64 *count, double *per_run,
              double *per_step, double *mean, double *median, double *self, guint *units,
              guint *nonempty, const RunInfo *infos)
{
  g_autoptr (GArray) all = g_array_new (FALSE, FALSE, sizeof (guint64));
  double total = 0, self_total = 0, steps = 0;

  *count = 0;
  *units = *nonempty = 0;
  for (guint k = 0; k < n_runs; k++)
    {
      const NameRun *r = &runs[k];
      steps += infos[k].steps->len;
      if (!r->durations)
        continue;
      g_array_append_vals (all, r->durations->data, r->durations->len);
      for (guint i = 0; i < r->durations->len; i++)
        total += (double) g_array_index (r->durations, guint64, i);
      self_total += r->self_total;
      *units += r->n_units;
      for (guint j = 0; j < r->n_units; j++)
        *nonempty += r->unit_count[j] > 0;
    }
  *count = all->len;
  *per_run = n_runs ? (double) all->len / n_runs : 0;
  *per_step = steps > 0 ? (double) all->len / steps : 0;
  *mean = all->len ? total / all->len : 0;
  *self = all->len ? self_total / all->len : 0;
  *median = 0;
  if (all->len)
    {
      g_array_sort (all, compare_u64);
      *median = all->len % 2 ? (double) g_array_index (all, guint64, all->len / 2)
                             : ((double) g_array_index (all, guint64, all->len / 2 - 1)
                                + (double) g_array_index (all, guint64, all->len / 2))
                                 / 2;
    }
}

static double
share_of (const NameRun *runs, guint n_runs, const RunInfo *infos)
{
  double share = 0;

  for (guint k = 0; k < n_runs; k++)
    {
      double total = 0;
      if (!runs[k].durations || infos[k].measured_ns == 0)
        continue;
      for (guint i = 0; i < runs[k].durations->len; i++)
        total += (double) g_array_index (runs[k].durations, guint64, i);
      share += total / (double) infos[k].measured_ns;
    }
  return n_runs ? share / n_runs : 0;
}

/* ---- memory, gradients, health, steps ---- */

static int
compare_memory_row (gconstpointer a, gconstpointer b)
{
  const WickCompareMemory *x = a, *y = b;
  int c = g_strcmp0 (x->device, y->device);
  return c ? c : g_strcmp0 (x->category, y->category);
}

static guint64
median_u64 (GArray *values)
{
  if (values->len == 0)
    return 0;
  g_array_sort (values, compare_u64);
  return g_array_index (values, guint64, values->len / 2);
}

typedef struct
{
  char *device;
  char *category;
  GArray *values[2]; /* guint64 per run; missing runs count 0 */
} MemoryKey;

static void
memory_key_free (gpointer data)
{
  MemoryKey *k = data;
  g_free (k->device);
  g_free (k->category);
  g_array_unref (k->values[0]);
  g_array_unref (k->values[1]);
  g_free (k);
}

static void
memory_add (GHashTable *keys, const char *device, const char *category, guint side,
            guint64 value)
{
  g_autofree char *id = g_strdup_printf ("%s\x1f%s", device, category);
  MemoryKey *k = g_hash_table_lookup (keys, id);

  if (k == NULL)
    {
      k = g_new0 (MemoryKey, 1);
      k->device = g_strdup (device);
      k->category = g_strdup (category);
      k->values[0] = g_array_new (FALSE, FALSE, sizeof (guint64));
      k->values[1] = g_array_new (FALSE, FALSE, sizeof (guint64));
      g_hash_table_insert (keys, g_steal_pointer (&id), k);
    }
  g_array_append_val (k->values[side], value);
}

static void
compare_memory (WickComparison *c, RunInfo *const infos[2], const guint n[2])
{
  g_autoptr (GHashTable) keys
    = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, memory_key_free);
  GHashTableIter iter;
  gpointer value;

  for (guint side = 0; side < 2; side++)
    for (guint i = 0; i < n[side]; i++)
      {
        WickDocument *doc = infos[side][i].doc;
        GPtrArray *logical = infos[side][i].memory;
        g_autoptr (GPtrArray) physical = wick_device_memory_series_build (doc);

        for (guint s = 0; s < logical->len; s++)
          {
            const WickMemorySeries *series = g_ptr_array_index (logical, s);
            const char *device = wick_document_str (doc, series->device);
            for (guint cat = 0; cat < WICK_N_CATEGORIES; cat++)
              if (series->peak[cat])
                memory_add (keys, device ? device : "", wick_memory_category_to_string (cat),
                            side, series->peak[cat]);
          }
        for (guint s = 0; s < physical->len; s++)
          {
            const WickDeviceMemorySeries *series = g_ptr_array_index (physical, s);
            const char *device = wick_document_str (doc, series->device);
            if (series->max[WICK_DEVICE_SERIES_USED])
              memory_add (keys, device ? device : "", "physical_used", side,
                          series->max[WICK_DEVICE_SERIES_USED]);
            if (series->max[WICK_DEVICE_SERIES_RESERVED])
              memory_add (keys, device ? device : "", "physical_reserved", side,
                          series->max[WICK_DEVICE_SERIES_RESERVED]);
          }
      }
  g_hash_table_iter_init (&iter, keys);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      MemoryKey *k = value;
      WickCompareMemory row = { g_strdup (k->device), g_strdup (k->category), 0, 0 };
      guint64 zero = 0;

      /* a run without the key had 0 there */
      for (guint side = 0; side < 2; side++)
        while (k->values[side]->len < n[side])
          g_array_append_val (k->values[side], zero);
      row.peak_a = median_u64 (k->values[0]);
      row.peak_b = median_u64 (k->values[1]);
      g_array_append_val (c->memory, row);
    }
  g_array_sort (c->memory, compare_memory_row);
}

static const char *
state_name (const WickGradientEntryRow *row)
{
  if (!row || !row->observed)
    return "absent";
  return wick_gradient_state_to_string (row->state);
}

static void
compare_gradients (WickComparison *c, WickDocument *a, WickDocument *b)
{
  g_autoptr (WickGradientReport) ra = wick_gradient_report_new (a);
  g_autoptr (WickGradientReport) rb = wick_gradient_report_new (b);
  g_autoptr (GHashTable) by_key = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  c->coverage_a = g_strdup (wick_coverage_verdict_to_string (ra->verdict));
  c->coverage_b = g_strdup (wick_coverage_verdict_to_string (rb->verdict));
  for (guint i = 0; ra->families && i < ra->families->len; i++)
    {
      const WickGradientFamilyRow *f = &g_array_index (ra->families, WickGradientFamilyRow, i);
      WickCompareGradientFamily row = { g_strdup (wick_document_str (a, f->family)), f->present, 0 };
      g_array_append_val (c->gradient_families, row);
    }
  for (guint i = 0; rb->families && i < rb->families->len; i++)
    {
      const WickGradientFamilyRow *f = &g_array_index (rb->families, WickGradientFamilyRow, i);
      const char *name = wick_document_str (b, f->family);
      gboolean found = FALSE;
      for (guint j = 0; j < c->gradient_families->len; j++)
        {
          WickCompareGradientFamily *row
            = &g_array_index (c->gradient_families, WickCompareGradientFamily, j);
          if (g_strcmp0 (row->family, name) == 0)
            {
              row->present_b = f->present;
              found = TRUE;
            }
        }
      if (!found)
        {
          WickCompareGradientFamily row = { g_strdup (name), 0, f->present };
          g_array_append_val (c->gradient_families, row);
        }
    }

  for (guint i = 0; ra->entries && i < ra->entries->len; i++)
    {
      const WickGradientEntryRow *e = &g_array_index (ra->entries, WickGradientEntryRow, i);
      g_hash_table_insert (by_key,
                           g_strdup_printf ("%s\x1f%s", wick_document_str (a, e->root),
                                            wick_document_str (a, e->key)),
                           (gpointer) e);
    }
  for (guint i = 0; rb->entries && i < rb->entries->len; i++)
    {
      const WickGradientEntryRow *eb = &g_array_index (rb->entries, WickGradientEntryRow, i);
      g_autofree char *key = g_strdup_printf ("%s\x1f%s", wick_document_str (b, eb->root),
                                              wick_document_str (b, eb->key));
      const WickGradientEntryRow *ea = g_hash_table_lookup (by_key, key);
      const char *sa = state_name (ea), *sb = state_name (eb);
      double na = ea && ea->observed && ea->has_norm ? ea->norm : NAN;
      double nb = eb->observed && eb->has_norm ? eb->norm : NAN;
      const char *change = NULL;

      if (ea)
        g_hash_table_remove (by_key, key);
      if (strcmp (sa, sb) != 0)
        change = "state";
      else if (!isnan (na) && !isnan (nb) && na > 0 && nb > 0
               && (nb / na > WICK_COMPARE_NORM_FACTOR || na / nb > WICK_COMPARE_NORM_FACTOR))
        change = "norm";
      if (change)
        {
          WickCompareGradientChange row = { g_strdup (wick_document_str (b, eb->root)),
                                            g_strdup (wick_document_str (b, eb->key)),
                                            g_strdup (sa),
                                            g_strdup (sb),
                                            na,
                                            nb,
                                            change };
          g_array_append_val (c->gradient_changes, row);
        }
    }
  /* entries of A's manifest that B's does not have */
  for (guint i = 0; ra->entries && i < ra->entries->len; i++)
    {
      const WickGradientEntryRow *e = &g_array_index (ra->entries, WickGradientEntryRow, i);
      g_autofree char *key = g_strdup_printf ("%s\x1f%s", wick_document_str (a, e->root),
                                              wick_document_str (a, e->key));
      if (g_hash_table_contains (by_key, key))
        {
          WickCompareGradientChange row = { g_strdup (wick_document_str (a, e->root)),
                                            g_strdup (wick_document_str (a, e->key)),
                                            g_strdup (state_name (e)),
                                            g_strdup ("absent"),
                                            e->observed && e->has_norm ? e->norm : NAN,
                                            NAN,
                                            "state" };
          g_array_append_val (c->gradient_changes, row);
        }
    }
}

typedef struct
{
  guint count;
  const WickHealthIssue *first;
} HealthCount;

static GHashTable *
health_codes (WickDocument *const *docs, guint n)
{
  GHashTable *codes = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free);

  for (guint i = 0; i < n; i++)
    {
      guint n_issues;
      const WickHealthIssue *issues = wick_document_get_health (docs[i], &n_issues);
      for (guint k = 0; k < n_issues; k++)
        {
          HealthCount *hc = g_hash_table_lookup (codes, issues[k].code);
          if (hc == NULL)
            {
              hc = g_new0 (HealthCount, 1);
              hc->first = &issues[k];
              g_hash_table_insert (codes, (gpointer) issues[k].code, hc);
            }
          hc->count++;
        }
    }
  return codes;
}

static int
compare_health_row (gconstpointer a, gconstpointer b)
{
  const WickCompareHealth *x = a, *y = b;
  if (x->in_a != y->in_a)
    return x->in_a ? -1 : 1;
  return g_strcmp0 (x->code, y->code);
}

static void
compare_health (WickComparison *c, WickDocument *const *docs[2], const guint n[2])
{
  g_autoptr (GHashTable) ha = health_codes (docs[0], n[0]);
  g_autoptr (GHashTable) hb = health_codes (docs[1], n[1]);

  for (guint side = 0; side < 2; side++)
    {
      GHashTable *mine = side == 0 ? ha : hb, *other = side == 0 ? hb : ha;
      GHashTableIter iter;
      gpointer key, value;

      g_hash_table_iter_init (&iter, mine);
      while (g_hash_table_iter_next (&iter, &key, &value))
        {
          HealthCount *hc = value;
          WickCompareHealth row;
          if (g_hash_table_contains (other, key))
            continue;
          row.code = g_strdup (key);
          row.severity = g_strdup (wick_severity_to_string (hc->first->severity));
          row.message = g_strdup (hc->first->message);
          row.count = hc->count;
          row.in_a = side == 0;
          g_array_append_val (c->health, row);
        }
    }
  g_array_sort (c->health, compare_health_row);
}

static double
median_of_durations (const WickCompareStep *steps, guint from, guint to)
{
  g_autoptr (GArray) d = g_array_new (FALSE, FALSE, sizeof (guint64));

  for (guint i = from; i < to; i++)
    g_array_append_val (d, steps[i].duration_ns);
  return (double) median_u64 (d);
}

static void
run_free (gpointer data)
{
  WickCompareRun *run = data;

  for (guint i = 0; i < run->steps->len; i++)
    g_free (g_array_index (run->steps, WickCompareStep, i).name);
  g_array_unref (run->steps);
  g_free (run->label);
  g_free (run->path);
  g_free (run);
}

static WickCompareRun *
make_run (const RunInfo *info, char side, guint index)
{
  WickCompareRun *run = g_new0 (WickCompareRun, 1);
  GPtrArray *logical = info->memory;
  guint n = info->steps->len;

  run->label = g_strdup_printf ("%c%u", side, index + 1);
  run->path = g_strdup (wick_document_get_path (info->doc));
  run->steps = g_array_sized_new (FALSE, TRUE, sizeof (WickCompareStep), n);
  run->measured_start_ns = info->measured_start;
  run->measured_ns = info->measured_ns;
  for (guint k = 0; k < n; k++)
    {
      const WickSpan *s = &info->spans[g_array_index (info->steps, guint32, k)];
      WickCompareStep step = { g_strdup (wick_document_str (info->doc, s->name)), s->start_ns,
                               s->duration_ns, 0 };
      g_array_append_val (run->steps, step);
    }
  /* memory peak per step: per device, the largest total live during the step
   * (the live total at its start included), summed over devices */
  for (guint d = 0; d < logical->len; d++)
    {
      const WickMemorySeries *series = g_ptr_array_index (logical, d);
      const WickMemoryPoint *pts = (const WickMemoryPoint *) series->points->data;
      guint np = series->points->len, p = 0;
      guint64 current = 0;

      for (guint k = 0; k < n; k++)
        {
          WickCompareStep *step = &g_array_index (run->steps, WickCompareStep, k);
          guint64 end = step->start_ns + step->duration_ns, peak;

          if (end < step->start_ns)
            end = G_MAXUINT64;
          while (p < np && pts[p].t_ns < step->start_ns)
            {
              current = 0;
              for (guint c = 0; c < WICK_N_CATEGORIES; c++)
                current += pts[p].live[c];
              p++;
            }
          peak = current;
          for (guint q = p; q < np && pts[q].t_ns <= end; q++)
            {
              guint64 total = 0;
              for (guint c = 0; c < WICK_N_CATEGORIES; c++)
                total += pts[q].live[c];
              peak = MAX (peak, total);
            }
          step->memory_peak += peak;
        }
    }
  run->drift = n >= 4 ? median_of_durations ((WickCompareStep *) run->steps->data, n / 2, n)
                          / MAX (median_of_durations ((WickCompareStep *) run->steps->data, 0,
                                                      n / 2),
                                 1.0)
                      : NAN;
  return run;
}

/* ---- the comparison ---- */

static int
compare_entries (gconstpointer a, gconstpointer b)
{
  const WickCompareEntry *x = a, *y = b;
  double cx, cy;

  if (x->significant != y->significant)
    return x->significant ? -1 : 1;
  if ((x->status != WICK_COMPARE_BOTH) != (y->status != WICK_COMPARE_BOTH))
    return x->status != WICK_COMPARE_BOTH ? -1 : 1;
  cx = isnan (x->ratio) || x->ratio <= 0 ? 0 : fabs (log (x->ratio));
  cy = isnan (y->ratio) || y->ratio <= 0 ? 0 : fabs (log (y->ratio));
  if (cx != cy)
    return cx > cy ? -1 : 1;
  if (x->kind != y->kind)
    return x->kind < y->kind ? -1 : 1;
  return g_strcmp0 (x->name, y->name);
}

static void
entry_clear (WickCompareEntry *e)
{
  g_free (e->name);
}

/* What the corrected interval needs of an entry's bootstrap: the standard
 * deviation of the log ratio, each side's variance inflated by n/(n - 1) (a
 * bootstrap of n units has the plug-in variance, which runs narrow by that
 * factor), and the Welch-Satterthwaite degrees of freedom of the two sides. */
typedef struct
{
  double log_sd;
  double df;
} Spread;

/* The sampling units of a side: its runs when it has two or more (they are
 * resampled first, and between-run variation dominates), else the run's units. */
static guint
side_units (const NameRun *runs, guint n_runs)
{
  guint units = 0;

  if (n_runs >= 2)
    return n_runs;
  for (guint k = 0; k < n_runs; k++)
    units += runs[k].n_units;
  return units;
}

static void
bootstrap (WickCompareEntry *e, const NameEntry *ne, const guint n_runs[2], guint n_resamples,
           guint64 seed, Spread *spread)
{
  Rng rng;
  g_autofree double *ratios = g_new (double, n_resamples);
  guint valid = 0;
  double mean[2] = { 0, 0 }, m2[2] = { 0, 0 };

  rng_seed (&rng, seed ^ hash_name (ne->name, ne->kind));
  for (guint r = 0; r < n_resamples; r++)
    {
      double sa = resample_side (&rng, ne->runs[0], n_runs[0]);
      double sb = resample_side (&rng, ne->runs[1], n_runs[1]);
      double logs[2];

      if (isnan (sa) || isnan (sb) || sa <= 0 || sb <= 0)
        continue;
      ratios[valid++] = sb / sa;
      logs[0] = log (sa);
      logs[1] = log (sb);
      for (int side = 0; side < 2; side++)
        {
          double delta = logs[side] - mean[side];
          mean[side] += delta / valid;
          m2[side] += delta * (logs[side] - mean[side]);
        }
    }
  if (valid < n_resamples / 2)
    {
      e->testable = FALSE;
      return;
    }
  qsort (ratios, valid, sizeof (double), compare_double);
  e->ci95_low = ratios[(guint) floor (0.025 * (valid - 1))];
  e->ci95_high = ratios[(guint) ceil (0.975 * (valid - 1))];
  {
    double var[2], df_part = 0;
    for (int side = 0; side < 2; side++)
      {
        double units = side_units (ne->runs[side], n_runs[side]);
        var[side] = valid > 1 ? m2[side] / (valid - 1) : 0;
        if (units >= 2)
          {
            var[side] *= units / (units - 1);
            df_part += var[side] * var[side] / (units - 1);
          }
      }
    spread->log_sd = sqrt (var[0] + var[1]);
    spread->df = df_part > 0 ? (var[0] + var[1]) * (var[0] + var[1]) / df_part : INFINITY;
    if (spread->df < 1)
      spread->df = 1;
  }
}

WickComparison *
wick_comparison_new (WickDocument *const *a, guint n_a, WickDocument *const *b, guint n_b,
                     const WickCompareOptions *options, GError **error)
{
  WickCompareOptions defaults = { FALSE, 0, 0, -1 };
  WickDocument *const *docs[2] = { a, b };
  const guint n[2] = { n_a, n_b };
  g_autoptr (GPtrArray) differences = NULL;
  WickComparison *c;
  RunInfo *infos[2];
  Aggregate agg = { { n_a, n_b }, NULL, NULL };
  g_autofree Spread *spread = NULL;

  if (options == NULL)
    options = &defaults;
  if (n_a == 0 || n_b == 0)
    {
      g_set_error (error, WICK_COMPARE_ERROR, WICK_COMPARE_ERROR_EMPTY,
                   "side %s has no run to compare", n_a == 0 ? "A" : "B");
      return NULL;
    }
  differences = wick_compare_identity (a, n_a, b, n_b);
  {
    g_autoptr (GString) names = g_string_new (NULL);
    for (guint i = 0; i < differences->len; i++)
      {
        const WickCompareDifference *d = g_ptr_array_index (differences, i);
        if (d->informational)
          continue;
        g_string_append_printf (names, "%s%s: %s vs %s (%s)", names->len ? "; " : "", d->field,
                                d->a, d->b, d->run);
      }
    if (names->len && !options->allow_mismatch)
      {
        g_set_error (error, WICK_COMPARE_ERROR, WICK_COMPARE_ERROR_MISMATCH,
                     "the runs are not the same configuration: %s (compare anyway with "
                     "--allow-mismatch)",
                     names->str);
        return NULL;
      }
  }

  c = g_new0 (WickComparison, 1);
  c->differences = g_steal_pointer (&differences);
  c->identity_match = TRUE;
  for (guint i = 0; i < c->differences->len; i++)
    if (!((WickCompareDifference *) g_ptr_array_index (c->differences, i))->informational)
      c->identity_match = FALSE;
  c->n_resamples = options->n_resamples ? options->n_resamples : WICK_COMPARE_RESAMPLES;
  c->seed = options->seed ? options->seed : WICK_COMPARE_SEED;
  c->min_change = options->min_change >= 0 ? options->min_change : WICK_COMPARE_MIN_CHANGE;
  c->entries = g_array_new (FALSE, TRUE, sizeof (WickCompareEntry));
  c->memory = g_array_new (FALSE, TRUE, sizeof (WickCompareMemory));
  c->gradient_families = g_array_new (FALSE, TRUE, sizeof (WickCompareGradientFamily));
  c->gradient_changes = g_array_new (FALSE, TRUE, sizeof (WickCompareGradientChange));
  c->health = g_array_new (FALSE, TRUE, sizeof (WickCompareHealth));
  c->runs_a = g_ptr_array_new_with_free_func (run_free);
  c->runs_b = g_ptr_array_new_with_free_func (run_free);

  agg.names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  agg.order = g_ptr_array_new_with_free_func (name_entry_free);
  for (guint side = 0; side < 2; side++)
    {
      infos[side] = g_new0 (RunInfo, n[side]);
      for (guint i = 0; i < n[side]; i++)
        {
          run_info_init (&infos[side][i], docs[side][i]);
          collect_run (&agg, &infos[side][i], side, i);
          g_ptr_array_add (side == 0 ? c->runs_a : c->runs_b,
                           make_run (&infos[side][i], side == 0 ? 'A' : 'B', i));
        }
    }

  /* summaries, units, bootstrap */
  spread = g_new0 (Spread, MAX (agg.order->len, 1));
  for (guint k = 0; k < agg.order->len; k++)
    {
      NameEntry *ne = g_ptr_array_index (agg.order, k);
      WickCompareEntry e = { 0 };
      guint nonempty_a, nonempty_b;

      for (guint side = 0; side < 2; side++)
        for (guint i = 0; i < n[side]; i++)
          make_units (&ne->runs[side][i], infos[side][i].steps->len);
      e.name = g_strdup (ne->name);
      e.kind = ne->kind;
      side_summary (ne->runs[0], n_a, &e.count_a, &e.count_per_run_a, &e.count_per_step_a,
                    &e.mean_ns_a, &e.median_ns_a, &e.self_ns_a, &e.units_a, &nonempty_a,
                    infos[0]);
      side_summary (ne->runs[1], n_b, &e.count_b, &e.count_per_run_b, &e.count_per_step_b,
                    &e.mean_ns_b, &e.median_ns_b, &e.self_ns_b, &e.units_b, &nonempty_b,
                    infos[1]);
      e.share_a = share_of (ne->runs[0], n_a, infos[0]);
      e.share_b = share_of (ne->runs[1], n_b, infos[1]);
      e.status = e.count_a == 0 ? WICK_COMPARE_ADDED
                 : e.count_b == 0 ? WICK_COMPARE_REMOVED
                                  : WICK_COMPARE_BOTH;
      e.ratio = e.status == WICK_COMPARE_BOTH && e.mean_ns_a > 0 ? e.mean_ns_b / e.mean_ns_a : NAN;
      e.ci95_low = e.ci95_high = e.corrected_low = e.corrected_high = NAN;
      e.testable = e.status == WICK_COMPARE_BOTH && e.mean_ns_a > 0 && e.mean_ns_b > 0
                   && e.units_a >= WICK_COMPARE_MIN_UNITS && e.units_b >= WICK_COMPARE_MIN_UNITS
                   && nonempty_a >= 2 && nonempty_b >= 2;
      if (e.testable)
        bootstrap (&e, ne, n, c->n_resamples, c->seed, &spread[c->entries->len]);
      if (e.testable)
        c->n_testable++;
      g_array_append_val (c->entries, e);
      for (guint side = 0; side < 2; side++)
        {
          for (guint i = 0; i < n[side]; i++)
            name_run_clear (&ne->runs[side][i]);
          g_free (ne->runs[side]);
          ne->runs[side] = NULL;
        }
    }

  /* Bonferroni over the testable entries, on the log ratio: Student's t at
   * level 1 - 0.05/(2m) with the entry's Welch degrees of freedom (a normal
   * quantile there held only for many units: at 8 steps and 1000 names it
   * flagged something in 14 of 20 noise-only pairs) */
  for (guint k = 0; k < c->entries->len; k++)
    {
      WickCompareEntry *e = &g_array_index (c->entries, WickCompareEntry, k);
      double t;
      if (!e->testable)
        continue;
      t = t_quantile_upper (0.05 / (2.0 * MAX (c->n_testable, 1)), spread[k].df);
      e->corrected_low = exp (log (e->ratio) - t * spread[k].log_sd);
      e->corrected_high = exp (log (e->ratio) + t * spread[k].log_sd);
      e->significant = (e->corrected_low > 1 || e->corrected_high < 1)
                       && (e->ci95_low > 1 || e->ci95_high < 1)
                       && fabs (e->ratio - 1) >= c->min_change;
      c->n_significant += e->significant;
    }
  g_array_sort (c->entries, compare_entries);

  compare_memory (c, infos, n);
  compare_gradients (c, a[0], b[0]);
  compare_health (c, docs, n);

  for (guint side = 0; side < 2; side++)
    {
      for (guint i = 0; i < n[side]; i++)
        run_info_clear (&infos[side][i]);
      g_free (infos[side]);
    }
  g_hash_table_unref (agg.names);
  g_ptr_array_unref (agg.order);
  return c;
}

void
wick_comparison_free (WickComparison *c)
{
  if (c == NULL)
    return;
  g_ptr_array_unref (c->differences);
  for (guint i = 0; i < c->entries->len; i++)
    entry_clear (&g_array_index (c->entries, WickCompareEntry, i));
  g_array_unref (c->entries);
  for (guint i = 0; i < c->memory->len; i++)
    {
      WickCompareMemory *m = &g_array_index (c->memory, WickCompareMemory, i);
      g_free (m->device);
      g_free (m->category);
    }
  g_array_unref (c->memory);
  for (guint i = 0; i < c->gradient_families->len; i++)
    g_free (g_array_index (c->gradient_families, WickCompareGradientFamily, i).family);
  g_array_unref (c->gradient_families);
  for (guint i = 0; i < c->gradient_changes->len; i++)
    {
      WickCompareGradientChange *g = &g_array_index (c->gradient_changes,
                                                     WickCompareGradientChange, i);
      g_free (g->root);
      g_free (g->key);
      g_free (g->state_a);
      g_free (g->state_b);
    }
  g_array_unref (c->gradient_changes);
  for (guint i = 0; i < c->health->len; i++)
    {
      WickCompareHealth *h = &g_array_index (c->health, WickCompareHealth, i);
      g_free (h->code);
      g_free (h->severity);
      g_free (h->message);
    }
  g_array_unref (c->health);
  g_ptr_array_unref (c->runs_a);
  g_ptr_array_unref (c->runs_b);
  g_free (c->coverage_a);
  g_free (c->coverage_b);
  g_free (c);
}

const char *
wick_compare_kind_to_string (WickCompareKind kind)
{
  switch (kind)
    {
    case WICK_COMPARE_SPAN:
      return "span";
    case WICK_COMPARE_OP:
      return "op";
    case WICK_COMPARE_KERNEL:
      return "kernel";
    default:
      return "unknown";
    }
}

const char *
wick_compare_status_to_string (WickCompareStatus status)
{
  switch (status)
    {
    case WICK_COMPARE_BOTH:
      return "both";
    case WICK_COMPARE_ADDED:
      return "added";
    case WICK_COMPARE_REMOVED:
      return "removed";
    default:
      return "unknown";
    }
}

/* ---- JSON ---- */

static void
json_string (GString *out, const char *s)
{
  wick_json_append_string (out, s ? s : "", s ? strlen (s) : 0);
}

static void
json_number (GString *out, double v)
{
  if (isnan (v) || isinf (v))
    g_string_append (out, "null");
  else
    {
      char buffer[G_ASCII_DTOSTR_BUF_SIZE];
      g_string_append (out, g_ascii_formatd (buffer, sizeof buffer, "%.6g", v));
    }
}

static void
json_key (GString *out, const char *key, gboolean *first)
{
  if (!*first)
    g_string_append_c (out, ',');
  *first = FALSE;
  json_string (out, key);
  g_string_append_c (out, ':');
}

static void
json_runs (GString *out, GPtrArray *runs)
{
  g_string_append_c (out, '[');
  for (guint i = 0; i < runs->len; i++)
    {
      const WickCompareRun *run = g_ptr_array_index (runs, i);
      gboolean first = TRUE;

      if (i)
        g_string_append_c (out, ',');
      g_string_append_c (out, '{');
      json_key (out, "run", &first);
      json_string (out, run->label);
      json_key (out, "file", &first);
      json_string (out, run->path);
      json_key (out, "measured_start_ns", &first);
      g_string_append_printf (out, "%" G_GUINT64_FORMAT, run->measured_start_ns);
      json_key (out, "measured_ns", &first);
      g_string_append_printf (out, "%" G_GUINT64_FORMAT, run->measured_ns);
      json_key (out, "drift", &first);
      json_number (out, run->drift);
      json_key (out, "steps", &first);
      g_string_append_c (out, '[');
      for (guint k = 0; k < run->steps->len; k++)
        {
          const WickCompareStep *s = &g_array_index (run->steps, WickCompareStep, k);
          g_string_append_printf (out,
                                  "%s{\"name\":", k ? "," : "");
          json_string (out, s->name);
          g_string_append_printf (out,
                                  ",\"start_ns\":%" G_GUINT64_FORMAT
                                  ",\"duration_ns\":%" G_GUINT64_FORMAT
                                  ",\"memory_peak\":%" G_GUINT64_FORMAT "}",
                                  s->start_ns, s->duration_ns, s->memory_peak);
        }
      g_string_append (out, "]}");
    }
  g_string_append_c (out, ']');
}

static void
json_identity (GString *out, GPtrArray *differences, gboolean match, gboolean refused)
{
  g_string_append_printf (out, "{\"match\":%s,\"refused\":%s,\"differences\":[",
                          match ? "true" : "false", refused ? "true" : "false");
  for (guint i = 0; i < differences->len; i++)
    {
      const WickCompareDifference *d = g_ptr_array_index (differences, i);
      g_string_append (out, i ? ",{\"field\":" : "{\"field\":");
      json_string (out, d->field);
      g_string_append (out, ",\"a\":");
      json_string (out, d->a);
      g_string_append (out, ",\"b\":");
      json_string (out, d->b);
      g_string_append (out, ",\"run\":");
      json_string (out, d->run);
      g_string_append_printf (out, ",\"informational\":%s}", d->informational ? "true" : "false");
    }
  g_string_append (out, "]}");
}

char *
wick_compare_identity_to_json (GPtrArray *differences)
{
  GString *out = g_string_new ("{\"identity\":");
  gboolean match = TRUE;

  for (guint i = 0; i < differences->len; i++)
    if (!((WickCompareDifference *) g_ptr_array_index (differences, i))->informational)
      match = FALSE;
  json_identity (out, differences, match, !match);
  g_string_append_c (out, '}');
  return g_string_free (out, FALSE);
}

char *
wick_comparison_to_json (const WickComparison *c)
{
  GString *out = g_string_new ("{");
  gboolean first = TRUE;

  json_key (out, "identity", &first);
  json_identity (out, c->differences, c->identity_match, FALSE);

  json_key (out, "bootstrap", &first);
  g_string_append_printf (out,
                          "{\"resamples\":%u,\"seed\":%" G_GUINT64_FORMAT
                          ",\"confidence\":0.95,\"correction\":\"bonferroni\",\"testable\":%u,"
                          "\"min_change\":",
                          c->n_resamples, c->seed, c->n_testable);
  json_number (out, c->min_change);
  g_string_append_printf (out, ",\"significant\":%u}", c->n_significant);

  json_key (out, "spans", &first);
  g_string_append_c (out, '[');
  for (guint i = 0; i < c->entries->len; i++)
    {
      const WickCompareEntry *e = &g_array_index (c->entries, WickCompareEntry, i);
      gboolean f = TRUE;

      g_string_append (out, i ? ",{" : "{");
      json_key (out, "name", &f);
      json_string (out, e->name);
      json_key (out, "kind", &f);
      json_string (out, wick_compare_kind_to_string (e->kind));
      json_key (out, "status", &f);
      json_string (out, wick_compare_status_to_string (e->status));
      json_key (out, "count_a", &f);
      g_string_append_printf (out, "%" G_GUINT64_FORMAT, e->count_a);
      json_key (out, "count_b", &f);
      g_string_append_printf (out, "%" G_GUINT64_FORMAT, e->count_b);
#define NUM(field)                                                                               \
  json_key (out, #field, &f);                                                                    \
  json_number (out, e->field)
      NUM (count_per_run_a);
      NUM (count_per_run_b);
      NUM (count_per_step_a);
      NUM (count_per_step_b);
      NUM (mean_ns_a);
      NUM (mean_ns_b);
      NUM (median_ns_a);
      NUM (median_ns_b);
      NUM (self_ns_a);
      NUM (self_ns_b);
      NUM (share_a);
      NUM (share_b);
      NUM (ratio);
      NUM (ci95_low);
      NUM (ci95_high);
      NUM (corrected_low);
      NUM (corrected_high);
#undef NUM
      json_key (out, "units_a", &f);
      g_string_append_printf (out, "%u", e->units_a);
      json_key (out, "units_b", &f);
      g_string_append_printf (out, "%u", e->units_b);
      json_key (out, "testable", &f);
      g_string_append (out, e->testable ? "true" : "false");
      json_key (out, "significant", &f);
      g_string_append (out, e->significant ? "true" : "false");
      g_string_append_c (out, '}');
    }
  g_string_append_c (out, ']');

  json_key (out, "memory", &first);
  g_string_append_c (out, '[');
  for (guint i = 0; i < c->memory->len; i++)
    {
      const WickCompareMemory *m = &g_array_index (c->memory, WickCompareMemory, i);
      g_string_append (out, i ? ",{\"device\":" : "{\"device\":");
      json_string (out, m->device);
      g_string_append (out, ",\"category\":");
      json_string (out, m->category);
      g_string_append_printf (out,
                              ",\"peak_a\":%" G_GUINT64_FORMAT ",\"peak_b\":%" G_GUINT64_FORMAT
                              ",\"difference\":%" G_GINT64_FORMAT "}",
                              m->peak_a, m->peak_b, (gint64) (m->peak_b - m->peak_a));
    }
  g_string_append_c (out, ']');

  json_key (out, "gradients", &first);
  g_string_append (out, "{\"coverage_a\":");
  json_string (out, c->coverage_a);
  g_string_append (out, ",\"coverage_b\":");
  json_string (out, c->coverage_b);
  g_string_append (out, ",\"families\":[");
  for (guint i = 0; i < c->gradient_families->len; i++)
    {
      const WickCompareGradientFamily *f
        = &g_array_index (c->gradient_families, WickCompareGradientFamily, i);
      g_string_append (out, i ? ",{\"family\":" : "{\"family\":");
      json_string (out, f->family);
      g_string_append_printf (out, ",\"present_a\":%u,\"present_b\":%u}", f->present_a,
                              f->present_b);
    }
  g_string_append (out, "],\"changed\":[");
  for (guint i = 0; i < c->gradient_changes->len; i++)
    {
      const WickCompareGradientChange *g
        = &g_array_index (c->gradient_changes, WickCompareGradientChange, i);
      g_string_append (out, i ? ",{\"root\":" : "{\"root\":");
      json_string (out, g->root);
      g_string_append (out, ",\"key\":");
      json_string (out, g->key);
      g_string_append (out, ",\"change\":");
      json_string (out, g->change);
      g_string_append (out, ",\"state_a\":");
      json_string (out, g->state_a);
      g_string_append (out, ",\"state_b\":");
      json_string (out, g->state_b);
      g_string_append (out, ",\"norm_a\":");
      json_number (out, g->norm_a);
      g_string_append (out, ",\"norm_b\":");
      json_number (out, g->norm_b);
      g_string_append_c (out, '}');
    }
  g_string_append (out, "]}");

  json_key (out, "health", &first);
  for (guint side = 0; side < 2; side++)
    {
      guint k = 0;
      g_string_append (out, side == 0 ? "{\"only_a\":[" : "],\"only_b\":[");
      for (guint i = 0; i < c->health->len; i++)
        {
          const WickCompareHealth *h = &g_array_index (c->health, WickCompareHealth, i);
          if (h->in_a != (side == 0))
            continue;
          g_string_append (out, k++ ? ",{\"code\":" : "{\"code\":");
          json_string (out, h->code);
          g_string_append (out, ",\"severity\":");
          json_string (out, h->severity);
          g_string_append_printf (out, ",\"count\":%u,\"message\":", h->count);
          json_string (out, h->message);
          g_string_append_c (out, '}');
        }
    }
  g_string_append (out, "]}");

  json_key (out, "runs", &first);
  g_string_append (out, "{\"a\":");
  json_runs (out, c->runs_a);
  g_string_append (out, ",\"b\":");
  json_runs (out, c->runs_b);
  g_string_append (out, "}}");
  return g_string_free (out, FALSE);
}
