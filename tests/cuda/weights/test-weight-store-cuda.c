/* test-weight-store-cuda.c — the weight store on CUDA device memory (suite
 * cuda): bit-exact round trips on both tiers, provenance, hostile checkpoints,
 * tied parameters, rollback and the abort path as on the host, plus pointer
 * stability, device memory really returned to the driver, and a captured CUDA
 * graph reading the weights that replays correctly after evict and restore.
 * Every test skips with the reason where there is no device. */
#include "weights-cuda-kernels.h"
#include "weights-test-util.h"

#include "wick-weight-backing-private.h"
#include "wick-weight-digest-device-private.h"
#include "wick-weight-hash-private.h"
#include "wick-weight-store-private.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string.h>

#define ROWS 1024
#define COLS 1024
#define BIG (2048 * 2048)

typedef struct
{
  char *dir, *checkpoint;
  float *embed;     /* [ROWS, COLS] F32, tied: embed.weight and head.weight */
  uint16_t *matrix; /* [BIG] BF16, F32 in the checkpoint */
  uint16_t *bias;   /* [2048] F16 */
  uint64_t embed_shape[2], matrix_shape[1], bias_shape[1];
  WickWeightParam params[4];
  WickWeightStore *store;
} DeviceModel;

static char error_text[512];

static gboolean
skip_without_device (void)
{
  WickError error = { "" };
  void *probe = wick_weight_alloc_device (1, &error);
  if (probe == NULL)
    {
      char *message = g_strdup_printf ("the weight store cannot use CUDA here: %s", error.message);
      g_test_skip (message);
      g_free (message);
      return TRUE;
    }
  g_assert_true (wick_weight_free_device (probe, &error));
  return FALSE;
}

static void *
device_alloc (size_t bytes)
{
  WickError error = { "" };
  void *p = wick_weight_alloc_device (bytes, &error);
  if (p == NULL)
    g_error ("wick_weight_alloc_device: %s", error.message);
  return p;
}

static void
to_device (void *device, const void *host, size_t bytes)
{
  if (!weights_test_copy (device, host, bytes, true, error_text, sizeof error_text))
    g_error ("%s", error_text);
}

static void
to_host (void *host, const void *device, size_t bytes)
{
  if (!weights_test_copy (host, device, bytes, false, error_text, sizeof error_text))
    g_error ("%s", error_text);
}

static char *
device_sha256 (const void *device, size_t bytes)
{
  void *host = g_malloc (bytes);
  to_host (host, device, bytes);
  char *hash = weights_test_sha256 (host, bytes);
  g_free (host);
  return hash;
}

static void
model_init (DeviceModel *model, gboolean with_checkpoint)
{
  memset (model, 0, sizeof *model);
  model->dir = weights_test_tmpdir ();
  model->checkpoint = g_build_filename (model->dir, "model.safetensors", NULL);
  model->embed = device_alloc (ROWS * COLS * 4);
  model->matrix = device_alloc (BIG * 2);
  model->bias = device_alloc (2048 * 2);
  float *embed = g_new (float, ROWS *COLS);
  float *matrix_f32 = g_new (float, BIG);
  uint16_t *matrix = g_new (uint16_t, BIG);
  uint16_t bias[2048];
  weights_test_fill_bf16_exact_f32 (embed, ROWS * COLS, 11);
  weights_test_fill_bf16_exact_f32 (matrix_f32, BIG, 12);
  for (size_t i = 0; i < BIG; i++)
    {
      uint32_t bits;
      memcpy (&bits, &matrix_f32[i], 4);
      matrix[i] = (uint16_t)(bits >> 16);
    }
  for (size_t i = 0; i < 2048; i++)
    bias[i] = (uint16_t)(0x2000 + i);
  to_device (model->embed, embed, ROWS * COLS * 4);
  to_device (model->matrix, matrix, BIG * 2);
  to_device (model->bias, bias, sizeof bias);
  model->embed_shape[0] = ROWS, model->embed_shape[1] = COLS;
  model->matrix_shape[0] = BIG;
  model->bias_shape[0] = 2048;
  model->params[0]
    = (WickWeightParam){ "embed.weight", model->embed, WICK_DTYPE_F32, model->embed_shape, 2 };
  model->params[1]
    = (WickWeightParam){ "matrix", model->matrix, WICK_DTYPE_BF16, model->matrix_shape, 1 };
  model->params[2] = (WickWeightParam){ "bias", model->bias, WICK_DTYPE_F16, model->bias_shape, 1 };
  model->params[3]
    = (WickWeightParam){ "head.weight", model->embed, WICK_DTYPE_F32, model->embed_shape, 2 };
  WickError error = { "" };
  if (with_checkpoint)
    {
      /* The embedding and bias are written from the device (the writer's
       * CUDA path), the matrix as F32 from the host (a cast on load). */
      WickWeightParam from_device[] = { model->params[0], model->params[2] };
      WickWeightParam from_host[]
        = { { "matrix", matrix_f32, WICK_DTYPE_F32, model->matrix_shape, 1 } };
      char *device_part = g_build_filename (model->dir, "model-00001.safetensors", NULL);
      char *host_part = g_build_filename (model->dir, "model-00002.safetensors", NULL);
      g_assert_true (wick_safetensors_write (device_part, from_device, 2, WICK_WEIGHT_MEMORY_CUDA,
                                             NULL, 0, &error));
      g_assert_true (
        wick_safetensors_write (host_part, from_host, 1, WICK_WEIGHT_MEMORY_HOST, NULL, 0, &error));
      g_free (device_part);
      g_free (host_part);
    }
  g_free (embed), g_free (matrix_f32), g_free (matrix);
  model->store = wick_weight_store_new (NULL, &error);
  WickWeightModuleInfo info
    = { "net", model->params, 4, WICK_WEIGHT_MEMORY_CUDA, with_checkpoint ? model->dir : NULL };
  g_assert_true (wick_weight_store_register_module (model->store, &info, &error));
  g_assert_cmpstr (error.message, ==, "");
}

