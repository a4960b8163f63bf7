/* wick-selection.c — see wick-selection.h for the contract. */
#include "wick-selection.h"
#include "wick-selection-private.h"

struct _WickSelection
{
  GObject parent_instance;
  guint64 visible_start, visible_end;
  guint64 range_start, range_end;
  WickRecordType record_type;
  gint64 record_index;
  guint event_kind;
  gint64 event_index;
};

G_DEFINE_FINAL_TYPE (WickSelection, wick_selection, G_TYPE_OBJECT)

enum
{
  CHANGED,
  N_SIGNALS
};
static guint signals[N_SIGNALS];

static void
wick_selection_class_init (WickSelectionClass *klass)
{
  /* changed (WickSelectionChange what) */
  signals[CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL,
                                   NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT);
}

static void
wick_selection_init (WickSelection *self)
{
  self->record_type = WICK_RECORD_NONE;
  self->record_index = -1;
  self->event_kind = WICK_EVENT_NONE;
  self->event_index = -1;
}

WickSelection *
wick_selection_new (void)
{
  return g_object_new (WICK_TYPE_SELECTION, NULL);
}

void
wick_selection_get_visible (WickSelection *self, guint64 *start_ns, guint64 *end_ns)
{
  g_return_if_fail (WICK_IS_SELECTION (self));
  if (start_ns)
    *start_ns = self->visible_start;
  if (end_ns)
    *end_ns = self->visible_end;
}

void
wick_selection_set_visible (WickSelection *self, guint64 start_ns, guint64 end_ns)
{
  g_return_if_fail (WICK_IS_SELECTION (self));
  if (start_ns == G_MAXUINT64)
    start_ns--;
  if (end_ns <= start_ns)
    end_ns = start_ns + 1;
  if (start_ns == self->visible_start && end_ns == self->visible_end)
    return;
  self->visible_start = start_ns;
  self->visible_end = end_ns;
  g_signal_emit (self, signals[CHANGED], 0, (guint)WICK_SELECTION_CHANGED_VISIBLE);
}

void
wick_selection_get_range (WickSelection *self, guint64 *start_ns, guint64 *end_ns)
{
  g_return_if_fail (WICK_IS_SELECTION (self));
  if (start_ns)
    *start_ns = self->range_start;
  if (end_ns)
    *end_ns = self->range_end;
}

void
wick_selection_set_range (WickSelection *self, guint64 start_ns, guint64 end_ns)
{
  g_return_if_fail (WICK_IS_SELECTION (self));
  if (end_ns < start_ns)
    {
      guint64 tmp = start_ns;
      start_ns = end_ns;
      end_ns = tmp;
    }
  if (start_ns == self->range_start && end_ns == self->range_end)
    return;
  self->range_start = start_ns;
  self->range_end = end_ns;
  g_signal_emit (self, signals[CHANGED], 0, (guint)WICK_SELECTION_CHANGED_RANGE);
}

gboolean
wick_selection_has_range (WickSelection *self)
{
  g_return_val_if_fail (WICK_IS_SELECTION (self), FALSE);
  return self->range_end > self->range_start;
}

WickRecordType
wick_selection_get_record (WickSelection *self, gint64 *index)
{
  g_return_val_if_fail (WICK_IS_SELECTION (self), WICK_RECORD_NONE);
  if (index)
    *index = self->record_index;
  return self->record_type;
}

void
wick_selection_set_record (WickSelection *self, WickRecordType type, gint64 index)
{
  /* A span is also the slice event of the same index. */
  if (type == WICK_RECORD_SPAN)
    wick_selection_set_record_event (self, type, index, WICK_EVENT_SLICE, index);
  else
    wick_selection_set_record_event (self, type, index, WICK_EVENT_NONE, -1);
}

void
wick_selection_set_record_event (WickSelection *self, WickRecordType type, gint64 index,
                                 guint event_kind, gint64 event_index)
{
  g_return_if_fail (WICK_IS_SELECTION (self));
  if (type == WICK_RECORD_NONE)
    index = -1;
  if (event_kind == WICK_EVENT_NONE)
    event_index = -1;
  if (type == self->record_type && index == self->record_index && event_kind == self->event_kind
      && event_index == self->event_index)
    return;
  self->record_type = type;
  self->record_index = index;
  self->event_kind = event_kind;
  self->event_index = event_index;
  g_signal_emit (self, signals[CHANGED], 0, (guint)WICK_SELECTION_CHANGED_RECORD);
}

guint
wick_selection_get_event (WickSelection *self, gint64 *index)
{
  g_return_val_if_fail (WICK_IS_SELECTION (self), WICK_EVENT_NONE);
  if (index)
    *index = self->event_index;
  return self->event_kind;
}

/* ---- a view's "selection" property ---- */

typedef void (*ChangedFunc) (WickSelection *selection, guint what, gpointer view);

gboolean
wick_selection_attach (WickSelection **slot, WickSelection *selection, GCallback on_changed,
                       gpointer view)
{
  g_return_val_if_fail (slot != NULL, FALSE);
  g_return_val_if_fail (selection == NULL || WICK_IS_SELECTION (selection), FALSE);
  if (*slot == selection)
    return FALSE;
  if (*slot)
    g_signal_handlers_disconnect_by_data (*slot, view);
  g_set_object (slot, selection);
  if (selection && on_changed)
    {
      g_signal_connect (selection, "changed", on_changed, view);
      ((ChangedFunc)on_changed) (selection, WICK_SELECTION_CHANGED_ALL, view);
    }
  return TRUE;
}

GParamSpec *
wick_selection_param_spec (void)
{
  return g_param_spec_object ("selection", NULL, NULL, WICK_TYPE_SELECTION,
                              G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
}
