/* wick-trace-format.c — the one place that says which reader reads a file
 * (see wick-trace-format.h).
 */
#include "config.h"

#include "wick-trace-format.h"

#include "wick-chrome-import.h"
#include "wick-document-private.h"

G_DEFINE_QUARK (wick - document - error - quark, wick_document_error)

WickFileFormat
wick_file_sniff (const char *path, GError **error)
{
  WickInput *input = wick_input_open (path, error);
  g_autoptr (WickChromeReader) reader = NULL;
  g_autoptr (GError) local = NULL;
  WickFileFormat format = WICK_FILE_FORMAT_UNKNOWN;
  WickDocumentError code;

  if (input == NULL)
    return WICK_FILE_FORMAT_UNKNOWN;
  reader = wick_chrome_reader_new (input, path);
  if (wick_chrome_reader_start (reader, &format, &local))
    return format;
  if (!g_error_matches (local, G_IO_ERROR, G_IO_ERROR_INVALID_DATA))
    {
      /* cannot read it (a corrupt compressed stream is data: INVALID_DATA) */
      g_propagate_error (error, g_steal_pointer (&local));
      return WICK_FILE_FORMAT_UNKNOWN;
    }
  switch (wick_chrome_reader_get_start_failure (reader))
    {
      case WICK_CHROME_START_DAMAGED:
        return WICK_FILE_FORMAT_CHROME; /* the importer words the damage */
      case WICK_CHROME_START_EMPTY:
        code = WICK_DOCUMENT_ERROR_EMPTY;
        break;
      case WICK_CHROME_START_NOT_A_TRACE:
        code = WICK_DOCUMENT_ERROR_NOT_A_TRACE;
        break;
      case WICK_CHROME_START_NOT_JSON:
      default:
        code = WICK_DOCUMENT_ERROR_NOT_JSON;
        break;
    }
  g_set_error_literal (error, WICK_DOCUMENT_ERROR, code, local->message);
  return WICK_FILE_FORMAT_UNKNOWN;
}

gboolean
wick_document_load_file_auto (WickDocument *document, const char *path, GCancellable *cancellable,
                              WickProgressFunc progress, gpointer user_data, GError **error)
{
  g_autoptr (GError) local = NULL;
  WickFileFormat format = wick_file_sniff (path, &local);

  switch (format)
    {
      case WICK_FILE_FORMAT_CHROME:
      case WICK_FILE_FORMAT_MEMORY_TIMELINE:
        return wick_chrome_import_file (document, path, cancellable, error);
      case WICK_FILE_FORMAT_JSONL:
        return wick_document_load_file (document, path, cancellable, progress, user_data, error);
      case WICK_FILE_FORMAT_UNKNOWN:
      default:
        break;
    }
  if (g_error_matches (local, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_NOT_A_TRACE))
    {
      wick_document_set_path (document, path);
      wick_document_fail (document, 0, -1, local->message, NULL);
      document->finished = TRUE;
    }
  else if (local != NULL && local->domain == WICK_DOCUMENT_ERROR)
    {
      /* empty, or not JSON at all: the JSONL reader words its errors */
      return wick_document_load_file (document, path, cancellable, progress, user_data, error);
    }
  g_propagate_error (error, g_steal_pointer (&local));
  return FALSE;
}
