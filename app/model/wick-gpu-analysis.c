/* wick-gpu-analysis.c — kernels, operators, steps and launches of a GPU
 * trace (see the header; docs/gpu.md defines the figures).
 *
 * One pass over the device slices (per-name kernel rows, per-device sums,
 * the work intervals), one over the spans (operators' self and total time),
 * one over the launched intervals (each operator's GPU time, by walking up
 * from its launch), and per step three measures of unions of intervals
 * clipped to its window (binary search over prefix sums). Linear apart from
 * the sorts.
 */
#include "config.h"

#include "wick-gpu-analysis.h"
#include "wick-gpu-analysis-private.h"

/* json-glib only writes the gpu --json report here; it parses nothing. */
#include <json-glib/json-glib.h>
#include <string.h>

#include "wick-chrome-stream.h"
#include "wick-gpu-graphs.h"
#include "wick-steps.h"

gboolean
wick_gpu_is_communication_kernel (const char *name)
{
  if (name == NULL)
    return FALSE;
  for (const char *p = name; *p != '\0'; p++)
    if ((p[0] == 'n' || p[0] == 'N' || p[0] == 'r' || p[0] == 'R')
        && g_ascii_strncasecmp (p + 1, "ccl", 3) == 0)
      return TRUE;
  return FALSE;
}

WickGpuClass
wick_gpu_classify (WickDeviceKind kind, const char *name)
{
  switch (kind)
    {
      case WICK_DEVICE_KERNEL:
        return wick_gpu_is_communication_kernel (name) ? WICK_GPU_COMMUNICATION : WICK_GPU_COMPUTE;
      case WICK_DEVICE_MEMCPY:
      case WICK_DEVICE_MEMSET:
        return WICK_GPU_MEMORY;
      default:
        return WICK_GPU_NOT_WORK;
    }
}

/* ---- unions of intervals ------------------------------------------------- */

typedef struct
{
  guint64 start, end;
} Interval;

typedef struct
{
  GArray *iv;     /* Interval, disjoint, by start */
  guint64 *below; /* below[i]: covered length before iv[i] */
} Union;

static int
compare_intervals (gconstpointer pa, gconstpointer pb)
{
  const Interval *a = pa, *b = pb;
  if (a->start != b->start)
    return a->start < b->start ? -1 : 1;
  return a->end < b->end ? -1 : a->end > b->end;
}

/* Merges @raw (taken; sorted by start unless @sorted is FALSE, then sorted
 * here) into a union. */
static void
union_build (Union *u, GArray *raw, gboolean sorted)
{
  if (!sorted && raw->len > 1)
    g_array_sort (raw, compare_intervals);
  guint m = 0;
  Interval *a = (Interval *)(gpointer)raw->data;
  for (guint i = 0; i < raw->len; i++)
    {
      if (a[i].end <= a[i].start)
        continue;
      if (m > 0 && a[i].start <= a[m - 1].end)
        a[m - 1].end = MAX (a[m - 1].end, a[i].end);
      else
        a[m++] = a[i];
    }
  g_array_set_size (raw, m);
  u->iv = raw;
  u->below = g_new (guint64, m + 1);
  u->below[0] = 0;
  for (guint i = 0; i < m; i++)
    u->below[i + 1] = u->below[i] + (a[i].end - a[i].start);
}

static void
union_clear (Union *u)
{
  g_clear_pointer (&u->iv, g_array_unref);
  g_clear_pointer (&u->below, g_free);
}

/* Covered length in [0, t). */
static guint64
union_before (const Union *u, guint64 t)
{
  const Interval *a = (const Interval *)(gconstpointer)u->iv->data;
  guint lo = 0, hi = u->iv->len;
  while (lo < hi) /* first interval starting at or after t */
    {
      guint mid = lo + (hi - lo) / 2;
      if (a[mid].start < t)
        lo = mid + 1;
      else
        hi = mid;
    }
  if (lo == 0)
    return 0;
  return u->below[lo - 1] + (MIN (a[lo - 1].end, t) - a[lo - 1].start);
}

static guint64
union_within (const Union *u, guint64 start, guint64 end)
{
  return end > start ? union_before (u, end) - union_before (u, start) : 0;
}

/* A work interval, tagged: sorted once, then dealt into each union's
 * intervals in order (one sort instead of one per union). */
typedef struct
{
  Interval iv;
  guint32 dev;  /* row in the devices, as first seen */
  guint8 klass; /* WickGpuClass */
  guint8 kind;  /* WickDeviceKind */
} Tagged;

/* @a and @b, each sorted, into one sorted array (both taken). */
static GArray *
merge_sorted (GArray *a, GArray *b)
{
  GArray *out = g_array_sized_new (FALSE, FALSE, sizeof (Interval), MAX (a->len + b->len, 1));
  g_array_set_size (out, a->len + b->len);
  Interval *o = (Interval *)(gpointer)out->data;
  const Interval *x = (const Interval *)(gconstpointer)a->data;
  const Interval *y = (const Interval *)(gconstpointer)b->data;
  guint i = 0, j = 0, k = 0;
  while (i < a->len && j < b->len)
    o[k++] = compare_intervals (&x[i], &y[j]) <= 0 ? x[i++] : y[j++];
  while (i < a->len)
    o[k++] = x[i++];
  while (j < b->len)
    o[k++] = y[j++];
  g_array_unref (a);
  g_array_unref (b);
  return out;
}

static guint64
union_total (const Union *u)
{
  return u->below[u->iv->len];
}

/* Sorts @n elements of @a (scratch @tmp, as large) by merging its ascending
 * runs: device slices come by track, each track by start, and spans by
 * thread, each by start, so there are a few runs, merged in O(n log runs)
 * instead of a comparison sort of everything. Returns the sorted buffer
 * (@a or @tmp). */
#define DEFINE_RUN_SORT(NAME, TYPE, LESS)                                                        \
  static TYPE *NAME (TYPE *a, TYPE *tmp, gsize n)                                               \
  {                                                                                              \
    if (n < 2)                                                                                   \
      return a;                                                                                  \
    g_autoptr (GArray) runs = g_array_new (FALSE, FALSE, sizeof (gsize));                        \
    gsize zero = 0;                                                                              \
    g_array_append_val (runs, zero);                                                             \
    for (gsize i = 1; i < n; i++)                                                                \
      if (LESS (&a[i], &a[i - 1]))                                                               \
        g_array_append_val (runs, i);                                                            \
    g_array_append_val (runs, n);                                                                \
    TYPE *src = a, *dst = tmp;                                                                   \
    while (runs->len > 2)                                                                        \
      {                                                                                          \
        gsize *r = (gsize *)(gpointer)runs->data;                                                \
        guint m = 0;                                                                             \
        for (guint k = 0; k + 1 < runs->len; k += 2)                                             \
          {                                                                                      \
            gsize lo = r[k], mid = r[k + 1], hi = k + 2 < runs->len ? r[k + 2] : mid;            \
            gsize i = lo, j = mid, o = lo;                                                       \
            while (i < mid && j < hi)                                                            \
              dst[o++] = LESS (&src[j], &src[i]) ? src[j++] : src[i++];                          \
            while (i < mid)                                                                      \
              dst[o++] = src[i++];                                                               \
            while (j < hi)                                                                       \
              dst[o++] = src[j++];                                                               \
            r[m++] = lo;                                                                         \
          }                                                                                      \
        r[m++] = n;                                                                              \
        g_array_set_size (runs, m);                                                              \
        TYPE *t = src;                                                                           \
        src = dst;                                                                               \
        dst = t;                                                                                 \
      }                                                                                          \
    return src;                                                                                  \
  }

