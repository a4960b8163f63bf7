/* test-weight-store.c — the weight store on host memory (the same logic as
 * on CUDA, run in CI): bit-exact round trips on both tiers, provenance,
 * hostile checkpoints, tied parameters, rollback, the abort path, residency
 * for the host program, and that evicted pages really leave the process. */
#include "weights-test-util.h"

#include "wick-weight-backing-private.h"
#include "wick-weight-digest-pipe-private.h"
#include "wick-weight-store-private.h"

#include <fcntl.h>
#include <pthread.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define N_PARAMS 4

/* A small model: an embedding tied to the head, a BF16 matrix stored as F32
 * in the checkpoint, an F16 bias. */
typedef struct
{
  char *dir;
  char *checkpoint;
  float *embed;     /* [256, 512] F32, tied: "embed.weight" and "head.weight" */
  uint16_t *matrix; /* [1024, 1024] BF16 */
  uint16_t *bias;   /* [1024] F16 */
  WickWeightParam params[N_PARAMS];
  uint64_t embed_shape[2], matrix_shape[2], bias_shape[1];
  WickWeightStore *store;
} Model;

static void
bf16_from_f32 (const float *in, uint16_t *out, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      uint32_t bits;
      memcpy (&bits, &in[i], 4);
      out[i] = (uint16_t)(bits >> 16);
    }
}

/* Writes the checkpoint the model "loaded": keys without the module prefix,
 * the matrix as F32 (a dtype cast on load). */
static void
model_write_checkpoint (Model *model, const char *path)
{
  float *matrix_f32 = g_new (float, 1024 * 1024);
  for (size_t i = 0; i < 1024 * 1024; i++)
    {
      uint32_t bits = (uint32_t)model->matrix[i] << 16;
      memcpy (&matrix_f32[i], &bits, 4);
    }
  WickWeightParam tensors[] = {
    { "embed.weight", model->embed, WICK_DTYPE_F32, model->embed_shape, 2 },
    { "layers.0.weight", matrix_f32, WICK_DTYPE_F32, model->matrix_shape, 2 },
    { "layers.0.bias", model->bias, WICK_DTYPE_F16, model->bias_shape, 1 },
  };
  WickError error;
  g_assert_true (
    wick_safetensors_write (path, tensors, 3, WICK_WEIGHT_MEMORY_HOST, NULL, 0, &error));
  g_free (matrix_f32);
}

static void
model_init (Model *model, gboolean with_checkpoint)
{
  WickError error = { "" };
  memset (model, 0, sizeof *model);
  model->dir = weights_test_tmpdir ();
  model->checkpoint = g_build_filename (model->dir, "model.safetensors", NULL);
  model->embed = wick_weight_alloc_host (256 * 512 * 4, &error);
  model->matrix = wick_weight_alloc_host (1024 * 1024 * 2, &error);
  model->bias = wick_weight_alloc_host (1024 * 2, &error);
  g_assert_nonnull (model->embed);
  g_assert_nonnull (model->matrix);
  g_assert_nonnull (model->bias);
  weights_test_fill_bf16_exact_f32 (model->embed, 256 * 512, 1);
  float *values = g_new (float, 1024 * 1024);
  weights_test_fill_bf16_exact_f32 (values, 1024 * 1024, 2);
  bf16_from_f32 (values, model->matrix, 1024 * 1024);
  g_free (values);
  for (size_t i = 0; i < 1024; i++)
    model->bias[i] = (uint16_t)(0x3000 + i); /* finite F16 values */
  model->embed_shape[0] = 256, model->embed_shape[1] = 512;
  model->matrix_shape[0] = 1024, model->matrix_shape[1] = 1024;
  model->bias_shape[0] = 1024;
  model->params[0]
    = (WickWeightParam){ "embed.weight", model->embed, WICK_DTYPE_F32, model->embed_shape, 2 };
  model->params[1] = (WickWeightParam){ "layers.0.weight", model->matrix, WICK_DTYPE_BF16,
                                        model->matrix_shape, 2 };
  model->params[2]
    = (WickWeightParam){ "layers.0.bias", model->bias, WICK_DTYPE_F16, model->bias_shape, 1 };
  model->params[3]
    = (WickWeightParam){ "head.weight", model->embed, WICK_DTYPE_F32, model->embed_shape, 2 };
  if (with_checkpoint)
    model_write_checkpoint (model, model->checkpoint);
  model->store = wick_weight_store_new (NULL, &error);
  g_assert_nonnull (model->store);
}

static void
model_register (Model *model, const char *checkpoint)
{
  WickWeightModuleInfo info
    = { "net", model->params, N_PARAMS, WICK_WEIGHT_MEMORY_HOST, checkpoint };
  WickError error = { "" };
  g_assert_true (wick_weight_store_register_module (model->store, &info, &error));
  g_assert_cmpstr (error.message, ==, "");
}

static void
model_clear (Model *model)
{
  WickError error = { "" };
  wick_weight_store_free (model->store);
  g_assert_true (wick_weight_free_host (model->embed, &error));
  g_assert_true (wick_weight_free_host (model->matrix, &error));
  g_assert_true (wick_weight_free_host (model->bias, &error));
  weights_test_rmdir (model->dir);
  g_free (model->dir);
  g_free (model->checkpoint);
}

typedef struct
{
  char *embed, *matrix, *bias;
} Hashes;

static Hashes
model_hash (const Model *model)
{
  return (Hashes){ weights_test_sha256 (model->embed, 256 * 512 * 4),
                   weights_test_sha256 (model->matrix, 1024 * 1024 * 2),
                   weights_test_sha256 (model->bias, 1024 * 2) };
}

static void
assert_hashes (const Model *model, const Hashes *expected)
{
  Hashes now = model_hash (model);
  g_assert_cmpstr (now.embed, ==, expected->embed);
  g_assert_cmpstr (now.matrix, ==, expected->matrix);
  g_assert_cmpstr (now.bias, ==, expected->bias);
  g_free (now.embed), g_free (now.matrix), g_free (now.bias);
}

static void
hashes_free (Hashes *hashes)
{
  g_free (hashes->embed), g_free (hashes->matrix), g_free (hashes->bias);
}

static size_t
resident_pages (void *base, size_t bytes)
{
  size_t page = (size_t)sysconf (_SC_PAGESIZE);
  size_t n = (bytes + page - 1) / page;
  unsigned char *vector = g_malloc (n);
  g_assert_cmpint (mincore (base, bytes, vector), ==, 0);
  size_t resident = 0;
  for (size_t i = 0; i < n; i++)
    resident += vector[i] & 1;
  g_free (vector);
  return resident;
}

static const uint64_t model_bytes = 256 * 512 * 4 + 1024 * 1024 * 2 + 1024 * 2;

/* ---- round trips ---------------------------------------------------------------- */

