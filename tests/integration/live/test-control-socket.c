/* test-control-socket.c — the control socket of an in-process session, talked
 * to through the live client over a real Unix socket: hello with the ring's
 * memfd, exact error replies to malformed, oversize and unknown messages, a
 * mark reaching the ring, the directory's permission checks, stale socket
 * removal, and 100 attach/detach cycles that leak no fd, mapping or memory.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <glib/gstdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "live-test-util.h"
#include "client/wick-live-client-private.h"
#include "client/wick-live-stream-private.h"

static char *runtime_dir;

static WickSession *
open_session (void)
{
  WickSession *session = live_test_open_session ("live.test", TRUE);
  g_assert_nonnull (wick_session_get_control_socket_path (session));
  return session;
}

static WickLiveConnection *
connect_to (WickSession *session)
{
  g_autoptr (GError) error = NULL;
  WickLiveConnection *connection
    = wick_live_connection_new (wick_session_get_control_socket_path (session), &error);
  g_assert_no_error (error);
  return connection;
}

static JsonObject *
request_raw (WickLiveConnection *connection, const char *body)
{
  g_autoptr (GError) error = NULL;
  JsonObject *reply
    = wick_live_connection_request_raw (connection, body, strlen (body), 5000, &error);
  g_assert_no_error (error);
  return reply;
}

static void
assert_error_reply (JsonObject *reply, const char *message)
{
  g_assert_false (json_object_get_boolean_member (reply, "ok"));
  g_assert_cmpstr (json_object_get_string_member (reply, "error"), ==, message);
  g_assert_cmpint (json_object_get_int_member (reply, "v"), ==, 1);
}

static void
test_hello (void)
{
  WickSession *session = open_session ();
  const char *path = wick_session_get_control_socket_path (session);
  g_autofree char *prefix = g_strdup_printf ("%s/wick/%d-", runtime_dir, (int)getpid ());
  g_assert_true (g_str_has_prefix (path, prefix));
  g_assert_true (g_str_has_suffix (path, ".sock"));
  struct stat st;
  g_assert_cmpint (stat (path, &st), ==, 0);
  g_assert_true (S_ISSOCK (st.st_mode));
  g_assert_cmpint (st.st_mode & 0777, ==, 0600);

  g_autoptr (WickLiveConnection) connection = connect_to (session);
  g_autoptr (GError) error = NULL;
  int ring_fd = -1;
  g_autoptr (WickLiveSessionInfo) info = wick_live_connection_hello (connection, &ring_fd, &error);
  g_assert_no_error (error);
  g_assert_cmpint (info->pid, ==, getpid ());
  g_assert_cmpstr (info->program, ==, wick_session_get_program (session));
  g_assert_cmpstr (info->entrypoint, ==, "live.test");
  g_assert_cmpstr (info->policy, ==, "drop");
  g_assert_cmpstr (info->run_id, ==, wick_session_get_run_id (session));
  g_assert_cmpuint (info->started_unix_ns, ==, wick_session_get_start_unix_ns (session));
  g_assert_cmpuint (info->dropped, ==, 0);
  g_assert_cmpuint (strlen (info->started), ==, strlen ("2026-01-01T00:00:00.000Z"));
  g_assert_cmpint (ring_fd, >=, 0);

  /* The fd is the session's ring: a reader maps it and sees this session. */
  g_autoptr (WickLiveStream) stream = wick_live_stream_new (ring_fd, FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpint (wick_live_stream_get_info (stream)->pid, ==, getpid ());
  g_assert_cmpstr (wick_live_stream_get_info (stream)->entrypoint, ==, "live.test");
  close (ring_fd);

  /* Sessions listing finds it. */
  g_autoptr (GPtrArray) sessions = wick_live_list_sessions (&error);
  g_assert_no_error (error);
  g_assert_cmpuint (sessions->len, ==, 1);
  g_assert_cmpstr (((WickLiveSessionInfo *)sessions->pdata[0])->socket_path, ==, path);
  g_autofree char *found = wick_live_find_socket (getpid (), &error);
  g_assert_cmpstr (found, ==, path);
  g_assert_null (wick_live_find_socket (1, &error));
  g_assert_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_NOT_FOUND);

  g_autofree char *kept_path = g_strdup (path);
  wick_session_close (session);
  g_assert_false (g_file_test (kept_path, G_FILE_TEST_EXISTS));
}

