/* wick-follow-session.c — a window following a growing JSONL file (see the header). */
#include "config.h"

#include "wick-follow-session.h"
#include "wick-follow-session-private.h"

#include <glib/gi18n.h>

#include "client/wick-follow-file.h"
#include "wick-live-session.h"
#include "wick-timeline-view.h"
#include "wick-window-private.h"

#define POLL_MS 50
/* At most this much is read a poll, so that a large file fills the views in
 * steps and the window keeps answering. */
#define POLL_BYTES (2u << 20)
/* Analysis (linear in the document) at most every 250 ms and ten times its cost. */
#define ANALYZE_INTERVAL_US 250000
/* The file has not grown for this long: look for its writer. */
#define WRITER_IDLE_US G_USEC_PER_SEC
#define INITIAL_WINDOW_NS G_GUINT64_CONSTANT (3000000000)

struct _WickFollowSession
{
  GObject parent_instance;
  WickWindow *window; /* weak */
  WickFollowFile *file;
  WickDocument *document;
  char *name; /* the file's basename */
  guint poll_id;
  gint64 last_growth_us;
  gint64 last_writer_check_us;
  gint64 last_analyze_us;
  gint64 analyze_cost_us;
  gboolean analyze_pending;
  gboolean window_set;
  gboolean ended;
  gboolean feed_failed;
  gboolean polled;         /* the first poll ran */
  gboolean writer_seen;    /* the file grew after it, or a writer had it open */
  gboolean no_writer_said; /* the "no process writes it" banner is shown */
  guint idle_checks;       /* writer checks made on a file idle for WRITER_IDLE_US */
  char *message;
  GPtrArray *batch; /* GBytes: the lines of one poll */
};

G_DEFINE_FINAL_TYPE (WickFollowSession, wick_follow_session, G_TYPE_OBJECT)

static void
wick_follow_session_dispose (GObject *object)
{
  WickFollowSession *self = WICK_FOLLOW_SESSION (object);
  g_clear_handle_id (&self->poll_id, g_source_remove);
  if (self->window != NULL)
    g_object_remove_weak_pointer (G_OBJECT (self->window), (gpointer *)&self->window);
  self->window = NULL;
  G_OBJECT_CLASS (wick_follow_session_parent_class)->dispose (object);
}

static void
wick_follow_session_finalize (GObject *object)
{
  WickFollowSession *self = WICK_FOLLOW_SESSION (object);
  g_clear_pointer (&self->file, wick_follow_file_free);
  g_clear_object (&self->document);
  g_free (self->name);
  g_free (self->message);
  g_ptr_array_unref (self->batch);
  G_OBJECT_CLASS (wick_follow_session_parent_class)->finalize (object);
}

static void
wick_follow_session_class_init (WickFollowSessionClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = wick_follow_session_dispose;
  G_OBJECT_CLASS (klass)->finalize = wick_follow_session_finalize;
}

static void
wick_follow_session_init (WickFollowSession *self)
{
  self->batch = g_ptr_array_new_with_free_func ((GDestroyNotify)g_bytes_unref);
}

static void
show (WickFollowSession *self, const char *id, const char *message)
{
  g_free (self->message);
  self->message = g_strdup (message);
  if (self->window != NULL)
    wick_window_show_banner (self->window, id, message, NULL, NULL);
}

static void
set_subtitle (WickFollowSession *self, const char *state)
{
  g_autofree char *subtitle
    = g_strdup_printf ("%s · %s", wick_follow_file_get_path (self->file), state);
  wick_window_set_title_text (self->window, self->name, subtitle);
}

/* A new, empty document in the window (the start, and each restart). */
static void
new_document (WickFollowSession *self)
{
  g_clear_object (&self->document);
  self->document = wick_document_new_with_extensions (TRUE);
  wick_document_set_path (self->document, wick_follow_file_get_path (self->file));
  self->window_set = FALSE;
  self->feed_failed = FALSE;
  self->analyze_pending = FALSE;
  self->last_analyze_us = 0;
  wick_window_set_document (self->window, self->document);
  wick_window_set_live (self->window, TRUE);
  wick_window_set_follow_newest (self->window, TRUE);
  /* a file's view fits its data as it grows */
  wick_timeline_view_set_follow_fit (
    WICK_TIMELINE_VIEW (wick_window_get_view (self->window, "timeline")), TRUE);
  self->window_set = TRUE;
}