static void
round_trips (WickTier tier, uint64_t expect_disk, uint64_t expect_ram)
{
  Model model;
  model_init (&model, TRUE);
  model_register (&model, model.checkpoint);
  Hashes before = model_hash (&model);
  void *pointers[3] = { model.embed, model.matrix, model.bias };
  WickError error = { "" };
  for (int cycle = 0; cycle < 20; cycle++)
    {
      WickWeightStats stats;
      g_assert_true (wick_weight_store_evict (model.store, "net", tier, &stats, &error));
      g_assert_cmpstr (error.message, ==, "");
      g_assert_false (stats.resident);
      g_assert_cmpuint (stats.parameters, ==, 4);
      g_assert_cmpuint (stats.disk, ==, expect_disk);
      g_assert_cmpuint (stats.ram, ==, expect_ram);
      g_assert_cmpuint (stats.freed_bytes, ==, model_bytes);
      g_assert_cmpuint (stats.bytes, ==, model_bytes);
      g_assert_false (wick_weight_store_is_resident (model.store, "net"));
      g_assert_cmpuint (resident_pages (model.matrix, 1024 * 1024 * 2), ==, 0);
      g_assert_true (wick_weight_store_restore (model.store, "net", &stats, &error));
      g_assert_true (stats.resident);
      g_assert_cmpuint (stats.restored, ==, 4);
      g_assert_cmpuint (stats.restored_bytes, ==, model_bytes);
      g_assert_cmpuint (stats.restored_count, ==, (uint64_t)cycle + 1);
      g_assert_cmpuint (stats.disk, ==, 0);
      g_assert_cmpuint (stats.ram, ==, 0);
      g_assert_true (model.embed == pointers[0] && model.matrix == pointers[1]
                     && model.bias == pointers[2]);
      assert_hashes (&model, &before);
    }
  WickWeightStats total;
  wick_weight_store_get_total_stats (model.store, &total);
  g_assert_cmpstr (total.module, ==, "total");
  g_assert_cmpuint (total.restored_count, ==, 20);
  g_assert_true (total.resident);
  hashes_free (&before);
  model_clear (&model);
}

static void
test_round_trip_disk (void)
{
  round_trips (WICK_TIER_DISK, 4, 0);
}

static void
test_round_trip_ram (void)
{
  round_trips (WICK_TIER_RAM, 0, 4);
}

static void
test_param_info (void)
{
  Model model;
  model_init (&model, TRUE);
  model_register (&model, model.checkpoint);
  WickError error;
  WickWeightParamInfo info;
  g_assert_true (wick_weight_store_get_param_info (model.store, "net", 1, &info));
  g_assert_cmpint (info.place, ==, WICK_PLACE_RESIDENT);
  g_assert_cmpint (info.last_tier, ==, WICK_TIER_AUTO);
  g_assert_true (wick_weight_store_evict (model.store, "net", WICK_TIER_AUTO, NULL, &error));
  g_assert_true (wick_weight_store_get_param_info (model.store, "net", 1, &info));
  g_assert_cmpstr (info.name, ==, "layers.0.weight");
  g_assert_cmpint (info.place, ==, WICK_PLACE_DISK);
  g_assert_cmpstr (info.key, ==, "layers.0.weight"); /* "net." stripped */
  g_assert_cmpstr (info.shard, ==, model.checkpoint);
  g_assert_cmpstr (info.reason, ==, "");
  g_assert_true (wick_weight_store_get_param_info (model.store, "net", 3, &info));
  g_assert_cmpstr (info.name, ==, "head.weight");
  g_assert_true (info.tied);
  g_assert_cmpint (info.place, ==, WICK_PLACE_DISK);
  g_assert_cmpstr (info.key, ==, "embed.weight");
  g_assert_false (wick_weight_store_get_param_info (model.store, "net", 4, &info));
  g_assert_false (wick_weight_store_get_param_info (model.store, "other", 0, &info));
  g_assert_true (wick_weight_store_restore (model.store, "net", NULL, &error));
  model_clear (&model);
}

/* ---- provenance ------------------------------------------------------------------- */

static void
assert_reason (const WickWeightParamInfo *info, const char *key, const char *path, uint64_t element)
{
  g_autofree char *expected
    = g_strdup_printf ("key '%s' in %s: element %" G_GUINT64_FORMAT " differs from the live bytes",
                       key, path, element);
  g_assert_cmpstr (info->reason, ==, expected);
}

static void
test_mutated_weight_goes_to_ram (void)
{
  Model model;
  model_init (&model, TRUE);
  model_register (&model, model.checkpoint);
  model.matrix[5] ^= 0x0001;  /* the optimizer moved it: first 64 KiB differ */
  model.bias[1023] ^= 0x0100; /* last 64 KiB (the whole bias) differ */
  Hashes changed = model_hash (&model);
  WickError error = { "" };
  WickWeightStats stats;
  g_assert_true (wick_weight_store_evict (model.store, "net", WICK_TIER_AUTO, &stats, &error));
  g_assert_cmpuint (stats.disk, ==, 2);
  g_assert_cmpuint (stats.ram, ==, 2);
  WickWeightParamInfo info;
  g_assert_true (wick_weight_store_get_param_info (model.store, "net", 1, &info));
  g_assert_cmpint (info.place, ==, WICK_PLACE_RAM);
  assert_reason (&info, "layers.0.weight", model.checkpoint, 5);
  g_assert_true (wick_weight_store_get_param_info (model.store, "net", 2, &info));
  assert_reason (&info, "layers.0.bias", model.checkpoint, 1023);
  g_assert_true (wick_weight_store_restore (model.store, "net", &stats, &error));
  assert_hashes (&model, &changed);

  /* A change in the last 64 KiB only. */
  model.matrix[5] ^= 0x0001;
  model.matrix[1024 * 1024 - 1] ^= 0x0001;
  Hashes changed_again = model_hash (&model);
  g_assert_true (wick_weight_store_evict (model.store, "net", WICK_TIER_AUTO, &stats, &error));
  g_assert_true (wick_weight_store_get_param_info (model.store, "net", 1, &info));
  g_assert_cmpint (info.place, ==, WICK_PLACE_RAM);
  assert_reason (&info, "layers.0.weight", model.checkpoint, 1024 * 1024 - 1);
  g_assert_true (wick_weight_store_restore (model.store, "net", &stats, &error));
  assert_hashes (&model, &changed_again);

  /* One element in the middle (the old check read only the first and last
   * 64 KiB, so this one went to the disk tier and restored wrong). */
  model.matrix[1024 * 1024 - 1] ^= 0x0001;
  model.matrix[500000] ^= 0x0001;
  Hashes changed_middle = model_hash (&model);
  g_assert_true (wick_weight_store_evict (model.store, "net", WICK_TIER_AUTO, &stats, &error));
  g_assert_true (wick_weight_store_get_param_info (model.store, "net", 1, &info));
  g_assert_cmpint (info.place, ==, WICK_PLACE_RAM);
  assert_reason (&info, "layers.0.weight", model.checkpoint, 500000);
  g_assert_true (wick_weight_store_restore (model.store, "net", &stats, &error));
  assert_hashes (&model, &changed_middle);
  hashes_free (&changed_middle);
  hashes_free (&changed);
  hashes_free (&changed_again);
  model_clear (&model);
}

