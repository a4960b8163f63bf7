/* test-model-snapshot.c — the data-only pickle reader and PyTorch CUDA memory
 * snapshots: every data opcode against Python's own pickler (protocols 1–5),
 * every code opcode refused with its byte offset, bounds, truncation at every
 * length, and `wick-trace memory --json` against an independent Python
 * reference (tests/model/memory-snapshot-reference.py) on public snapshots
 * and on synthetic ones (tests/model/make-snapshot.py), plus hostile pickles
 * that would run a command when Python loads them: refused, nothing run.
 * Argument 1 is the wick-trace binary. Tests that need /usr/bin/python3 skip
 * without it. */
#include "config.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "pickle-records-diff.h"
#include "wick-input.h"
#include "wick-memory-snapshot.h"
#include "wick-snapshot-categories.h"
#include "wick-memory-snapshot-private.h"
#include "wick-pickle.h"
#include "wick-pickle-private.h"

static const char *wick_trace;
static const char *python = "/usr/bin/python3";

static char *
script_path (const char *name)
{
  const char *dir = g_getenv ("G_TEST_SRCDIR");
  return g_build_filename (dir ? dir : "tests", "model", name, NULL);
}

static char *
snapshot_data_dir (void)
{
  const char *dir = g_getenv ("WICK_TEST_DATA");
  return g_build_filename (dir ? dir : "tests/data", "snapshot", NULL);
}

static gboolean
have_python (void)
{
  if (g_file_test (python, G_FILE_TEST_IS_EXECUTABLE))
    return TRUE;
  g_test_skip ("no /usr/bin/python3");
  return FALSE;
}

/* Runs argv; returns the exit status, stdout and stderr. */
static int
run_argv (const char *const *argv, char **out, char **err)
{
  g_autoptr (GError) error = NULL;
  int status = 0;
  g_assert_true (g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, err,
                               &status, &error));
  g_assert_no_error (error);
  g_assert_true (WIFEXITED (status));
  return WEXITSTATUS (status);
}

static char *
make_snapshot (const char *kind, const char *path, int protocol, const char *extra)
{
  g_autofree char *script = script_path ("make-snapshot.py");
  g_autofree char *proto = g_strdup_printf ("%d", protocol);
  const char *argv[] = { python, script, kind, path, proto, extra, NULL };
  char *out = NULL;
  g_autofree char *err = NULL;
  int status = run_argv (argv, &out, &err);
  if (status != 0)
    g_error ("make-snapshot.py %s failed: %s", kind, err);
  return out;
}

static GBytes *
read_file (const char *path)
{
  g_autoptr (GError) error = NULL;
  char *data;
  gsize len;
  g_assert_true (g_file_get_contents (path, &data, &len, &error));
  g_assert_no_error (error);
  return g_bytes_new_take (data, len);
}

/* The JSON form make-snapshot.py's jsonable() gives (see there). */
static JsonNode *
to_json (const WickPickleValue *v)
{
  JsonNode *node;
  switch (v->type)
    {
      case WICK_PICKLE_NONE:
        return json_node_init_null (json_node_alloc ());
      case WICK_PICKLE_BOOL:
        return json_node_init_boolean (json_node_alloc (), v->as.i != 0);
      case WICK_PICKLE_INT:
        return json_node_init_int (json_node_alloc (), v->as.i);
      case WICK_PICKLE_UINT:
        {
          g_autoptr (JsonObject) o = json_object_new ();
          g_autofree char *digits = g_strdup_printf ("%" G_GUINT64_FORMAT, v->as.u);
          json_object_set_string_member (o, "u64", digits);
          return json_node_init_object (json_node_alloc (), o);
        }
      case WICK_PICKLE_BIG:
        return json_node_init_string (json_node_alloc (), "big");
      case WICK_PICKLE_FLOAT:
        return json_node_init_double (json_node_alloc (), v->as.f);
      case WICK_PICKLE_STR:
        return json_node_init_string (json_node_alloc (), wick_pickle_value_get_string (v, NULL));
      case WICK_PICKLE_BYTES:
        {
          gsize len;
          const guint8 *p = (const guint8 *)wick_pickle_value_get_string (v, &len);
          g_autoptr (GString) hex = g_string_new (NULL);
          for (gsize i = 0; i < len; i++)
            g_string_append_printf (hex, "%02x", p[i]);
          g_autoptr (JsonObject) o = json_object_new ();
          json_object_set_string_member (o, "bytes", hex->str);
          return json_node_init_object (json_node_alloc (), o);
        }
      case WICK_PICKLE_LIST:
      case WICK_PICKLE_TUPLE:
        {
          g_autoptr (JsonArray) a = json_array_new ();
          for (gsize i = 0; i < wick_pickle_value_get_length (v); i++)
            json_array_add_element (a, to_json (wick_pickle_value_get_item (v, i)));
          return json_node_init_array (json_node_alloc (), a);
        }
      case WICK_PICKLE_DICT:
        {
          g_autoptr (JsonArray) a = json_array_new ();
          for (gsize i = 0; i < wick_pickle_value_get_length (v); i++)
            {
              const WickPickleValue *key, *item;
              g_assert_true (wick_pickle_value_get_pair (v, i, &key, &item));
              JsonArray *pair = json_array_new ();
              json_array_add_element (pair, to_json (key));
              json_array_add_element (pair, to_json (item));
              json_array_add_array_element (a, pair);
            }
          return json_node_init_array (json_node_alloc (), a);
        }
      default:
        node = NULL;
        g_assert_not_reached ();
    }
  return node;
}

static JsonNode *
parse_json (const char *text)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (json_parser_load_from_data (parser, text, -1, &error));
  g_assert_no_error (error);
  return json_node_copy (json_parser_get_root (parser));
}

static void
assert_json_equal (JsonNode *expected, JsonNode *got)
{
  if (!json_node_equal (expected, got))
    {
      g_autofree char *a = json_to_string (expected, FALSE);
      g_autofree char *b = json_to_string (got, FALSE);
      g_error ("JSON differs:\nexpected %.2000s\n     got %.2000s", a, b);
    }
}

/* Python's pickle of every data kind, protocols 1 to 5, decodes to the same value. */
static void
test_pickle_data_opcodes (void)
{
  if (!have_python ())
    return;
  g_autofree char *dir = g_dir_make_tmp ("wick-pickle-XXXXXX", NULL);
  for (int protocol = 1; protocol <= 5; protocol++)
    {
      g_autofree char *path = g_build_filename (dir, "data.pickle", NULL);
      g_autofree char *expected_text = make_snapshot ("data", path, protocol, NULL);
      g_autoptr (GBytes) bytes = read_file (path);
      g_autoptr (GError) error = NULL;
      WickPickleValue value;
      gsize len;
      const void *data = g_bytes_get_data (bytes, &len);
      gboolean parsed = wick_pickle_parse_data (data, len, &value, &error);
      g_assert_no_error (error);
      g_assert_true (parsed);
      g_autoptr (JsonNode) expected = parse_json (expected_text);
      g_autoptr (JsonNode) got = to_json (&value);
      /* Sets: CPython iterates {3, 1, 2} as 1, 2, 3 (small ints hash to
       * themselves), the order the script sorts them in. */
      assert_json_equal (expected, got);
      /* Shared values stay one object: the memo gives back the same list. */
      const WickPickleValue *shared = wick_pickle_value_lookup (&value, "shared");
      g_assert_true (wick_pickle_value_get_item (shared, 0)->as.object
                     == wick_pickle_value_get_item (shared, 1)->as.object);
      wick_pickle_value_clear (&value);
      g_unlink (path);
    }
  g_rmdir (dir);
}

