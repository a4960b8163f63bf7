/* test-model-json-bounds.c — JSON values and decompression bounded, against a
 * real wick-trace process whose peak RSS is measured.
 *
 * - A 4 MB .gz Chrome trace holding one 4 GiB string (in an event's name, or
 *   in an `otherData` member before the events): refused once the value
 *   passes the line limit (256 MiB by default), with an error naming the
 *   file, line:column and byte offset; peak RSS stays near the limit. On
 *   b0d2409..23fd216 the reader grew its buffer to hold the whole value: RSS
 *   past 3 GB, then `GLib-ERROR failed to allocate 4294967296 bytes`.
 * - A decompression bomb (4 GiB of small events in a 4 MB .gz, ratio 1000:1):
 *   reading stops at the ratio limit (200:1 past 64 MiB) with a sentence, the
 *   events decoded before are kept, as for a cut-off file; the options and
 *   variables that raise the limits work, and bad values are refused.
 * - A limit on decompressed bytes keeps the JSONL records before it.
 * - The events read before an over-long value are kept (in process).
 */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/wait.h>

#include "wick-chrome-import.h"
#include "wick-chrome-import-private.h"
#include "wick-document.h"
#include "wick-document-private.h"
#include "wick-input.h"
#include "model-test-gzip.h"

static const char *wick_trace;
static char *dir;

/* head, then @repeat times @unit (64 MiB of it, compressed once), then tail:
 * concatenated gzip members, as `cat a.gz b.gz` makes them. */
static char *
write_bomb (const char *name, const char *head, const char *unit, guint repeat, const char *tail)
{
  g_autoptr (GByteArray) out = g_byte_array_new ();
  g_autoptr (GByteArray) chunk = g_byte_array_new ();
  gsize unit_len = strlen (unit), chunk_len = (gsize)(64 << 20) / unit_len * unit_len;
  g_autofree char *plain = g_malloc (chunk_len);
  for (gsize i = 0; i < chunk_len; i += unit_len)
    memcpy (plain + i, unit, unit_len);
  model_test_gzip_append (chunk, plain, chunk_len, 9, 9);
  model_test_gzip_append (out, head, strlen (head), 9, 9);
  for (guint i = 0; i < repeat; i++)
    g_byte_array_append (out, chunk->data, chunk->len);
  model_test_gzip_append (out, tail, strlen (tail), 9, 9);
  char *path = g_build_filename (dir, name, NULL);
  g_assert_true (g_file_set_contents (path, (const char *)out->data, out->len, NULL));
  g_test_message ("%s: %u bytes compressed, %" G_GUINT64_FORMAT " decompressed", name, out->len,
                  (guint64)strlen (head) + (guint64)repeat * chunk_len + strlen (tail));
  return path;
}

static void
limit_memory (gpointer data)
{
  /* main's reader allocated 4 GiB here: the limit makes that a quick abort
   * instead of a machine out of memory */
  struct rlimit limit = { (rlim_t)3 << 30, (rlim_t)3 << 30 };
  (void)data;
  setrlimit (RLIMIT_AS, &limit);
}

typedef struct
{
  int status;
  char *out, *err;
  double seconds;
  glong max_rss_kb;
} Run;

static void
run_clear (Run *run)
{
  g_free (run->out);
  g_free (run->err);
}