static void
test_disk_tier_refused (void)
{
  Model model;
  model_init (&model, TRUE);
  model_register (&model, model.checkpoint);
  model.bias[0] ^= 1;
  Hashes before = model_hash (&model);
  WickError error = { "" };
  WickWeightStats stats;
  g_assert_false (wick_weight_store_evict (model.store, "net", WICK_TIER_DISK, &stats, &error));
  g_autofree char *expected
    = g_strdup_printf ("parameter 'layers.0.bias' cannot go to the disk tier: key "
                       "'layers.0.bias' in %s: element 0 differs from the live bytes",
                       model.checkpoint);
  g_assert_cmpstr (error.message, ==, expected);
  g_assert_true (stats.resident);
  g_assert_cmpuint (stats.freed_bytes, ==, 0);
  g_assert_true (wick_weight_store_is_resident (model.store, "net"));
  g_assert_cmpuint (resident_pages (model.matrix, 1024 * 1024 * 2), ==, 1024 * 1024 * 2 / 4096);
  assert_hashes (&model, &before);
  hashes_free (&before);
  model_clear (&model);
}

static void
test_no_checkpoint_goes_to_ram (void)
{
  Model model;
  model_init (&model, FALSE);
  model_register (&model, NULL);
  WickError error;
  WickWeightStats stats;
  g_assert_true (wick_weight_store_evict (model.store, "net", WICK_TIER_AUTO, &stats, &error));
  g_assert_cmpuint (stats.ram, ==, 4);
  WickWeightParamInfo info;
  g_assert_true (wick_weight_store_get_param_info (model.store, "net", 0, &info));
  g_assert_cmpstr (info.reason, ==, "the module has no checkpoint");
  g_assert_true (wick_weight_store_restore (model.store, "net", NULL, &error));
  model_clear (&model);
}

static void
test_checkpoint_key_mismatches (void)
{
  Model model;
  model_init (&model, FALSE);
  /* A checkpoint whose keys match nothing, or match with another shape. */
  float other[4] = { 0 };
  const uint64_t shape[] = { 4 };
  WickWeightParam tensors[] = { { "layers.0.weight", other, WICK_DTYPE_F32, shape, 1 } };
  WickError error = { "" };
  g_assert_true (wick_safetensors_write (model.checkpoint, tensors, 1, WICK_WEIGHT_MEMORY_HOST,
                                         NULL, 0, &error));
  model_register (&model, model.checkpoint);
  g_assert_true (wick_weight_store_evict (model.store, "net", WICK_TIER_AUTO, NULL, &error));
  WickWeightParamInfo info;
  g_assert_true (wick_weight_store_get_param_info (model.store, "net", 0, &info));
  g_assert_cmpstr (info.reason, ==,
                   "no key among 'net.embed.weight', 'embed.weight', 'weight' in the checkpoint");
  g_assert_true (wick_weight_store_get_param_info (model.store, "net", 1, &info));
  g_assert_cmpstr (info.reason, ==,
                   "key 'layers.0.weight': shape [4] differs from the live [1024, 1024]");
  g_assert_true (wick_weight_store_restore (model.store, "net", NULL, &error));
  model_clear (&model);
}

static const struct
{
  const char *name;
  uint64_t declared; /* 0: the header's own length */
  const char *header;
  size_t data_bytes;
  const char *error; /* after "checkpoint: PATH: " */
} hostile[] = {
  { "huge-header-length", G_MAXUINT64, "{}", 0,
    "header length 18446744073709551615 exceeds the limit of 100000000 bytes" },
  { "header-past-end", 4096, "{}", 0,
    "header length 4096 runs past the end of the file (10 bytes)" },
  { "offsets-past-end", 0,
    "{\"embed.weight\":{\"dtype\":\"F32\",\"shape\":[256,512],\"data_offsets\":[0,524288]}}", 64,
    "header: tensor 'embed.weight': data_offsets end 524288 is past the end of the data (64 "
    "bytes)" },
  { "overlapping", 0,
    "{\"a\":{\"dtype\":\"F32\",\"shape\":[8],\"data_offsets\":[0,32]},"
    "\"b\":{\"dtype\":\"F32\",\"shape\":[8],\"data_offsets\":[16,48]}}",
    48, "header: tensors 'a' [0, 32) and 'b' [16, 48) overlap" },
  { "wrong-dtype-size", 0,
    "{\"layers.0.bias\":{\"dtype\":\"F16\",\"shape\":[1024],\"data_offsets\":[0,4096]}}", 4096,
    "header: tensor 'layers.0.bias': data_offsets [0, 4096] hold 4096 bytes but shape [1024] of "
    "F16 needs 2048" },
  { "invalid-json", 0, "{\"embed.weight\":{\"dtype\":\"F32\",,}}", 0,
    "header: invalid JSON: byte 31: expected a string key in object" },
  { "truncated", 0, "{\"a\":{\"dtype\":\"F3", 0,
    "header: invalid JSON: byte 14: unterminated string" },
};

static void
write_hostile (const char *path, size_t index)
{
  char *data = g_malloc0 (hostile[index].data_bytes + 1);
  if (hostile[index].declared != 0)
    weights_test_write_prefix (path, hostile[index].declared, hostile[index].header);
  else
    weights_test_write_raw (path, hostile[index].header, data, hostile[index].data_bytes);
  g_free (data);
}

static void
test_hostile_checkpoints (void)
{
  for (size_t i = 0; i < G_N_ELEMENTS (hostile); i++)
    {
      Model model;
      model_init (&model, FALSE);
      write_hostile (model.checkpoint, i);
      model_register (&model, model.checkpoint);
      Hashes before = model_hash (&model);
      WickError error = { "" };
      WickWeightStats stats;
      g_test_message ("hostile checkpoint: %s", hostile[i].name);
      g_assert_true (wick_weight_store_evict (model.store, "net", WICK_TIER_AUTO, &stats, &error));
      g_assert_cmpuint (stats.ram, ==, 4);
      g_assert_cmpuint (stats.disk, ==, 0);
      WickWeightParamInfo info;
      g_assert_true (wick_weight_store_get_param_info (model.store, "net", 2, &info));
      char *expected = g_strdup_printf ("checkpoint: %s: %s", model.checkpoint, hostile[i].error);
      g_assert_cmpstr (info.reason, ==, expected);
      g_free (expected);
      g_assert_true (wick_weight_store_restore (model.store, "net", &stats, &error));
      assert_hashes (&model, &before);

      g_assert_false (wick_weight_store_evict (model.store, "net", WICK_TIER_DISK, &stats, &error));
      g_assert_true (g_str_has_prefix (error.message,
                                       "parameter 'embed.weight' cannot go to the disk tier: "
                                       "checkpoint: "));
      g_assert_true (wick_weight_store_is_resident (model.store, "net"));
      hashes_free (&before);
      model_clear (&model);
    }
}

/* Flips the top byte of the F32 element nearest the middle of the file (in
 * the matrix) in place, and puts the file's times back: size, inode and mtime
 * say nothing changed. */
static void
damage_middle (const char *path, unsigned char *saved)
{
  struct stat before;
  g_assert_cmpint (stat (path, &before), ==, 0);
  off_t at = ((before.st_size / 2) & ~(off_t)3) + 3;
  int fd = g_open (path, O_RDWR, 0);
  g_assert_cmpint (fd, >=, 0);
  unsigned char byte;
  g_assert_cmpint (pread (fd, &byte, 1, at), ==, 1);
  if (saved != NULL)
    *saved = byte;
  byte ^= 0x80;
  g_assert_cmpint (pwrite (fd, &byte, 1, at), ==, 1);
  close (fd);
  struct timespec times[2] = { before.st_atim, before.st_mtim };
  g_assert_cmpint (utimensat (AT_FDCWD, path, times, 0), ==, 0);
}