static void
on_line (const char *line, gsize length, gpointer user_data)
{
  WickFollowSession *self = user_data;
  g_ptr_array_add (self->batch, g_bytes_new (line, length));
}

static void
feed (WickFollowSession *self, const char *line, gsize length)
{
  if (self->feed_failed || wick_document_is_finished (self->document))
    return;
  g_autoptr (GError) error = NULL;
  if (!wick_document_feed_line (self->document, line, length, &error))
    {
      self->feed_failed = TRUE;
      g_autofree char *message
        = g_strdup_printf (_ ("Following stopped: %s"), error != NULL ? error->message : "?");
      show (self, "follow-error", message);
    }
}

static void
end (WickFollowSession *self, const char *message)
{
  self->ended = TRUE;
  g_clear_handle_id (&self->poll_id, g_source_remove);
  g_autoptr (GError) error = NULL;
  if (!wick_document_is_finished (self->document))
    wick_document_finish (self->document, &error); /* a parse error is the document's */
  wick_live_window_update_progress (self->window, self->document);
  wick_window_document_changed (self->window);
  wick_window_set_live (self->window, FALSE);
  wick_window_hide_banner (self->window, "follow-no-writer");
  set_subtitle (self, _ ("ended"));
  show (self, "follow-ended", message);
}

/* No writer any more and no terminal: the capture was cut; a failed terminal
 * at the latest evidence gives the final verdicts of an interrupted run. */
static void
writer_gone (WickFollowSession *self)
{
  gsize partial = wick_follow_file_get_pending (self->file);
  g_autofree char *terminal = g_strdup_printf (
    "{\"kind\":\"terminal\",\"outcome\":\"failed\",\"timestamp_ns\":%" G_GUINT64_FORMAT
    ",\"reason\":\"capture cut: the file's writer went away without finishing the trace\"}",
    wick_document_get_end_ns (self->document));
  if (!self->feed_failed)
    feed (self, terminal, strlen (terminal));
  g_autofree char *message = NULL;
  if (partial > 0)
    message = g_strdup_printf (
      g_dngettext (GETTEXT_PACKAGE,
                   "No process writes %s any more and its trace has no terminal record: the "
                   "capture was cut (a last line of %llu byte without its newline was left out).",
                   "No process writes %s any more and its trace has no terminal record: the "
                   "capture was cut (a last line of %llu bytes without its newline was left out).",
                   (gulong)partial),
      self->name, (unsigned long long)partial);
  else
    message = g_strdup_printf (_ ("No process writes %s any more and its trace has no terminal "
                                  "record: the capture was cut."),
                               self->name);
  end (self, message);
}

static void
refresh (WickFollowSession *self, gboolean changed)
{
  gint64 now = g_get_monotonic_time ();
  if (changed)
    self->analyze_pending = TRUE;
  if (self->analyze_pending && !self->feed_failed
      && now - self->last_analyze_us >= MAX (ANALYZE_INTERVAL_US, 10 * self->analyze_cost_us))
    {
      wick_document_analyze (self->document);
      wick_live_window_update_progress (self->window, self->document);
      self->last_analyze_us = g_get_monotonic_time ();
      self->analyze_cost_us = self->last_analyze_us - now;
      self->analyze_pending = FALSE;
    }
  if (!changed)
    return;
  guint64 end_ns = wick_document_get_end_ns (self->document);
  if (!self->window_set && end_ns > 0)
    {
      self->window_set = TRUE;
      wick_selection_set_visible (wick_window_get_selection (self->window),
                                  end_ns > INITIAL_WINDOW_NS ? end_ns - INITIAL_WINDOW_NS : 0,
                                  MAX (end_ns, INITIAL_WINDOW_NS));
    }
  wick_window_document_changed (self->window);
}

