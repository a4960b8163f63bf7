/* model-test-gzip.c — gzip members for the model tests (see the header). */
#include "config.h"

#include "model-test-gzip.h"

#include <zlib.h>

void
model_test_gzip_append (GByteArray *out, const void *data, gsize length, int level, int mem_level)
{
  z_stream z = { 0 };
  g_assert_cmpint (deflateInit2 (&z, level, Z_DEFLATED, 15 + 16, mem_level, Z_DEFAULT_STRATEGY), ==,
                   Z_OK);
  gsize cap = deflateBound (&z, length) + 64;
  gsize at = out->len;
  g_byte_array_set_size (out, (guint)(at + cap));
  z.next_in = (guint8 *)data;
  z.avail_in = (uInt)length;
  z.next_out = out->data + at;
  z.avail_out = (uInt)cap;
  g_assert_cmpint (deflate (&z, Z_FINISH), ==, Z_STREAM_END);
  g_byte_array_set_size (out, (guint)(at + z.total_out));
  deflateEnd (&z);
}

GBytes *
model_test_gzip_bytes (const void *data, gsize length)
{
  GByteArray *out = g_byte_array_new ();
  model_test_gzip_append (out, data, length, 6, 8);
  return g_byte_array_free_to_bytes (out);
}
