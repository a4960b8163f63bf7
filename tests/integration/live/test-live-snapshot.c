/* test-live-snapshot.c — the attach snapshot (docs/protocol.md, "snapshot").
 *
 * In process: storages allocated before a reader attached come out of the
 * stream as alloc records at the snapshot's time (flagged in extension mode),
 * freed ones do not, a record that is both in the ring and in the snapshot
 * comes out once, frees after the attach pair with the snapshot's allocs, and
 * the strict capture passes candle-graph's rules (wick-trace check) with no
 * unpaired free. Against wick-demo: a late attach shows at least the bytes of
 * the demo's registered modules from its first drain.
 */
#include "config.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "live-test-util.h"
#include "client/wick-live-stream-private.h"
#include "model/wick-memory-snapshot.h"
#include "model/wick-snapshot-categories.h"

static char *runtime_dir;

static WickSession *
open_session (void)
{
  return live_test_open_session ("snapshot.test", TRUE);
}

static void
memory (WickSession *session, const char *storage, guint64 bytes, WickMemoryAction action,
        WickMemoryCategory category)
{
  static const uint64_t shape[] = { 4 };
  WickMemoryRecord record = {
    .timestamp_ns = WICK_NOW,
    .storage_id = storage,
    .tensor_id = storage,
    .span = 1,
    .device = "cpu",
    .bytes = bytes,
    .action = action,
    .shape = shape,
    .rank = 1,
    .dtype = "f32",
    .category = category,
  };
  WickError error = { "" };
  g_assert_true (wick_session_record_memory (session, &record, &error));
}

static void
collect (const char *line, gsize length, gpointer user_data)
{
  g_string_append_len (user_data, line, (gssize)length);
  g_string_append_c (user_data, '\n');
}

static guint
count (const char *text, const char *needle)
{
  guint n = 0;
  for (const char *p = strstr (text, needle); p != NULL; p = strstr (p + 1, needle))
    n++;
  return n;
}

static WickLiveStream *
attach (WickSession *session, gboolean strict)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (WickLiveConnection) connection
    = wick_live_connection_new (wick_session_get_control_socket_path (session), &error);
  g_assert_no_error (error);
  WickLiveSessionInfo *info = NULL;
  g_autoptr (GError) snapshot_error = NULL;
  WickLiveStream *stream
    = wick_live_stream_attach (connection, strict, &info, &snapshot_error, &error);
  g_assert_no_error (error);
  g_assert_no_error (snapshot_error);
  g_assert_true (wick_live_stream_has_snapshot (stream));
  wick_live_session_info_free (info);
  return stream;
}

static char *
check_file (const char *text)
{
  g_autofree char *path = g_build_filename (runtime_dir, "snapshot-strict.jsonl", NULL);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  const char *argv[] = { g_getenv ("WICK_TRACE"), "check", path, NULL };
  char *out = NULL;
  int status = 0;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL,
                               &status, &error));
  g_assert_no_error (error);
  return out;
}