typedef struct
{
  const char *bytes;
  gsize len;
  const char *message; /* a part of the error */
} Refusal;

#define P(s) s, sizeof (s) - 1

/* Every opcode that would import, call or reach outside the data is refused at its byte. */
static void
test_pickle_refused_opcodes (void)
{
  static const Refusal cases[] = {
    { P ("\x80\x02"
         "cos\nsystem\n."),
      "byte 2: opcode GLOBAL (0x63)" },
    { P ("\x80\x04\x8c\x02os\x8c\x06system\x93."), "byte 14: opcode STACK_GLOBAL (0x93)" },
    { P ("\x80\x04N)R."), "byte 4: opcode REDUCE (0x52)" },
    { P ("\x80\x04}}b."), "byte 4: opcode BUILD (0x62)" },
    { P ("\x80\x02(ios\nsystem\n."), "byte 3: opcode INST (0x69)" },
    { P ("\x80\x02(N)o."), "byte 5: opcode OBJ (0x6f)" },
    { P ("\x80\x02N)\x81."), "byte 4: opcode NEWOBJ (0x81)" },
    { P ("\x80\x04N)}\x92."), "byte 5: opcode NEWOBJ_EX (0x92)" },
    { P ("\x80\x02\x82\x01."), "byte 2: opcode EXT1 (0x82)" },
    { P ("\x80\x02\x83\x01\x00."), "byte 2: opcode EXT2 (0x83)" },
    { P ("\x80\x02\x84\x01\x00\x00\x00."), "byte 2: opcode EXT4 (0x84)" },
    { P ("\x80\x02Pid\n."), "byte 2: opcode PERSID (0x50)" },
    { P ("\x80\x02NQ."), "byte 3: opcode BINPERSID (0x51)" },
    { P ("\x80\x05\x97."), "byte 2: opcode NEXT_BUFFER (0x97)" },
    { P ("\x80\x05N\x98."), "byte 3: opcode READONLY_BUFFER (0x98)" },
    { P ("\x80\x02S'x'\n."), "byte 2: opcode STRING (0x53): is a protocol 0 text opcode" },
    { P ("\x80\x02I1x\n."), "byte 2: opcode INT (0x49): \"1x\" is not a decimal integer" },
    { P ("\x80\x02\xff."), "byte 2: opcode not an opcode (0xff)" },
    { P ("\x80\x06N."), "byte 0: opcode PROTO (0x80): protocol 6 is newer than 5" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      WickPickleValue value;
      g_assert_false (wick_pickle_parse_data (cases[i].bytes, cases[i].len, &value, &error));
      g_assert_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID);
      if (strstr (error->message, cases[i].message) == NULL)
        g_error ("case %" G_GSIZE_FORMAT ": \"%s\" does not say \"%s\"", i, error->message,
                 cases[i].message);
    }
}

static void
assert_refused (const char *bytes, gsize len, const WickPickleLimits *limits, const char *message)
{
  g_autoptr (WickInput) input = wick_input_new_for_data (bytes, len, "bounds");
  g_autoptr (WickPickleReader) reader = wick_pickle_reader_new (input, "bounds");
  g_autoptr (GError) error = NULL;
  WickPickleValue value;
  if (limits != NULL)
    wick_pickle_reader_set_limits (reader, limits);
  if (wick_pickle_reader_read (reader, &value, &error))
    g_error ("read, though it should say \"%s\"", message);
  g_assert_true (error->domain == WICK_DOCUMENT_ERROR);
  /* a limit passed is TOO_LARGE, a pickle that ends early TRUNCATED */
  if (strstr (message, "limit") != NULL || strstr (message, "is over") != NULL)
    g_assert_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_TOO_LARGE);
  else if (strstr (message, "ends") != NULL)
    g_assert_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_TRUNCATED);
  else
    g_assert_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID);
  if (strstr (error->message, message) == NULL)
    g_error ("\"%s\" does not say \"%s\"", error->message, message);
}

/* Lengths, depth, memo keys, the stack and cycles are bounded. */
static void
test_pickle_bounds (void)
{
  WickPickleLimits limits;
  wick_pickle_limits_init (&limits);

  /* A 1 TiB string announced in a 20-byte file. */
  assert_refused (P ("\x80\x04\x8d\x00\x00\x00\x00\x00\x01\x00\x00."), NULL,
                  "byte 2: opcode BINUNICODE8 (0x8d): length 1099511627776 is over the limit");
  /* A memo key far past the memo. */
  assert_refused (P ("\x80\x04Nr\x00\x00\x00\x7f."), NULL, "memo key 2130706432 is over the limit");
  assert_refused (P ("\x80\x04Nr\x00\x00\x00\x01."), NULL, "far past the memo's 0 slots");
  assert_refused (P ("\x80\x04h\x05."), NULL, "memo key 5 was never set");
  /* A list that holds itself (via the memo). */
  assert_refused (P ("\x80\x04]\x94h\x00"
                     "a."),
                  NULL, "would hold itself");
  /* A list changed after it went inside another: how cycles are made. */
  assert_refused (P ("\x80\x04]\x94]\x94"
                     "ah\x01h\x00"
                     "a."),
                  NULL, "already inside another container");
  /* Nesting deeper than the limit: 300 lists on the stack, then 299 APPENDs. */
  {
    g_autoptr (GString) deep = g_string_new ("\x80\x04");
    for (int i = 0; i < 300; i++)
      g_string_append_c (deep, ']');
    for (int i = 0; i < 299; i++)
      g_string_append_c (deep, 'a');
    g_string_append_c (deep, '.');
    assert_refused (deep->str, deep->len, NULL, "nest deeper than the limit of 200");
  }
  /* The stack and the kept items have their limits too. */
  limits.max_stack = 3;
  assert_refused (P ("\x80\x04NNNN."), &limits, "byte 5: opcode NONE (0x4e): the stack is over");
  wick_pickle_limits_init (&limits);
  limits.max_kept_items = 2;
  assert_refused (P ("\x80\x04](NNNe."), &limits, "more than the limit of 2 items");
  /* Structure errors. */
  assert_refused (P ("\x80\x04Na."), NULL, "needs 2 values");
  assert_refused (P ("\x80\x04N(Ne."), NULL, "its target is a None, not a list");
  assert_refused (P ("\x80\x04}(Nu."), NULL, "an odd number of values");
  assert_refused (P ("\x80\x04"
                     "e."),
                  NULL, "no MARK before it");
  assert_refused (P ("\x80\x04."), NULL, "needs 1 value");
  assert_refused (P ("\x80\x04N"), NULL, "byte 3: the pickle ends before its STOP opcode");
  assert_refused (P ("\x80\x04J\x01\x00"), NULL,
                  "byte 2: opcode BININT (0x4a): the pickle ends inside it");
}

