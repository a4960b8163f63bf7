/* wick-page.c — see wick-page.h for the contract. */
#include "config.h"

#include "wick-page.h"
#include "wick-page-private.h"

static void wick_page_set_selection (WickPage *self, WickSelection *selection);

typedef struct
{
  WickTraceSession *session;
  gulong document_handler, changed_handler;
  WickSelection *selection;
  char *title, *icon_name;
  /* what the last refresh saw of the session (0: never refreshed) */
  guint64 seen_serial, seen_generation;
  /* the throttle: a growing document's next refresh waits for refresh_at */
  gint64 refresh_started, refresh_at;
  guint refresh_source;
  /* shown stale: the refresh waits for the end of this frame */
  GdkFrameClock *paint_clock;
  gulong after_paint;
  /* a refresh's work on a worker thread */
  GCancellable *work;
  gboolean busy;
} WickPagePrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (WickPage, wick_page, GTK_TYPE_WIDGET)

enum
{
  PROP_0,
  PROP_SESSION,
  PROP_SELECTION,
  PROP_TITLE,
  PROP_ICON_NAME,
  N_PROPS
};
static GParamSpec *properties[N_PROPS];

/* A refresh waits at least this long after the last one ended (µs), and
 * at least four times as long as that one took. */
#define WICK_PAGE_MIN_REFRESH_GAP (250 * 1000)

static void
cancel_work (WickPage *self)
{
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  if (priv->work != NULL)
    g_cancellable_cancel (priv->work);
  g_clear_object (&priv->work);
  priv->busy = FALSE;
}

static void
stop_waiting_for_paint (WickPage *self)
{
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  if (priv->after_paint != 0)
    g_clear_signal_handler (&priv->after_paint, priv->paint_clock);
  g_clear_object (&priv->paint_clock);
}

static void
note_refreshed (WickPage *self)
{
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  gint64 now = g_get_monotonic_time ();
  priv->refresh_at = now + MAX (4 * (now - priv->refresh_started), WICK_PAGE_MIN_REFRESH_GAP);
}

static void
page_refresh (WickPage *self, gboolean now)
{
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  WickPageClass *klass = WICK_PAGE_GET_CLASS (self);
  g_clear_handle_id (&priv->refresh_source, g_source_remove);
  stop_waiting_for_paint (self);
  guint64 serial = priv->session ? wick_trace_session_get_document_serial (priv->session) : 0;
  guint64 generation = priv->session ? wick_trace_session_get_generation (priv->session) : 0;
  WickPageRefreshFlags flags = 0;
  if (serial != priv->seen_serial)
    flags |= WICK_PAGE_REFRESH_REPLACED;
  if (now)
    flags |= WICK_PAGE_REFRESH_NOW;
  cancel_work (self);
  priv->seen_serial = serial;
  priv->seen_generation = generation;
  priv->refresh_started = g_get_monotonic_time ();
  if (klass->refresh)
    klass->refresh (self, wick_page_get_document (self), flags);
  if (!priv->busy)
    note_refreshed (self);
}

/* TRUE when the session changed since the page's last refresh. */
static gboolean
wick_page_is_stale (WickPage *self)
{
  g_return_val_if_fail (WICK_IS_PAGE (self), FALSE);
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  if (priv->session == NULL)
    return priv->seen_serial != 0; /* the session went: show nothing */
  return priv->seen_serial != wick_trace_session_get_document_serial (priv->session)
         || priv->seen_generation != wick_trace_session_get_generation (priv->session);
}

static gboolean
is_replaced (WickPage *self)
{
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  guint64 serial = priv->session ? wick_trace_session_get_document_serial (priv->session) : 0;
  return serial != priv->seen_serial;
}

void
wick_page_ensure_current (WickPage *self)
{
  g_return_if_fail (WICK_IS_PAGE (self));
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  if (wick_page_is_stale (self) || priv->busy)
    page_refresh (self, TRUE);
}

