/* test-model-cli.c — wick-trace check/summary/convert, run as a user runs
 * them: exit codes, the JSON shape of check --json, the extension hint and a
 * strict conversion that candle-graph accepts. Argument 1 (or $WICK_TRACE) is
 * the wick-trace binary. */
#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>

#include "wick-document.h"

static const char *wick_trace;

static char *
data_path (const char *name)
{
  const char *dir = g_getenv ("WICK_TEST_DATA");

  return g_build_filename (dir ? dir : "tests/data", "model", name, NULL);
}

static gsize file_size_limit; /* RLIMIT_FSIZE for the child, 0 for none */
static char *last_stderr;

static void
child_setup (gpointer data)
{
  (void)data;
  if (file_size_limit > 0)
    {
      struct rlimit limit = { file_size_limit, file_size_limit };
      signal (SIGXFSZ, SIG_IGN); /* writes past the limit fail with EFBIG, as on a full disk */
      setrlimit (RLIMIT_FSIZE, &limit);
    }
}

static int
run (char **out, const char *first, ...)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *err = NULL;
  g_autofree char *discard = NULL;
  va_list args;
  int status = 0;

  g_ptr_array_add (argv, (gpointer)wick_trace);
  va_start (args, first);
  for (const char *a = first; a != NULL; a = va_arg (args, const char *))
    g_ptr_array_add (argv, (gpointer)a);
  va_end (args);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, child_setup, NULL,
                               out ? out : &discard, &err, &status, &error));
  g_assert_no_error (error);
  g_free (last_stderr);
  last_stderr = g_strdup (err);
  g_assert_true (WIFEXITED (status));
  return WEXITSTATUS (status);
}

static JsonObject *
parse_object (const char *line, JsonParser *parser)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (json_parser_load_from_data (parser, line, -1, &error));
  g_assert_no_error (error);
  return json_node_get_object (json_parser_get_root (parser));
}

static void
test_cli_check_valid_json (void)
{
  g_autofree char *path = data_path ("train-contract.jsonl");
  g_autofree char *out = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *o;

  g_assert_cmpint (run (&out, "check", "--json", path, NULL), ==, 0);
  o = parse_object (out, parser);
  g_assert_cmpstr (json_object_get_string_member (o, "file"), ==, path);
  g_assert_cmpstr (json_object_get_string_member (o, "parse"), ==, "ok");
  g_assert_false (json_object_has_member (o, "error"));
  g_assert_true (json_object_get_boolean_member (o, "structurally_valid"));
  g_assert_true (json_object_get_boolean_member (o, "capture_complete"));
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (o, "health")), ==, 0);
  g_assert_cmpstr (json_object_get_string_member (o, "gradient_coverage"), ==, "complete");
  g_assert_nonnull (strchr (out, '\n'));
  g_assert_cmpuint (strlen (strchr (out, '\n')), ==, 1);
}