static void
test_checkpoint_changed_after_evict (void)
{
  Model model;
  model_init (&model, TRUE);
  /* The bias moved since the load: it goes to the RAM tier. */
  model.bias[7] ^= 0x0001;
  model_register (&model, model.checkpoint);
  /* A second module that restores fine. */
  WickError error = { "" };
  double *extra = wick_weight_alloc_host (3 * 8, &error);
  extra[0] = 1.5, extra[1] = -2.0, extra[2] = 1e300;
  const uint64_t shape[] = { 3 };
  WickWeightParam param = { "scale", extra, WICK_DTYPE_F64, shape, 1 };
  WickWeightModuleInfo adapter = { "adapter", &param, 1, WICK_WEIGHT_MEMORY_HOST, NULL };
  g_assert_true (wick_weight_store_register_module (model.store, &adapter, &error));
  Hashes before = model_hash (&model);
  WickWeightStats stats;
  g_assert_true (wick_weight_store_evict (model.store, "net", WICK_TIER_AUTO, &stats, &error));
  g_assert_cmpuint (stats.disk, ==, 3);
  g_assert_cmpuint (stats.ram, ==, 1);
  g_assert_true (wick_weight_store_evict (model.store, "adapter", WICK_TIER_AUTO, NULL, &error));

  /* Appending changes the file's size and mtime but none of its tensors'
   * bytes: what is read is verified, so the restore goes through. */
  int fd = g_open (model.checkpoint, O_WRONLY | O_APPEND, 0);
  g_assert_cmpint (write (fd, "x", 1), ==, 1);
  close (fd);
  g_assert_true (wick_weight_store_restore (model.store, "net", NULL, &error));
  assert_hashes (&model, &before);
  g_assert_true (wick_weight_store_evict (model.store, "net", WICK_TIER_AUTO, &stats, &error));

  /* Damaged in the middle after the eviction, mtime put back: refused, with a
   * sentence naming the parameter, the file and the key. */
  unsigned char saved;
  damage_middle (model.checkpoint, &saved);
  g_assert_false (wick_weight_store_restore (model.store, "net", &stats, &error));
  g_assert_cmpint (error.code, ==, WICK_ERROR_INVALID_DATA);
  g_autofree char *prefix = g_strdup_printf (
    "parameter 'layers.0.weight' of module 'net' refused: the bytes read from %s for key "
    "'layers.0.weight' differ from what was evicted (digest ",
    model.checkpoint);
  g_assert_true (g_str_has_prefix (error.message, prefix));
  g_assert_true (g_str_has_suffix (error.message,
                                   "); the checkpoint was changed after the eviction verified it"));
  g_assert_false (wick_weight_store_is_resident (model.store, "net"));
  g_assert_false (stats.resident);
  /* The other disk-tier parameters came back; the refused one (and the RAM
   * copy) are still out, and the RAM copy is kept. */
  WickWeightParamInfo info;
  g_assert_true (wick_weight_store_get_param_info (model.store, "net", 1, &info));
  g_assert_cmpint (info.place, ==, WICK_PLACE_DISK);
  g_assert_true (wick_weight_store_get_param_info (model.store, "net", 0, &info));
  g_assert_cmpint (info.place, ==, WICK_PLACE_RESIDENT);

  /* A workload waiting for the module hears the verdict instead of waiting. */
  WickError refusal = { "" };
  g_assert_true (wick_weight_store_get_refusal (model.store, "net", &refusal));
  g_assert_cmpstr (refusal.message, ==, error.message);
  g_assert_false (wick_weight_store_get_refusal (model.store, "adapter", NULL));
  WickError use_error = { "" };
  g_assert_false (wick_weight_store_use_begin (model.store, "net", &use_error));
  g_assert_cmpstr (use_error.message, ==, error.message);
  g_assert_false (wick_weight_store_ensure_resident (model.store, "net", &use_error));
  g_assert_cmpstr (use_error.message, ==, error.message);

  /* restore-all restores what it can and reports the refusal. */
  uint64_t restored = 0;
  WickError all_error = { "" };
  g_assert_false (wick_weight_store_restore_all (model.store, &restored, &all_error));
  g_assert_cmpuint (restored, ==, 1);
  g_assert_true (g_str_has_prefix (all_error.message, prefix));
  g_assert_cmpfloat (extra[2], ==, 1e300);

  /* Repaired in place: the next restore-all verifies and finishes the module,
   * bit-exact, the RAM-tier bias included. */
  int repair = g_open (model.checkpoint, O_RDWR, 0);
  struct stat st;
  g_assert_cmpint (fstat (repair, &st), ==, 0);
  off_t at = ((st.st_size - 1) / 2 & ~(off_t)3) + 3; /* the appended byte moved the middle */
  unsigned char byte;
  g_assert_cmpint (pread (repair, &byte, 1, at), ==, 1);
  if (byte != saved)
    at = ((st.st_size / 2) & ~(off_t)3) + 3;
  g_assert_cmpint (pwrite (repair, &saved, 1, at), ==, 1);
  close (repair);
  g_assert_true (wick_weight_store_restore_all (model.store, &restored, &all_error));
  g_assert_cmpuint (restored, ==, 1);
  assert_hashes (&model, &before);
  g_assert_false (wick_weight_store_get_refusal (model.store, "net", NULL));
  g_assert_true (wick_weight_store_use_begin (model.store, "net", &use_error));
  wick_weight_store_use_end (model.store, "net");

  /* The host may still give up on a module: drop makes it final. */
  g_assert_true (wick_weight_store_evict (model.store, "net", WICK_TIER_AUTO, NULL, &error));
  g_assert_true (wick_weight_store_drop (model.store, "net", &error));
  g_assert_false (wick_weight_store_ensure_resident (model.store, "net", &error));
  g_assert_cmpstr (error.message, ==, "module 'net' was dropped: its weights are gone");
  g_assert_true (wick_weight_store_unregister_module (model.store, "net", &error));
  g_assert_true (wick_weight_store_unregister_module (model.store, "adapter", &error));
  g_assert_true (wick_weight_free_host (extra, &error));
  hashes_free (&before);
  model_clear (&model);
}

/* ---- tied parameters -------------------------------------------------------------- */

static void
test_tied_parameters (void)
{
  Model model;
  model_init (&model, FALSE);
  model_register (&model, NULL);
  WickError error;
  WickWeightStats stats;
  g_assert_true (wick_weight_store_evict (model.store, "net", WICK_TIER_RAM, &stats, &error));
  /* Four names, three storages: the tied pair is stashed once. */
  g_assert_cmpuint (stats.ram, ==, 4);
  g_assert_cmpuint (stats.freed_bytes, ==, model_bytes);
  WickWeightModule *module = model.store->modules[0];
  g_assert_cmpuint (module->n_storages, ==, 3);
  g_assert_nonnull (module->storages[0].spill);
  g_assert_true (wick_weight_store_restore (model.store, "net", &stats, &error));
  g_assert_true (model.params[0].data == model.params[3].data);
  /* Still one storage: a write through one name is seen through the other. */
  ((float *)model.params[0].data)[7] = 42.0f;
  g_assert_cmpfloat (((float *)model.params[3].data)[7], ==, 42.0f);
  model_clear (&model);
}

