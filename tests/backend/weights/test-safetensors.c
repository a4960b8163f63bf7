/* test-safetensors.c — the safetensors reader, writer, index and the strict
 * JSON reader under them: every malformed input has its exact error. */
#include "weights-test-util.h"

#include "wick-safetensors-private.h"
#include "wick-weights-json-private.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

/* ---- JSON ------------------------------------------------------------------- */

static void
expect_json_error (const char *text, size_t length, const char *message)
{
  WickJsonDocument document;
  WickError error = { "" };
  g_assert_false (wick_weights_json_parse (text, length, &document, &error));
  g_assert_cmpstr (error.message, ==, message);
  g_assert_null (document.nodes);
}

static void
test_json_strict (void)
{
  expect_json_error ("01", 2, "byte 0: leading zero in number");
  expect_json_error ("[1,]", 4, "byte 3: unexpected character");
  expect_json_error ("{\"a\":1,}", 8, "byte 7: expected a string key in object");
  expect_json_error ("\"a\x01\"", 4, "byte 2: control character in string");
  expect_json_error ("\"\\ud800\"", 8, "byte 1: high surrogate not followed by a low surrogate");
  expect_json_error ("\"\\udc00\"", 8, "byte 1: unpaired low surrogate in \\u escape");
  expect_json_error ("\"\xc0\x80\"", 4, "byte 1: invalid UTF-8 in string");
  expect_json_error ("\"\xed\xa0\x80\"", 5, "byte 1: invalid UTF-8 in string");
  expect_json_error ("nul", 3, "byte 0: invalid literal");
  expect_json_error ("1.", 2, "byte 2: expected a digit in number");
  expect_json_error ("\"\\x\"", 4, "byte 1: invalid escape in string");
  expect_json_error ("", 0, "byte 0: unexpected end of input");
  expect_json_error ("{} x", 4, "byte 3: unexpected characters after the JSON value");
  expect_json_error ("{\"a\" 1}", 7, "byte 5: expected ':' after an object key");
  expect_json_error ("\"abc", 4, "byte 0: unterminated string");
  expect_json_error ("NaN", 3, "byte 0: unexpected character");

  char deep[200];
  memset (deep, '[', 65);
  memset (deep + 65, ']', 65);
  expect_json_error (deep, 130, "byte 64: nesting deeper than 64 levels");
  WickJsonDocument document;
  WickError error;
  g_assert_true (wick_weights_json_parse (deep + 1, 128, &document, &error));
  wick_weights_json_clear (&document);
}

static void
test_json_values (void)
{
  const char *text = " {\"a\" : [1, -2.5e3, true, false, null, \"\\u00e9\\ud83d\\ude00\\n\"],"
                     " \"b\": 18446744073709551615, \"c\": 18446744073709551616} ";
  WickJsonDocument document;
  WickError error;
  g_assert_true (wick_weights_json_parse (text, strlen (text), &document, &error));
  const WickJsonNode *root = wick_weights_json_root (&document);
  g_assert_cmpint (root->kind, ==, WICK_JSON_OBJECT);
  g_assert_cmpuint (root->n_children, ==, 3);
  const WickJsonNode *a = wick_weights_json_member (&document, root, "a");
  g_assert_cmpint (a->kind, ==, WICK_JSON_ARRAY);
  g_assert_cmpuint (a->n_children, ==, 6);
  const WickJsonNode *item = wick_weights_json_first (&document, a);
  uint64_t value;
  g_assert_true (wick_weights_json_uint64 (item, &value));
  g_assert_cmpuint (value, ==, 1);
  item = wick_weights_json_next (&document, item);
  g_assert_false (wick_weights_json_uint64 (item, &value));
  g_assert_cmpint (wick_weights_json_next (&document, item)->kind, ==, WICK_JSON_TRUE);
  while (wick_weights_json_next (&document, item) != NULL)
    item = wick_weights_json_next (&document, item);
  g_assert_cmpint (item->kind, ==, WICK_JSON_STRING);
  g_assert_cmpstr (item->text, ==, "\xc3\xa9\xf0\x9f\x98\x80\n");
  g_assert_true (
    wick_weights_json_uint64 (wick_weights_json_member (&document, root, "b"), &value));
  g_assert_cmpuint (value, ==, G_MAXUINT64);
  g_assert_false (
    wick_weights_json_uint64 (wick_weights_json_member (&document, root, "c"), &value));
  wick_weights_json_clear (&document);
}

