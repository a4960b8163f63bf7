/* test-app-health-german.c — what the Health page shows is German under
 * LANGUAGE=de ("health messages translated"): traces with many
 * health issues (broken spans, evidence, memory pairing, edges, provenance,
 * absent planes, a gradient contract broken several ways, a run still being
 * written, Chrome and torch memory-timeline imports with their notes and a
 * cut-off Chrome file) are loaded through the build tree's compiled catalog
 * (<build>/po/de/LC_MESSAGES/wick.mo) and again with messages in the "C"
 * locale (untranslated, as wick-trace runs); every issue's message, its
 * severity's name and the coverage verdict's reason must differ from the
 * English, and so must the words shown for the model's codes (memory
 * categories, span, track and comparison kinds, step names, gradient states,
 * expectations, family and coverage verdicts).
 * A message that is not marked, not in po/POTFILES or not in de.po fails here
 * by its code. In a subprocess (gettext and GLib decide once per process
 * whether to translate). No display needed. Suite: app.
 */
#include "config.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <locale.h>
#include <string.h>

#include "app-test-util.h"
#include "model/wick-chrome-import.h"
#include "model/wick-tracks.h"
#include "ui/wick-record-text.h"

#define SPAN(id, parent, start, extra)                                                             \
  "{\"kind\":\"span_start\",\"id\":\"" id "\"" parent ",\"name\":\"" id "\",\"start_ns\":" start   \
  ",\"span_kind\":\"function\"" extra "}\n"
#define PARENT(p) ",\"parent_id\":\"" p "\""
#define END(id, dur) "{\"kind\":\"span_end\",\"id\":\"" id "\",\"duration_ns\":" dur "}\n"
#define MEM(ts, storage, tensor, span, bytes, action)                                              \
  "{\"kind\":\"memory\",\"timestamp_ns\":" ts ",\"storage_id\":\"" storage                         \
  "\",\"tensor_id\":\"" tensor "\",\"span_id\":\"" span "\",\"device\":\"cpu\",\"bytes\":" bytes   \
  ",\"action\":\"" action "\",\"dtype\":\"f32\",\"category\":\"activation\"}\n"
#define CALL(from, to, dur)                                                                        \
  "{\"kind\":\"edge\",\"edge_kind\":\"call\",\"from_span\":\"" from "\",\"to_span\":\"" to         \
  "\",\"host_duration_ns\":" dur "}\n"
#define DATA(from, to)                                                                             \
  "{\"kind\":\"edge\",\"edge_kind\":\"data\",\"from_tensor\":\"" from "\",\"to_tensor\":\"" to     \
  "\"}\n"