/* ---- failures and the abort path ------------------------------------------------- */

static void
test_evict_rollback (void)
{
  for (WickTier tier = WICK_TIER_DISK; tier <= WICK_TIER_RAM; tier++)
    {
      Model model;
      model_init (&model, TRUE);
      model_register (&model, model.checkpoint);
      Hashes before = model_hash (&model);
      WickError error = { "" };
      WickWeightStats stats;
      wick_weight_fail_release_after = 3; /* the third storage's release fails */
      g_assert_false (wick_weight_store_evict (model.store, "net", tier, &stats, &error));
      g_assert_true (g_str_has_prefix (error.message,
                                       "module 'net': releasing parameter 'layers.0.bias' "
                                       "failed: release of 0x"));
      g_assert_true (g_str_has_suffix (error.message,
                                       " failed (injected); the parameters already released "
                                       "were restored"));
      g_assert_true (stats.resident);
      g_assert_cmpuint (stats.disk + stats.ram, ==, 0);
      g_assert_true (wick_weight_store_is_resident (model.store, "net"));
      assert_hashes (&model, &before);
      /* And the module still evicts and restores afterwards. */
      g_assert_true (wick_weight_store_evict (model.store, "net", tier, &stats, &error));
      g_assert_true (wick_weight_store_restore (model.store, "net", &stats, &error));
      assert_hashes (&model, &before);
      hashes_free (&before);
      model_clear (&model);
    }
}

static void
test_restore_failure_then_retry (void)
{
  Model model;
  model_init (&model, TRUE);
  model_register (&model, model.checkpoint);
  Hashes before = model_hash (&model);
  WickError error = { "" };
  WickWeightStats stats;
  g_assert_true (wick_weight_store_evict (model.store, "net", WICK_TIER_AUTO, &stats, &error));
  wick_weight_fail_recommit_after = 2;
  g_assert_false (wick_weight_store_restore (model.store, "net", &stats, &error));
  g_assert_true (g_str_has_suffix (error.message, " failed (injected)"));
  g_assert_false (stats.resident);
  /* The embedding's storage (two tied names) came back before the matrix failed. */
  g_assert_cmpuint (stats.restored, ==, 2);
  g_assert_cmpuint (stats.disk + stats.ram, ==, 2);
  g_assert_true (wick_weight_store_restore (model.store, "net", &stats, &error));
  g_assert_true (stats.resident);
  assert_hashes (&model, &before);
  hashes_free (&before);
  model_clear (&model);
}

static void
test_restore_all (void)
{
  Model model;
  model_init (&model, TRUE);
  model_register (&model, model.checkpoint);
  /* A second module with its own buffer, no checkpoint. */
  WickError error = { "" };
  double *extra = wick_weight_alloc_host (3 * 8, &error);
  extra[0] = 1.5, extra[1] = -2.0, extra[2] = 1e300;
  const uint64_t shape[] = { 3 };
  WickWeightParam param = { "scale", extra, WICK_DTYPE_F64, shape, 1 };
  WickWeightModuleInfo info = { "adapter", &param, 1, WICK_WEIGHT_MEMORY_HOST, NULL };
  g_assert_true (wick_weight_store_register_module (model.store, &info, &error));
  g_assert_cmpuint (wick_weight_store_get_n_modules (model.store), ==, 2);
  Hashes before = model_hash (&model);
  g_assert_true (wick_weight_store_evict (model.store, "net", WICK_TIER_AUTO, NULL, &error));
  g_assert_true (wick_weight_store_evict (model.store, "adapter", WICK_TIER_AUTO, NULL, &error));
  WickWeightStats total;
  wick_weight_store_get_total_stats (model.store, &total);
  g_assert_false (total.resident);
  g_assert_cmpuint (total.disk, ==, 4);
  g_assert_cmpuint (total.ram, ==, 1);
  g_assert_cmpuint (total.freed_bytes, ==, model_bytes + 24);
  uint64_t restored = 0;
  g_assert_true (wick_weight_store_restore_all (model.store, &restored, &error));
  g_assert_cmpuint (restored, ==, 2);
  assert_hashes (&model, &before);
  g_assert_cmpfloat (extra[2], ==, 1e300);
  g_assert_true (wick_weight_store_restore_all (model.store, &restored, &error));
  g_assert_cmpuint (restored, ==, 0);
  g_assert_true (wick_weight_store_unregister_module (model.store, "adapter", &error));
  g_assert_true (wick_weight_free_host (extra, &error));
  hashes_free (&before);
  model_clear (&model);
}

/* ---- registration --------------------------------------------------------------------- */

static void
expect_register_error (WickWeightStore *store, const WickWeightParam *params, size_t n,
                       const char *message)
{
  WickWeightModuleInfo info = { "bad", params, n, WICK_WEIGHT_MEMORY_HOST, NULL };
  WickError error = { "" };
  g_assert_false (wick_weight_store_register_module (store, &info, &error));
  g_assert_cmpstr (error.message, ==, message);
}

static void
test_registration_errors (void)
{
  Model model;
  model_init (&model, FALSE);
  model_register (&model, NULL);
  WickError error = { "" };
  const uint64_t shape[] = { 16 };
  float *plain = g_new0 (float, 16);
  char *message;

  WickWeightParam foreign = { "w", plain, WICK_DTYPE_F32, shape, 1 };
  message = g_strdup_printf ("module 'bad': parameter 'w': %p is not memory from "
                             "wick_weight_alloc_host: the store can only release and restore at "
                             "the same address memory it allocated",
                             (void *)plain);
  expect_register_error (model.store, &foreign, 1, message);
  g_free (message);

  char *base = wick_weight_alloc_host (8192, &error);
  WickWeightParam past_end = { "w", base + 8192 - 32, WICK_DTYPE_F32, shape, 1 };
  message = g_strdup_printf ("module 'bad': parameter 'w': 64 bytes at %p run past the end of the "
                             "8192-byte allocation at %p",
                             (void *)(base + 8192 - 32), (void *)base);
  expect_register_error (model.store, &past_end, 1, message);
  g_free (message);

  const uint64_t other[] = { 8 };
  WickWeightParam tied_sizes[]
    = { { "a", base, WICK_DTYPE_F32, shape, 1 }, { "b", base, WICK_DTYPE_F32, other, 1 } };
  expect_register_error (model.store, tied_sizes, 2,
                         "module 'bad': parameter 'b' overlaps 'a' without being tied to it (tied "
                         "parameters share one pointer and one size)");
  WickWeightParam overlapping[]
    = { { "a", base, WICK_DTYPE_F32, shape, 1 }, { "b", base + 32, WICK_DTYPE_F32, shape, 1 } };
  expect_register_error (model.store, overlapping, 2,
                         "module 'bad': parameter 'b' overlaps 'a' without being tied to it (tied "
                         "parameters share one pointer and one size)");
  WickWeightParam twice[]
    = { { "a", base, WICK_DTYPE_F32, shape, 1 }, { "a", base, WICK_DTYPE_F32, shape, 1 } };
  expect_register_error (model.store, twice, 2, "module 'bad': parameter 'a' appears twice");
  WickWeightParam shared = { "w", model.embed, WICK_DTYPE_F32, shape, 1 };
  expect_register_error (model.store, &shared, 1,
                         "module 'bad': parameter 'w' lies in an allocation of module 'net': an "
                         "allocation (and tied parameters) must belong to one module");
  WickWeightParam no_name = { NULL, base, WICK_DTYPE_F32, shape, 1 };
  expect_register_error (model.store, &no_name, 1, "module 'bad': parameter 0 has no name");
  expect_register_error (model.store, NULL, 0, "module 'bad': no parameters");
  WickWeightModuleInfo duplicate = { "net", &tied_sizes[0], 1, WICK_WEIGHT_MEMORY_HOST, NULL };
  g_assert_false (wick_weight_store_register_module (model.store, &duplicate, &error));
  g_assert_cmpstr (error.message, ==, "module 'net' is already registered");
  g_assert_cmpint (error.code, ==, WICK_ERROR_EXISTS);
  /* None of the refused registrations kept a hold on the allocation. */
  g_assert_true (wick_weight_free_host (base, &error));
  g_assert_false (wick_weight_free_host (model.embed, &error));
  message = g_strdup_printf ("%p is still held by 1 registered module(s): unregister them first",
                             (void *)model.embed);
  g_assert_cmpstr (error.message, ==, message);
  g_free (message);
  g_assert_false (wick_weight_store_evict (model.store, "nope", WICK_TIER_AUTO, NULL, &error));
  g_assert_cmpstr (error.message, ==, "no module named 'nope' is registered");
  g_assert_cmpint (error.code, ==, WICK_ERROR_NOT_FOUND);
#if !WICK_HAVE_CUDA
  g_assert_null (wick_weight_alloc_device (64, &error));
  g_assert_cmpstr (error.message, ==, "libwick was built without CUDA");
  g_assert_cmpint (error.code, ==, WICK_ERROR_UNSUPPORTED);
#endif
  g_free (plain);
  model_clear (&model);
}

