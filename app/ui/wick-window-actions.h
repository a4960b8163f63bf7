/* wick-window-actions.h — the win.* actions of a trace window.
 *
 * Installed on the window's class (gtk_widget_class_install_action), so
 * every window has them from its construction and the muxer resolves them
 * before the window's GActionMap (which keeps win.show-ops, a GSettings
 * action, and GtkApplicationWindow's win.show-help-overlay).
 *
 * The actions know no window: they act on a WickWindowActions, which the
 * window keeps in its instance struct (its offset given at install, as a
 * template child's is) and fills once its template is built: the widgets
 * the actions drive, and the few things only the window knows (its
 * document, whether it is live, its search and its Save As…).
 * wick_window_actions_update() enables the actions for what the window
 * shows: the document actions only with a document, win.follow only in a
 * live window, win.save-as only with a save handler, win.export-trace not
 * while an export runs.
 */
#pragma once

#include <adwaita.h>

#include "model/wick-document.h"
#include "wick-selection.h"

G_BEGIN_DECLS

typedef struct
{
  /* The window's widgets (not owned). */
  GtkWidget *timeline; /* WickTimelineView */
  AdwViewStack *views;
  AdwToastOverlay *toasts;
  GtkSearchBar *search_bar;
  GtkSearchEntry *search_entry;
  GtkWidget *search_button;
  GtkWidget *details_button; /* GtkToggleButton */
  WickSelection *selection;

  /* What the window answers (@window: the widget the action ran on). */
  WickDocument *(*get_document) (GtkWidget *window);
  gboolean (*get_live) (GtkWidget *window);
  /* Moves to the next (+1) or previous (-1) search match. */
  void (*step_match) (GtkWidget *window, int direction);
  /* Save As… of a live window, when it has one (else win.save-as is off). */
  gboolean (*can_save) (GtkWidget *window);
  void (*save_as) (GtkWidget *window);

  /* The actions' own: File → Export Trace running (NULL when none). */
  GCancellable *export_cancellable;
} WickWindowActions;

/* Installs the win.* actions on @widget_class; @offset: where the
 * WickWindowActions sits in its instance struct. */
void wick_window_actions_install (GtkWidgetClass *widget_class, gsize offset);
/* Enables the actions for what @window shows now. */
void wick_window_actions_update (GtkWidget *window);
/* The window goes: an export running ends touching nothing of it. */
void wick_window_actions_dispose (WickWindowActions *actions);

/* Export… without the file chooser: the view shown, as shown, to @path
 * (.png, .svg or .pdf). */
gboolean wick_window_actions_export_view (GtkWidget *window, const char *path, GError **error);
/* File → Export Trace: the document as Chrome JSON (model/wick-chrome-export.h),
 * gzip-compressed when @file's name ends in .gz; on a worker thread when the
 * document is finished, here when it still grows. The task's source is
 * @window. */
gboolean wick_window_actions_export_trace (GtkWidget *window, GFile *file, GError **error);
void wick_window_actions_export_trace_async (GtkWidget *window, GFile *file,
                                             GCancellable *cancellable,
                                             GAsyncReadyCallback callback, gpointer user_data);
gboolean wick_window_actions_export_trace_finish (GtkWidget *window, GAsyncResult *result,
                                                  GError **error);
gboolean wick_window_actions_get_exporting (GtkWidget *window);

G_END_DECLS