/* ---- headers ------------------------------------------------------------------------ */

static GBytes *
file_bytes (uint64_t declared, const char *header, size_t data_bytes)
{
  GByteArray *bytes = g_byte_array_new ();
  for (int i = 0; i < 8; i++)
    {
      guint8 b = (guint8)(declared >> (8 * i));
      g_byte_array_append (bytes, &b, 1);
    }
  g_byte_array_append (bytes, (const guint8 *)header, (guint)strlen (header));
  for (size_t i = 0; i < data_bytes; i++)
    {
      guint8 b = (guint8)i;
      g_byte_array_append (bytes, &b, 1);
    }
  return g_byte_array_free_to_bytes (bytes);
}

static void
expect_file_error (uint64_t declared, const char *header, size_t data_bytes, const char *message)
{
  GBytes *bytes = file_bytes (declared, header, data_bytes);
  WickSafetensorsHeader parsed;
  WickError error = { "" };
  gsize size;
  const guint8 *data = g_bytes_get_data (bytes, &size);
  g_assert_false (wick_safetensors_parse_bytes (data, size, &parsed, &error));
  g_assert_cmpstr (error.message, ==, message);
  g_assert_cmpuint (parsed.n_tensors, ==, 0);
  g_bytes_unref (bytes);
}

#define TENSOR(name, dtype, shape, offsets)                                                        \
  "\"" name "\":{\"dtype\":\"" dtype "\",\"shape\":" shape ",\"data_offsets\":" offsets "}"

static void
expect_header_error (const char *header, size_t data_bytes, const char *message)
{
  expect_file_error (strlen (header), header, data_bytes, message);
}

static void
test_header_errors (void)
{
  WickSafetensorsHeader parsed;
  WickError error;
  g_assert_false (wick_safetensors_parse_bytes ((const uint8_t *)"abc", 3, &parsed, &error));
  g_assert_cmpstr (error.message, ==, "the file is 3 bytes, shorter than the 8-byte header length");
  g_assert_cmpint (error.code, ==, WICK_ERROR_INVALID_DATA);
  expect_file_error (G_MAXUINT64, "{}", 0,
                     "header length 18446744073709551615 exceeds the limit of 100000000 bytes");
  expect_file_error (1000, "{}", 0, "header length 1000 runs past the end of the file (10 bytes)");
  expect_file_error (0, "", 0, "header length 0 is too short for a JSON object");
  expect_header_error ("[1]", 0, "header: the JSON header does not start with '{'");
  expect_header_error ("{\"a\":", 0, "header: invalid JSON: byte 5: unexpected end of input");
  expect_header_error ("{\"a\":{},}", 0,
                       "header: invalid JSON: byte 8: expected a string key in object");
  expect_header_error ("{} x", 0,
                       "header: invalid JSON: byte 3: unexpected characters after the JSON value");
  expect_header_error (
    "{" TENSOR ("a", "F32", "[4]", "[0,16]") "}", 8,
    "header: tensor 'a': data_offsets end 16 is past the end of the data (8 bytes)");
  expect_header_error ("{" TENSOR ("a", "F32", "[3]", "[0,16]") "}", 16,
                       "header: tensor 'a': data_offsets [0, 16] hold 16 bytes but shape [3] of "
                       "F32 needs 12");
  expect_header_error (
    "{" TENSOR ("a", "F32", "[4]", "[0,16]") "," TENSOR ("b", "F32", "[4]", "[8,24]") "}", 24,
    "header: tensors 'a' [0, 16) and 'b' [8, 24) overlap");
  expect_header_error (
    "{" TENSOR ("b", "F32", "[4]", "[8,24]") "," TENSOR ("a", "U8", "[32]", "[0,32]") "}", 32,
    "header: tensors 'a' [0, 32) and 'b' [8, 24) overlap");
  expect_header_error ("{" TENSOR ("a", "F99", "[4]", "[0,16]") "}", 16,
                       "header: tensor 'a': unknown dtype 'F99'");
  expect_header_error ("{" TENSOR ("a", "F32", "[4294967296,4294967296]", "[0,16]") "}", 16,
                       "header: tensor 'a': the element count of its shape overflows 64 bits");
  expect_header_error ("{" TENSOR ("a", "F32", "[4611686018427387904]", "[0,16]") "}", 16,
                       "header: tensor 'a': its byte size overflows 64 bits");
  expect_header_error ("{" TENSOR ("a", "F32", "[1]", "[-1,3]") "}", 4,
                       "header: tensor 'a': \"data_offsets\" are not non-negative 64-bit integers");
  expect_header_error ("{" TENSOR ("a", "F32", "[1]", "[8,4]") "}", 8,
                       "header: tensor 'a': data_offsets [8, 4] begin after they end");
  expect_header_error ("{" TENSOR ("a", "F32", "[1]", "[0]") "}", 4,
                       "header: tensor 'a': \"data_offsets\" is not an array of two integers");
  expect_header_error ("{" TENSOR ("a", "F32", "4", "[0,4]") "}", 4,
                       "header: tensor 'a': \"shape\" is a number, not an array");
  expect_header_error ("{" TENSOR ("a", "F32", "[1.5]", "[0,4]") "}", 4,
                       "header: tensor 'a': shape[0] is not a non-negative 64-bit integer");
  expect_header_error ("{" TENSOR ("a", "F32", "[1,1,1,1,1,1,1,1,1]", "[0,4]") "}", 4,
                       "header: tensor 'a': 9 dimensions, more than the 8 supported");
  expect_header_error ("{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
                       "header: tensor 'a': missing \"dtype\"");
  expect_header_error ("{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4,
                       "header: tensor 'a': missing \"shape\"");
  expect_header_error ("{\"a\":{\"dtype\":7,\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
                       "header: tensor 'a': \"dtype\" is a number, not a string");
  expect_header_error ("{\"a\":3}", 0, "header: tensor 'a': entry is a number, not an object");
  expect_header_error (
    "{" TENSOR ("a", "F32", "[1]", "[0,4]") "," TENSOR ("a", "F32", "[1]", "[4,8]") "}", 8,
    "header: tensor 'a' appears twice");
  expect_header_error ("{\"__metadata__\":{\"k\":1}}", 0,
                       "header: \"__metadata__\" value of 'k' is a number, not a string");
  expect_header_error ("{\"__metadata__\":[]}", 0,
                       "header: \"__metadata__\" is an array, not an object");
  expect_header_error ("{" TENSOR ("a\\u0000b", "F32", "[1]", "[0,4]") "}", 4,
                       "header: a tensor name contains a NUL character");
}

