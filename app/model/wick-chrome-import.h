/* wick-chrome-import.h — Chrome / Perfetto trace-event JSON into a WickDocument.
 *
 * Reads what the PyTorch profiler (and chrome://tracing, Perfetto's JSON
 * exporter) writes: a JSON array of events, or an object with a
 * "traceEvents" array. The events become candle-graph records, fed through the
 * ordinary reader so that health and every view work unchanged:
 *
 *   X (and B/E pairs) on host threads, cat cpu_op / user_annotation /
 *     python_function / anything else   -> spans, nested per (pid, tid) by
 *                                          time; tops hang under one root
 *   X with cat cuda_runtime / cuda_driver -> ops in the enclosing span
 *   X with cat kernel / gpu_memcpy / gpu_memset / gpu_user_annotation
 *                                        -> device intervals, attached to the
 *     span that launched them: args.correlation matched with the runtime
 *     call, else a flow (ph s -> f) from the launch, else the root
 *   i/I named "[memory]" (args Addr, Bytes, Total Allocated, Total Reserved,
 *     Device Type, Device Id)            -> memory alloc/free by address (Bytes
 *     < 0 is a free) in the enclosing span, and a device_memory sample with
 *     used = Total Allocated and reserved = Total Reserved
 *
 * Times are µs in the file and ns from the earliest event in the document.
 * The synthesized meta names the file as entrypoint, phase infer, host
 * timing; the root span (id s1, measured) covers everything; a complete
 * terminal ends the stream. Events that do not fit (unknown phases, metadata,
 * counters) are skipped. The whole file is parsed in memory with json-glib.
 */
#pragma once

#include "wick-document.h"

G_BEGIN_DECLS

/* TRUE when @data (the start of a file) looks like trace-event JSON rather
 * than candle-graph JSONL: it starts with '[', or with '{' whose first key is
 * "traceEvents" (or which holds "traceEvents" before any "kind"). */
gboolean wick_chrome_sniff (const char *data, gsize len);

/* Imports into a new, empty document. On errors the document holds nothing
 * and @error says why (not JSON, no traceEvents array, ...). */
gboolean wick_chrome_import_data (WickDocument *document, const char *data, gsize len,
                                  const char *name, GError **error);
gboolean wick_chrome_import_file (WickDocument *document, const char *path,
                                  GCancellable *cancellable, GError **error);

/* Opens either format: trace-event JSON by wick_chrome_sniff(), candle-graph
 * JSONL (wick_document_load_file) otherwise. For the app's File → Open. */
gboolean wick_document_load_file_auto (WickDocument *document, const char *path,
                                       GCancellable *cancellable, WickProgressFunc progress,
                                       gpointer user_data, GError **error);

G_END_DECLS