static void
test_error_replies (void)
{
  WickSession *session = open_session ();
  g_autoptr (WickLiveConnection) connection = connect_to (session);
  JsonObject *reply;

  reply = request_raw (connection, "not json");
  assert_error_reply (reply,
                      "malformed control message at byte 0: a request must be a JSON object");
  json_object_unref (reply);
  reply = request_raw (connection, "{\"v\":1,\"command\":\"format-disk\"}");
  assert_error_reply (reply, "unknown command \"format-disk\": expected hello, list, evict, "
                             "restore, restore-all, capture, release, mark or snapshot");
  json_object_unref (reply);
  reply = request_raw (connection, "{\"v\":9,\"command\":\"list\"}");
  assert_error_reply (reply, "unsupported control protocol version: this session speaks \"v\": 1");
  json_object_unref (reply);
  reply = request_raw (connection, "{\"v\":1,\"command\":\"evict\"}");
  assert_error_reply (reply, "command \"evict\" needs the string member \"module\"");
  json_object_unref (reply);
  reply = request_raw (connection,
                       "{\"v\":1,\"command\":\"evict\",\"module\":\"m\",\"tier\":\"tape\"}");
  assert_error_reply (reply, "member \"tier\" must be \"auto\", \"disk\" or \"ram\"");
  json_object_unref (reply);
  reply = request_raw (connection, "{\"v\":1,\"command\":\"restore\",\"module\":\"m\"}");
  assert_error_reply (reply, "the process registered no weight modules");
  json_object_unref (reply);
  reply = request_raw (connection, "{\"v\":1,\"command\":\"capture\",\"stage\":\"nope\"}");
  assert_error_reply (reply, "no stage named \"nope\" is registered");
  json_object_unref (reply);
  reply = request_raw (connection, "{\"v\":1,\"command\":\"mark\",\"label\":\"\"}");
  assert_error_reply (reply, "a mark's label must be 1 to 1024 bytes");
  json_object_unref (reply);

  /* After all that, the connection still works. */
  reply = request_raw (connection, "{\"v\":1,\"command\":\"list\"}");
  g_assert_true (json_object_get_boolean_member (reply, "ok"));
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (reply, "stages")), ==, 0);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (reply, "modules")), ==, 0);
  json_object_unref (reply);

  wick_session_close (session);
}

static void
test_oversize_frame (void)
{
  WickSession *session = open_session ();
  const char *path = wick_session_get_control_socket_path (session);
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un address = { .sun_family = AF_UNIX };
  g_strlcpy (address.sun_path, path, sizeof address.sun_path);
  g_assert_cmpint (connect (fd, (struct sockaddr *)&address, sizeof address), ==, 0);
  unsigned char header[4] = { 0x01, 0x00, 0x01, 0x00 }; /* 65537 */
  g_assert_cmpint (send (fd, header, 4, MSG_NOSIGNAL), ==, 4);

  unsigned char reply_header[4];
  g_assert_cmpint (recv (fd, reply_header, 4, MSG_WAITALL), ==, 4);
  guint32 length = reply_header[0] | reply_header[1] << 8 | reply_header[2] << 16;
  g_autofree char *body = g_malloc0 (length + 1);
  g_assert_cmpint (recv (fd, body, length, MSG_WAITALL), ==, (int)length);
  g_assert_cmpstr (body, ==,
                   "{\"v\":1,\"ok\":false,\"error\":\"control frame announces 65537 bytes: the "
                   "limit is 1 to 65536 bytes\"}");
  /* A frame that cannot be resynchronised closes the connection. */
  char byte;
  g_assert_cmpint (recv (fd, &byte, 1, 0), ==, 0);
  close (fd);
  wick_session_close (session);
}

typedef struct
{
  gboolean found;
} MarkSearch;

static void
find_mark (const char *line, gsize length, gpointer user_data)
{
  MarkSearch *search = user_data;
  if (strstr (line, "\"kind\":\"wick_mark\"") != NULL && strstr (line, "epoch 1") != NULL)
    search->found = TRUE;
}