/* Runs wick-trace with @args and @env additions; its own peak RSS from wait4. */
static void
run_wick_trace (Run *run, const char *const *env_add, const char *const *args)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_auto (GStrv) env = g_get_environ ();
  GError *error = NULL;
  GPid pid;
  int out_fd, err_fd, status;
  struct rusage usage;
  gint64 start = g_get_monotonic_time ();

  g_ptr_array_add (argv, (gpointer)wick_trace);
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer)args[i]);
  g_ptr_array_add (argv, NULL);
  for (guint i = 0; env_add != NULL && env_add[i] != NULL; i += 2)
    env = g_environ_setenv (env, env_add[i], env_add[i + 1], TRUE);
  g_assert_true (g_spawn_async_with_pipes (NULL, (char **)argv->pdata, env,
                                           G_SPAWN_DO_NOT_REAP_CHILD, limit_memory, NULL, &pid,
                                           NULL, &out_fd, &err_fd, &error));
  g_assert_no_error (error);
  {
    g_autoptr (GIOChannel) o = g_io_channel_unix_new (out_fd);
    g_autoptr (GIOChannel) e = g_io_channel_unix_new (err_fd);
    g_io_channel_set_close_on_unref (o, TRUE);
    g_io_channel_set_close_on_unref (e, TRUE);
    /* the outputs are small; stderr first is safe for these commands */
    g_io_channel_read_to_end (e, &run->err, NULL, NULL);
    g_io_channel_read_to_end (o, &run->out, NULL, NULL);
  }
  g_assert_cmpint (wait4 (pid, &status, 0, &usage), ==, pid);
  run->status = status;
  run->seconds = (double)(g_get_monotonic_time () - start) / 1e6;
  run->max_rss_kb = usage.ru_maxrss;
  g_test_message ("%s %s: status %d, %.2f s, peak RSS %ld KiB: %s", args[0],
                  args[1] ? args[1] : "", status, run->seconds, run->max_rss_kb,
                  run->err ? run->err : "");
}

static void
test_huge_string (void)
{
  g_autofree char *name_path
    = write_bomb ("name.json.gz", "{\"traceEvents\":[{\"name\":\"", "a", 64,
                  "\",\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1}]}");
  g_autofree char *member_path = write_bomb (
    "member.json.gz", "{\"otherData\":{\"x\":\"", "a", 64,
    "\"},\"traceEvents\":[{\"name\":\"a\",\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1}]}");
  /* the ratio limit would stop these first: raised, the string limit is
   * what is tested */
  const char *env[] = { "WICK_MAX_COMPRESSION_RATIO", "100000", "MALLOC_PERTURB_", "0", NULL };
  struct
  {
    const char *path, *where;
  } cases[] = { { name_path, "name.json.gz:1:26: the JSON value at byte offset 16" },
                { member_path, "member.json.gz:1:14: the JSON value at byte offset 13" } };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      Run run = { 0 };
      const char *args[] = { "summary", cases[i].path, NULL };
      run_wick_trace (&run, env, args);
      g_assert_true (WIFEXITED (run.status));
      g_assert_cmpint (WEXITSTATUS (run.status), !=, 0);
      g_assert_nonnull (strstr (run.err, "is longer than the maximum of 268435456 bytes"));
      g_assert_nonnull (strstr (run.err, "byte offset"));
      g_assert_nonnull (strstr (run.err, i == 0 ? "name.json.gz:1:" : "member.json.gz:1:"));
      /* 256 MiB of value, its read chunk and the program: measured 272 MiB */
      g_assert_cmpint (run.max_rss_kb, <, 400 * 1024);
      g_assert_cmpfloat (run.seconds, <, 60);
      run_clear (&run);
    }
  /* the same limit, lowered: 16 MiB costs about 16 MiB */
  {
    Run run = { 0 };
    const char *args[] = { "--max-line-bytes", "16M", "summary", name_path, NULL };
    run_wick_trace (&run, env, args);
    g_assert_cmpint (WEXITSTATUS (run.status), !=, 0);
    g_assert_nonnull (strstr (run.err, "is longer than the maximum of 16777216 bytes"));
    g_assert_cmpint (run.max_rss_kb, <, 100 * 1024);
    run_clear (&run);
  }
  (void)cases[0].where;
  g_unlink (name_path);
  g_unlink (member_path);
}

