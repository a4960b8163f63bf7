/* test-model-ranks.c — the ranks of a job (wick-ranks.h): clock offsets,
 * collective matching and stragglers recovered from generated jobs whose
 * truth is known (tools/make-rank-traces.py), real kineto rank traces from
 * HolisticTraceAnalysis' test data, partials round-tripped through JSON, and
 * `wick-trace ranks --json`'s shape.
 *
 * Arguments: the generator, tests/data/ranks, the wick-trace binary.
 */
#include "config.h"

#include <json-glib/json-glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/wait.h>

#include "wick-chrome-import.h"
#include "wick-chrome-stream.h"
#include "wick-ranks.h"
#include "wick-ranks-private.h"
#include "wick-tracks.h"

static const char *generator, *data_dir, *wick_trace;

/* Runs the generator into a fresh directory; NULL (after a skip) when
 * /usr/bin/python3 cannot run it. */
static char *
generate (const char *const *extra)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  char *dir = g_dir_make_tmp ("wick-ranks-XXXXXX", &error);
  int status = 0;
  g_autofree char *err = NULL;

  g_assert_no_error (error);
  if (!g_file_test ("/usr/bin/python3", G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("no /usr/bin/python3 to run tools/make-rank-traces.py");
      g_free (dir);
      return NULL;
    }
  g_ptr_array_add (argv, (char *)"/usr/bin/python3");
  g_ptr_array_add (argv, (char *)generator);
  g_ptr_array_add (argv, dir);
  for (; extra && *extra; extra++)
    g_ptr_array_add (argv, (char *)*extra);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL,
                               &err, &status, &error));
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("generator failed: %s", err);
  return dir;
}

static void
remove_dir (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *p = g_build_filename (dir, name, NULL);
      g_remove (p);
    }
  g_rmdir (dir);
}

static JsonObject *
load_truth (const char *dir, JsonParser *parser)
{
  g_autofree char *path = g_build_filename (dir, "truth.json", NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (json_parser_load_from_file (parser, path, &error));
  g_assert_no_error (error);
  return json_node_get_object (json_parser_get_root (parser));
}

static GPtrArray *
rank_files (const char *dir, JsonObject *truth)
{
  JsonArray *ranks = json_object_get_array_member (truth, "ranks");
  GPtrArray *files = g_ptr_array_new_with_free_func (g_free);
  /* in reverse, so that the order of the files given does not matter */
  for (guint i = json_array_get_length (ranks); i-- > 0;)
    {
      JsonObject *r = json_array_get_object_element (ranks, i);
      g_ptr_array_add (files,
                       g_build_filename (dir, json_object_get_string_member (r, "file"), NULL));
    }
  return files;
}

static const WickJobCollective *
find_collective (const WickRankJob *job, const char *group, gint64 seq)
{
  for (guint i = 0; i < job->collectives->len; i++)
    {
      const WickJobCollective *c = job->collectives->pdata[i];
      if (strcmp (c->group, group) == 0 && c->seq == seq)
        return c;
    }
  return NULL;
}

/* The Done-when checks: every offset within 50 µs, the straggler first,
 * every collective matched with its ranks, bytes and last rank. */
static void
check_against_truth (const WickRankJob *job, JsonObject *truth, gboolean by_seq)
{
  JsonArray *ranks = json_object_get_array_member (truth, "ranks");
  JsonArray *colls = json_object_get_array_member (truth, "collectives");
  gint64 straggler = json_object_get_int_member (truth, "straggler");

  g_assert_cmpuint (job->ranks->len, ==, json_array_get_length (ranks));
  g_assert_cmpint (job->reference_rank, ==, json_object_get_int_member (truth, "reference_rank"));
  for (guint i = 0; i < job->ranks->len; i++)
    {
      const WickJobRank *r = &g_array_index (job->ranks, WickJobRank, i);
      JsonObject *t = json_array_get_object_element (ranks, i);
      gint64 expected = json_object_get_int_member (t, "expected_offset_ns");
      g_assert_cmpint (r->rank, ==, json_object_get_int_member (t, "rank"));
      g_assert_true (r->aligned);
      g_assert_cmpint (ABS (r->offset_ns - expected), <=, 50000);
      g_assert_cmpint (r->offset_spread_ns, >=, 0);
      g_assert_cmpint (r->offset_spread_ns, <, 50000);
      g_assert_cmpuint (r->partial->steps->len, >, 0);
    }
  g_assert_cmpuint (job->collectives->len, ==, json_array_get_length (colls));
  for (guint i = 0; i < json_array_get_length (colls); i++)
    {
      JsonObject *t = json_array_get_object_element (colls, i);
      JsonArray *tr = json_object_get_array_member (t, "ranks");
      const char *group = json_object_get_string_member (t, "group");
      gint64 seq = json_object_get_int_member (t, "seq");
      const WickJobCollective *c;
      if (!by_seq)
        {
          /* the order fallback numbers a group's collectives from 0 */
          seq -= 1;
        }
      c = find_collective (job, group, seq);
      g_assert_nonnull (c);
      g_assert_cmpint (c->by_seq, ==, by_seq);
      g_assert_cmpstr (c->name, ==, json_object_get_string_member (t, "name"));
      g_assert_cmpuint (c->bytes, ==, (guint64)json_object_get_int_member (t, "bytes"));
      g_assert_cmpuint (c->ranks->len, ==, json_array_get_length (tr));
      for (guint k = 0; k < c->ranks->len; k++)
        g_assert_cmpint (g_array_index (c->ranks, int, k), ==, json_array_get_int_element (tr, k));
      g_assert_cmpint (c->last_rank, ==, json_object_get_int_member (t, "last_rank"));
      g_assert_cmpint (ABS (c->arrival_skew_ns - json_object_get_int_member (t, "arrival_skew_ns")),
                       <=, 50000);
      g_assert_cmpfloat (c->busbw_gbps, >, 0);
    }
  g_assert_cmpuint (job->stragglers->len, >, 0);
  g_assert_cmpint (g_array_index (job->stragglers, WickJobStraggler, 0).rank, ==, straggler);
  /* named first by far: what it caused is more than everyone else's together */
  {
    gint64 rest = 0;
    for (guint i = 1; i < job->stragglers->len; i++)
      rest += g_array_index (job->stragglers, WickJobStraggler, i).delay_ns;
    g_assert_cmpint (g_array_index (job->stragglers, WickJobStraggler, 0).delay_ns, >, rest);
  }
}

static void
run_generated (const char *const *extra, gboolean by_seq, guint threads)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_autoptr (WickRankJob) job = NULL;
  g_autoptr (GPtrArray) files = NULL;
  g_autofree char *dir = generate (extra);
  JsonObject *truth;

  if (dir == NULL)
    return;
  truth = load_truth (dir, parser);
  files = rank_files (dir, truth);
  job = wick_ranks_reduce_files ((const char *const *)files->pdata, files->len, threads, NULL,
                                 &error);
  g_assert_no_error (error);
  g_assert_nonnull (job);
  check_against_truth (job, truth, by_seq);
  if (!by_seq)
    {
      gboolean said = FALSE;
      for (guint i = 0; i < job->notes->len; i++)
        said |= strstr (job->notes->pdata[i], "order of appearance") != NULL;
      g_assert_true (said);
    }
  remove_dir (dir);
}

