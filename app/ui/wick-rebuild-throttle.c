/* wick-rebuild-throttle.c — see wick-rebuild-throttle.h for the contract. */
#include "wick-rebuild-throttle.h"

void
wick_rebuild_throttle_init (WickRebuildThrottle *self, GtkWidget *widget)
{
  *self = (WickRebuildThrottle){ .widget = widget };
}

static gboolean
redraw_later (gpointer user_data)
{
  WickRebuildThrottle *self = user_data;
  self->redraw_source = 0;
  gtk_widget_queue_draw (self->widget);
  return G_SOURCE_REMOVE;
}

gboolean
wick_rebuild_throttle_begin (WickRebuildThrottle *self, gboolean force)
{
  gint64 now = g_get_monotonic_time ();
  gint64 wait_us = 4 * self->build_cost_us - (now - self->last_build_us);
  if (self->deferred && !force)
    {
      /* the whole frame draws the old result (the timeline's overview asks
       * for the same scene in the switch's frame), the next one rebuilds */
      GdkFrameClock *clock = gtk_widget_get_frame_clock (self->widget);
      gint64 frame = clock != NULL ? gdk_frame_clock_get_frame_counter (clock) : -1;
      if (self->deferred_frame < 0)
        self->deferred_frame = frame;
      if (frame == self->deferred_frame)
        wait_us = MAX (wait_us, 1);
      if (frame != self->deferred_frame || clock == NULL)
        self->deferred = FALSE; /* no frame clock: this one begin */
    }
  else
    self->deferred = FALSE;
  if (!force && wait_us > 0)
    {
      /* Rounded up: the redraw finds the wait over, not a millisecond short. */
      if (self->redraw_source == 0)
        self->redraw_source = g_timeout_add ((guint)((wait_us + 999) / 1000), redraw_later, self);
      return FALSE;
    }
  self->began_us = now;
  return TRUE;
}

void
wick_rebuild_throttle_defer (WickRebuildThrottle *self)
{
  self->deferred = TRUE;
  self->deferred_frame = -1;
}

void
wick_rebuild_throttle_end (WickRebuildThrottle *self)
{
  self->last_build_us = g_get_monotonic_time ();
  self->build_cost_us = self->last_build_us - self->began_us;
}

void
wick_rebuild_throttle_clear (WickRebuildThrottle *self)
{
  g_clear_handle_id (&self->redraw_source, g_source_remove);
}
