/* wick-live-session.c — a window attached to a live process (see the header). */
#include "config.h"

#include "wick-live-session.h"
#include "wick-live-session-private.h"

#include <glib-unix.h>
#include <glib/gi18n.h>

#include "client/wick-line-spool.h"
#include "client/wick-live-stream.h"
#include "wick-record.h"
#include "client/wick-remote-channel.h"
#include "client/wick-remote-session.h"
#include "wick-settings.h"
#include "wick-stages-panel.h"
#include "wick-weights-panel.h"

/* The live analysis (health, coverage) is redone at most every 250 ms, and
 * never more often than ten times its own cost, so that a long session keeps
 * the UI's frame rate (analysis is linear in the document). */
#define ANALYZE_INTERVAL_US 250000
/* The time the timeline shows when the first records arrive (follow mode then
 * keeps this width and slides it along). */
#define INITIAL_WINDOW_NS G_GUINT64_CONSTANT (3000000000)
/* While records stream, the following timeline applies the new records and
 * redraws at most this many times a second (records arriving in between
 * are coalesced into the next update), not at the frame clock's rate: the
 * plot's redraw is most of the app's CPU while following a flood
 * (docs/performance.md, "Live CPU per record"). WICK_LIVE_FOLLOW_HZ
 * overrides it (0: no cap); the end of the run lifts it. */
#define FOLLOW_HZ_DEFAULT 10
/* While the window loses records, the counts in the lost and dropped banners
 * are renewed at most this often (a new text is a new layout and a frame of
 * the whole window; a flood changes them at every commit): the first loss is
 * shown at once, the counts after it within the interval, the end's at once. */
#define LOSS_BANNER_INTERVAL_US (G_USEC_PER_SEC / 2)
/* The worker: records read from the ring per drain call, lines and time per
 * batch, batches in flight (the bounded queue: a worker without room waits,
 * and what the ring then overwrites is counted as lost), and how long it
 * sleeps once it caught up with the process. */
#define DRAIN_CHUNK 512
#define BATCH_MAX_LINES 2048
#define BATCH_MAX_US 8000
#define IN_FLIGHT 8
#define POLL_US 4000

/* What the worker hands the main thread: decoded lines and the stream's
 * counters as of the end of the batch. */
typedef struct
{
  WickLineBatch *lines;
  guint64 dropped, lost, records;
  guint64 spool_bytes; /* the spool's flushed bytes once this batch's lines were in */
  WickProducerState state;
  gboolean caught_up; /* the ring was empty when the batch was sent */
  gboolean end;       /* the stream ended: its terminal is in this batch */
  gboolean terminal;  /* ... the session's own terminal */
  char *broken;       /* a ring broke: the reader's sentence (else NULL) */
  guint epoch;        /* which view document the lines are for (a restart: +1) */
  guint64 epoch_first_record; /* the run's records before the view's first one */
  char *restart_error; /* a restart that failed (the view keeps growing) */
  /* a remote session (ssh://): the link's state, and why it failed */
  gboolean remote;
  guint64 link_bytes;
  guint64 link_node_lost;
  gint64 link_heard_us; /* when the node last sent anything */
  char *link_error;
} LiveBatch;

static void
live_batch_free (LiveBatch *batch)
{
  wick_line_batch_free (batch->lines);
  g_free (batch->broken);
  g_free (batch->restart_error);
  g_free (batch->link_error);
  g_free (batch);
}

/* The worker thread of a session (one per live window): drains the ring,
 * formats and decodes the lines and spools them for Save As…; no GTK call
 * ever runs there. The main thread only commits what is ready. */
typedef struct
{
  WickLiveStream *stream; /* the worker's alone while it runs: the whole run, spooled */
  /* After a restart of the view (history limit): the stream of a second
   * attach, which feeds the view (open spans and live allocations from its
   * own opening records and snapshot); @stream then feeds only the spool. */
  WickLiveStream *view;
  char *socket_path;
  guint64 history;      /* lines the view takes before it restarts; 0: no limit */
  guint64 epoch_lines;  /* lines the current view took */
  guint epoch;
  guint64 epoch_first_record;
  char *restart_error;
  guint64 sent_spool_bytes;
  WickLineDecoder *decoder;
  WickLineSpool *spool;
  LiveBatch *current;
  GAsyncQueue *batches; /* worker -> main thread */
  GAsyncQueue *tokens;  /* main thread -> worker: room for a batch */
  GAsyncQueue *recycled; /* main thread -> worker: committed line batches, emptied */
  GSource *ready;       /* its ready time is set by the worker */
  GMutex lock;
  GCond wake;
  gint stop;
  /* the thread and the main thread each hold one; the last to let go frees
   * the worker (a thread blocked on a frozen producer is let go of, never
   * waited for, when the window closes) */
  gint refs;
  gboolean exited; /* under lock */
  /* 1 while the main thread has a commit coming (ready time set, or in its
   * dispatch): then the worker leaves the ready time alone, so the gaps the
   * main thread leaves between commits hold */
  gint armed;
  GThread *thread;
  /* A remote session: records come from the node's frames on @link
   * (wick-remote-link.h) into the fed @stream; the producer's state is what
   * the node's END says, or DEAD once the link failed (@link_error). */
  WickRemoteLink *link;
  WickRemoteDecoder *remote_decoder;
  WickProducerState remote_state;
  char *link_error;
  guint64 link_node_lost;
  guint64 link_seen_bytes;
  gint64 link_heard_us;
} LiveWorker;

#define TOKEN GINT_TO_POINTER (1)

struct _WickLiveSession
{
  GObject parent_instance;
  WickWindow *window; /* weak */
  WickLiveSessionInfo *info;
  LiveWorker *worker;
  WickDocument *document;
  gint64 last_analyze_us;
  gint64 analyze_cost_us;
  gboolean analyze_pending;
  guint64 dropped, lost;
  guint64 shown_dropped;
  guint64 shown_lost;
  guint64 committed_spool_bytes;
  guint64 history;     /* the view's history limit in lines (0: none) */
  guint epoch;         /* view documents started over */
  guint64 prev_end_ns; /* the latest evidence of the views before this one */
  gboolean spool_error_shown;
  gboolean broken_shown;
  guint64 shown_broken_lost;
  char *broken_error; /* the reader's sentence once a ring broke, else NULL */
  gboolean ended;
  gboolean feed_failed;
  gboolean window_set;
  GtkWidget *weights_panel;
  GtkWidget *stages_panel;
  /* a remote session: the link's state line, updated once a second */
  gint64 link_shown_us;
  guint64 link_shown_bytes;
  gboolean link_lost_shown;
  char *link_lost; /* the lost banner's reason, once shown */
  /* a remote session: ssh's exit (its pidfd) and its stdout's hang-up,
   * watched here so the banner does not wait for the batches in flight */
  guint exit_watch;
  gint64 losses_shown_us; /* when the loss banners' counts were last renewed */
  guint losses_timeout;   /* renews them once the interval is over */
  guint hup_watch;
  gboolean hold_commits; /* tests: the main thread as if busy (no batch committed) */
  char *channel_url; /* a remote session's control channel, held while the window is */
};

G_DEFINE_FINAL_TYPE (WickLiveSession, wick_live_session, G_TYPE_OBJECT)

static const char *
end_reason (WickProducerState state)
{
  return state == WICK_PRODUCER_DEAD
           ? "capture cut: the process exited without finishing its trace"
           : "capture cut: the process stopped recording without a terminal record";
}

/* ---- the worker thread ---------------------------------------------------- */