static void
test_snapshot_in_process (void)
{
  WickSession *session = open_session ();
  memory (session, "weights", 4096, WICK_MEMORY_ALLOC, WICK_CATEGORY_PARAMETER);
  memory (session, "momentum", 1024, WICK_MEMORY_ALLOC, WICK_CATEGORY_OPTIMIZER);
  memory (session, "scratch", 512, WICK_MEMORY_ALLOC, WICK_CATEGORY_ACTIVATION);
  memory (session, "scratch", 512, WICK_MEMORY_FREE, WICK_CATEGORY_ACTIVATION);

  WickLiveStream *extended = attach (session, FALSE);
  WickLiveStream *strict = attach (session, TRUE);
  /* After the attach: frees of snapshot storages pair with the snapshot. */
  memory (session, "momentum", 1024, WICK_MEMORY_FREE, WICK_CATEGORY_OPTIMIZER);
  memory (session, "late", 256, WICK_MEMORY_ALLOC, WICK_CATEGORY_ACTIVATION);
  memory (session, "late", 256, WICK_MEMORY_FREE, WICK_CATEGORY_ACTIVATION);
  memory (session, "weights", 4096, WICK_MEMORY_FREE, WICK_CATEGORY_PARAMETER);
  WickError error = { "" };
  WickSpanId measured = wick_measurement_begin (session, "measured", &error);
  g_assert_cmpuint (measured, !=, 0);
  wick_span_end (session, measured);
  g_assert_true (wick_session_finish (session, &error));

  g_autoptr (GString) lines = g_string_new (NULL);
  wick_live_stream_drain (extended, 0, collect, lines);
  wick_live_stream_finish (extended, "cut", collect, lines);
  g_assert_cmpuint (count (lines->str, "\"wick_snapshot\":true"), ==, 2);
  g_assert_cmpuint (count (lines->str, "\"kind\":\"wick_attach_snapshot\""), ==, 1);
  /* the header rides on meta, beside wick_attach */
  const char *first_end = strchr (lines->str, '\n');
  g_assert_nonnull (first_end);
  g_autofree char *meta = g_strndup (lines->str, first_end - lines->str);
  g_assert_true (g_str_has_prefix (meta, "{\"kind\":\"meta\""));
  g_assert_nonnull (strstr (meta, "\"wick_attach\":{"));
  g_assert_nonnull (strstr (meta, ",\"wick_records\":[{\"kind\":\"wick_attach_snapshot\","));
  g_assert_nonnull (strstr (meta, "\"allocated_bytes\":5120"));
  g_assert_nonnull (strstr (lines->str, "\"allocated_bytes\":5120"));
  g_assert_null (strstr (lines->str, "\"storage_id\":\"scratch\""));
  g_assert_cmpuint (count (lines->str, "\"storage_id\":\"weights\""), ==, 2);
  g_assert_cmpuint (wick_live_stream_get_skipped_frees (extended), ==, 0);

  g_autoptr (GString) strict_lines = g_string_new (NULL);
  wick_live_stream_drain (strict, 0, collect, strict_lines);
  wick_live_stream_finish (strict, "cut", collect, strict_lines);
  g_assert_null (strstr (strict_lines->str, "wick_"));
  g_assert_cmpuint (count (strict_lines->str, "\"action\":\"alloc\""), ==, 3);
  g_assert_cmpuint (count (strict_lines->str, "\"action\":\"free\""), ==, 3);
  g_autofree char *verdict = check_file (strict_lines->str);
  g_test_message ("%s", verdict);
  g_assert_nonnull (strstr (verdict, "structurally valid"));
  g_assert_nonnull (strstr (verdict, "(0 errors"));
  g_assert_null (strstr (verdict, "unpaired_free"));
  g_assert_null (strstr (verdict, "retained_allocations"));
  wick_live_stream_free (extended);
  wick_live_stream_free (strict);
  wick_session_close (session);
}

/* A record in both the ring and the snapshot (committed after the reader
 * began, before the snapshot) comes out once. */
static void
test_snapshot_overlap (void)
{
  WickSession *session = open_session ();
  g_autoptr (GError) gerror = NULL;
  g_autoptr (WickLiveConnection) connection
    = wick_live_connection_new (wick_session_get_control_socket_path (session), &gerror);
  g_assert_no_error (gerror);
  WickLiveStream *stream = wick_live_stream_new (wick_session_get_ring_fd (session), TRUE, &gerror);
  g_assert_no_error (gerror);
  memory (session, "between", 2048, WICK_MEMORY_ALLOC, WICK_CATEGORY_PARAMETER);
  g_assert_true (wick_live_stream_request_snapshot (stream, connection, &gerror));
  g_assert_no_error (gerror);
  memory (session, "between", 2048, WICK_MEMORY_FREE, WICK_CATEGORY_PARAMETER);
  g_autoptr (GString) lines = g_string_new (NULL);
  wick_live_stream_drain (stream, 0, collect, lines);
  g_assert_cmpuint (count (lines->str, "\"action\":\"alloc\""), ==, 1);
  g_assert_cmpuint (count (lines->str, "\"action\":\"free\""), ==, 1);
  g_assert_cmpuint (wick_live_stream_get_snapshot_duplicates (stream), ==, 1);
  wick_live_stream_free (stream);
  wick_session_close (session);
}

/* wick-demo registers embedding (4 MiB), trunk and head before it trains. */
#define DEMO_MODULE_BYTES (4194304u + 394240u + 8192u)

static guint64
parameter_bytes (const char *lines)
{
  guint64 total = 0;
  for (const char *p = strstr (lines, "\"category\":\"parameter\""); p != NULL;
       p = strstr (p + 1, "\"category\":\"parameter\""))
    {
      const char *start = p;
      while (start > lines && start[-1] != '\n')
        start--;
      if (strncmp (start, "{\"kind\":\"memory\"", 16) != 0 || strstr (start, "\"action\":\"alloc\"") > p)
        continue;
      const char *bytes = strstr (start, "\"bytes\":");
      if (bytes != NULL && bytes < p)
        total += g_ascii_strtoull (bytes + 8, NULL, 10);
    }
  return total;
}