static void
test_bomb_ratio (void)
{
  /* 4 GiB of small events in about 4 MB: a ratio near 1000:1 */
  g_autofree char *path = write_bomb (
    "events.json.gz", "{\"traceEvents\":[",
    "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"a\",\"ts\":1,\"pid\":1,\"tid\":1,\"args\":{}},", 64,
    "{\"ph\":\"i\",\"name\":\"a\",\"ts\":1,\"pid\":1,\"tid\":1}]}");
  const char *env[] = { "MALLOC_PERTURB_", "0", NULL };
  Run run = { 0 };
  const char *args[] = { "check", path, NULL };

  run_wick_trace (&run, env, args);
  g_assert_true (WIFEXITED (run.status));
  /* the sentence, and the events before the limit kept (a cut-off file) */
  g_assert_nonnull (strstr (run.out, "reach the limit of 200:1 (a decompression bomb?)"));
  g_assert_nonnull (strstr (run.out, "events.json.gz: "));
  g_assert_nonnull (strstr (run.out, "the file is cut off inside the events; the "));
  g_assert_null (strstr (run.out, "the 0 events before"));
  g_assert_cmpint (run.max_rss_kb, <, 1024 * 1024);
  g_assert_cmpfloat (run.seconds, <, 60);
  run_clear (&run);

  /* bad values refuse to start, with a sentence */
  {
    const char *bad[] = { "WICK_MAX_COMPRESSION_RATIO", "abc", NULL };
    run_wick_trace (&run, bad, args);
    g_assert_cmpint (WEXITSTATUS (run.status), ==, 3); /* usage */
    g_assert_nonnull (strstr (run.err, "WICK_MAX_COMPRESSION_RATIO=“abc” is not a ratio"));
    run_clear (&run);
    const char *bad2[] = { "WICK_MAX_DECOMPRESSED_BYTES", "-1", NULL };
    run_wick_trace (&run, bad2, args);
    g_assert_cmpint (WEXITSTATUS (run.status), ==, 3); /* usage */
    g_assert_nonnull (strstr (run.err, "WICK_MAX_DECOMPRESSED_BYTES=“-1” is not a size"));
    run_clear (&run);
    const char *bad_args[] = { "--max-compression-ratio", "0", "check", path, NULL };
    run_wick_trace (&run, NULL, bad_args);
    g_assert_cmpint (WEXITSTATUS (run.status), ==, 3); /* usage */
    run_clear (&run);
  }
  g_unlink (path);
}

/* The limits in process: the JSONL reader keeps the records before a
 * decompressed-size limit; a raised ratio reads a high-ratio file whole. */
static void
test_limits_in_process (void)
{
  g_autofree char *source
    = g_build_filename (g_getenv ("WICK_TEST_DATA"), "model", "train-contract.jsonl", NULL);
  g_autofree char *text = NULL;
  gsize length;
  g_assert_true (g_file_get_contents (source, &text, &length, NULL));
  g_autoptr (GByteArray) gz = g_byte_array_new ();
  model_test_gzip_append (gz, text, length, 9, 9);
  g_autofree char *path = g_build_filename (dir, "train.jsonl.gz", NULL);
  g_assert_true (g_file_set_contents (path, (const char *)gz->data, gz->len, NULL));

  g_autoptr (WickDocument) whole = wick_document_new ();
  g_assert_true (wick_document_load_file (whole, path, NULL, NULL, NULL, NULL));
  guint64 all = wick_document_get_n_records (whole);

  wick_set_max_decompressed_bytes (length / 2);
  g_autoptr (WickDocument) cut = wick_document_new ();
  g_autoptr (GError) error = NULL;
  g_assert_false (wick_document_load_file (cut, path, NULL, NULL, NULL, &error));
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "decompressed bytes: reading stopped there"));
  g_assert_cmpuint (wick_document_get_n_records (cut), >, 0);
  g_assert_cmpuint (wick_document_get_n_records (cut), <, all);
  wick_set_max_decompressed_bytes (0);

  /* 100 MiB of one repeated event (1000:1) read whole with a raised ratio */
  {
    GString *chrome = g_string_new ("{\"traceEvents\":[");
    const char *ev = "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"a\",\"ts\":1,\"pid\":1,\"tid\":1},";
    while (chrome->len < (100u << 20))
      g_string_append (chrome, ev);
    g_string_append (chrome, "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"end\",\"ts\":2,\"pid\":1,\"tid\":1}]}");
    g_autoptr (GByteArray) cz = g_byte_array_new ();
    model_test_gzip_append (cz, chrome->str, chrome->len, 9, 9);
    g_autofree char *cpath = g_build_filename (dir, "repeated.json.gz", NULL);
    g_assert_true (g_file_set_contents (cpath, (const char *)cz->data, cz->len, NULL));
    g_test_message ("repeated.json.gz: %u bytes, ratio %" G_GSIZE_FORMAT ":1", cz->len,
                    chrome->len / cz->len);
    g_string_free (chrome, TRUE);
    g_autoptr (WickDocument) refused = wick_document_new ();
    g_clear_error (&error);
    wick_chrome_import_file (refused, cpath, NULL, &error);
    const WickChromeInfo *info = wick_chrome_info_get (refused);
    gboolean warned = FALSE;
    for (guint i = 0; info != NULL && i < info->warnings->len; i++)
      warned |= strstr (g_ptr_array_index (info->warnings, i), "a decompression bomb?") != NULL;
    g_assert_true (warned);
    wick_set_max_compression_ratio (100000);
    g_autoptr (WickDocument) read = wick_document_new ();
    g_clear_error (&error);
    g_assert_true (wick_chrome_import_file (read, cpath, NULL, &error));
    g_assert_no_error (error);
    wick_set_max_compression_ratio (0);
    g_unlink (cpath);
  }
  g_unlink (path);
}