static void
test_generated_default (void)
{
  const char *extra[] = { "--outlier", NULL };
  run_generated (extra, TRUE, 2);
}

static void
test_generated_no_seq (void)
{
  const char *extra[] = { "--no-seq", "--seed", "3", "--straggler", "2", NULL };
  run_generated (extra, FALSE, 1);
}

static void
test_generated_16_ranks_gzip (void)
{
  const char *extra[]
    = { "--ranks", "16",     "--nodes",        "4",       "--seed", "7", "--straggler",
        "11",      "--gzip", "--legacy-names", "--steps", "4",      NULL };
  run_generated (extra, TRUE, 0);
}

static gint64
expected_offset (JsonObject *truth, guint i)
{
  JsonArray *ranks = json_object_get_array_member (truth, "ranks");
  return json_object_get_int_member (json_array_get_object_element (ranks, i),
                                     "expected_offset_ns");
}

/* Pinning a rank as the reference and setting an offset by hand, through
 * wick_rank_job_realign (what the Ranks page does) and the CLI. */
static void
test_alignment_by_hand (void)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) files = NULL;
  g_autofree char *dir = generate (NULL);
  WickRankJob *job;
  JsonObject *truth;
  gint64 wrong6;

  if (dir == NULL)
    return;
  truth = load_truth (dir, parser);
  files = rank_files (dir, truth);
  job = wick_ranks_reduce_files ((const char *const *)files->pdata, files->len, 2, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (job->reference_rank, ==, 0);
  g_assert_cmpstr (g_array_index (job->ranks, WickJobRank, 0).offset_source, ==, "reference");
  g_assert_cmpstr (g_array_index (job->ranks, WickJobRank, 1).offset_source, ==, "collectives");

  /* pinned: rank 3 is the reference, every offset relative to its clock */
  {
    WickRanksAlignment a = WICK_RANKS_ALIGNMENT_INIT;
    a.pin_rank = 3;
    job = wick_rank_job_realign (job, &a, &error);
    g_assert_no_error (error);
    g_assert_cmpint (job->reference_rank, ==, 3);
    g_assert_cmpint (job->pinned_rank, ==, 3);
    for (guint i = 0; i < job->ranks->len; i++)
      {
        const WickJobRank *r = &g_array_index (job->ranks, WickJobRank, i);
        gint64 want = expected_offset (truth, i) - expected_offset (truth, 3);
        g_assert_cmpint (ABS (r->offset_ns - want), <=, 50000);
        g_assert_cmpstr (r->offset_source, ==, i == 3 ? "pinned" : "collectives");
      }
    g_assert_cmpint (g_array_index (job->ranks, WickJobRank, 3).offset_ns, ==, 0);
  }
  /* set by hand, 2 ms off what the collectives say: rank 6 is put there and
   * the others stay where the collectives put them */
  {
    WickRanksAlignment a = WICK_RANKS_ALIGNMENT_INIT;
    int rank = 6;
    wrong6 = expected_offset (truth, 6) + 2000000;
    a.n_set = 1;
    a.set_ranks = &rank;
    a.set_offsets_ns = &wrong6;
    job = wick_rank_job_realign (job, &a, &error);
    g_assert_no_error (error);
    g_assert_cmpint (job->reference_rank, ==, 0);
    g_assert_cmpint (job->pinned_rank, ==, -1);
    for (guint i = 0; i < job->ranks->len; i++)
      {
        const WickJobRank *r = &g_array_index (job->ranks, WickJobRank, i);
        if (i == 6)
          {
            g_assert_cmpint (r->offset_ns, ==, wrong6);
            g_assert_cmpstr (r->offset_source, ==, "set");
          }
        else
          g_assert_cmpint (ABS (r->offset_ns - expected_offset (truth, i)), <=, 50000);
      }
  }
  /* refused: a rank the job does not have, a pinned rank's offset, one rank set twice */
  {
    WickRanksAlignment a = WICK_RANKS_ALIGNMENT_INIT;
    int ranks[] = { 2, 2 };
    gint64 offs[] = { 0, 1 };
    a.pin_rank = 99;
    g_assert_null (wick_rank_job_realign (job, &a, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "no rank 99"));
    g_clear_error (&error);
    /* the job is kept as it was */
    g_assert_cmpint (g_array_index (job->ranks, WickJobRank, 6).offset_ns, ==, wrong6);
    a.pin_rank = 2;
    a.n_set = 1;
    a.set_ranks = ranks;
    a.set_offsets_ns = offs;
    g_assert_null (wick_rank_job_realign (job, &a, &error));
    g_assert_nonnull (strstr (error->message, "rank 2 is pinned"));
    g_clear_error (&error);
    a.pin_rank = -1;
    a.n_set = 2;
    g_assert_null (wick_ranks_reduce_files_aligned ((const char *const *)files->pdata, files->len,
                                                    2, &a, NULL, &error));
    g_assert_nonnull (strstr (error->message, "rank 2 is set twice"));
    g_clear_error (&error);
  }

  /* the CLI: --pin 3 --offset 6=<ms> */
  {
    g_autoptr (GPtrArray) argv = g_ptr_array_new ();
    g_autoptr (JsonParser) out = json_parser_new ();
    g_autofree char *stdout_text = NULL, *stderr_text = NULL;
    g_autofree char *pin_set = NULL;
    gint64 want6 = expected_offset (truth, 6) - expected_offset (truth, 3) + 1500000;
    JsonArray *ranks;
    int status;
    pin_set = g_strdup_printf ("6=%.6fms", (double)want6 / 1e6);
    g_ptr_array_add (argv, (char *)wick_trace);
    g_ptr_array_add (argv, (char *)"ranks");
    g_ptr_array_add (argv, (char *)"--json");
    g_ptr_array_add (argv, (char *)"--pin");
    g_ptr_array_add (argv, (char *)"3");
    g_ptr_array_add (argv, (char *)"--offset");
    g_ptr_array_add (argv, pin_set);
    for (guint i = 0; i < files->len; i++)
      g_ptr_array_add (argv, files->pdata[i]);
    g_ptr_array_add (argv, NULL);
    g_assert_true (g_spawn_sync (NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                                 &stdout_text, &stderr_text, &status, &error));
    g_assert_no_error (error);
    g_assert_true (g_spawn_check_wait_status (status, NULL));
    g_assert_nonnull (strstr (stderr_text, "rank 6's offset is set by hand"));
    g_assert_true (json_parser_load_from_data (out, stdout_text, -1, &error));
    ranks = json_object_get_array_member (json_node_get_object (json_parser_get_root (out)),
                                          "ranks");
    for (guint i = 0; i < json_array_get_length (ranks); i++)
      {
        JsonObject *r = json_array_get_object_element (ranks, i);
        gint64 got = json_object_get_int_member (r, "offset_ns");
        gint64 want = expected_offset (truth, i) - expected_offset (truth, 3);
        if (i == 6)
          g_assert_cmpint (ABS (got - want6), <=, 1);
        else
          g_assert_cmpint (ABS (got - want), <=, 50000);
      }
    /* a bad one is a usage error naming it */
    g_clear_pointer (&stdout_text, g_free);
    g_clear_pointer (&stderr_text, g_free);
    g_ptr_array_index (argv, 6) = (char *)"6=fast";
    g_assert_true (g_spawn_sync (NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                                 &stdout_text, &stderr_text, &status, &error));
    g_assert_cmpint (WEXITSTATUS (status), ==, 3);
    g_assert_nonnull (strstr (stderr_text, "--offset 6=fast"));
  }
  wick_rank_job_free (job);
  remove_dir (dir);
}

