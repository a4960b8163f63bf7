/* wick-application.h — the Wick application: one window per document.
 *
 * Application id io.github.wickprofiler.Wick. Actions: app.open (file
 * chooser), app.open-example, app.attach and app.follow (disabled until the
 * live UI installs their handlers), app.shortcuts, app.about, app.quit. `wick
 * FILE...` opens one window per file; with no file, one window on the welcome
 * page. Options (GApplication option entries, `wick --help`): --compare A B
 * opens a compare window; --follow FILE... follows each file as it grows;
 * --attach PID attaches the first window to a live process.
 *
 * For the live area (app/ui/live/): define
 *   void wick_live_ui_register (WickApplication *app);
 * in a file appended to wick_ui_sources and set `wick_ui_live_enabled = true`
 * in app/ui/live/meson.build; the application calls it once at startup. Call
 * wick_application_set_attach_handler() from there to enable "Attach to
 * process…".
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define WICK_APPLICATION_ID "io.github.wickprofiler.Wick"

#define WICK_TYPE_APPLICATION (wick_application_get_type ())
G_DECLARE_FINAL_TYPE (WickApplication, wick_application, WICK, APPLICATION, AdwApplication)

/* Called when the user picks "Attach to process…"; @parent is the window the
 * request came from (may be on its welcome page: reuse it with
 * wick_window_set_document(), or open a new window). */
typedef void (*WickAttachHandler) (WickApplication *app, GtkWindow *parent, gpointer user_data);

/* Called for `wick --follow FILE` (@parent NULL) and File → Follow File…:
 * show @file, a trace still being written, in a window (reuse @parent when it
 * shows the welcome page). */
typedef void (*WickFollowHandler) (WickApplication *app, GtkWindow *parent, GFile *file,
                                   gpointer user_data);

WickApplication *wick_application_new (void);

/* Installs the attach handler and enables app.attach. */
void wick_application_set_attach_handler (WickApplication *self, WickAttachHandler handler,
                                          gpointer user_data, GDestroyNotify destroy);

/* Installs the follow handler and enables app.follow (the live UI does). */
void wick_application_set_follow_handler (WickApplication *self, WickFollowHandler handler,
                                          gpointer user_data, GDestroyNotify destroy);

/* Opens @file in a window: reuses @reuse when it shows the welcome page, else a new one. */
void wick_application_open_file (WickApplication *self, GFile *file, GtkWindow *reuse);
/* Several files: as one job in one window when there are two or more and
 * every one is trace-event JSON (the ranks of a distributed run,
 * wick-ranks-page.h), else wick_application_open_file for each. */
void wick_application_open_files (WickApplication *self, GFile **files, guint n_files,
                                  GtkWindow *reuse);

/* The example trace bundled in data/ (installed or in the source tree). */
char *wick_application_get_example_path (void);

/* Optional hook provided by app/ui/live (see above). */
void wick_live_ui_register (WickApplication *app);

/* The process `wick --attach PID` names (0 when none): the live area attaches
 * the first window to it (app/ui/live/wick-live-ui.c). */
gint64 wick_application_get_attach_pid (WickApplication *self);
/* wick --attach ssh://host/PID: the address, NULL when not given. */
const char *wick_application_get_attach_url (WickApplication *self);
/* Non-zero when the command line was refused after startup (`wick --compare A`). */
int wick_application_get_exit_status (WickApplication *self);

/* Opens a compare window of @a against @b (wick-compare-window.h). */
void wick_application_compare_files (WickApplication *self, GFile *a, GFile *b);

G_END_DECLS
