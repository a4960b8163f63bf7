/* wick-application-private.h — what only the tests call of wick-application.h (the app
 * includes wick-application.h alone). It declares no types: include it after
 * wick-application.h. */
#pragma once

G_BEGIN_DECLS

/* Several files: as one job in one window when there are two or more and
 * every one is trace-event JSON (the ranks of a distributed run,
 * wick-ranks-page.h), else wick_application_open_file for each. */
void wick_application_open_files (WickApplication *self, GFile **files, guint n_files,
                                  GtkWindow *reuse);

/* Opens a compare window of @a against @b (wick-compare-window.h). */
void wick_application_compare_files (WickApplication *self, GFile *a, GFile *b);

G_END_DECLS