static gboolean
refresh_due (gpointer user_data)
{
  WickPage *self = user_data;
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  priv->refresh_source = 0;
  if (gtk_widget_get_mapped (GTK_WIDGET (self)) && wick_page_is_stale (self) && !priv->busy)
    page_refresh (self, FALSE);
  return G_SOURCE_REMOVE;
}

/* Schedules a throttled refresh (what document_grew does by default). */
static void
wick_page_schedule_refresh (WickPage *self)
{
  g_return_if_fail (WICK_IS_PAGE (self));
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  if (priv->busy || priv->refresh_source != 0)
    return; /* the work's end, or the refresh already due, comes first */
  gint64 wait_us = MAX (priv->refresh_at - g_get_monotonic_time (), 0);
  /* after the frames already due: the page is drawn with what it had;
   * the wait rounded up to whole milliseconds, never shorter than asked */
  priv->refresh_source = g_timeout_add_full (G_PRIORITY_DEFAULT_IDLE, (guint)((wait_us + 999) / 1000),
                                             refresh_due, self, NULL);
}

GCancellable *
wick_page_begin_work (WickPage *self)
{
  g_return_val_if_fail (WICK_IS_PAGE (self), NULL);
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  cancel_work (self);
  priv->work = g_cancellable_new ();
  priv->busy = TRUE;
  return priv->work;
}

void
wick_page_end_work (WickPage *self)
{
  g_return_if_fail (WICK_IS_PAGE (self));
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  g_clear_object (&priv->work);
  priv->busy = FALSE;
  note_refreshed (self);
  if (gtk_widget_get_mapped (GTK_WIDGET (self)) && wick_page_is_stale (self))
    wick_page_schedule_refresh (self);
}

/* ---- the session ---- */

/* Another document: a shown page refreshes at once; a hidden one lets go
 * of the old document (nothing of it stays alive, nor drawn later) and
 * refreshes when it is next shown. */
static void
on_document_notify (WickTraceSession *session, GParamSpec *pspec, WickPage *self)
{
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  cancel_work (self);
  if (gtk_widget_get_mapped (GTK_WIDGET (self)))
    {
      page_refresh (self, FALSE);
      return;
    }
  g_clear_handle_id (&priv->refresh_source, g_source_remove);
  if (priv->seen_serial == 0)
    return; /* nothing shown yet */
  WickPageClass *klass = WICK_PAGE_GET_CLASS (self);
  if (klass->refresh)
    klass->refresh (self, NULL, WICK_PAGE_REFRESH_REPLACED | WICK_PAGE_REFRESH_NOW);
  priv->seen_serial = priv->seen_generation = 0;
}

static void
on_session_changed (WickTraceSession *session, WickPage *self)
{
  if (!gtk_widget_get_mapped (GTK_WIDGET (self)))
    return; /* refreshed when shown */
  WickPageClass *klass = WICK_PAGE_GET_CLASS (self);
  klass->document_grew (self);
}

static void
wick_page_real_document_grew (WickPage *self)
{
  wick_page_schedule_refresh (self);
}

static void
on_selection_changed (WickSelection *selection, guint what, WickPage *self)
{
  WickPageClass *klass = WICK_PAGE_GET_CLASS (self);
  if (klass->selection_changed)
    klass->selection_changed (self, what);
}

WickTraceSession *
wick_page_get_session (WickPage *self)
{
  g_return_val_if_fail (WICK_IS_PAGE (self), NULL);
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  return priv->session;
}