static void
test_parse_offset (void)
{
  struct
  {
    const char *text;
    gint64 unit, ns;
  } good[] = { { "1500", 1, 1500 },       { "-1.5ms", 1, -1500000 },  { "2 µs", 1, 2000 },
               { "−0.25 s", 1, -250000000 }, { "12", 1000, 12000 },    { " +3us ", 1, 3000 },
               { "0", 1000000, 0 },        { ".5ms", 1, 500000 } };
  const char *bad[] = { "", "ms", "1.5 m", "1e3", "--1", "5 ms x", "2000000 s", "1.2.3" };
  for (guint i = 0; i < G_N_ELEMENTS (good); i++)
    {
      g_autoptr (GError) error = NULL;
      gint64 ns = 42;
      g_assert_true (wick_ranks_parse_offset (good[i].text, good[i].unit, &ns, &error));
      g_assert_no_error (error);
      g_assert_cmpint (ns, ==, good[i].ns);
    }
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      gint64 ns = 42;
      g_assert_false (wick_ranks_parse_offset (bad[i], 1, &ns, &error));
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
      g_assert_cmpint (ns, ==, 42);
    }
}

/* A partial through JSON merges to the same job. */
static void
test_partial_roundtrip (void)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) files = NULL;
  g_autoptr (WickRankJob) direct = NULL, via = NULL;
  g_autofree char *dir = generate (NULL);
  g_autofree char *a = NULL, *b = NULL;
  GPtrArray *partials;

  if (dir == NULL)
    return;
  files = rank_files (dir, load_truth (dir, parser));
  direct = wick_ranks_reduce_files ((const char *const *)files->pdata, files->len, 2, NULL, &error);
  g_assert_no_error (error);
  partials = g_ptr_array_new_with_free_func ((GDestroyNotify)wick_rank_partial_free);
  for (guint i = 0; i < files->len; i++)
    {
      g_autoptr (WickRankPartial) p = wick_rank_reduce_file (files->pdata[i], NULL, &error);
      g_autofree char *text = NULL;
      g_assert_no_error (error);
      text = wick_rank_partial_to_json (p);
      g_ptr_array_add (partials,
                       wick_rank_partial_from_json (text, strlen (text), "partial", &error));
      g_assert_no_error (error);
    }
  via = wick_ranks_merge (partials, &error);
  g_assert_no_error (error);
  a = wick_rank_job_to_json (direct, FALSE);
  b = wick_rank_job_to_json (via, FALSE);
  g_assert_cmpstr (a, ==, b);
  remove_dir (dir);
}