static void
test_header_valid (void)
{
  const char *header
    = "{\"__metadata__\":{\"format\":\"pt\"}," TENSOR ("w", "BF16", "[2,3]", "[0,12]") "," TENSOR (
      "empty", "F32", "[0,5]", "[12,12]") "," TENSOR ("also_empty", "F32", "[0]",
                                                      "[12,12]") "," TENSOR ("s", "F64", "[]",
                                                                             "[12,20]") "}    ";
  GBytes *bytes = file_bytes (strlen (header), header, 20);
  gsize size;
  const guint8 *data = g_bytes_get_data (bytes, &size);
  WickSafetensorsHeader parsed;
  WickError error = { "" };
  g_assert_true (wick_safetensors_parse_bytes (data, size, &parsed, &error));
  g_assert_cmpstr (error.message, ==, "");
  g_assert_cmpuint (parsed.n_tensors, ==, 4);
  g_assert_cmpuint (parsed.n_metadata, ==, 1);
  g_assert_cmpstr (parsed.metadata[0], ==, "format");
  g_assert_cmpstr (parsed.metadata[1], ==, "pt");
  g_assert_cmpuint (parsed.data_offset, ==, 8 + strlen (header));
  const WickSafetensorsTensor *w = wick_safetensors_header_find (&parsed, "w");
  g_assert_nonnull (w);
  g_assert_cmpint (w->dtype, ==, WICK_DTYPE_BF16);
  g_assert_cmpuint (w->n_dims, ==, 2);
  g_assert_cmpuint (w->shape[1], ==, 3);
  g_assert_cmpuint (w->end, ==, 12);
  const WickSafetensorsTensor *s = wick_safetensors_header_find (&parsed, "s");
  g_assert_cmpuint (s->n_dims, ==, 0);
  g_assert_null (wick_safetensors_header_find (&parsed, "missing"));
  wick_safetensors_header_clear (&parsed);
  g_bytes_unref (bytes);
}