/* The events before an over-long value stay in the document; the error names
 * the file, the line:column and the byte offset. */
static void
test_events_before_kept (void)
{
  GString *chrome = g_string_new ("{\"traceEvents\":[\n");
  for (int i = 0; i < 3; i++)
    g_string_append_printf (chrome,
                            "{\"ph\":\"X\",\"name\":\"step %d\",\"ts\":%d,\"dur\":5,\"pid\":1,"
                            "\"tid\":1},\n",
                            i, i * 10);
  gsize offset = chrome->len;
  g_string_append (chrome, "{\"ph\":\"X\",\"name\":\"");
  g_string_set_size (chrome, chrome->len + (4u << 20));
  memset (chrome->str + chrome->len - (4u << 20), 'x', 4u << 20);
  g_string_append (chrome, "\",\"ts\":50,\"dur\":1,\"pid\":1,\"tid\":1}]}");
  wick_set_max_line_length (1u << 20);
  g_autoptr (WickDocument) doc = wick_document_new ();
  g_autoptr (GError) error = NULL;
  g_assert_false (wick_chrome_import_data (doc, chrome->str, chrome->len, "long.json", &error));
  wick_set_max_line_length (0);
  g_test_message ("%s", error->message);
  g_autofree char *where = g_strdup_printf ("long.json:5:1: the JSON value at byte offset %" G_GSIZE_FORMAT, offset);
  g_assert_nonnull (strstr (error->message, where));
  guint n_spans = 0;
  wick_document_get_spans (doc, &n_spans);
  /* the three steps (and the file's own root span) */
  g_assert_cmpuint (n_spans, >=, 3);
  g_string_free (chrome, TRUE);
}

/* `render` of a span named by an 8 MiB string: the label is cut to what can
 * show before Pango shapes it (23fd216: 12.4 s and 815 MB of RSS for the one
 * frame; now 0.6 s and 39 MB), and a trace of 1 M distinct names renders in
 * bounded time and memory (5.2 s, 137 MB; `summary` of it: 4.1 s). */
