/* test-model-archive.c — a job given as a directory, .zip or .tar(.gz)
 * (wick-archive.h): the same ranks as the files themselves, and hostile
 * archives refused with the member named (tests/model/make-archives.py
 * writes both kinds from a generated 4-rank job).
 *
 * Arguments: the rank generator, make-archives.py, the wick-trace binary.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/wait.h>

#include "wick-archive.h"
#include "wick-archive-private.h"
#include "wick-ranks.h"

static const char *generator, *maker, *wick_trace;
static char *ranks_dir, *arch_dir;

static gboolean
run (const char *const *argv)
{
  int status = 0;
  g_autofree char *err = NULL;
  g_autoptr (GError) error = NULL;
  if (!g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, &err, &status,
                     &error))
    g_error ("%s: %s", argv[0], error->message);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("%s failed: %s", argv[1], err);
  return TRUE;
}

static gboolean
setup (void)
{
  if (!g_file_test ("/usr/bin/python3", G_FILE_TEST_IS_EXECUTABLE))
    return FALSE;
  if (ranks_dir == NULL)
    {
      ranks_dir = g_dir_make_tmp ("wick-archive-ranks-XXXXXX", NULL);
      arch_dir = g_dir_make_tmp ("wick-archive-XXXXXX", NULL);
      {
        const char *gen[] = { "/usr/bin/python3", generator, ranks_dir, "--ranks", "4", "--nodes",
                              "2", "--straggler", "3", "--steps", "3", NULL };
        const char *mk[] = { "/usr/bin/python3", maker, ranks_dir, arch_dir, NULL };
        run (gen);
        run (mk);
      }
    }
  return TRUE;
}

static char *
job_json (const char *const *paths, guint n)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (WickRankJob) job = wick_ranks_reduce_files (paths, n, 2, NULL, &error);
  g_assert_no_error (error);
  /* the figures without the files' names */
  for (guint i = 0; i < job->ranks->len; i++)
    {
      WickJobRank *r = &g_array_index (job->ranks, WickJobRank, i);
      g_free (r->file);
      r->file = g_strdup_printf ("rank %d", r->rank);
    }
  return wick_rank_job_to_json (job, FALSE);
}

static char *
expected_json (void)
{
  g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  for (int i = 0; i < 4; i++)
    g_ptr_array_add (files, g_strdup_printf ("%s/rank-%d.json", ranks_dir, i));
  return job_json ((const char *const *)files->pdata, files->len);
}

