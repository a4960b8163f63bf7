/* wick-window-private.h — what the app's tests may reach inside a window. */
#pragma once

#include "wick-window.h"

G_BEGIN_DECLS

/* "timeline", "memory", "coverage", "health", "costs", "details". */
GtkWidget *wick_window_get_view (WickWindow *self, const char *name);
/* "welcome", "loading" or "document". */
const char *wick_window_get_state (WickWindow *self);
double wick_window_get_progress (WickWindow *self);
void wick_window_cancel_load (WickWindow *self);
/* Loads started by any window whose end has not arrived yet (a load another
 * replaced, or whose window closed, still counts until its thread ends). */
guint wick_window_get_n_loads_in_flight (void);
guint wick_window_get_n_banners (WickWindow *self);
/* TRUE while the window is too narrow for the details pane beside the page. */
gboolean wick_window_get_details_folded (WickWindow *self);
void wick_window_search (WickWindow *self, const char *text);
const char *wick_window_get_match_text (WickWindow *self);
GtkSearchBar *wick_window_get_search_bar (WickWindow *self);
GtkSearchEntry *wick_window_get_search_entry (WickWindow *self);
/* The name of the view shown ("timeline", "memory", ...). */
const char *wick_window_get_visible_view (WickWindow *self);

/* Rows of the welcome page's recent traces. */
guint wick_window_get_n_recent (WickWindow *self);
/* Export… without the file chooser: the current view, as shown, to @path
 * (.png, .svg or .pdf). */
gboolean wick_window_export_view (WickWindow *self, const char *path, GError **error);
/* File → Export Trace: the document as Chrome JSON (model/wick-chrome-export.h),
 * gzip-compressed when @file's name ends in .gz. */
gboolean wick_window_export_trace (WickWindow *self, GFile *file, GError **error);
/* The same as File → Export Trace runs it: on a worker thread when the
 * document is finished (a large trace does not freeze the window; the action
 * is disabled meanwhile), here when it still grows (a live or followed
 * document changes on this thread). */
void wick_window_export_trace_async (WickWindow *self, GFile *file, GCancellable *cancellable,
                                     GAsyncReadyCallback callback, gpointer user_data);
gboolean wick_window_export_trace_finish (WickWindow *self, GAsyncResult *result, GError **error);
/* TRUE while an Export Trace of the window runs. */
gboolean wick_window_get_exporting (WickWindow *self);

/* What only the tests call. */
gboolean wick_window_get_live (WickWindow *self);
gboolean wick_window_get_follow_newest (WickWindow *self);
/* The message of banner @id, NULL when it is not shown (for tests). */
const char *wick_window_get_banner (WickWindow *self, const char *id);

/* Switches the view stack to the named page ("timeline", "memory", "coverage",
 * "health", "costs", or a page added above). */
void wick_window_show_page (WickWindow *self, const char *name);

G_END_DECLS
