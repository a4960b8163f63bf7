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
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

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
  /* Whole lines only: lines collect in buffer and go out
   * with write(); file_bytes is the file's length after the last complete
   * write, always a line boundary. A failed or short write is cut back to
   * it; from the first failure on, lines are counted (lost_lines), not
   * written, and the loss is said on stderr at once and by sync/stop. */
  char *buffer;
  size_t used;
  size_t buffered_lines;
  uint64_t file_bytes;
  uint64_t lost_lines;
  uint32_t rings_broken;
};

#define WRITER_BUFFER_BYTES (1u << 20)

/* A trace path may be a FIFO (`mkfifo t; gzip < t > t.gz & wick-demo --trace
 * t`). The file is opened non-blocking, so a FIFO nobody reads refuses the
 * session at once instead of hanging it in open(), and stays non-blocking: a
 * reader that stops taking data makes write() return EAGAIN, the writer waits
 * for room at most PIPE_STALL_MS and then treats the pipe as failed (its lines
 * counted as lost), so neither the writer thread nor the host's finish ever
 * waits forever on another process. Regular files are not affected. */
#define PIPE_STALL_MS 5000

static void
note_write_failure (WickJsonlWriter *writer, int error_number, uint64_t lines)
{
  if (ftruncate (fileno (writer->file), (off_t)writer->file_bytes) == 0)
    (void)lseek (fileno (writer->file), (off_t)writer->file_bytes, SEEK_SET);
  writer->lost_lines += lines;
  atomic_fetch_add (&writer->session->header->writer_lost, lines);
  if (writer->write_errno == 0)
    {
      writer->write_errno = error_number ? error_number : EIO;
      if (writer->write_errno == ETIMEDOUT)
        fprintf (stderr,
                 "wick: writing trace %s: its reader took no data for %d ms; the file ends "
                 "at its last whole line (%llu bytes) and the records after it are counted as "
                 "lost\n",
                 writer->path, PIPE_STALL_MS, (unsigned long long)writer->file_bytes);
      else
        fprintf (stderr,
                 "wick: writing trace %s: %s; the file ends at its last whole line (%llu bytes) "
                 "and the records after it are counted as lost\n",
                 writer->path, strerror (writer->write_errno),
                 (unsigned long long)writer->file_bytes);
    }
}

static void
flush_buffer (WickJsonlWriter *writer)
{
  size_t done = 0;
  while (done < writer->used && writer->write_errno == 0)
    {
      ssize_t n = write (fileno (writer->file), writer->buffer + done, writer->used - done);
      if (n > 0)
        done += (size_t)n;
      else if (n < 0 && errno == EINTR)
        continue;
      else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        {
          struct pollfd pfd = { .fd = fileno (writer->file), .events = POLLOUT };
          int ready;
          do
            ready = poll (&pfd, 1, PIPE_STALL_MS);
          while (ready < 0 && errno == EINTR);
          if (ready > 0)
            continue;
          /* a stalled reader: whatever part of a line went out stays cut */
          size_t kept_lines = 0;
          for (size_t i = 0; i < done; i++)
            kept_lines += writer->buffer[i] == '\n';
          writer->file_bytes += done;
          note_write_failure (writer, ETIMEDOUT, writer->buffered_lines - kept_lines);
          break;
        }
      else
        {
          /* keep the whole lines that made it, cut the rest */
          int error_number = n < 0 ? errno : ENOSPC;
          size_t keep = done, kept_lines = 0;
          while (keep > 0 && writer->buffer[keep - 1] != '\n')
            keep--;
          for (size_t i = 0; i < keep; i++)
            kept_lines += writer->buffer[i] == '\n';
          writer->file_bytes += keep;
          note_write_failure (writer, error_number, writer->buffered_lines - kept_lines);
          break;
        }
    }
  if (writer->write_errno == 0)
    writer->file_bytes += writer->used;
  writer->used = 0;
  writer->buffered_lines = 0;
}