typedef struct
{
  LiveWorker *worker;
  WickLiveLineFunc emit;
} RemoteFeed;

static gboolean
remote_feed_record (const WickRingRecord *record, gpointer user_data)
{
  RemoteFeed *feed = user_data;
  wick_live_stream_feed (feed->worker->stream, record, feed->emit, feed->worker);
  return TRUE;
}

static void
remote_fail (LiveWorker *worker, const char *message)
{
  if (worker->link_error == NULL)
    worker->link_error = g_strdup (message);
  worker->remote_state = WICK_PRODUCER_DEAD;
}

/* The remote counterpart of draining the ring: frames from the node until
 * none is waiting (TRUE: caught up), @max_lines lines or @max_us passed. A
 * link that fails or stays silent for WICK_REMOTE_IDLE_TIMEOUT_MS ends the
 * stream (what arrived is kept). */
static gboolean
remote_drain (LiveWorker *worker, WickLiveLineFunc emit, guint max_lines, gint64 max_us)
{
  gint64 start = g_get_monotonic_time ();
  RemoteFeed feed = { worker, emit };
  while (worker->remote_state == WICK_PRODUCER_RUNNING)
    {
      WickRemoteFrame frame;
      g_autoptr (GError) error = NULL;
      gint64 now = g_get_monotonic_time ();
      guint64 bytes = wick_remote_link_get_bytes_received (worker->link);
      if (bytes != worker->link_seen_bytes)
        {
          worker->link_seen_bytes = bytes;
          worker->link_heard_us = now;
        }
      if (!wick_remote_link_next (worker->link, &frame, 1, &error))
        {
          if (!g_error_matches (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_TIMEOUT))
            remote_fail (worker, error->message);
          else if (now - worker->link_heard_us > (gint64)WICK_REMOTE_IDLE_TIMEOUT_MS * 1000)
            {
              g_autofree char *message
                = g_strdup_printf ("%s sent nothing for %d s", wick_remote_link_get_name (worker->link),
                                   WICK_REMOTE_IDLE_TIMEOUT_MS / 1000);
              remote_fail (worker, message);
            }
          return TRUE;
        }
      worker->link_heard_us = g_get_monotonic_time ();
      switch (frame.type)
        {
          case WICK_REMOTE_RECORDS:
            if (!wick_remote_decode_records (worker->remote_decoder, frame.payload,
                                             remote_feed_record, &feed, &error))
              remote_fail (worker, error->message);
            break;
          case WICK_REMOTE_STATS:
            {
              WickRemoteStats stats;
              wick_remote_read_stats (frame.payload, &stats);
              worker->link_node_lost = stats.lost;
              wick_remote_stats_clear (&stats);
              break;
            }
          case WICK_REMOTE_END:
            {
              g_autofree char *state = wick_remote_read_end_state (frame.payload);
              worker->remote_state
                = g_strcmp0 (state, "dead") == 0 ? WICK_PRODUCER_DEAD : WICK_PRODUCER_FINISHED;
              break;
            }
          case WICK_REMOTE_ERROR:
            {
              g_autofree char *message = wick_remote_read_error (frame.payload, "?");
              remote_fail (worker, message);
              break;
            }
          default:
            {
              g_autofree char *message
                = g_strdup_printf ("%s sent a %s frame during the attach",
                                   wick_remote_link_get_name (worker->link),
                                   wick_remote_type_name (frame.type));
              remote_fail (worker, message);
              break;
            }
        }
      wick_remote_frame_clear (&frame);
      if ((max_lines > 0 && wick_line_batch_get_n_lines (worker->current->lines) >= max_lines)
          || (max_us > 0 && g_get_monotonic_time () - start >= max_us))
        return FALSE;
    }
  return TRUE;
}

static char *
worker_end_reason (LiveWorker *worker, WickProducerState state)
{
  if (worker->link_error != NULL)
    return g_strdup_printf ("capture cut: the remote link failed: %s", worker->link_error);
  return g_strdup (end_reason (state));
}

/* The view's records: as values, straight from the ring records (the
 * stream's record func), or a line to decode where the stream says so (the
 * meta). After a decode error the batch takes nothing more (the document
 * would not either); the lines still reach the spool. */
static void
view_on_record (WickRecordBuilder *builder, const char *line, gsize length, gpointer user_data)
{
  LiveWorker *worker = user_data;
  if (builder != NULL)
    wick_line_batch_add_built (worker->current->lines, worker->decoder, builder);
  else
    wick_line_batch_add (worker->current->lines, worker->decoder, line, length);
  worker->epoch_lines++;
}

static void
spool_on_line (const char *line, gsize length, gpointer user_data)
{
  LiveWorker *worker = user_data;
  wick_line_spool_append (worker->spool, line, length);
}

/* Drains @stream until nothing is left or @max_lines lines were taken into
 * the current batch (0: no limit); TRUE when it caught up. */
static gboolean
drain_all (LiveWorker *worker, WickLiveStream *stream, WickLiveLineFunc emit, guint max_lines,
           gint64 max_us)
{
  if (worker->link != NULL && stream == worker->stream)
    return remote_drain (worker, emit, max_lines, max_us);
  gint64 start = g_get_monotonic_time ();
  for (;;)
    {
      /* each drain returns within WICK_RING_READER_DRAIN_BUDGET_NS whatever
       * the producer does, so closing the window (stop) is seen at once */
      if (g_atomic_int_get (&worker->stop))
        return FALSE;
      if (wick_live_stream_drain (stream, DRAIN_CHUNK, emit, worker) == 0)
        return TRUE;
      if ((max_lines > 0 && wick_line_batch_get_n_lines (worker->current->lines) >= max_lines)
          || (max_us > 0 && g_get_monotonic_time () - start >= max_us))
        return FALSE;
    }
}

/* The view reached the history limit: a second attach starts a new view
 * from the newest records (its reader synthesizes the spans still open, its
 * snapshot the live allocations); the first stream keeps feeding the spool,
 * so Save As… still has the whole run. */
static void
restart_view (LiveWorker *worker)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GError) snapshot_error = NULL;
  g_autoptr (WickLiveSessionInfo) info = NULL;
  g_autoptr (WickLiveConnection) connection
    = wick_live_connection_new (worker->socket_path, &error);
  WickLiveStream *view = NULL;
  if (connection != NULL)
    view = wick_live_stream_attach (connection, FALSE, &info, &snapshot_error, &error);
  if (view == NULL)
    {
      worker->restart_error = g_strdup (error != NULL ? error->message : "no stream");
      worker->history = 0; /* keep the view growing rather than retry every batch */
      return;
    }
  g_clear_pointer (&worker->view, wick_live_stream_free);
  worker->view = view;
  /* the first stream feeds only the spool from now on */
  wick_live_stream_set_record_func (worker->stream, NULL);
  wick_live_stream_set_record_func (view, view_on_record);
  wick_line_decoder_free (worker->decoder);
  worker->decoder = wick_line_decoder_new (TRUE);
  worker->epoch++;
  worker->epoch_lines = 0;
  worker->epoch_first_record = wick_live_stream_get_records (worker->stream);
}

static gpointer
close_link_thread (gpointer link)
{
  wick_remote_link_close (link);
  return NULL;
}

/* A committed batch's lines back to the worker, emptied, for its next batch
 * (at most as many as can be in flight: the tokens and the one it fills). */
static void
recycle_lines (LiveWorker *worker, LiveBatch *batch)
{
  if (batch->lines == NULL || g_async_queue_length (worker->recycled) > IN_FLIGHT)
    return;
  wick_line_batch_reset (batch->lines);
  g_async_queue_push (worker->recycled, g_steal_pointer (&batch->lines));
}

