/* wick-live-toasts.c — the live window's toasts, coalesced (see
 * wick-live-session.h, wick_live_window_toast_kind).
 *
 * Messages of one kind within a second become one toast with a count ("…
 * (3×)"). One live toast is on screen at a time; the others wait in order.
 * Each is shown for TOAST_FRAME_US of *frame-clock* time and then dismissed
 * from a tick callback of the window: libadwaita 1.2's toast overlay crashes
 * (adw_animation_skip -> g_object_unref of a freed toast) when a toast is
 * dismissed while its show animation still runs, which its own GLib-timer
 * timeout does on a loaded machine whose frames come late. A toast dismissed
 * here has been on screen for seconds of frames, so its show animation is
 * long done. Its own timeout is 0 (never).
 */
#include "config.h"

#include "wick-live-session.h"
#include "wick-live-session-private.h"

#include <glib/gi18n.h>

#define TOAST_FRAME_US (3 * G_USEC_PER_SEC)
#define COALESCE_US G_USEC_PER_SEC

typedef struct
{
  char *kind;
  char *message;
  guint count;
  gint64 raised_us; /* monotonic time of the first message of this toast */
} Pending;

typedef struct
{
  WickWindow *window; /* NULL once the window let go of this */
  AdwToast *current;  /* shown now (ref), or NULL */
  Pending *shown;     /* what it shows */
  gint64 first_frame_us; /* frame time of the first frame with it, 0 before */
  GQueue queue;       /* Pending waiting for their turn */
  guint tick_id;
  guint raised;       /* toasts put on screen */
  guint coalesced;    /* messages merged into one already raised or waiting */
} Toasts;

static void
pending_free (Pending *pending)
{
  if (pending == NULL)
    return;
  g_free (pending->kind);
  g_free (pending->message);
  g_free (pending);
}

static char *
pending_title (const Pending *pending)
{
  if (pending->count <= 1)
    return g_strdup (pending->message);
  /* TRANSLATORS: a toast for several messages of one kind: "<last message> (3×)" */
  return g_strdup_printf (_ ("%s (%u×)"), pending->message, pending->count);
}

/* Held by the window (object data) and by the tick callback while it runs,
 * so that neither outlives the other's view of it. */
static void
toasts_clear (Toasts *toasts)
{
  g_clear_object (&toasts->current);
  g_clear_pointer (&toasts->shown, pending_free);
  g_queue_clear_full (&toasts->queue, (GDestroyNotify)pending_free);
}

static void
toasts_unref (Toasts *toasts)
{
  g_rc_box_release_full (toasts, (GDestroyNotify)toasts_clear);
}

/* The window is going away: the tick callback stops at its next call. */
static void
toasts_detach (Toasts *toasts)
{
  toasts->window = NULL;
  toasts_unref (toasts);
}

static void
on_tick_destroyed (gpointer data)
{
  Toasts *toasts = data;
  toasts->tick_id = 0;
  toasts_unref (toasts);
}

static void
show_next (Toasts *toasts)
{
  Pending *next = g_queue_pop_head (&toasts->queue);
  if (next == NULL)
    return;
  g_autofree char *title = pending_title (next);
  AdwToast *toast = adw_toast_new (title);
  adw_toast_set_timeout (toast, 0);
  toasts->current = g_object_ref (toast);
  toasts->shown = next;
  toasts->first_frame_us = 0;
  toasts->raised++;
  wick_window_add_toast (toasts->window, toast);
}

static gboolean
on_tick (GtkWidget *widget, GdkFrameClock *clock, gpointer user_data)
{
  Toasts *toasts = user_data;
  if (toasts->window == NULL)
    return G_SOURCE_REMOVE;
  gint64 frame_us = gdk_frame_clock_get_frame_time (clock);
  if (toasts->current != NULL)
    {
      if (toasts->first_frame_us == 0)
        toasts->first_frame_us = frame_us;
      if (frame_us - toasts->first_frame_us < TOAST_FRAME_US)
        return G_SOURCE_CONTINUE;
      adw_toast_dismiss (toasts->current);
      g_clear_object (&toasts->current);
      g_clear_pointer (&toasts->shown, pending_free);
    }
  show_next (toasts);
  return toasts->current != NULL ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

static Toasts *
toasts_for (WickWindow *window)
{
  Toasts *toasts = g_object_get_data (G_OBJECT (window), "wick-live-toasts");
  if (toasts == NULL)
    {
      toasts = g_rc_box_new0 (Toasts);
      toasts->window = window;
      g_queue_init (&toasts->queue);
      g_object_set_data_full (G_OBJECT (window), "wick-live-toasts", toasts,
                              (GDestroyNotify)toasts_detach);
    }
  return toasts;
}

/* The toast of @kind raised less than a second ago, shown or waiting. */
static Pending *
find_recent (Toasts *toasts, const char *kind, gint64 now)
{
  if (toasts->shown != NULL && g_strcmp0 (toasts->shown->kind, kind) == 0
      && now - toasts->shown->raised_us < COALESCE_US)
    return toasts->shown;
  for (GList *l = toasts->queue.head; l != NULL; l = l->next)
    {
      Pending *pending = l->data;
      if (g_strcmp0 (pending->kind, kind) == 0 && now - pending->raised_us < COALESCE_US)
        return pending;
    }
  return NULL;
}

void
wick_live_window_toast_kind (WickWindow *window, const char *kind, const char *message)
{
  g_return_if_fail (WICK_IS_WINDOW (window));
  Toasts *toasts = toasts_for (window);
  gint64 now = g_get_monotonic_time ();
  Pending *recent = find_recent (toasts, kind, now);
  if (recent != NULL)
    {
      recent->count++;
      g_free (recent->message);
      recent->message = g_strdup (message);
      toasts->coalesced++;
      if (recent == toasts->shown)
        {
          g_autofree char *title = pending_title (recent);
          adw_toast_set_title (toasts->current, title); /* no animation: safe at any time */
        }
      return;
    }
  Pending *pending = g_new0 (Pending, 1);
  pending->kind = g_strdup (kind);
  pending->message = g_strdup (message);
  pending->count = 1;
  pending->raised_us = now;
  g_queue_push_tail (&toasts->queue, pending);
  if (toasts->current == NULL)
    show_next (toasts);
  if (toasts->tick_id == 0)
    toasts->tick_id = gtk_widget_add_tick_callback (GTK_WIDGET (window), on_tick,
                                                    g_rc_box_acquire (toasts), on_tick_destroyed);
}

void
wick_live_window_get_toast_counts (WickWindow *window, guint *raised, guint *coalesced,
                                   guint *waiting)
{
  Toasts *toasts = toasts_for (window);
  if (raised != NULL)
    *raised = toasts->raised;
  if (coalesced != NULL)
    *coalesced = toasts->coalesced;
  if (waiting != NULL)
    *waiting = toasts->queue.length;
}