static void
test_snapshot_late_attach_demo (void)
{
  const char *demo = g_getenv ("WICK_DEMO");
  g_assert_nonnull (demo);
  const char *argv[] = { demo, "--quiet", "--rate", "50", NULL };
  GPid pid = 0;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_spawn_async (NULL, (char **)argv, NULL,
                                G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                                wick_test_die_with_parent, NULL, &pid, &error));
  char *socket_path = live_test_wait_for_socket (pid);
  /* Late: the demo allocated its parameters, registered them as modules, and
   * has trained a few steps since (a new reader sees only what comes after
   * it; the allocations are the snapshot's to tell). */
  live_test_wait_for_modules (socket_path, 3);
  live_test_wait_for_spans (socket_path, "train_step", 3);
  g_autoptr (WickLiveConnection) connection = wick_live_connection_new (socket_path, &error);
  g_assert_no_error (error);
  WickLiveSessionInfo *info = NULL;
  g_autoptr (GError) snapshot_error = NULL;
  WickLiveStream *stream = wick_live_stream_attach (connection, TRUE, &info, &snapshot_error, &error);
  g_assert_no_error (error);
  g_assert_no_error (snapshot_error);
  g_assert_cmpuint (wick_live_stream_get_snapshot_allocated_bytes (stream), >=, DEMO_MODULE_BYTES);
  g_autoptr (GString) lines = g_string_new (NULL);
  wick_live_stream_drain (stream, 0, collect, lines); /* the first drain: the first frame */
  guint64 bytes = parameter_bytes (lines->str);
  g_test_message ("first drain: %u bytes of lines, %u memory lines", (guint)lines->len,
                  count (lines->str, "\"kind\":\"memory\""));
  g_test_message ("parameter bytes at the first drain: %" G_GUINT64_FORMAT, bytes);
  g_assert_cmpuint (bytes, >=, DEMO_MODULE_BYTES);
  wick_live_stream_free (stream);
  wick_live_session_info_free (info);
  g_free (socket_path);
  kill (pid, SIGTERM);
  int status = wick_test_wait_child (pid, LIVE_TEST_WAIT_S, "wick-demo (after SIGTERM)");
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  g_spawn_close_pid (pid);
}

/* The attach snapshot carries each live allocation's address: the stream's
 * snapshot alloc records have the "wick_address" the process recorded (none
 * for one recorded without), and the categories from records then match them
 * to an allocator snapshot's blocks at those addresses. */