static void
model_clear (DeviceModel *model)
{
  WickError error = { "" };
  wick_weight_store_free (model->store);
  g_assert_true (wick_weight_free_device (model->embed, &error));
  g_assert_true (wick_weight_free_device (model->matrix, &error));
  g_assert_true (wick_weight_free_device (model->bias, &error));
  weights_test_rmdir (model->dir);
  g_free (model->dir), g_free (model->checkpoint);
}

typedef struct
{
  char *embed, *matrix, *bias;
} Hashes;

static Hashes
model_hash (const DeviceModel *model)
{
  return (Hashes){ device_sha256 (model->embed, ROWS * COLS * 4),
                   device_sha256 (model->matrix, BIG * 2), device_sha256 (model->bias, 4096) };
}

static void
assert_hashes (const DeviceModel *model, const Hashes *expected)
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

static const uint64_t model_bytes = ROWS * COLS * 4 + BIG * 2 + 4096;

static void
round_trips (WickTier tier, uint64_t disk, uint64_t ram)
{
  if (skip_without_device ())
    return;
  DeviceModel model;
  model_init (&model, TRUE);
  Hashes before = model_hash (&model);
  WickError error = { "" };
  for (int cycle = 0; cycle < 10; cycle++)
    {
      WickWeightStats stats;
      g_assert_true (wick_weight_store_evict (model.store, "net", tier, &stats, &error));
      g_assert_cmpstr (error.message, ==, "");
      g_assert_cmpuint (stats.disk, ==, disk);
      g_assert_cmpuint (stats.ram, ==, ram);
      g_assert_cmpuint (stats.freed_bytes, ==, model_bytes);
      WickWeightAllocation allocation;
      g_assert_true (wick_weight_allocation_get (model.matrix, &allocation));
      g_assert_true (allocation.released);
      g_assert_true (wick_weight_store_restore (model.store, "net", &stats, &error));
      g_assert_cmpuint (stats.restored, ==, 4);
      g_assert_cmpuint (stats.restored_bytes, ==, model_bytes);
      /* Same addresses (the parameters' pointers never changed), same bytes. */
      g_assert_true (model.params[1].data == (void *)model.matrix);
      assert_hashes (&model, &before);
    }
  /* The restored mapping is ordinary writable device memory. */
  if (!weights_test_increment (model.embed, ROWS * COLS, error_text, sizeof error_text))
    g_error ("%s", error_text);
  float first[2], expected[2];
  char *embed_host = g_malloc (ROWS * COLS * 4);
  weights_test_fill_bf16_exact_f32 ((float *)embed_host, ROWS * COLS, 11);
  memcpy (expected, embed_host, sizeof expected);
  g_free (embed_host);
  to_host (first, model.params[3].data, sizeof first); /* through the tied name */
  g_assert_cmpfloat (first[0], ==, expected[0] + 1.0f);
  g_assert_cmpfloat (first[1], ==, expected[1] + 1.0f);
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
test_mutated_goes_to_ram (void)
{
  if (skip_without_device ())
    return;
  DeviceModel model;
  model_init (&model, TRUE);
  uint16_t changed = 0x1234;
  to_device (model.matrix + 3, &changed, 2);
  Hashes before = model_hash (&model);
  WickError error = { "" };
  WickWeightStats stats;
  g_assert_true (wick_weight_store_evict (model.store, "net", WICK_TIER_AUTO, &stats, &error));
  g_assert_cmpuint (stats.disk, ==, 3);
  g_assert_cmpuint (stats.ram, ==, 1);
  WickWeightParamInfo info;
  g_assert_true (wick_weight_store_get_param_info (model.store, "net", 1, &info));
  g_assert_cmpint (info.place, ==, WICK_PLACE_RAM);
  g_assert_true (g_str_has_prefix (info.reason, "key 'matrix' in "));
  g_assert_true (g_str_has_suffix (
    info.reason, "model-00002.safetensors: element 3 differs from the live bytes"));
  g_assert_true (wick_weight_store_get_param_info (model.store, "net", 0, &info));
  g_assert_cmpint (info.place, ==, WICK_PLACE_DISK);
  g_assert_true (g_str_has_suffix (info.shard, "model-00001.safetensors"));
  g_assert_true (wick_weight_store_restore (model.store, "net", &stats, &error));
  assert_hashes (&model, &before);
  hashes_free (&before);
  model_clear (&model);
}

static void
test_hostile_checkpoint (void)
{
  if (skip_without_device ())
    return;
  DeviceModel model;
  model_init (&model, FALSE);
  char *path = g_build_filename (model.dir, "model.safetensors", NULL);
  weights_test_write_prefix (path, G_MAXUINT64, "{}");
  WickWeightModuleInfo info = { "hostile", NULL, 0, WICK_WEIGHT_MEMORY_CUDA, path };
  float *w = device_alloc (4096);
  const uint64_t shape[] = { 1024 };
  WickWeightParam param = { "w", w, WICK_DTYPE_F32, shape, 1 };
  info.params = &param, info.n_params = 1;
  WickError error = { "" };
  g_assert_true (wick_weight_store_register_module (model.store, &info, &error));
  char *before = device_sha256 (w, 4096);
  WickWeightStats stats;
  g_assert_true (wick_weight_store_evict (model.store, "hostile", WICK_TIER_AUTO, &stats, &error));
  g_assert_cmpuint (stats.ram, ==, 1);
  WickWeightParamInfo param_info;
  g_assert_true (wick_weight_store_get_param_info (model.store, "hostile", 0, &param_info));
  char *expected = g_strdup_printf ("checkpoint: %s: header length 18446744073709551615 exceeds "
                                    "the limit of 100000000 bytes",
                                    path);
  g_assert_cmpstr (param_info.reason, ==, expected);
  g_assert_true (wick_weight_store_restore (model.store, "hostile", &stats, &error));
  char *after = device_sha256 (w, 4096);
  g_assert_cmpstr (after, ==, before);
  g_assert_true (wick_weight_store_unregister_module (model.store, "hostile", &error));
  g_assert_true (wick_weight_free_device (w, &error));
  g_free (expected), g_free (before), g_free (after), g_free (path);
  model_clear (&model);
}

static void
test_device_memory_returns (void)
{
  if (skip_without_device ())
    return;
  const size_t bytes = 512u << 20;
  WickError error = { "" };
  float *big = device_alloc (bytes);
  float *host = g_malloc (bytes);
  weights_test_fill (host, bytes, 5);
  to_device (big, host, bytes);
  char *before = weights_test_sha256 (host, bytes);
  g_free (host);
  WickWeightStore *store = wick_weight_store_new (NULL, &error);
  const uint64_t shape[] = { bytes / 4 };
  WickWeightParam param = { "w", big, WICK_DTYPE_F32, shape, 1 };
  WickWeightModuleInfo info = { "big", &param, 1, WICK_WEIGHT_MEMORY_CUDA, NULL };
  g_assert_true (wick_weight_store_register_module (store, &info, &error));
  size_t free_resident, free_evicted, free_restored, total;
  for (int tier = WICK_TIER_RAM; tier >= WICK_TIER_AUTO; tier -= 2)
    {
      g_assert_true (weights_test_mem_info (&free_resident, &total));
      g_assert_true (wick_weight_store_evict (store, "big", (WickTier)tier, NULL, &error));
      g_assert_true (weights_test_mem_info (&free_evicted, &total));
      g_test_message ("device free: %zu MiB resident, %zu MiB evicted", free_resident >> 20,
                      free_evicted >> 20);
      g_assert_cmpuint (free_evicted - free_resident, >=, bytes - (2u << 20));
      g_assert_true (wick_weight_store_restore (store, "big", NULL, &error));
      g_assert_true (weights_test_mem_info (&free_restored, &total));
      g_assert_cmpuint (free_evicted - free_restored, >=, bytes - (2u << 20));
      char *after = device_sha256 (big, bytes);
      g_assert_cmpstr (after, ==, before);
      g_free (after);
    }
  wick_weight_store_free (store);
  g_assert_true (wick_weight_free_device (big, &error));
  g_free (before);
}

static void
replay (WeightsTestGraph *graph, const float *y, float *out)
{
  if (!weights_test_graph_replay (graph, error_text, sizeof error_text))
    g_error ("%s", error_text);
  to_host (out, y, ROWS * 4);
}

static void
test_captured_graph_survives (void)
{
  if (skip_without_device ())
    return;
  DeviceModel model;
  model_init (&model, TRUE);
  float *x = device_alloc (COLS * 4);
  float *y = device_alloc (ROWS * 4);
  float x_host[COLS];
  weights_test_fill_bf16_exact_f32 (x_host, COLS, 7);
  to_device (x, x_host, sizeof x_host);
  WeightsTestGraph *graph
    = weights_test_graph_new (model.embed, x, y, ROWS, COLS, error_text, sizeof error_text);
  if (graph == NULL)
    g_error ("%s", error_text);
  float *reference = g_new (float, ROWS), *out = g_new (float, ROWS);
  replay (graph, y, reference);
  g_assert_cmpfloat (reference[0], !=, 0.0f);
  WickError error = { "" };
  for (WickTier tier = WICK_TIER_DISK; tier <= WICK_TIER_RAM; tier++)
    for (int cycle = 0; cycle < 3; cycle++)
      {
        g_assert_true (wick_weight_store_evict (model.store, "net", tier, NULL, &error));
        g_assert_true (wick_weight_store_restore (model.store, "net", NULL, &error));
        memset (out, 0, ROWS * 4);
        replay (graph, y, out);
        g_assert_cmpmem (out, ROWS * 4, reference, ROWS * 4);
      }
  weights_test_graph_free (graph);
  g_assert_true (wick_weight_free_device (x, &error));
  g_assert_true (wick_weight_free_device (y, &error));
  g_free (reference), g_free (out);
  model_clear (&model);
}

static void
test_rollback_and_restore_all (void)
{
  if (skip_without_device ())
    return;
  DeviceModel model;
  model_init (&model, TRUE);
  Hashes before = model_hash (&model);
  WickError error = { "" };
  WickWeightStats stats;
  wick_weight_fail_release_after = 3;
  g_assert_false (wick_weight_store_evict (model.store, "net", WICK_TIER_AUTO, &stats, &error));
  g_assert_true (g_str_has_suffix (error.message,
                                   "failed (injected); the parameters already released were "
                                   "restored"));
  g_assert_true (stats.resident);
  assert_hashes (&model, &before);
  g_assert_true (wick_weight_store_evict (model.store, "net", WICK_TIER_AUTO, &stats, &error));
  uint64_t restored = 0;
  g_assert_true (wick_weight_store_restore_all (model.store, &restored, &error));
  g_assert_cmpuint (restored, ==, 1);
  assert_hashes (&model, &before);
  /* A retained pinned spill is freed by trim. */
  g_assert_true (wick_weight_store_evict (model.store, "net", WICK_TIER_RAM, &stats, &error));
  g_assert_true (wick_weight_store_restore (model.store, "net", &stats, &error));
  g_assert_nonnull (model.store->modules[0]->storages[0].spill);
  wick_weight_store_trim (model.store);
  g_assert_null (model.store->modules[0]->storages[0].spill);
  hashes_free (&before);
  model_clear (&model);
}

/* Many small tensors in one VMM allocation: one 2 MiB mapping, not one each. */
static void
test_packed_small_tensors (void)
{
  if (skip_without_device ())
    return;
  enum
  {
    N = 64,
    COUNT = 1000
  };
  WickError error = { "" };
  char *block = device_alloc (N * COUNT * 4);
  float *host = g_new (float, N *COUNT);
  weights_test_fill_bf16_exact_f32 (host, N * COUNT, 31);
  to_device (block, host, N * COUNT * 4);
  const uint64_t shape[] = { COUNT };
  WickWeightParam params[N];
  char names[N][16];
  for (int i = 0; i < N; i++)
    {
      snprintf (names[i], sizeof names[i], "norm%d.bias", i);
      params[i]
        = (WickWeightParam){ names[i], block + (size_t)i * COUNT * 4, WICK_DTYPE_F32, shape, 1 };
    }
  char *dir = weights_test_tmpdir ();
  char *path = g_build_filename (dir, "small.safetensors", NULL);
  g_assert_true (
    wick_safetensors_write (path, params, N, WICK_WEIGHT_MEMORY_CUDA, NULL, 0, &error));
  WickWeightStore *store = wick_weight_store_new (NULL, &error);
  WickWeightModuleInfo info = { "small", params, N, WICK_WEIGHT_MEMORY_CUDA, path };
  g_assert_true (wick_weight_store_register_module (store, &info, &error));
  g_assert_cmpuint (store->modules[0]->n_mappings, ==, 1);
  char *before = weights_test_sha256 (host, N * COUNT * 4);
  const WickTier tiers[] = { WICK_TIER_DISK, WICK_TIER_RAM };
  for (size_t t = 0; t < G_N_ELEMENTS (tiers); t++)
    {
      WickWeightStats stats;
      g_assert_true (wick_weight_store_evict (store, "small", tiers[t], &stats, &error));
      g_assert_cmpuint (stats.freed_bytes, ==, N * COUNT * 4);
      g_assert_true (wick_weight_store_restore (store, "small", &stats, &error));
      g_assert_cmpuint (stats.restored, ==, N);
      char *after = device_sha256 (block, N * COUNT * 4);
      g_assert_cmpstr (after, ==, before);
      g_free (after);
    }
  wick_weight_store_free (store);
  g_assert_true (wick_weight_free_device (block, &error));
  weights_test_rmdir (dir);
  g_free (before), g_free (path), g_free (dir), g_free (host);
}

/* The GPU's digest is the CPU's, byte for byte: sizes around the chunk and
 * the 32-byte block, empty, and unaligned starts (the byte loads). */
static void
test_gpu_digest_matches_cpu (void)
{
  if (skip_without_device ())
    return;
  const uint64_t sizes[] = { 0, 1, 31, 37, WICK_WEIGHT_HASH_CHUNK, WICK_WEIGHT_HASH_CHUNK + 5,
                             3 * WICK_WEIGHT_HASH_CHUNK + 37, (8u << 20) + 13 };
  const size_t n = G_N_ELEMENTS (sizes);
  const uint64_t capacity = (8u << 20) + 64;
  unsigned char *host = g_malloc (capacity);
  for (uint64_t i = 0; i < capacity; i++)
    host[i] = (unsigned char)(i * 2654435761u >> 13);
  unsigned char *device = device_alloc (capacity);
  to_device (device, host, capacity);
  WickError error = { "" };
  WickDeviceDigests *digests = wick_device_digests_new (&error);
  g_assert_nonnull (digests);
  uint64_t expected[2 * G_N_ELEMENTS (sizes)], got[2 * G_N_ELEMENTS (sizes)];
  for (size_t i = 0; i < n; i++)
    for (size_t offset = 0; offset < 2; offset++)
      {
        size_t slot = 2 * i + offset;
        size_t at = offset ? 3 : 0; /* 3: not 8-byte aligned */
        expected[slot] = wick_weight_digest (host + at, sizes[i]);
        g_assert_true (
          wick_device_digests_queue (digests, slot, device + at, sizes[i], 0, NULL, &error));
      }
  g_assert_true (wick_device_digests_wait (digests, got, 2 * n, &error));
  for (size_t slot = 0; slot < 2 * n; slot++)
    {
      if (got[slot] != expected[slot])
        g_error ("size %" G_GUINT64_FORMAT " offset %zu: GPU digest %016" G_GINT64_MODIFIER
                 "x, CPU %016" G_GINT64_MODIFIER "x",
                 sizes[slot / 2], slot % 2 ? (size_t)3 : 0, got[slot], expected[slot]);
    }
  g_assert_cmpuint (expected[0], ==, 0);
  g_assert_cmpuint (expected[2], !=, expected[4]);
  /* A buffer digested in parts that start on chunk boundaries (the disk
   * tier's staging slots) sums to the digest of the whole; a part queued
   * with the wrong first chunk does not. */
  const uint64_t whole = (8u << 20) + 13, cut = 5 * (uint64_t)WICK_WEIGHT_HASH_CHUNK;
  g_assert_true (wick_device_digests_reset (digests, &error));
  g_assert_true (wick_device_digests_queue (digests, 0, device, cut, 0, NULL, &error));
  g_assert_true (wick_device_digests_queue (digests, 0, device + cut, whole - cut,
                                            cut / WICK_WEIGHT_HASH_CHUNK, NULL, &error));
  g_assert_true (wick_device_digests_queue (digests, 1, device, cut, 0, NULL, &error));
  g_assert_true (wick_device_digests_queue (digests, 1, device + cut, whole - cut, 0, NULL, &error));
  g_assert_true (wick_device_digests_wait (digests, got, 2, &error));
  g_assert_cmpuint (got[0], ==, wick_weight_digest (host, whole));
  g_assert_cmpuint (got[1], !=, wick_weight_digest (host, whole));
  wick_device_digests_free (digests);
  WickError ignored;
  wick_weight_free_device (device, &ignored);
  g_free (host);
}

/* A pinned RAM copy changed after the eviction: the restore's digest (taken
 * on the GPU of the bytes that landed) differs, the parameter is refused and
 * its memory released again; the bytes never go live. */
static void
test_ram_copy_changed_refused (void)
{
  if (skip_without_device ())
    return;
  DeviceModel model; /* the GPU takes the digests (the default) */
  model_init (&model, FALSE);
  Hashes before = model_hash (&model);
  WickError error = { "" };
  WickWeightStats stats;
  g_assert_true (wick_weight_store_evict (model.store, "net", WICK_TIER_RAM, &stats, &error));
  WickWeightModule *module = model.store->modules[0];
  WickWeightStorage *changed = NULL;
  for (size_t s = 0; s < module->n_storages; s++)
    if (module->storages[s].data == (void *)model.matrix)
      changed = &module->storages[s];
  g_assert_nonnull (changed);
  ((unsigned char *)changed->spill)[changed->bytes / 2] ^= 0x40;
  g_assert_false (wick_weight_store_restore (model.store, "net", &stats, &error));
  g_assert_nonnull (strstr (error.message, "its RAM copy changed after the eviction"));
  WickWeightAllocation allocation;
  g_assert_true (wick_weight_allocation_get (model.matrix, &allocation));
  g_assert_true (allocation.released);
  /* put the byte back: the next restore is whole and bit-exact */
  ((unsigned char *)changed->spill)[changed->bytes / 2] ^= 0x40;
  g_assert_true (wick_weight_store_restore (model.store, "net", &stats, &error));
  assert_hashes (&model, &before);
  hashes_free (&before);
  model_clear (&model);
}

/* A 20 MiB parameter (three 8 MiB staging slots) restored from the disk
 * tier: the digests of its slots, each starting at its own chunk, sum to the
 * eviction's digest (an honest restore passes), and one byte changed in the
 * file's third slot after the eviction is refused, on the GPU's digests (the
 * default) and on the CPU's. */
static void
test_checkpoint_changed_refused (void)
{
  if (skip_without_device ())
    return;
  const size_t bytes = 20u << 20;
  char *dir = weights_test_tmpdir ();
  char *path = g_build_filename (dir, "big.safetensors", NULL);
  float *w = device_alloc (bytes);
  float *host = g_malloc (bytes);
  weights_test_fill (host, bytes, 9);
  to_device (w, host, bytes);
  g_free (host);
  const uint64_t shape[] = { bytes / 4 };
  WickWeightParam param = { "w", w, WICK_DTYPE_F32, shape, 1 };
  WickError error = { "" };
  g_assert_true (wick_safetensors_write (path, &param, 1, WICK_WEIGHT_MEMORY_CUDA, NULL, 0, &error));
  char *before = device_sha256 (w, bytes);
  for (int gpu = 1; gpu >= 0; gpu--)
    {
      g_setenv ("WICK_WEIGHT_GPU_DIGESTS", gpu ? "1" : "0", TRUE);
      WickWeightStore *store = wick_weight_store_new (NULL, &error);
      WickWeightModuleInfo info = { "big", &param, 1, WICK_WEIGHT_MEMORY_CUDA, path };
      g_assert_true (wick_weight_store_register_module (store, &info, &error));
      WickWeightStats stats;
      g_assert_true (wick_weight_store_evict (store, "big", WICK_TIER_DISK, &stats, &error));
      g_assert_true (wick_weight_store_restore (store, "big", &stats, &error));
      char *after = device_sha256 (w, bytes);
      g_assert_cmpstr (after, ==, before);
      g_free (after);
      g_assert_true (wick_weight_store_evict (store, "big", WICK_TIER_DISK, &stats, &error));
      struct stat st;
      g_assert_cmpint (stat (path, &st), ==, 0);
      off_t at = st.st_size - (off_t)(bytes / 4) + 5; /* in the third 8 MiB slot */
      int fd = g_open (path, O_RDWR, 0);
      unsigned char byte;
      g_assert_cmpint (pread (fd, &byte, 1, at), ==, 1);
      byte ^= 0x10;
      g_assert_cmpint (pwrite (fd, &byte, 1, at), ==, 1);
      g_assert_false (wick_weight_store_restore (store, "big", &stats, &error));
      g_assert_nonnull (strstr (error.message, "differ from what was evicted"));
      g_assert_false (wick_weight_store_is_resident (store, "big"));
      byte ^= 0x10;
      g_assert_cmpint (pwrite (fd, &byte, 1, at), ==, 1);
      close (fd);
      g_assert_true (wick_weight_store_restore (store, "big", &stats, &error));
      after = device_sha256 (w, bytes);
      g_assert_cmpstr (after, ==, before);
      g_free (after);
      wick_weight_store_free (store);
    }
  g_unsetenv ("WICK_WEIGHT_GPU_DIGESTS");
  g_assert_true (wick_weight_free_device (w, &error));
  g_unlink (path);
  weights_test_rmdir (dir);
  g_free (before), g_free (path), g_free (dir);
}

/* A release that fails during a RAM-tier eviction (with release-early, the
 * default: while later copies still run) puts back what went; the module
 * stays resident and bit-exact, and the next eviction and restore work. */
static void
test_rollback_ram (void)
{
  if (skip_without_device ())
    return;
  DeviceModel model;
  model_init (&model, FALSE);
  Hashes before = model_hash (&model);
  WickError error = { "" };
  WickWeightStats stats;
  wick_weight_fail_release_after = 2; /* the second mapping's release fails */
  g_assert_false (wick_weight_store_evict (model.store, "net", WICK_TIER_RAM, &stats, &error));
  wick_weight_fail_release_after = 0;
  g_assert_true (g_str_has_prefix (error.message, "module 'net': releasing parameter '"));
  g_assert_true (g_str_has_suffix (error.message,
                                   "failed (injected); the parameters already released were "
                                   "restored"));
  g_assert_true (stats.resident);
  WickWeightModule *module = model.store->modules[0];
  for (size_t m = 0; m < module->n_mappings; m++)
    g_assert_false (module->mappings[m].released);
  assert_hashes (&model, &before);
  g_assert_true (wick_weight_store_evict (model.store, "net", WICK_TIER_RAM, &stats, &error));
  g_assert_cmpuint (stats.freed_bytes, ==, model_bytes);
  g_assert_true (wick_weight_store_restore (model.store, "net", &stats, &error));
  assert_hashes (&model, &before);
  hashes_free (&before);
  model_clear (&model);
}

/* Spills prepared ahead (the default): the registration starts a thread
 * that pins every storage's spill, counted in the stats' spill_bytes; an
 * eviction that arrives while it runs stops it and allocates the rest; trim
 * frees what a resident module keeps; unregistering right after registering
 * joins the thread; with the preparation off, nothing is pinned before the
 * first eviction. Bytes are checked after every restore. */
static void
test_spills_prepared_ahead (void)
{
  if (skip_without_device ())
    return;
  wick_weight_move_options_init (); /* the environment's word is taken before ours */
  bool saved_prepare = wick_weight_move_options.prepare_spills;
  wick_weight_move_options.prepare_spills = true;
  DeviceModel model;
  model_init (&model, FALSE);
  Hashes before = model_hash (&model);
  WickError error = { "" };
  WickWeightStats stats;
  WickWeightModule *module = model.store->modules[0];
  wick_weight_module_wait_prepared (module);
  g_assert_true (wick_weight_store_find_stats (model.store, "net", &stats));
  g_assert_cmpuint (stats.spill_bytes, ==, model_bytes);
  for (size_t s = 0; s < module->n_storages; s++)
    g_assert_nonnull (module->storages[s].spill);
  WickWeightStats total;
  wick_weight_store_get_total_stats (model.store, &total);
  g_assert_cmpuint (total.spill_bytes, ==, model_bytes);
  g_assert_true (wick_weight_store_evict (model.store, "net", WICK_TIER_RAM, &stats, &error));
  g_assert_cmpuint (stats.spill_bytes, ==, model_bytes);
  g_assert_true (wick_weight_store_restore (model.store, "net", &stats, &error));
  assert_hashes (&model, &before);
  g_assert_cmpuint (stats.spill_bytes, ==, model_bytes); /* kept for the next eviction */
  wick_weight_store_trim (model.store);
  g_assert_true (wick_weight_store_find_stats (model.store, "net", &stats));
  g_assert_cmpuint (stats.spill_bytes, ==, 0);

  /* evictions and unregistrations right after registering, racing the
   * thread: 32 storages of 1 MiB, in rounds */
  enum
  {
    N_RACING = 32,
    RACING_BYTES = 1 << 20
  };
  static char names[N_RACING][32];
  uint64_t shape[1] = { RACING_BYTES / 4 };
  WickWeightParam params[N_RACING];
  float *racing[N_RACING];
  char *racing_hash[N_RACING];
  for (int i = 0; i < N_RACING; i++)
    {
      racing[i] = device_alloc (RACING_BYTES);
      float *host = g_new (float, RACING_BYTES / 4);
      weights_test_fill_bf16_exact_f32 (host, RACING_BYTES / 4, (uint32_t)(40 + i));
      to_device (racing[i], host, RACING_BYTES);
      racing_hash[i] = weights_test_sha256 (host, RACING_BYTES);
      g_free (host);
      snprintf (names[i], sizeof names[i], "layers.%d", i);
      params[i] = (WickWeightParam){ names[i], racing[i], WICK_DTYPE_F32, shape, 1 };
    }
  WickWeightModuleInfo info = { "racing", params, N_RACING, WICK_WEIGHT_MEMORY_CUDA, NULL };
  for (int round = 0; round < 8; round++)
    {
      g_assert_true (wick_weight_store_register_module (model.store, &info, &error));
      if (round % 2 == 1)
        {
          g_assert_true (wick_weight_store_unregister_module (model.store, "racing", &error));
          continue;
        }
      g_assert_true (
        wick_weight_store_evict (model.store, "racing", WICK_TIER_RAM, &stats, &error));
      g_assert_cmpuint (stats.ram, ==, N_RACING);
      g_assert_cmpuint (stats.spill_bytes, ==, (uint64_t)N_RACING * RACING_BYTES);
      g_assert_true (wick_weight_store_restore (model.store, "racing", &stats, &error));
      for (int i = 0; i < N_RACING; i++)
        {
          char *now = device_sha256 (racing[i], RACING_BYTES);
          g_assert_cmpstr (now, ==, racing_hash[i]);
          g_free (now);
        }
      g_assert_true (wick_weight_store_unregister_module (model.store, "racing", &error));
    }

  /* preparation off: nothing pinned until the first eviction pins it */
  wick_weight_move_options.prepare_spills = false;
  g_assert_true (wick_weight_store_register_module (model.store, &info, &error));
  WickWeightModule *late = model.store->modules[model.store->n_modules - 1];
  g_assert_false (late->preparing);
  g_assert_true (wick_weight_store_find_stats (model.store, "racing", &stats));
  g_assert_cmpuint (stats.spill_bytes, ==, 0);
  g_assert_true (wick_weight_store_evict (model.store, "racing", WICK_TIER_RAM, &stats, &error));
  g_assert_cmpuint (stats.spill_bytes, ==, (uint64_t)N_RACING * RACING_BYTES);
  g_assert_true (wick_weight_store_restore (model.store, "racing", &stats, &error));
  g_assert_true (wick_weight_store_unregister_module (model.store, "racing", &error));
  wick_weight_move_options.prepare_spills = saved_prepare;
  for (int i = 0; i < N_RACING; i++)
    {
      char *now = device_sha256 (racing[i], RACING_BYTES);
      g_assert_cmpstr (now, ==, racing_hash[i]);
      g_free (now);
      g_free (racing_hash[i]);
      g_assert_true (wick_weight_free_device (racing[i], &error));
    }
  hashes_free (&before);
  model_clear (&model);
}

/* The same round trips with the CPU threads hashing (WICK_WEIGHT_GPU_DIGESTS=0). */
static void
test_cpu_digests (gconstpointer data)
{
  g_setenv ("WICK_WEIGHT_GPU_DIGESTS", "0", TRUE);
  ((void (*) (void))data) ();
  g_unsetenv ("WICK_WEIGHT_GPU_DIGESTS");
}

/* The same tests under each ordering of the moves that bench-weight-store
 * times (wick_weight_move_options, wick_weight_pin_registered): bytes,
 * refusals and rollback must not depend on it. */
typedef struct
{
  WickWeightMoveOptions options;
  bool pin_registered;
  void (*test) (void);
} UnderOptions;

static void
test_under_options (gconstpointer data)
{
  const UnderOptions *under = data;
  WickWeightMoveOptions saved = wick_weight_move_options;
  bool saved_pin = wick_weight_pin_registered;
  wick_weight_move_options = under->options;
  wick_weight_pin_registered = under->pin_registered;
  under->test ();
  wick_weight_move_options = saved;
  wick_weight_pin_registered = saved_pin;
}

static void
add_under_options (void)
{
  static const struct
  {
    const char *name;
    WickWeightMoveOptions options;
    bool pin_registered;
  } kinds[] = {
    /* the default, spelled out (the plain paths run it too) */
    { "release-early", { .release_early = true, .prepare_spills = true }, true },
    { "release-late", { .release_early = false, .prepare_spills = true }, true },
    { "no-prepare", { .release_early = true, .prepare_spills = false }, true },
    { "pin-host-alloc", { .release_early = true, .prepare_spills = false }, false },
    { "release-late-host-alloc", { .release_early = false, .prepare_spills = false }, false },
  };
  static const struct
  {
    const char *name;
    void (*test) (void);
  } tests[] = {
    { "round-trip-ram", test_round_trip_ram },
    { "round-trip-disk", test_round_trip_disk },
    { "rollback-and-restore-all", test_rollback_and_restore_all },
    { "rollback-ram", test_rollback_ram },
    { "ram-copy-changed-refused", test_ram_copy_changed_refused },
  };
  enum
  {
    N_KINDS = sizeof kinds / sizeof kinds[0],
    N_TESTS = sizeof tests / sizeof tests[0]
  };
  static UnderOptions under[N_KINDS * N_TESTS];
  for (size_t k = 0; k < N_KINDS; k++)
    for (size_t t = 0; t < N_TESTS; t++)
      {
        UnderOptions *u = &under[k * N_TESTS + t];
        u->options = kinds[k].options;
        u->pin_registered = kinds[k].pin_registered;
        u->test = tests[t].test;
        char *path = g_strdup_printf ("/weights/cuda/%s/%s", kinds[k].name, tests[t].name);
        g_test_add_data_func (path, u, test_under_options);
        g_free (path);
      }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/weights/cuda/round-trip-disk", test_round_trip_disk);
  g_test_add_func ("/weights/cuda/round-trip-ram", test_round_trip_ram);
  g_test_add_func ("/weights/cuda/mutated-goes-to-ram", test_mutated_goes_to_ram);
  g_test_add_func ("/weights/cuda/hostile-checkpoint", test_hostile_checkpoint);
  g_test_add_func ("/weights/cuda/device-memory-returns", test_device_memory_returns);
  g_test_add_func ("/weights/cuda/captured-graph-survives", test_captured_graph_survives);
  g_test_add_func ("/weights/cuda/rollback-and-restore-all", test_rollback_and_restore_all);
  g_test_add_func ("/weights/cuda/packed-small-tensors", test_packed_small_tensors);
  g_test_add_func ("/weights/cuda/gpu-digest-matches-cpu", test_gpu_digest_matches_cpu);
  g_test_add_func ("/weights/cuda/ram-copy-changed-refused", test_ram_copy_changed_refused);
  g_test_add_func ("/weights/cuda/checkpoint-changed-refused", test_checkpoint_changed_refused);
  g_test_add_func ("/weights/cuda/rollback-ram", test_rollback_ram);
  g_test_add_func ("/weights/cuda/spills-prepared-ahead", test_spills_prepared_ahead);
  g_test_add_data_func ("/weights/cuda/cpu-digests/round-trip-disk", test_round_trip_disk,
                        test_cpu_digests);
  g_test_add_data_func ("/weights/cuda/cpu-digests/round-trip-ram", test_round_trip_ram,
                        test_cpu_digests);
  g_test_add_data_func ("/weights/cuda/cpu-digests/hostile-checkpoint", test_hostile_checkpoint,
                        test_cpu_digests);
  add_under_options ();
  return g_test_run ();
}