static void
test_cli_check_health_errors (void)
{
  g_autofree char *dir = g_dir_make_tmp ("wick-cli-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "two-roots.jsonl", NULL);
  g_autofree char *valid = data_path ("valid-infer.jsonl");
  g_autofree char *text = NULL;
  g_autofree char *out = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GString) modified = NULL;
  JsonObject *o, *issue;

  g_assert_true (g_file_get_contents (valid, &text, NULL, NULL));
  modified = g_string_new (text);
  g_string_replace (modified, "\"parent_id\":\"s1\",", "", 1);
  g_assert_true (g_file_set_contents (path, modified->str, -1, NULL));

  g_assert_cmpint (run (&out, "check", "--json", path, NULL), ==, 1);
  o = parse_object (out, parser);
  g_assert_cmpstr (json_object_get_string_member (o, "parse"), ==, "ok");
  g_assert_false (json_object_get_boolean_member (o, "structurally_valid"));
  issue = json_array_get_object_element (json_object_get_array_member (o, "health"), 0);
  g_assert_cmpstr (json_object_get_string_member (issue, "code"), ==, "root_count");
  g_assert_cmpstr (json_object_get_string_member (issue, "severity"), ==, "error");
  g_assert_cmpstr (json_object_get_string_member (issue, "message"), ==,
                   "expected exactly one root span, found 2");
  issue = json_array_get_object_element (json_object_get_array_member (o, "health"), 1);
  g_assert_cmpstr (json_object_get_string_member (issue, "code"), ==,
                   "call_edge_hierarchy_mismatch");
  g_assert_cmpstr (json_object_get_string_member (issue, "record"), ==, "s2");

  /* The text summary counts in words, singular for one. */
  g_autofree char *text_out = NULL, *valid_out = NULL, *tracks_out = NULL;
  g_assert_cmpint (run (&text_out, "check", path, NULL), ==, 1);
  g_assert_nonnull (strstr (text_out, "NOT structurally valid, capture complete, gradient coverage "
                                      "unavailable (2 errors, 0 warnings)\n"));
  g_assert_cmpint (run (&tracks_out, "tracks", valid, NULL), ==, 0);
  g_assert_nonnull (strstr (tracks_out, ": candle-graph, 1 process, 1 thread, 5 tracks, 0 flows\n"));
  g_unlink (path);
  g_rmdir (dir);
}

static void
test_cli_check_parse_error (void)
{
  g_autofree char *path = data_path ("truncated.jsonl");
  g_autofree char *out = NULL;
  g_autofree char *expected = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *o;

  g_assert_cmpint (run (&out, "check", "--json", path, NULL), ==, 2);
  o = parse_object (out, parser);
  expected = g_strdup_printf ("parse trace JSONL line 6 from %s: EOF while parsing a string", path);
  g_assert_cmpstr (json_object_get_string_member (o, "parse"), ==, "error");
  g_assert_cmpstr (json_object_get_string_member (o, "error"), ==, expected);
  g_assert_cmpstr (json_object_get_string_member (o, "cause"), ==, "EOF while parsing a string");
  g_assert_cmpint (json_object_get_int_member (o, "line"), ==, 6);
  g_assert_false (json_object_get_boolean_member (o, "structurally_valid"));
  g_assert_false (json_object_get_boolean_member (o, "capture_complete"));
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (o, "health")), ==, 0);
  g_assert_cmpstr (json_object_get_string_member (o, "gradient_coverage"), ==, "unavailable");
}

static void
test_cli_check_worst_status (void)
{
  g_autofree char *valid = data_path ("valid-infer.jsonl");
  g_autofree char *broken = data_path ("truncated.jsonl");
  g_autofree char *out = NULL;
  g_auto (GStrv) lines = NULL;

  g_assert_cmpint (run (&out, "check", "--json", valid, broken, valid, NULL), ==, 2);
  lines = g_strsplit (out, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 4);
  g_assert_cmpstr (lines[3], ==, "");
  g_assert_cmpint (run (NULL, "check", "--json", valid, "/nonexistent/trace.jsonl", NULL), ==, 3);
}

static void
test_cli_usage (void)
{
  g_autofree char *valid = data_path ("valid-infer.jsonl");

  g_assert_cmpint (run (NULL, "check", NULL), ==, 3);
  g_assert_cmpint (run (NULL, "check", "--bogus", valid, NULL), ==, 3);
  g_assert_cmpint (run (NULL, "summary", NULL), ==, 3);
  g_assert_cmpint (run (NULL, "convert", valid, NULL), ==, 3);
}

static void
test_cli_extension_hint (void)
{
  g_autofree char *path = data_path ("with-extensions.jsonl");
  g_autofree char *out = NULL;

  g_assert_cmpint (run (&out, "check", path, NULL), ==, 2);
  g_assert_nonnull (strstr (out, "unknown variant `wick_mark`"));
  g_assert_nonnull (strstr (out, "hint: line 4 is a Wick extension record"));
  g_assert_nonnull (strstr (out, "wick-trace convert --strict"));
  g_assert_nonnull (strstr (out, "moves them into wick_ keys"));
}