static void
worker_destroy (LiveWorker *worker)
{
  g_source_unref (worker->ready);
  g_async_queue_unref (worker->batches);
  g_async_queue_unref (worker->tokens);
  g_async_queue_unref (worker->recycled);
  wick_live_stream_free (worker->stream);
  g_clear_pointer (&worker->view, wick_live_stream_free);
  /* the node's serve exits when its stdin closes; waiting for ssh to exit
   * runs off the main thread (a closing window must not stall the others) */
  if (worker->link != NULL)
    g_thread_unref (g_thread_new ("wick-link-close", close_link_thread,
                                  g_steal_pointer (&worker->link)));
  g_clear_pointer (&worker->remote_decoder, wick_remote_decoder_free);
  g_free (worker->link_error);
  g_free (worker->socket_path);
  g_free (worker->restart_error);
  wick_line_decoder_free (worker->decoder);
  wick_line_spool_free (worker->spool);
  g_mutex_clear (&worker->lock);
  g_cond_clear (&worker->wake);
  g_free (worker);
}

static void
worker_unref (LiveWorker *worker)
{
  if (g_atomic_int_dec_and_test (&worker->refs))
    worker_destroy (worker);
}

/* Sleeps up to @us unless told to stop. */
static void
worker_sleep (LiveWorker *worker, gint64 us)
{
  g_mutex_lock (&worker->lock);
  gint64 until = g_get_monotonic_time () + us;
  while (!g_atomic_int_get (&worker->stop))
    if (!g_cond_wait_until (&worker->wake, &worker->lock, until))
      break;
  g_mutex_unlock (&worker->lock);
}

static gpointer
worker_main (gpointer data)
{
  LiveWorker *worker = data;
  guint64 sent_dropped = 0, sent_lost = 0, sent_bytes = 0;
  gboolean sent_broken = FALSE;
  gboolean end = FALSE;
  while (!end && !g_atomic_int_get (&worker->stop))
    {
      if (g_async_queue_timeout_pop (worker->tokens, 100000) == NULL
          || g_atomic_int_get (&worker->stop))
        continue;
      if (worker->history > 0 && worker->epoch_lines >= worker->history)
        restart_view (worker);
      LiveBatch *batch = g_new0 (LiveBatch, 1);
      batch->lines = g_async_queue_try_pop (worker->recycled);
      if (batch->lines == NULL)
        batch->lines = wick_line_batch_new ();
      batch->epoch = worker->epoch;
      batch->epoch_first_record = worker->epoch_first_record;
      batch->restart_error = g_steal_pointer (&worker->restart_error);
      worker->current = batch;
      gboolean aligned = TRUE;
      if (worker->view == NULL)
        batch->caught_up
          = drain_all (worker, worker->stream, spool_on_line, BATCH_MAX_LINES, BATCH_MAX_US);
      else
        {
          /* The spool first, then the view up to the ring's end: the view
           * then holds every record the spool's flushed bytes hold since the
           * restart, so Save As…'s cut terminal comes after their evidence. */
          drain_all (worker, worker->stream, spool_on_line, 0, BATCH_MAX_US);
          wick_line_spool_flush (worker->spool, NULL);
          guint64 spooled = wick_line_spool_get_bytes (worker->spool);
          batch->caught_up
            = drain_all (worker, worker->view, NULL, 4 * BATCH_MAX_LINES, 4 * BATCH_MAX_US);
          aligned = batch->caught_up;
          batch->spool_bytes = aligned ? spooled : worker->sent_spool_bytes;
        }
      WickLiveStream *last = worker->view != NULL ? worker->view : worker->stream;
      WickProducerState state = worker->link != NULL
                                  ? worker->remote_state
                                  : wick_live_stream_get_producer_state (worker->stream);
      batch->terminal = wick_live_stream_has_terminal (last)
                        || wick_live_stream_has_terminal (worker->stream);
      if (batch->terminal
          || (state != WICK_PRODUCER_RUNNING && wick_live_stream_is_drained (worker->stream)))
        {
          g_autofree char *reason = worker_end_reason (worker, state);
          if (worker->view != NULL)
            {
              drain_all (worker, worker->stream, spool_on_line, 0, 0);
              drain_all (worker, worker->view, NULL, 0, 0);
              wick_live_stream_finish (worker->stream, reason, spool_on_line, worker);
              wick_live_stream_finish (worker->view, reason, NULL, worker);
            }
          else
            {
              /* the terminal came on one thread's ring: the others may still
               * hold records written before it (a reader behind the producer) */
              drain_all (worker, worker->stream, spool_on_line, 0, 0);
              wick_live_stream_finish (worker->stream, reason, spool_on_line, worker);
            }
          batch->terminal = wick_live_stream_has_terminal (worker->stream);
          end = aligned = TRUE;
        }
      worker->current = NULL;
      wick_line_spool_flush (worker->spool, NULL); /* an error is the main thread's to show */
      batch->state = state;
      batch->end = end;
      batch->dropped = wick_live_stream_get_dropped (worker->stream);
      batch->lost = MAX (wick_live_stream_get_lost (worker->stream),
                         worker->view != NULL ? wick_live_stream_get_lost (worker->view) : 0);
      batch->records = wick_live_stream_get_records (worker->stream);
      if (worker->view == NULL || end)
        batch->spool_bytes = wick_line_spool_get_bytes (worker->spool);
      worker->sent_spool_bytes = batch->spool_bytes;
      WickRingReaderStats stats;
      wick_live_stream_get_reader_stats (worker->stream, &stats);
      if (stats.broken_rings > 0)
        batch->broken = g_strdup (stats.first_error);
      if (worker->link != NULL)
        {
          batch->remote = TRUE;
          batch->link_bytes = wick_remote_link_get_bytes_received (worker->link);
          batch->link_node_lost = worker->link_node_lost;
          batch->link_heard_us = worker->link_heard_us;
          batch->link_error = g_strdup (worker->link_error);
        }
      if (!end && wick_line_batch_get_n_lines (batch->lines) == 0
          && batch->dropped == sent_dropped && batch->lost == sent_lost
          && (batch->broken == NULL || sent_broken) && batch->restart_error == NULL
          && batch->spool_bytes == sent_bytes)
        {
          /* nothing new: keep the room, look again shortly */
          recycle_lines (worker, batch);
          live_batch_free (batch);
          g_async_queue_push (worker->tokens, TOKEN);
          worker_sleep (worker, POLL_US);
          continue;
        }
      sent_dropped = batch->dropped;
      sent_lost = batch->lost;
      sent_broken = batch->broken != NULL;
      sent_bytes = batch->spool_bytes;
      gboolean caught_up = batch->caught_up;
      g_async_queue_push (worker->batches, batch);
      if (g_atomic_int_compare_and_exchange (&worker->armed, 0, 1))
        g_source_set_ready_time (worker->ready, 0);
      if (caught_up && !end)
        worker_sleep (worker, POLL_US);
    }
  g_mutex_lock (&worker->lock);
  worker->exited = TRUE;
  g_cond_broadcast (&worker->wake);
  g_mutex_unlock (&worker->lock);
  worker_unref (worker);
  return NULL;
}

static gboolean
ready_dispatch (GSource *source, GSourceFunc callback, gpointer user_data)
{
  g_source_set_ready_time (source, -1);
  return callback (user_data);
}

static GSourceFuncs ready_funcs = { NULL, NULL, ready_dispatch, NULL, NULL, NULL };

