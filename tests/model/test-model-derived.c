/* test-model-derived.c — span costs, span contents, memory series: the data
 * the views draw, computed without GTK. */
#include "config.h"

#include "model-test-util.h"
#include "wick-memory-series.h"
#include "wick-range-summary.h"
#include "wick-span-costs.h"
#include "wick-span-costs-private.h"

static WickDocument *
load_train (void)
{
  const char *dir = g_getenv ("WICK_TEST_DATA");
  g_autofree char *path
    = g_build_filename (dir ? dir : "tests/data", "model", "train-contract.jsonl", NULL);
  WickDocument *doc = wick_document_new ();
  g_autoptr (GError) error = NULL;

  g_assert_true (wick_document_load_file (doc, path, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  return doc;
}

static void
test_span_costs (void)
{
  g_autoptr (WickDocument) doc = load_train ();
  g_autoptr (WickSpanIndex) index = wick_span_index_new (doc);
  g_autoptr (GArray) costs = wick_span_costs_by_name (doc, index);
  static const struct
  {
    const char *name;
    guint64 total, self;
  } expected[] = {
    { "train_step", 100, 5 }, { "measured", 95, 15 },  { "forward", 40, 40 },
    { "backward", 30, 30 },   { "optimizer", 10, 10 },
  };

  g_assert_cmpuint (costs->len, ==, G_N_ELEMENTS (expected));
  for (guint i = 0; i < costs->len; i++)
    {
      const WickSpanCost *c = &g_array_index (costs, WickSpanCost, i);
      g_assert_cmpstr (wick_document_str (doc, c->name), ==, expected[i].name);
      g_assert_cmpuint (c->count, ==, 1);
      g_assert_cmpuint (c->total_ns, ==, expected[i].total);
      g_assert_cmpuint (c->self_ns, ==, expected[i].self);
      g_assert_cmpuint (c->max_ns, ==, expected[i].total);
      g_assert_cmpfloat (c->mean_ns, ==, (double)expected[i].total);
    }
}

static void
test_span_costs_aggregate (void)
{
  g_autoptr (WickDocument) doc = parse_lines (
    META_INFER, ROOT_START,
    "{\"kind\":\"span_start\",\"id\":\"a\",\"parent_id\":\"s1\",\"name\":\"w\",\"start_ns\":1,"
    "\"span_kind\":\"op\"}",
    "{\"kind\":\"span_end\",\"id\":\"a\",\"duration_ns\":10}",
    "{\"kind\":\"span_start\",\"id\":\"b\",\"parent_id\":\"s1\",\"name\":\"w\",\"start_ns\":20,"
    "\"span_kind\":\"op\"}",
    "{\"kind\":\"span_end\",\"id\":\"b\",\"duration_ns\":30}", ROOT_END, TERMINAL, NULL);
  g_autoptr (WickSpanIndex) index = wick_span_index_new (doc);
  g_autoptr (GArray) costs = wick_span_costs_by_name (doc, index);
  const WickSpanCost *w = &g_array_index (costs, WickSpanCost, 1);

  g_assert_cmpstr (wick_document_str (doc, w->name), ==, "w");
  g_assert_cmpuint (w->count, ==, 2);
  g_assert_cmpuint (w->total_ns, ==, 40);
  g_assert_cmpuint (w->max_ns, ==, 30);
  g_assert_cmpfloat (w->mean_ns, ==, 20.0);
  g_assert_cmpuint (g_array_index (costs, WickSpanCost, 0).self_ns, ==, 60);
}

/* The costs from a copy of the spans (what a worker computes for a
 * growing document) equal the costs over the index, field by field and in
 * order, here on a trace with nesting, equal names and a parent that
 * arrives after its child. */
static void
assert_copy_costs_equal (WickDocument *doc)
{
  g_autoptr (WickSpanIndex) index = wick_span_index_new (doc);
  g_autoptr (GArray) expected = wick_span_costs_by_name (doc, index);
  guint n;
  g_autofree WickSpanCostInput *copy = wick_span_costs_copy_spans (doc, &n);
  guint n_spans;
  wick_document_get_spans (doc, &n_spans);
  g_assert_cmpuint (n, ==, n_spans);
  g_autoptr (GArray) costs = wick_span_costs_from_copy (copy, n);
  wick_span_costs_sort (doc, costs);
  g_assert_cmpuint (costs->len, ==, expected->len);
  for (guint i = 0; i < costs->len; i++)
    {
      const WickSpanCost *a = &g_array_index (costs, WickSpanCost, i);
      const WickSpanCost *b = &g_array_index (expected, WickSpanCost, i);
      g_assert_cmpstr (wick_document_str (doc, a->name), ==, wick_document_str (doc, b->name));
      g_assert_cmpuint (a->count, ==, b->count);
      g_assert_cmpuint (a->total_ns, ==, b->total_ns);
      g_assert_cmpuint (a->self_ns, ==, b->self_ns);
      g_assert_cmpuint (a->max_ns, ==, b->max_ns);
      g_assert_cmpfloat (a->mean_ns, ==, b->mean_ns);
    }
}

static void
test_span_costs_from_copy (void)
{
  g_autoptr (WickDocument) train = load_train ();
  assert_copy_costs_equal (train);
  g_autoptr (WickDocument) doc = parse_lines (
    META_INFER, ROOT_START,
    "{\"kind\":\"span_start\",\"id\":\"a\",\"parent_id\":\"s1\",\"name\":\"w\",\"start_ns\":1,"
    "\"span_kind\":\"op\"}",
    "{\"kind\":\"span_end\",\"id\":\"a\",\"duration_ns\":10}",
    "{\"kind\":\"span_start\",\"id\":\"b\",\"parent_id\":\"s1\",\"name\":\"w\",\"start_ns\":20,"
    "\"span_kind\":\"op\"}",
    "{\"kind\":\"span_end\",\"id\":\"b\",\"duration_ns\":30}", ROOT_END, TERMINAL, NULL);
  assert_copy_costs_equal (doc);
  /* the self times are not all zero: the test can tell a wrong parent */
  g_autoptr (WickSpanIndex) index = wick_span_index_new (doc);
  g_autoptr (GArray) costs = wick_span_costs_by_name (doc, index);
  g_assert_cmpuint (g_array_index (costs, WickSpanCost, 0).self_ns, ==, 60);
}

static void
test_span_contents (void)
{
  g_autoptr (WickDocument) doc = load_train ();
  g_autoptr (WickSpanIndex) index = wick_span_index_new (doc);
  gint32 forward = wick_document_find_span (doc, "s3");
  gint32 backward = wick_document_find_span (doc, "s4");
  gint32 measured = wick_document_find_span (doc, "s2");
  guint n;
  const guint32 *items;

  items = wick_span_index_get_ops (index, forward, &n);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpuint (items[0], ==, 0);
  wick_span_index_get_tensors (index, forward, &n);
  g_assert_cmpuint (n, ==, 1);
  wick_span_index_get_memory (index, forward, &n);
  g_assert_cmpuint (n, ==, 2);
  wick_span_index_get_device_intervals (index, forward, &n);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpuint (wick_span_index_get_bytes_allocated (index, forward), ==, 5120);
  g_assert_cmpuint (wick_span_index_get_bytes_freed (index, forward), ==, 0);
  g_assert_cmpuint (wick_span_index_get_bytes_allocated (index, backward), ==, 4096);
  g_assert_cmpuint (wick_span_index_get_bytes_freed (index, backward), ==, 1024);
  items = wick_span_index_get_children (index, measured, &n);
  g_assert_cmpuint (n, ==, 3);
  g_assert_cmpint (items[0], ==, forward);
}

static void
test_memory_series (void)
{
  g_autoptr (WickDocument) doc = load_train ();
  g_autoptr (GPtrArray) all = wick_memory_series_build (doc);
  const WickMemorySeries *cpu;
  guint64 live[WICK_N_CATEGORIES];

  g_assert_cmpuint (all->len, ==, 1);
  cpu = g_ptr_array_index (all, 0);
  g_assert_cmpstr (wick_document_str (doc, cpu->device), ==, "cpu");
  g_assert_cmpuint (cpu->points->len, ==, 6);
  g_assert_cmpuint (cpu->peak[WICK_CATEGORY_PARAMETER], ==, 4096);
  g_assert_cmpuint (cpu->peak_ns[WICK_CATEGORY_PARAMETER], ==, 11);
  g_assert_cmpuint (cpu->peak[WICK_CATEGORY_ACTIVATION], ==, 1024);
  g_assert_cmpuint (cpu->peak_ns[WICK_CATEGORY_ACTIVATION], ==, 12);
  g_assert_cmpuint (cpu->peak[WICK_CATEGORY_GRADIENT], ==, 4096);
  g_assert_cmpuint (cpu->peak_ns[WICK_CATEGORY_GRADIENT], ==, 55);
  g_assert_cmpuint (cpu->peak[WICK_CATEGORY_OPTIMIZER], ==, 0);
  g_assert_cmpuint (cpu->peak_total, ==, 9216);
  g_assert_cmpuint (cpu->peak_total_ns, ==, 55);

  wick_memory_series_at (cpu, 10, live);
  g_assert_cmpuint (live[WICK_CATEGORY_PARAMETER], ==, 0);
  wick_memory_series_at (cpu, 59, live);
  g_assert_cmpuint (live[WICK_CATEGORY_PARAMETER], ==, 4096);
  g_assert_cmpuint (live[WICK_CATEGORY_ACTIVATION], ==, 1024);
  g_assert_cmpuint (live[WICK_CATEGORY_GRADIENT], ==, 4096);
  wick_memory_series_at (cpu, 60, live);
  g_assert_cmpuint (live[WICK_CATEGORY_ACTIVATION], ==, 0);
  wick_memory_series_at (cpu, 1000, live);
  g_assert_cmpuint (live[WICK_CATEGORY_PARAMETER], ==, 0);
}

static void
test_memory_series_pairing_rules (void)
{
  /* the free's category does not matter: bytes leave the allocation's
   * category; an alias adds nothing; an unpaired free changes nothing */
  g_autoptr (WickDocument) doc = parse_lines (
    META_INFER, ROOT_START,
    "{\"kind\":\"memory\",\"timestamp_ns\":1,\"storage_id\":\"a\",\"tensor_id\":\"t\",\"span_id\":"
    "\"s1\",\"device\":\"cuda:0\",\"bytes\":100,\"action\":\"alloc\",\"dtype\":\"f32\","
    "\"category\":\"optimizer\"}",
    "{\"kind\":\"memory\",\"timestamp_ns\":2,\"storage_id\":\"a\",\"tensor_id\":\"v\",\"span_id\":"
    "\"s1\",\"device\":\"cuda:0\",\"bytes\":100,\"action\":\"alloc\",\"dtype\":\"f32\","
    "\"category\":\"optimizer\"}",
    "{\"kind\":\"memory\",\"timestamp_ns\":3,\"storage_id\":\"z\",\"tensor_id\":\"t\",\"span_id\":"
    "\"s1\",\"device\":\"cuda:0\",\"bytes\":5,\"action\":\"free\",\"dtype\":\"f32\"}",
    "{\"kind\":\"memory\",\"timestamp_ns\":4,\"storage_id\":\"a\",\"tensor_id\":\"t\",\"span_id\":"
    "\"s1\",\"device\":\"cuda:0\",\"bytes\":100,\"action\":\"free\",\"dtype\":\"f32\",\"category\":"
    "\"other\"}",
    ROOT_END, TERMINAL, NULL);
  g_autoptr (GPtrArray) all = wick_memory_series_build (doc);
  const WickMemorySeries *s = g_ptr_array_index (all, 0);

  g_assert_cmpuint (s->points->len, ==, 4);
  g_assert_cmpuint (g_array_index (s->points, WickMemoryPoint, 1).live[WICK_CATEGORY_OPTIMIZER], ==,
                    100);
  g_assert_cmpuint (g_array_index (s->points, WickMemoryPoint, 2).live[WICK_CATEGORY_OPTIMIZER], ==,
                    100);
  g_assert_cmpuint (g_array_index (s->points, WickMemoryPoint, 3).live[WICK_CATEGORY_OPTIMIZER], ==,
                    0);
  g_assert_cmpuint (g_array_index (s->points, WickMemoryPoint, 3).live[WICK_CATEGORY_OTHER], ==, 0);
  g_assert_cmpuint (s->peak[WICK_CATEGORY_OPTIMIZER], ==, 100);
}

static void
test_device_memory_series (void)
{
  g_autoptr (WickDocument) doc = parse_lines (
    META_INFER, ROOT_START,
    "{\"kind\":\"device_memory\",\"timestamp_ns\":1,\"device\":\"cuda:0\",\"used_bytes\":10,"
    "\"capacity_bytes\":100}",
    "{\"kind\":\"device_memory\",\"timestamp_ns\":2,\"device\":\"cuda:1\",\"free_bytes\":7}",
    "{\"kind\":\"device_memory\",\"timestamp_ns\":3,\"device\":\"cuda:0\",\"reserved_bytes\":40,"
    "\"used_bytes\":30}",
    ROOT_END, TERMINAL, NULL);
  g_autoptr (GPtrArray) all = wick_device_memory_series_build (doc);
  const WickDeviceMemorySeries *d0 = g_ptr_array_index (all, 0);
  const WickDeviceMemorySeries *d1 = g_ptr_array_index (all, 1);

  g_assert_cmpuint (all->len, ==, 2);
  g_assert_cmpuint (d0->series[WICK_DEVICE_SERIES_USED]->len, ==, 2);
  g_assert_cmpuint (d0->series[WICK_DEVICE_SERIES_RESERVED]->len, ==, 1);
  g_assert_cmpuint (d0->series[WICK_DEVICE_SERIES_CAPACITY]->len, ==, 1);
  /* free is never derived from capacity - used */
  g_assert_cmpuint (d0->series[WICK_DEVICE_SERIES_FREE]->len, ==, 0);
  g_assert_cmpuint (d0->max[WICK_DEVICE_SERIES_USED], ==, 30);
  g_assert_cmpuint (g_array_index (d1->series[WICK_DEVICE_SERIES_FREE], WickSamplePoint, 0).value,
                    ==, 7);
  g_assert_cmpstr (wick_device_series_to_string (WICK_DEVICE_SERIES_RESERVED), ==, "reserved");
}

/* A range's spans by name: each counted for its part inside the range. */
static void
test_range_summary (void)
{
  g_autoptr (WickDocument) doc = parse_lines (
    META_INFER, ROOT_START,
    "{\"kind\":\"span_start\",\"id\":\"a\",\"parent_id\":\"s1\",\"name\":\"w\",\"start_ns\":1,"
    "\"span_kind\":\"op\"}",
    "{\"kind\":\"span_end\",\"id\":\"a\",\"duration_ns\":10}",
    "{\"kind\":\"span_start\",\"id\":\"b\",\"parent_id\":\"s1\",\"name\":\"w\",\"start_ns\":20,"
    "\"span_kind\":\"op\"}",
    "{\"kind\":\"span_end\",\"id\":\"b\",\"duration_ns\":30}",
    "{\"kind\":\"span_start\",\"id\":\"c\",\"parent_id\":\"s1\",\"name\":\"x\",\"start_ns\":60,"
    "\"span_kind\":\"op\"}",
    "{\"kind\":\"span_end\",\"id\":\"c\",\"duration_ns\":10}", ROOT_END, TERMINAL, NULL);

  g_assert_null (wick_range_summary_new (doc, 40, 40));
  g_autoptr (WickRangeSummary) r = wick_range_summary_new (doc, 5, 40);
  g_assert_cmpuint (r->start_ns, ==, 5);
  g_assert_cmpuint (r->end_ns, ==, 40);
  g_assert_cmpuint (r->n_overlapping, ==, 3); /* demo, a, b; not c */
  g_assert_cmpuint (r->shares->len, ==, 2);
  const WickRangeShare *s0 = &g_array_index (r->shares, WickRangeShare, 0);
  const WickRangeShare *s1 = &g_array_index (r->shares, WickRangeShare, 1);
  g_assert_cmpstr (wick_document_str (doc, s0->name), ==, "demo");
  g_assert_cmpuint (s0->ns, ==, 35);
  g_assert_cmpuint (s0->count, ==, 1);
  g_assert_cmpstr (wick_document_str (doc, s1->name), ==, "w");
  g_assert_cmpuint (s1->ns, ==, 6 + 20); /* a: 5..11, b: 20..40 */
  g_assert_cmpuint (s1->count, ==, 2);

  /* a tie keeps the order of first appearance; a span ending at the range's
   * start does not overlap it */
  g_autoptr (WickRangeSummary) t = wick_range_summary_new (doc, 50, 70);
  g_assert_cmpuint (t->n_overlapping, ==, 2);
  g_assert_cmpstr (wick_document_str (doc, g_array_index (t->shares, WickRangeShare, 0).name), ==,
                   "demo");
  g_assert_cmpuint (g_array_index (t->shares, WickRangeShare, 0).ns, ==, 20);
  g_assert_cmpstr (wick_document_str (doc, g_array_index (t->shares, WickRangeShare, 1).name), ==,
                   "x");
  g_assert_cmpuint (g_array_index (t->shares, WickRangeShare, 1).ns, ==, 10);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model/derived/span-costs", test_span_costs);
  g_test_add_func ("/model/derived/span-costs-aggregate", test_span_costs_aggregate);
  g_test_add_func ("/model/derived/span-costs-from-copy", test_span_costs_from_copy);
  g_test_add_func ("/model/derived/span-contents", test_span_contents);
  g_test_add_func ("/model/derived/memory-series", test_memory_series);
  g_test_add_func ("/model/derived/memory-series-pairing", test_memory_series_pairing_rules);
  g_test_add_func ("/model/derived/device-memory-series", test_device_memory_series);
  g_test_add_func ("/model/derived/range-summary", test_range_summary);
  return g_test_run ();
}
