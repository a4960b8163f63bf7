/* wick-document-loader.h — reading a trace file without blocking the caller.
 *
 * A WickDocumentLoader reads one file (any format wick_document_load_file_auto()
 * reads) on a worker thread, as Sysprof's document loader does:
 *
 *   loader = wick_document_loader_new (path);
 *   g_signal_connect (loader, "notify::fraction", ...);
 *   wick_document_loader_load_async (loader, cancellable, on_loaded, data);
 *   ...
 *   document = wick_document_loader_load_finish (loader, result, &error);
 *
 * "fraction" (0..1, the share of the file's bytes read) and "message" (what it
 * is doing, translated) change on the thread that called load_async (its
 * thread-default main context), never on the worker, so a window binds them to
 * a progress bar directly. They change at most once per batch the reader
 * commits (a few MiB), so a large file costs a few hundred notifications.
 *
 * Cancelling @cancellable stops the reader at its next batch; load_finish then
 * fails with G_IO_ERROR_CANCELLED, also when the file had been read completely
 * before (the user asked for nothing). A trace with a parse error is not a
 * failure: load_finish returns the document with the records before the error
 * and wick_document_get_parse_error() says where and why; I/O errors and files
 * Wick cannot read fail with an error naming the file. A loader loads once.
 */
#pragma once

#include <gio/gio.h>

#include "wick-document.h"

G_BEGIN_DECLS

#define WICK_TYPE_DOCUMENT_LOADER (wick_document_loader_get_type ())
G_DECLARE_FINAL_TYPE (WickDocumentLoader, wick_document_loader, WICK, DOCUMENT_LOADER, GObject)

WickDocumentLoader *wick_document_loader_new (const char *path);
const char *wick_document_loader_get_path (WickDocumentLoader *self);
double wick_document_loader_get_fraction (WickDocumentLoader *self);
const char *wick_document_loader_get_message (WickDocumentLoader *self);

void wick_document_loader_load_async (WickDocumentLoader *self, GCancellable *cancellable,
                                      GAsyncReadyCallback callback, gpointer user_data);
/* (transfer full) the document, or NULL with @error. */
WickDocument *wick_document_loader_load_finish (WickDocumentLoader *self, GAsyncResult *result,
                                                GError **error);

G_END_DECLS
