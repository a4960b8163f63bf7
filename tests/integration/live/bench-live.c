/* bench-live.c — what the live path costs, against baselines of the same run.
 *
 * 1. Control round trip: `list` requests on one connection to an in-process
 *    session, against the floor of the same transport: a request and reply of
 *    the same sizes echoed over a Unix socket pair by a thread.
 * 2. Attach pipeline: a producer thread records spans at full speed for 2 s
 *    while a WickLiveStream (ring reader + JSONL formatter, what wick-trace
 *    attach and the app run) drains it on another thread; reports records
 *    produced, lines formatted per second, and records lost or dropped.
 * Prints figures; never fails on timing.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "live-test-util.h"
#include "client/wick-live-stream-private.h"

#define ROUND_TRIPS 2000

static WickSession *
open_session (void)
{
  return live_test_open_session ("bench.live", TRUE);
}

typedef struct
{
  int fd;
  gsize request;
  gsize reply;
} Echo;

static gboolean
read_full (int fd, char *buffer, gsize length)
{
  gsize got = 0;
  while (got < length)
    {
      ssize_t n = read (fd, buffer + got, length - got);
      if (n <= 0)
        return FALSE;
      got += (gsize)n;
    }
  return TRUE;
}

static gpointer
echo_thread (gpointer data)
{
  Echo *echo = data;
  g_autofree char *buffer = g_malloc0 (MAX (echo->request, echo->reply));
  while (read_full (echo->fd, buffer, echo->request))
    if (write (echo->fd, buffer, echo->reply) != (ssize_t)echo->reply)
      break;
  return NULL;
}

static double
floor_round_trip_us (gsize request, gsize reply)
{
  int pair[2];
  g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM, 0, pair), ==, 0);
  Echo echo = { pair[1], request, reply };
  GThread *thread = g_thread_new ("echo", echo_thread, &echo);
  g_autofree char *buffer = g_malloc0 (MAX (request, reply));
  gint64 start = g_get_monotonic_time ();
  for (int i = 0; i < ROUND_TRIPS; i++)
    {
      g_assert_cmpint (write (pair[0], buffer, request), ==, (ssize_t)request);
      g_assert_true (read_full (pair[0], buffer, reply));
    }
  gint64 elapsed = g_get_monotonic_time () - start;
  close (pair[0]);
  g_thread_join (thread);
  close (pair[1]);
  return (double)elapsed / ROUND_TRIPS;
}

static void
bench_round_trip (void)
{
  WickSession *session = open_session ();
  g_autoptr (WickLiveConnection) connection
    = wick_live_connection_new (wick_session_get_control_socket_path (session), NULL);
  g_autoptr (JsonObject) request = wick_live_request_new ("list");
  g_autoptr (JsonObject) first
    = wick_live_connection_request (connection, request, 5000, NULL, NULL);
  g_assert_nonnull (first);
  gint64 start = g_get_monotonic_time ();
  for (int i = 0; i < ROUND_TRIPS; i++)
    {
      JsonObject *reply = wick_live_connection_request (connection, request, 5000, NULL, NULL);
      g_assert_nonnull (reply);
      json_object_unref (reply);
    }
  double control_us = (double)(g_get_monotonic_time () - start) / ROUND_TRIPS;
  /* The same bytes: a framed request and the reply of an empty session. */
  double floor_us = floor_round_trip_us (4 + 26, 4 + 120);
  printf ("control round trip (list): %.1f us; floor (socketpair echo, same sizes): %.1f us; "
          "ratio %.2fx\n",
          control_us, floor_us, control_us / floor_us);
  wick_session_close (session);
}

typedef struct
{
  WickSession *session;
  atomic_bool stop;
  guint64 spans;
} Producer;

static gpointer
producer_thread (gpointer data)
{
  Producer *producer = data;
  WickString name = wick_intern (producer->session, "work");
  while (!atomic_load (&producer->stop))
    {
      for (int i = 0; i < 256; i++)
        wick_span_end (producer->session,
                       wick_span_begin_interned (producer->session, name, WICK_SPAN_FUNCTION));
      producer->spans += 256;
    }
  return NULL;
}

static void
count_line (const char *line, gsize length, gpointer user_data)
{
  guint64 *bytes = user_data;
  *bytes += length + 1;
}

static void
bench_attach_pipeline (void)
{
  WickSession *session = open_session ();
  g_autoptr (GError) error = NULL;
  g_autoptr (WickLiveStream) stream
    = wick_live_stream_new (wick_session_get_ring_fd (session), FALSE, &error);
  g_assert_no_error (error);
  Producer producer = { session, false, 0 };
  GThread *thread = g_thread_new ("producer", producer_thread, &producer);
  guint64 bytes = 0;
  gint64 start = g_get_monotonic_time ();
  while (g_get_monotonic_time () - start < 2 * G_USEC_PER_SEC)
    if (wick_live_stream_drain (stream, 4096, count_line, &bytes) == 0)
      g_usleep (1000);
  atomic_store (&producer.stop, true);
  g_thread_join (thread);
  wick_live_stream_drain (stream, 0, count_line, &bytes);
  double seconds = (double)(g_get_monotonic_time () - start) / G_USEC_PER_SEC;
  guint64 produced = 2 * producer.spans;
  printf (
    "attach pipeline: producer %.2f M records/s (span begin+end at full speed); reader "
    "formatted %.2f M lines/s (%.0f MB/s of JSONL); lost by the reader %" G_GUINT64_FORMAT
    ", dropped by the producer %" G_GUINT64_FORMAT " (%.1f%% of %" G_GUINT64_FORMAT " records)\n",
    produced / seconds / 1e6, wick_live_stream_get_lines (stream) / seconds / 1e6,
    bytes / seconds / 1e6, wick_live_stream_get_lost (stream), wick_session_get_dropped (session),
    100.0 * (double)(wick_live_stream_get_lost (stream) + wick_session_get_dropped (session))
      / (double)MAX (produced, 1),
    produced);
  wick_session_close (session);
}

int
main (int argc, char **argv)
{
  g_autofree char *runtime_dir = g_dir_make_tmp ("wick-bench-live-XXXXXX", NULL);
  g_setenv ("XDG_RUNTIME_DIR", runtime_dir, TRUE);
  bench_round_trip ();
  bench_attach_pipeline ();
  g_autofree char *socket_dir = g_build_filename (runtime_dir, "wick", NULL);
  g_rmdir (socket_dir);
  g_rmdir (runtime_dir);
  return 0;
}
