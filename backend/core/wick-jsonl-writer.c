/* wick-jsonl-writer.c — the session's JSONL file: a thread that drains the
 * ring as a hold reader and writes what the WickJsonlFormatter makes of it.
 *
 * The recording threads never format or write: this thread does, polling the
 * ring (50 µs after a busy drain, up to 2 ms when idle; the producer never
 * signals, it makes no system call). wick_jsonl_writer_sync (at finish) wakes
 * it and waits until everything committed so far is in the file, terminal
 * included. A write error is kept and reported by sync and stop; the thread
 * goes on draining so that a blocked producer is never stuck on a full disk.
 */
#include "wick-session-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct WickJsonlWriter
{
  WickSession *session;
  FILE *file;
  char *path;
  WickRingReader *reader;
  WickJsonlFormatter *formatter;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  pthread_cond_t synced;
  bool stop;
  uint64_t sync_requested;
  uint64_t sync_done;
  int write_errno;
};

static void
write_line (const char *line, size_t length, void *user_data)
{
  WickJsonlWriter *writer = user_data;
  if (writer->write_errno != 0)
    return;
  if (fwrite (line, 1, length, writer->file) != length || fputc ('\n', writer->file) == EOF)
    writer->write_errno = errno ? errno : EIO;
}

static bool
on_record (const WickRingRecord *record, void *user_data)
{
  WickJsonlWriter *writer = user_data;
  wick_jsonl_formatter_feed (writer->formatter, record, write_line, writer);
  return true;
}

static long
drain_once (WickJsonlWriter *writer)
{
  return wick_ring_reader_drain (writer->reader, 0, on_record, writer, NULL);
}

/* Everything committed is in the file: finish the trace if the session has
 * finished, flush. Called with the lock held. */
static void
complete_sync (WickJsonlWriter *writer)
{
  while (drain_once (writer) > 0)
    ;
  if (wick_session_is_finished (writer->session))
    wick_jsonl_formatter_finish (writer->formatter, "the session ended without a terminal record",
                                 write_line, writer);
  if (fflush (writer->file) != 0 && writer->write_errno == 0)
    writer->write_errno = errno ? errno : EIO;
  writer->sync_done = writer->sync_requested;
  pthread_cond_broadcast (&writer->synced);
}

static void *
writer_thread (void *data)
{
  WickJsonlWriter *writer = data;
  long idle_us = 50;
  pthread_mutex_lock (&writer->lock);
  while (!writer->stop)
    {
      long delivered = drain_once (writer);
      if (writer->sync_requested != writer->sync_done)
        {
          complete_sync (writer);
          continue;
        }
      if (delivered > 0)
        {
          idle_us = 50;
          if (delivered > 1024)
            continue;
        }
      else if (idle_us < 2000)
        idle_us *= 2;
      struct timespec deadline;
      clock_gettime (CLOCK_REALTIME, &deadline);
      deadline.tv_nsec += idle_us * 1000;
      if (deadline.tv_nsec >= 1000000000)
        {
          deadline.tv_sec++;
          deadline.tv_nsec -= 1000000000;
        }
      pthread_cond_timedwait (&writer->wake, &writer->lock, &deadline);
    }
  pthread_mutex_unlock (&writer->lock);
  return NULL;
}

static void
writer_free (WickJsonlWriter *writer)
{
  if (writer->file != NULL)
    fclose (writer->file);
  wick_ring_reader_free (writer->reader);
  wick_jsonl_formatter_free (writer->formatter);
  pthread_mutex_destroy (&writer->lock);
  pthread_cond_destroy (&writer->wake);
  pthread_cond_destroy (&writer->synced);
  free (writer->path);
  free (writer);
}

WickJsonlWriter *
wick_jsonl_writer_start (WickSession *session, const char *path, WickError *error)
{
  WickJsonlWriter *writer = calloc (1, sizeof *writer);
  if (writer == NULL)
    {
      wick_set_error (error, WICK_ERROR_NO_MEMORY, "out of memory for the JSONL writer");
      return NULL;
    }
  writer->session = session;
  pthread_mutex_init (&writer->lock, NULL);
  pthread_cond_init (&writer->wake, NULL);
  pthread_cond_init (&writer->synced, NULL);
  writer->path = strdup (path);
  writer->file = fopen (path, "we");
  if (writer->file == NULL)
    {
      wick_set_error (error, wick_error_code_from_errno (errno), "open trace %s: %s", path, strerror (errno));
      writer_free (writer);
      return NULL;
    }
  setvbuf (writer->file, NULL, _IOFBF, 1 << 20);
  writer->formatter = wick_jsonl_formatter_new (session->strict);
  writer->reader = wick_ring_reader_new_private_hold (session, error);
  if (writer->formatter == NULL || writer->reader == NULL || writer->path == NULL)
    {
      if (writer->reader != NULL)
        wick_set_error (error, WICK_ERROR_NO_MEMORY, "out of memory for the JSONL writer");
      writer_free (writer);
      return NULL;
    }
  int status = pthread_create (&writer->thread, NULL, writer_thread, writer);
  if (status != 0)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "starting the JSONL writer thread failed: %s", strerror (status));
      writer_free (writer);
      return NULL;
    }
  return writer;
}

bool
wick_jsonl_writer_sync (WickJsonlWriter *writer, WickError *error)
{
  pthread_mutex_lock (&writer->lock);
  uint64_t ticket = ++writer->sync_requested;
  pthread_cond_signal (&writer->wake);
  while (writer->sync_done < ticket && !writer->stop)
    pthread_cond_wait (&writer->synced, &writer->lock);
  int write_errno = writer->write_errno;
  pthread_mutex_unlock (&writer->lock);
  if (write_errno != 0)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "writing trace %s: %s", writer->path, strerror (write_errno));
      return false;
    }
  return true;
}

void
wick_jsonl_writer_stop (WickJsonlWriter *writer)
{
  pthread_mutex_lock (&writer->lock);
  writer->stop = true;
  pthread_cond_signal (&writer->wake);
  pthread_mutex_unlock (&writer->lock);
  pthread_join (writer->thread, NULL);
  writer->sync_requested++;
  complete_sync (writer);
  if (writer->write_errno != 0)
    fprintf (stderr, "wick: writing trace %s: %s\n", writer->path, strerror (writer->write_errno));
  writer_free (writer);
}