/* Structure broken every way the spec names outside gradients. */
static const char broken_body[]
  = SPAN ("s1", "", "0", ",\"measured\":true") SPAN ("s2", PARENT ("s1"), "10", "")
    SPAN ("s3", PARENT ("ghost"), "20", "") SPAN ("s4", PARENT ("s1"), "30", "")
    SPAN ("s5", PARENT ("s6"), "40", "") SPAN ("s6", PARENT ("s5"), "40", "")
    SPAN ("r2", "", "50", ",\"measured\":true")
    "{\"kind\":\"op\",\"span_id\":\"nope\",\"op_name\":\"mm\",\"inputs\":[\"in\"],\"output\":"
    "\"out\",\"shape\":[2],\"dtype\":\"f32\",\"device\":\"cpu\",\"duration_ns\":1,"
    "\"timestamp_ns\":5,\"input_dense_bytes\":8}\n"
    "{\"kind\":\"op\",\"span_id\":\"s1\",\"op_name\":\"late\",\"inputs\":[\"in\"],\"output\":"
    "\"out\",\"shape\":[2],\"dtype\":\"f32\",\"device\":\"cpu\",\"duration_ns\":10,"
    "\"timestamp_ns\":500,\"input_dense_bytes\":8}\n"
    "{\"kind\":\"tensor\",\"span_id\":\"nope\",\"tensor_id\":\"t9\",\"shape\":[2],\"dtype\":"
    "\"f32\",\"device\":\"cpu\",\"category\":\"activation\"}\n"
    "{\"kind\":\"tensor_stats\",\"span_id\":\"nope\",\"label\":\"x\",\"shape\":[1],\"dtype\":"
    "\"f32\",\"elements\":1,\"non_finite\":0,\"rms\":1,\"abs_max\":1,\"mean\":1}\n"
    "{\"kind\":\"device_interval\",\"span_id\":\"s1\",\"device\":\"cuda:0\",\"stream_id\":\"7\","
    "\"clock_id\":\"cuda\",\"backend\":\"cuda\",\"start_ns\":1,\"duration_ns\":0}\n"
    "{\"kind\":\"device_interval\",\"span_id\":\"nope\",\"device\":\"cuda:0\",\"stream_id\":\"7\","
    "\"clock_id\":\"cuda\",\"backend\":\"cuda\",\"start_ns\":1,\"duration_ns\":5}\n"
    "{\"kind\":\"device_memory\",\"timestamp_ns\":5,\"device\":\"cuda:0\"}\n" MEM (
      "5", "st1", "t1", "s1", "8", "alloc") MEM ("6", "st1", "t1", "s1", "16", "free")
      MEM ("7", "st3", "t3", "s1", "8", "alloc") MEM ("8", "st3", "t3", "s1", "8", "alloc")
        MEM ("9", "st3", "t4", "s1", "32", "alloc") MEM ("10", "st2", "t2", "s1", "8", "free")
          MEM ("900", "st4", "t5", "s1", "8", "alloc") MEM ("11", "st5", "t6", "nope", "8", "alloc")
            CALL ("s1", "ghost", "5") CALL ("s1", "s2", "999") CALL ("s2", "s1", "100")
              DATA ("", "x") DATA ("a", "b") END ("s2", "200") END ("s1", "100") END ("s3", "1")
                END ("s5", "1") END ("s6", "1") END ("r2", "1");

typedef struct
{
  const char *name;
  char *jsonl;     /* fed line by line, or */
  char *file_text; /* written to a file named name and loaded as the app does */
  const char *data_file; /* or a file of tests/data */
  gboolean live;         /* analysed while still being written */
} Trace;

static char *
replace (const char *text, const char *from, const char *to)
{
  g_assert_nonnull (strstr (text, from));
  g_auto (GStrv) parts = g_strsplit (text, from, 2);
  return g_strconcat (parts[0], to, parts[1], NULL);
}

static char *
data_text (const char *dir, const char *name)
{
  g_autofree char *path = g_build_filename (WICK_SOURCE_DIR, "tests", "data", dir, name, NULL);
  char *text;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return text;
}