static void
test_snapshot_addresses (void)
{
  static const struct
  {
    const char *storage;
    guint64 address, bytes;
    WickMemoryCategory category;
  } live[] = {
    { "weights", 0x7f2000000000u, 4u << 20, WICK_CATEGORY_PARAMETER },
    { "momentum", 0x7f2000400000u, 2u << 20, WICK_CATEGORY_OPTIMIZER },
    { "grad", 0x7f2000600000u, 1u << 20, WICK_CATEGORY_GRADIENT },
    { "noaddr", 0, 4096, WICK_CATEGORY_ACTIVATION },
  };
  const char *python = "/usr/bin/python3";
  WickSession *session = open_session ();
  static const uint64_t shape[] = { 4 };
  WickError error = { "" };
  for (gsize i = 0; i < G_N_ELEMENTS (live); i++)
    {
      WickMemoryRecord record = {
        .timestamp_ns = WICK_NOW, .storage_id = live[i].storage, .tensor_id = live[i].storage,
        .span = 1, .device = "cuda:0", .bytes = live[i].bytes, .action = WICK_MEMORY_ALLOC,
        .shape = shape, .rank = 1, .dtype = "f32", .category = live[i].category,
        .address = live[i].address,
      };
      g_assert_true (wick_session_record_memory (session, &record, &error));
    }
  WickLiveStream *stream = attach (session, FALSE);
  g_assert_true (wick_session_finish (session, &error));
  g_autoptr (GString) lines = g_string_new (NULL);
  wick_live_stream_drain (stream, 0, collect, lines);
  wick_live_stream_finish (stream, "cut", collect, lines);
  wick_live_stream_free (stream);
  wick_session_close (session);

  /* the lines, as wick-trace attach writes them */
  g_assert_cmpuint (count (lines->str, "\"wick_snapshot\":true"), ==, G_N_ELEMENTS (live));
  for (gsize i = 0; i < G_N_ELEMENTS (live); i++)
    {
      g_autofree char *storage = g_strdup_printf ("\"storage_id\":\"%s\"", live[i].storage);
      const char *at = strstr (lines->str, storage);
      g_assert_nonnull (at);
      const char *end = strchr (at, '\n');
      g_autofree char *line = g_strndup (at, end - at);
      g_assert_nonnull (strstr (line, "\"wick_snapshot\":true"));
      if (live[i].address == 0)
        g_assert_null (strstr (line, "wick_address"));
      else
        {
          g_autofree char *address
            = g_strdup_printf ("\"wick_address\":\"0x%" G_GINT64_MODIFIER "x\"", live[i].address);
          g_assert_nonnull (strstr (line, address));
        }
    }

  /* the document the app builds of them */
  g_autofree char *trace = g_build_filename (runtime_dir, "snapshot-addresses.jsonl", NULL);
  g_assert_true (g_file_set_contents (trace, lines->str, -1, NULL));
  g_autoptr (WickDocument) document = wick_document_new_with_extensions (TRUE);
  g_autoptr (GError) gerror = NULL;
  g_assert_true (wick_document_load_file (document, trace, NULL, NULL, NULL, &gerror));
  g_assert_no_error (gerror);
  guint n = 0;
  const WickMemoryEvent *memory = wick_document_get_memory (document, &n);
  g_assert_cmpuint (n, ==, G_N_ELEMENTS (live));
  for (guint i = 0; i < n; i++)
    {
      gboolean found = FALSE;
      for (gsize j = 0; j < G_N_ELEMENTS (live); j++)
        if (memory[i].bytes == live[j].bytes)
          {
            g_assert_cmpuint (memory[i].address, ==, live[j].address);
            found = TRUE;
          }
      g_assert_true (found);
    }
  g_assert_cmpuint (wick_document_get_bad_addresses (document, NULL), ==, 0);

  /* an allocator snapshot with a block at each address */
  if (!g_file_test (python, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_message ("no %s: the matcher's half is not run", python);
      g_unlink (trace);
      return;
    }
  g_autofree char *pickle = g_build_filename (runtime_dir, "snapshot-addresses.pickle", NULL);
  g_autoptr (GString) blocks = g_string_new (NULL);
  guint64 total = 0;
  for (gsize i = 0; i < G_N_ELEMENTS (live); i++)
    if (live[i].address != 0)
      {
        g_string_append_printf (blocks,
                                "{'address': %" G_GUINT64_FORMAT ", 'size': %" G_GUINT64_FORMAT
                                ", 'requested_size': %" G_GUINT64_FORMAT
                                ", 'state': 'active_allocated', 'frames': []},",
                                live[i].address, live[i].bytes, live[i].bytes);
        total += live[i].bytes;
      }
  g_autofree char *script = g_strdup_printf (
    "import pickle, sys\n"
    "blocks = [%s]\n"
    "seg = {'device': 0, 'address': %" G_GUINT64_FORMAT ", 'total_size': %" G_GUINT64_FORMAT ",\n"
    "       'allocated_size': %" G_GUINT64_FORMAT ", 'active_size': %" G_GUINT64_FORMAT ",\n"
    "       'requested_size': %" G_GUINT64_FORMAT ", 'stream': 0, 'segment_type': 'large',\n"
    "       'segment_pool_id': (0, 0), 'is_expandable': False, 'frames': [], 'blocks': blocks}\n"
    "pickle.dump({'segments': [seg], 'device_traces': [[]]}, open(sys.argv[1], 'wb'), protocol=4)\n",
    blocks->str, live[0].address, total, total, total, total);
  const char *argv[] = { python, "-c", script, pickle, NULL };
  int status = 0;
  g_assert_true (g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL,
                               NULL, &status, &gerror));
  g_assert_no_error (gerror);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  WickMemorySnapshot *snapshot = wick_memory_snapshot_load (pickle, NULL, NULL, NULL, &gerror);
  g_assert_no_error (gerror);
  g_assert_nonnull (snapshot);
  WickSnapshotCategories *categories = wick_snapshot_categories_new (snapshot, document);
  const WickSnapshotMatchCounts *counts = wick_snapshot_categories_get_counts (categories);
  g_test_message ("allocations %" G_GUINT64_FORMAT ", live matched %" G_GUINT64_FORMAT
                  ", from records %" G_GUINT64_FORMAT ", records without address %"
                  G_GUINT64_FORMAT,
                  counts->allocations, counts->live_matched, counts->from_record,
                  counts->records_without_address);
  g_assert_cmpuint (counts->live, ==, 3);
  g_assert_cmpuint (counts->live_matched, ==, 3);
  g_assert_cmpuint (counts->live_ambiguous, ==, 0);
  g_assert_cmpuint (counts->from_record, ==, 3);
  g_assert_cmpuint (counts->records_without_address, ==, 1);
  g_assert_cmpuint (counts->lifetimes_matched, ==, 3);
  guint64 bytes[WICK_SNAPSHOT_N_CATEGORIES] = { 0 };
  wick_snapshot_categories_at_snapshot (categories, bytes);
  for (gsize i = 0; i < G_N_ELEMENTS (live); i++)
    if (live[i].address != 0)
      g_assert_cmpuint (bytes[live[i].category], ==, live[i].bytes);
  wick_snapshot_categories_free (categories);
  wick_memory_snapshot_free (snapshot);
  g_unlink (pickle);
  g_unlink (trace);
}