/* ---- writer and checkpoints ------------------------------------------------------- */

static void
test_writer_round_trip (void)
{
  char *dir = weights_test_tmpdir ();
  char *path = g_build_filename (dir, "model.safetensors", NULL);
  float a[6];
  uint16_t b[5];
  int64_t c = -7;
  weights_test_fill (a, sizeof a, 1);
  weights_test_fill (b, sizeof b, 2);
  const uint64_t shape_a[] = { 2, 3 }, shape_b[] = { 5 };
  WickWeightParam tensors[] = {
    { "layer.\"quoted\"", a, WICK_DTYPE_F32, shape_a, 2 },
    { "b", b, WICK_DTYPE_F16, shape_b, 1 },
    { "c", &c, WICK_DTYPE_I64, NULL, 0 },
  };
  WickTag metadata[] = { { "format", "pt" } };
  WickError error = { "" };
  g_assert_true (
    wick_safetensors_write (path, tensors, 3, WICK_WEIGHT_MEMORY_HOST, metadata, 1, &error));
  g_assert_cmpstr (error.message, ==, "");

  WickCheckpoint checkpoint;
  g_assert_true (wick_checkpoint_open (path, &checkpoint, &error));
  g_assert_cmpuint (checkpoint.n_shards, ==, 1);
  g_assert_cmpuint (checkpoint.n_keys, ==, 3);
  const WickSafetensorsShard *shard;
  const WickSafetensorsTensor *tensor;
  char reason[256];
  g_assert_cmpint (
    wick_checkpoint_find (&checkpoint, "layer.\"quoted\"", &shard, &tensor, reason, sizeof reason),
    ==, WICK_LOOKUP_FOUND);
  g_assert_cmpuint (shard->header.data_offset % 8, ==, 0);
  g_assert_cmpuint (shard->header.n_metadata, ==, 1);
  float read_a[6];
  g_assert_true (wick_read_exact (shard->fd, read_a, sizeof read_a,
                                  shard->header.data_offset + tensor->begin, path, &error));
  g_assert_cmpmem (read_a, sizeof read_a, a, sizeof a);
  g_assert_cmpint (wick_checkpoint_find (&checkpoint, "c", &shard, &tensor, reason, sizeof reason),
                   ==, WICK_LOOKUP_FOUND);
  int64_t read_c;
  g_assert_true (wick_read_exact (shard->fd, &read_c, 8, shard->header.data_offset + tensor->begin,
                                  path, &error));
  g_assert_cmpint (read_c, ==, -7);
  g_assert_cmpint (
    wick_checkpoint_find (&checkpoint, "nope", &shard, &tensor, reason, sizeof reason), ==,
    WICK_LOOKUP_ABSENT);
  wick_checkpoint_close (&checkpoint);

  char *tmp = g_strconcat (path, ".tmp", NULL);
  g_assert_false (g_file_test (tmp, G_FILE_TEST_EXISTS));
  g_free (tmp);
  g_free (path);
  weights_test_rmdir (dir);
  g_free (dir);
}

static void
expect_index_error (const char *json, const char *message)
{
  WickCheckpointKey *keys;
  char **shards;
  size_t n;
  WickError error = { "" };
  g_assert_false (wick_checkpoint_parse_index (json, strlen (json), &keys, &shards, &n, &error));
  g_assert_cmpstr (error.message, ==, message);
  g_assert_null (keys);
  g_assert_cmpuint (n, ==, 0);
}

static void
test_index_errors (void)
{
  expect_index_error ("{\"weight_map\":{\"a\":\"x.safetensors\",\"b\":\"../x\"}}",
                      "weight_map['b']: shard '../x' is not a file name in the checkpoint "
                      "directory");
  expect_index_error ("{\"weight_map\":{\"a\":\"/etc/passwd\"}}",
                      "weight_map['a']: shard '/etc/passwd' is not a file name in the checkpoint "
                      "directory");
  expect_index_error ("{\"metadata\":{}}", "missing \"weight_map\"");
  expect_index_error ("[]", "the index is an array, not an object");
  expect_index_error ("{\"weight_map\":[]}", "\"weight_map\" is an array, not an object");
  expect_index_error ("{\"weight_map\":{\"a\":1}}",
                      "weight_map['a'] is a number, not a shard file name");
  expect_index_error ("{\"weight_map\":", "invalid JSON: byte 14: unexpected end of input");
}

