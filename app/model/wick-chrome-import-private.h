/* wick-chrome-import-private.h — what only the tests call of wick-chrome-import.h (the app
 * includes wick-chrome-import.h alone). It declares no types: include it after
 * wick-chrome-import.h. */
#pragma once

G_BEGIN_DECLS

/* TRUE when @data (a whole file, possibly compressed) is trace-event JSON or a
 * torch memory timeline rather than candle-graph JSONL, judged from its
 * top-level structure (see wick-chrome-stream.h). */
gboolean wick_chrome_sniff (const char *data, gsize len);

/* Imports into a new, empty document. On errors the document holds nothing
 * and @error says why (not JSON, no traceEvents array, ...). */
gboolean wick_chrome_import_data (WickDocument *document, const char *data, gsize len,
                                  const char *name, GError **error);

/* For tests: -1 (the default) reads on a thread of its own for inputs of
 * 8 MiB or more, 1 always, 0 never. */
void wick_chrome_import_set_pipeline (int mode);

G_END_DECLS
