/* fuzz-compressed-input.c — libFuzzer target for compressed trace files:
 * the input is written to a file and opened as the app and wick-trace open
 * any file (magic bytes decide: gzip, zstd, plain; JSONL
 * or Chrome JSON), under a 1 MiB line limit. The seeds are .gz and .zst
 * JSONL and Chrome files, so mutations reach the decompressors and the
 * parsers behind them. No crash, no hang. */
#include "config.h"

#include <glib/gstdio.h>
#include <stdlib.h>

#include "wick-document.h"
#include "wick-chrome-import.h"
#include "wick-input.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static char *path;

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (path == NULL)
    {
      g_autofree char *dir = g_dir_make_tmp ("wick-fuzz-compressed-XXXXXX", NULL);
      path = g_build_filename (dir, "input.trace", NULL);
      wick_set_max_line_length (1 << 20);
    }
  if (!g_file_set_contents (path, (const char *)data, (gssize)size, NULL))
    abort ();
  /* the bomb limits reached within a small input too: a tenth of the inputs
   * read with a 64 KiB decompressed limit (the ratio limit needs 64 MiB
   * decoded before it judges, beyond a fuzz input's reach) */
  wick_set_max_decompressed_bytes (size % 10 == 7 ? 64 << 10 : 0);
  WickDocument *document = wick_document_new_with_extensions (TRUE);
  wick_document_load_file_auto (document, path, NULL, NULL, NULL, NULL);
  g_object_unref (document);
  return 0;
}