/* Every prefix of a real snapshot fails cleanly (ASan checks the rest). */
static void
test_pickle_truncated (void)
{
  g_autofree char *dir = snapshot_data_dir ();
  g_autofree char *path = g_build_filename (dir, "cs336-medium-128-inference.pickle.zst", NULL);
  g_autoptr (WickInput) input = wick_input_open (path, NULL);
  g_assert_nonnull (input);
  g_autoptr (GByteArray) whole = g_byte_array_new ();
  guint8 chunk[65536];
  gssize got;
  while ((got = wick_input_read (input, chunk, sizeof chunk, NULL)) > 0)
    g_byte_array_append (whole, chunk, (guint)got);
  g_assert_cmpuint (whole->len, ==, 1203466);
  /* Each prefix up to 2 KiB, then every 9973rd (a prime, so cuts land anywhere). */
  for (gsize len = 0; len < whole->len; len += len < 2048 ? 1 : 9973)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (WickMemorySnapshot) s
        = wick_memory_snapshot_load_data (whole->data, len, "cut.pickle", &error);
      g_assert_null (s);
      g_assert_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_TRUNCATED);
      g_assert_true (g_str_has_prefix (error->message, "cut.pickle: byte "));
    }
  g_autoptr (GError) error = NULL;
  g_autoptr (WickMemorySnapshot) s
    = wick_memory_snapshot_load_data (whole->data, whole->len, "whole.pickle", &error);
  g_assert_no_error (error);
  g_assert_nonnull (s);
}

static char *
run_memory_json (const char *path)
{
  const char *argv[] = { wick_trace, "memory", "--json", path, NULL };
  char *out = NULL;
  g_autofree char *err = NULL;
  int status = run_argv (argv, &out, &err);
  if (status != 0)
    g_error ("wick-trace memory --json %s: exit %d: %s", path, status, err);
  return out;
}

static char *
run_reference (const char *path)
{
  g_autofree char *script = script_path ("memory-snapshot-reference.py");
  const char *argv[] = { python, script, path, NULL };
  char *out = NULL;
  g_autofree char *err = NULL;
  int status = run_argv (argv, &out, &err);
  if (status != 0)
    g_error ("memory-snapshot-reference.py %s: %s", path, err);
  return out;
}

static void
assert_matches_reference (const char *path)
{
  g_autofree char *ours = run_memory_json (path);
  g_autofree char *theirs = run_reference (path);
  g_autoptr (JsonNode) a = parse_json (theirs);
  g_autoptr (JsonNode) b = parse_json (ours);
  assert_json_equal (a, b);
}

/* A snapshot and a Wick trace of one made-up run (make-snapshot.py pair):
 * the categories from records against the reference, with the meta's clock
 * and with the trace-end guess; the existing keys unchanged by --trace; the
 * matcher's counts as the script documents them. */
