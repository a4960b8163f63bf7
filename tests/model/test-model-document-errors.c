/* test-model-document-errors.c — every way a real trace file fails to read
 * has its WICK_DOCUMENT_ERROR code, on the GError and on the document's parse
 * error, through the one dispatch (wick_document_load_file_auto): a cut-off
 * .gz, corrupt gzip data, a file past the decompression limit, a line past
 * the line limit, a JSON object that is no trace, an xz file, and broken
 * Chrome JSON (whose parse error keeps the place as values). The files are
 * tests/data's real traces (candle-graph JSONL and a public PyTorch profiler
 * trace), damaged here. */
#include "config.h"

#include <glib/gstdio.h>

#include "wick-document.h"
#include "wick-document-private.h"
#include "wick-input.h"
#include "model-test-gzip.h"

static char *dir;

static GBytes *
data_file (const char *folder, const char *name)
{
  g_autofree char *path = g_build_filename (g_getenv ("WICK_TEST_DATA"), folder, name, NULL);
  char *text = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (path, &text, &length, NULL));
  return g_bytes_new_take (text, length);
}

static char *
write_file (const char *name, const void *data, gsize length)
{
  char *path = g_build_filename (dir, name, NULL);
  g_assert_true (g_file_set_contents (path, data, (gssize)length, NULL));
  return path;
}

/* Loads @path through the dispatch; asserts it fails with @code on the error
 * and on the document, and returns the document. */
static WickDocument *
load_failing (const char *path, WickDocumentError code)
{
  WickDocument *doc = wick_document_new ();
  g_autoptr (GError) error = NULL;
  const WickParseError *pe;

  g_assert_false (wick_document_load_file_auto (doc, path, NULL, NULL, NULL, &error));
  g_test_message ("%s: %s", path, error->message);
  g_assert_error (error, WICK_DOCUMENT_ERROR, (gint)code);
  pe = wick_document_get_parse_error (doc);
  g_assert_true (pe->failed);
  g_assert_cmpint (pe->code, ==, code);
  return doc;
}

static void
test_jsonl_gzip_cut_off (void)
{
  g_autoptr (GBytes) plain = data_file ("model", "train-contract.jsonl");
  g_autoptr (GBytes) gz
    = model_test_gzip_bytes (g_bytes_get_data (plain, NULL), g_bytes_get_size (plain));
  g_autofree char *path
    = write_file ("cut.jsonl.gz", g_bytes_get_data (gz, NULL), g_bytes_get_size (gz) / 2);
  g_autoptr (WickDocument) doc = load_failing (path, WICK_DOCUMENT_ERROR_TRUNCATED);
  /* what was decoded before the cut stays */
  g_assert_cmpuint (wick_document_get_n_records (doc), >, 0);
  g_assert_nonnull (strstr (wick_document_get_parse_error (doc)->cause, "cut off"));
}

static void
test_jsonl_gzip_corrupt (void)
{
  g_autoptr (GBytes) plain = data_file ("model", "train-contract.jsonl");
  g_autoptr (GBytes) gz = model_test_gzip_bytes (g_bytes_get_data (plain, NULL), g_bytes_get_size (plain));
  gsize n = g_bytes_get_size (gz);
  g_autofree guint8 *bytes = g_memdup2 (g_bytes_get_data (gz, NULL), n);
  /* a run of 0xff in the middle of the deflate stream: an invalid block */
  memset (bytes + n / 2, 0xff, 16);
  g_autofree char *path = write_file ("corrupt.jsonl.gz", bytes, n);
  g_autoptr (WickDocument) doc = load_failing (path, WICK_DOCUMENT_ERROR_CORRUPT_COMPRESSION);
  g_assert_nonnull (strstr (wick_document_get_parse_error (doc)->cause, "corrupt gzip data"));
}

static void
test_jsonl_over_decompression_limit (void)
{
  g_autoptr (GBytes) plain = data_file ("model", "train-contract.jsonl");
  g_autoptr (GBytes) gz = model_test_gzip_bytes (g_bytes_get_data (plain, NULL), g_bytes_get_size (plain));
  g_autofree char *path
    = write_file ("large.jsonl.gz", g_bytes_get_data (gz, NULL), g_bytes_get_size (gz));
  g_assert_cmpuint (g_bytes_get_size (plain), >, 2048);
  wick_set_max_decompressed_bytes (2048);
  g_autoptr (WickDocument) doc = load_failing (path, WICK_DOCUMENT_ERROR_TOO_LARGE);
  wick_set_max_decompressed_bytes (0);
  g_assert_cmpuint (wick_document_get_n_records (doc), >, 0);
  g_assert_nonnull (
    strstr (wick_document_get_parse_error (doc)->cause, "pass the limit of 2048 decompressed"));
}