static GPtrArray *
traces (void)
{
  GPtrArray *all = g_ptr_array_new ();
  Trace *t;
  g_autofree char *meta = replace (APP_TEST_META, "\"warmup_steps\":0", "\"warmup_steps\":1");
  g_autofree char *contract = data_text ("model", "train-contract.jsonl");

  t = g_new0 (Trace, 1);
  t->name = "broken structure";
  t->jsonl = g_strconcat (meta, broken_body,
                          "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":1000}",
                          NULL);
  g_ptr_array_add (all, t);

  t = g_new0 (Trace, 1);
  t->name = "broken structure, still being written";
  t->jsonl = g_strconcat (APP_TEST_META, broken_body, NULL);
  t->live = TRUE;
  g_ptr_array_add (all, t);

  t = g_new0 (Trace, 1);
  t->name = "a training run with nothing captured but one span";
  t->jsonl = g_strconcat (
    replace (APP_TEST_META, "\"phase\":\"infer\"", "\"phase\":\"train\""),
    SPAN ("s1", "", "0", ",\"measured\":true") END ("s1", "100"),
    "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":100}", NULL);
  g_ptr_array_add (all, t);

  t = g_new0 (Trace, 1);
  t->name = "gradient manifest digest wrong";
  t->jsonl = replace (contract, "sha256:d7f0", "sha256:0000");
  g_ptr_array_add (all, t);

  /* states against norms, duplicate ids and keys, an undeclared key, a
   * non-finite active family below its minimum, an inactive family attached */
  t = g_new0 (Trace, 1);
  t->name = "gradients against their contract";
  {
    g_autofree char *a = replace (
      contract, "\"key\":\"frozen.weight\",\"state\":\"missing\"",
      "\"key\":\"frozen.weight\",\"state\":\"present\",\"norm\":0.5");
    g_autofree char *b = replace (a, "\"key\":\"trunk.weight\",\"state\":\"present\",\"norm\":1.25",
                                  "\"key\":\"trunk.weight\",\"state\":\"non_finite\"");
    t->jsonl = replace (
      b, "{\"kind\":\"terminal\"",
      "{\"kind\":\"gradient\",\"event_id\":\"gradient-2\",\"root\":\"parameters\",\"key\":"
      "\"optional.weight\",\"state\":\"zero\",\"norm\":1.0}\n"
      "{\"kind\":\"gradient\",\"event_id\":\"gradient-9\",\"root\":\"parameters\",\"key\":"
      "\"extra.weight\",\"state\":\"present\",\"norm\":1.0}\n"
      "{\"kind\":\"gradient\",\"event_id\":\"\",\"root\":\"\",\"key\":\"k\",\"state\":"
      "\"missing\"}\n"
      "{\"kind\":\"terminal\"");
  }
  g_ptr_array_add (all, t);

  t = g_new0 (Trace, 1);
  t->name = "a manifest gradient not captured, still being written";
  {
    g_autofree char *a = replace (
      contract,
      "{\"kind\":\"gradient\",\"event_id\":\"gradient-2\",\"root\":\"parameters\",\"key\":"
      "\"optional.weight\",\"state\":\"zero\",\"norm\":0.0}\n",
      "");
    t->jsonl = replace (a, "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":100}",
                        "");
  }
  t->live = TRUE;
  g_ptr_array_add (all, t);

  t = g_new0 (Trace, 1);
  t->name = "a manifest gradient not captured";
  t->jsonl = replace (contract,
                      "{\"kind\":\"gradient\",\"event_id\":\"gradient-2\",\"root\":\"parameters\","
                      "\"key\":\"optional.weight\",\"state\":\"zero\",\"norm\":0.0}\n",
                      "");
  g_ptr_array_add (all, t);

  /* required labels empty, repeated and missing; the GPU and CPU lists
   * repeating, overlapping, naming an unrequired label, not a partition */
  t = g_new0 (Trace, 1);
  t->name = "semantic labels";
  t->jsonl = replace (contract, "\"required_semantic_labels\":[\"forward\",\"backward\",\"optimizer\"]",
                      "\"required_semantic_labels\":[\"forward\",\"backward\",\"backward\","
                      "\"optimizer\",\"\",\"ghost\"],"
                      "\"gpu_expected_semantic_labels\":[\"forward\",\"forward\",\"extra\"],"
                      "\"cpu_only_semantic_labels\":[\"forward\",\"\"]");
  g_ptr_array_add (all, t);

  t = g_new0 (Trace, 1);
  t->name = "pytorch-profile.json";
  t->data_file = "model/pytorch-profile.json";
  g_ptr_array_add (all, t);

  t = g_new0 (Trace, 1);
  t->name = "catapult-async_begin_end.json";
  t->data_file = "chrome/catapult-async_begin_end.json";
  g_ptr_array_add (all, t);

  /* cut off inside the events, with a trailing comma before the cut, and a
   * [memory] free of a block from before the profile */
  t = g_new0 (Trace, 1);
  t->name = "cut.json";
  t->file_text = g_strdup (
    "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"step\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100},"
    "{\"ph\":\"i\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":1,\"args\":{\"Addr\":16,"
    "\"Bytes\":-64,\"Total Allocated\":0,\"Device Type\":1,\"Device Id\":0}},"
    "{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":1},");
  g_ptr_array_add (all, t);

  t = g_new0 (Trace, 1);
  t->name = "comma.json";
  t->file_text = g_strdup ("{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"step\",\"pid\":1,\"tid\":1,"
                           "\"ts\":0,\"dur\":100},]}");
  g_ptr_array_add (all, t);

  t = g_new0 (Trace, 1);
  t->name = "timeline.json";
  t->file_text = g_strdup ("[[1000, 1001, 1003],"
                           " [[0, 100, 0, 0, 0, 0, 0, 0, 0],"
                           "  [0, 100, 0, 0, 0, 50, 0, 0, 0],"
                           "  [0, 100, 20, 0, 0, 0, 30, 0, 0]]]");
  g_ptr_array_add (all, t);
  return all;
}