void
wick_follow_session_poll (WickFollowSession *self)
{
  g_return_if_fail (WICK_IS_FOLLOW_SESSION (self));
  if (self->ended || self->window == NULL)
    return;
  g_autofree char *restarted = NULL;
  g_autoptr (GError) error = NULL;
  guint64 before = wick_document_get_n_lines (self->document);
  gssize n = wick_follow_file_poll (self->file, POLL_BYTES, on_line, self, &restarted, &error);
  gint64 now = g_get_monotonic_time ();
  if (restarted != NULL)
    {
      /* The lines read in this poll are the new file's: start over with them. */
      new_document (self);
      before = 0;
      g_autofree char *message = g_strdup_printf (_ ("%s. The view starts over."), restarted);
      show (self, "follow-restart", message);
    }
  /* Fed after the restart is known: the lines of this poll are the new file's. */
  for (guint i = 0; i < self->batch->len; i++)
    {
      GBytes *line = g_ptr_array_index (self->batch, i);
      gsize length;
      const char *data = g_bytes_get_data (line, &length);
      feed (self, data != NULL ? data : "", length);
    }
  g_ptr_array_set_size (self->batch, 0);
  if (n < 0)
    {
      g_autofree char *message = g_strdup_printf (_ ("Following stopped: %s"), error->message);
      end (self, message);
      return;
    }
  if (n > 0)
    {
      /* What the first poll reads was there before; growth after it means a writer. */
      self->writer_seen |= self->polled;
      self->last_growth_us = now;
    }
  self->polled = TRUE;
  refresh (self, wick_document_get_n_lines (self->document) != before);
  if (self->feed_failed)
    {
      self->ended = TRUE;
      g_clear_handle_id (&self->poll_id, g_source_remove);
      wick_window_set_live (self->window, FALSE);
      set_subtitle (self, _ ("stopped"));
      return;
    }
  if (wick_document_has_terminal (self->document))
    {
      g_autofree char *message = g_strdup_printf (_ ("%s finished its trace."), self->name);
      end (self, message);
      return;
    }
  if (now - self->last_writer_check_us >= WRITER_IDLE_US)
    {
      self->last_writer_check_us = now;
      gboolean writing = wick_follow_file_has_writer (self->file);
      self->writer_seen |= writing;
      if (n == 0 && now - self->last_growth_us >= WRITER_IDLE_US)
        self->idle_checks++;
      if (!writing && self->writer_seen && n == 0 && now - self->last_growth_us >= WRITER_IDLE_US)
        writer_gone (self);
      else if (!writing && !self->writer_seen && !self->no_writer_said)
        {
          /* Nothing writes it (yet): keep following, and say so. */
          self->no_writer_said = TRUE;
          g_autofree char *message = g_strdup_printf (
            _ ("No process has %s open for writing: it is followed until its terminal record "
               "arrives."),
            self->name);
          show (self, "follow-no-writer", message);
        }
      else if (self->writer_seen && self->no_writer_said)
        {
          self->no_writer_said = FALSE;
          wick_window_hide_banner (self->window, "follow-no-writer");
        }
    }
}

static gboolean
on_poll (gpointer user_data)
{
  WickFollowSession *self = user_data;
  wick_follow_session_poll (self);
  if (self->ended)
    {
      self->poll_id = 0;
      return G_SOURCE_REMOVE;
    }
  return G_SOURCE_CONTINUE;
}

WickFollowSession *
wick_follow_session_start (WickWindow *window, const char *path, GError **error)
{
  g_return_val_if_fail (WICK_IS_WINDOW (window), NULL);
  WickFollowFile *file = wick_follow_file_new (path, error);
  if (file == NULL)
    return NULL;
  WickFollowSession *self = g_object_new (WICK_TYPE_FOLLOW_SESSION, NULL);
  self->file = file;
  self->name = g_path_get_basename (path);
  self->window = window;
  g_object_add_weak_pointer (G_OBJECT (window), (gpointer *)&self->window);
  g_object_set_data_full (G_OBJECT (window), "wick-follow-session", self, g_object_unref);
  new_document (self);
  set_subtitle (self, _ ("following"));
  self->last_growth_us = g_get_monotonic_time ();
  self->poll_id = g_timeout_add (POLL_MS, on_poll, self);
  wick_follow_session_poll (self);
  return self;
}

WickFollowSession *
wick_follow_session_from_window (WickWindow *window)
{
  return g_object_get_data (G_OBJECT (window), "wick-follow-session");
}

WickDocument *
wick_follow_session_get_document (WickFollowSession *self)
{
  return self->document;
}

gboolean
wick_follow_session_is_ended (WickFollowSession *self)
{
  return self->ended;
}

guint
wick_follow_session_get_restarts (WickFollowSession *self)
{
  return wick_follow_file_get_restarts (self->file);
}

guint
wick_follow_session_get_idle_checks (WickFollowSession *self)
{
  return self->idle_checks;
}

const char *
wick_follow_session_get_message (WickFollowSession *self)
{
  return self->message;
}