static void
test_cli_convert_strict (void)
{
  g_autofree char *path = data_path ("with-extensions.jsonl");
  g_autofree char *valid = data_path ("valid-infer.jsonl");
  g_autofree char *dir = g_dir_make_tmp ("wick-cli-XXXXXX", NULL);
  g_autofree char *out_path = g_build_filename (dir, "strict.jsonl", NULL);
  g_autofree char *written = NULL, *expected = NULL, *out = NULL;

  g_assert_cmpint (run (NULL, "convert", "--strict", path, "--output", out_path, NULL), ==, 0);
  g_assert_true (g_file_get_contents (out_path, &written, NULL, NULL));
  g_assert_true (g_file_get_contents (valid, &expected, NULL, NULL));
  /* the fixture is in candle-graph's writer layout: the rewrite is identical */
  g_assert_cmpstr (written, ==, expected);
  g_assert_cmpint (run (&out, "check", "--json", out_path, NULL), ==, 0);
  g_unlink (out_path);
  g_rmdir (dir);
}


/* The Wick records of a document in extension mode, as "KIND TIME JSON"
 * lines. */
static char *
wick_facts (const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (WickDocument) doc = wick_document_new_with_extensions (TRUE);
  g_assert_true (wick_document_load_file (doc, path, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  GString *facts = g_string_new (NULL);
  guint n;
  const WickExtensionRecord *records = wick_document_get_extensions (doc, &n);
  for (guint i = 0; i < n; i++)
    g_string_append_printf (facts, "%s %" G_GUINT64_FORMAT " %s\n",
                            wick_document_str (doc, records[i].kind), records[i].timestamp_ns,
                            wick_document_str (doc, records[i].json));
  return g_string_free (facts, FALSE);
}

/* Convert without an option rewrites a file of the old layout
 * (wick_* lines, which candle-graph rejects) into the key layout: candle-graph
 * takes it, Wick reads the same records from it, a second conversion changes
 * nothing, and --strict of it drops every wick_ key. */
static void
test_cli_convert_keys (void)
{
  g_autofree char *path = data_path ("with-extensions.jsonl");
  g_autofree char *dir = g_dir_make_tmp ("wick-cli-XXXXXX", NULL);
  g_autofree char *keys = g_build_filename (dir, "keys.jsonl", NULL);
  g_autofree char *again = g_build_filename (dir, "again.jsonl", NULL);
  g_autofree char *strict = g_build_filename (dir, "strict.jsonl", NULL);
  g_autofree char *written = NULL, *rewritten = NULL, *stripped = NULL, *out = NULL;

  g_assert_cmpint (run (&out, "check", path, NULL), ==, 2);
  g_assert_cmpint (run (NULL, "convert", path, "--output", keys, NULL), ==, 0);
  g_assert_nonnull (strstr (last_stderr, "2 Wick extension lines moved into wick_records keys"));
  g_assert_true (g_file_get_contents (keys, &written, NULL, NULL));
  g_assert_null (strstr (written, "{\"kind\":\"wick_mark\",\"timestamp_ns\":11,\"label\":\"step 1\"}\n"));
  g_assert_nonnull (strstr (written, "\"measured\":true,\"step\":\"forward\"}\n{\"kind\":\"op\""));
  g_assert_nonnull (strstr (written, ",\"wick_records\":[{\"kind\":\"wick_mark\",\"timestamp_ns\":11,"
                                     "\"label\":\"step 1\"}]}\n"));
  g_auto (GStrv) lines = g_strsplit (written, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    g_assert_false (g_str_has_prefix (lines[i], "{\"kind\":\"wick_"));
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (run (&out, "check", keys, NULL), ==, 0);
  g_assert_nonnull (strstr (out, "structurally valid"));
  g_assert_nonnull (strstr (out, "(0 errors"));
  g_autofree char *before = wick_facts (path);
  g_autofree char *after = wick_facts (keys);
  g_assert_cmpstr (after, ==, before);
  g_assert_nonnull (strstr (after, "wick_drops 31 "));

  g_assert_cmpint (run (NULL, "convert", keys, "--output", again, NULL), ==, 0);
  g_assert_true (g_file_get_contents (again, &rewritten, NULL, NULL));
  g_assert_cmpstr (rewritten, ==, written);

  g_assert_cmpint (run (NULL, "convert", "--strict", keys, "--output", strict, NULL), ==, 0);
  g_assert_true (g_file_get_contents (strict, &stripped, NULL, NULL));
  g_assert_null (strstr (stripped, "wick_"));
  g_unlink (keys);
  g_unlink (again);
  g_unlink (strict);
  g_rmdir (dir);
}

static void
test_cli_convert_chrome (void)
{
  g_autofree char *path = data_path ("train-contract.jsonl");
  g_autofree char *dir = g_dir_make_tmp ("wick-cli-XXXXXX", NULL);
  g_autofree char *out_path = g_build_filename (dir, "trace.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  JsonArray *events;
  guint spans = 0;

  g_assert_cmpint (run (NULL, "convert", "--chrome", path, "--output", out_path, NULL), ==, 0);
  g_assert_true (json_parser_load_from_file (parser, out_path, &error));
  g_assert_no_error (error);
  events = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)),
                                         "traceEvents");
  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonObject *e = json_array_get_object_element (events, i);
      /* the spans as complete events on their thread, the device interval apart */
      if (g_strcmp0 (json_object_get_string_member_with_default (e, "ph", ""), "X") == 0
          && g_strcmp0 (json_object_get_string_member_with_default (e, "cat", ""), "kernel") != 0)
        spans++;
      if (g_strcmp0 (json_object_get_string_member_with_default (e, "name", ""), "thread_name")
          == 0)
        g_assert_cmpstr (
          json_object_get_string_member (json_object_get_object_member (e, "args"), "name"), !=,
          "");
    }
  g_assert_cmpuint (spans, ==, 5);
  g_unlink (out_path);
  g_rmdir (dir);
}