static void
test_jsonl_line_too_long (void)
{
  g_autoptr (GBytes) plain = data_file ("model", "train-contract.jsonl");
  g_autofree char *path
    = write_file ("lines.jsonl", g_bytes_get_data (plain, NULL), g_bytes_get_size (plain));
  wick_set_max_line_length (64);
  g_autoptr (WickDocument) doc = load_failing (path, WICK_DOCUMENT_ERROR_TOO_LARGE);
  wick_set_max_line_length (WICK_DEFAULT_MAX_LINE_LENGTH);
  g_assert_cmpuint (wick_document_get_parse_error (doc)->line, ==, 1);
  g_assert_nonnull (
    strstr (wick_document_get_parse_error (doc)->cause, "longer than the maximum of 64 bytes"));
}

static void
test_not_a_trace (void)
{
  static const char text[] = "{\"spans\": [], \"version\": 3}\n";
  g_autofree char *path = write_file ("spans.json", text, sizeof text - 1);
  g_autoptr (WickDocument) doc = load_failing (path, WICK_DOCUMENT_ERROR_NOT_A_TRACE);
  g_assert_nonnull (strstr (wick_document_get_parse_error (doc)->message, "\"spans\""));
}

static void
test_xz_unsupported (void)
{
  g_autoptr (GBytes) plain = data_file ("model", "train-contract.jsonl");
  g_autofree char *xz = g_find_program_in_path ("xz");
  g_autofree char *plain_path
    = write_file ("trace.jsonl", g_bytes_get_data (plain, NULL), g_bytes_get_size (plain));
  g_autofree char *path = g_strconcat (plain_path, ".xz", NULL);

  if (xz == NULL)
    {
      g_test_skip ("xz is not installed");
      return;
    }
  const char *argv[] = { xz, "-k", plain_path, NULL };
  int status = -1;
  g_assert_true (g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL,
                               &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_autoptr (WickDocument) doc = load_failing (path, WICK_DOCUMENT_ERROR_UNSUPPORTED_COMPRESSION);
  g_assert_nonnull (strstr (wick_document_get_parse_error (doc)->message, "xz-compressed"));
  g_assert_cmpuint (wick_document_get_n_records (doc), ==, 0);
}

static void
test_chrome_broken (void)
{
  g_autoptr (GBytes) gz = data_file ("chrome", "hta-simple-add.json.gz");
  g_autofree char *gz_path
    = write_file ("simple-add.json.gz", g_bytes_get_data (gz, NULL), g_bytes_get_size (gz));
  g_autoptr (WickInput) input = wick_input_open (gz_path, NULL);
  g_autoptr (GByteArray) text = g_byte_array_new ();
  guint8 chunk[65536];
  gssize got;
  while ((got = wick_input_read (input, chunk, sizeof chunk, NULL)) > 0)
    g_byte_array_append (text, chunk, (guint)got);
  /* the first "ph" of an event after the first hundred lines loses its colon */
  guint line = 1;
  gsize at = 0, line_start = 0;
  for (; at + 5 < text->len; at++)
    {
      if (text->data[at] == '\n')
        {
          line++;
          line_start = at + 1;
        }
      if (line > 100 && memcmp (text->data + at, "\"ph\":", 5) == 0)
        break;
    }
  g_assert_cmpuint (at + 5, <, text->len);
  text->data[at + 4] = ' ';
  g_autofree char *path = write_file ("broken.json", text->data, text->len);
  g_autoptr (WickDocument) doc = load_failing (path, WICK_DOCUMENT_ERROR_INVALID);
  const WickParseError *pe = wick_document_get_parse_error (doc);
  g_assert_cmpuint (pe->line, ==, line);
  g_assert_cmpstr (pe->cause, ==, "expected `:`");
  /* the column of the value that follows the key without a colon */
  gsize value = at + 4;
  while (text->data[value] == ' ')
    value++;
  g_autofree char *place
    = g_strdup_printf ("broken.json:%u:%" G_GSIZE_FORMAT, line, value - line_start + 1);
  g_assert_true (g_str_has_prefix (pe->message, "parse Chrome trace JSON "));
  g_assert_true (g_str_has_suffix (pe->message, place));
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  dir = g_dir_make_tmp ("wick-document-errors-XXXXXX", NULL);
  g_test_add_func ("/model/document-errors/jsonl-gzip-cut-off", test_jsonl_gzip_cut_off);
  g_test_add_func ("/model/document-errors/jsonl-gzip-corrupt", test_jsonl_gzip_corrupt);
  g_test_add_func ("/model/document-errors/jsonl-over-decompression-limit",
                   test_jsonl_over_decompression_limit);
  g_test_add_func ("/model/document-errors/jsonl-line-too-long", test_jsonl_line_too_long);
  g_test_add_func ("/model/document-errors/not-a-trace", test_not_a_trace);
  g_test_add_func ("/model/document-errors/xz-unsupported", test_xz_unsupported);
  g_test_add_func ("/model/document-errors/chrome-broken", test_chrome_broken);
  status = g_test_run ();
  {
    g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
    const char *name;
    while (d != NULL && (name = g_dir_read_name (d)) != NULL)
      {
        g_autofree char *p = g_build_filename (dir, name, NULL);
        g_unlink (p);
      }
    g_rmdir (dir);
  }
  return status;
}