static void
write_line (const char *line, size_t length, void *user_data)
{
  WickJsonlWriter *writer = user_data;
  if (writer->write_errno != 0)
    {
      writer->lost_lines++;
      atomic_fetch_add (&writer->session->header->writer_lost, 1);
      return;
    }
  if (writer->used + length + 1 > WRITER_BUFFER_BYTES)
    flush_buffer (writer);
  if (length + 1 > WRITER_BUFFER_BYTES)
    {
      /* a line longer than the buffer: on its own */
      char *copy = malloc (length + 1);
      if (copy == NULL)
        {
          note_write_failure (writer, ENOMEM, 1);
          return;
        }
      memcpy (copy, line, length);
      copy[length] = '\n';
      char *saved = writer->buffer;
      writer->buffer = copy;
      writer->used = length + 1;
      writer->buffered_lines = 1;
      flush_buffer (writer);
      writer->buffer = saved;
      free (copy);
      return;
    }
  memcpy (writer->buffer + writer->used, line, length);
  writer->buffer[writer->used + length] = '\n';
  writer->used += length + 1;
  writer->buffered_lines++;
}

static bool
on_record (const WickRingRecord *record, void *user_data)
{
  WickJsonlWriter *writer = user_data;
  /* A broken ring: said at once, and in the file (the
   * reader's wick_ring_broken and wick_lost lines; strict: the terminal). */
  if (record->kind == WICK_RING_RECORD_EXTENSION
      && strcmp (record->extension.kind, "wick_ring_broken") == 0)
    {
      writer->rings_broken++;
      fprintf (stderr, "wick: writing trace %s: the ring broke (%s); what it holds after that "
               "is counted as lost\n",
               writer->path, record->extension.json_fields);
    }
  wick_jsonl_formatter_feed (writer->formatter, record, write_line, writer);
  return true;
}

static long
drain_once (WickJsonlWriter *writer)
{
  /* span records straight to lines; the others through on_record */
  return wick_ring_reader_drain_jsonl (writer->reader, 0, writer->formatter, write_line, writer,
                                       on_record, writer, NULL);
}

/* Everything committed is in the file: finish the trace if the session has
 * finished, flush. Called with the lock held. */
static void
complete_sync (WickJsonlWriter *writer)
{
  while (drain_once (writer) > 0)
    ;
  if (wick_session_is_finished (writer->session))
    wick_jsonl_formatter_finish (writer->formatter,
                                 writer->rings_broken > 0
                                   ? "the session's terminal record could not be read: a ring "
                                     "broke (see its wick_ring_broken record)"
                                   : "the session ended without a terminal record",
                                 write_line, writer);
  flush_buffer (writer);
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
  free (writer->buffer);
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
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0666);
  if (fd < 0 && errno == ENXIO)
    {
      wick_set_error (error, WICK_ERROR_IO,
                      "open trace %s: it is a FIFO that no process has open for reading; "
                      "start its reader first (a session never waits for another process)",
                      path);
      writer_free (writer);
      return NULL;
    }
  writer->file = fd < 0 ? NULL : fdopen (fd, "w");
  if (writer->file == NULL)
    {
      int error_number = errno;
      if (fd >= 0)
        close (fd);
      wick_set_error (error, wick_error_code_from_errno (error_number), "open trace %s: %s", path,
                      strerror (error_number));
      writer_free (writer);
      return NULL;
    }
  writer->buffer = malloc (WRITER_BUFFER_BYTES);
  if (writer->buffer == NULL)
    {
      wick_set_error (error, WICK_ERROR_NO_MEMORY, "out of memory for the JSONL writer");
      writer_free (writer);
      return NULL;
    }
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
  uint64_t lost = writer->lost_lines;
  pthread_mutex_unlock (&writer->lock);
  if (write_errno != 0)
    {
      wick_set_error (error, wick_error_code_from_errno (write_errno),
                      "writing trace %s: %s; %llu lines lost, the file ends at its last whole "
                      "line",
                      writer->path, strerror (write_errno), (unsigned long long)lost);
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
    fprintf (stderr, "wick: writing trace %s: %s; %llu lines lost\n", writer->path,
             strerror (writer->write_errno), (unsigned long long)writer->lost_lines);
  writer_free (writer);
}
