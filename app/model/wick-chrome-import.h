/* wick-chrome-import.h — Chrome / Perfetto trace-event JSON into a WickDocument.
 *
 * Reads what the PyTorch profiler (and chrome://tracing, Perfetto's JSON
 * exporter, clang -ftime-trace, Bazel) writes — the object form with a
 * "traceEvents" array or the bare array form, plain, gzip or zstd — streamed
 * with Wick's own scanner (wick-chrome-stream.h; no DOM). The events become
 * candle-graph records fed through the ordinary reader so that health and
 * every view work unchanged:
 *
 *   X (and B/E pairs, matched per thread in timestamp order) on host threads,
 *     cat cpu_op / user_annotation / python_function / anything else
 *                                        -> spans, nested per (pid, tid) by
 *                                          time; tops hang under one root
 *   X with cat cuda_runtime / cuda_driver (hip_runtime, ...) -> ops in the
 *                                          enclosing span
 *   X with cat kernel / gpu_memcpy / gpu_memset / gpu_user_annotation
 *                                        -> device intervals, attached to the
 *     span that launched them: args.correlation matched with the runtime
 *     call, else a flow (ph s -> f) from the launch, else the root
 *   i/I named "[memory]" (args Addr, Bytes, Total Allocated, Total Reserved,
 *     Device Type, Device Id)            -> with Addr: alloc/free paired by
 *     (device, Addr), a free of a block allocated before the profile started
 *     is counted as information; always a device_memory sample with used =
 *     Total Allocated and reserved = Total Reserved
 *   i/I/R, C, b/e/n, S/T/F/p, s/t/f, O/N/D, P and M are read and counted;
 *   anything else is counted as skipped.
 *
 * The torch memory timeline (export_memory_timeline JSON, [times, sizes]) is
 * imported as logical memory by category (docs/format.md has the mapping).
 *
 * Times are µs in the file and ns from the earliest event in the document.
 * The synthesized meta names the file as entrypoint, phase infer, host
 * timing; the root span (WICK_CHROME_ROOT_SPAN_ID, measured, in no table of
 * spans) covers everything; a complete
 * terminal ends the stream. What was imported and skipped is kept as a
 * WickChromeInfo on the document and listed in its health (codes
 * chrome_imported, chrome_skipped, chrome_damaged, chrome_free_before_window).
 */
#pragma once

#include "wick-document.h"

G_BEGIN_DECLS

/* The id of the root span an import makes over everything, named after the
 * file (wick_document_is_synthetic_span() says which span it is). */
#define WICK_CHROME_ROOT_SPAN_ID "s1"

gboolean wick_chrome_import_file (WickDocument *document, const char *path,
                                  GCancellable *cancellable, GError **error);

/* What an import read, kept on the document (NULL for candle-graph files). */
typedef struct
{
  char *format;         /* "chrome" or "torch-memory-timeline" */
  GPtrArray *imported;  /* (phase, count as text) pairs, e.g. "X", "1200" */
  GPtrArray *skipped;   /* (construct, count as text) pairs */
  GPtrArray *metadata;  /* (top-level key, JSON text) pairs: distributedInfo, ... */
  GPtrArray *warnings;  /* tolerated damage, with file:line:column */
  guint64 frees_before_window;
  gboolean cut_off;
} WickChromeInfo;

const WickChromeInfo *wick_chrome_info_get (WickDocument *document);
/* JSON text of a top-level member, NULL when absent. */
const char *wick_chrome_info_lookup_metadata (const WickChromeInfo *info, const char *key);

G_END_DECLS