/* A cut-off trace converts what was read, without a
 * GLib-CRITICAL; --strict keeps the records before a parse error and names the
 * file; a full disk gives the reason and leaves no partial file. */
static char *
cut_off_copy (const char *dir, gsize bytes)
{
  g_autofree char *src = data_path ("train-contract.jsonl");
  g_autofree char *text = NULL;
  char *path = g_build_filename (dir, "cut.jsonl", NULL);
  gsize len;

  g_assert_true (g_file_get_contents (src, &text, &len, NULL));
  g_assert_cmpuint (len, >, bytes);
  g_assert_true (g_file_set_contents (path, text, (gssize)bytes, NULL));
  return path;
}

static void
test_cli_convert_cut_off (void)
{
  g_autofree char *dir = g_dir_make_tmp ("wick-cli-XXXXXX", NULL);
  g_autofree char *cut = cut_off_copy (dir, 3000);
  g_autofree char *chrome = g_build_filename (dir, "cut.json", NULL);
  g_autofree char *strict = g_build_filename (dir, "strict.jsonl", NULL);
  g_autofree char *text = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();

  g_assert_cmpint (run (NULL, "convert", "--chrome", cut, "--output", chrome, NULL), ==, 2);
  g_assert_null (strstr (last_stderr, "CRITICAL"));
  g_assert_nonnull (strstr (last_stderr, "converting what was read before it"));
  g_assert_true (json_parser_load_from_file (parser, chrome, NULL));

  g_assert_cmpint (run (NULL, "convert", "--strict", cut, "--output", strict, NULL), ==, 2);
  g_assert_null (strstr (last_stderr, "<stream>"));
  g_assert_nonnull (strstr (last_stderr, "cut.jsonl"));
  g_assert_true (g_file_get_contents (strict, &text, NULL, NULL));
  g_assert_cmpuint (strlen (text), >, 1000);
  g_unlink (cut);
  g_unlink (chrome);
  g_unlink (strict);
  g_rmdir (dir);
}

