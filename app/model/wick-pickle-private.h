/* wick-pickle-private.h — what only the tests call of wick-pickle.h (the app
 * includes wick-pickle.h alone). It declares no types: include it after
 * wick-pickle.h. */
#pragma once

G_BEGIN_DECLS

/* Whole-buffer convenience (tests, fuzzing): no streaming. */
gboolean wick_pickle_parse_data (const void *data, gsize len, WickPickleValue *result,
                                 GError **error);

void wick_pickle_limits_init (WickPickleLimits *limits);

G_END_DECLS
