/* wick-follow-file-private.h — what only the tests call of wick-follow-file.h (the app
 * includes wick-follow-file.h alone). It declares no types: include it after
 * wick-follow-file.h. */
#pragma once

G_BEGIN_DECLS

/* The longest line kept (0: wick_max_line_length ()). */
void wick_follow_file_set_max_line (WickFollowFile *self, gsize bytes);

G_END_DECLS