static gboolean on_ready (gpointer user_data);

static LiveWorker *
worker_start (WickLiveSession *session, WickLiveStream *stream, WickRemoteLink *link,
              const char *socket_path, guint64 history, GError **error)
{
  WickLineSpool *spool = wick_line_spool_new (error);
  if (spool == NULL)
    return NULL;
  LiveWorker *worker = g_new0 (LiveWorker, 1);
  if (link != NULL)
    {
      worker->link = link;
      worker->remote_decoder = wick_remote_decoder_new ();
      worker->remote_state = WICK_PRODUCER_RUNNING;
      worker->link_heard_us = g_get_monotonic_time ();
      history = 0; /* a second attach over the link is not made: the view keeps every record */
    }
  worker->stream = stream;
  /* the stream feeds the spool its lines and the view its records */
  wick_live_stream_set_record_func (stream, view_on_record);
  worker->socket_path = g_strdup (socket_path);
  worker->history = history;
  worker->spool = spool;
  worker->decoder = wick_line_decoder_new (TRUE);
  worker->batches = g_async_queue_new_full ((GDestroyNotify)live_batch_free);
  worker->tokens = g_async_queue_new ();
  worker->recycled = g_async_queue_new_full ((GDestroyNotify)wick_line_batch_free);
  for (int i = 0; i < IN_FLIGHT; i++)
    g_async_queue_push (worker->tokens, TOKEN);
  g_mutex_init (&worker->lock);
  g_cond_init (&worker->wake);
  /* At the priority of input: a lower one starves while the window redraws
   * continuously (follow mode); drawing gets its turn from the gaps that
   * commit_ready() leaves between slices. */
  worker->ready = g_source_new (&ready_funcs, sizeof (GSource));
  g_source_set_priority (worker->ready, G_PRIORITY_DEFAULT);
  g_source_set_callback (worker->ready, on_ready, session, NULL);
  g_source_set_name (worker->ready, "wick-live-ready");
  g_source_attach (worker->ready, NULL);
  worker->refs = 2;
  worker->thread = g_thread_new ("wick-live", worker_main, worker);
  return worker;
}

/* Stops the thread and lets go of it. Drains never block and every wait
 * checks the stop flag, so it normally ends at once and is joined; but a
 * restart of the view (a second attach: connect, hello, snapshot) waits on
 * the producer up to its deadlines, and a producer frozen there (SIGSTOP, a
 * debugger) must not freeze the window's close: after WORKER_STOP_WAIT_US
 * the thread is let go of and frees the worker itself when its wait ends. No
 * commit reaches the session after this (its ready source is destroyed). */
#define WORKER_STOP_WAIT_US (200 * 1000)

static void
worker_free (LiveWorker *worker)
{
  if (worker == NULL)
    return;
  g_source_destroy (worker->ready);
  g_atomic_int_set (&worker->stop, 1);
  g_async_queue_push (worker->tokens, TOKEN);
  g_mutex_lock (&worker->lock);
  g_cond_broadcast (&worker->wake);
  gint64 until = g_get_monotonic_time () + WORKER_STOP_WAIT_US;
  while (!worker->exited)
    if (!g_cond_wait_until (&worker->wake, &worker->lock, until))
      break;
  gboolean exited = worker->exited;
  g_mutex_unlock (&worker->lock);
  if (exited)
    g_thread_join (worker->thread);
  else
    g_thread_unref (worker->thread);
  worker_unref (worker);
}

/* ---- the main thread ------------------------------------------------------ */

static void
wick_live_session_dispose (GObject *object)
{
  WickLiveSession *self = WICK_LIVE_SESSION (object);
  g_clear_handle_id (&self->exit_watch, g_source_remove);
  g_clear_handle_id (&self->losses_timeout, g_source_remove);
  g_clear_handle_id (&self->hup_watch, g_source_remove);
  if (self->channel_url != NULL)
    {
      wick_remote_channel_drop (self->channel_url); /* its ssh closes: the node's serve exits */
      g_clear_pointer (&self->channel_url, g_free);
    }
  g_clear_pointer (&self->worker, worker_free);
  if (self->window != NULL)
    {
      g_object_remove_weak_pointer (G_OBJECT (self->window), (gpointer *)&self->window);
      self->window = NULL;
    }
  G_OBJECT_CLASS (wick_live_session_parent_class)->dispose (object);
}

static void
wick_live_session_finalize (GObject *object)
{
  WickLiveSession *self = WICK_LIVE_SESSION (object);
  g_clear_pointer (&self->worker, worker_free);
  g_clear_pointer (&self->info, wick_live_session_info_free);
  g_clear_pointer (&self->broken_error, g_free);
  g_clear_pointer (&self->link_lost, g_free);
  g_clear_object (&self->document);
  G_OBJECT_CLASS (wick_live_session_parent_class)->finalize (object);
}

static void
wick_live_session_class_init (WickLiveSessionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->dispose = wick_live_session_dispose;
  object_class->finalize = wick_live_session_finalize;
}

static void
wick_live_session_init (WickLiveSession *self)
{
}

static void update_loss_banners (WickLiveSession *self);

static gboolean
on_losses_timeout (gpointer user_data)
{
  WickLiveSession *self = user_data;
  self->losses_timeout = 0;
  if (self->window != NULL)
    update_loss_banners (self);
  return G_SOURCE_REMOVE;
}

/* TRUE when the loss banners' counts may be renewed now; else a renewal is
 * set for the end of the interval. */
static gboolean
losses_due (WickLiveSession *self)
{
  gboolean shown = self->shown_dropped != 0 || self->shown_lost != 0 || self->broken_shown;
  gint64 now = g_get_monotonic_time ();
  gint64 left = self->losses_shown_us + LOSS_BANNER_INTERVAL_US - now;
  if (!shown || self->ended || left <= 0)
    {
      g_clear_handle_id (&self->losses_timeout, g_source_remove);
      self->losses_shown_us = now;
      return TRUE;
    }
  if (self->losses_timeout == 0)
    self->losses_timeout = g_timeout_add ((guint)(left / 1000) + 1, on_losses_timeout, self);
  return FALSE;
}

static void
update_loss_banners (WickLiveSession *self)
{
  guint64 dropped = self->dropped;
  guint64 lost = self->lost;
  gboolean counts_changed
    = dropped != self->shown_dropped
      || (self->broken_error != NULL ? !self->broken_shown || lost != self->shown_broken_lost
                                     : lost != self->shown_lost);
  if (counts_changed && !losses_due (self))
    {
      dropped = self->shown_dropped;
      lost = self->broken_error != NULL && self->broken_shown ? self->shown_broken_lost
                                                              : self->shown_lost;
    }
  if (dropped != self->shown_dropped)
    {
      self->shown_dropped = dropped;
      g_autofree char *message = g_strdup_printf (
        g_dngettext (GETTEXT_PACKAGE,
                     "%llu record dropped by the process: its ring was full, the trace has a gap",
                     "%llu records dropped by the process: its ring was full, the trace has gaps",
                     (gulong)dropped),
        (unsigned long long)dropped);
      wick_window_show_banner (self->window, "dropped", message, NULL, NULL);
    }
  /* A broken ring: its error text, and what it cost */
  if (self->broken_error != NULL)
    {
      if (!self->broken_shown || lost != self->shown_broken_lost)
        {
          self->broken_shown = TRUE;
          self->shown_broken_lost = lost;
          self->shown_lost = lost;
          g_autofree char *message = g_strdup_printf (
            g_dngettext (GETTEXT_PACKAGE,
                         "The process's ring broke, this window stopped reading it (%s); %llu "
                         "record lost",
                         "The process's ring broke, this window stopped reading it (%s); %llu "
                         "records lost",
                         (gulong)lost),
            self->broken_error, (unsigned long long)lost);
          wick_window_hide_banner (self->window, "lost");
          wick_window_show_banner (self->window, "broken", message, NULL, NULL);
        }
      return;
    }
  if (lost != self->shown_lost)
    {
      self->shown_lost = lost;
      g_autofree char *message = g_strdup_printf (
        g_dngettext (GETTEXT_PACKAGE, "%llu record lost: this window fell behind the process",
                     "%llu records lost: this window fell behind the process", (gulong)lost),
        (unsigned long long)lost);
      wick_window_show_banner (self->window, "lost", message, NULL, NULL);
    }
  g_autofree char *spool_error = NULL;
  if (!self->spool_error_shown
      && (spool_error = wick_line_spool_get_error (self->worker->spool)) != NULL)
    {
      self->spool_error_shown = TRUE;
      g_autofree char *message = g_strdup_printf (
        _ ("Save As… will miss the lines from line %llu on: %s"),
        (unsigned long long)wick_line_spool_get_lines (self->worker->spool) + 1, spool_error);
      wick_window_show_banner (self->window, "spool", message, NULL, NULL);
    }
}

