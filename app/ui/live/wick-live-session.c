/* wick-live-session.c — a window attached to a live process (see the header). */
#include "config.h"

#include "wick-live-session.h"

#include <glib/gi18n.h>

#include "live/wick-live-stream.h"
#include "wick-stages-panel.h"
#include "wick-weights-panel.h"

/* The live analysis (health, coverage) is redone at most every 250 ms, and
 * never more often than ten times its own cost, so that a long session keeps
 * the UI's frame rate (analysis is linear in the document). */
#define ANALYZE_INTERVAL_US 250000
/* The time the timeline shows when the first records arrive (follow mode then
 * keeps this width and slides it along). */
#define INITIAL_WINDOW_NS G_GUINT64_CONSTANT (3000000000)

struct _WickLiveSession
{
  GObject parent_instance;
  WickWindow *window; /* weak */
  WickLiveSessionInfo *info;
  WickLiveStream *stream;
  WickDocument *document;
  GString *lines;
  guint tick_id;
  gint64 last_analyze_us;
  gint64 analyze_cost_us;
  gboolean analyze_pending;
  guint64 shown_dropped;
  guint64 shown_lost;
  gboolean ended;
  gboolean feed_failed;
  gboolean window_set;
  GtkWidget *weights_panel;
  GtkWidget *stages_panel;
};

G_DEFINE_FINAL_TYPE (WickLiveSession, wick_live_session, G_TYPE_OBJECT)

static void
wick_live_session_dispose (GObject *object)
{
  WickLiveSession *self = WICK_LIVE_SESSION (object);
  if (self->window != NULL)
    {
      if (self->tick_id != 0)
        gtk_widget_remove_tick_callback (GTK_WIDGET (self->window), self->tick_id);
      g_object_remove_weak_pointer (G_OBJECT (self->window), (gpointer *)&self->window);
      self->window = NULL;
    }
  self->tick_id = 0;
  G_OBJECT_CLASS (wick_live_session_parent_class)->dispose (object);
}

static void
wick_live_session_finalize (GObject *object)
{
  WickLiveSession *self = WICK_LIVE_SESSION (object);
  g_clear_pointer (&self->stream, wick_live_stream_free);
  g_clear_pointer (&self->info, wick_live_session_info_free);
  g_clear_object (&self->document);
  g_string_free (self->lines, TRUE);
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
  self->lines = g_string_new (NULL);
}

static void
on_line (const char *line, gsize length, gpointer user_data)
{
  WickLiveSession *self = user_data;
  g_string_append_len (self->lines, line, (gssize)length);
  g_string_append_c (self->lines, '\n');
  if (self->feed_failed)
    return;
  g_autoptr (GError) error = NULL;
  if (!wick_document_feed_line (self->document, line, length, &error))
    {
      /* The formatter keeps the stream parseable; this would be a bug. Say so. */
      self->feed_failed = TRUE;
      g_autofree char *message = g_strdup_printf (_ ("The live trace could not be read: %s"),
                                                  error != NULL ? error->message : "?");
      if (self->window != NULL)
        wick_window_show_banner (self->window, "feed", message, NULL, NULL);
    }
}

static void
update_loss_banners (WickLiveSession *self)
{
  guint64 dropped = wick_live_stream_get_dropped (self->stream);
  guint64 lost = wick_live_stream_get_lost (self->stream);
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
  if (lost != self->shown_lost)
    {
      self->shown_lost = lost;
      g_autofree char *message = g_strdup_printf (
        g_dngettext (GETTEXT_PACKAGE, "%llu record lost: this window fell behind the process",
                     "%llu records lost: this window fell behind the process", (gulong)lost),
        (unsigned long long)lost);
      wick_window_show_banner (self->window, "lost", message, NULL, NULL);
    }
}

static const char *
end_reason (WickProducerState state)
{
  return state == WICK_PRODUCER_DEAD
           ? "capture cut: the process exited without finishing its trace"
           : "capture cut: the process stopped recording without a terminal record";
}

static void
show_end (WickLiveSession *self, WickProducerState state)
{
  g_autofree char *message = NULL;
  if (wick_live_stream_has_terminal (self->stream))
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
}