static void
test_snapshot_categories (void)
{
  if (!have_python ())
    return;
  g_autofree char *dir = g_dir_make_tmp ("wick-snapshot-XXXXXX", NULL);
  g_autofree char *snap = g_build_filename (dir, "pair.pickle", NULL);
  g_autofree char *trace = g_build_filename (dir, "pair.jsonl", NULL);
  g_autofree char *make = script_path ("make-snapshot.py");
  g_autofree char *reference = script_path ("memory-snapshot-reference.py");
  const char *variants[] = { NULL, "bad-timestamp" };
  for (guint v = 0; v < G_N_ELEMENTS (variants); v++)
    {
      const char *make_argv[] = { python, make, "pair", snap, trace, variants[v], NULL };
      g_autofree char *made = NULL, *made_err = NULL;
      if (run_argv (make_argv, &made, &made_err) != 0)
        g_error ("make-snapshot.py pair: %s", made_err);
      const char *ours_argv[] = { wick_trace, "memory", "--json", snap, "--trace", trace, NULL };
      const char *theirs_argv[] = { python, reference, snap, "--trace", trace, NULL };
      g_autofree char *ours = NULL, *theirs = NULL, *err1 = NULL, *err2 = NULL;
      g_assert_cmpint (run_argv (ours_argv, &ours, &err1), ==, 0);
      if (run_argv (theirs_argv, &theirs, &err2) != 0)
        g_error ("memory-snapshot-reference.py --trace: %s", err2);
      g_test_message ("%s", ours);
      g_autoptr (JsonNode) a = parse_json (theirs);
      g_autoptr (JsonNode) b = parse_json (ours);
      assert_json_equal (a, b);
      /* every key of the plain object, unchanged */
      g_autofree char *plain_text = run_memory_json (snap);
      g_autoptr (JsonNode) plain = parse_json (plain_text);
      json_object_remove_member (json_node_get_object (b), "categories");
      assert_json_equal (plain, b);
    }

  /* a real pair: wick.torch's trace and the snapshot it wrote beside it (H200) */
  {
    g_autofree char *data = snapshot_data_dir ();
    g_autofree char *real_snap = g_build_filename (data, "h200-pair.memory.pickle.gz", NULL);
    g_autofree char *real_trace = g_build_filename (data, "h200-pair.jsonl.gz", NULL);
    const char *ours_argv[] = { wick_trace, "memory", "--json", real_snap, "--trace", real_trace,
                                NULL };
    const char *theirs_argv[] = { python, reference, real_snap, "--trace", real_trace, NULL };
    g_autofree char *ours = NULL, *theirs = NULL, *err1 = NULL, *err2 = NULL;
    g_assert_cmpint (run_argv (ours_argv, &ours, &err1), ==, 0);
    if (run_argv (theirs_argv, &theirs, &err2) != 0)
      g_error ("memory-snapshot-reference.py --trace: %s", err2);
    g_test_message ("%s", ours);
    g_autoptr (JsonNode) a = parse_json (theirs);
    g_autoptr (JsonNode) b = parse_json (ours);
    assert_json_equal (a, b);
    JsonObject *cats = json_object_get_object_member (json_node_get_object (b), "categories");
    JsonObject *records = json_object_get_object_member (cats, "records");
    JsonObject *clock = json_object_get_object_member (cats, "clock");
    g_assert_cmpstr (json_object_get_string_member (clock, "source"), ==, "meta_timestamp");
    /* the meta's millisecond and the tracker's lag: well under 2 ms */
    g_assert_cmpint (ABS (json_object_get_int_member (clock, "correction_us")), <, 2000);
    g_assert_cmpint (json_object_get_int_member (records, "lifetimes"), >, 30);
    g_assert_cmpint (json_object_get_int_member (records, "lifetimes_matched"), ==,
                     json_object_get_int_member (records, "lifetimes"));
    g_assert_cmpint (json_object_get_int_member (cats, "ambiguous"), ==, 0);
  }

  /* the matcher itself: the counts the script's comment implies */
  g_autoptr (GError) error = NULL;
  g_autoptr (WickMemorySnapshot) s = wick_memory_snapshot_load (snap, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (WickDocument) doc = wick_document_new_with_extensions (TRUE);
  g_assert_true (wick_document_load_file (doc, trace, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  g_autoptr (WickSnapshotCategories) cats = wick_snapshot_categories_new (s, doc);
  const WickSnapshotMatchCounts *c = wick_snapshot_categories_get_counts (cats);
  g_assert_cmpuint (c->allocations, ==, 12);
  g_assert_cmpuint (c->matched, ==, 9);
  g_assert_cmpuint (c->unmatched, ==, 2);
  g_assert_cmpuint (c->ambiguous, ==, 1);
  g_assert_cmpuint (c->matched + c->unmatched + c->ambiguous, ==, c->allocations);
  g_assert_cmpuint (c->live, ==, 3);
  g_assert_cmpuint (c->live_matched, ==, 3);
  g_assert_cmpuint (c->from_record, ==, 8);
  g_assert_cmpuint (c->from_frames, ==, 3);
  g_assert_cmpuint (c->unknown, ==, 1);
  g_assert_cmpuint (c->record_lifetimes, ==, 13);
  g_assert_cmpuint (c->lifetimes_matched, ==, 9);
  g_assert_cmpuint (c->records_other_device, ==, 2);
  g_assert_cmpuint (c->records_without_address, ==, 4);
  g_assert_cmpuint (c->records_bad_address, ==, 2);
  g_assert_cmpint (c->clock, ==, WICK_SNAPSHOT_CLOCK_TRACE_END); /* the last variant made */
  guint64 bytes[WICK_SNAPSHOT_N_CATEGORIES];
  wick_snapshot_categories_at_snapshot (cats, bytes);
  g_assert_cmpuint (bytes[WICK_CATEGORY_PARAMETER], ==, 8 << 20);
  g_assert_cmpuint (bytes[WICK_CATEGORY_GRADIENT], ==, 1 << 20);
  g_assert_cmpuint (bytes[WICK_CATEGORY_ACTIVATION], ==, 4096);
  guint64 sum = 0;
  for (guint i = 0; i < WICK_SNAPSHOT_N_CATEGORIES; i++)
    sum += bytes[i];
  g_assert_cmpuint (sum, ==, wick_memory_snapshot_get_allocated (s));
  /* the ambiguous one takes its stack's category (an optimizer's frames),
   * and the live-before-history parameter its record's */
  guint n;
  const WickSnapshotAllocation *allocs = wick_memory_snapshot_get_allocations (s, &n);
  guint seen = 0;
  for (guint i = 0; i < n; i++)
    {
      WickSnapshotMatch match;
      WickSnapshotCategorySource source;
      guint32 record;
      WickMemoryCategory category = wick_snapshot_categories_get (cats, i, &match, &source, &record);
      if (match == WICK_SNAPSHOT_AMBIGUOUS)
        {
          g_assert_cmpint (category, ==, WICK_CATEGORY_OPTIMIZER);
          g_assert_cmpint (source, ==, WICK_SNAPSHOT_CATEGORY_FROM_FRAMES);
          g_assert_cmpuint (record, ==, G_MAXUINT32);
          seen++;
        }
      if (allocs[i].alloc_us == G_MININT64 && allocs[i].block != G_MAXUINT32)
        {
          g_assert_cmpint (match, ==, WICK_SNAPSHOT_MATCHED);
          g_assert_cmpint (category, ==, WICK_CATEGORY_PARAMETER);
          const WickMemoryEvent *memory = wick_document_get_memory (doc, &n);
          g_assert_cmpstr (wick_document_str (doc, memory[record].storage_id), ==, "param");
          n = c->allocations;
          seen++;
        }
    }
  g_assert_cmpuint (seen, ==, 2);
  g_unlink (snap);
  g_unlink (trace);
  g_rmdir (dir);
}

/* Public snapshots from a GPT-2-medium training and inference run (CS336). */
static void
test_snapshot_public_reference (void)
{
  if (!have_python ())
    return;
  g_autofree char *dir = snapshot_data_dir ();
  const char *names[] = { "cs336-medium-128-training.pickle.gz",
                          "cs336-medium-128-inference.pickle.zst", "h200-oom.pickle.gz" };
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *path = g_build_filename (dir, names[i], NULL);
      assert_matches_reference (path);
    }
  /* And the figures themselves, so that a bug shared by both cannot hide. */
  g_autofree char *path = g_build_filename (dir, names[0], NULL);
  g_autofree char *ours = run_memory_json (path);
  g_autoptr (JsonNode) root = parse_json (ours);
  JsonObject *o = json_node_get_object (root);
  g_assert_cmpint (json_object_get_int_member (o, "segments"), ==, 377);
  g_assert_cmpint (json_object_get_int_member (o, "reserved_bytes"), ==, 7235174400);
  g_assert_cmpint (json_object_get_int_member (o, "allocated_bytes"), ==, 6816891392);
  g_assert_cmpint (json_object_get_int_member (o, "trace_entries"), ==, 19136);

  /* torch 2.11's oom entry: the free bytes under "device_free". */
  g_autofree char *oom_path = g_build_filename (dir, names[2], NULL);
  g_autofree char *oom_out = run_memory_json (oom_path);
  g_autoptr (JsonNode) oom_root = parse_json (oom_out);
  JsonArray *ooms = json_object_get_array_member (json_node_get_object (oom_root), "oom");
  g_assert_cmpuint (json_array_get_length (ooms), ==, 1);
  JsonObject *oom = json_array_get_object_element (ooms, 0);
  g_assert_cmpint (json_object_get_int_member (oom, "device_free_bytes"), ==, 143010168832);
  g_assert_cmpint (json_object_get_int_member (oom, "bytes"), ==, 214090579968);
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (oom_root), "trace_entries"),
                   ==, 48);
}

/* What was live before the history began has no allocation stack: an
 * unmatched free_completed's frames are where it was freed (in the CS336
 * step: inside optimizer.step, 3.08 GiB), so its category is unknown, not
 * "optimizer state"; the free's frames are kept as free_stack. */