static inline gboolean
interval_less (const Interval *a, const Interval *b)
{
  return a->start < b->start || (a->start == b->start && a->end < b->end);
}

static inline gboolean
tagged_less (const Tagged *a, const Tagged *b)
{
  return interval_less (&a->iv, &b->iv);
}

DEFINE_RUN_SORT (sort_intervals, Interval, interval_less)
DEFINE_RUN_SORT (sort_tagged, Tagged, tagged_less)

static inline gboolean
u64_less (const guint64 *a, const guint64 *b)
{
  return *a < *b;
}

DEFINE_RUN_SORT (sort_u64, guint64, u64_less)

/* Intervals sorted, in a GArray (taken). */
static GArray *
intervals_sorted (GArray *raw)
{
  if (raw->len < 2)
    return raw;
  GArray *tmp = g_array_sized_new (FALSE, FALSE, sizeof (Interval), raw->len);
  g_array_set_size (tmp, raw->len);
  Interval *out = sort_intervals ((Interval *)(gpointer)raw->data,
                                  (Interval *)(gpointer)tmp->data, raw->len);
  if (out == (Interval *)(gpointer)raw->data)
    {
      g_array_unref (tmp);
      return raw;
    }
  g_array_unref (raw);
  return tmp;
}

/* The @k-th smallest of @n values (0-based), reordering @v: quickselect,
 * O(n) expected, instead of sorting a million delays for two ranks. */
static gint64
select_nth (gint64 *v, gsize n, gsize k)
{
  gsize lo = 0, hi = n - 1;
  while (lo < hi)
    {
      /* median of three as the pivot */
      gsize mid = lo + (hi - lo) / 2;
      gint64 a = v[lo], b = v[mid], c = v[hi];
      gint64 pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
      gsize i = lo, j = hi;
      while (i <= j)
        {
          while (v[i] < pivot)
            i++;
          while (v[j] > pivot)
            j--;
          if (i <= j)
            {
              gint64 t = v[i];
              v[i] = v[j];
              v[j] = t;
              i++;
              if (j == 0)
                break;
              j--;
            }
        }
      if (k <= j)
        hi = j;
      else if (k >= i)
        lo = i;
      else
        return v[k];
    }
  return v[k];
}

/* ---- the analysis -------------------------------------------------------- */

/* Per device (in the order of analysis->devices): the unions a range
 * summary measures. */
enum
{
  U_BUSY,
  U_KERNEL,
  U_MEMORY,
  U_COMM,
  N_UNIONS
};

typedef Union DeviceUnions[N_UNIONS];

struct _WickGpuUnions
{
  guint n_devices;
  DeviceUnions *u;
};

static void
unions_free (struct _WickGpuUnions *unions)
{
  if (unions == NULL)
    return;
  for (guint i = 0; i < unions->n_devices; i++)
    for (guint k = 0; k < N_UNIONS; k++)
      union_clear (&unions->u[i][k]);
  g_free (unions->u);
  g_free (unions);
}

void
wick_gpu_analysis_range (const WickGpuAnalysis *a, guint64 start_ns, guint64 end_ns,
                         WickGpuRangeTime *out)
{
  g_return_if_fail (a != NULL && out != NULL);
  for (guint i = 0; i < a->devices->len; i++)
    {
      const Union *u = a->unions && i < a->unions->n_devices ? a->unions->u[i] : NULL;
      out[i].busy_ns = u ? union_within (&u[U_BUSY], start_ns, end_ns) : 0;
      out[i].kernel_ns = u ? union_within (&u[U_KERNEL], start_ns, end_ns) : 0;
      out[i].memcpy_ns = u ? union_within (&u[U_MEMORY], start_ns, end_ns) : 0;
      out[i].comm_ns = u ? union_within (&u[U_COMM], start_ns, end_ns) : 0;
    }
}

static gboolean
is_runtime_category (const char *c)
{
  static const char *const names[] = { "cuda_runtime", "cuda_driver",         "hip_runtime",
                                       "hip_driver",   "Runtime",             "privateuse1_runtime",
                                       "mtia_runtime" };
  if (c == NULL)
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (strcmp (c, names[i]) == 0)
      return TRUE;
  return FALSE;
}

static void
analysis_free (gpointer data)
{
  WickGpuAnalysis *a = data;
  unions_free (a->unions);
  for (guint i = 0; i < a->devices->len; i++)
    g_free (g_array_index (a->devices, WickGpuDevice, i).device);
  g_array_unref (a->devices);
  g_array_unref (a->kernels);
  g_array_unref (a->operators);
  g_array_unref (a->steps);
  g_array_unref (a->stream_idle);
  g_array_unref (a->longest);
  g_free (a->kernel_of_device);
  g_free (a->operator_of_span);
  g_free (a);
}

typedef struct
{
  WickDocument *doc;
} SortData;

static int
compare_kernels (gconstpointer pa, gconstpointer pb, gpointer data)
{
  const WickGpuKernel *a = pa, *b = pb;
  WickDocument *doc = data;
  if (a->total_ns != b->total_ns)
    return a->total_ns > b->total_ns ? -1 : 1;
  return strcmp (wick_document_str (doc, a->name), wick_document_str (doc, b->name));
}

typedef struct
{
  GArray *kernels;
  WickDocument *doc;
} KernelOrder;

static int
compare_kernel_rows (gconstpointer pa, gconstpointer pb, gpointer data)
{
  const KernelOrder *ko = data;
  guint a = *(const guint *)pa, b = *(const guint *)pb;
  int c = compare_kernels (&g_array_index (ko->kernels, WickGpuKernel, a),
                           &g_array_index (ko->kernels, WickGpuKernel, b), ko->doc);
  return c != 0 ? c : (a < b ? -1 : a > b);
}

static int
compare_operators (gconstpointer pa, gconstpointer pb, gpointer data)
{
  const WickGpuOperator *a = pa, *b = pb;
  WickDocument *doc = data;
  if (a->gpu_ns != b->gpu_ns)
    return a->gpu_ns > b->gpu_ns ? -1 : 1;
  if (a->cpu_total_ns != b->cpu_total_ns)
    return a->cpu_total_ns > b->cpu_total_ns ? -1 : 1;
  return strcmp (wick_document_str (doc, a->name), wick_document_str (doc, b->name));
}

static int
compare_u64 (gconstpointer pa, gconstpointer pb)
{
  guint64 a = *(const guint64 *)pa, b = *(const guint64 *)pb;
  return a < b ? -1 : a > b;
}

/* The raw text of member @key of a JSON object's text, as written (an
 * array such as [1, 1, 1]); 0 when absent. */
static WickStr
args_member_text (WickTracks *tracks, const char *args, const char *key)
{
  if (args == NULL)
    return 0;
  g_autoptr (GString) error = g_string_new (NULL);
  gsize len = strlen (args);
  g_autofree char *scratch = g_malloc (len + 1);
  WickJsonScanner s;
  gboolean first = TRUE;
  const char *k;
  gsize k_len;
  wick_json_scanner_init (&s, args, args + len, error, scratch);
  if (!wick_json_object_begin (&s))
    return 0;
  while (wick_json_object_next (&s, &first, &k, &k_len))
    {
      wick_json_skip_whitespace (&s);
      const char *start = s.p;
      if (!wick_json_skip_value (&s))
        return 0;
      if (k_len == strlen (key) && memcmp (k, key, k_len) == 0)
        {
          /* args live in the string pool: interning may move it (ASan found
           * the read of the old block), so the value is copied first */
          g_autofree char *value = g_strndup (start, (gsize)(s.p - start));
          return wick_tracks_intern (tracks, value, (gsize)(s.p - start));
        }
    }
  return 0;
}