static void
test_render_long_names (void)
{
  g_autofree char *long_path = g_build_filename (dir, "long-name.json", NULL);
  g_autofree char *many_path = g_build_filename (dir, "many-names.json", NULL);
  g_autofree char *png = g_build_filename (dir, "out.png", NULL);
  GString *t = g_string_new ("{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"");
  gsize at = t->len;
  g_string_set_size (t, at + (8u << 20));
  memset (t->str + at, 'N', 8u << 20);
  g_string_append (t, "\",\"ts\":0,\"dur\":1000,\"pid\":1,\"tid\":1},"
                      "{\"ph\":\"X\",\"name\":\"short\",\"ts\":10,\"dur\":100,\"pid\":1,\"tid\":1}]}");
  g_assert_true (g_file_set_contents (long_path, t->str, (gssize)t->len, NULL));
  g_string_assign (t, "{\"traceEvents\":[");
  for (guint i = 0; i < 1000000; i++)
    g_string_append_printf (t, "%s{\"ph\":\"X\",\"name\":\"op%07u\",\"ts\":%u,\"dur\":1,\"pid\":1,"
                               "\"tid\":1}",
                            i ? "," : "", i, i * 2);
  g_string_append (t, "]}");
  g_assert_true (g_file_set_contents (many_path, t->str, (gssize)t->len, NULL));
  g_string_free (t, TRUE);

  const char *env[] = { "MALLOC_PERTURB_", "0", NULL };
  struct
  {
    const char *path;
    double seconds;
    glong rss_kb;
  } cases[] = { { long_path, 10, 300 * 1024 }, { many_path, 60, 800 * 1024 } };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      Run run = { 0 };
      const char *args[] = { "render", "--view", "timeline", "--output", png, cases[i].path, NULL };
      run_wick_trace (&run, env, args);
      g_assert_true (WIFEXITED (run.status));
      g_assert_cmpint (WEXITSTATUS (run.status), ==, 0);
      g_assert_true (g_file_test (png, G_FILE_TEST_IS_REGULAR));
      g_assert_cmpfloat (run.seconds, <, cases[i].seconds);
      g_assert_cmpint (run.max_rss_kb, <, cases[i].rss_kb);
      run_clear (&run);
      g_unlink (png);
    }
  g_unlink (long_path);
  g_unlink (many_path);
}

/* Paths that are no regular file: a FIFO nobody writes (23fd216: `summary`
 * and the app's open blocked in open() for ever), /dev/zero and a symlink to
 * it (read as an endless trace up to the line limit, 256 MiB, exit 0), are
 * refused at once with a sentence; a symlink to a trace reads. */
static void
test_special_files (void)
{
  g_autofree char *fifo = g_build_filename (dir, "trace.fifo", NULL);
  g_autofree char *zero_link = g_build_filename (dir, "zero.json", NULL);
  g_autofree char *good_link = g_build_filename (dir, "good.jsonl", NULL);
  g_autofree char *source
    = g_build_filename (g_getenv ("WICK_TEST_DATA"), "model", "train-contract.jsonl", NULL);
  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  g_assert_cmpint (symlink ("/dev/zero", zero_link), ==, 0);
  g_assert_cmpint (symlink (source, good_link), ==, 0);
  struct
  {
    const char *path, *says;
  } cases[] = { { fifo, "a FIFO, not a regular file" },
                { "/dev/zero", "a character device, not a regular file" },
                { zero_link, "a character device, not a regular file" } };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      Run run = { 0 };
      const char *args[] = { "summary", cases[i].path, NULL };
      run_wick_trace (&run, NULL, args);
      g_assert_true (WIFEXITED (run.status));
      g_assert_cmpint (WEXITSTATUS (run.status), !=, 0);
      g_assert_nonnull (strstr (run.err, cases[i].says));
      g_assert_cmpfloat (run.seconds, <, 10);
      run_clear (&run);
      /* the app's loader, in process */
      g_autoptr (WickDocument) doc = wick_document_new ();
      g_autoptr (GError) error = NULL;
      gint64 start = g_get_monotonic_time ();
      g_assert_false (
        wick_document_load_file_auto (doc, cases[i].path, NULL, NULL, NULL, &error));
      g_assert_nonnull (strstr (error->message, cases[i].says));
      g_assert_cmpint (g_get_monotonic_time () - start, <, 2 * G_USEC_PER_SEC);
    }
  Run run = { 0 };
  const char *args[] = { "summary", good_link, NULL };
  run_wick_trace (&run, NULL, args);
  g_assert_cmpint (WEXITSTATUS (run.status), ==, 0);
  run_clear (&run);
  g_unlink (fifo);
  g_unlink (zero_link);
  g_unlink (good_link);
}