static void
test_snapshot_before_history (void)
{
  g_autofree char *dir = snapshot_data_dir ();
  g_autofree char *path = g_build_filename (dir, "cs336-medium-128-training.pickle.gz", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (WickMemorySnapshot) s = wick_memory_snapshot_load (path, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  guint n;
  const WickSnapshotAllocation *a = wick_memory_snapshot_get_allocations (s, &n);
  guint64 by_category[WICK_CATEGORY_OTHER + 1] = { 0 };
  guint64 freed_with_stack = 0;
  for (guint i = 0; i < n; i++)
    {
      if (a[i].alloc_us != G_MININT64)
        continue;
      by_category[wick_memory_snapshot_stack_category (s, a[i].stack)] += a[i].size;
      if (a[i].free_completed_us != G_MAXINT64)
        {
          g_assert_cmpuint (a[i].stack, ==, WICK_SNAPSHOT_NO_STACK);
          if (a[i].free_stack != WICK_SNAPSHOT_NO_STACK)
            freed_with_stack += a[i].size;
        }
    }
  g_assert_cmpuint (by_category[WICK_CATEGORY_OPTIMIZER], ==, 0);
  g_assert_cmpuint (by_category[WICK_CATEGORY_OTHER], >, (guint64)4 << 30);
  g_assert_cmpuint (freed_with_stack, >, (guint64)3 << 30);
}

/* A time range loaded alone (wick-trace memory --from/--to): the entries
 * inside it, the peak within it, and the state at its start rebuilt from
 * what came before, against the reference cutting its full series. */
static void
test_snapshot_range (void)
{
  if (!have_python ())
    return;
  g_autofree char *dir = snapshot_data_dir ();
  const char *names[] = { "cs336-medium-128-training.pickle.gz", "h200-oom.pickle.gz" };
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *path = g_build_filename (dir, names[i], NULL);
      g_autoptr (GError) error = NULL;
      g_autoptr (WickMemorySnapshot) full
        = wick_memory_snapshot_load (path, NULL, NULL, NULL, &error);
      g_assert_no_error (error);
      guint n_entries, n_full_allocs;
      const WickSnapshotEntry *entries = wick_memory_snapshot_get_entries (full, &n_entries);
      wick_memory_snapshot_get_allocations (full, &n_full_allocs);
      g_assert_cmpuint (n_entries, >, 10);
      gint64 first = entries[0].time_us, last = entries[n_entries - 1].time_us;
      gint64 span = last - first;
      gint64 cuts[][2] = { { first + span / 3, first + 2 * span / 3 },
                           { first, first },
                           { G_MININT64 + 1, first + span / 2 },
                           { first + 2 * span / 3, G_MAXINT64 - 1 },
                           { entries[n_entries / 2].time_us, entries[n_entries / 2].time_us + 1 } };
      for (gsize c = 0; c < G_N_ELEMENTS (cuts); c++)
        {
          g_autofree char *from = g_strdup_printf ("%" G_GINT64_FORMAT, cuts[c][0]);
          g_autofree char *to = g_strdup_printf ("%" G_GINT64_FORMAT, cuts[c][1]);
          const char *ours_argv[]
            = { wick_trace, "memory", "--json", "--from", from, "--to", to, path, NULL };
          g_autofree char *script = script_path ("memory-snapshot-reference.py");
          const char *theirs_argv[] = { python, script, "--from", from, "--to", to, path, NULL };
          g_autofree char *ours = NULL, *theirs = NULL, *err1 = NULL, *err2 = NULL;
          g_assert_cmpint (run_argv (ours_argv, &ours, &err1), ==, 0);
          g_assert_cmpint (run_argv (theirs_argv, &theirs, &err2), ==, 0);
          g_autoptr (JsonNode) a = parse_json (theirs);
          g_autoptr (JsonNode) b = parse_json (ours);
          assert_json_equal (a, b);

          /* Only what the range needs is kept: every allocation is live in it. */
          g_autoptr (WickMemorySnapshot) part = wick_memory_snapshot_load_range (
            path, cuts[c][0], cuts[c][1], NULL, NULL, NULL, &error);
          g_assert_no_error (error);
          guint n_allocs;
          const WickSnapshotAllocation *allocs
            = wick_memory_snapshot_get_allocations (part, &n_allocs);
          g_assert_cmpuint (n_allocs, <=, n_full_allocs);
          for (guint k = 0; k < n_allocs; k++)
            {
              g_assert_cmpint (allocs[k].alloc_us, <=, cuts[c][1]);
              g_assert_cmpint (allocs[k].free_completed_us, >=, cuts[c][0]);
            }
        }
    }
  /* A range that ends before it starts is refused. */
  g_autofree char *path = g_build_filename (dir, names[0], NULL);
  g_autoptr (GError) error = NULL;
  g_assert_null (wick_memory_snapshot_load_range (path, 10, 9, NULL, NULL, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
}

/* Two snapshots compared by stack (wick-trace compare A B), against the
 * reference grouping Python's own load of both; exit 1 when a stack
 * changed, 0 for a snapshot against itself. */
static void
test_snapshot_compare (void)
{
  if (!have_python ())
    return;
  g_autofree char *dir = snapshot_data_dir ();
  g_autofree char *a = g_build_filename (dir, "cs336-medium-128-inference.pickle.zst", NULL);
  g_autofree char *b = g_build_filename (dir, "cs336-medium-128-training.pickle.gz", NULL);
  g_autofree char *c = g_build_filename (dir, "h200-oom.pickle.gz", NULL);
  const char *pairs[][2] = { { a, b }, { b, a }, { c, b } };
  for (gsize i = 0; i < G_N_ELEMENTS (pairs); i++)
    {
      const char *ours_argv[] = { wick_trace, "compare", "--json", pairs[i][0], pairs[i][1], NULL };
      g_autofree char *script = script_path ("memory-snapshot-reference.py");
      const char *theirs_argv[] = { python, script, "--diff", pairs[i][0], pairs[i][1], NULL };
      g_autofree char *ours = NULL, *theirs = NULL, *err1 = NULL, *err2 = NULL;
      g_assert_cmpint (run_argv (ours_argv, &ours, &err1), ==, 1);
      g_assert_cmpint (run_argv (theirs_argv, &theirs, &err2), ==, 0);
      g_autoptr (JsonNode) x = parse_json (theirs);
      g_autoptr (JsonNode) y = parse_json (ours);
      assert_json_equal (x, y);
    }
  const char *same_argv[] = { wick_trace, "compare", "--json", c, c, NULL };
  g_autofree char *same = NULL, *err = NULL;
  g_assert_cmpint (run_argv (same_argv, &same, &err), ==, 0);
  /* A snapshot against a trace is a usage error, not a misread. */
  g_autofree char *trace = g_build_filename (dir, "SOURCES.md", NULL);
  const char *mixed_argv[] = { wick_trace, "compare", c, trace, NULL };
  g_autofree char *mixed = NULL, *merr = NULL;
  g_assert_cmpint (run_argv (mixed_argv, &mixed, &merr), ==, 3);
  g_assert_nonnull (strstr (merr, "is a CUDA memory snapshot and"));
}

/* The synthetic snapshot (make-snapshot.py says what it holds), protocols 2 to 5. */
static void
test_snapshot_synthetic (void)
{
  if (!have_python ())
    return;
  g_autofree char *dir = g_dir_make_tmp ("wick-snapshot-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "synthetic.pickle", NULL);
  for (int protocol = 2; protocol <= 5; protocol++)
    {
      g_free (make_snapshot ("synthetic", path, protocol, NULL));
      assert_matches_reference (path);
      g_autoptr (GError) error = NULL;
      g_autoptr (WickMemorySnapshot) s = wick_memory_snapshot_load (path, NULL, NULL, NULL, &error);
      g_assert_no_error (error);
      guint n_segments, n_entries, n_blocks, n_allocations;
      const WickSnapshotSegment *segs = wick_memory_snapshot_get_segments (s, &n_segments);
      const WickSnapshotEntry *entries = wick_memory_snapshot_get_entries (s, &n_entries);
      wick_memory_snapshot_get_blocks (s, &n_blocks);
      g_assert_cmpuint (n_segments, ==, 3);
      g_assert_cmpuint (n_blocks, ==, 6);
      g_assert_cmpuint (n_entries, ==, 10);
      g_assert_cmpuint (wick_memory_snapshot_get_n_devices (s), ==, 2);
      g_assert_cmpuint (wick_memory_snapshot_get_reserved (s), ==, 24u << 20);
      g_assert_cmpuint (wick_memory_snapshot_get_allocated (s), ==, (6u << 20) + 1024);
      /* Start: 4 MiB - 100 (live before) + 1 MiB (freed, never allocated) + 1000
       * (device 1); peak after the 1 MiB alloc at 1020: + 2 MiB + 1 MiB. */
      guint64 peak;
      gint64 peak_us;
      g_assert_true (wick_memory_snapshot_get_peak (s, &peak, &peak_us));
      g_assert_cmpuint (peak, ==, (4u << 20) - 100 + (1u << 20) + 1000 + (3u << 20));
      g_assert_cmpint (peak_us, ==, 1020);
      guint n_points;
      const WickSnapshotPoint *points = wick_memory_snapshot_get_allocated_series (s, &n_points);
      g_assert_cmpuint (n_points, ==, 1 + 6); /* start, 3 allocs, 3 completed frees */
      g_assert_cmpuint (points[0].bytes, ==, (4u << 20) - 100 + (1u << 20) + 1000);
      g_assert_cmpuint (points[n_points - 1].bytes, ==, (4u << 20) - 100 + (2u << 20) + 1000);
      const WickSnapshotPoint *reserved = wick_memory_snapshot_get_reserved_series (s, &n_points);
      g_assert_cmpuint (n_points, ==, 2);
      g_assert_cmpuint (reserved[0].bytes, ==, 22u << 20);
      g_assert_cmpuint (reserved[1].bytes, ==, 24u << 20);
      /* The OOM names the device's free bytes. */
      g_assert_cmpuint (entries[6].action, ==, WICK_TRACE_OOM);
      g_assert_cmpuint (entries[6].addr, ==, 123456);
      g_assert_cmpuint (entries[8].device_index, ==, 1);
      /* Fragmentation: one free piece in each segment here. */
      g_assert_cmpfloat (segs[0].fragmentation, ==, 0.0);
      g_assert_cmpuint (segs[0].inactive_bytes, ==, 14u << 20);
      g_assert_cmpuint (segs[2].stream, ==, G_GUINT64_CONSTANT (9223372036854775813));
      /* Categories from frames. */
      g_assert_cmpint (wick_memory_snapshot_stack_category (s, entries[1].stack), ==,
                       WICK_CATEGORY_OPTIMIZER);
      g_assert_cmpint (wick_memory_snapshot_stack_category (s, entries[2].stack), ==,
                       WICK_CATEGORY_GRADIENT);
      g_assert_cmpint (wick_memory_snapshot_stack_category (s, entries[8].stack), ==,
                       WICK_CATEGORY_ACTIVATION);
      g_assert_cmpint (wick_memory_snapshot_stack_category (s, WICK_SNAPSHOT_NO_STACK), ==,
                       WICK_CATEGORY_OTHER);
      /* Allocations: 3 allocs, 1 freed-before, 2 live-before blocks. */
      const WickSnapshotAllocation *allocs
        = wick_memory_snapshot_get_allocations (s, &n_allocations);
      g_assert_cmpuint (n_allocations, ==, 6);
      g_autoptr (GArray) live = wick_memory_snapshot_live_at (s, 1025, 10);
      /* 4 MiB - 100 and 1000 (before), 2 MiB, 1 MiB (1020-1040), 1 MiB (freed at 1050) */
      g_assert_cmpuint (live->len, ==, 5);
      g_assert_cmpuint (allocs[g_array_index (live, guint32, 0)].size, ==, (4u << 20) - 100);
      g_assert_cmpint (allocs[g_array_index (live, guint32, 0)].alloc_us, ==, G_MININT64);
      g_assert_cmpuint (allocs[g_array_index (live, guint32, 1)].size, ==, 2u << 20);
      g_assert_cmpuint (allocs[g_array_index (live, guint32, 1)].block, !=, G_MAXUINT32);
      /* The keys not modelled are said. */
      gboolean saw_settings = FALSE;
      for (guint i = 0; i < wick_memory_snapshot_get_n_unmodelled (s); i++)
        {
          guint64 count;
          if (strcmp (wick_memory_snapshot_get_unmodelled (s, i, &count), "key allocator_settings")
              == 0)
            saw_settings = count == 1;
        }
      g_assert_true (saw_settings);
    }
  g_unlink (path);
  g_rmdir (dir);
}

/* A trace entry the pickle refers back to after the reader took it is refused
 * (in one APPENDS batch both references are on the stack and both count; the
 * pickler appends 1000 at a time, so the last e below comes after the batch). */
static void
test_snapshot_refers_back (void)
{
  if (!have_python ())
    return;
  g_autofree char *dir = g_dir_make_tmp ("wick-snapshot-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "back.pickle", NULL);
  g_autofree char *code = g_strdup_printf (
    "import pickle\ne={'action':'alloc','addr':1,'size':2,'stream':0,'time_us':3,'frames':[]}\n"
    "l=[e]+[dict(e,addr=i) for i in range(1000)]+[e]\n"
    "pickle.dump({'segments':[],'device_traces':[l]},open('%s','wb'),protocol=4)",
    path);
  const char *argv[] = { python, "-c", code, NULL };
  g_assert_cmpint (run_argv (argv, NULL, NULL), ==, 0);
  g_autoptr (GError) error = NULL;
  g_autoptr (WickMemorySnapshot) s = wick_memory_snapshot_load (path, NULL, NULL, NULL, &error);
  g_assert_null (s);
  g_assert_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "opcode BINGET (0x68): memo key"));
  g_assert_nonnull (strstr (error->message, "already took"));
  g_unlink (path);
  g_rmdir (dir);
}

/* A history of 9 000 entries (memo keys 6 to 9 005), with @tail run after
 * its last APPENDS: the memo keeps pages of 4 096 slots and folds a page
 * whose entries were all taken into a bitmap, which must still tell a taken
 * entry from a key never set, and take a PUT again. */
static GByteArray *
memo_pages_pickle (const guint8 *tail, gsize tail_len)
{
  GByteArray *b = g_byte_array_new ();
#define ADD(lit) g_byte_array_append (b, (const guint8 *)(lit), sizeof (lit) - 1)
  /* 0: the top dict, 1 "segments", 2 [], 3 "device_traces", 4 [..], 5 the history */
  ADD ("\x80\x04}\x94(\x8c\x08segments\x94]\x94\x8c\x0d"
       "device_traces\x94]\x94]\x94");
  for (guint i = 0; i < 9000; i++)
    {
      if (i % 1000 == 0)
        ADD ("(");
      guint8 addr[4] = { (guint8)i, (guint8)(i >> 8), 0, 0 };
      ADD ("}\x94(\x8c\x06"
           "action\x8c\x05"
           "alloc\x8c\x04"
           "addr"
           "J");
      g_byte_array_append (b, addr, 4);
      ADD ("\x8c\x04size"
           "K\x01\x8c\x07time_us"
           "J");
      g_byte_array_append (b, addr, 4);
      ADD ("u");
      if (i % 1000 == 999)
        ADD ("e");
    }
  g_byte_array_append (b, tail, (guint)tail_len);
  ADD ("au.");
#undef ADD
  return b;
}

static void
test_snapshot_memo_pages (void)
{
  struct
  {
    const char *tail;
    gsize len;
    const char *error; /* NULL: loads */
  } cases[] = {
    { "", 0, NULL },
    /* entry 4 994's dict (key 5 000, a folded page): taken */
    { "j\x88\x13\x00\x00"
      "0",
      6, "memo key 5000 is an item the streaming reader already took" },
    /* a key past every MEMOIZE */
    { "j\x10\x27\x00\x00"
      "0",
      6, "memo key 10000 was never set" },
    /* a PUT into the folded page, then GETs of it and of its neighbour */
    { "K\x07r\x88\x13\x00\x00"
      "0j\x88\x13\x00\x00"
      "0",
      14, NULL },
    { "K\x07r\x88\x13\x00\x00"
      "0j\x89\x13\x00\x00"
      "0",
      14, "memo key 5001 is an item the streaming reader already took" },
  };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autoptr (GByteArray) b = memo_pages_pickle ((const guint8 *)cases[c].tail, cases[c].len);
      g_autoptr (GError) error = NULL;
      g_autoptr (WickMemorySnapshot) s
        = wick_memory_snapshot_load_data (b->data, b->len, "pages.pickle", &error);
      if (cases[c].error == NULL)
        {
          g_assert_no_error (error);
          guint n;
          const WickSnapshotEntry *entries = wick_memory_snapshot_get_entries (s, &n);
          g_assert_cmpuint (n, ==, 9000);
          g_assert_cmpuint (entries[8999].addr, ==, 8999);
          g_assert_cmpint (entries[8999].time_us, ==, 8999);
          g_assert_cmpuint (wick_memory_snapshot_get_n_unmodelled (s), ==, 0);
        }
      else
        {
          g_assert_null (s);
          g_assert_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID);
          g_assert_nonnull (strstr (error->message, cases[c].error));
        }
    }
}

/* A pickle that runs `touch MARKER` when Python loads it (checked: Python's
 * pickle.load does create the marker) is refused by wick-trace, naming the
 * byte and the opcode, and the marker is not created. Protocols 1 to 5. */
static void
test_snapshot_hostile (void)
{
  if (!have_python ())
    return;
  g_autofree char *dir = g_dir_make_tmp ("wick-hostile-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "hostile.pickle", NULL);
  g_autofree char *marker = g_build_filename (dir, "MARKER", NULL);
  g_autofree char *proof = g_build_filename (dir, "PROOF", NULL);
  for (int protocol = 1; protocol <= 5; protocol++)
    {
      /* The file is really hostile: Python's own loader runs the command. */
      g_free (make_snapshot ("hostile", path, protocol, proof));
      g_autofree char *code = g_strdup_printf ("import pickle; pickle.load(open('%s','rb'))", path);
      const char *py_argv[] = { python, "-c", code, NULL };
      g_assert_cmpint (run_argv (py_argv, NULL, NULL), ==, 0);
      g_assert_true (g_file_test (proof, G_FILE_TEST_EXISTS));
      g_unlink (proof);

      g_free (make_snapshot ("hostile", path, protocol, marker));
      const char *argv[] = { wick_trace, "memory", "--json", path, NULL };
      g_autofree char *out = NULL, *err = NULL;
      g_assert_cmpint (run_argv (argv, &out, &err), ==, 2);
      g_assert_cmpstr (out, ==, "");
      g_assert_nonnull (strstr (err, "hostile.pickle: byte "));
      g_assert_true (strstr (err, "opcode GLOBAL (0x63)") != NULL
                     || strstr (err, "opcode STACK_GLOBAL (0x93)") != NULL);
      g_assert_nonnull (strstr (err, "refused, nothing was run"));
      g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
    }
  g_unlink (path);
  g_rmdir (dir);
}

/* Compressed inputs read as the plain one. */
static void
test_snapshot_compressed (void)
{
  g_autofree char *dir = snapshot_data_dir ();
  g_autofree char *path = g_build_filename (dir, "cs336-medium-128-inference.pickle.zst", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (WickMemorySnapshot) s = wick_memory_snapshot_load (path, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  guint n;
  wick_memory_snapshot_get_segments (s, &n);
  g_assert_cmpuint (n, ==, 98);
  wick_memory_snapshot_get_entries (s, &n);
  g_assert_cmpuint (n, ==, 3840);
  g_assert_cmpuint (wick_memory_snapshot_get_reserved (s), ==, 1763704832);
}

/* Not a pickle, or a pickle of something else: a clear error. */
static void
test_snapshot_not_a_snapshot (void)
{
  g_autoptr (GError) error = NULL;
  g_assert_null (wick_memory_snapshot_load_data (P ("\x80\x04K\x01."), "one.pickle", &error));
  g_assert_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "one.pickle: byte 5: the pickle holds a int"));
  g_clear_error (&error);
  g_assert_null (wick_memory_snapshot_load_data (P ("\x80\x04}."), "empty.pickle", &error));
  g_assert_nonnull (strstr (error->message, "no \"segments\" list"));
  g_assert_true (wick_memory_snapshot_sniff ("\x80\x04", 2));
  g_assert_false (wick_memory_snapshot_sniff ("{\"", 2));
}

/* The whole of a (compressed) file, decoded. */
static GByteArray *
read_decoded (const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (WickInput) input = wick_input_open (path, &error);
  g_assert_no_error (error);
  GByteArray *b = g_byte_array_new ();
  guint8 chunk[65536];
  gssize got;
  while ((got = wick_input_read (input, chunk, sizeof chunk, &error)) > 0)
    g_byte_array_append (b, chunk, (guint)got);
  g_assert_no_error (error);
  return b;
}

static void
assert_records_same (const guint8 *data, gsize len, const char *what)
{
  g_autofree char *diff = records_diff (data, len);
  if (diff != NULL)
    g_error ("%s: the record path differs from the ordinary read:\n%s", what, diff);
}

/* Batches of history entries read as records (never built as dicts) give the
 * callbacks, results and errors of the ordinary read, byte for byte: on the
 * public snapshots, on Python-made histories of protocols 2, 4 and 5 (memo
 * PUTs inside entries, shared frames, FRAME opcodes, an entry refused by the
 * callback, an entry appended twice, strs PUT in one batch and read in the
 * next, batches the record path gives up on),
 * cut at many lengths and with bytes changed. */
static void
test_pickle_records (void)
{
  g_autofree char *data_dir = snapshot_data_dir ();
  const char *public[] = { "cs336-medium-128-training.pickle.gz",
                           "cs336-medium-128-inference.pickle.zst", "h200-oom.pickle.gz" };
  for (guint i = 0; i < G_N_ELEMENTS (public); i++)
    {
      g_autofree char *path = g_build_filename (data_dir, public[i], NULL);
      g_autoptr (GByteArray) b = read_decoded (path);
      assert_records_same (b->data, b->len, public[i]);
    }
  if (!have_python ())
    return;
  g_autofree char *dir = g_dir_make_tmp ("wick-records-XXXXXX", NULL);
  const char *variants[] = { "clean", "lists", "bad", "twice" };
  const int protocols[] = { 2, 4, 5 };
  g_autoptr (GRand) rand = g_rand_new_with_seed (24);
  for (guint v = 0; v < G_N_ELEMENTS (variants); v++)
    for (guint p = 0; p < G_N_ELEMENTS (protocols); p++)
      {
        g_autofree char *path = g_strdup_printf ("%s/%s-%d.pickle", dir, variants[v], protocols[p]);
        g_autofree char *code = g_strdup_printf (
          "import pickle\n"
          "v, out, proto = '%s', '%s', %d\n"
          "fa = [{'name': 'f', 'filename': 'x.py', 'line': 1}]\n"
          "fb = fa + [{'name': 'g', 'filename': 'y.py', 'line': 2}]\n"
          "es, ctx = [], {}\n"
          "for i in range(2500):\n"
          "    e = {'action': 'alloc' if i %% 3 else 'free_completed', 'addr': (1 << 40) + 4096 * i,\n"
          "         'size': i * 7, 'stream': 0, 'time_us': 1783874495946458 + i,\n"
          "         'frames': fa if i %% 2 else fb, 'user_metadata': ''}\n"
          "    ctx[i] = e['compile_context'] = ctx[i - 1000] if i >= 2000 else 'c%%d' %% i\n"
          "    if v == 'lists' and i %% 700 == 5:\n"
          "        e['frames'] = []\n"
          "    if v == 'bad' and i == 1700:\n"
          "        e['addr'] = 'x'\n"
          "    es.append(e)\n"
          "if v == 'twice':\n"
          "    es.insert(1500, es[1400])\n"
          "    es.insert(1600, es[10])\n"
          "    es.insert(2300, es[1200])\n"
          "    es.insert(2100, es[2099])\n"
          "pickle.dump({'segments': [], 'device_traces': [es], 'tag': [1, 2]}, open(out, 'wb'),\n"
          "            protocol=proto)\n",
          variants[v], path, protocols[p]);
        const char *argv[] = { python, "-c", code, NULL };
        g_assert_cmpint (run_argv (argv, NULL, NULL), ==, 0);
        g_autoptr (GBytes) bytes = read_file (path);
        gsize len;
        const guint8 *data = g_bytes_get_data (bytes, &len);
        assert_records_same (data, len, path);
        if (v != 0 || p == 0)
          continue;
        /* the clean protocol 2 history: cut, and changed */
        for (gsize cut = 0; cut < len; cut += 1 + g_rand_int_range (rand, 0, 1500))
          assert_records_same (data, cut, "a cut history");
        g_autofree guint8 *copy = g_memdup2 (data, len);
        static const guint8 ops[] = { 0x95, 0x94, 'q', 'r', 'h', 'j', 'e', 'u', '(', '}', ']',
                                      0x8c, 0x8a, 'J', 'K', 'N', 'c', 'R', '0', '1', '2' };
        for (guint m = 0; m < 300; m++)
          {
            gsize at = (gsize)g_rand_int_range (rand, 0, (gint32)len);
            guint8 was = copy[at];
            copy[at] = m % 2 ? ops[g_rand_int_range (rand, 0, G_N_ELEMENTS (ops))]
                             : (guint8)g_rand_int_range (rand, 0, 256);
            assert_records_same (copy, len, "a changed history");
            copy[at] = was;
          }
      }
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_unlink (path);
    }
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  wick_trace = argc > 1 ? argv[1] : g_getenv ("WICK_TRACE");
  g_test_add_func ("/snapshot/pickle/data-opcodes", test_pickle_data_opcodes);
  g_test_add_func ("/snapshot/categories", test_snapshot_categories);
  g_test_add_func ("/snapshot/pickle/refused-opcodes", test_pickle_refused_opcodes);
  g_test_add_func ("/snapshot/pickle/bounds", test_pickle_bounds);
  g_test_add_func ("/snapshot/pickle/truncated", test_pickle_truncated);
  g_test_add_func ("/snapshot/pickle/records", test_pickle_records);
  g_test_add_func ("/snapshot/not-a-snapshot", test_snapshot_not_a_snapshot);
  g_test_add_func ("/snapshot/compressed", test_snapshot_compressed);
  g_test_add_func ("/snapshot/refers-back", test_snapshot_refers_back);
  g_test_add_func ("/snapshot/before-history", test_snapshot_before_history);
  g_test_add_func ("/snapshot/memo-pages", test_snapshot_memo_pages);
  if (wick_trace != NULL)
    {
      g_test_add_func ("/snapshot/public-reference", test_snapshot_public_reference);
      g_test_add_func ("/snapshot/synthetic", test_snapshot_synthetic);
      g_test_add_func ("/snapshot/range", test_snapshot_range);
      g_test_add_func ("/snapshot/compare", test_snapshot_compare);
      g_test_add_func ("/snapshot/hostile", test_snapshot_hostile);
    }
  return g_test_run ();
}