static void
test_good (void)
{
  const char *good[] = { "job.zip", "job64.zip", "job.tar", "job.tar.gz", "job-pax.tar",
                         "link.tar" };
  g_autofree char *want = NULL;
  if (!setup ())
    {
      g_test_skip ("no /usr/bin/python3");
      return;
    }
  want = expected_json ();
  /* the directory itself: truth.json is no trace and is left out, said so */
  {
    g_autoptr (GError) error = NULL;
    g_autoptr (GPtrArray) notes = g_ptr_array_new_with_free_func (g_free);
    g_autoptr (GPtrArray) paths = wick_job_expand (ranks_dir, NULL, NULL, notes, NULL, &error);
    g_autofree char *got = NULL;
    g_assert_no_error (error);
    g_assert_cmpuint (paths->len, ==, 4);
    g_assert_cmpuint (notes->len, ==, 1);
    g_assert_nonnull (strstr (notes->pdata[0], "truth.json is not a trace-event JSON file"));
    got = job_json ((const char *const *)paths->pdata, paths->len);
    g_assert_cmpstr (got, ==, want);
  }
  for (guint i = 0; i < G_N_ELEMENTS (good); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *path = g_build_filename (arch_dir, good[i], NULL);
      g_autofree char *out = g_dir_make_tmp ("wick-archive-out-XXXXXX", NULL);
      g_autoptr (GHashTable) labels = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
      g_autoptr (GPtrArray) notes = g_ptr_array_new_with_free_func (g_free);
      g_autoptr (GPtrArray) paths = NULL;
      g_autofree char *got = NULL;
      g_test_message ("%s", good[i]);
      g_assert_true (wick_job_is_container (path));
      paths = wick_job_expand (path, out, labels, notes, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (paths->len, ==, 4);
      for (guint k = 0; k < paths->len; k++)
        {
          const char *label = g_hash_table_lookup (labels, paths->pdata[k]);
          g_assert_nonnull (label);
          g_assert_true (g_str_has_prefix (label, good[i]));
          g_assert_nonnull (strstr (label, "rank-"));
        }
      got = job_json ((const char *const *)paths->pdata, paths->len);
      g_assert_cmpstr (got, ==, want);
      for (guint k = 0; k < paths->len; k++)
        g_remove (paths->pdata[k]);
      g_rmdir (out);
    }
}

/* The pax path (150 bytes) and the symlink, as members. */
static void
test_members (void)
{
  g_autofree char *pax = NULL, *link = NULL;
  g_autoptr (GError) error = NULL;
  WickArchiveMember m;
  guint long_paths = 0, links = 0;
  if (!setup ())
    {
      g_test_skip ("no /usr/bin/python3");
      return;
    }
  pax = g_build_filename (arch_dir, "job-pax.tar", NULL);
  link = g_build_filename (arch_dir, "link.tar", NULL);
  {
    g_autoptr (WickArchive) a = wick_archive_open (pax, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpint (wick_archive_get_format (a), ==, WICK_ARCHIVE_TAR);
    while (wick_archive_next (a, &m, &error))
      long_paths += strlen (m.path) > 100 && m.regular && g_str_has_prefix (m.path, "job/ddd");
    g_assert_no_error (error);
    g_assert_cmpuint (long_paths, ==, 4);
  }
  {
    g_autoptr (WickArchive) a = wick_archive_open (link, NULL, &error);
    g_assert_no_error (error);
    while (wick_archive_next (a, &m, &error))
      if (strcmp (m.path, "rank-9.json") == 0)
        {
          g_assert_false (m.regular);
          links++;
        }
    g_assert_no_error (error);
    g_assert_cmpuint (links, ==, 1);
  }
  /* limits from memory: members, a member's size */
  {
    g_autofree char *zip = g_build_filename (arch_dir, "job.zip", NULL);
    g_autofree char *data = NULL;
    gsize len;
    WickArchiveLimits few = WICK_ARCHIVE_LIMITS_DEFAULT;
    WickArchiveLimits small = WICK_ARCHIVE_LIMITS_DEFAULT;
    g_autoptr (WickArchive) b = NULL;
    g_assert_true (g_file_get_contents (zip, &data, &len, NULL));
    few.max_members = 3;
    g_assert_null (wick_archive_new_for_data (data, len, "job.zip", &few, &error));
    g_assert_nonnull (strstr (error->message, "more than the limit of 3"));
    g_clear_error (&error);
    small.max_member_bytes = 1000;
    b = wick_archive_new_for_data (data, len, "job.zip", &small, &error);
    g_assert_no_error (error);
    while (wick_archive_next (b, &m, &error) && !(m.regular && m.size > 1000))
      ;
    g_assert_nonnull (error);
    g_assert_nonnull (strstr (error->message, "job/rank-0.json is"));
    g_assert_nonnull (strstr (error->message, "more than the limit of 1000"));
  }
}

static void
test_hostile (void)
{
  const struct
  {
    const char *file, *message;
  } bad[] = {
    { "bomb.zip", "rank-0.json would decompress 10485760 bytes from" },
    { "lying.zip", "rank-0.json inflates past its declared 1000 bytes" },
    { "overlap.zip", "rank-1.json overlaps rank-0.json" },
    { "badcrc.zip", "rank-0.json: CRC-32 mismatch" },
    { "traversal.zip", "“../../rank-0.json” is refused: it climbs out with .." },
    { "absolute.tar", "“/etc/rank-0.json” is refused: it is absolute" },
    { "cut.tar.gz", "in rank-" },
    { "many.zip", "5000 members, more than the limit of 4096" },
  };
  if (!setup ())
    {
      g_test_skip ("no /usr/bin/python3");
      return;
    }
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *path = g_build_filename (arch_dir, bad[i].file, NULL);
      g_autofree char *out = g_dir_make_tmp ("wick-archive-bad-XXXXXX", NULL);
      g_autoptr (GPtrArray) paths = NULL;
      g_test_message ("%s", bad[i].file);
      paths = wick_job_expand (path, out, NULL, NULL, NULL, &error);
      g_assert_null (paths);
      g_assert_nonnull (error);
      if (strstr (error->message, bad[i].message) == NULL)
        g_error ("%s: “%s” does not say “%s”", bad[i].file, error->message, bad[i].message);
      g_assert_nonnull (strstr (error->message, bad[i].file));
      /* nothing is left behind but what was whole before the failure */
      {
        g_autoptr (GDir) d = g_dir_open (out, 0, NULL);
        const char *name;
        while ((name = g_dir_read_name (d)) != NULL)
          {
            g_autofree char *p = g_build_filename (out, name, NULL);
            g_assert_false (g_str_has_suffix (name, ".part"));
            g_remove (p);
          }
      }
      g_rmdir (out);
    }
}

/* wick-trace ranks DIR and job.zip print the same job as the files. */
static void
test_cli (void)
{
  g_autofree char *zip = NULL, *a = NULL, *b = NULL, *err = NULL;
  const char *dir_argv[] = { wick_trace, "ranks", "--json", NULL, NULL };
  int status;
  g_autoptr (JsonParser) pa = json_parser_new ();
  g_autoptr (JsonParser) pb = json_parser_new ();
  JsonArray *ra, *rb;
  if (!setup ())
    {
      g_test_skip ("no /usr/bin/python3");
      return;
    }
  zip = g_build_filename (arch_dir, "job.zip", NULL);
  dir_argv[3] = ranks_dir;
  g_assert_true (g_spawn_sync (NULL, (char **)dir_argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &a,
                               NULL, &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  dir_argv[3] = zip;
  g_assert_true (g_spawn_sync (NULL, (char **)dir_argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &b,
                               &err, &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (err, "job.zip: 1 members not named"));
  g_assert_true (json_parser_load_from_data (pa, a, -1, NULL));
  g_assert_true (json_parser_load_from_data (pb, b, -1, NULL));
  ra = json_object_get_array_member (json_node_get_object (json_parser_get_root (pa)), "ranks");
  rb = json_object_get_array_member (json_node_get_object (json_parser_get_root (pb)), "ranks");
  g_assert_cmpuint (json_array_get_length (ra), ==, 4);
  g_assert_cmpuint (json_array_get_length (rb), ==, 4);
  for (guint i = 0; i < 4; i++)
    {
      JsonObject *x = json_array_get_object_element (ra, i), *y = json_array_get_object_element (rb, i);
      g_autofree char *label = g_strdup_printf ("job.zip/job/rank-%u.json%s", i, i == 1 ? ".gz" : "");
      g_assert_cmpint (json_object_get_int_member (x, "offset_ns"), ==,
                       json_object_get_int_member (y, "offset_ns"));
      g_assert_cmpstr (json_object_get_string_member (y, "file"), ==, label);
    }
  /* a bomb is an error naming the member, exit status 2 */
  {
    g_autofree char *bomb = g_build_filename (arch_dir, "bomb.zip", NULL);
    g_autofree char *e2 = NULL;
    dir_argv[3] = bomb;
    g_assert_true (g_spawn_sync (NULL, (char **)dir_argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                                 NULL, NULL, &e2, &status, NULL));
    g_assert_cmpint (WEXITSTATUS (status), ==, 2);
    g_assert_nonnull (strstr (e2, "bomb.zip: rank-0.json would decompress"));
  }
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

int
main (int argc, char **argv)
{
  int status;
  g_test_init (&argc, &argv, NULL);
  if (argc < 4)
    {
      g_printerr ("usage: %s GENERATOR MAKE_ARCHIVES WICK_TRACE\n", argv[0]);
      return 1;
    }
  generator = argv[1];
  maker = argv[2];
  wick_trace = argv[3];
  g_test_add_func ("/archive/good", test_good);
  g_test_add_func ("/archive/members", test_members);
  g_test_add_func ("/archive/hostile", test_hostile);
  g_test_add_func ("/archive/cli", test_cli);
  status = g_test_run ();
  if (ranks_dir)
    remove_dir (ranks_dir);
  if (arch_dir)
    remove_dir (arch_dir);
  return status;
}