/* A snapshot allocation's "address" from a hostile peer: anything but "0x"
 * and 1 to 16 hex digits, not zero, refuses the snapshot and names why. */
static void
test_snapshot_bad_address (void)
{
  static const struct
  {
    const char *value, *why;
  } cases[] = {
    { "\"0x7f00\"", NULL },
    { "140737488355328", "not a string" },
    { "null", "not a string" },
    { "\"7f00\"", "not \"0x\" and hex digits" },
    { "\"0x\"", "not \"0x\" and hex digits" },
    { "\"0x1g\"", "not \"0x\" and hex digits" },
    { "\"0x\\u0031\"", "not \"0x\" and hex digits" },
    { "\"0x1ffffffffffffffff\"", "more than 16 hex digits" },
    { "\"0x0\"", "zero" },
  };
  WickSession *session = open_session ();
  g_autofree char *path = g_build_filename (runtime_dir, "snapshot-bad-address", NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *text = g_strdup_printf (
        "{\"kind\":\"wick_attach_snapshot\",\"timestamp_ns\":10,\"allocations\":1,"
        "\"allocated_bytes\":64,\"incomplete\":false,\"modules\":0,\"stages\":0}\n"
        "{\"kind\":\"wick_snapshot_allocation\",\"timestamp_ns\":5,\"storage_id\":\"a\","
        "\"tensor_id\":\"a\",\"span_id\":\"s1\",\"device\":\"cuda:0\",\"bytes\":64,"
        "\"shape\":[16],\"dtype\":\"f32\",\"category\":\"activation\",\"address\":%s}\n",
        cases[i].value);
      g_assert_true (g_file_set_contents (path, text, -1, NULL));
      g_autoptr (GError) error = NULL;
      WickLiveStream *stream = wick_live_stream_new (wick_session_get_ring_fd (session), FALSE,
                                                     &error);
      g_assert_no_error (error);
      int fd = g_open (path, O_RDONLY, 0);
      g_assert_cmpint (fd, >=, 0);
      gboolean ok = wick_live_stream_apply_snapshot (stream, fd, &error);
      close (fd);
      if (cases[i].why == NULL)
        {
          g_assert_no_error (error);
          g_assert_true (ok);
        }
      else
        {
          g_assert_false (ok);
          g_assert_nonnull (error);
          g_autofree char *expected
            = g_strdup_printf ("attach snapshot line 2: \"address\" is not an address (%s)",
                               cases[i].why);
          g_assert_cmpstr (error->message, ==, expected);
        }
      wick_live_stream_free (stream);
    }
  g_unlink (path);
  wick_session_close (session);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  runtime_dir = live_test_runtime_dir_new ("wick-snapshot-XXXXXX");
  g_test_add_func ("/live/snapshot/in-process", test_snapshot_in_process);
  g_test_add_func ("/live/snapshot/ring-and-snapshot-overlap", test_snapshot_overlap);
  g_test_add_func ("/live/snapshot/late-attach-demo", test_snapshot_late_attach_demo);
  g_test_add_func ("/live/snapshot/addresses", test_snapshot_addresses);
  g_test_add_func ("/live/snapshot/bad-address", test_snapshot_bad_address);
  int status = g_test_run ();
  live_test_runtime_dir_remove (runtime_dir);
  return status;
}
