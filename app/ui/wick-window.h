/* wick-window.h — one window per document, and the API the live area uses.
 *
 * A WickWindow shows either the welcome page, a loading page (progress and
 * cancel), or a document with its views: Timeline, Memory, Coverage, Health,
 * Costs (span costs, ops, tensors), and a details pane for the selected
 * record. All views share one WickSelection (wick_window_get_selection()).
 *
 * Documents that grow (live sessions). Set the document once with
 * wick_window_set_document(), then append records to it from the main thread
 * (wick_document_feed_line() or the live client) and call
 * wick_window_document_changed(). The window also connects to the document's
 * "changed" signal when the model has one. Either way the timeline and
 * memory chart redraw on the next frame and rebuild their index (O(n log n))
 * at most once per four build times, so a large live trace keeps its frame
 * rate; the tables requery at most four times a second. Never feed the
 * document from another thread while the window shows it.
 *
 * Live mode (wick_window_set_live()): the timeline follows the newest time
 * (the visible range keeps its width and ends at the document's end) until
 * the user zooms or pans; a "Follow" button then returns to following. The
 * header's Save As… (win.save-as) calls the save handler the live area
 * installs. Banners (dropped records, process ended) are a strip above the
 * views with an optional button bound to an action name.
 *
 * Pages: every view is a WickPage (wick-page.h) bound to the window's one
 * WickTraceSession (document, selection, derived models), which refreshes
 * only while shown; wick_window_add_page() adds one more (Ranks, Weights,
 * Stages, Memory Snapshot) to the view switcher; the widget is owned by the
 * window.
 */
#pragma once

#include <adwaita.h>

#include "model/wick-document.h"
#include "wick-selection.h"

G_BEGIN_DECLS

#define WICK_TYPE_WINDOW (wick_window_get_type ())
G_DECLARE_FINAL_TYPE (WickWindow, wick_window, WICK, WINDOW, AdwApplicationWindow)

/* A new window on the welcome page. */
WickWindow *wick_window_new (GtkApplication *app);

/* Loads @file on a worker thread, showing progress with a cancel button. */
void wick_window_load_file (WickWindow *self, GFile *file);

/* Shows @document (already loaded, or empty and growing). Replaces any
 * previous document. The window keeps a reference. */
void wick_window_set_document (WickWindow *self, WickDocument *document);
WickDocument *wick_window_get_document (WickWindow *self);

/* TRUE while the welcome page is shown (no document, not loading). */
gboolean wick_window_is_empty (WickWindow *self);

/* The document grew: redraw and requery (coalesced to one per frame). */
void wick_window_document_changed (WickWindow *self);

WickSelection *wick_window_get_selection (WickWindow *self);
/* The timeline view (a WickTimelineView). */
GtkWidget *wick_window_get_timeline (WickWindow *self);

/* Live mode: follow-newest timeline, live title decorations. */
void wick_window_set_live (WickWindow *self, gboolean live);
void wick_window_set_follow_newest (WickWindow *self, gboolean follow);
/* The following timeline's update cap (wick_timeline_view_set_follow_interval). */
void wick_window_set_follow_interval (WickWindow *self, gint64 interval_us);

/* Title and subtitle of the header (e.g. program name, "pid 1234 · live"). */
void wick_window_set_title_text (WickWindow *self, const char *title, const char *subtitle);

/* Adds a page to the view switcher after the built-in views. A WickPage
 * (wick-page.h) gets the window's session when it has none, and its own
 * title and icon name where @title or @icon_name is NULL. */
void wick_window_add_page (WickWindow *self, const char *name, const char *title,
                           const char *icon_name, GtkWidget *widget);

/* Banners: @id identifies one (showing the same id again updates it).
 * @button_label and @action_name may be NULL. */
void wick_window_show_banner (WickWindow *self, const char *id, const char *message,
                              const char *button_label, const char *action_name);
void wick_window_hide_banner (WickWindow *self, const char *id);

void wick_window_add_toast (WickWindow *self, AdwToast *toast);

/* Save As… for live sessions: enables win.save-as and calls @handler. */
typedef void (*WickSaveHandler) (WickWindow *window, gpointer user_data);
void wick_window_set_save_handler (WickWindow *self, WickSaveHandler handler, gpointer user_data,
                                   GDestroyNotify destroy);

G_END_DECLS
