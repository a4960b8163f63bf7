/* wick-application.h — the Wick application: one window per document.
 *
 * Application id io.github.wickprofiler.Wick. Actions: app.open (file
 * chooser), app.open-example, app.attach, app.attach-remote and app.follow
 * (the live area's dialogs, app/ui/session/), app.shortcuts, app.about, app.quit. `wick
 * FILE...` opens one window per file; with no file, one window on the welcome
 * page. Options (GApplication option entries, `wick --help`): --compare A B
 * opens a compare window; --follow FILE... follows each file as it grows;
 * --attach PID attaches the first window to a live process.
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define WICK_APPLICATION_ID "io.github.wickprofiler.Wick"

#define WICK_TYPE_APPLICATION (wick_application_get_type ())
G_DECLARE_FINAL_TYPE (WickApplication, wick_application, WICK, APPLICATION, AdwApplication)

WickApplication *wick_application_new (void);

/* The example trace bundled in data/ (installed or in the source tree). */
char *wick_application_get_example_path (void);

/* Non-zero when the command line was refused after startup (`wick --compare A`). */
int wick_application_get_exit_status (WickApplication *self);

G_END_DECLS