static void
test_cli_convert_disk_full (void)
{
  g_autofree char *path = data_path ("train-contract.jsonl");
  g_autofree char *dir = g_dir_make_tmp ("wick-cli-XXXXXX", NULL);
  g_autofree char *out_path = g_build_filename (dir, "out.jsonl", NULL);
  g_autofree char *kept = NULL;
  /* the key layout (no option) as well: "-o" then takes the place */
  const char *modes[] = { "--strict", "--chrome", "-o" };

  for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
    {
      g_autoptr (GDir) listing = NULL;
      g_assert_true (g_file_set_contents (out_path, "previous\n", -1, NULL));
      file_size_limit = 512;
      if (strcmp (modes[m], "-o") == 0)
        g_assert_cmpint (run (NULL, "convert", path, "-o", out_path, NULL), ==, 3);
      else
        g_assert_cmpint (run (NULL, "convert", modes[m], path, "--output", out_path, NULL), ==, 3);
      file_size_limit = 0;
      g_assert_nonnull (strstr (last_stderr, "cannot write"));
      g_assert_nonnull (strstr (last_stderr, g_strerror (EFBIG)));
      /* the old file is untouched and no temporary file is left */
      g_assert_true (g_file_get_contents (out_path, &kept, NULL, NULL));
      g_assert_cmpstr (kept, ==, "previous\n");
      g_clear_pointer (&kept, g_free);
      listing = g_dir_open (dir, 0, NULL);
      g_assert_cmpstr (g_dir_read_name (listing), ==, "out.jsonl");
      g_assert_null (g_dir_read_name (listing));
    }
  g_unlink (out_path);
  g_rmdir (dir);
}

static void
test_cli_chrome_check_and_summary (void)
{
  g_autofree char *dir = g_dir_make_tmp ("wick-cli-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "rank3.json", NULL);
  g_autofree char *out = NULL, *summary = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *o;

  g_assert_true (g_file_set_contents (
    path,
    "{\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":3,\"world_size\":8},"
    "\"traceEvents\":[{\"ph\":\"X\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,"
    "\"ts\":1,\"dur\":10},{\"ph\":\"X\",\"name\":\"ProfilerStep#2\",\"pid\":1,\"tid\":1,"
    "\"ts\":11,\"dur\":30},{\"ph\":\"Q\",\"pid\":1,\"ts\":1}]}",
    -1, NULL));
  g_assert_cmpint (run (&out, "check", "--json", path, NULL), ==, 0);
  o = parse_object (out, parser);
  g_assert_cmpstr (json_object_get_string_member (o, "format"), ==, "chrome");
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (o, "imported"), "X"),
                   ==, 2);
  g_assert_cmpint (
    json_object_get_int_member (json_object_get_object_member (o, "skipped"), "ph=Q"), ==, 1);
  g_assert_cmpint (run (&summary, "summary", path, NULL), ==, 0);
  g_assert_nonnull (strstr (summary, "distributed: rank 3 of world size 8, backend nccl"));
  g_assert_nonnull (strstr (summary, "steps:       2 ProfilerStep#N, mean 20.000 µs"));
  g_unlink (path);
  g_rmdir (dir);
}

