/* wick-line-spool-private.h — what only the tests call of wick-line-spool.h (the app
 * includes wick-line-spool.h alone). It declares no types: include it after
 * wick-line-spool.h. */
#pragma once

G_BEGIN_DECLS

guint64 wick_line_spool_get_lost_lines (WickLineSpool *self);

G_END_DECLS