/* The merged trace: every rank's processes named "rank N · …", and on its
 * one clock the NCCL kernels of each collective end within 50 µs. */
static void
test_merged (void)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) files = NULL;
  g_autoptr (WickRankJob) job = NULL;
  g_autoptr (GHashTable) ends = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (WickChromeReader) reader = NULL;
  g_autoptr (WickDocument) doc = wick_document_new_with_extensions (TRUE);
  g_autoptr (GString) scratch = g_string_new (NULL);
  g_autofree char *dir = generate (NULL);
  g_autofree char *out = NULL;
  WickChromeEvent ev;
  WickFileFormat format;
  const WickProcess *procs;
  guint n_procs, n_kernels = 0;
  gint64 worst = 0;
  GHashTableIter it;
  gpointer key, val;

  if (dir == NULL)
    return;
  files = rank_files (dir, load_truth (dir, parser));
  job = wick_ranks_reduce_files ((const char *const *)files->pdata, files->len, 2, NULL, &error);
  g_assert_no_error (error);
  out = g_build_filename (dir, "job.json", NULL);
  g_assert_true (wick_rank_job_write_merged (job, out, NULL, &error));
  g_assert_no_error (error);

  reader = wick_chrome_reader_new (wick_input_open (out, &error), out);
  g_assert_true (wick_chrome_reader_start (reader, &format, &error));
  g_assert_cmpint (format, ==, WICK_FILE_FORMAT_CHROME);
  while (wick_chrome_reader_next (reader, &ev, &error))
    {
      static const char *const keys[] = { "Seq" };
      double seq;
      gboolean found;
      g_autoptr (GString) group = g_string_new (NULL);
      char *k;
      gint64 *range;
      if (!ev.has_dur || !wick_is_nccl_kernel (ev.name ? ev.name : "", ev.name_len))
        continue;
      wick_chrome_args_numbers (ev.args, ev.args_len, keys, 1, &seq, &found, scratch);
      g_assert_true (found);
      g_assert_true (wick_chrome_args_string (ev.args, ev.args_len, "Process Group Name", group));
      k = g_strdup_printf ("%s/%.0f", group->str, seq);
      range = g_hash_table_lookup (ends, k);
      if (range == NULL)
        {
          range = g_new (gint64, 2);
          range[0] = range[1] = ev.ts_ns + ev.dur_ns;
          g_hash_table_insert (ends, k, range);
        }
      else
        {
          range[0] = MIN (range[0], ev.ts_ns + ev.dur_ns);
          range[1] = MAX (range[1], ev.ts_ns + ev.dur_ns);
          g_free (k);
        }
      n_kernels++;
    }
  g_assert_no_error (error);
  g_assert_nonnull (wick_chrome_reader_get_metadata (reader));
  g_assert_cmpuint (g_hash_table_size (ends), ==, job->collectives->len);
  g_hash_table_iter_init (&it, ends);
  while (g_hash_table_iter_next (&it, &key, &val))
    worst = MAX (worst, ((gint64 *)val)[1] - ((gint64 *)val)[0]);
  /* the outlier-free job: the planted noise is 2 µs a kernel */
  g_assert_cmpint (worst, <, 50000);
  g_assert_cmpuint (n_kernels, >, job->collectives->len);

  g_assert_true (wick_document_load_file_auto (doc, out, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  procs = wick_tracks_get_processes (wick_document_get_tracks (doc), &n_procs);
  g_assert_cmpuint (n_procs, ==, 2 * job->ranks->len);
  for (guint i = 0; i < n_procs; i++)
    {
      g_autofree char *prefix = g_strdup_printf ("rank %u \xc2\xb7 ", i / 2);
      const char *name = wick_document_str (doc, procs[i].name);
      g_assert_nonnull (name);
      g_assert_true (g_str_has_prefix (name, prefix));
    }
  remove_dir (dir);
}

static void
test_partial_bad (void)
{
  g_autoptr (GError) error = NULL;
  const char *bad_row
    = "{\"wick_rank_partial\":1,\"file\":\"f\",\"rank\":0,\"world_size\":0,"
      "\"first_ns\":0,\"last_ns\":0,\"events\":0,\"gpu_events\":0,\"nccl_kernels\":0,"
      "\"nccl_without_group\":0,\"gloo_ops\":0,\"unknown_dtype\":0,\"collectives\":[[\"0\",\"k\","
      "\"allreduce\",1,10,5,0,2]],\"steps\":[]}";
  WickRankPartial *p = wick_rank_partial_from_json ("{}", 2, "p.json", &error);
  g_assert_null (p);
  g_assert_nonnull (strstr (error->message, "p.json: not a rank partial"));
  g_clear_error (&error);
  p = wick_rank_partial_from_json ("[1,", 3, "p.json", &error);
  g_assert_null (p);
  g_assert_true (g_str_has_prefix (error->message, "p.json: "));
  g_clear_error (&error);
  p = wick_rank_partial_from_json (bad_row, strlen (bad_row), "p.json", &error);
  g_assert_null (p);
  g_assert_nonnull (strstr (error->message, "collectives[0]"));
  g_clear_error (&error);
  /* a member given twice would be read twice (rows appended): refused */
  const char *twice = "{\"wick_rank_partial\":1,\"steps\":[],\"steps\":[]}";
  p = wick_rank_partial_from_json (twice, strlen (twice), "p.json", &error);
  g_assert_null (p);
  g_assert_cmpstr (error->message, ==, "p.json: \"steps\" appears twice");
}

static char *
write_file (const char *dir, const char *name, const char *text)
{
  char *path = g_build_filename (dir, name, NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (g_file_set_contents (path, text, -1, &error));
  return path;
}

#define KERNEL(ts, seq)                                                                            \
  "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)\","      \
  "\"pid\":0,\"tid\":7,\"ts\":" ts ",\"dur\":10,\"args\":{\"Collective name\":\"allreduce\","      \
  "\"Process Group Name\":\"0\",\"Seq\":" seq ",\"In msg nelems\":256,\"Out msg nelems\":256,"     \
  "\"Group size\":2,\"dtype\":\"Float\"}}"

/* A rank without collectives keeps its own clock and says so; two files of
 * one rank are refused naming both. */
static void
test_no_collectives_and_duplicates (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("wick-ranks-XXXXXX", &error);
  g_autofree char *a
    = write_file (dir, "a.json",
                  "{\"distributedInfo\":{\"rank\":0,\"world_size\":3},"
                  "\"traceEvents\":[" KERNEL ("100", "1") "," KERNEL ("200", "2") "]}");
  g_autofree char *b
    = write_file (dir, "b.json",
                  "{\"distributedInfo\":{\"rank\":1,\"world_size\":3},"
                  "\"traceEvents\":[" KERNEL ("1100", "1") "," KERNEL ("1200", "2") "]}");
  g_autofree char *c = write_file (dir, "trace_rank_2.json",
                                   "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":"
                                   "\"gemm\",\"pid\":0,\"tid\":7,\"ts\":5,\"dur\":3}],"
                                   "\"baseTimeNanoseconds\":1000}");
  g_autofree char *d
    = write_file (dir, "d.json", "{\"distributedInfo\":{\"rank\":1},\"traceEvents\":[]}");
  const char *three[] = { a, b, c };
  const char *dup[] = { a, b, d };
  g_autoptr (WickRankJob) job = wick_ranks_reduce_files (three, 3, 2, NULL, &error);
  const WickJobRank *r2;
  gboolean said = FALSE;

  g_assert_no_error (error);
  g_assert_cmpuint (job->ranks->len, ==, 3);
  g_assert_cmpint (g_array_index (job->ranks, WickJobRank, 1).offset_ns, ==, -1000000);
  r2 = &g_array_index (job->ranks, WickJobRank, 2);
  g_assert_cmpint (r2->rank, ==, 2);
  g_assert_cmpstr (r2->partial->rank_source, ==, "file name");
  g_assert_false (r2->aligned);
  g_assert_cmpint (r2->offset_ns, ==, 0);
  g_assert_cmpint (r2->offset_spread_ns, ==, -1);
  g_assert_cmpint (r2->partial->first_ns, ==, 6000);
  for (guint i = 0; i < job->notes->len; i++)
    said |= strstr (job->notes->pdata[i], "rank 2") && strstr (job->notes->pdata[i], "wall-clock");
  g_assert_true (said);
  {
    g_autofree char *json = wick_rank_job_to_json (job, FALSE);
    g_assert_nonnull (strstr (json, "\"offset_spread_ns\":null"));
  }
  g_clear_pointer (&job, wick_rank_job_free);

  job = wick_ranks_reduce_files (dup, 3, 1, NULL, &error);
  g_assert_null (job);
  g_assert_nonnull (strstr (error->message, "b.json and "));
  g_assert_nonnull (strstr (error->message, "d.json both are rank 1"));
  g_clear_error (&error);

  {
    g_autofree char *bad = write_file (dir, "bad.json", "{\"traceEvents\":[{\"ph\":\"X\",}]}");
    const char *one[] = { a, bad };
    job = wick_ranks_reduce_files (one, 2, 2, NULL, &error);
    g_assert_null (job);
    g_assert_nonnull (strstr (error->message, "bad.json"));
    g_assert_nonnull (strstr (error->message, "bad.json:1:27: "));
  }
  remove_dir (dir);
}

/* A name with U+001F (which json-glib would write raw) still gives JSON. */
static void
test_control_character_names (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("wick-ranks-XXXXXX", &error);
  g_autofree char *a = write_file (
    dir, "rank0.json",
    "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclKernel_AllReduce_x\","
    "\"pid\":0,\"tid\":7,\"ts\":1,\"dur\":2,\"args\":{\"Process Group Name\":\"g\\u001fh\","
    "\"Collective name\":\"all\\u001freduce\",\"Seq\":1}}]}");
  const char *one[] = { a };
  g_autoptr (WickRankJob) job = wick_ranks_reduce_files (one, 1, 1, NULL, &error);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autofree char *json = NULL, *partial = NULL;

  g_assert_no_error (error);
  json = wick_rank_job_to_json (job, FALSE);
  g_assert_true (json_parser_load_from_data (parser, json, -1, &error));
  g_assert_no_error (error);
  g_assert_nonnull (strstr (json, "g\xef\xbf\xbdh"));
  partial = wick_rank_partial_to_json (job->partials->pdata[0]);
  g_assert_true (json_parser_load_from_data (parser, partial, -1, &error));
  g_assert_no_error (error);
  remove_dir (dir);
}

/* HolisticTraceAnalysis' two sampled ranks of a 128-rank job: legacy
 * ncclKernel_SendRecv names with no collective args at all, so matched by
 * order in one unnamed group; and its nccl_data extract: Collective name,
 * sizes and dtype on every NCCL kernel, baseTimeNanoseconds, ProfilerSteps. */
static void
test_hta_real (void)
{
  g_autofree char *r0 = g_build_filename (data_dir, "hta-sampled-rank-0.json.gz", NULL);
  g_autofree char *r1 = g_build_filename (data_dir, "hta-sampled-rank-1.json.gz", NULL);
  g_autofree char *x = g_build_filename (data_dir, "hta-nccl-data-extract.json.gz", NULL);
  const char *pair[] = { r1, r0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (WickRankJob) job = wick_ranks_reduce_files (pair, 2, 2, NULL, &error);
  g_autoptr (WickRankPartial) p = NULL;
  guint broadcast = 0, allreduce = 0;

  g_assert_no_error (error);
  g_assert_cmpuint (job->ranks->len, ==, 2);
  for (guint i = 0; i < 2; i++)
    {
      const WickJobRank *r = &g_array_index (job->ranks, WickJobRank, i);
      g_assert_cmpint (r->rank, ==, (int)i);
      g_assert_cmpstr (r->partial->rank_source, ==, "distributedInfo");
      g_assert_cmpint (r->partial->world_size, ==, 128);
      g_assert_cmpuint (r->partial->nccl_kernels, ==, 10);
      g_assert_cmpuint (r->partial->nccl_without_group, ==, 10);
      g_assert_true (r->aligned);
    }
  g_assert_true (job->any_without_seq);
  g_assert_cmpuint (job->collectives->len, ==, 10);
  for (guint i = 0; i < job->collectives->len; i++)
    {
      const WickJobCollective *c = job->collectives->pdata[i];
      g_assert_cmpstr (c->name, ==, "sendrecv");
      g_assert_cmpuint (c->ranks->len, ==, 2);
      g_assert_cmpfloat (c->busbw_gbps, <, 0); /* no sizes in these traces */
    }

  p = wick_rank_reduce_file (x, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (p->rank, ==, 0);
  g_assert_cmpint (p->world_size, ==, 2);
  g_assert_true (p->has_base);
  g_assert_cmpint (p->base_ns, ==, G_GINT64_CONSTANT (1711964646000000000));
  g_assert_cmpuint (p->nccl_kernels, ==, 21);
  g_assert_cmpuint (p->unknown_dtype, ==, 0);
  g_assert_cmpuint (p->steps->len, ==, 3);
  g_assert_cmpint (g_array_index (p->steps, WickRankStep, 0).step, ==, 4);
  for (guint i = 0; i < p->collectives->len; i++)
    {
      const WickRankCollective *c = &g_array_index (p->collectives, WickRankCollective, i);
      g_assert_cmpstr (c->group, ==, "0");
      g_assert_cmpint (c->seq, ==, -1);
      g_assert_cmpuint (c->group_size, ==, 2);
      g_assert_cmpuint (c->bytes, >, 0);
      broadcast += strcmp (c->name, "broadcast") == 0;
      allreduce += strcmp (c->name, "allreduce") == 0;
    }
  g_assert_cmpuint (broadcast + allreduce, ==, 21);
  g_assert_cmpuint (allreduce, >, 0);
  g_assert_cmpuint (broadcast, >, 0);
}

/* A real 2-rank run on an H200 (gloo, one GPU, one host's clock, rank 1
 * sleeping on the GPU each step and 5x longer in step 3): gloo collectives
 * ("gloo:all_reduce" annotations on gloo's threads, no args) matched by
 * order in time, not in the file's thread-by-thread order. */
static void
test_h200_gloo (void)
{
  g_autofree char *r0 = g_build_filename (data_dir, "h200-gloo-rank0.json.gz", NULL);
  g_autofree char *r1 = g_build_filename (data_dir, "h200-gloo-rank1.json.gz", NULL);
  const char *pair[] = { r0, r1 };
  g_autoptr (GError) error = NULL;
  g_autoptr (WickRankJob) job = wick_ranks_reduce_files (pair, 2, 2, NULL, &error);
  const WickJobRank *r;
  guint last1 = 0;

  g_assert_no_error (error);
  r = &g_array_index (job->ranks, WickJobRank, 1);
  g_assert_cmpint (r->rank, ==, 1);
  g_assert_true (r->aligned);
  /* one host: the true offset is 0; gloo's host-side ends agree to ~0.1 ms */
  g_assert_cmpint (ABS (r->offset_ns), <, 200000);
  g_assert_cmpuint (r->partial->gloo_ops, ==, 12);
  g_assert_cmpuint (r->partial->steps->len, ==, 6);
  g_assert_cmpuint (job->collectives->len, ==, 12);
  for (guint i = 0; i < job->collectives->len; i++)
    {
      const WickJobCollective *c = job->collectives->pdata[i];
      g_assert_cmpuint (c->ranks->len, ==, 2);
      g_assert_cmpint (c->seq, ==, (gint64)i);
      g_assert_cmpstr (c->name, ==, i % 2 ? "broadcast" : "all_reduce");
      last1 += c->last_rank == 1;
    }
  /* step 3's all-reduce waited ~10 ms for rank 1's long sleep */
  {
    const WickJobCollective *c = job->collectives->pdata[6];
    g_assert_cmpint (c->last_rank, ==, 1);
    g_assert_cmpint (c->arrival_skew_ns, >, 8000000);
  }
  g_assert_cmpuint (last1, >=, 6);
  /* the stragglers leave out the warm-up (rank 0 was 49 ms late to the
   * first all-reduce at start-up): rank 1 first; with it, rank 0 */
  g_assert_cmpuint (job->warmup_collectives, >, 0);
  g_assert_cmpint (g_array_index (job->stragglers, WickJobStraggler, 0).rank, ==, 1);
  g_assert_true (((const WickJobCollective *)job->collectives->pdata[0])->warmup);
  g_assert_false (((const WickJobCollective *)job->collectives->pdata[6])->warmup);
  {
    WickRanksAlignment a = WICK_RANKS_ALIGNMENT_INIT;
    a.include_warmup = TRUE;
    job = wick_rank_job_realign (g_steal_pointer (&job), &a, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (job->warmup_collectives, ==, 0);
    g_assert_cmpint (g_array_index (job->stragglers, WickJobStraggler, 0).rank, ==, 0);
  }
}

static void
test_busbw_factor (void)
{
  g_assert_cmpfloat_with_epsilon (wick_collective_busbw_factor ("allreduce", 8), 1.75, 1e-12);
  g_assert_cmpfloat_with_epsilon (wick_collective_busbw_factor ("all_gather_into_tensor", 4), 0.75,
                                  1e-12);
  g_assert_cmpfloat_with_epsilon (wick_collective_busbw_factor ("_reduce_scatter_base", 2), 0.5,
                                  1e-12);
  g_assert_cmpfloat_with_epsilon (wick_collective_busbw_factor ("all_to_all", 4), 0.75, 1e-12);
  g_assert_cmpfloat_with_epsilon (wick_collective_busbw_factor ("broadcast", 8), 1, 1e-12);
  g_assert_cmpfloat_with_epsilon (wick_collective_busbw_factor ("sendrecv", 2), 1, 1e-12);
  g_assert_true (wick_is_nccl_kernel ("ncclKernel_AllReduce_RING_LL_Sum_float(", 39));
  g_assert_true (wick_is_nccl_kernel ("ncclDevKernel_AllGather_RING_LL(", 32));
  g_assert_false (wick_is_nccl_kernel ("nccl_like_gemm", 14));
}

/* `wick-trace ranks --json` prints the object docs/ranks.md describes, with
 * exactly its keys. */
static void
test_cli_json (void)
{
  const char *rank_keys[]
    = { "rank", "file", "offset_ns", "offset_spread_ns", "collectives", "steps", NULL };
  const char *coll_keys[] = { "group",           "seq",       "name",       "ranks",      "bytes",
                              "arrival_skew_ns", "last_rank", "latency_ns", "busbw_gbps", NULL };
  const char *strag_keys[] = { "rank", "delay_ns", NULL };
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (JsonParser) out = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GPtrArray) files = NULL;
  g_autofree char *dir = generate (NULL);
  g_autofree char *stdout_text = NULL, *stderr_text = NULL;
  JsonObject *root;
  int status;
  struct
  {
    const char *member;
    const char *const *keys;
  } arrays[]
    = { { "ranks", rank_keys }, { "collectives", coll_keys }, { "stragglers", strag_keys } };

  if (dir == NULL)
    return;
  files = rank_files (dir, load_truth (dir, parser));
  g_ptr_array_add (argv, (char *)wick_trace);
  g_ptr_array_add (argv, (char *)"ranks");
  g_ptr_array_add (argv, (char *)"--json");
  for (guint i = 0; i < files->len; i++)
    g_ptr_array_add (argv, files->pdata[i]);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               &stdout_text, &stderr_text, &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_true (json_parser_load_from_data (out, stdout_text, -1, &error));
  root = json_node_get_object (json_parser_get_root (out));
  g_assert_cmpuint (json_object_get_size (root), ==, 3);
  for (guint a = 0; a < G_N_ELEMENTS (arrays); a++)
    {
      JsonArray *arr = json_object_get_array_member (root, arrays[a].member);
      guint n_keys = g_strv_length ((char **)arrays[a].keys);
      g_assert_cmpuint (json_array_get_length (arr), >, 0);
      for (guint i = 0; i < json_array_get_length (arr); i++)
        {
          JsonObject *o = json_array_get_object_element (arr, i);
          g_assert_cmpuint (json_object_get_size (o), ==, n_keys);
          for (guint k = 0; k < n_keys; k++)
            g_assert_true (json_object_has_member (o, arrays[a].keys[k]));
        }
    }
  remove_dir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  if (argc < 4)
    {
      g_printerr ("usage: %s GENERATOR DATA_DIR WICK_TRACE\n", argv[0]);
      return 1;
    }
  generator = argv[1];
  data_dir = argv[2];
  wick_trace = argv[3];
  g_test_add_func ("/ranks/generated/8-ranks-seq", test_generated_default);
  g_test_add_func ("/ranks/generated/no-seq-order-fallback", test_generated_no_seq);
  g_test_add_func ("/ranks/generated/16-ranks-gzip-legacy", test_generated_16_ranks_gzip);
  g_test_add_func ("/ranks/partial/roundtrip", test_partial_roundtrip);
  g_test_add_func ("/ranks/alignment/by-hand", test_alignment_by_hand);
  g_test_add_func ("/ranks/alignment/parse-offset", test_parse_offset);
  g_test_add_func ("/ranks/partial/bad", test_partial_bad);
  g_test_add_func ("/ranks/merged", test_merged);
  g_test_add_func ("/ranks/no-collectives-and-duplicates", test_no_collectives_and_duplicates);
  g_test_add_func ("/ranks/hta-real", test_hta_real);
  g_test_add_func ("/ranks/h200-gloo", test_h200_gloo);
  g_test_add_func ("/ranks/control-character-names", test_control_character_names);
  g_test_add_func ("/ranks/busbw-factor", test_busbw_factor);
  g_test_add_func ("/ranks/cli-json", test_cli_json);
  return g_test_run ();
}