/* Raw bytes that are not UTF-8 in a Chrome trace's names (a writer that
 * copies C strings): 23fd216 kept them as they were, and `render` handed them
 * to Pango ("Invalid UTF-8 string passed to pango_layout_set_text()"), JSON
 * outputs to other programs. Now each bad byte is U+FFFD, counted in a
 * warning. */
static void
test_invalid_utf8_names (void)
{
  static const char trace[]
    = "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\xff\xfe\xc0\x80" "b\",\"ts\":1,\"dur\":1,"
      "\"pid\":1,\"tid\":1,\"cat\":\"\xed\xa0\x80\"},{\"ph\":\"M\",\"name\":\"thread_name\","
      "\"pid\":1,\"tid\":1,\"args\":{\"name\":\"\xf8\x88\"}}]}";
  g_autofree char *path = g_build_filename (dir, "bad-utf8.json", NULL);
  g_autofree char *png = g_build_filename (dir, "bad-utf8.png", NULL);
  g_assert_true (g_file_set_contents (path, trace, sizeof trace - 1, NULL));
  g_autoptr (WickDocument) doc = wick_document_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (wick_chrome_import_file (doc, path, NULL, &error));
  guint n = 0;
  const WickSpan *spans = wick_document_get_spans (doc, &n);
  guint checked = 0;
  for (guint i = 0; i < n; i++)
    {
      const char *name = wick_document_str (doc, spans[i].name);
      g_assert_true (g_utf8_validate (name, -1, NULL));
      checked += strstr (name, "a\xef\xbf\xbd") != NULL;
    }
  g_assert_cmpuint (checked, ==, 1);
  const WickChromeInfo *info = wick_chrome_info_get (doc);
  gboolean warned = FALSE;
  for (guint i = 0; i < info->warnings->len; i++)
    warned |= strstr (g_ptr_array_index (info->warnings, i), "3 strings (names, categories or "
                                                             "arguments) are not valid UTF-8")
              != NULL;
  g_assert_true (warned);
  Run run = { 0 };
  const char *args[] = { "render", "--view", "timeline", "--output", png, path, NULL };
  run_wick_trace (&run, NULL, args);
  g_assert_cmpint (WEXITSTATUS (run.status), ==, 0);
  g_assert_null (strstr (run.err, "Invalid UTF-8"));
  run_clear (&run);
  g_unlink (png);
  g_unlink (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  if (argc < 2)
    {
      printf ("1..0 # SKIP needs the wick-trace path\n");
      return 0;
    }
#if defined(__SANITIZE_ADDRESS__)
#define WICK_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WICK_TEST_UNDER_ASAN 1
#endif
#endif
#ifdef WICK_TEST_UNDER_ASAN
  /* The cases bound wick-trace's address space (RLIMIT_AS: ASan cannot start
   * under it) and measure its peak RSS and time, which ASan's shadow and
   * quarantine change: they run in the plain build; these readers run under
   * ASan through fuzz-chrome and fuzz-compressed. */
  printf ("1..0 # SKIP address-space limits and RSS bounds do not apply under ASan "
          "(the plain build runs these cases)\n");
  return 0;
#endif
  wick_trace = argv[1];
  dir = g_dir_make_tmp ("wick-json-bounds-XXXXXX", NULL);
  g_test_add_func ("/model/json-bounds/huge-string", test_huge_string);
  g_test_add_func ("/model/json-bounds/events-before-kept", test_events_before_kept);
  g_test_add_func ("/model/json-bounds/bomb-ratio", test_bomb_ratio);
  g_test_add_func ("/model/json-bounds/limits-in-process", test_limits_in_process);
  g_test_add_func ("/model/json-bounds/render-long-names", test_render_long_names);
  g_test_add_func ("/model/json-bounds/special-files", test_special_files);
  g_test_add_func ("/model/json-bounds/invalid-utf8-names", test_invalid_utf8_names);
  int status = g_test_run ();
  g_rmdir (dir);
  g_free (dir);
  return status;
}