static gboolean
is_operator_category (const char *c)
{
  return c != NULL && (strcmp (c, "cpu_op") == 0 || strcmp (c, "Operator") == 0);
}

/* Index of the @percent-th percentile of @n sorted values, nearest rank:
 * ceil(percent / 100 × n) - 1. */
static guint
nearest_rank (guint n, guint percent)
{
  guint64 k = ((guint64)percent * n + 99) / 100;
  return (guint)MAX (k, 1) - 1;
}

/* The device of device track @t: its category ("cuda:0"), after "rank N "
 * when its process is one rank's of a job merged by wick-trace ranks
 * (wick-ranks.h: processes named "rank N · NAME"), so that every rank's
 * cuda:0 is a device of its own. */
static char *
device_name (WickDocument *doc, WickTracks *tracks, const WickTrack *track_list, guint n_tracks,
             guint32 t)
{
  WickStr category = t < n_tracks ? track_list[t].category : 0;
  const char *dev = category ? wick_document_str (doc, category) : "device";
  guint n_processes;
  const WickProcess *processes = wick_tracks_get_processes (tracks, &n_processes);
  gint32 p = t < n_tracks ? track_list[t].process : -1;
  const char *pname
    = p >= 0 && (guint)p < n_processes && processes[p].name
        ? wick_document_str (doc, processes[p].name)
        : NULL;
  if (pname != NULL && g_str_has_prefix (pname, "rank ") && g_ascii_isdigit (pname[5]))
    {
      const char *q = pname + 5;
      while (g_ascii_isdigit (*q))
        q++;
      if (g_str_has_prefix (q, " \xc2\xb7 ") && q - pname < 16)
        return g_strdup_printf ("%.*s %s", (int)(q - pname), pname, dev);
    }
  return g_strdup (dev);
}

/* ---- idle gaps of each stream ------------------------------------------- */

typedef struct
{
  const WickDeviceSlice *d;
} WorkOrder;

static int
compare_work (gconstpointer pa, gconstpointer pb, gpointer data)
{
  const WickDeviceSlice *d = ((const WorkOrder *)data)->d;
  const WickDeviceSlice *a = &d[*(const guint32 *)pa], *b = &d[*(const guint32 *)pb];
  if (a->track != b->track)
    return a->track < b->track ? -1 : 1;
  if (a->start_ns != b->start_ns)
    return a->start_ns < b->start_ns ? -1 : 1;
  return a->duration_ns < b->duration_ns ? -1 : a->duration_ns > b->duration_ns;
}

/* Whether the gap [@idle_from, next start) before @next waits on its
 * launch: the launch began after the stream went idle (HTA's host wait),
 * or was still running then and the interval started within
 * WICK_GPU_LAUNCH_SLACK_NS of its return. */
static gboolean
gap_waits_on_launch (const WickDeviceSlice *next, const WickSpan *spans, guint n_spans,
                     guint64 idle_from)
{
  if (next->launcher >= n_spans)
    return FALSE;
  guint64 ls = spans[next->launcher].start_ns;
  guint64 le = ls + spans[next->launcher].duration_ns;
  return ls > idle_from || (le > idle_from && next->start_ns < le + WICK_GPU_LAUNCH_SLACK_NS);
}

static int
compare_stretch_len (gconstpointer pa, gconstpointer pb)
{
  const WickGpuStretch *a = pa, *b = pb;
  guint64 la = a->end_ns - a->start_ns, lb = b->end_ns - b->start_ns;
  if (la != lb)
    return la > lb ? -1 : 1;
  return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns;
}

/* Keeps @st among the longest stretches (a few: insertion into a short
 * sorted array). */
static void
keep_longest (GArray *longest, const WickGpuStretch *st)
{
  if (longest->len == WICK_GPU_LONGEST_STRETCHES
      && compare_stretch_len (st, &g_array_index (longest, WickGpuStretch, longest->len - 1)) >= 0)
    return;
  guint i = longest->len;
  while (i > 0 && compare_stretch_len (st, &g_array_index (longest, WickGpuStretch, i - 1)) < 0)
    i--;
  g_array_insert_val (longest, i, *st);
  if (longest->len > WICK_GPU_LONGEST_STRETCHES)
    g_array_set_size (longest, WICK_GPU_LONGEST_STRETCHES);
}

/* The innermost operator around span @s, G_MAXUINT32 when none. */
static guint32
enclosing_operator (const WickSpan *spans, guint n_spans, const guint8 *is_op, guint32 s)
{
  for (gint32 p = (gint32)s; p >= 0 && (guint)p < n_spans; p = spans[p].parent)
    if (is_op[p])
      return (guint32)p;
  return G_MAXUINT32;
}

