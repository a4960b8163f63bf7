/* wick-chrome-export.h — a document's track model as Chrome trace-event JSON.
 *
 * What `wick-trace convert --chrome` and the app's File → Export Trace write,
 * whatever the input format (it opens in Perfetto and chrome://tracing):
 *
 *   processes, threads  pids and tids with process_name / thread_name metadata
 *   slices              X on their thread (a slice never closed: B), with args
 *   device intervals    X with a device category (kernel unless theirs is
 *                       one) on one tid per device stream (1000000000 + track
 *                       index, named by the track) in their process, named by
 *                       kernel or op; a candle-graph trace's on the host clock
 *                       (wick_chrome_export_device_offsets())
 *   counters            C, the series "name key" as name and args.key
 *   instants            i with their scope (Wick extension records of a
 *                       candle-graph trace among them)
 *   object events       O / N / D of their object, with its id
 *   samples             P on their thread
 *   async slices        b / e (steps n)
 *   flows               s / f pairs (bp e), the flow's index as id
 *
 * Times are µs from the model's origin: a Chrome input keeps its own clock, a
 * candle-graph trace its ns from the trace's start. A Chrome trace exported
 * and imported again keeps its counts by phase (B/E pairs come back as X).
 * The output is produced in pieces of about 1 MiB handed to a write function,
 * so memory stays bounded by the model, not by the output.
 */
#pragma once

#include <gio/gio.h>

#include "wick-document.h"

G_BEGIN_DECLS

/* Receives the next @len bytes of the output; FALSE (with @error) stops. */
typedef gboolean (*WickChromeExportWriteFunc) (const char *data, gsize len, gpointer user_data,
                                               GError **error);

gboolean wick_chrome_export (WickDocument *document, WickChromeExportWriteFunc write,
                             gpointer user_data, GError **error);

/* Writes @file atomically (a temporary file renamed over it when every write
 * worked; on failure @file is left as it was), gzip-compressed when @gzip. */
gboolean wick_chrome_export_to_file (WickDocument *document, GFile *file, gboolean gzip,
                                     GCancellable *cancellable, GError **error);

G_END_DECLS
