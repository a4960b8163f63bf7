/* wick-window-internal.h — the window's instance struct.
 *
 * The window is three files on two floors. wick-window.c (the widget, its
 * views, search, banners, recent files and the API of wick-window.h) sits
 * on top and owns two parts that know no window: wick-window-actions.c (the
 * win.* actions, acting on the WickWindowActions below) and
 * wick-window-loading.c (a WickWindowLoading: reading a file and deriving
 * its views, signalling the end). Files dropped on a window are the
 * application's (wick-application.c opens them as File → Open does).
 * Only wick-window.c and the app's screenshot tools include this header.
 */
#pragma once

#include "wick-window.h"

#include "wick-window-actions.h"
#include "wick-window-loading.h"
#include "wick-trace-session.h"

G_BEGIN_DECLS

struct _WickWindow
{
  AdwApplicationWindow parent_instance;

  /* template */
  AdwToastOverlay *toasts;
  AdwViewSwitcherTitle *switcher_title;
  GtkStack *title_stack;
  AdwHeaderBar *header;
  GtkWidget *banners;
  GtkSearchBar *search_bar;
  GtkSearchEntry *search_entry;
  GtkWidget *search_button;
  GtkLabel *match_label;
  GtkStack *main_stack;
  AdwStatusPage *loading_page;
  GtkProgressBar *progress;
  GtkWidget *cancel_button;
  GtkPaned *paned;
  AdwViewStack *views;
  GtkWidget *details_button;
  gboolean details_wanted; /* the user's choice ("show-details") */
  gboolean details_folded; /* narrower than WICK_WINDOW_FOLD_WIDTH: the pane folded away */
  /* the timeline page */
  GtkWidget *overview;
  GtkWidget *timeline;
  GtkWidget *follow_button;
  GtkWidget *hint;
  guint focus_source;
  GtkWidget *recent_list;
  GtkWidget *recent_label;

  /* the other views, from the template (data/ui/wick-window.ui), each bound
   * to the window's selection */
  /* made before the template: its pages bind to the session, the other
   * views to its selection */
  WickTraceSession *session;
  WickSelection *selection; /* the session's */
  GtkWidget *memory;
  GtkWidget *coverage;
  GtkWidget *health;
  GtkWidget *costs;
  GtkWidget *details;
  /* the GPU pages (wick-gpu-pages.h), shown for documents with GPU work */
  GtkWidget *gpu_overview, *kernels, *operators;
  GtkWidget *match_page; /* the Kernels or Operators page whose row the matches are */

  WickDocument *document;
  gulong changed_handler;
  /* the loading page's load (one at a time) */
  WickWindowLoading *loading;
  /* what the win.* actions act on (wick-window-actions.h) */
  WickWindowActions actions;
  guint n_matches;
  gboolean live;
  GHashTable *banner_widgets; /* id -> GtkWidget */
  WickSaveHandler save_handler;
  gpointer save_data;
  GDestroyNotify save_destroy;
};

/* Moves to the next (+1) or previous (-1) search match. */
void wick_window_step_match (WickWindow *self, int direction);

G_END_DECLS
