/* wick-trace-format.c — the one place that says which reader reads a file
 * (see wick-trace-format.h).
 */
#include "config.h"

#include "wick-trace-format.h"

#include "wick-chrome-import.h"
#include "wick-document-private.h"

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
  if (local->domain != WICK_DOCUMENT_ERROR
      || g_error_matches (local, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_UNSUPPORTED_COMPRESSION)
      || g_error_matches (local, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_TOO_LARGE))
    {
      /* cannot read it, not at all, or its first value is past the limit (a
       * corrupt compressed stream is data, which the JSONL reader words) */
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
  if (g_error_matches (local, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_EMPTY)
      || g_error_matches (local, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_NOT_JSON))
    {
      /* empty, or not JSON at all: the JSONL reader words its errors */
      return wick_document_load_file (document, path, cancellable, progress, user_data, error);
    }
  if (g_error_matches (local, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_NOT_A_TRACE)
      || g_error_matches (local, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_UNSUPPORTED_COMPRESSION))
    {
      /* not a trace, or compressed in a way Wick does not read */
      wick_document_set_path (document, path);
      document->finished = TRUE;
      return wick_document_fail (document, (WickDocumentError)local->code, 0, -1, local->message,
                                 NULL, error);
    }
  g_propagate_error (error, g_steal_pointer (&local));
  return FALSE;
}