void
wick_page_set_session (WickPage *self, WickTraceSession *session)
{
  g_return_if_fail (WICK_IS_PAGE (self));
  g_return_if_fail (session == NULL || WICK_IS_TRACE_SESSION (session));
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  if (priv->session == session)
    return;
  WickSelection *old_selection = priv->session ? wick_trace_session_get_selection (priv->session)
                                               : NULL;
  if (priv->session != NULL)
    {
      g_clear_signal_handler (&priv->document_handler, priv->session);
      g_clear_signal_handler (&priv->changed_handler, priv->session);
    }
  g_set_object (&priv->session, session);
  if (session != NULL)
    {
      priv->document_handler = g_signal_connect (session, "notify::document",
                                                 G_CALLBACK (on_document_notify), self);
      priv->changed_handler
        = g_signal_connect (session, "changed", G_CALLBACK (on_session_changed), self);
      /* the session's selection, unless the page was given one apart */
      if (priv->selection == NULL || priv->selection == old_selection)
        wick_page_set_selection (self, wick_trace_session_get_selection (session));
    }
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SESSION]);
  on_document_notify (session, NULL, self);
}

WickSelection *
wick_page_get_selection (WickPage *self)
{
  g_return_val_if_fail (WICK_IS_PAGE (self), NULL);
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  return priv->selection;
}

static void
wick_page_set_selection (WickPage *self, WickSelection *selection)
{
  g_return_if_fail (WICK_IS_PAGE (self));
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  if (wick_selection_attach (&priv->selection, selection, G_CALLBACK (on_selection_changed), self))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTION]);
}

WickDocument *
wick_page_get_document (WickPage *self)
{
  g_return_val_if_fail (WICK_IS_PAGE (self), NULL);
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  return priv->session ? wick_trace_session_get_document (priv->session) : NULL;
}

WickTraceSession *
wick_page_ensure_session (WickPage *self)
{
  g_return_val_if_fail (WICK_IS_PAGE (self), NULL);
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  if (priv->session == NULL)
    {
      g_autoptr (WickTraceSession) session = wick_trace_session_new (priv->selection);
      wick_page_set_session (self, session);
    }
  return priv->session;
}

gboolean
wick_page_is_wanted (WickPage *self, WickDocument *document)
{
  g_return_val_if_fail (WICK_IS_PAGE (self), FALSE);
  WickPageClass *klass = WICK_PAGE_GET_CLASS (self);
  return klass->wanted == NULL || klass->wanted (self, document);
}

void
wick_page_set_document (WickPage *self, WickDocument *document)
{
  g_return_if_fail (WICK_IS_PAGE (self));
  wick_trace_session_set_document (wick_page_ensure_session (self), document);
  wick_page_ensure_current (self);
}

void
wick_page_document_changed (WickPage *self)
{
  g_return_if_fail (WICK_IS_PAGE (self));
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  if (priv->session != NULL)
    wick_trace_session_document_changed (priv->session);
}

/* ---- title and icon ---- */

static gboolean
replace_string (char **slot, const char *value)
{
  if (g_strcmp0 (*slot, value) == 0)
    return FALSE;
  g_free (*slot);
  *slot = g_strdup (value);
  return TRUE;
}

const char *
wick_page_get_title (WickPage *self)
{
  g_return_val_if_fail (WICK_IS_PAGE (self), NULL);
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  return priv->title;
}

void
wick_page_set_title (WickPage *self, const char *title)
{
  g_return_if_fail (WICK_IS_PAGE (self));
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  if (replace_string (&priv->title, title))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TITLE]);
}

const char *
wick_page_get_icon_name (WickPage *self)
{
  g_return_val_if_fail (WICK_IS_PAGE (self), NULL);
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  return priv->icon_name;
}

void
wick_page_set_icon_name (WickPage *self, const char *icon_name)
{
  g_return_if_fail (WICK_IS_PAGE (self));
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  if (replace_string (&priv->icon_name, icon_name))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ICON_NAME]);
}

/* ---- the widget ---- */

static void
shown_painted (GdkFrameClock *clock, WickPage *self)
{
  stop_waiting_for_paint (self);
  if (wick_page_is_stale (self))
    wick_page_schedule_refresh (self);
}

/* Another document: refreshed before the page's first frame. A document
 * that grew while hidden: the page's frame as it was, then the refresh. */
