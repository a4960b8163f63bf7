/* wick-page.h — the base of every page of a window: its session, its
 * selection, its title and icon, and when it refreshes.
 *
 * A page shows what its session (wick-trace-session.h) holds; the window
 * binds its one session into each page ("session", in the templates) and
 * adds pages to its view switcher under their "title" and "icon-name".
 * "selection" is the session's selection unless set apart (a page built on
 * its own, as the tests and the compare window build them).
 *
 * The refresh contract. A page recomputes only while it is shown and only
 * when its session changed since its last refresh:
 *   - a new document (notify::document) refreshes a shown page at once and
 *     a hidden one when it is next mapped, before that frame (its old rows
 *     are never drawn over the new document);
 *   - a document that grew ("changed") refreshes a shown page from the main
 *     loop, no sooner than 4× the last refresh's time and 250 ms after it
 *     (a fifth of the main thread at most), and a hidden one after the first
 *     frame of its next show: a tab switch paints what the page had first;
 *   - a hidden page does nothing at all; a switch back to a page whose
 *     session did not change does nothing either.
 * The class's refresh() is called with WICK_PAGE_REFRESH_REPLACED when the
 * document is not the one of the last refresh. A page may do its heavy work
 * on a worker thread: wick_page_begin_work() gives it a GCancellable
 * (cancelled when another refresh starts, the document is replaced or the
 * page is disposed), and it calls wick_page_end_work() once it applied the
 * result on the main thread; no refresh starts meanwhile. With
 * WICK_PAGE_REFRESH_NOW (wick_page_ensure_current(): a reader that needs
 * the page current at once, as the tests' accessors) the refresh completes
 * before it returns.
 */
#pragma once

#include <gtk/gtk.h>

#include "wick-trace-session.h"

G_BEGIN_DECLS

typedef enum
{
  WICK_PAGE_REFRESH_REPLACED = 1 << 0, /* another document than at the last refresh */
  WICK_PAGE_REFRESH_NOW = 1 << 1,      /* complete before returning: no worker */
} WickPageRefreshFlags;

#define WICK_TYPE_PAGE (wick_page_get_type ())
G_DECLARE_DERIVABLE_TYPE (WickPage, wick_page, WICK, PAGE, GtkWidget)

struct _WickPageClass
{
  GtkWidgetClass parent_class;

  /* Brings the page up to date with @document (NULL: none). */
  void (*refresh) (WickPage *self, WickDocument *document, WickPageRefreshFlags flags);
  /* The page's selection changed (WickSelectionChange bits); also called
   * with WICK_SELECTION_CHANGED_ALL when the page is given a selection. */
  void (*selection_changed) (WickPage *self, guint what);
  /* The session's document grew while the page is shown. The default
   * schedules a throttled refresh; a page that redraws every frame (the
   * timeline) does its own. */
  void (*document_grew) (WickPage *self);
  /* Whether the page has anything to show for @document (NULL: none);
   * the window shows only the pages that do. The default: TRUE. */
  gboolean (*wanted) (WickPage *self, WickDocument *document);

  gpointer padding[7];
};

WickTraceSession *wick_page_get_session (WickPage *self);
void wick_page_set_session (WickPage *self, WickTraceSession *session);
WickSelection *wick_page_get_selection (WickPage *self);
gboolean wick_page_is_wanted (WickPage *self, WickDocument *document);

const char *wick_page_get_title (WickPage *self);
void wick_page_set_title (WickPage *self, const char *title);
const char *wick_page_get_icon_name (WickPage *self);
void wick_page_set_icon_name (WickPage *self, const char *icon_name);

/* The page's session, made on the page's selection when it has none (a
 * page built on its own). */
WickTraceSession *wick_page_ensure_session (WickPage *self);
/* Shows @document through the page's session, making one on the page's
 * selection when it has none (a page built on its own), and brings this
 * page up to date at once, shown or not (the other pages of the session
 * follow the contract above). */
void wick_page_set_document (WickPage *self, WickDocument *document);
/* The page's document grew: its session says so to every page of it. */
void wick_page_document_changed (WickPage *self);

/* Refreshes now when stale (synchronously: the result is there on return). */
void wick_page_ensure_current (WickPage *self);

/* Worker-thread refreshes (see the contract above). */
GCancellable *wick_page_begin_work (WickPage *self);
void wick_page_end_work (WickPage *self);

G_END_DECLS