/* ---- residency for the host program ------------------------------------------------ */

static void
test_ensure_resident_restores_on_demand (void)
{
  Model model;
  model_init (&model, TRUE);
  model_register (&model, model.checkpoint);
  Hashes before = model_hash (&model);
  WickError error = { "" };
  g_assert_true (wick_weight_store_evict (model.store, "net", WICK_TIER_AUTO, NULL, &error));
  g_assert_true (wick_weight_store_ensure_resident (model.store, "net", &error));
  g_assert_true (wick_weight_store_is_resident (model.store, "net"));
  assert_hashes (&model, &before);
  g_assert_true (wick_weight_store_ensure_resident (model.store, "net", &error));
  WickWeightStats stats;
  g_assert_true (wick_weight_store_find_stats (model.store, "net", &stats));
  g_assert_cmpuint (stats.restored_count, ==, 1);
  hashes_free (&before);
  model_clear (&model);
}

typedef struct
{
  WickWeightStore *store;
  gboolean ok;
  gint64 finished_at;
} EvictThread;

static gpointer
evict_thread (gpointer data)
{
  EvictThread *thread = data;
  WickError error;
  thread->ok = wick_weight_store_evict (thread->store, "net", WICK_TIER_RAM, NULL, &error);
  thread->finished_at = g_get_monotonic_time ();
  return NULL;
}

static unsigned
evictions_waiting (WickWeightStore *store)
{
  pthread_mutex_lock (&store->lock);
  unsigned n = store->n_modules > 0 ? store->modules[0]->evictions_waiting : 0;
  pthread_mutex_unlock (&store->lock);
  return n;
}

/* Waits (with a deadline, never a fixed sleep) until an eviction of the
 * store's first module is blocked on its users. */
static void
wait_for_waiting_eviction (WickWeightStore *store)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while (evictions_waiting (store) == 0)
    {
      if (g_get_monotonic_time () > deadline)
        g_error ("no eviction started waiting for the module's users within 10 s");
      g_usleep (1000);
    }
}

static void
test_evict_waits_for_users (void)
{
  Model model;
  model_init (&model, FALSE);
  model_register (&model, NULL);
  WickError error;
  g_assert_true (wick_weight_store_use_begin (model.store, "net", &error));
  EvictThread data = { model.store, FALSE, 0 };
  GThread *thread = g_thread_new ("evict", evict_thread, &data);
  wait_for_waiting_eviction (model.store);
  /* Still held: the eviction waits, and the weights are still here. */
  g_assert_true (wick_weight_store_is_resident (model.store, "net"));
  g_assert_cmpint (data.finished_at, ==, 0);
  gint64 released_at = g_get_monotonic_time ();
  wick_weight_store_use_end (model.store, "net");
  g_thread_join (thread);
  g_assert_true (data.ok);
  g_assert_cmpint (data.finished_at, >=, released_at);
  g_assert_false (wick_weight_store_is_resident (model.store, "net"));
  /* The next step's use_begin restores on demand. */
  g_assert_true (wick_weight_store_use_begin (model.store, "net", &error));
  g_assert_true (wick_weight_store_is_resident (model.store, "net"));
  wick_weight_store_use_end (model.store, "net");

  /* A nested use_begin while an eviction waits does not wait for it. */
  g_assert_true (wick_weight_store_use_begin (model.store, "net", &error));
  data = (EvictThread){ model.store, FALSE, 0 };
  thread = g_thread_new ("evict", evict_thread, &data);
  wait_for_waiting_eviction (model.store);
  g_assert_true (wick_weight_store_use_begin (model.store, "net", &error));
  /* Had it waited, the eviction would have finished or given up by now. */
  g_assert_cmpuint (evictions_waiting (model.store), ==, 1);
  g_assert_cmpint (data.finished_at, ==, 0);
  wick_weight_store_use_end (model.store, "net");
  wick_weight_store_use_end (model.store, "net");
  g_thread_join (thread);
  g_assert_true (data.ok);
  g_assert_true (wick_weight_store_ensure_resident (model.store, "net", &error));

  /* An eviction gives up on a module held too long. */
  unsigned saved = wick_weight_store_evict_wait_seconds;
  wick_weight_store_evict_wait_seconds = 1;
  g_assert_true (wick_weight_store_use_begin (model.store, "net", &error));
  g_assert_false (wick_weight_store_evict (model.store, "net", WICK_TIER_RAM, NULL, &error));
  g_assert_cmpstr (error.message, ==, "module 'net' is still in use after 1 s: not evicted");
  wick_weight_store_use_end (model.store, "net");
  wick_weight_store_evict_wait_seconds = saved;
  g_assert_true (wick_weight_store_is_resident (model.store, "net"));
  model_clear (&model);
}

