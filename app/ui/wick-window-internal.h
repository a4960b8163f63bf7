/* wick-window-internal.h — what the parts of the window share.
 *
 * The window is three files: wick-window.c (the widget, its views, search,
 * banners and the API of wick-window.h), wick-window-actions.c (the win.*
 * actions, installed on the class, and when each is enabled) and
 * wick-window-loading.c (opening a file through WickDocumentLoader, the
 * loading page, recent files). Files dropped on a window are the
 * application's (wick-application.c opens them as File → Open does).
 * Only those files include this header.
 */
#pragma once

#include "wick-window.h"

#include "model/wick-document-loader.h"
#include "wick-memory-chart.h"
#include "wick-timeline-scene.h"

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
  WickSelection *selection; /* made before the template: its views bind to it */
  GtkWidget *memory;
  GtkWidget *coverage;
  GtkWidget *health;
  GtkWidget *costs;
  GtkWidget *details;
  /* the GPU pages (wick-gpu-pages.h), shown for documents with GPU work */
  GtkWidget *gpu_overview, *kernels, *operators;
  AdwViewStackPage *gpu_stack_pages[3];
  GtkWidget *match_page; /* the Kernels or Operators page whose row the matches are */

  WickDocument *document;
  gulong changed_handler;
  guint changed_source;
  /* The load the loading page shows (NULL when none): a load that another
   * replaced or that the window outlived finds itself no longer here and
   * ends without touching the window. */
  WickDocumentLoader *loader;
  GCancellable *load_cancellable;
  /* File → Export Trace running on a worker (NULL when none); cancelled when
   * the window goes, so its end touches nothing of the window. */
  GCancellable *export_cancellable;
  guint n_matches;
  gboolean live;
  GHashTable *banner_widgets; /* id -> GtkWidget */
  WickSaveHandler save_handler;
  gpointer save_data;
  GDestroyNotify save_destroy;
};

/* What the views derive from a document, built on a worker thread so that a
 * large trace does not freeze the window after loading either. */
typedef struct
{
  WickTimelineScene *scene;
  WickMemoryChart *chart;
  GArray *costs;
} WickWindowDerived;

/* wick-window.c */
void wick_window_show_document (WickWindow *self, WickDocument *document,
                                WickWindowDerived *derived);
void wick_window_step_match (WickWindow *self, int direction);

/* wick-window-actions.c */
void wick_window_class_install_actions (GtkWidgetClass *widget_class);
void wick_window_update_actions (WickWindow *self);

/* wick-window-loading.c */
void wick_window_loading_init (WickWindow *self);
void wick_window_loading_dispose (WickWindow *self);
/* Stops the load shown, if any; its end is then ignored. */
void wick_window_loading_abandon (WickWindow *self);
void wick_window_fill_recent (WickWindow *self);

G_END_DECLS