static void
write_shard (const char *dir, const char *name, const char *key, float value)
{
  char *path = g_build_filename (dir, name, NULL);
  const uint64_t shape[] = { 1 };
  WickWeightParam tensor = { key, &value, WICK_DTYPE_F32, shape, 1 };
  WickError error;
  g_assert_true (
    wick_safetensors_write (path, &tensor, 1, WICK_WEIGHT_MEMORY_HOST, NULL, 0, &error));
  g_free (path);
}

static void
test_sharded_checkpoint (void)
{
  char *dir = weights_test_tmpdir ();
  write_shard (dir, "model-00001-of-00002.safetensors", "a", 1.0f);
  write_shard (dir, "model-00002-of-00002.safetensors", "b", 2.0f);
  char *bad = g_build_filename (dir, "model-00003.safetensors", NULL);
  weights_test_write_raw (bad, "{\"x\":", NULL, 0);
  char *index = g_build_filename (dir, "model.safetensors.index.json", NULL);
  g_assert_true (g_file_set_contents (index,
                                      "{\"metadata\":{\"total_size\":8},\"weight_map\":{"
                                      "\"b\":\"model-00002-of-00002.safetensors\","
                                      "\"a\":\"model-00001-of-00002.safetensors\","
                                      "\"c\":\"model-00001-of-00002.safetensors\","
                                      "\"x\":\"model-00003.safetensors\"}}",
                                      -1, NULL));
  WickCheckpoint checkpoint;
  WickError error = { "" };
  g_assert_true (wick_checkpoint_open (dir, &checkpoint, &error));
  g_assert_cmpuint (checkpoint.n_shards, ==, 3);
  const WickSafetensorsShard *shard;
  const WickSafetensorsTensor *tensor;
  char reason[512] = "";
  g_assert_cmpint (wick_checkpoint_find (&checkpoint, "b", &shard, &tensor, reason, sizeof reason),
                   ==, WICK_LOOKUP_FOUND);
  g_assert_true (g_str_has_suffix (shard->path, "model-00002-of-00002.safetensors"));
  g_assert_cmpint (wick_checkpoint_find (&checkpoint, "c", &shard, &tensor, reason, sizeof reason),
                   ==, WICK_LOOKUP_SHARD_ERROR);
  char *expected = g_strdup_printf ("%s/model-00001-of-00002.safetensors: key 'c' is in the index "
                                    "but not in the shard",
                                    dir);
  g_assert_cmpstr (reason, ==, expected);
  g_free (expected);
  g_assert_cmpint (wick_checkpoint_find (&checkpoint, "x", &shard, &tensor, reason, sizeof reason),
                   ==, WICK_LOOKUP_SHARD_ERROR);
  expected = g_strdup_printf ("%s: header: invalid JSON: byte 5: unexpected end of input", bad);
  g_assert_cmpstr (reason, ==, expected);
  g_free (expected);
  wick_checkpoint_close (&checkpoint);

  /* Without the index: every *.safetensors, and a key in two shards is refused. */
  g_unlink (index);
  g_unlink (bad);
  g_assert_true (wick_checkpoint_open (dir, &checkpoint, &error));
  g_assert_cmpuint (checkpoint.n_keys, ==, 2);
  wick_checkpoint_close (&checkpoint);
  write_shard (dir, "zz.safetensors", "a", 3.0f);
  g_assert_false (wick_checkpoint_open (dir, &checkpoint, &error));
  g_assert_cmpstr (error.message, ==, "key 'a' appears twice");

  g_free (bad);
  g_free (index);
  weights_test_rmdir (dir);
  g_free (dir);
}

/* ---- dtype conversion --------------------------------------------------------------------- */

static uint16_t
to16 (WickWeightDtype to, float value)
{
  uint16_t out;
  wick_weight_dtype_convert (WICK_DTYPE_F32, &value, to, &out, 1);
  return out;
}

static float
from16 (WickWeightDtype from, uint16_t value)
{
  float out;
  wick_weight_dtype_convert (from, &value, WICK_DTYPE_F32, &out, 1);
  return out;
}

static float
from_bits (uint32_t bits)
{
  float value;
  memcpy (&value, &bits, 4);
  return value;
}