/* How many of the @n sorted values @v are below @t. */
static guint
count_below (const guint64 *v, guint n, guint64 t)
{
  guint lo = 0, hi = n;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (v[mid] < t)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

/* The stretches' total length before @t: their starts and ends sorted,
 * with prefix sums (sum[k]: of the first k). */
static guint64
stretch_length_before (const guint64 *starts, const guint64 *start_sum, const guint64 *ends,
                       const guint64 *end_sum, guint n, guint64 t)
{
  guint ns = count_below (starts, n, t), ne = count_below (ends, n, t);
  return ((guint64)ns * t - start_sum[ns]) - ((guint64)ne * t - end_sum[ne]);
}

/* Per stream its idle gaps by cause, the launch-bound stretches (count,
 * total, the longest) and each step's share of them. */
static void
analyze_idle (WickGpuAnalysis *a, const WickDeviceSlice *d, guint nd, const WickSpan *spans,
              guint n_spans, const guint8 *is_op)
{
  g_autoptr (GArray) order = g_array_sized_new (FALSE, FALSE, sizeof (guint32), MAX (nd, 1));
  gboolean sorted = TRUE;
  WorkOrder wo = { d };
  guint64 first = G_MAXUINT64, last = 0;
  for (guint32 i = 0; i < nd; i++)
    if (WICK_DEVICE_KIND_IS_WORK (d[i].kind))
      {
        if (order->len > 0
            && compare_work (&g_array_index (order, guint32, order->len - 1), &i, &wo) > 0)
          sorted = FALSE;
        g_array_append_val (order, i);
        first = MIN (first, d[i].start_ns);
        last = MAX (last, d[i].start_ns + d[i].duration_ns);
      }
  if (!sorted)
    g_array_sort_with_data (order, compare_work, &wo);
  a->gpu_span_ns = last > first ? last - first : 0;
  g_autoptr (GArray) stretches = g_array_new (FALSE, FALSE, sizeof (WickGpuStretch));
  const guint32 *o = (const guint32 *)(gpointer)order->data;
  guint64 idle_from = 0;
  WickGpuStreamIdle *cur = NULL;
  for (guint k = 0; k < order->len; k++)
    {
      const WickDeviceSlice *x = &d[o[k]];
      guint64 end = x->start_ns + x->duration_ns;
      if (cur == NULL || cur->track != x->track)
        {
          WickGpuStreamIdle si = { .track = x->track };
          g_array_append_val (a->stream_idle, si);
          cur = &g_array_index (a->stream_idle, WickGpuStreamIdle, a->stream_idle->len - 1);
          idle_from = end;
          continue;
        }
      if (x->start_ns > idle_from)
        {
          guint64 gap = x->start_ns - idle_from;
          if (gap_waits_on_launch (x, spans, n_spans, idle_from))
            {
              WickGpuStretch st = { idle_from, x->start_ns, x->track, x->launcher,
                                    enclosing_operator (spans, n_spans, is_op, x->launcher) };
              cur->host_wait_ns += gap;
              cur->n_host_wait++;
              a->n_stretches++;
              a->stretch_ns += gap;
              keep_longest (a->longest, &st);
              g_array_append_val (stretches, st);
            }
          else if (gap < WICK_GPU_KERNEL_WAIT_NS)
            cur->kernel_wait_ns += gap;
          else
            cur->other_ns += gap;
        }
      idle_from = MAX (idle_from, end);
    }
  /* each step's launch-bound time, F(end) - F(start), where F(t) is the
   * stretches' length before t: over the stretches starting before t,
   * t - start, less over those ending before t, t - end; two sorted
   * arrays with prefix sums, a binary search each */
  guint n = stretches->len;
  /* by stream, each by start (and end): a run per stream to merge */
  g_autofree guint64 *buf = g_new (guint64, 4 * (gsize)n + 4);
  guint64 *starts = buf, *ends = buf + n + 1;
  for (guint k = 0; k < n; k++)
    {
      const WickGpuStretch *st = &g_array_index (stretches, WickGpuStretch, k);
      starts[k] = st->start_ns;
      ends[k] = st->end_ns;
    }
  starts = sort_u64 (starts, buf + 2 * ((gsize)n + 1), n);
  ends = sort_u64 (ends, buf + 3 * ((gsize)n + 1), n);
  g_autofree guint64 *start_sum = g_new (guint64, n + 1), *end_sum = g_new (guint64, n + 1);
  start_sum[0] = end_sum[0] = 0;
  for (guint k = 0; k < n; k++)
    {
      start_sum[k + 1] = start_sum[k] + starts[k];
      end_sum[k + 1] = end_sum[k] + ends[k];
    }
  for (guint i = 0; i < a->steps->len; i++)
    {
      WickGpuStep *step = &g_array_index (a->steps, WickGpuStep, i);
      guint64 s = step->start_ns, e = step->start_ns + step->dur_ns;
      step->launch_bound_ns = stretch_length_before (starts, start_sum, ends, end_sum, n, e)
                              - stretch_length_before (starts, start_sum, ends, end_sum, n, s);
    }
}

static WickGpuAnalysis *
analyze (WickDocument *doc, WickTracks *tracks)
{
  WickGpuAnalysis *a = g_new0 (WickGpuAnalysis, 1);
  guint nd, n_spans, n_tracks;
  const WickDeviceSlice *d = wick_tracks_get_device_slices (tracks, &nd);
  const WickSpan *spans = wick_document_get_spans (doc, &n_spans);
  const WickTrack *track_list = wick_tracks_get_tracks (tracks, &n_tracks);

  a->devices = g_array_new (FALSE, TRUE, sizeof (WickGpuDevice));
  a->kernels = g_array_new (FALSE, TRUE, sizeof (WickGpuKernel));
  a->operators = g_array_new (FALSE, TRUE, sizeof (WickGpuOperator));
  a->steps = g_array_new (FALSE, TRUE, sizeof (WickGpuStep));
  a->stream_idle = g_array_new (FALSE, TRUE, sizeof (WickGpuStreamIdle));
  a->longest = g_array_new (FALSE, TRUE, sizeof (WickGpuStretch));
  a->n_device = nd;
  a->kernel_of_device = g_new (gint32, MAX (nd, 1));
  a->n_spans = n_spans;
  a->operator_of_span = g_new (gint32, MAX (n_spans, 1));

  /* devices and kernels: one pass over the device slices, each kernel name
   * looked up once (its row holds whether it is communication), each
   * track's device row cached */
  g_autoptr (GHashTable) kernel_by_name = g_hash_table_new (NULL, NULL);
  /* by name (not owned: the devices' own strings) */
  g_autoptr (GHashTable) device_by_name = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree guint *device_of_track = g_new0 (guint, n_tracks + 1); /* row + 1, 0: not seen */
  g_autoptr (GArray) device_count = g_array_new (FALSE, TRUE, sizeof (guint));
  g_autoptr (GArray) tagged = g_array_sized_new (FALSE, FALSE, sizeof (Tagged), MAX (nd, 1));
  g_array_set_size (tagged, nd);
  Tagged *tag_out = (Tagged *)(gpointer)tagged->data;
  guint n_tagged = 0;
  g_autoptr (GArray) delays = g_array_sized_new (FALSE, FALSE, sizeof (gint64), MAX (nd, 1));
  g_array_set_size (delays, nd);
  gint64 *delay_out = (gint64 *)(gpointer)delays->data;
  guint n_delays = 0;
  /* the runtime calls that launched something: one bit per span */
  g_autofree guint8 *launched = g_new0 (guint8, n_spans / 8 + 1);
  guint64 n_launchers = 0;
  for (guint i = 0; i < nd; i++)
    {
      const WickDeviceSlice *x = &d[i];
      a->kernel_of_device[i] = -1;
      if (!WICK_DEVICE_KIND_IS_WORK (x->kind))
        continue;
      a->has_gpu = TRUE;
      WickGpuClass klass = WICK_GPU_MEMORY;
      guint row = 0;
      if (x->kind == WICK_DEVICE_KERNEL)
        {
          row
            = GPOINTER_TO_UINT (g_hash_table_lookup (kernel_by_name, GUINT_TO_POINTER (x->name)));
          if (row == 0)
            {
              WickGpuKernel k = { 0 };
              const char *name = x->name ? wick_document_str (doc, x->name) : "";
              k.name = x->name;
              k.min_ns = G_MAXUINT64;
              k.communication = wick_gpu_classify (x->kind, name) == WICK_GPU_COMMUNICATION;
              g_array_append_val (a->kernels, k);
              row = a->kernels->len;
              g_hash_table_insert (kernel_by_name, GUINT_TO_POINTER (x->name),
                                   GUINT_TO_POINTER (row));
              /* its launch args after the insert: reading them may intern */
              const char *args
                = wick_tracks_event_args (tracks, (WickEventRef){ WICK_EVENT_DEVICE, i });
              WickGpuKernel *kr = &g_array_index (a->kernels, WickGpuKernel, row - 1);
              double regs;
              kr->registers = args
                                  && wick_chrome_args_number (args, strlen (args),
                                                              "registers per thread", &regs)
                                ? (gint64)regs
                                : -1;
              WickStr grid = args_member_text (tracks, args, "grid");
              args = wick_tracks_event_args (tracks, (WickEventRef){ WICK_EVENT_DEVICE, i });
              WickStr block = args_member_text (tracks, args, "block");
              kr = &g_array_index (a->kernels, WickGpuKernel, row - 1);
              kr->grid = grid;
              kr->block = block;
            }
          klass = g_array_index (a->kernels, WickGpuKernel, row - 1).communication
                    ? WICK_GPU_COMMUNICATION
                    : WICK_GPU_COMPUTE;
        }
      guint track = x->track < n_tracks ? x->track : n_tracks;
      guint dev_row = device_of_track[track];
      if (dev_row == 0)
        {
          g_autofree char *name = device_name (doc, tracks, track_list, n_tracks, x->track);
          dev_row = GPOINTER_TO_UINT (g_hash_table_lookup (device_by_name, name));
          if (dev_row == 0)
            {
              WickGpuDevice dev = { 0 };
              dev.device = g_strdup (name);
              g_array_append_val (a->devices, dev);
              g_array_set_size (device_count, a->devices->len);
              dev_row = a->devices->len;
              g_hash_table_insert (device_by_name, dev.device, GUINT_TO_POINTER (dev_row));
            }
          device_of_track[track] = dev_row;
        }
      WickGpuDevice *dev = &g_array_index (a->devices, WickGpuDevice, dev_row - 1);
      g_array_index (device_count, guint, dev_row - 1)++;
      tag_out[n_tagged++]
        = (Tagged){ { x->start_ns, x->start_ns + x->duration_ns }, dev_row - 1, klass, x->kind };
      if (x->kind == WICK_DEVICE_MEMCPY)
        dev->memcpy_ns += x->duration_ns;
      else if (x->kind == WICK_DEVICE_MEMSET)
        dev->memset_ns += x->duration_ns;
      else
        {
          dev->kernel_ns += x->duration_ns;
          dev->n_kernels++;
          if (klass == WICK_GPU_COMMUNICATION)
            dev->comm_ns += x->duration_ns;
          if (x->duration_ns < WICK_GPU_SHORT_KERNEL_NS)
            {
              a->launches.short_kernels++;
              a->launches.short_kernel_ns += x->duration_ns;
            }
          if (x->flags & WICK_DEVICE_FLAG_GRAPH)
            a->launches.graph_kernels++;
          WickGpuKernel *k = &g_array_index (a->kernels, WickGpuKernel, row - 1);
          k->count++;
          k->total_ns += x->duration_ns;
          k->min_ns = MIN (k->min_ns, x->duration_ns);
          k->max_ns = MAX (k->max_ns, x->duration_ns);
          a->gpu_total_ns += x->duration_ns;
          a->kernel_of_device[i] = (gint32)(row - 1);
        }
      if (x->launcher != G_MAXUINT32 && x->launcher < n_spans)
        {
          a->launches.flows++;
          delay_out[n_delays++] = (gint64)x->start_ns - (gint64)spans[x->launcher].start_ns;
          guint8 bit = (guint8)(1u << (x->launcher & 7));
          if (!(launched[x->launcher >> 3] & bit))
            {
              launched[x->launcher >> 3] |= bit;
              n_launchers++;
            }
        }
      else
        a->launches.unmatched++;
    }
  g_array_set_size (tagged, n_tagged);
  g_array_set_size (delays, n_delays);
  a->launches.to_kernel = n_launchers;
  /* the work intervals sorted once (merging the tracks' runs), dealt in
   * order into every union's intervals, each array sized beforehand */
  const Tagged *sorted_tags = tagged->data ? (const Tagged *)(gpointer)tagged->data : NULL;
  g_autoptr (GArray) tag_tmp = NULL;
  if (n_tagged > 1)
    {
      tag_tmp = g_array_sized_new (FALSE, FALSE, sizeof (Tagged), n_tagged);
      g_array_set_size (tag_tmp, n_tagged);
      sorted_tags = sort_tagged ((Tagged *)(gpointer)tagged->data,
                                 (Tagged *)(gpointer)tag_tmp->data, n_tagged);
    }
  guint nv = a->devices->len;
  /* per device, per union kind: its intervals and how many */
  g_autofree Interval **work = g_new0 (Interval *, MAX (nv, 1) * N_UNIONS);
  g_autofree guint *n_work = g_new0 (guint, MAX (nv, 1) * N_UNIONS);
  GPtrArray *device_work = g_ptr_array_new ();
  for (guint r = 0; r < nv; r++)
    for (guint k = 0; k < N_UNIONS; k++)
      {
        guint cap = MAX (g_array_index (device_count, guint, r), 1);
        GArray *arr = g_array_sized_new (FALSE, FALSE, sizeof (Interval), cap);
        g_array_set_size (arr, cap);
        work[r * N_UNIONS + k] = (Interval *)(gpointer)arr->data;
        g_ptr_array_add (device_work, arr);
      }
  GArray *compute = g_array_sized_new (FALSE, FALSE, sizeof (Interval), MAX (n_tagged, 1));
  GArray *compute_comm = g_array_sized_new (FALSE, FALSE, sizeof (Interval), MAX (n_tagged, 1));
  GArray *all = g_array_sized_new (FALSE, FALSE, sizeof (Interval), MAX (n_tagged, 1));
  g_array_set_size (compute, MAX (n_tagged, 1));
  g_array_set_size (compute_comm, MAX (n_tagged, 1));
  g_array_set_size (all, MAX (n_tagged, 1));
  Interval *compute_out = (Interval *)(gpointer)compute->data;
  Interval *cc_out = (Interval *)(gpointer)compute_comm->data;
  Interval *all_out = (Interval *)(gpointer)all->data;
  guint n_compute = 0, n_cc = 0, n_all = 0;
  for (guint i = 0; i < n_tagged; i++)
    {
      const Tagged *tag = &sorted_tags[i];
      guint base = tag->dev * N_UNIONS;
      work[base + U_BUSY][n_work[base + U_BUSY]++] = tag->iv;
      if (tag->kind == WICK_DEVICE_KERNEL)
        work[base + U_KERNEL][n_work[base + U_KERNEL]++] = tag->iv;
      else
        work[base + U_MEMORY][n_work[base + U_MEMORY]++] = tag->iv;
      if (tag->klass == WICK_GPU_COMMUNICATION)
        work[base + U_COMM][n_work[base + U_COMM]++] = tag->iv;
      all_out[n_all++] = tag->iv;
      if (tag->klass == WICK_GPU_COMPUTE)
        compute_out[n_compute++] = tag->iv;
      if (tag->klass == WICK_GPU_COMPUTE || tag->klass == WICK_GPU_COMMUNICATION)
        cc_out[n_cc++] = tag->iv;
    }
  for (guint w = 0; w < device_work->len; w++)
    g_array_set_size (g_ptr_array_index (device_work, w), n_work[w]);
  g_array_set_size (compute, n_compute);
  g_array_set_size (compute_comm, n_cc);
  g_array_set_size (all, n_all);
  if (n_delays > 0)
    {
      gint64 *v = (gint64 *)(gpointer)delays->data;
      a->launches.delay_p50_ns = select_nth (v, n_delays, nearest_rank (n_delays, 50));
      a->launches.delay_p99_ns = select_nth (v, n_delays, nearest_rank (n_delays, 99));
    }
  /* devices by name, each with its unions */
  {
    g_autofree guint *order = g_new (guint, MAX (nv, 1));
    for (guint r = 0; r < nv; r++)
      order[r] = r;
    for (guint i = 1; i < nv; i++) /* few devices */
      for (guint j = i; j > 0
                        && g_strcmp0 (g_array_index (a->devices, WickGpuDevice, order[j - 1]).device,
                                      g_array_index (a->devices, WickGpuDevice, order[j]).device)
                             > 0;
           j--)
        {
          guint t = order[j];
          order[j] = order[j - 1];
          order[j - 1] = t;
        }
    GArray *sorted = g_array_sized_new (FALSE, TRUE, sizeof (WickGpuDevice), nv);
    a->unions = g_new0 (struct _WickGpuUnions, 1);
    a->unions->n_devices = nv;
    a->unions->u = g_new0 (DeviceUnions, MAX (nv, 1));
    for (guint r = 0; r < nv; r++)
      {
        WickGpuDevice dev = g_array_index (a->devices, WickGpuDevice, order[r]);
        for (guint k = 0; k < N_UNIONS; k++)
          union_build (&a->unions->u[r][k],
                       g_ptr_array_index (device_work, order[r] * N_UNIONS + k), TRUE);
        dev.busy_ns = union_total (&a->unions->u[r][U_BUSY]);
        g_array_append_val (sorted, dev);
      }
    g_array_unref (a->devices);
    a->devices = sorted;
  }
  g_ptr_array_unref (device_work);

  /* rows sorted; the per-device index follows its kernel's new row */
  for (guint r = 0; r < a->kernels->len; r++)
    {
      WickGpuKernel *k = &g_array_index (a->kernels, WickGpuKernel, r);
      k->mean_ns = (double)k->total_ns / (double)k->count;
      k->share = a->gpu_total_ns > 0 ? (double)k->total_ns / (double)a->gpu_total_ns : 0;
    }
  {
    /* sorted through an index (a few hundred names), so each slice's row
     * maps through an array instead of a lookup by name per kernel */
    guint nk = a->kernels->len;
    g_autofree guint *order = g_new (guint, MAX (nk, 1));
    g_autofree gint32 *new_row = g_new (gint32, MAX (nk, 1));
    for (guint r = 0; r < nk; r++)
      order[r] = r;
    KernelOrder ko = { a->kernels, doc };
    g_qsort_with_data (order, (gint)nk, sizeof (guint), compare_kernel_rows, &ko);
    GArray *sorted = g_array_sized_new (FALSE, FALSE, sizeof (WickGpuKernel), MAX (nk, 1));
    for (guint r = 0; r < nk; r++)
      {
        g_array_append_val (sorted, g_array_index (a->kernels, WickGpuKernel, order[r]));
        new_row[order[r]] = (gint32)r;
      }
    g_array_unref (a->kernels);
    a->kernels = sorted;
    for (guint i = 0; i < nd; i++)
      if (a->kernel_of_device[i] >= 0)
        a->kernel_of_device[i] = new_row[a->kernel_of_device[i]];
  }

  /* operators: self and total from the spans, GPU time from the launches */
  g_autofree guint64 *child_ns = g_new0 (guint64, MAX (n_spans, 1));
  /* per span: whether it is an operator, a runtime call, on a track; a
   * category classified once, by its pooled text (nothing is interned in
   * this loop, so the pool does not move) */
  enum
  {
    SPAN_OP = 1,
    SPAN_RUNTIME = 2,
    SPAN_ON_TRACK = 4
  };
  g_autofree guint8 *span_flags = g_new0 (guint8, MAX (n_spans, 1));
  g_autofree guint8 *is_op = g_new0 (guint8, MAX (n_spans, 1));
  const char *cat_seen[8] = { NULL };
  guint8 cat_class[8] = { 0 };
  guint n_cat_seen = 0, n_host = 0;
  for (guint i = 0; i < n_spans; i++)
    {
      a->operator_of_span[i] = -1;
      const char *cat = wick_tracks_span_category (tracks, i);
      guint8 klass = 0;
      guint c = 0;
      while (c < n_cat_seen && cat_seen[c] != cat)
        c++;
      if (c < n_cat_seen)
        klass = cat_class[c];
      else
        {
          klass = (is_operator_category (cat) ? SPAN_OP : 0)
                  | (is_runtime_category (cat) ? SPAN_RUNTIME : 0);
          if (n_cat_seen < G_N_ELEMENTS (cat_seen))
            {
              cat_seen[n_cat_seen] = cat;
              cat_class[n_cat_seen++] = klass;
            }
        }
      if (wick_tracks_span_track (tracks, i) != G_MAXUINT32)
        klass |= SPAN_ON_TRACK;
      span_flags[i] = klass;
      is_op[i] = (klass & SPAN_OP) != 0;
      if ((klass & SPAN_ON_TRACK) && (klass & (SPAN_OP | SPAN_RUNTIME)))
        n_host++;
      gint32 p = spans[i].parent;
      if (p >= 0 && (guint)p < n_spans && (klass & SPAN_ON_TRACK))
        {
          guint64 end = spans[i].start_ns + spans[i].duration_ns;
          guint64 pend = spans[p].start_ns + spans[p].duration_ns;
          guint64 clipped_end = MIN (end, pend);
          if (clipped_end > spans[i].start_ns)
            child_ns[p] += clipped_end - spans[i].start_ns;
        }
    }
  g_autofree guint64 *gpu_ns = g_new0 (guint64, MAX (n_spans, 1));
  for (guint i = 0; i < nd; i++)
    if (WICK_DEVICE_KIND_IS_WORK (d[i].kind) && d[i].launcher < n_spans)
      for (gint32 p = (gint32)d[i].launcher; p >= 0 && (guint)p < n_spans; p = spans[p].parent)
        if (is_op[p])
          gpu_ns[p] += d[i].duration_ns;
  g_autoptr (GHashTable) op_by_name = g_hash_table_new (NULL, NULL);
  for (guint i = 0; i < n_spans; i++)
    {
      if (!is_op[i])
        continue;
      guint row
        = GPOINTER_TO_UINT (g_hash_table_lookup (op_by_name, GUINT_TO_POINTER (spans[i].name)));
      if (row == 0)
        {
          WickGpuOperator o = { 0 };
          o.name = spans[i].name;
          o.shapes = args_member_text (
            tracks, wick_tracks_event_args (tracks, (WickEventRef){ WICK_EVENT_SLICE, i }),
            "Input Dims");
          g_array_append_val (a->operators, o);
          row = a->operators->len;
          g_hash_table_insert (op_by_name, GUINT_TO_POINTER (spans[i].name),
                               GUINT_TO_POINTER (row));
        }
      WickGpuOperator *o = &g_array_index (a->operators, WickGpuOperator, row - 1);
      o->count++;
      o->cpu_total_ns += spans[i].duration_ns;
      o->cpu_self_ns += spans[i].duration_ns > child_ns[i] ? spans[i].duration_ns - child_ns[i] : 0;
      o->gpu_ns += gpu_ns[i];
    }
  g_array_sort_with_data (a->operators, compare_operators, doc);
  for (guint r = 0; r < a->operators->len; r++)
    g_hash_table_insert (op_by_name,
                         GUINT_TO_POINTER (g_array_index (a->operators, WickGpuOperator, r).name),
                         GUINT_TO_POINTER (r + 1));
  for (guint i = 0; i < n_spans; i++)
    if (is_op[i])
      a->operator_of_span[i] = (gint32)GPOINTER_TO_UINT (
                                 g_hash_table_lookup (op_by_name, GUINT_TO_POINTER (spans[i].name)))
                               - 1;

  /* steps; host work (operators, runtime calls) and GPU work together for
   * the time the GPU waits on the host */
  GArray *host = g_array_sized_new (FALSE, FALSE, sizeof (Interval), MAX (n_host, 1));
  g_array_set_size (host, n_host);
  {
    Interval *h = (Interval *)(gpointer)host->data;
    guint k = 0;
    for (guint i = 0; i < n_spans; i++)
      if ((span_flags[i] & SPAN_ON_TRACK) && (span_flags[i] & (SPAN_OP | SPAN_RUNTIME)))
        h[k++] = (Interval){ spans[i].start_ns, spans[i].start_ns + spans[i].duration_ns };
  }
  host = intervals_sorted (host);
  GArray *host_or_gpu = merge_sorted (g_array_ref (all), host);
  Union u_compute = { 0 }, u_cc = { 0 }, u_all = { 0 }, u_host = { 0 };
  union_build (&u_compute, compute, TRUE);
  union_build (&u_cc, compute_comm, TRUE);
  union_build (&u_all, all, TRUE);
  union_build (&u_host, host_or_gpu, TRUE);
  for (guint i = 0; i < n_spans; i++)
    {
      if (!(span_flags[i] & SPAN_ON_TRACK)
          || !wick_is_profiler_step (wick_document_str (doc, spans[i].name)))
        continue;
      WickGpuStep st = { 0 };
      guint64 s = spans[i].start_ns, e = spans[i].start_ns + spans[i].duration_ns;
      st.span = i;
      st.name = spans[i].name;
      st.start_ns = s;
      st.dur_ns = spans[i].duration_ns;
      st.gpu_busy_ns = union_within (&u_all, s, e);
      st.idle_ns = st.dur_ns - st.gpu_busy_ns;
      st.compute_ns = union_within (&u_compute, s, e);
      guint64 cc = union_within (&u_cc, s, e);
      st.comm_ns = cc - st.compute_ns;
      st.memcpy_ns = st.gpu_busy_ns - cc;
      st.cpu_only_ns = union_within (&u_host, s, e) - st.gpu_busy_ns;
      g_array_append_val (a->steps, st);
    }
  union_clear (&u_host);
  union_clear (&u_compute);
  union_clear (&u_cc);
  union_clear (&u_all);
  if (a->steps->len > 1)
    {
      WickGpuStep *steps = (WickGpuStep *)(gpointer)a->steps->data;
      /* by start (spans are by thread, then time) */
      for (guint i = 1; i < a->steps->len; i++)
        for (guint j = i; j > 0 && steps[j - 1].start_ns > steps[j].start_ns; j--)
          {
            WickGpuStep t = steps[j];
            steps[j] = steps[j - 1];
            steps[j - 1] = t;
          }
      g_autofree guint64 *durs = g_new (guint64, a->steps->len);
      for (guint i = 0; i < a->steps->len; i++)
        durs[i] = steps[i].dur_ns;
      qsort (durs, a->steps->len, sizeof (guint64), compare_u64);
      guint64 median = durs[(a->steps->len - 1) / 2];
      for (guint i = 0; i < a->steps->len; i++)
        steps[i].slow = steps[i].dur_ns * 4 >= median * 5 && steps[i].dur_ns > median;
    }
  analyze_idle (a, d, nd, spans, n_spans, is_op);
  return a;
}

typedef struct
{
  WickTracks *tracks;
  WickGpuAnalysis *analysis;
} Cached;

static void
cached_free (gpointer data)
{
  Cached *c = data;
  analysis_free (c->analysis);
  g_free (c);
}

const WickGpuAnalysis *
wick_gpu_analysis_get (WickDocument *document)
{
  g_return_val_if_fail (document != NULL, NULL);
  WickTracks *tracks = wick_document_get_tracks (document);
  Cached *c = g_object_get_data (G_OBJECT (document), "wick-gpu-analysis");
  guint n_spans;
  wick_document_get_spans (document, &n_spans);
  if (c != NULL && c->tracks == tracks && c->analysis->n_spans == n_spans)
    return c->analysis;
  c = g_new0 (Cached, 1);
  c->tracks = tracks;
  c->analysis = analyze (document, tracks);
  g_object_set_data_full (G_OBJECT (document), "wick-gpu-analysis", c, cached_free);
  return c->analysis;
}

/* ---- JSON ----------------------------------------------------------------- */

static void
member_int (JsonBuilder *b, const char *name, gint64 v)
{
  json_builder_set_member_name (b, name);
  json_builder_add_int_value (b, v);
}

/* "graphs": each CUDA graph a graph launch replayed (wick-gpu-graphs.h),
 * by first launch; "stages": the Wick stages whose graphs they are, by
 * name, each with its kernels by name (count and total over every replay). */
typedef struct
{
  guint64 count, total_ns;
} KernelSum;

static void
add_graphs_and_stages (JsonBuilder *b, WickDocument *doc)
{
  WickTracks *tracks = wick_document_get_tracks (doc);
  g_autoptr (WickGpuGraphs) graphs = wick_gpu_graphs_new (doc);
  guint n_graphs, nd;
  const WickGpuGraph *g = wick_gpu_graphs_get (graphs, &n_graphs);
  const WickDeviceSlice *d = wick_tracks_get_device_slices (tracks, &nd);
  g_autofree guint64 *graph_kernels = g_new0 (guint64, MAX (n_graphs, 1));
  /* per stage (by name): its graphs' indices and a name -> KernelSum table */
  g_autoptr (GHashTable) stage_of_name = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GPtrArray) stage_names = g_ptr_array_new ();
  g_autoptr (GPtrArray) stage_kernels = g_ptr_array_new_with_free_func (
    (GDestroyNotify)g_hash_table_unref);
  g_autoptr (GPtrArray) stage_kernel_order = g_ptr_array_new_with_free_func (
    (GDestroyNotify)g_array_unref);
  g_autofree guint *stage_of_graph = g_new (guint, MAX (n_graphs, 1));
  for (guint i = 0; i < n_graphs; i++)
    {
      stage_of_graph[i] = G_MAXUINT;
      if (g[i].stage == NULL)
        continue;
      gpointer row = g_hash_table_lookup (stage_of_name, g[i].stage);
      if (row == NULL)
        {
          g_ptr_array_add (stage_names, (gpointer)g[i].stage);
          g_ptr_array_add (stage_kernels, g_hash_table_new_full (NULL, NULL, NULL, g_free));
          g_ptr_array_add (stage_kernel_order, g_array_new (FALSE, FALSE, sizeof (WickStr)));
          row = GUINT_TO_POINTER (stage_names->len);
          g_hash_table_insert (stage_of_name, (gpointer)g[i].stage, row);
        }
      stage_of_graph[i] = GPOINTER_TO_UINT (row) - 1;
    }
  for (guint i = 0; i < nd; i++)
    {
      WickGpuGraphNode node;
      if (d[i].kind != WICK_DEVICE_KERNEL || !wick_gpu_graphs_node (graphs, i, &node)
          || node.graph >= n_graphs)
        continue;
      graph_kernels[node.graph]++;
      guint st = stage_of_graph[node.graph];
      if (st == G_MAXUINT)
        continue;
      GHashTable *sums = g_ptr_array_index (stage_kernels, st);
      KernelSum *sum = g_hash_table_lookup (sums, GUINT_TO_POINTER (d[i].name));
      if (sum == NULL)
        {
          sum = g_new0 (KernelSum, 1);
          g_hash_table_insert (sums, GUINT_TO_POINTER (d[i].name), sum);
          g_array_append_val (g_ptr_array_index (stage_kernel_order, st), d[i].name);
        }
      sum->count++;
      sum->total_ns += d[i].duration_ns;
    }
  json_builder_set_member_name (b, "graphs");
  json_builder_begin_array (b);
  for (guint i = 0; i < n_graphs; i++)
    {
      json_builder_begin_object (b);
      member_int (b, "graph", i);
      json_builder_set_member_name (b, "graph_id");
      if (g[i].graph_id >= 0)
        json_builder_add_int_value (b, g[i].graph_id);
      else
        json_builder_add_null_value (b);
      member_int (b, "nodes", g[i].n_nodes);
      member_int (b, "replays", g[i].n_replays);
      member_int (b, "kernels", (gint64)graph_kernels[i]);
      member_int (b, "gpu_ns", (gint64)g[i].gpu_ns);
      json_builder_set_member_name (b, "stage");
      if (g[i].stage)
        json_builder_add_string_value (b, g[i].stage);
      else
        json_builder_add_null_value (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "stages");
  json_builder_begin_array (b);
  for (guint st = 0; st < stage_names->len; st++)
    {
      guint n_stage_graphs = 0, replays = 0;
      guint64 kernels = 0, gpu_ns = 0;
      for (guint i = 0; i < n_graphs; i++)
        if (stage_of_graph[i] == st)
          {
            n_stage_graphs++;
            replays += g[i].n_replays;
            kernels += graph_kernels[i];
            gpu_ns += g[i].gpu_ns;
          }
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, g_ptr_array_index (stage_names, st));
      member_int (b, "graphs", n_stage_graphs);
      member_int (b, "replays", replays);
      member_int (b, "kernels", (gint64)kernels);
      member_int (b, "gpu_ns", (gint64)gpu_ns);
      json_builder_set_member_name (b, "by_kernel");
      json_builder_begin_array (b);
      GArray *order = g_ptr_array_index (stage_kernel_order, st);
      GHashTable *sums = g_ptr_array_index (stage_kernels, st);
      for (guint k = 0; k < order->len; k++)
        {
          WickStr name = g_array_index (order, WickStr, k);
          const KernelSum *sum = g_hash_table_lookup (sums, GUINT_TO_POINTER (name));
          json_builder_begin_object (b);
          json_builder_set_member_name (b, "name");
          json_builder_add_string_value (b, wick_document_str (doc, name));
          member_int (b, "count", (gint64)sum->count);
          member_int (b, "total_ns", (gint64)sum->total_ns);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

/* "device" and "stream" members of device track @t */
static void
member_stream (JsonBuilder *b, WickDocument *doc, guint32 t)
{
  WickTracks *tracks = wick_document_get_tracks (doc);
  guint n_tracks;
  const WickTrack *track_list = wick_tracks_get_tracks (tracks, &n_tracks);
  g_autofree char *dev = device_name (doc, tracks, track_list, n_tracks, t);
  json_builder_set_member_name (b, "device");
  json_builder_add_string_value (b, dev);
  json_builder_set_member_name (b, "stream");
  json_builder_add_string_value (
    b, t < n_tracks && track_list[t].stream ? wick_document_str (doc, track_list[t].stream) : "");
}

/* "idle": per stream its gaps by cause; "launch_bound": the stretches the
 * GPU waits on launches, with the longest */
static void
add_idle (JsonBuilder *b, const WickGpuAnalysis *a, WickDocument *doc)
{
  gint64 origin = wick_tracks_get_origin_ns (wick_document_get_tracks (doc));
  json_builder_set_member_name (b, "idle");
  json_builder_begin_array (b);
  for (guint i = 0; i < a->stream_idle->len; i++)
    {
      const WickGpuStreamIdle *si = &g_array_index (a->stream_idle, WickGpuStreamIdle, i);
      json_builder_begin_object (b);
      member_stream (b, doc, si->track);
      member_int (b, "host_wait_ns", (gint64)si->host_wait_ns);
      member_int (b, "kernel_wait_ns", (gint64)si->kernel_wait_ns);
      member_int (b, "other_ns", (gint64)si->other_ns);
      member_int (b, "stretches", (gint64)si->n_host_wait);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "launch_bound");
  json_builder_begin_object (b);
  member_int (b, "stretches", (gint64)a->n_stretches);
  member_int (b, "total_ns", (gint64)a->stretch_ns);
  member_int (b, "gpu_span_ns", (gint64)a->gpu_span_ns);
  json_builder_set_member_name (b, "share");
  json_builder_add_double_value (
    b, a->gpu_span_ns > 0 ? (double)a->stretch_ns / (double)a->gpu_span_ns : 0);
  member_int (b, "kernel_wait_threshold_ns", WICK_GPU_KERNEL_WAIT_NS);
  member_int (b, "launch_slack_ns", WICK_GPU_LAUNCH_SLACK_NS);
  json_builder_set_member_name (b, "longest");
  json_builder_begin_array (b);
  guint n_spans;
  const WickSpan *spans = wick_document_get_spans (doc, &n_spans);
  for (guint i = 0; i < a->longest->len; i++)
    {
      const WickGpuStretch *st = &g_array_index (a->longest, WickGpuStretch, i);
      json_builder_begin_object (b);
      member_int (b, "start_ns", origin + (gint64)st->start_ns);
      member_int (b, "dur_ns", (gint64)(st->end_ns - st->start_ns));
      member_stream (b, doc, st->track);
      json_builder_set_member_name (b, "launch");
      json_builder_add_string_value (
        b, st->launch < n_spans ? wick_document_str (doc, spans[st->launch].name) : "");
      json_builder_set_member_name (b, "operator");
      if (st->op < n_spans)
        json_builder_add_string_value (b, wick_document_str (doc, spans[st->op].name));
      else
        json_builder_add_null_value (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
}

char *
wick_gpu_analysis_to_json (const WickGpuAnalysis *a, WickDocument *doc)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  gint64 origin = wick_tracks_get_origin_ns (wick_document_get_tracks (doc));

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "devices");
  json_builder_begin_array (b);
  for (guint i = 0; i < a->devices->len; i++)
    {
      const WickGpuDevice *dev = &g_array_index (a->devices, WickGpuDevice, i);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "device");
      json_builder_add_string_value (b, dev->device);
      member_int (b, "busy_ns", (gint64)dev->busy_ns);
      member_int (b, "kernel_ns", (gint64)dev->kernel_ns);
      member_int (b, "memcpy_ns", (gint64)dev->memcpy_ns);
      member_int (b, "memset_ns", (gint64)dev->memset_ns);
      member_int (b, "comm_ns", (gint64)dev->comm_ns);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "kernels");
  json_builder_begin_array (b);
  for (guint i = 0; i < a->kernels->len; i++)
    {
      const WickGpuKernel *k = &g_array_index (a->kernels, WickGpuKernel, i);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, wick_document_str (doc, k->name));
      member_int (b, "count", (gint64)k->count);
      member_int (b, "total_ns", (gint64)k->total_ns);
      json_builder_set_member_name (b, "mean_ns");
      json_builder_add_double_value (b, k->mean_ns);
      member_int (b, "min_ns", (gint64)k->min_ns);
      member_int (b, "max_ns", (gint64)k->max_ns);
      json_builder_set_member_name (b, "share");
      json_builder_add_double_value (b, k->share);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "operators");
  json_builder_begin_array (b);
  for (guint i = 0; i < a->operators->len; i++)
    {
      const WickGpuOperator *o = &g_array_index (a->operators, WickGpuOperator, i);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, wick_document_str (doc, o->name));
      member_int (b, "count", (gint64)o->count);
      member_int (b, "cpu_self_ns", (gint64)o->cpu_self_ns);
      member_int (b, "cpu_total_ns", (gint64)o->cpu_total_ns);
      member_int (b, "gpu_ns", (gint64)o->gpu_ns);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "steps");
  json_builder_begin_array (b);
  for (guint i = 0; i < a->steps->len; i++)
    {
      const WickGpuStep *s = &g_array_index (a->steps, WickGpuStep, i);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, wick_document_str (doc, s->name));
      member_int (b, "start_ns", origin + (gint64)s->start_ns);
      member_int (b, "dur_ns", (gint64)s->dur_ns);
      member_int (b, "gpu_busy_ns", (gint64)s->gpu_busy_ns);
      member_int (b, "idle_ns", (gint64)s->idle_ns);
      member_int (b, "compute_ns", (gint64)s->compute_ns);
      member_int (b, "comm_ns", (gint64)s->comm_ns);
      member_int (b, "memcpy_ns", (gint64)s->memcpy_ns);
      member_int (b, "cpu_only_ns", (gint64)s->cpu_only_ns);
      member_int (b, "launch_bound_ns", (gint64)s->launch_bound_ns);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  add_graphs_and_stages (b, doc);
  json_builder_set_member_name (b, "launches");
  json_builder_begin_object (b);
  member_int (b, "flows", (gint64)a->launches.flows);
  member_int (b, "to_kernel", (gint64)a->launches.to_kernel);
  member_int (b, "unmatched", (gint64)a->launches.unmatched);
  member_int (b, "delay_p50_ns", a->launches.delay_p50_ns);
  member_int (b, "delay_p99_ns", a->launches.delay_p99_ns);
  member_int (b, "short_kernels", (gint64)a->launches.short_kernels);
  member_int (b, "short_kernel_ns", (gint64)a->launches.short_kernel_ns);
  member_int (b, "short_threshold_ns", WICK_GPU_SHORT_KERNEL_NS);
  json_builder_end_object (b);
  add_idle (b, a, doc);
  json_builder_end_object (b);

  g_autoptr (JsonNode) root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  return json_generator_to_data (gen, NULL);
}