static void
show_end (WickLiveSession *self, WickProducerState state, gboolean terminal)
{
  g_autofree char *message = NULL;
  if (self->link_lost_shown)
    {
      /* the process may well run on: only the link ended (its banner says so) */
      g_autofree char *subtitle
        = g_strdup_printf (_ ("pid %lld · disconnected"), (long long)self->info->pid);
      wick_window_set_title_text (self->window, self->info->program, subtitle);
      wick_window_set_live (self->window, FALSE);
      return;
    }
  if (terminal)
    message = g_strdup_printf (_ ("Process %lld finished its trace"), (long long)self->info->pid);
  else if (state == WICK_PRODUCER_DEAD)
    message = g_strdup_printf (_ ("Process %lld exited without finishing its trace"),
                               (long long)self->info->pid);
  else
    message = g_strdup_printf (_ ("Process %lld stopped recording"), (long long)self->info->pid);
  wick_window_show_banner (self->window, "ended", message, _ ("Save As…"), "win.save-as");
  g_autofree char *subtitle = g_strdup_printf (_ ("pid %lld · ended"), (long long)self->info->pid);
  wick_window_set_title_text (self->window, self->info->program, subtitle);
  wick_window_set_live (self->window, FALSE);
  /* nothing streams any more: the last records are shown at once */
  wick_window_set_follow_interval (self->window, 0);
}

/* An empty document gives the timeline a zero-width range; once records
 * arrive, show the newest few seconds (follow mode keeps the width). */
static void
set_initial_window (WickLiveSession *self)
{
  guint64 end = wick_document_get_end_ns (self->document);
  if (self->window_set || end == 0)
    return;
  self->window_set = TRUE;
  guint64 start = end > INITIAL_WINDOW_NS ? end - INITIAL_WINDOW_NS : 0;
  wick_selection_set_visible (wick_window_get_selection (self->window), start,
                              MAX (end, INITIAL_WINDOW_NS));
}

static void
show_live_title (WickLiveSession *self)
{
  g_autofree char *subtitle = g_strdup_printf (_ ("pid %lld · live · %s"),
                                               (long long)self->info->pid, self->info->entrypoint);
  wick_window_set_title_text (self->window, self->info->program, subtitle);
}

/* The view reached its history limit and starts over on the newest records
 * (the worker attached a second reader): a new document, said in a banner. */
static void
start_new_view (WickLiveSession *self, LiveBatch *batch)
{
  self->prev_end_ns = MAX (self->prev_end_ns, wick_document_get_end_ns (self->document));
  self->epoch = batch->epoch;
  g_clear_object (&self->document);
  self->document = wick_document_new_with_extensions (TRUE);
  self->feed_failed = FALSE;
  self->window_set = FALSE;
  self->analyze_pending = FALSE;
  self->last_analyze_us = 0;
  wick_window_set_document (self->window, self->document);
  wick_window_set_live (self->window, TRUE);
  wick_window_set_follow_newest (self->window, TRUE);
  show_live_title (self);
  g_autofree char *message = g_strdup_printf (
    g_dngettext (GETTEXT_PACKAGE,
                 "This view holds the newest part of the run: it started over after %llu record "
                 "(history limit, setting live-history-records); the run had %llu records then. "
                 "Save As… keeps the whole run.",
                 "This view holds the newest part of the run: it started over after %llu records "
                 "(history limit, setting live-history-records); the run had %llu records then. "
                 "Save As… keeps the whole run.",
                 (gulong)self->history),
    (unsigned long long)self->history, (unsigned long long)batch->epoch_first_record);
  wick_window_show_banner (self->window, "history", message, _ ("Save As…"), "win.save-as");
}

/* A remote session's link: its rate, the node reader's losses and how long
 * ago the node was heard, once a second; a banner that stays when the link
 * fails (what was received is kept, Save As… writes it as a cut capture). */
static void
show_link_lost (WickLiveSession *self, const char *why)
{
  if (self->link_lost_shown || self->window == NULL)
    return;
  self->link_lost_shown = TRUE;
  self->link_lost = g_strdup (why);
  wick_window_hide_banner (self->window, "remote-link");
  g_autofree char *message
    = g_strdup_printf (_ ("The connection to %s was lost: %s. What was received is kept."),
                       self->info->socket_path, why);
  wick_window_show_banner (self->window, "remote-lost", message, _ ("Save As…"), "win.save-as");
}

/* ssh exited (its pidfd is readable) or its stdout hung up: the banner at
 * once, while the worker still commits what arrived before (the session ends
 * once it did, with the link's reason in its terminal). A clean exit (the
 * node's command ended with status 0) is the worker's END to report. */
static gboolean
on_ssh_gone (WickLiveSession *self, guint *watch)
{
  g_autofree char *why = wick_remote_link_peek_exit (self->worker->link);
  if (why == NULL && watch == &self->exit_watch)
    return G_SOURCE_CONTINUE; /* not exited after all */
  *watch = 0;
  if (why != NULL && why[0] != '\0' && !self->ended)
    show_link_lost (self, why);
  /* a hang-up while ssh runs: the pidfd says when it exits */
  return G_SOURCE_REMOVE;
}

static gboolean
on_ssh_exit (gint fd, GIOCondition condition, gpointer user_data)
{
  WickLiveSession *self = user_data;
  return on_ssh_gone (self, &self->exit_watch);
}

static gboolean
on_ssh_hup (gint fd, GIOCondition condition, gpointer user_data)
{
  WickLiveSession *self = user_data;
  return on_ssh_gone (self, &self->hup_watch);
}

static void
show_link (WickLiveSession *self, LiveBatch *batch)
{
  const char *where = self->info->socket_path;
  if (batch->link_error != NULL)
    {
      show_link_lost (self, batch->link_error);
      return;
    }
  gint64 now = g_get_monotonic_time ();
  if (self->link_shown_us != 0 && now - self->link_shown_us < G_USEC_PER_SEC && !batch->end)
    return;
  double seconds = self->link_shown_us != 0 ? (now - self->link_shown_us) / 1e6 : 0;
  double rate = seconds > 0 ? (batch->link_bytes - self->link_shown_bytes) / seconds : 0;
  self->link_shown_us = now;
  self->link_shown_bytes = batch->link_bytes;
  double heard = batch->link_heard_us > 0 ? (now - batch->link_heard_us) / 1e6 : 0;
  g_autofree char *message = g_strdup_printf (
    _ ("Attached over %s · %.1f KiB/s · %.1f MiB received · %llu lost by the node · heard %.1f s "
       "ago"),
    where, rate / 1024, batch->link_bytes / 1048576.0,
    (unsigned long long)batch->link_node_lost, heard);
  wick_window_show_banner (self->window, "remote-link", message, NULL, NULL);
}

