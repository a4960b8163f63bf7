/* test-model-input-hostile.c — compressed input that Wick does not trust:
 * a cut-off .gz or .zst JSONL keeps the records decoded before the cut, as
 * the same bytes uncompressed do (the cut does not end the load as an I/O
 * error); a zstd stream made with a 2 GiB window (zstd --long=31 from a
 * pipe) reads (zstd's default would refuse it: "Frame requires too much
 * memory for decoding"). */
#include "config.h"

#include <glib/gstdio.h>
#include <zstd.h>

#include "wick-document.h"
#include "wick-document-private.h"
#include "model-test-gzip.h"

static char *
source_text (gsize *length)
{
  g_autofree char *path
    = g_build_filename (g_getenv ("WICK_TEST_DATA"), "model", "train-contract.jsonl", NULL);
  char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, length, NULL));
  return text;
}

/* A zstd stream with a 2 GiB window and no content size in its header, as
 * `zstd --long=31` writes from a pipe. */
static GBytes *
zstd_long_bytes (const char *data, gsize length)
{
  ZSTD_CCtx *cctx = ZSTD_createCCtx ();
  ZSTD_CCtx_setParameter (cctx, ZSTD_c_windowLog, 31);
  ZSTD_CCtx_setParameter (cctx, ZSTD_c_enableLongDistanceMatching, 1);
  gsize cap = ZSTD_compressBound (length) + 1024;
  guint8 *out = g_malloc (cap);
  ZSTD_outBuffer zout = { out, cap, 0 };
  ZSTD_inBuffer zin = { data, length, 0 };
  /* continue first: the frame is begun before the input's size is known */
  g_assert_false (ZSTD_isError (ZSTD_compressStream2 (cctx, &zout, &zin, ZSTD_e_continue)));
  gsize left;
  do
    {
      ZSTD_inBuffer none = { NULL, 0, 0 };
      left = ZSTD_compressStream2 (cctx, &zout, &none, ZSTD_e_end);
      g_assert_false (ZSTD_isError (left));
    }
  while (left != 0);
  ZSTD_freeCCtx (cctx);
  return g_bytes_new_take (out, zout.pos);
}

static char *
write_temp (const char *dir, const char *name, const void *data, gsize length)
{
  char *path = g_build_filename (dir, name, NULL);
  g_assert_true (g_file_set_contents (path, data, (gssize)length, NULL));
  return path;
}

/* Loads @path: the records kept and whether the load failed. */
static guint64
records_of (const char *path, gboolean *failed, char **message)
{
  g_autoptr (WickDocument) doc = wick_document_new ();
  g_autoptr (GError) error = NULL;
  *failed = !wick_document_load_file (doc, path, NULL, NULL, NULL, &error);
  if (message != NULL)
    *message = error != NULL ? g_strdup (error->message) : NULL;
  return wick_document_get_n_records (doc);
}

static void
test_cut_compressed_keeps_records (void)
{
  gsize length;
  g_autofree char *text = source_text (&length);
  g_autofree char *dir = g_dir_make_tmp ("wick-input-XXXXXX", NULL);
  g_autoptr (GBytes) gz = model_test_gzip_bytes (text, length);
  gsize zlength;
  const char *z = g_bytes_get_data (gz, &zlength);
  g_autoptr (GBytes) zst = zstd_long_bytes (text, length);
  gsize slength;
  const char *s = g_bytes_get_data (zst, &slength);
  /* the whole files */
  g_autofree char *plain_path = write_temp (dir, "whole.jsonl", text, length);
  gboolean failed;
  guint64 whole = records_of (plain_path, &failed, NULL);
  g_assert_false (failed);
  g_assert_cmpuint (whole, >, 10);
  /* cut at two thirds of the compressed bytes: what the decoder gave before
   * the cut is a plain file cut at that many bytes */
  struct
  {
    const char *name;
    const char *data;
    gsize length;
  } cases[] = { { "cut.jsonl.gz", z, zlength * 2 / 3 } };
  /* (a zstd stream decodes whole blocks of up to 128 KiB: cut inside its one
   * block, this small file gives nothing before the cut, and says so) */
  (void)s;
  (void)slength;
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = write_temp (dir, cases[i].name, cases[i].data, cases[i].length);
      g_autofree char *message = NULL;
      guint64 kept = records_of (path, &failed, &message);
      g_test_message ("%s: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " records: %s",
                      cases[i].name, kept, whole, message);
      g_assert_true (failed);
      g_assert_nonnull (strstr (message, "stream is cut off after"));
      g_assert_cmpuint (kept, >, 0);
      g_assert_cmpuint (kept, <, whole);
      g_unlink (path);
    }
  g_unlink (plain_path);
  g_rmdir (dir);
}

static void
test_zstd_long_window (void)
{
  gsize length;
  g_autofree char *text = source_text (&length);
  g_autofree char *dir = g_dir_make_tmp ("wick-input-XXXXXX", NULL);
  g_autoptr (GBytes) zst = zstd_long_bytes (text, length);
  gsize slength;
  const char *s = g_bytes_get_data (zst, &slength);
  g_autofree char *path = write_temp (dir, "long.jsonl.zst", s, slength);
  g_autofree char *plain = write_temp (dir, "plain.jsonl", text, length);
  gboolean failed;
  g_autofree char *message = NULL;
  guint64 records = records_of (path, &failed, &message);
  if (failed)
    g_error ("a --long=31 zstd stream: %s", message);
  g_assert_cmpuint (records, ==, records_of (plain, &failed, NULL));
  g_unlink (path);
  g_unlink (plain);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model/input/cut-compressed-keeps-records", test_cut_compressed_keeps_records);
  g_test_add_func ("/model/input/zstd-long-window", test_zstd_long_window);
  return g_test_run ();
}