static void
finish_stream (WickLiveSession *self, WickProducerState state)
{
  wick_live_stream_finish (self->stream, end_reason (state), on_line, self);
  g_autoptr (GError) error = NULL;
  if (!self->feed_failed && !wick_document_finish (self->document, &error))
    g_warning ("live document: %s", error != NULL ? error->message : "finish failed");
  self->ended = TRUE;
  show_end (self, state);
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

/* Drains for at most @budget_us; returns TRUE while the session goes on. */
static gboolean
pump (WickLiveSession *self, gint64 budget_us)
{
  guint64 n = wick_live_stream_drain_for (self->stream, budget_us, on_line, self);
  gint64 now = g_get_monotonic_time ();
  if (n > 0)
    self->analyze_pending = TRUE;
  if (self->analyze_pending && !self->feed_failed
      && now - self->last_analyze_us >= MAX (ANALYZE_INTERVAL_US, 10 * self->analyze_cost_us))
    {
      wick_document_analyze (self->document);
      self->last_analyze_us = g_get_monotonic_time ();
      self->analyze_cost_us = self->last_analyze_us - now;
      self->analyze_pending = FALSE;
    }
  if (n > 0)
    {
      set_initial_window (self);
      wick_window_document_changed (self->window);
    }
  update_loss_banners (self);
  WickProducerState state = wick_live_stream_get_producer_state (self->stream);
  if (wick_live_stream_has_terminal (self->stream)
      || (state != WICK_PRODUCER_RUNNING && wick_live_stream_is_drained (self->stream)))
    {
      finish_stream (self, state);
      wick_window_document_changed (self->window);
      return FALSE;
    }
  return TRUE;
}

static gboolean
on_tick (GtkWidget *widget, GdkFrameClock *clock, gpointer user_data)
{
  WickLiveSession *self = user_data;
  if (pump (self, WICK_LIVE_FRAME_BUDGET_US))
    return G_SOURCE_CONTINUE;
  self->tick_id = 0;
  return G_SOURCE_REMOVE;
}

void
wick_live_session_pump (WickLiveSession *self, gint64 budget_us)
{
  g_return_if_fail (WICK_IS_LIVE_SESSION (self));
  if (!self->ended && self->window != NULL && !pump (self, budget_us) && self->tick_id != 0)
    {
      gtk_widget_remove_tick_callback (GTK_WIDGET (self->window), self->tick_id);
      self->tick_id = 0;
    }
}

gboolean
wick_live_session_save (WickLiveSession *self, const char *path, GError **error)
{
  g_return_val_if_fail (WICK_IS_LIVE_SESSION (self), FALSE);
  if (!self->ended && self->window != NULL)
    pump (self, G_USEC_PER_SEC / 10);
  g_autoptr (GString) text = g_string_new_len (self->lines->str, (gssize)self->lines->len);
  if (!self->ended)
    g_string_append_printf (
      text,
      "{\"kind\":\"terminal\",\"outcome\":\"failed\",\"timestamp_ns\":%" G_GUINT64_FORMAT
      ",\"reason\":\"capture cut: saved while the "
      "process was still running\"}\n",
      wick_document_get_end_ns (self->document));
  return g_file_set_contents (path, text->str, (gssize)text->len, error);
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

static void
setup_window (WickLiveSession *self)
{
  WickWindow *window = self->window;
  wick_window_set_document (window, self->document);
  wick_window_set_live (window, TRUE);
  wick_window_set_follow_newest (window, TRUE);
  g_autofree char *subtitle = g_strdup_printf (_ ("pid %lld · live · %s"),
                                               (long long)self->info->pid, self->info->entrypoint);
  wick_window_set_title_text (window, self->info->program, subtitle);
  wick_window_set_save_handler (window, on_save_as, self, NULL);
  self->weights_panel = wick_weights_panel_new (window, self->info->socket_path);
  self->stages_panel = wick_stages_panel_new (window, self->info->socket_path);
  wick_window_add_page (window, "weights", _ ("Weights"), "drive-harddisk-symbolic",
                        self->weights_panel);
  wick_window_add_page (window, "stages", _ ("Stages"), "media-record-symbolic",
                        self->stages_panel);
  self->tick_id = gtk_widget_add_tick_callback (GTK_WIDGET (window), on_tick, self, NULL);
}

/* What the worker thread of an attach hands back. */
typedef struct
{
  char *socket_path; /* NULL: find the session of pid */
  gint64 pid;
  WickLiveSessionInfo *info;
  WickLiveStream *stream;
  GError *snapshot_error;
} AttachResult;

static void
attach_result_free (AttachResult *result)
{
  g_free (result->socket_path);
  g_clear_pointer (&result->info, wick_live_session_info_free);
  g_clear_pointer (&result->stream, wick_live_stream_free);
  g_clear_error (&result->snapshot_error);
  g_free (result);
}

/* Connect, hello, map the ring, snapshot: all blocking, all here. */
static void
attach_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  AttachResult *result = data;
  GError *error = NULL;
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

static WickLiveSession *
session_new (WickWindow *window, WickLiveSessionInfo *info, WickLiveStream *stream)
{
  WickLiveSession *self = g_object_new (WICK_TYPE_LIVE_SESSION, NULL);
  self->info = info;
  self->stream = stream;
  self->document = wick_document_new_with_extensions (TRUE);
  self->window = window;
  g_object_add_weak_pointer (G_OBJECT (window), (gpointer *)&self->window);
  g_object_set_data_full (G_OBJECT (window), "wick-live-session", self, g_object_unref);
  setup_window (self);
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
  WickLiveSession *self = session_new (window, info, stream);
  show_snapshot (self, snapshot_error);
  return self;
}

void
wick_live_session_attach_async (WickWindow *window, const char *socket_path, gint64 pid,
                                const char *label, GCancellable *cancellable,
                                GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (WICK_IS_WINDOW (window));
  g_return_if_fail (socket_path != NULL || pid > 0);
  g_autoptr (GTask) task = g_task_new (window, cancellable, callback, user_data);
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
  wick_window_hide_banner (window, "attaching");
  g_autoptr (GError) local = NULL;
  if (!g_task_propagate_boolean (task, &local))
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
  WickLiveSession *self
    = session_new (window, g_steal_pointer (&data->info), g_steal_pointer (&data->stream));
  show_snapshot (self, data->snapshot_error);
  return self;
}

const WickLiveSessionInfo *
wick_live_session_get_info (WickLiveSession *self)
{
  return self->info;
}

const char *
wick_live_session_get_socket_path (WickLiveSession *self)
{
  return self->info->socket_path;
}

WickWindow *
wick_live_session_get_window (WickLiveSession *self)
{
  return self->window;
}

gboolean
wick_live_session_is_ended (WickLiveSession *self)
{
  return self->ended;
}

guint64
wick_live_session_get_dropped (WickLiveSession *self)
{
  return wick_live_stream_get_dropped (self->stream);
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