static WickDocument *
load (const Trace *t)
{
  WickDocument *document = wick_document_new ();
  g_autoptr (GError) error = NULL;

  if (t->jsonl != NULL)
    {
      g_auto (GStrv) lines = g_strsplit (t->jsonl, "\n", -1);
      for (guint i = 0; lines[i] != NULL; i++)
        if (lines[i][0] != '\0' && !wick_document_feed_line (document, lines[i], strlen (lines[i]),
                                                             &error))
          g_error ("%s: line %u: %s", t->name, i + 1, error->message);
      if (t->live)
        wick_document_analyze (document);
      else if (!wick_document_finish (document, &error))
        g_error ("%s: %s", t->name, error->message);
      return document;
    }
  g_autofree char *dir = NULL;
  g_autofree char *path = NULL;
  if (t->data_file != NULL)
    path = g_build_filename (WICK_SOURCE_DIR, "tests", "data", t->data_file, NULL);
  else
    {
      dir = g_dir_make_tmp ("wick-german-XXXXXX", NULL);
      path = g_build_filename (dir, t->name, NULL);
      g_assert_true (g_file_set_contents (path, t->file_text, -1, NULL));
    }
  if (!wick_document_load_file_auto (document, path, NULL, NULL, NULL, &error))
    g_error ("%s: %s", t->name, error->message);
  if (dir != NULL)
    {
      g_unlink (path);
      g_rmdir (dir);
    }
  return document;
}

/* The words the pages and sheets show for the model's codes. */
static GPtrArray *
names (void)
{
  static const char *family_verdicts[]
    = { "ok", "no members", "non-finite", "pending", "below minimum", "leakage" };
  GPtrArray *out = g_ptr_array_new ();

  for (int s = WICK_SEVERITY_ERROR; s <= WICK_SEVERITY_PENDING; s++)
    g_ptr_array_add (out, (gpointer)wick_severity_name (s));
  for (guint c = 0; c < 5; c++)
    g_ptr_array_add (out, (gpointer)wick_category_name (c));
  for (guint k = 0; k < 3; k++)
    g_ptr_array_add (out, (gpointer)wick_span_kind_name (k));
  for (guint k = 1; k < 4; k++)
    g_ptr_array_add (out, (gpointer)wick_step_name (k));
  for (guint k = WICK_TRACK_SLICES; k <= WICK_TRACK_DEVICE; k++)
    g_ptr_array_add (out, (gpointer)wick_track_kind_name (k));
  for (int k = WICK_COMPARE_SPAN; k <= WICK_COMPARE_KERNEL; k++)
    g_ptr_array_add (out, (gpointer)wick_compare_kind_name (k));
  for (int k = WICK_GRADIENT_PRESENT; k <= WICK_GRADIENT_NON_FINITE; k++)
    g_ptr_array_add (out, (gpointer)wick_gradient_state_name (k));
  for (int k = WICK_EXPECT_ACTIVE; k <= WICK_EXPECT_DATA_CONDITIONAL; k++)
    g_ptr_array_add (out, (gpointer)wick_gradient_expectation_name (k));
  for (int k = WICK_COVERAGE_VERDICT_COMPLETE; k <= WICK_COVERAGE_VERDICT_PENDING; k++)
    g_ptr_array_add (out, (gpointer)wick_coverage_verdict_name (k));
  for (guint k = 0; k < G_N_ELEMENTS (family_verdicts); k++)
    g_ptr_array_add (out, (gpointer)wick_family_verdict_name (family_verdicts[k]));
  return out;
}

