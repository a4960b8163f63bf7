/* wick-selection.h — the time range and record that every view of a window shares.
 *
 * One WickSelection per window. Views read it and write it; they never talk to
 * each other. The visible range is what the timeline and memory chart show;
 * the selected range is a box-selected interval (empty when start == end);
 * the selected record is (type, index) into the document's arrays, with
 * WICK_RECORD_NONE for nothing. Every setter emits "changed" only when a value
 * actually changed, so views may write back what they read without loops.
 */
#pragma once

#include <glib-object.h>

#include "model/wick-document.h"
#include "model/wick-tracks.h"

G_BEGIN_DECLS

#define WICK_TYPE_SELECTION (wick_selection_get_type ())
G_DECLARE_FINAL_TYPE (WickSelection, wick_selection, WICK, SELECTION, GObject)

typedef enum
{
  WICK_SELECTION_CHANGED_VISIBLE = 1 << 0,
  WICK_SELECTION_CHANGED_RANGE = 1 << 1,
  WICK_SELECTION_CHANGED_RECORD = 1 << 2,
} WickSelectionChange;

WickSelection *wick_selection_new (void);

void wick_selection_get_visible (WickSelection *self, guint64 *start_ns, guint64 *end_ns);
void wick_selection_set_visible (WickSelection *self, guint64 start_ns, guint64 end_ns);

void wick_selection_get_range (WickSelection *self, guint64 *start_ns, guint64 *end_ns);
void wick_selection_set_range (WickSelection *self, guint64 start_ns, guint64 end_ns);

WickRecordType wick_selection_get_record (WickSelection *self, gint64 *index);
/* Selects a document record; a span also selects its slice event. */
void wick_selection_set_record (WickSelection *self, WickRecordType type, gint64 index);

/* The selected event of the track model (wick-tracks.h: WickEventKind, or
 * WICK_TIMELINE_EVENT_FLOW for a flow), next to the record: an async slice,
 * counter sample, instant or Chrome device interval has no document record
 * (type WICK_RECORD_NONE); a span is both. */
guint wick_selection_get_event (WickSelection *self, gint64 *index);
void wick_selection_set_record_event (WickSelection *self, WickRecordType type, gint64 index,
                                      guint event_kind, gint64 event_index);

/* Every change at once (WickSelectionChange), what a view that is given a
 * new selection is told. */
#define WICK_SELECTION_CHANGED_ALL                                                                 \
  (WICK_SELECTION_CHANGED_VISIBLE | WICK_SELECTION_CHANGED_RANGE | WICK_SELECTION_CHANGED_RECORD)

/* A view's "selection" property, one way for every view (set once, by the
 * view's _new () or by a template binding it to the window's selection).
 *
 * wick_selection_attach () is its setter: *@slot takes a reference to
 * @selection (NULL drops the old one, as dispose does); @view's handlers on the
 * old selection are disconnected; @on_changed, when given, is connected to the
 * new one's "changed" (as void (*) (WickSelection *, guint what, view)) and
 * called once with WICK_SELECTION_CHANGED_ALL. FALSE when *@slot already was
 * @selection (nothing done). */
gboolean wick_selection_attach (WickSelection **slot, WickSelection *selection,
                                GCallback on_changed, gpointer view);
GParamSpec *wick_selection_param_spec (void);

G_END_DECLS