static void
wick_page_map (GtkWidget *widget)
{
  WickPage *self = WICK_PAGE (widget);
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  if (is_replaced (self))
    page_refresh (self, FALSE);
  GTK_WIDGET_CLASS (wick_page_parent_class)->map (widget);
  if (!wick_page_is_stale (self) || priv->after_paint != 0)
    return;
  GdkFrameClock *clock = gtk_widget_get_frame_clock (widget);
  if (clock == NULL)
    {
      wick_page_schedule_refresh (self);
      return;
    }
  priv->paint_clock = g_object_ref (clock);
  priv->after_paint = g_signal_connect (clock, "after-paint", G_CALLBACK (shown_painted), self);
}

static void
wick_page_unmap (GtkWidget *widget)
{
  WickPage *self = WICK_PAGE (widget);
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  stop_waiting_for_paint (self);
  g_clear_handle_id (&priv->refresh_source, g_source_remove);
  GTK_WIDGET_CLASS (wick_page_parent_class)->unmap (widget);
}

static void
wick_page_dispose (GObject *object)
{
  WickPage *self = WICK_PAGE (object);
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  cancel_work (self);
  stop_waiting_for_paint (self);
  g_clear_handle_id (&priv->refresh_source, g_source_remove);
  if (priv->session != NULL)
    {
      g_clear_signal_handler (&priv->document_handler, priv->session);
      g_clear_signal_handler (&priv->changed_handler, priv->session);
    }
  g_clear_object (&priv->session);
  wick_selection_attach (&priv->selection, NULL, NULL, self);
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))) != NULL)
    gtk_widget_unparent (child);
  G_OBJECT_CLASS (wick_page_parent_class)->dispose (object);
}

static void
wick_page_finalize (GObject *object)
{
  WickPagePrivate *priv = wick_page_get_instance_private (WICK_PAGE (object));
  g_free (priv->title);
  g_free (priv->icon_name);
  G_OBJECT_CLASS (wick_page_parent_class)->finalize (object);
}

static void
wick_page_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  WickPage *self = WICK_PAGE (object);
  WickPagePrivate *priv = wick_page_get_instance_private (self);
  switch (prop_id)
    {
    case PROP_SESSION:
      g_value_set_object (value, priv->session);
      break;
    case PROP_SELECTION:
      g_value_set_object (value, priv->selection);
      break;
    case PROP_TITLE:
      g_value_set_string (value, priv->title);
      break;
    case PROP_ICON_NAME:
      g_value_set_string (value, priv->icon_name);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
wick_page_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  WickPage *self = WICK_PAGE (object);
  switch (prop_id)
    {
    case PROP_SESSION:
      wick_page_set_session (self, g_value_get_object (value));
      break;
    case PROP_SELECTION:
      wick_page_set_selection (self, g_value_get_object (value));
      break;
    case PROP_TITLE:
      wick_page_set_title (self, g_value_get_string (value));
      break;
    case PROP_ICON_NAME:
      wick_page_set_icon_name (self, g_value_get_string (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
wick_page_class_init (WickPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = wick_page_dispose;
  object_class->finalize = wick_page_finalize;
  object_class->get_property = wick_page_get_property;
  object_class->set_property = wick_page_set_property;
  widget_class->map = wick_page_map;
  widget_class->unmap = wick_page_unmap;
  klass->document_grew = wick_page_real_document_grew;
  properties[PROP_SESSION]
    = g_param_spec_object ("session", NULL, NULL, WICK_TYPE_TRACE_SESSION,
                           G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_SELECTION] = wick_selection_param_spec ();
  properties[PROP_TITLE]
    = g_param_spec_string ("title", NULL, NULL, NULL,
                           G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_ICON_NAME]
    = g_param_spec_string ("icon-name", NULL, NULL, NULL,
                           G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
}

static void
wick_page_init (WickPage *self)
{
}