/* Commits one batch into the document; TRUE when it held lines. */
static gboolean
apply_batch (WickLiveSession *self, LiveBatch *batch)
{
  if (batch->restart_error != NULL)
    {
      g_autofree char *message = g_strdup_printf (
        _ ("The view could not start over at its history limit (%s): it keeps every record"),
        batch->restart_error);
      wick_window_show_banner (self->window, "history", message, NULL, NULL);
    }
  if (batch->epoch != self->epoch)
    start_new_view (self, batch);
  gboolean had_lines = wick_line_batch_get_n_lines (batch->lines) > 0;
  if (had_lines && !self->feed_failed)
    {
      g_autoptr (GError) error = NULL;
      if (!wick_document_commit_batch (self->document, batch->lines, &error))
        {
          /* The formatter keeps the stream parseable; this would be a bug. Say so. */
          self->feed_failed = TRUE;
          g_autofree char *message = g_strdup_printf (_ ("The live trace could not be read: %s"),
                                                      error != NULL ? error->message : "?");
          wick_window_show_banner (self->window, "feed", message, NULL, NULL);
        }
    }
  if (batch->remote)
    show_link (self, batch);
  self->committed_spool_bytes = batch->spool_bytes;
  self->dropped = batch->dropped;
  self->lost = batch->lost;
  if (batch->broken != NULL && self->broken_error == NULL)
    self->broken_error = g_strdup (batch->broken);
  if (batch->end)
    {
      g_autoptr (GError) error = NULL;
      if (!self->feed_failed && !wick_document_finish (self->document, &error))
        g_warning ("live document: %s", error != NULL ? error->message : "finish failed");
      self->ended = TRUE;
      wick_live_window_update_progress (self->window, self->document);
      show_end (self, batch->state, batch->terminal);
    }
  return had_lines;
}

/* After batches were committed: analysis (throttled), views, banners. */
static void
refresh (WickLiveSession *self, gboolean changed)
{
  gint64 now = g_get_monotonic_time ();
  if (changed)
    self->analyze_pending = TRUE;
  if (self->analyze_pending && !self->feed_failed && !self->ended
      && now - self->last_analyze_us >= MAX (ANALYZE_INTERVAL_US, 10 * self->analyze_cost_us))
    {
      wick_document_analyze (self->document);
      wick_live_window_update_progress (self->window, self->document);
      self->last_analyze_us = g_get_monotonic_time ();
      self->analyze_cost_us = self->last_analyze_us - now;
      self->analyze_pending = FALSE;
    }
  if (changed || self->ended)
    {
      set_initial_window (self);
      wick_window_document_changed (self->window);
    }
  update_loss_banners (self);
}

/* Pops ready batches (up to @budget_us of commits, or until @until_caught_up
 * sees a batch made when the ring was empty), waiting up to @wait_us for the
 * first ones. From the source (@from_source), a slice that used its whole
 * budget comes back after a gap as long as itself, so that input and frames
 * run in between (at most half the main thread goes to commits). */
static void
commit_ready (WickLiveSession *self, gint64 budget_us, gint64 wait_us, gboolean until_caught_up,
              gboolean from_source)
{
  LiveWorker *worker = self->worker;
  gint64 start = g_get_monotonic_time ();
  gboolean changed = FALSE;
  while (!self->ended)
    {
      gint64 left = wait_us - (g_get_monotonic_time () - start);
      LiveBatch *batch = left > 0 ? g_async_queue_timeout_pop (worker->batches, (guint64)left)
                                  : g_async_queue_try_pop (worker->batches);
      if (batch == NULL && from_source)
        {
          /* disarm, then look once more: a batch pushed meanwhile found the
           * source still armed and left it to us */
          g_atomic_int_set (&worker->armed, 0);
          if (g_async_queue_length (worker->batches) > 0
              && g_atomic_int_compare_and_exchange (&worker->armed, 0, 1))
            g_source_set_ready_time (worker->ready, 0);
        }
      if (batch == NULL)
        break;
      changed |= apply_batch (self, batch);
      gboolean caught_up = batch->caught_up;
      recycle_lines (worker, batch);
      live_batch_free (batch);
      g_async_queue_push (worker->tokens, TOKEN);
      if (until_caught_up && caught_up)
        break;
      gint64 spent = g_get_monotonic_time () - start;
      if (spent >= budget_us)
        {
          if (from_source) /* still armed: the rest after input and drawing */
            g_source_set_ready_time (worker->ready, g_get_monotonic_time () + MAX (spent, 2000));
          break;
        }
    }
  if (self->window != NULL)
    refresh (self, changed);
}

static gboolean
on_ready (gpointer user_data)
{
  WickLiveSession *self = user_data;
  if (self->hold_commits)
    {
      g_atomic_int_set (&self->worker->armed, 0);
      return G_SOURCE_CONTINUE;
    }
  if (!self->ended && self->window != NULL)
    commit_ready (self, WICK_LIVE_COMMIT_BUDGET_US, 0, FALSE, TRUE);
  return G_SOURCE_CONTINUE;
}

void
wick_live_session_pump (WickLiveSession *self, gint64 budget_us)
{
  g_return_if_fail (WICK_IS_LIVE_SESSION (self));
  if (!self->ended && self->window != NULL)
    commit_ready (self, budget_us, budget_us, TRUE, FALSE);
}

gboolean
wick_live_session_save (WickLiveSession *self, const char *path, GError **error)
{
  g_return_val_if_fail (WICK_IS_LIVE_SESSION (self), FALSE);
  if (!self->ended && self->window != NULL)
    wick_live_session_pump (self, G_USEC_PER_SEC / 10);
  /* What the document holds, so the cut terminal comes after its evidence. */
  g_autofree char *trailer = NULL;
  if (!self->ended)
    trailer = g_strdup_printf (
      "{\"kind\":\"terminal\",\"outcome\":\"failed\",\"timestamp_ns\":%" G_GUINT64_FORMAT
      ",\"reason\":\"capture cut: saved while the "
      "process was still running\"}\n",
      MAX (self->prev_end_ns, wick_document_get_end_ns (self->document)));
  return wick_line_spool_save (self->worker->spool, path, self->committed_spool_bytes, trailer,
                               error);
}

static void
on_save_response (GtkNativeDialog *dialog, int response, gpointer user_data)
{
  WickLiveSession *self = user_data;
  if (response == GTK_RESPONSE_ACCEPT && self->window != NULL)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = g_file_get_path (file);
      g_autoptr (GError) error = NULL;
      g_autofree char *message = NULL;
      if (wick_live_session_save (self, path, &error))
        message = g_strdup_printf (_ ("Saved %s"), path);
      else
        message = g_strdup_printf (_ ("Could not save: %s"), error->message);
      wick_live_window_toast_kind (self->window, "save", message);
    }
  g_object_unref (dialog);
  g_object_unref (self);
}

