/* weights-test-util.c — see weights-test-util.h. */
#include "weights-test-util.h"

#include <glib/gstdio.h>
#include <string.h>

char *
weights_test_tmpdir (void)
{
  GError *error = NULL;
  char *path = g_dir_make_tmp ("wick-weights-XXXXXX", &error);
  g_assert_no_error (error);
  return path;
}

void
weights_test_rmdir (const char *path)
{
  GDir *dir = g_dir_open (path, 0, NULL);
  const char *name;
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      char *child = g_build_filename (path, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR))
        weights_test_rmdir (child);
      else
        g_unlink (child);
      g_free (child);
    }
  if (dir != NULL)
    g_dir_close (dir);
  g_rmdir (path);
}

static void
write_prefix_bytes (GByteArray *bytes, uint64_t length)
{
  for (int i = 0; i < 8; i++)
    {
      guint8 b = (guint8)(length >> (8 * i));
      g_byte_array_append (bytes, &b, 1);
    }
}

void
weights_test_write_raw (const char *path, const char *header, const void *data, size_t data_bytes)
{
  GByteArray *bytes = g_byte_array_new ();
  write_prefix_bytes (bytes, strlen (header));
  g_byte_array_append (bytes, (const guint8 *)header, (guint)strlen (header));
  if (data_bytes > 0)
    g_byte_array_append (bytes, data, (guint)data_bytes);
  GError *error = NULL;
  g_file_set_contents (path, (const char *)bytes->data, bytes->len, &error);
  g_assert_no_error (error);
  g_byte_array_unref (bytes);
}

void
weights_test_write_prefix (const char *path, uint64_t header_length, const char *rest)
{
  GByteArray *bytes = g_byte_array_new ();
  write_prefix_bytes (bytes, header_length);
  g_byte_array_append (bytes, (const guint8 *)rest, (guint)strlen (rest));
  GError *error = NULL;
  g_file_set_contents (path, (const char *)bytes->data, bytes->len, &error);
  g_assert_no_error (error);
  g_byte_array_unref (bytes);
}

char *
weights_test_sha256 (const void *data, size_t bytes)
{
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256, data, bytes);
}

void
weights_test_fill (void *data, size_t bytes, uint32_t seed)
{
  uint64_t state = 0x9E3779B97F4A7C15ull ^ seed;
  unsigned char *p = data;
  for (size_t i = 0; i < bytes; i++)
    {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      p[i] = (unsigned char)(state >> 24);
    }
}

void
weights_test_fill_bf16_exact_f32 (float *data, size_t count, uint32_t seed)
{
  GRand *rand = g_rand_new_with_seed (seed);
  for (size_t i = 0; i < count; i++)
    {
      float value = (float)g_rand_double_range (rand, -2.0, 2.0);
      guint32 bits;
      memcpy (&bits, &value, 4);
      bits &= 0xFFFF0000u;
      memcpy (&data[i], &bits, 4);
    }
  g_rand_free (rand);
}