/* per track kind, the events of `tracks --json`, plus flows and host threads */
static char *
track_totals (const char *file)
{
  g_autofree char *out = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *o;
  JsonArray *tracks;
  guint64 sums[6] = { 0 };
  static const char *const kinds[] = { "slices", "async", "counter", "instants", "device" };

  g_assert_cmpint (run (&out, "tracks", "--json", file, NULL), ==, 0);
  o = parse_object (out, parser);
  tracks = json_object_get_array_member (o, "tracks");
  for (guint i = 0; i < json_array_get_length (tracks); i++)
    {
      JsonObject *t = json_array_get_object_element (tracks, i);
      for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
        if (strcmp (json_object_get_string_member (t, "kind"), kinds[k]) == 0)
          sums[k] += (guint64)json_object_get_int_member (t, "events");
      if (strcmp (json_object_get_string_member (t, "kind"), "slices") == 0
          && !json_object_get_null_member (t, "thread"))
        sums[5]++;
    }
  return g_strdup_printf (
    "slices %" G_GUINT64_FORMAT " async %" G_GUINT64_FORMAT " counter %" G_GUINT64_FORMAT
    " instants %" G_GUINT64_FORMAT " device %" G_GUINT64_FORMAT " threads %" G_GUINT64_FORMAT
    " flows %" G_GINT64_FORMAT,
    sums[0], sums[1], sums[2], sums[3], sums[4], sums[5], json_object_get_int_member (o, "flows"));
}

/* A Chrome trace exported again keeps its tracks' counts. */
static void
test_cli_chrome_round_trip (void)
{
  static const char *const files[]
    = { "hta-simple-add.json.gz", "catapult-simple_trace.json", "catapult-nestable_async.json",
        "perfetto-flow-events-v2.json", "hta-event-sync-multi-stream.json.gz" };
  g_autofree char *dir = g_dir_make_tmp ("wick-cli-XXXXXX", NULL);
  g_autofree char *out_path = g_build_filename (dir, "again.json", NULL);

  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *path
        = g_build_filename (g_getenv ("WICK_TEST_DATA") ?: "tests/data", "chrome", files[i], NULL);
      g_autofree char *before = track_totals (path);
      g_autofree char *after = NULL;
      g_assert_cmpint (run (NULL, "convert", "--chrome", path, "--output", out_path, NULL), ==, 0);
      after = track_totals (out_path);
      g_assert_cmpstr (after, ==, before);
    }
  g_unlink (out_path);
  g_rmdir (dir);
}

static void
test_cli_summary (void)
{
  g_autofree char *path = data_path ("train-contract.jsonl");
  g_autofree char *out = NULL;

  g_assert_cmpint (run (&out, "summary", path, NULL), ==, 0);
  g_assert_nonnull (strstr (out, "run:         run-7"));
  g_assert_nonnull (strstr (out, "measured region: measured (span s2) 95 ns"));
  g_assert_nonnull (strstr (out, "  train_step"));
  g_assert_nonnull (strstr (out, "    gradient    4096 at 55 ns"));
}

/* tracks --json: the shape of item 6, on a candle-graph trace and on a
 * cut-off copy of it (exit 2, what was read still listed). */