static void
on_save_as (WickWindow *window, gpointer user_data)
{
  WickLiveSession *self = user_data;
  GtkFileChooserNative *chooser
    = gtk_file_chooser_native_new (_ ("Save Live Trace"), GTK_WINDOW (window),
                                   GTK_FILE_CHOOSER_ACTION_SAVE, _ ("_Save"), _ ("_Cancel"));
  g_autofree char *name
    = g_strdup_printf ("%s-%" G_GINT64_FORMAT ".jsonl", self->info->program, self->info->pid);
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (chooser), name);
  g_signal_connect (chooser, "response", G_CALLBACK (on_save_response), g_object_ref (self));
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

/* The following view's update interval while records stream (FOLLOW_HZ_DEFAULT). */
static gint64
follow_interval_us (void)
{
  guint64 hz = FOLLOW_HZ_DEFAULT;
  const char *env = g_getenv ("WICK_LIVE_FOLLOW_HZ");
  g_autoptr (GError) error = NULL;
  if (env != NULL && !g_ascii_string_to_unsigned (env, 10, 0, 1000, &hz, &error))
    {
      g_warning ("WICK_LIVE_FOLLOW_HZ=%s: %s (using %d)", env, error->message, FOLLOW_HZ_DEFAULT);
      hz = FOLLOW_HZ_DEFAULT;
    }
  return hz == 0 ? 0 : (gint64)(G_USEC_PER_SEC / hz);
}

static void
setup_window (WickLiveSession *self)
{
  WickWindow *window = self->window;
  wick_window_set_document (window, self->document);
  wick_window_set_live (window, TRUE);
  wick_window_set_follow_newest (window, TRUE);
  wick_window_set_follow_interval (window, follow_interval_us ());
  show_live_title (self);
  wick_window_set_save_handler (window, on_save_as, self, NULL);
  self->weights_panel = wick_weights_panel_new (window, self->info->socket_path);
  self->stages_panel = wick_stages_panel_new (window, self->info->socket_path);
  wick_window_add_page (window, "weights", _ ("Weights"), "drive-harddisk-symbolic",
                        self->weights_panel);
  wick_window_add_page (window, "stages", _ ("Stages"), "media-record-symbolic",
                        self->stages_panel);
}

/* What the worker thread of an attach hands back. */
typedef struct
{
  char *socket_path; /* NULL: find the session of pid */
  gint64 pid;
  WickLiveSessionInfo *info;
  WickLiveStream *stream;
  WickRemoteLink *link; /* a remote session (socket_path ssh://host/PID) */
  GError *snapshot_error;
} AttachResult;

static void
attach_result_free (AttachResult *result)
{
  g_free (result->socket_path);
  g_clear_pointer (&result->info, wick_live_session_info_free);
  g_clear_pointer (&result->stream, wick_live_stream_free);
  g_clear_pointer (&result->link, wick_remote_link_close);
  g_clear_error (&result->snapshot_error);
  g_free (result);
}

/* Connect, hello, map the ring, snapshot: all blocking, all here. */
static void
attach_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  AttachResult *result = data;
  GError *error = NULL;
  if (result->socket_path != NULL && g_str_has_prefix (result->socket_path, "ssh://"))
    {
      /* Another machine: ssh to its wick-trace serve --stdio. The session's
       * "socket" is the address from then on, so the Weights and Stages
       * pages send their requests there (wick_live_request_async). */
      WickRemoteTarget target;
      if (!wick_remote_target_parse (result->socket_path, &target, &error))
        {
          g_task_return_error (task, error);
          return;
        }
      if (target.pid <= 0)
        {
          wick_remote_target_clear (&target);
          g_task_return_new_error (task, WICK_LIVE_ERROR, WICK_LIVE_ERROR_NOT_FOUND,
                                   "“%s” names no process: ssh://host/PID", result->socket_path);
          return;
        }
      result->link = wick_remote_link_open (&target, g_getenv ("WICK_REMOTE_COMMAND"), &error);
      gint64 pid = target.pid;
      wick_remote_target_clear (&target);
      if (result->link == NULL)
        {
          g_task_return_error (task, error);
          return;
        }
      result->stream = wick_remote_attach (result->link, pid, FALSE, &result->info,
                                           &result->snapshot_error, &error);
      if (result->stream == NULL)
        {
          g_task_return_error (task, error);
          return;
        }
      g_free (result->info->socket_path);
      result->info->socket_path = g_strdup (result->socket_path);
      if (!g_task_return_error_if_cancelled (task))
        g_task_return_boolean (task, TRUE);
      return;
    }
  if (result->socket_path == NULL)
    {
      result->socket_path = wick_live_find_socket (result->pid, &error);
      if (result->socket_path == NULL)
        {
          g_task_return_error (task, error);
          return;
        }
    }
  g_autoptr (WickLiveConnection) connection
    = wick_live_connection_new (result->socket_path, &error);
  if (connection == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  if (g_task_return_error_if_cancelled (task))
    return;
  result->stream = wick_live_stream_attach (connection, FALSE, &result->info,
                                            &result->snapshot_error, &error);
  if (result->stream == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  if (!g_task_return_error_if_cancelled (task))
    g_task_return_boolean (task, TRUE);
}

/* A late attach says it is partial: what came before the
 * attach is not in the document, and Health judges what is. */
static char *
partial_message (WickLiveStream *stream)
{
  if (stream == NULL || !wick_live_stream_is_partial (stream))
    return NULL;
  return g_strdup_printf (_ ("attached at %.1f s: records before that are missing"),
                          (double)wick_live_stream_get_attached_ns (stream) / 1e9);
}

static void
show_partial (WickLiveSession *self, const char *message)
{
  if (message != NULL)
    wick_window_show_banner (self->window, "partial", message, NULL, NULL);
}

static void
show_snapshot (WickLiveSession *self, const GError *snapshot_error)
{
  if (snapshot_error != NULL)
    {
      g_autofree char *message = g_strdup_printf (
        _ ("No attach snapshot from %s (pid %lld): %s. Memory allocated before the attach is "
           "missing."),
        self->info->program, (long long)self->info->pid, snapshot_error->message);
      wick_window_show_banner (self->window, "snapshot", message, NULL, NULL);
    }
}

guint64
wick_live_history_limit (void)
{
  const char *env = g_getenv ("WICK_LIVE_HISTORY");
  if (env != NULL)
    {
      guint64 value;
      g_autoptr (GError) error = NULL;
      if (g_ascii_string_to_unsigned (env, 10, 0, G_MAXUINT64, &value, &error))
        return value;
      g_warning ("WICK_LIVE_HISTORY=%s: %s (using the setting live-history-records)", env,
                 error->message);
    }
  GSettings *settings = wick_settings_get ();
  if (settings != NULL)
    {
      g_autoptr (GSettingsSchema) schema = NULL;
      g_object_get (settings, "settings-schema", &schema, NULL);
      if (schema != NULL && g_settings_schema_has_key (schema, "live-history-records"))
        return g_settings_get_uint64 (settings, "live-history-records");
    }
  return WICK_LIVE_HISTORY_DEFAULT;
}

/* Takes @info, @stream and @link (freed on failure). */
static WickLiveSession *
session_new (WickWindow *window, WickLiveSessionInfo *info, WickLiveStream *stream,
             WickRemoteLink *link, GError **error)
{
  WickLiveSession *self = g_object_new (WICK_TYPE_LIVE_SESSION, NULL);
  self->info = info;
  self->history = link != NULL ? 0 : wick_live_history_limit ();
  self->worker = worker_start (self, stream, link, info->socket_path, self->history, error);
  if (self->worker == NULL)
    {
      wick_live_stream_free (stream);
      if (link != NULL)
        wick_remote_link_close (link);
      g_object_unref (self);
      return NULL;
    }
  self->document = wick_document_new_with_extensions (TRUE);
  self->window = window;
  g_object_add_weak_pointer (G_OBJECT (window), (gpointer *)&self->window);
  g_object_set_data_full (G_OBJECT (window), "wick-live-session", self, g_object_unref);
  setup_window (self);
  if (link != NULL)
    {
      /* The Weights and Stages pages' requests: one long-lived ssh, opened
       * on the first of them (wick_live_request_async finds it). */
      self->channel_url = g_strdup (info->socket_path);
      wick_remote_channel_hold (self->channel_url, g_getenv ("WICK_REMOTE_COMMAND"));
      if (wick_remote_link_get_exit_fd (link) >= 0)
        self->exit_watch
          = g_unix_fd_add (wick_remote_link_get_exit_fd (link), G_IO_IN, on_ssh_exit, self);
      self->hup_watch = g_unix_fd_add (wick_remote_link_get_fd (link), G_IO_HUP | G_IO_ERR,
                                       on_ssh_hup, self);
    }
  return self;
}

WickLiveSession *
wick_live_session_attach (WickWindow *window, const char *socket_path, GError **error)
{
  g_return_val_if_fail (WICK_IS_WINDOW (window), NULL);
  g_autoptr (WickLiveConnection) connection = wick_live_connection_new (socket_path, error);
  if (connection == NULL)
    return NULL;
  WickLiveSessionInfo *info = NULL;
  g_autoptr (GError) snapshot_error = NULL;
  WickLiveStream *stream
    = wick_live_stream_attach (connection, FALSE, &info, &snapshot_error, error);
  if (stream == NULL)
    return NULL;
  g_autofree char *partial = partial_message (stream);
  WickLiveSession *self = session_new (window, info, stream, NULL, error);
  if (self != NULL)
    {
      show_snapshot (self, snapshot_error);
      show_partial (self, partial);
    }
  return self;
}

static void
cancel_attach_on_close (GtkApplication *app, GtkWindow *removed, gpointer own)
{
  (void)app;
  if ((gpointer)removed == g_object_get_data (G_OBJECT (own), "wick-attach-window"))
    g_cancellable_cancel (own);
}

static void
cancel_attach (GCancellable *caller, gpointer own)
{
  (void)caller;
  g_cancellable_cancel (own);
}

void
wick_live_session_attach_async (WickWindow *window, const char *socket_path, gint64 pid,
                                const char *label, GCancellable *cancellable,
                                GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (WICK_IS_WINDOW (window));
  g_return_if_fail (socket_path != NULL || pid > 0);
  /* Closing the window cancels the attach: the task returns at once (its
   * thread may still wait out a frozen producer's deadline, and what it gets
   * then is dropped), and no session is made for a closed window. */
  g_autoptr (GCancellable) own = g_cancellable_new ();
  if (cancellable != NULL)
    g_cancellable_connect (cancellable, G_CALLBACK (cancel_attach), g_object_ref (own),
                           g_object_unref);
  /* (the task holds the window, so its "destroy" comes only after the task:
   * the application's window-removed says when it was closed) */
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (window));
  g_object_set_data (G_OBJECT (own), "wick-attach-window", window);
  if (app != NULL)
    g_signal_connect_object (app, "window-removed", G_CALLBACK (cancel_attach_on_close), own, 0);
  g_signal_connect_object (window, "destroy", G_CALLBACK (g_cancellable_cancel), own,
                           G_CONNECT_SWAPPED);
  g_autoptr (GTask) task = g_task_new (window, own, callback, user_data);
  g_task_set_return_on_cancel (task, TRUE);
  g_task_set_source_tag (task, wick_live_session_attach_async);
  AttachResult *result = g_new0 (AttachResult, 1);
  result->socket_path = g_strdup (socket_path);
  result->pid = pid;
  g_autofree char *fallback = g_strdup_printf (_ ("pid %lld"), (long long)pid);
  if (label == NULL)
    label = socket_path != NULL ? socket_path : fallback;
  g_task_set_task_data (task, result, (GDestroyNotify)attach_result_free);
  g_autofree char *message = g_strdup_printf (_ ("Attaching to %s…"), label);
  wick_window_hide_banner (window, "attach-failed");
  wick_window_show_banner (window, "attaching", message, NULL, NULL);
  g_object_set_data_full (G_OBJECT (task), "wick-attach-label", g_strdup (label), g_free);
  g_task_run_in_thread (task, attach_thread);
}