/* German first, then the same with messages in "C": English. */
static void
check_german (void)
{
  g_autoptr (GPtrArray) all = traces ();
  g_autoptr (GPtrArray) german = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr (GPtrArray) english = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr (GHashTable) codes = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GString) untranslated = g_string_new (NULL);
  guint n_checked = 0;

  /* the catalog in use is the build tree's German one */
  g_assert_nonnull (strstr (gettext (""), "Language: de\n"));
  for (guint i = 0; i < all->len; i++)
    g_ptr_array_add (german, load (g_ptr_array_index (all, i)));
  g_autoptr (GPtrArray) names_de = names ();

  g_assert_nonnull (setlocale (LC_MESSAGES, "C"));
  for (guint i = 0; i < all->len; i++)
    g_ptr_array_add (english, load (g_ptr_array_index (all, i)));

  for (guint i = 0; i < all->len; i++)
    {
      const Trace *t = g_ptr_array_index (all, i);
      guint n_de, n_en;
      const WickHealthIssue *de = wick_document_get_health (g_ptr_array_index (german, i), &n_de);
      const WickHealthIssue *en = wick_document_get_health (g_ptr_array_index (english, i), &n_en);
      if (n_de != n_en || n_de == 0)
        g_error ("%s: %u health issues in German, %u in English", t->name, n_de, n_en);
      for (guint k = 0; k < n_de; k++)
        {
          g_assert_cmpstr (de[k].code, ==, en[k].code);
          g_test_message ("%s: %s\n  %s\n  %s", t->name, de[k].code, en[k].message,
                          de[k].message);
          if (strcmp (de[k].message, en[k].message) == 0)
            g_string_append_printf (untranslated, "\n  %s: %s: \"%s\"", t->name, de[k].code,
                                    en[k].message);
          g_hash_table_add (codes, (gpointer)de[k].code);
          n_checked++;
        }
      const char *reason_de
        = wick_document_get_gradient_coverage_reason (g_ptr_array_index (german, i));
      const char *reason_en
        = wick_document_get_gradient_coverage_reason (g_ptr_array_index (english, i));
      g_assert_cmpint (reason_de == NULL, ==, reason_en == NULL);
      if (reason_en != NULL && strcmp (reason_de, reason_en) == 0)
        g_string_append_printf (untranslated, "\n  %s: coverage reason: \"%s\"", t->name,
                                reason_en);
    }
  g_autoptr (GPtrArray) names_en = names ();
  for (guint k = 0; k < names_en->len; k++)
    if (strcmp (g_ptr_array_index (names_de, k), g_ptr_array_index (names_en, k)) == 0)
      g_string_append_printf (untranslated, "\n  name \"%s\"",
                              (const char *)g_ptr_array_index (names_en, k));
  if (untranslated->len > 0)
    g_error ("shown in English under LANGUAGE=de:%s", untranslated->str);
  /* the traces raise what they are meant to: most of the model's codes */
  g_test_message ("%u messages of %u codes translated", n_checked, g_hash_table_size (codes));
  g_assert_cmpuint (g_hash_table_size (codes), >=, 50);
}

static void
test_german (void)
{
  if (g_test_subprocess ())
    {
      check_german ();
      return;
    }
  g_autofree char *mo
    = g_build_filename (WICK_BUILD_DIR, "po", "de", "LC_MESSAGES", "wick.mo", NULL);
  if (!g_file_test (mo, G_FILE_TEST_EXISTS))
    g_error ("%s is missing: the build compiles po/de.po there", mo);
  g_setenv ("LANGUAGE", "de", TRUE);
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_unsetenv ("LANGUAGE");
  g_test_trap_assert_passed ();
}

int
main (int argc, char **argv)
{
  if (!app_test_bind_build_catalogs ())
    return 0;
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/health-german/every-message", test_german);
  return g_test_run ();
}