static void
test_cli_tracks_json (void)
{
  g_autofree char *path = data_path ("train-contract.jsonl");
  g_autofree char *out = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();

  g_assert_cmpint (run (&out, "tracks", "--json", path, NULL), ==, 0);
  JsonObject *o = parse_object (out, parser);
  g_assert_cmpstr (json_object_get_string_member (o, "file"), ==, path);
  g_assert_cmpstr (json_object_get_string_member (o, "format"), ==, "candle-graph");
  JsonArray *processes = json_object_get_array_member (o, "processes");
  g_assert_cmpuint (json_array_get_length (processes), ==, 1);
  g_assert_true (json_object_has_member (json_array_get_object_element (processes, 0), "pid"));
  JsonArray *tracks = json_object_get_array_member (o, "tracks");
  g_assert_cmpuint (json_array_get_length (tracks), >=, 1);
  JsonObject *first = json_array_get_object_element (tracks, 0);
  g_assert_cmpstr (json_object_get_string_member (first, "kind"), ==, "slices");
  g_assert_cmpint (json_object_get_int_member (first, "process"), ==, 0);
  g_assert_cmpint (json_object_get_int_member (first, "thread"), ==, 0);
  g_assert_cmpstr (json_object_get_string_member (first, "name"), ==, "host");
  g_assert_cmpint (json_object_get_int_member (first, "events"), >, 0);
  g_assert_cmpint (json_object_get_int_member (first, "max_depth"), >, 0);
  g_assert_true (json_object_has_member (o, "flows"));
  g_assert_nonnull (json_object_get_object_member (o, "skipped"));
  gint64 events = json_object_get_int_member (first, "events");

  /* cut off after its first 60% of lines */
  g_autofree char *text = NULL;
  gsize len;
  g_assert_true (g_file_get_contents (path, &text, &len, NULL));
  g_autofree char *dir = g_dir_make_tmp ("wick-cli-XXXXXX", NULL);
  g_autofree char *cut = g_build_filename (dir, "cut.jsonl", NULL);
  gsize keep = len * 3 / 5;
  while (keep > 0 && text[keep - 1] != '\n')
    keep--;
  g_assert_true (g_file_set_contents (cut, text, (gssize)keep, NULL));
  g_autofree char *out2 = NULL;
  g_autoptr (JsonParser) parser2 = json_parser_new ();
  g_assert_cmpint (run (&out2, "tracks", "--json", cut, NULL), ==, 2);
  o = parse_object (out2, parser2);
  first = json_array_get_object_element (json_object_get_array_member (o, "tracks"), 0);
  g_assert_cmpint (json_object_get_int_member (first, "events"), >, 0);
  g_assert_cmpint (json_object_get_int_member (first, "events"), <=, events);
  g_assert_cmpint (json_object_get_int_member (first, "max_depth"), >, 0);

  g_assert_cmpint (run (NULL, "tracks", NULL), ==, 3);
  g_assert_cmpint (run (NULL, "tracks", "/nonexistent/trace.jsonl", NULL), ==, 3);
  g_unlink (cut);
  g_rmdir (dir);
}

/* Every subcommand parses its arguments with GOptionContext: --help (and -h)
 * lists its options on stdout and exits 0; an unknown option, a missing value
 * or a bad operand is a usage error (exit 3, nothing on stdout) whose message
 * names the option and the subcommand. Subcommands this build lacks (render
 * needs the app's views, sessions/attach/control the live client) are not
 * in the top-level help and are passed over. */