static void
test_drop (void)
{
  Model model;
  model_init (&model, FALSE);
  model_register (&model, NULL);
  WickError error = { "" };
  g_assert_true (wick_weight_store_evict (model.store, "net", WICK_TIER_RAM, NULL, &error));
  g_assert_nonnull (model.store->modules[0]->storages[1].spill);
  g_assert_true (wick_weight_store_drop (model.store, "net", &error));
  g_assert_null (model.store->modules[0]->storages[1].spill);
  g_assert_false (wick_weight_store_restore (model.store, "net", NULL, &error));
  g_assert_cmpstr (error.message, ==, "module 'net' was dropped: its weights are gone");
  g_assert_false (wick_weight_store_evict (model.store, "net", WICK_TIER_RAM, NULL, &error));
  g_assert_cmpstr (error.message, ==, "module 'net' was dropped: its weights are gone");
  uint64_t restored = 7;
  g_assert_true (wick_weight_store_restore_all (model.store, &restored, &error));
  g_assert_cmpuint (restored, ==, 0);
  g_assert_cmpuint (resident_pages (model.matrix, 1024 * 1024 * 2), ==, 0);
  g_assert_true (wick_weight_store_unregister_module (model.store, "net", &error));
  model_clear (&model);
}

/* ---- several parameters in one allocation ----------------------------------------- */

static void
test_packed_parameters (void)
{
  WickError error = { "" };
  /* Three tensors at unaligned offsets of one allocation, one tied pair. */
  const size_t bytes = 3 * 100000 + 64;
  char *block = wick_weight_alloc_host (bytes, &error);
  weights_test_fill (block, bytes, 21);
  float *a = (float *)(block + 4), *b = (float *)(block + 4 + 100000),
        *c = (float *)(block + 4 + 200000);
  const uint64_t shape[] = { 25000 };
  WickWeightParam params[] = { { "a", a, WICK_DTYPE_F32, shape, 1 },
                               { "b", b, WICK_DTYPE_F32, shape, 1 },
                               { "c", c, WICK_DTYPE_F32, shape, 1 },
                               { "c_tied", c, WICK_DTYPE_F32, shape, 1 } };
  char *dir = weights_test_tmpdir ();
  char *path = g_build_filename (dir, "packed.safetensors", NULL);
  g_assert_true (
    wick_safetensors_write (path, params, 3, WICK_WEIGHT_MEMORY_HOST, NULL, 0, &error));
  WickWeightStore *store = wick_weight_store_new (NULL, &error);
  WickWeightModuleInfo info = { "packed", params, 4, WICK_WEIGHT_MEMORY_HOST, path };
  g_assert_true (wick_weight_store_register_module (store, &info, &error));
  g_assert_cmpuint (store->modules[0]->n_mappings, ==, 1);
  g_assert_cmpuint (store->modules[0]->n_storages, ==, 3);
  ((uint32_t *)b)[7] ^= 1; /* b goes to the RAM tier, a and c to the disk tier, in one mapping */
  char *before = weights_test_sha256 (a, 300000);
  const WickTier tiers[] = { WICK_TIER_AUTO, WICK_TIER_RAM };
  for (size_t t = 0; t < G_N_ELEMENTS (tiers); t++)
    for (int cycle = 0; cycle < 3; cycle++)
      {
        WickTier tier = tiers[t];
        WickWeightStats stats;
        g_assert_true (wick_weight_store_evict (store, "packed", tier, &stats, &error));
        g_assert_cmpstr (error.message, ==, "");
        g_assert_cmpuint (stats.freed_bytes, ==, 300000);
        g_assert_cmpuint (stats.disk, ==, tier == WICK_TIER_RAM ? 0 : 3);
        g_assert_cmpuint (stats.ram, ==, tier == WICK_TIER_RAM ? 4 : 1);
        g_assert_cmpuint (resident_pages (block, bytes), ==, 0);
        g_assert_true (wick_weight_store_restore (store, "packed", &stats, &error));
        g_assert_cmpuint (stats.restored, ==, 4);
        g_assert_cmpuint (stats.restored_bytes, ==, 300000);
        char *after = weights_test_sha256 (a, 300000);
        g_assert_cmpstr (after, ==, before);
        g_free (after);
      }
  wick_weight_store_free (store);
  g_assert_true (wick_weight_free_host (block, &error));
  weights_test_rmdir (dir);
  g_free (before), g_free (path), g_free (dir);
}

/* ---- RAM copies verified while they are copied ------------------------------------ */

/* The pipe's digest of a copy, in either direction, is wick_weight_digest of
 * the bytes copied: over several chunks, with a tail that is not a multiple
 * of the hash's 32-byte blocks, and for a buffer under one chunk. */
static void
test_digest_pipe (void)
{
  const uint64_t sizes[] = { 2 * WICK_WEIGHT_HASH_CHUNK + 37, 4097, 8 };
  for (size_t i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      uint64_t bytes = sizes[i];
      unsigned char *live = g_malloc (bytes), *spill = g_malloc0 (bytes);
      weights_test_fill (live, bytes, 11 + (uint32_t)i);
      const WickWeightBacking *host = wick_weight_backing_for (WICK_WEIGHT_MEMORY_HOST);
      WickError error = { "" };
      uint64_t out = 1, back = 2, other = 3;
      WickDigestPipe *pipe = wick_digest_pipe_new (host);
      g_assert_true (wick_digest_pipe_add_copy (pipe, TRUE, live, spill, bytes, &out, &error));
      /* Queued, then dropped again: not copied, not counted. */
      size_t mark = wick_digest_pipe_mark (pipe);
      unsigned char untouched[64] = { 0 };
      g_assert_true (wick_digest_pipe_add_copy (pipe, TRUE, live, untouched, sizeof untouched,
                                                &other, &error));
      wick_digest_pipe_truncate (pipe, mark);
      g_assert_true (wick_digest_pipe_run (pipe, &error));
      wick_digest_pipe_free (pipe);
      g_assert_cmpmem (spill, bytes, live, bytes);
      g_assert_cmpuint (out, ==, wick_weight_digest (live, bytes));
      g_assert_cmpuint (untouched[0], ==, 0);
      memset (live, 0, bytes);
      pipe = wick_digest_pipe_new (host);
      g_assert_true (wick_digest_pipe_add_copy (pipe, FALSE, live, spill, bytes, &back, &error));
      g_assert_true (wick_digest_pipe_run (pipe, &error));
      wick_digest_pipe_free (pipe);
      g_assert_cmpmem (spill, bytes, live, bytes);
      g_assert_cmpuint (back, ==, out);
      g_free (live), g_free (spill);
    }
}

/* A RAM copy damaged after the eviction, in its middle chunk of three: that
 * parameter is refused with a sentence naming it and its module, its
 * allocation stays released, the other parameter (its own allocation) comes
 * back, and once the byte is put back the restore finishes bit-exact. */