static void
test_mark_reaches_ring (void)
{
  WickSession *session = open_session ();
  g_autoptr (WickLiveConnection) connection = connect_to (session);
  g_autoptr (GError) error = NULL;
  int ring_fd = -1;
  g_autoptr (WickLiveSessionInfo) info = wick_live_connection_hello (connection, &ring_fd, &error);
  g_assert_no_error (error);
  g_assert_nonnull (info);
  g_autoptr (WickLiveStream) stream = wick_live_stream_new (ring_fd, FALSE, &error);
  close (ring_fd);
  g_autoptr (JsonObject) request = wick_live_request_new ("mark");
  json_object_set_string_member (request, "label", "epoch 1");
  g_autoptr (JsonObject) reply
    = wick_live_connection_request (connection, request, 5000, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (wick_live_reply_check (reply, &error));
  g_assert_cmpstr (json_object_get_string_member (reply, "label"), ==, "epoch 1");
  /* the mark rides on the next trace record drained after it (no
   * line of a wick_ kind), here a span the session records after it */
  MarkSearch search = { FALSE };
  wick_live_stream_drain (stream, 0, find_mark, &search);
  wick_span_end (session, wick_span_begin (session, "after-mark", WICK_SPAN_FUNCTION));
  wick_live_stream_drain (stream, 0, find_mark, &search);
  g_assert_true (search.found);
  wick_session_close (session);
}

static void
test_directory_checks (void)
{
  char path[256];
  WickError error = { "" };
  g_assert_true (wick_control_directory (path, sizeof path, &error));
  g_autofree char *expected = g_build_filename (runtime_dir, "wick", NULL);
  g_assert_cmpstr (path, ==, expected);
  struct stat st;
  g_assert_cmpint (stat (path, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0700);

  g_assert_cmpint (chmod (path, 0755), ==, 0);
  g_assert_false (wick_control_directory (path, sizeof path, &error));
  g_autofree char *message
    = g_strdup_printf ("control directory %s has mode 0755; it must be 0700", expected);
  g_assert_cmpstr (error.message, ==, message);
  g_assert_cmpint (chmod (expected, 0700), ==, 0);

  /* A symlink planted in place of the directory is refused. */
  g_autofree char *real = g_build_filename (runtime_dir, "elsewhere", NULL);
  g_assert_cmpint (g_mkdir (real, 0700), ==, 0);
  g_autofree char *moved = g_build_filename (runtime_dir, "wick.moved", NULL);
  g_assert_cmpint (rename (expected, moved), ==, 0);
  g_assert_cmpint (symlink (real, expected), ==, 0);
  g_assert_false (wick_control_directory (path, sizeof path, &error));
  g_autofree char *symlink_message = g_strdup_printf (
    "control directory %s is not a directory (a symlink or file is refused)", expected);
  g_assert_cmpstr (error.message, ==, symlink_message);
  g_assert_cmpint (unlink (expected), ==, 0);
  g_assert_cmpint (rename (moved, expected), ==, 0);
  g_assert_cmpint (rmdir (real), ==, 0);
}

/* Leaves a bound, closed socket file at @name in the control directory. */
static void
plant_dead_socket (const char *name)
{
  g_autofree char *path = g_build_filename (runtime_dir, "wick", name, NULL);
  int fd = socket (AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un address = { .sun_family = AF_UNIX };
  g_strlcpy (address.sun_path, path, sizeof address.sun_path);
  g_assert_cmpint (bind (fd, (struct sockaddr *)&address, sizeof address), ==, 0);
  close (fd);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  /* Older than the grace a socket gets between its bind and its listen. */
  struct timespec old[2] = { { time (NULL) - 10, 0 }, { time (NULL) - 10, 0 } };
  g_assert_cmpint (utimensat (AT_FDCWD, path, old, AT_SYMLINK_NOFOLLOW), ==, 0);
}

static void
test_control_off_unless_enabled (void)
{
  g_unsetenv ("WICK_CONTROL");
  WickSession *session = live_test_open_session ("live.test", FALSE);
  g_assert_null (wick_session_get_control_socket_path (session));
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) none = wick_live_list_sessions (&error);
  g_assert_cmpuint (none->len, ==, 0);
  wick_session_close (session);

  g_setenv ("WICK_CONTROL", "1", TRUE);
  session = live_test_open_session ("live.test", FALSE);
  g_unsetenv ("WICK_CONTROL");
  g_assert_nonnull (wick_session_get_control_socket_path (session));
  g_autoptr (GPtrArray) one = wick_live_list_sessions (&error);
  g_assert_cmpuint (one->len, ==, 1);
  wick_session_close (session);
}

static void
test_stale_sockets (void)
{
  WickSession *session = open_session ();
  pid_t child = fork ();
  if (child == 0)
    _exit (0);
  g_assert_cmpint (waitpid (child, NULL, 0), ==, child);
  g_autofree char *dead_pid = g_strdup_printf ("%d-0.sock", (int)child);
  g_autofree char *refusing = g_strdup_printf ("%d-99.sock", (int)getpid ());
  plant_dead_socket (dead_pid);
  plant_dead_socket (refusing);
  g_assert_cmpuint (wick_control_remove_stale_sockets (), ==, 2);
  g_autofree char *dead_path = g_build_filename (runtime_dir, "wick", dead_pid, NULL);
  g_assert_false (g_file_test (dead_path, G_FILE_TEST_EXISTS));
  /* The live session's socket stays and still answers. */
  g_assert_true (g_file_test (wick_session_get_control_socket_path (session), G_FILE_TEST_EXISTS));
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) sessions = wick_live_list_sessions (&error);
  g_assert_cmpuint (sessions->len, ==, 1);
  wick_session_close (session);
}

/* The stream reports exactly what the producer dropped: a hold reader that
 * never reads fills a small ring under the drop policy; once it lets go, the
 * producer announces the drops in the ring, and the stream counts them. */
static void
test_stream_counts_drops (void)
{
  WickRunInfo run = {
    .entrypoint = "live.test",
    .phase = WICK_PHASE_INFER,
    .capture_step = 1,
    .device = "cpu",
    .timing_mode = WICK_TIMING_HOST,
  };
  WickCaptureContract contract = { .measurement_scope = WICK_SCOPE_UNKNOWN };
  WickSessionOptions options = { .policy = WICK_RING_DROP, .ring_bytes = 256 * 1024 };
  WickError wick_error = { "" };
  WickSession *session = wick_session_open (&run, &contract, &options, &wick_error);
  g_assert_nonnull (session);
  WickRingReader *hold = wick_ring_reader_new_hold (wick_session_get_ring_fd (session), wick_session_get_cursors_fd (session), &wick_error);
  g_assert_nonnull (hold);
  g_autoptr (GError) error = NULL;
  g_autoptr (WickLiveStream) stream
    = wick_live_stream_new (wick_session_get_ring_fd (session), FALSE, &error);
  g_assert_no_error (error);
  for (int i = 0; i < 100000; i++)
    wick_span_end (session, wick_span_begin (session, "work", WICK_SPAN_FUNCTION));
  guint64 dropped = wick_session_get_dropped (session);
  g_assert_cmpuint (dropped, >, 0);
  wick_ring_reader_free (hold);
  /* The next record the thread writes carries the announcement. */
  wick_span_end (session, wick_span_begin (session, "after", WICK_SPAN_FUNCTION));
  wick_live_stream_drain (stream, 0, NULL, NULL);
  g_assert_cmpuint (wick_live_stream_get_dropped (stream), ==, dropped);
  g_assert_cmpuint (wick_live_stream_get_last_drop_ns (stream), >, 0);
  wick_session_close (session);
}

static guint
count_entries (const char *directory_or_file, gboolean lines)
{
  if (lines)
    {
      g_autofree char *text = NULL;
      g_assert_true (g_file_get_contents (directory_or_file, &text, NULL, NULL));
      guint n = 0;
      for (const char *p = text; *p != '\0'; p++)
        n += *p == '\n';
      return n;
    }
  g_autoptr (GDir) dir = g_dir_open (directory_or_file, 0, NULL);
  guint n = 0;
  while (g_dir_read_name (dir) != NULL)
    n++;
  return n;
}

static void
attach_detach_once (WickSession *session)
{
  g_autoptr (WickLiveConnection) connection = connect_to (session);
  g_autoptr (GError) error = NULL;
  int ring_fd = -1;
  g_autoptr (WickLiveSessionInfo) info = wick_live_connection_hello (connection, &ring_fd, &error);
  g_assert_no_error (error);
  g_assert_cmpint (info->pid, ==, getpid ());
  g_autoptr (WickLiveStream) stream = wick_live_stream_new (ring_fd, FALSE, &error);
  g_assert_no_error (error);
  close (ring_fd);
  wick_live_stream_drain (stream, 0, NULL, NULL);
}

/* The heap in use now (every arena: the server's thread has its own). */
static gint64
heap_in_use (void)
{
  struct mallinfo2 info = mallinfo2 ();
  return (gint64)info.uordblks;
}

static void
test_attach_detach_cycles (void)
{
  WickSession *session = open_session ();
  /* The session's own sockets: its listener. A connection adds one on each
   * side; the server's end closes once it has read our close. */
  guint sockets = wick_test_count_fds (0, "socket:");
  for (int i = 0; i < 5; i++)
    attach_detach_once (session);
  WICK_TEST_WAIT_UNTIL (wick_test_count_fds (0, "socket:") == sockets, 30,
                        "the server did not close its end of the 5 warm-up connections (%u "
                        "sockets open, %u before)",
                        wick_test_count_fds (0, "socket:"), sockets);
  guint fds = count_entries ("/proc/self/fd", FALSE);
  guint maps = count_entries ("/proc/self/maps", TRUE);
  gint64 before = heap_in_use ();
  for (int i = 0; i < 100; i++)
    attach_detach_once (session);
  /* The server closes its end of each connection (then frees its buffers)
   * after our close: wait for all of it. 100 leaked connections would be
   * >= 6.4 MB of client buffers; less than 64 KiB more may stay allocated. */
  WICK_TEST_WAIT_UNTIL (count_entries ("/proc/self/fd", FALSE) == fds
                          && count_entries ("/proc/self/maps", TRUE) == maps
                          && heap_in_use () - before < 64 * 1024,
                        30,
                        "100 attach/detach cycles left resources behind: %d fds (%d sockets), %d "
                        "mappings and %" G_GINT64_FORMAT " bytes of heap more than before",
                        (int)count_entries ("/proc/self/fd", FALSE) - (int)fds,
                        (int)wick_test_count_fds (0, "socket:") - (int)sockets,
                        (int)count_entries ("/proc/self/maps", TRUE) - (int)maps,
                        heap_in_use () - before);
  g_assert_cmpuint (count_entries ("/proc/self/fd", FALSE), ==, fds);
  g_assert_cmpuint (count_entries ("/proc/self/maps", TRUE), ==, maps);
  g_assert_cmpint (heap_in_use () - before, <, 64 * 1024);
  wick_session_close (session);
}

/* ---- never blocking on a peer, fairness, deadlines ---- */

static int
raw_connect (const char *path)
{
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un address = { .sun_family = AF_UNIX };
  g_strlcpy (address.sun_path, path, sizeof address.sun_path);
  g_assert_cmpint (connect (fd, (struct sockaddr *)&address, sizeof address), ==, 0);
  return fd;
}

/* Reads one reply frame (with a 5 s limit) into a new string, or NULL at EOF. */
static char *
raw_read_reply (int fd)
{
  struct timeval limit = { 5, 0 };
  setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  unsigned char header[4];
  if (recv (fd, header, 4, MSG_WAITALL) != 4)
    return NULL;
  guint32 length = header[0] | header[1] << 8 | header[2] << 16 | (guint32)header[3] << 24;
  g_assert_cmpuint (length, <=, 65536);
  char *body = g_malloc0 (length + 1);
  g_assert_cmpint (recv (fd, body, length, MSG_WAITALL), ==, (int)length);
  return body;
}

/* A real process with a control socket, stopped with SIGSTOP: listing it 12
 * times (the old blocking connect left two queued connections per listing and
 * hung at the 9th), finding it and opening a new session never wait on it. */
static void
test_stopped_peer (void)
{
  int ready[2];
  g_assert_cmpint (pipe (ready), ==, 0);
  pid_t child = fork ();
  if (child == 0)
    {
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      close (ready[0]);
      WickSession *session = open_session ();
      const char *path = wick_session_get_control_socket_path (session);
      if (write (ready[1], path, strlen (path) + 1) < 0)
        _exit (1);
      for (;;)
        pause ();
    }
  close (ready[1]);
  char child_path[256] = "";
  g_assert_cmpint (read (ready[0], child_path, sizeof child_path), >, 0);
  close (ready[0]);
  g_assert_cmpint (kill (child, SIGSTOP), ==, 0);
  int status;
  g_assert_cmpint (waitpid (child, &status, WUNTRACED), ==, child);
  g_assert_true (WIFSTOPPED (status));

  for (int i = 0; i < 12; i++)
    {
      gint64 start = g_get_monotonic_time ();
      g_autoptr (GError) error = NULL;
      g_autoptr (GPtrArray) all = wick_live_list_all_sessions (&error);
      g_assert_no_error (error);
      g_assert_cmpint (g_get_monotonic_time () - start, <, G_USEC_PER_SEC);
      g_assert_cmpuint (all->len, ==, 1);
      const WickLiveSessionInfo *info = all->pdata[0];
      g_assert_cmpint (info->pid, ==, child);
      g_assert_nonnull (info->problem);
      g_assert_nonnull (strstr (info->problem, "is not answering"));
      g_assert_nonnull (strstr (info->problem, "stopped"));
      g_autoptr (GPtrArray) answering = wick_live_list_sessions (&error);
      g_assert_cmpuint (answering->len, ==, 0);
    }
  /* The stopped session still exists: found, and its connection says why. */
  g_autoptr (GError) error = NULL;
  g_autofree char *found = wick_live_find_socket (child, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (found, ==, child_path);
  g_autoptr (WickLiveConnection) connection = wick_live_connection_new (found, &error);
  g_assert_null (connection);
  g_assert_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_TIMEOUT);
  g_assert_nonnull (strstr (error->message, "not answering"));
  g_clear_error (&error);

  /* Starting a session (it removes stale sockets first) does not wait either. */
  gint64 start = g_get_monotonic_time ();
  WickSession *session = open_session ();
  g_assert_cmpint (g_get_monotonic_time () - start, <, G_USEC_PER_SEC);
  g_assert_true (g_file_test (child_path, G_FILE_TEST_EXISTS)); /* not stale: it listens */
  g_autoptr (GPtrArray) answering = wick_live_list_sessions (&error);
  g_assert_cmpuint (answering->len, ==, 1);
  wick_session_close (session);

  /* Nothing was left queued on its listener: once resumed it answers at once. */
  g_assert_cmpint (kill (child, SIGCONT), ==, 0);
  g_assert_cmpint (waitpid (child, &status, WCONTINUED), ==, child);
  g_autoptr (WickLiveConnection) resumed = wick_live_connection_new (child_path, &error);
  g_assert_no_error (error);
  g_autoptr (WickLiveSessionInfo) info = wick_live_connection_hello (resumed, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (info->pid, ==, child);
  kill (child, SIGKILL);
  g_assert_cmpint (waitpid (child, NULL, 0), ==, child);
  g_assert_cmpuint (wick_control_remove_stale_sockets (), ==, 1);
}

/* How many of @fds still hold bytes their peer has not read. */
static int
count_unread (const int *fds, int n)
{
  int unread = 0;
  for (int i = 0; i < n; i++)
    unread += wick_test_socket_unread_by_peer (fds[i]) != 0;
  return unread;
}

/* 70 connections that each send half a frame header (more than the served
 * slots) get "busy" for a newcomer at once, then their frame deadline closes
 * them with a sentence, and the session serves everyone again. */
static void
test_frame_deadline (void)
{
  WickSession *session = open_session ();
  const char *path = wick_session_get_control_socket_path (session);
  int stuck[70];
  for (int i = 0; i < 70; i++)
    {
      stuck[i] = raw_connect (path);
      g_assert_cmpint (send (stuck[i], "\x10\x00", 2, MSG_NOSIGNAL), ==, 2);
    }
  /* Every served slot is taken once the server has read all 70 half headers
   * (their bytes have left our send queues). */
  WICK_TEST_WAIT_UNTIL (count_unread (stuck, 70) == 0, 10,
                        "the server did not read the half headers of %d of 70 connections",
                        count_unread (stuck, 70));
  gint64 start = g_get_monotonic_time ();
  g_autoptr (WickLiveConnection) newcomer = connect_to (session);
  g_autoptr (JsonObject) request = wick_live_request_new ("list");
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonObject) busy
    = wick_live_connection_request (newcomer, request, 5000, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_get_monotonic_time () - start, <, G_USEC_PER_SEC / 2);
  g_assert_false (json_object_get_boolean_member (busy, "ok"));
  g_assert_true (json_object_get_boolean_member (busy, "busy"));
  g_assert_true (g_str_has_prefix (json_object_get_string_member (busy, "error"), "busy: "));
  /* hello, listing and find keep working through it all. */
  g_autofree char *found = wick_live_find_socket (getpid (), &error);
  g_assert_no_error (error);

  for (int i = 0; i < 70; i++)
    {
      g_autofree char *reply = raw_read_reply (stuck[i]);
      g_assert_nonnull (reply);
      g_assert_nonnull (
        strstr (reply, "incomplete control frame: 2 of 4 bytes arrived in 2000 ms"));
      char byte;
      g_assert_cmpint (recv (stuck[i], &byte, 1, 0), ==, 0);
      close (stuck[i]);
    }
  g_autoptr (WickLiveConnection) later = connect_to (session);
  g_autoptr (JsonObject) again = wick_live_request_new ("list");
  g_autoptr (JsonObject) ok = wick_live_connection_request (later, again, 5000, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (json_object_get_boolean_member (ok, "ok"));
  wick_session_close (session);
}

/* One client pipelining thousands of requests it never reads does not delay
 * another's request: one request per connection is in flight, served in turn. */
static void
test_fair_service (void)
{
  WickSession *session = open_session ();
  const char *path = wick_session_get_control_socket_path (session);
  int greedy = raw_connect (path);
  const char *body = "{\"v\":1,\"command\":\"list\"}";
  guint32 length = strlen (body);
  GByteArray *frames = g_byte_array_new ();
  for (int i = 0; i < 20000; i++)
    {
      unsigned char header[4] = { length & 0xff, 0, 0, 0 };
      g_byte_array_append (frames, header, 4);
      g_byte_array_append (frames, (const guint8 *)body, length);
    }
  fcntl (greedy, F_SETFL, O_NONBLOCK);
  gsize sent = 0;
  for (int round = 0; round < 50 && sent < frames->len; round++)
    {
      ssize_t n = send (greedy, frames->data + sent, frames->len - sent, MSG_NOSIGNAL);
      if (n > 0)
        sent += n;
      else
        g_usleep (2000);
    }
  g_assert_cmpuint (sent, >, 100 * (4 + length));
  g_byte_array_unref (frames);
  /* The greedy client is being served: its first reply has arrived. */
  WICK_TEST_WAIT_UNTIL (wick_test_socket_readable (greedy) > 0, 10,
                        "the server answered none of the greedy client's %" G_GSIZE_FORMAT
                        " pipelined bytes",
                        sent);
  for (int i = 0; i < 5; i++)
    {
      g_autoptr (WickLiveConnection) other = connect_to (session);
      g_autoptr (JsonObject) request = wick_live_request_new ("list");
      g_autoptr (GError) error = NULL;
      gint64 start = g_get_monotonic_time ();
      g_autoptr (JsonObject) reply
        = wick_live_connection_request (other, request, 5000, NULL, &error);
      g_assert_no_error (error);
      g_assert_true (json_object_get_boolean_member (reply, "ok"));
      g_assert_cmpint (g_get_monotonic_time () - start, <, G_USEC_PER_SEC / 5);
    }
  close (greedy);
  wick_session_close (session);
}

/* WICK_CONTROL_MAX_SERVED (64) connections held open at once are all
 * served: each one's request is answered, none is told "busy" (the server
 * counted the new connection among the served before: 63 were). */
static void
test_served_limit (void)
{
  WickSession *session = open_session ();
  const char *path = wick_session_get_control_socket_path (session);
  WickLiveConnection *held[64];
  for (guint i = 0; i < G_N_ELEMENTS (held); i++)
    {
      g_autoptr (GError) error = NULL;
      held[i] = wick_live_connection_new (path, &error);
      g_assert_no_error (error);
    }
  for (guint i = 0; i < G_N_ELEMENTS (held); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (JsonObject) request = wick_live_request_new ("list");
      g_autoptr (JsonObject) reply = wick_live_connection_request (held[i], request, 10000, NULL, &error);
      g_assert_no_error (error);
      if (!json_object_get_boolean_member_with_default (reply, "ok", FALSE))
        g_error ("held connection %u of 64 was not served: %s", i + 1,
                 json_object_get_string_member_with_default (reply, "error", "?"));
    }
  for (guint i = 0; i < G_N_ELEMENTS (held); i++)
    wick_live_connection_free (held[i]);
  wick_session_close (session);
}

typedef struct
{
  const char *path;
  GMutex lock;
  GCond cond;
  int waiting;
  int answered, busy, failed;
  int queue_busy; /* busy because the requests ahead took too long, not for room */
  GString *failures;
} Crowd;

static gpointer
crowd_client (gpointer data)
{
  Crowd *crowd = data;
  g_mutex_lock (&crowd->lock);
  crowd->waiting--;
  g_cond_broadcast (&crowd->cond);
  while (crowd->waiting > 0)
    g_cond_wait (&crowd->cond, &crowd->lock);
  g_mutex_unlock (&crowd->lock);

  g_autoptr (GError) error = NULL;
  g_autoptr (WickLiveConnection) connection = wick_live_connection_new (crowd->path, &error);
  g_autoptr (JsonObject) reply = NULL;
  if (connection != NULL)
    {
      g_autoptr (JsonObject) request = wick_live_request_new ("list");
      reply = wick_live_connection_request (connection, request, 10000, NULL, &error);
    }
  g_mutex_lock (&crowd->lock);
  if (reply == NULL)
    {
      crowd->failed++;
      g_string_append_printf (crowd->failures, "%s\n", error->message);
    }
  else if (json_object_get_boolean_member_with_default (reply, "ok", FALSE))
    crowd->answered++;
  else if (json_object_get_boolean_member_with_default (reply, "busy", FALSE))
    {
      const char *why = json_object_get_string_member_with_default (reply, "error", "");
      crowd->busy++;
      crowd->queue_busy
        += strstr (why, "requests are ahead") != NULL || strstr (why, "has been running") != NULL;
    }
  else
    {
      crowd->failed++;
      g_string_append_printf (crowd->failures, "refused: %s\n",
                              json_object_get_string_member (reply, "error"));
    }
  g_mutex_unlock (&crowd->lock);
  return NULL;
}

/* 200 simultaneous clients: every one gets a reply (busy counts as one), none
 * a broken pipe or a reset; each of the 64 served slots either answers or,
 * when the requests queued ahead of it took longer than the queue wait (a
 * loaded machine), says so — never "no room". */
static void
test_crowd (void)
{
  WickSession *session = open_session ();
  Crowd crowd = { .path = wick_session_get_control_socket_path (session), .waiting = 200 };
  crowd.failures = g_string_new (NULL);
  g_mutex_init (&crowd.lock);
  g_cond_init (&crowd.cond);
  GThread *threads[200];
  for (int i = 0; i < 200; i++)
    threads[i] = g_thread_new ("crowd", crowd_client, &crowd);
  for (int i = 0; i < 200; i++)
    g_thread_join (threads[i]);
  g_test_message ("200 clients: %d answered, %d busy (%d of them queued too long), %d failed",
                  crowd.answered, crowd.busy, crowd.queue_busy, crowd.failed);
  if (crowd.failed > 0)
    g_printerr ("%s", crowd.failures->str);
  g_assert_cmpint (crowd.failed, ==, 0);
  g_assert_cmpint (crowd.answered + crowd.busy, ==, 200);
  g_assert_cmpint (crowd.answered, >, 0);
  g_assert_cmpint (crowd.answered + crowd.queue_busy, >=, 64);
  g_string_free (crowd.failures, TRUE);
  g_mutex_clear (&crowd.lock);
  g_cond_clear (&crowd.cond);
  wick_session_close (session);
}

/* An error reply that quotes a cut name cuts it between characters: the reply
 * is valid UTF-8 and valid JSON, and says the name up to the cut. */
static void
test_utf8_cut_replies (void)
{
  WickSession *session = open_session ();
  g_autoptr (WickLiveConnection) connection = connect_to (session);
  GString *name = g_string_new ("a");
  for (int i = 0; i < 40; i++)
    g_string_append (name, "\xc3\xa9"); /* é: byte 64 falls inside one */
  g_autofree char *body = g_strdup_printf ("{\"v\":1,\"command\":\"%s\"}", name->str);
  g_autoptr (JsonObject) reply = request_raw (connection, body);
  GString *expected = g_string_new ("unknown command \"a");
  for (int i = 0; i < 31; i++)
    g_string_append (expected, "\xc3\xa9");
  g_string_append (expected, "\": expected hello, list, evict, restore, restore-all, capture, "
                             "release, mark or snapshot");
  assert_error_reply (reply, expected->str);
  g_string_free (expected, TRUE);

  /* Invalid UTF-8 quoted back (a stage name is any bytes the parser took as a
   * valid string; a raw check through the socket): the reply stays valid. */
  g_autofree char *stage
    = g_strdup_printf ("{\"v\":1,\"command\":\"capture\",\"stage\":\"%s\"}", name->str);
  g_autoptr (JsonObject) stage_reply = request_raw (connection, stage);
  const char *text = json_object_get_string_member (stage_reply, "error");
  g_assert_true (g_utf8_validate (text, -1, NULL));
  g_string_free (name, TRUE);
  wick_session_close (session);
}

static guint
count_fds (void)
{
  g_autoptr (GDir) dir = g_dir_open ("/proc/self/fd", 0, NULL);
  guint n = 0;
  while (dir != NULL && g_dir_read_name (dir) != NULL)
    n++;
  return n;
}

/* Steps of a workload (a span begun and ended, as a training loop does) for
 * @ms; the slowest step in µs. */
static gint64
slowest_step (WickSession *session, int ms, guint *steps)
{
  gint64 end = g_get_monotonic_time () + ms * 1000, worst = 0;
  *steps = 0;
  while (g_get_monotonic_time () < end)
    {
      gint64 t0 = g_get_monotonic_time ();
      WickSpanId id = wick_span_begin (session, "step", WICK_SPAN_FUNCTION);
      wick_span_end (session, id);
      gint64 t = g_get_monotonic_time () - t0;
      worst = MAX (worst, t);
      (*steps)++;
    }
  return worst;
}

typedef struct
{
  const char *path;
  gint stop;
  guint sent_fds;
} Hostile;

/* Hostile clients on the workload's control socket, in a loop until told to
 * stop: fds passed with SCM_RIGHTS (the server reads with recv(), so the
 * kernel must close them, never the workload leak them), a 4 GiB length,
 * garbage, a slow-loris header one byte at a time, and many connections
 * opened and dropped. */
static gpointer
hostile_clients (gpointer data)
{
  Hostile *h = data;
  int null_fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  int loris = raw_connect (h->path);
  guint round = 0;
  while (!g_atomic_int_get (&h->stop))
    {
      /* 64 fds riding on a frame */
      int fd = raw_connect (h->path);
      int fds[64];
      for (int i = 0; i < 64; i++)
        fds[i] = null_fd;
      char frame[] = "\x19\0\0\0{\"command\":\"hello\",\"v\":1}";
      struct iovec iov = { frame, sizeof frame - 1 };
      union
      {
        char buffer[CMSG_SPACE (sizeof fds)];
        struct cmsghdr align;
      } control;
      struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buffer,
                            .msg_controllen = sizeof control.buffer };
      struct cmsghdr *cmsg = CMSG_FIRSTHDR (&msg);
      cmsg->cmsg_level = SOL_SOCKET;
      cmsg->cmsg_type = SCM_RIGHTS;
      cmsg->cmsg_len = CMSG_LEN (sizeof fds);
      memcpy (CMSG_DATA (cmsg), fds, sizeof fds);
      if (sendmsg (fd, &msg, MSG_NOSIGNAL) > 0)
        h->sent_fds += 64;
      g_free (raw_read_reply (fd));
      close (fd);
      /* a 4 GiB length, then garbage */
      fd = raw_connect (h->path);
      unsigned char huge[4] = { 0xff, 0xff, 0xff, 0xff };
      send (fd, huge, 4, MSG_NOSIGNAL);
      send (fd, "\x80\xff garbage \0\1\2", 14, MSG_NOSIGNAL);
      close (fd);
      fd = raw_connect (h->path);
      unsigned char junk[512];
      for (gsize i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)g_random_int ();
      junk[3] = 0; /* a plausible length */
      send (fd, junk, sizeof junk, MSG_NOSIGNAL);
      close (fd);
      /* the slow-loris: one byte of a header now and then */
      if (round % 8 == 0)
        send (loris, "\x10", 1, MSG_NOSIGNAL);
      /* a burst of connections opened and dropped */
      for (int i = 0; i < 16; i++)
        close (raw_connect (h->path));
      round++;
    }
  close (loris);
  close (null_fd);
  return NULL;
}

/* The workload's control socket under hostile clients:
 * the workload's step is not slowed past a bound measured against the same
 * run's quiet baseline, no fd passed to the socket stays open in the
 * workload, and the session still answers a hello afterwards. */
static void
test_hostile_clients_never_slow_the_step (void)
{
  WickSession *session = open_session ();
  guint quiet_steps, loud_steps;
  guint fds_before = count_fds ();
  gint64 quiet = slowest_step (session, 1500, &quiet_steps);
  Hostile h = { wick_session_get_control_socket_path (session), 0, 0 };
  GThread *thread = g_thread_new ("hostile", hostile_clients, &h);
  gint64 loud = slowest_step (session, 3000, &loud_steps);
  g_atomic_int_set (&h.stop, 1);
  g_thread_join (thread);
  g_usleep (300000); /* the server closes what it was given */
  guint fds_after = count_fds ();
  g_test_message ("steps: quiet %u in 1.5 s (slowest %" G_GINT64_FORMAT " us), under hostile "
                  "clients %u in 3 s (slowest %" G_GINT64_FORMAT " us); %u fds passed; fds "
                  "%u before, %u after",
                  quiet_steps, quiet, loud_steps, loud, h.sent_fds, fds_before, fds_after);
  g_assert_cmpuint (h.sent_fds, >, 0);
  /* no passed fd kept (the server's own client fds are closed by now) */
  g_assert_cmpuint (fds_after, <=, fds_before + 2);
  /* the step never waits on the control thread: a scheduling hiccup on a
   * loaded machine, never a wait for a client */
  g_assert_cmpint (loud, <, MAX (quiet * 4, 250000));
  g_autoptr (WickLiveConnection) connection = connect_to (session);
  g_autoptr (JsonObject) hello = wick_live_request_new ("hello");
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonObject) reply
    = wick_live_connection_request (connection, hello, 5000, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (reply);
  wick_session_close (session);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  runtime_dir = live_test_runtime_dir_new ("wick-live-test-XXXXXX");
  g_test_add_func ("/control/socket/hello", test_hello);
  g_test_add_func ("/control/socket/error-replies", test_error_replies);
  g_test_add_func ("/control/socket/oversize-frame", test_oversize_frame);
  g_test_add_func ("/control/socket/mark", test_mark_reaches_ring);
  g_test_add_func ("/control/socket/directory-checks", test_directory_checks);
  g_test_add_func ("/control/socket/stale-sockets", test_stale_sockets);
  g_test_add_func ("/control/socket/off-unless-enabled", test_control_off_unless_enabled);
  g_test_add_func ("/control/stream/drop-counts", test_stream_counts_drops);
  g_test_add_func ("/control/socket/attach-detach-cycles", test_attach_detach_cycles);
  g_test_add_func ("/control/socket/stopped-peer", test_stopped_peer);
  g_test_add_func ("/control/socket/frame-deadline", test_frame_deadline);
  g_test_add_func ("/control/socket/fair-service", test_fair_service);
  g_test_add_func ("/control/socket/served-limit", test_served_limit);
  g_test_add_func ("/control/socket/200-clients", test_crowd);
  g_test_add_func ("/control/socket/utf8-cut-replies", test_utf8_cut_replies);
  g_test_add_func ("/control/socket/hostile-clients", test_hostile_clients_never_slow_the_step);
  int status = g_test_run ();
  live_test_runtime_dir_remove (runtime_dir);
  return status;
}