static void
test_dtype_conversion (void)
{
  g_assert_cmphex (to16 (WICK_DTYPE_BF16, 1.0f), ==, 0x3F80);
  g_assert_cmphex (to16 (WICK_DTYPE_BF16, from_bits (0x3F808000)), ==, 0x3F80); /* tie: even */
  g_assert_cmphex (to16 (WICK_DTYPE_BF16, from_bits (0x3F818000)), ==, 0x3F82); /* tie: even */
  g_assert_cmphex (to16 (WICK_DTYPE_BF16, from_bits (0x3F808001)), ==, 0x3F81);
  g_assert_cmphex (to16 (WICK_DTYPE_BF16, -INFINITY), ==, 0xFF80);
  g_assert_true (isnan (from16 (WICK_DTYPE_BF16, to16 (WICK_DTYPE_BF16, NAN))));
  g_assert_cmphex (to16 (WICK_DTYPE_F16, 1.0f), ==, 0x3C00);
  g_assert_cmphex (to16 (WICK_DTYPE_F16, 65504.0f), ==, 0x7BFF);
  g_assert_cmphex (to16 (WICK_DTYPE_F16, 65520.0f), ==, 0x7C00);
  g_assert_cmphex (to16 (WICK_DTYPE_F16, ldexpf (1.0f, -24)), ==, 0x0001);
  g_assert_cmphex (to16 (WICK_DTYPE_F16, ldexpf (1.0f, -25)), ==, 0x0000);
  g_assert_cmphex (to16 (WICK_DTYPE_F16, ldexpf (3.0f, -25)), ==, 0x0002);
  g_assert_cmphex (to16 (WICK_DTYPE_F16, -ldexpf (1.0f, -14)), ==, 0x8400);
  g_assert_cmphex (to16 (WICK_DTYPE_F16, 1.0f + ldexpf (1.0f, -11)), ==, 0x3C00); /* tie: even */
  g_assert_cmphex (to16 (WICK_DTYPE_F16, 1.0f + 3 * ldexpf (1.0f, -11)), ==, 0x3C02);
  g_assert_cmpfloat (from16 (WICK_DTYPE_F16, 0x0001), ==, ldexpf (1.0f, -24));
  g_assert_cmpfloat (from16 (WICK_DTYPE_F16, 0x7C00), ==, INFINITY);
  g_assert_cmpfloat (from16 (WICK_DTYPE_F16, 0xC000), ==, -2.0f);
  g_assert_cmpfloat (from16 (WICK_DTYPE_BF16, 0x4049), ==, 3.140625f);
  double d = 0.1;
  float f;
  wick_weight_dtype_convert (WICK_DTYPE_F64, &d, WICK_DTYPE_F32, &f, 1);
  g_assert_cmpfloat (f, ==, 0.1f);
  g_assert_true (wick_weight_dtype_convertible (WICK_DTYPE_F32, WICK_DTYPE_BF16));
  g_assert_true (wick_weight_dtype_convertible (WICK_DTYPE_I32, WICK_DTYPE_I32));
  g_assert_false (wick_weight_dtype_convertible (WICK_DTYPE_I32, WICK_DTYPE_F32));
  WickWeightDtype dtype;
  g_assert_true (wick_weight_dtype_from_name ("F8_E4M3", &dtype));
  g_assert_cmpint (dtype, ==, WICK_DTYPE_F8_E4M3);
  g_assert_false (wick_weight_dtype_from_name ("f32", &dtype));
  g_assert_cmpuint (wick_weight_dtype_size (WICK_DTYPE_BF16), ==, 2);
  g_assert_null (wick_weight_dtype_name (WICK_N_DTYPES));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/weights/json/strict", test_json_strict);
  g_test_add_func ("/weights/json/values", test_json_values);
  g_test_add_func ("/weights/safetensors/header-errors", test_header_errors);
  g_test_add_func ("/weights/safetensors/header-valid", test_header_valid);
  g_test_add_func ("/weights/safetensors/writer-round-trip", test_writer_round_trip);
  g_test_add_func ("/weights/safetensors/index-errors", test_index_errors);
  g_test_add_func ("/weights/safetensors/sharded-checkpoint", test_sharded_checkpoint);
  g_test_add_func ("/weights/dtype/conversion", test_dtype_conversion);
  return g_test_run ();
}
