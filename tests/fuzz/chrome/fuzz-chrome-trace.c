/* fuzz-chrome-trace.c — libFuzzer target for the Chrome trace-event JSON
 * importer: any bytes are imported into a fresh document; an import that
 * succeeds must give a document the reader accepted (the importer writes
 * candle-graph records). */
#include "config.h"

#include <stdint.h>

#include "wick-chrome-import.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr (WickDocument) doc = wick_document_new ();

  (void)wick_chrome_sniff ((const char *)data, size);
  if (wick_chrome_import_data (doc, (const char *)data, size, "fuzz", NULL))
    g_assert_false (wick_document_get_parse_error (doc)->failed);
  return 0;
}