static void
test_cli_options (void)
{
  static const struct
  {
    const char *command;
    const char *options[8];
  } commands[] = {
    { "check", { "--json" } },
    { "summary", { NULL } },
    { "tracks", { "--json" } },
    { "convert", { "--strict", "--chrome", "--output" } },
    { "compare",
      { "--json", "--allow-mismatch", "--cohort", "--cohort-a", "--cohort-b", "--min-change",
        "--resamples", "--seed" } },
    { "render", { "--view", "--output", "--size", "--range", "--dark" } },
    { "sessions", { "--json" } },
    { "attach", { "--output", "--duration", "--strict", "--follow" } },
    { "control", { "--tier", "--gate-cos", "--min-speedup", "--warmup" } },
    { "serve", { "--stdio" } },
  };
  g_autofree char *top = NULL;
  g_assert_cmpint (run (&top, "--help", NULL), ==, 0);
  g_assert_true (g_str_has_prefix (top, "Usage:\n  wick-trace [OPTION…] COMMAND"));
  g_assert_nonnull (strstr (top, "--max-line-bytes=N"));
  guint tested = 0;
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      g_autofree char *listed = g_strdup_printf ("\n  %s ", commands[i].command);
      if (strstr (top, listed) == NULL)
        {
          g_test_message ("%s is not built here", commands[i].command);
          continue;
        }
      for (int short_form = 0; short_form < 2; short_form++)
        {
          g_autofree char *out = NULL;
          g_assert_cmpint (run (&out, commands[i].command, short_form ? "-h" : "--help", NULL), ==,
                           0);
          g_autofree char *usage
            = g_strdup_printf ("Usage:\n  wick-trace %s [OPTION…]", commands[i].command);
          g_assert_true (g_str_has_prefix (out, usage));
          g_assert_nonnull (strstr (out, "-h, --help"));
          for (int o = 0; o < 8 && commands[i].options[o] != NULL; o++)
            {
              g_test_message ("%s %s", commands[i].command, commands[i].options[o]);
              g_assert_nonnull (strstr (out, commands[i].options[o]));
            }
          g_assert_cmpstr (last_stderr, ==, "");
        }
      /* An option no subcommand has is named in the error. */
      g_autofree char *out = NULL;
      g_assert_cmpint (run (&out, commands[i].command, "--no-such-option", "x", NULL), ==, 3);
      g_assert_cmpstr (out, ==, "");
      g_autofree char *expected
        = g_strdup_printf ("wick-trace %s: Unknown option --no-such-option", commands[i].command);
      g_assert_true (g_str_has_prefix (last_stderr, expected));
      tested++;
    }
  g_assert_cmpuint (tested, >=, 5);

  static const struct
  {
    const char *argv[8];
    const char *message;
  } bad[] = {
    { { "--max-line-bytes" }, "wick-trace: Missing argument for --max-line-bytes" },
    { { "--bogus", "check" }, "wick-trace: Unknown option --bogus" },
    { { "frobnicate" }, "wick-trace: unknown command “frobnicate”" },
    { { "check" }, "wick-trace check: at least one FILE is required" },
    { { "summary", "a.jsonl", "b.jsonl" }, "wick-trace summary: only one FILE may be given" },
    { { "tracks", "--json" }, "wick-trace tracks: a FILE is required" },
    { { "convert", "in.jsonl", "--output" }, "wick-trace convert: Missing argument for --output" },
    { { "convert", "--strict", "--chrome", "in.jsonl", "-o", "out" },
      "wick-trace convert: --strict and --chrome cannot be combined" },
    { { "convert", "--strict", "in.jsonl" }, "wick-trace convert: --output is required" },
    { { "compare", "--seed", "x", "a", "b" },
      "wick-trace compare: --seed needs a number, not “x”" },
    { { "compare", "a" }, "wick-trace compare: two traces A B" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      const char *const *a = bad[i].argv;
      g_autofree char *out = NULL;
      g_test_message ("%s", bad[i].message);
      g_assert_cmpint (run (&out, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], NULL), ==, 3);
      g_assert_cmpstr (out, ==, "");
      g_assert_true (g_str_has_prefix (last_stderr, bad[i].message));
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  wick_trace = argc > 1 ? argv[1] : g_getenv ("WICK_TRACE");
  if (wick_trace == NULL)
    {
      g_printerr ("usage: test-model-cli WICK_TRACE_BINARY\n");
      return 77;
    }
  g_test_add_func ("/model/cli/check-valid-json", test_cli_check_valid_json);
  g_test_add_func ("/model/cli/check-health-errors", test_cli_check_health_errors);
  g_test_add_func ("/model/cli/check-parse-error", test_cli_check_parse_error);
  g_test_add_func ("/model/cli/check-worst-status", test_cli_check_worst_status);
  g_test_add_func ("/model/cli/usage", test_cli_usage);
  g_test_add_func ("/model/cli/options", test_cli_options);
  g_test_add_func ("/model/cli/extension-hint", test_cli_extension_hint);
  g_test_add_func ("/model/cli/convert-strict", test_cli_convert_strict);
  g_test_add_func ("/model/cli/convert-chrome", test_cli_convert_chrome);
  g_test_add_func ("/model/cli/convert-keys", test_cli_convert_keys);
  g_test_add_func ("/model/cli/convert-cut-off", test_cli_convert_cut_off);
  g_test_add_func ("/model/cli/chrome-check-summary", test_cli_chrome_check_and_summary);
  g_test_add_func ("/model/cli/chrome-round-trip", test_cli_chrome_round_trip);
  g_test_add_func ("/model/cli/convert-disk-full", test_cli_convert_disk_full);
  g_test_add_func ("/model/cli/summary", test_cli_summary);
  g_test_add_func ("/model/cli/tracks-json", test_cli_tracks_json);
  return g_test_run ();
}