WickLiveSession *
wick_live_session_attach_finish (WickWindow *window, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, window), NULL);
  GTask *task = G_TASK (result);
  AttachResult *data = g_task_get_task_data (task);
  const char *label = g_object_get_data (G_OBJECT (task), "wick-attach-label");
  if (g_cancellable_is_cancelled (g_task_get_cancellable (task)))
    {
      /* the window was closed (or the caller cancelled): nothing of it is
       * touched, and the stream, if the thread got one, is dropped with the
       * task's data */
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, _ ("The attach was cancelled"));
      return NULL;
    }
  wick_window_hide_banner (window, "attaching");
  g_autoptr (GError) local = NULL;
  WickLiveSession *self = NULL;
  g_autofree char *partial = partial_message (data->stream);
  if (g_task_propagate_boolean (task, &local))
    self = session_new (window, g_steal_pointer (&data->info), g_steal_pointer (&data->stream),
                        g_steal_pointer (&data->link), &local);
  if (self == NULL)
    {
      if (!g_error_matches (local, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          /* The banner names the process and the reason. */
          g_autofree char *message
            = g_strdup_printf (_ ("Could not attach to %s: %s"), label, local->message);
          wick_window_show_banner (window, "attach-failed", message, NULL, NULL);
        }
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  show_snapshot (self, data->snapshot_error);
  show_partial (self, partial);
  return self;
}

const char *
wick_live_session_get_socket_path (WickLiveSession *self)
{
  return self->info->socket_path;
}

void
wick_live_session_hold_commits (WickLiveSession *self, gboolean hold)
{
  g_return_if_fail (WICK_IS_LIVE_SESSION (self));
  self->hold_commits = hold;
  if (!hold && g_atomic_int_compare_and_exchange (&self->worker->armed, 0, 1))
    g_source_set_ready_time (self->worker->ready, 0);
}

int
wick_live_session_get_ssh_pid (WickLiveSession *self)
{
  g_return_val_if_fail (WICK_IS_LIVE_SESSION (self), 0);
  return self->worker != NULL && self->worker->link != NULL
           ? wick_remote_link_get_pid (self->worker->link)
           : 0;
}

const char *
wick_live_session_get_link_lost (WickLiveSession *self)
{
  g_return_val_if_fail (WICK_IS_LIVE_SESSION (self), NULL);
  return self->link_lost;
}

gboolean
wick_live_session_is_ended (WickLiveSession *self)
{
  return self->ended;
}

guint64
wick_live_session_get_dropped (WickLiveSession *self)
{
  return self->dropped;
}

guint64
wick_live_session_get_lost (WickLiveSession *self)
{
  return self->lost;
}

guint
wick_live_session_get_restarts (WickLiveSession *self)
{
  return self->epoch;
}

GtkWidget *
wick_live_session_get_weights_panel (WickLiveSession *self)
{
  return self->weights_panel;
}

GtkWidget *
wick_live_session_get_stages_panel (WickLiveSession *self)
{
  return self->stages_panel;
}

WickLiveSession *
wick_live_session_from_window (WickWindow *window)
{
  return g_object_get_data (G_OBJECT (window), "wick-live-session");
}