static void
test_ram_copy_changed (void)
{
  const size_t big_bytes = 3 * WICK_WEIGHT_HASH_CHUNK - 4096, small_bytes = 4096;
  WickError error = { "" };
  float *big = wick_weight_alloc_host (big_bytes, &error);
  float *small = wick_weight_alloc_host (small_bytes, &error);
  weights_test_fill (big, big_bytes, 5);
  weights_test_fill (small, small_bytes, 6);
  g_autofree char *big_hash = weights_test_sha256 (big, big_bytes);
  g_autofree char *small_hash = weights_test_sha256 (small, small_bytes);
  const uint64_t big_shape[] = { big_bytes / 4 }, small_shape[] = { small_bytes / 4 };
  WickWeightParam params[] = { { "big", big, WICK_DTYPE_F32, big_shape, 1 },
                               { "small", small, WICK_DTYPE_F32, small_shape, 1 } };
  WickWeightStore *store = wick_weight_store_new (NULL, &error);
  WickWeightModuleInfo info = { "m", params, 2, WICK_WEIGHT_MEMORY_HOST, NULL };
  g_assert_true (wick_weight_store_register_module (store, &info, &error));
  WickWeightStats stats;
  g_assert_true (wick_weight_store_evict (store, "m", WICK_TIER_RAM, &stats, &error));
  WickWeightModule *module = store->modules[0];
  size_t s_big = module->params[0].storage;
  unsigned char *spill = module->storages[s_big].spill;
  g_assert_nonnull (spill);
  size_t at = WICK_WEIGHT_HASH_CHUNK + 12345;
  spill[at] ^= 0x01;
  g_assert_false (wick_weight_store_restore (store, "m", &stats, &error));
  g_assert_cmpint (error.code, ==, WICK_ERROR_INVALID_DATA);
  g_assert_true (g_str_has_prefix (
    error.message, "parameter 'big' of module 'm' refused: its RAM copy changed after the "
                   "eviction (digest "));
  g_assert_true (g_str_has_suffix (error.message, "); its bytes were not restored"));
  g_assert_false (wick_weight_store_is_resident (store, "m"));
  WickWeightParamInfo param_info;
  g_assert_true (wick_weight_store_get_param_info (store, "m", 0, &param_info));
  g_assert_cmpint (param_info.place, ==, WICK_PLACE_RAM);
  g_assert_true (wick_weight_store_get_param_info (store, "m", 1, &param_info));
  g_assert_cmpint (param_info.place, ==, WICK_PLACE_RESIDENT);
  g_autofree char *small_after = weights_test_sha256 (small, small_bytes);
  g_assert_cmpstr (small_after, ==, small_hash);
  g_assert_true (wick_weight_store_get_refusal (store, "m", NULL));
  /* Put back: the RAM copy verifies again and the module comes back whole. */
  spill[at] ^= 0x01;
  g_assert_true (wick_weight_store_restore (store, "m", &stats, &error));
  g_autofree char *big_after = weights_test_sha256 (big, big_bytes);
  g_assert_cmpstr (big_after, ==, big_hash);
  wick_weight_store_free (store);
  g_assert_true (wick_weight_free_host (big, &error));
  g_assert_true (wick_weight_free_host (small, &error));
}

/* ---- memory really leaves -------------------------------------------------------------- */

static uint64_t
rss_bytes (void)
{
  char *text = NULL;
  g_assert_true (g_file_get_contents ("/proc/self/statm", &text, NULL, NULL));
  unsigned long long pages_total, pages_resident;
  g_assert_cmpint (sscanf (text, "%llu %llu", &pages_total, &pages_resident), ==, 2);
  g_free (text);
  return (uint64_t)pages_resident * (uint64_t)sysconf (_SC_PAGESIZE);
}

static void
test_rss_drops (void)
{
  const size_t bytes = 64u << 20;
  WickError error = { "" };
  float *weights = wick_weight_alloc_host (bytes, &error);
  weights_test_fill (weights, bytes, 3);
  char *before = weights_test_sha256 (weights, bytes);
  char *dir = weights_test_tmpdir ();
  char *path = g_build_filename (dir, "big.safetensors", NULL);
  const uint64_t shape[] = { bytes / 4 };
  WickWeightParam param = { "w", weights, WICK_DTYPE_F32, shape, 1 };
  g_assert_true (
    wick_safetensors_write (path, &param, 1, WICK_WEIGHT_MEMORY_HOST, NULL, 0, &error));
  WickWeightStore *store = wick_weight_store_new (NULL, &error);
  WickWeightModuleInfo info = { "big", &param, 1, WICK_WEIGHT_MEMORY_HOST, path };
  g_assert_true (wick_weight_store_register_module (store, &info, &error));
  g_assert_cmpuint (resident_pages (weights, bytes), ==, bytes / 4096);
  uint64_t rss_resident = rss_bytes ();
  WickWeightStats stats;
  g_assert_true (wick_weight_store_evict (store, "big", WICK_TIER_DISK, &stats, &error));
  g_assert_cmpuint (stats.freed_bytes, ==, bytes);
  g_assert_cmpuint (resident_pages (weights, bytes), ==, 0);
  uint64_t rss_evicted = rss_bytes ();
  g_test_message ("RSS %" G_GUINT64_FORMAT " MiB resident, %" G_GUINT64_FORMAT " MiB evicted",
                  rss_resident >> 20, rss_evicted >> 20);
#if defined(__SANITIZE_ADDRESS__) || defined(__has_feature)
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
  /* ASan's quarantine keeps the buffers eviction read the checkpoint through
   * (8 MiB pieces) resident after they are freed */
  const uint64_t slack = 24u << 20;
#else
  const uint64_t slack = 4u << 20;
#endif
#else
  const uint64_t slack = 4u << 20;
#endif
  g_assert_cmpuint (rss_resident - rss_evicted, >=, bytes - slack);
  g_assert_true (wick_weight_store_restore (store, "big", &stats, &error));
  g_assert_cmpuint (resident_pages (weights, bytes), ==, bytes / 4096);
  char *after = weights_test_sha256 (weights, bytes);
  g_assert_cmpstr (after, ==, before);
  wick_weight_store_free (store);
  g_assert_true (wick_weight_free_host (weights, &error));
  weights_test_rmdir (dir);
  g_free (before), g_free (after), g_free (path), g_free (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/weights/store/round-trip-disk", test_round_trip_disk);
  g_test_add_func ("/weights/store/round-trip-ram", test_round_trip_ram);
  g_test_add_func ("/weights/store/param-info", test_param_info);
  g_test_add_func ("/weights/store/mutated-weight-goes-to-ram", test_mutated_weight_goes_to_ram);
  g_test_add_func ("/weights/store/disk-tier-refused", test_disk_tier_refused);
  g_test_add_func ("/weights/store/no-checkpoint", test_no_checkpoint_goes_to_ram);
  g_test_add_func ("/weights/store/checkpoint-key-mismatches", test_checkpoint_key_mismatches);
  g_test_add_func ("/weights/store/hostile-checkpoints", test_hostile_checkpoints);
  g_test_add_func ("/weights/store/checkpoint-changed", test_checkpoint_changed_after_evict);
  g_test_add_func ("/weights/store/tied", test_tied_parameters);
  g_test_add_func ("/weights/store/evict-rollback", test_evict_rollback);
  g_test_add_func ("/weights/store/restore-failure-retry", test_restore_failure_then_retry);
  g_test_add_func ("/weights/store/restore-all", test_restore_all);
  g_test_add_func ("/weights/store/registration-errors", test_registration_errors);
  g_test_add_func ("/weights/store/ensure-resident", test_ensure_resident_restores_on_demand);
  g_test_add_func ("/weights/store/evict-waits-for-users", test_evict_waits_for_users);
  g_test_add_func ("/weights/store/drop", test_drop);
  g_test_add_func ("/weights/store/packed-parameters", test_packed_parameters);
  g_test_add_func ("/weights/store/rss-drops", test_rss_drops);
  g_test_add_func ("/weights/store/digest-pipe", test_digest_pipe);
  g_test_add_func ("/weights/store/ram-copy-changed", test_ram_copy_changed);
  return g_test_run ();
}
