/* wick-demo-stage.c — registers wick-demo's stages "denoise" and
 * "denoise-rng" (see wick-demo-stage.h) and computes their CPU path. */
#include "wick-demo-stage.h"

#include "wick-demo-stage-kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum
{
  DEMO_BATCH = 64,
  DEMO_DIM = 64,
  DEMO_STEPS = 16,
  DEMO_N = DEMO_BATCH * DEMO_DIM,
};

typedef struct
{
  WickDemoDenoise denoise;
  float *output;
  bool on_device;
  bool rng;
  uint64_t seed_counter;
  /* noise, cond, weight, scratch, output: one allocation each */
  void *buffers[5];
} DemoStage;

float
wick_demo_denoise_rate (int step, int steps)
{
  return 0.3f * (float)(steps - step) / (float)steps;
}

static uint64_t
demo_mix (uint64_t z)
{
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* A standard-normal-ish draw from (seed, step, index): the CPU twin of the
 * device's generator (the same bits; float rounding may differ). */
static float
wick_demo_gauss (uint64_t seed, int step, uint32_t index)
{
  uint64_t bits = demo_mix (seed ^ demo_mix (((uint64_t)(uint32_t)step << 32) | index));
  float sum = 0.0f;
  for (int k = 0; k < 4; k++)
    sum += (float)((bits >> (16 * k)) & 0xffffu) * (1.0f / 65536.0f);
  return (sum - 2.0f) * 1.7320508f;
}

static void
wick_demo_denoise_cpu (const WickDemoDenoise *d, float *x, uint64_t seed)
{
  int n = d->batch * d->dim;
  float *h = d->scratch;
  memcpy (x, d->noise, (size_t)n * sizeof *x);
  for (int step = 0; step < d->steps; step++)
    {
      for (int row = 0; row < d->batch; row++)
        for (int col = 0; col < d->dim; col++)
          {
            float sum = 0.0f;
            for (int k = 0; k < d->dim; k++)
              sum += x[row * d->dim + k] * d->weight[k * d->dim + col];
            h[row * d->dim + col] = sum;
          }
      float rate = wick_demo_denoise_rate (step, d->steps);
      for (int i = 0; i < n; i++)
        {
          float value = x[i] - rate * tanhf (h[i] + d->cond[i % d->dim]);
          if (seed != 0)
            value += 0.5f * wick_demo_gauss (seed, step, (uint32_t)i);
          x[i] = value;
        }
    }
}

static void
demo_compute (DemoStage *demo, float *x, void *stream)
{
  uint64_t seed = demo->rng ? ++demo->seed_counter : 0;
#if WICK_HAVE_CUDA
  if (demo->on_device)
    {
      wick_demo_denoise_launch (&demo->denoise, x, seed, stream);
      return;
    }
#endif
  wick_demo_denoise_cpu (&demo->denoise, x, seed);
}

static void
demo_enqueue (void *stream, void *user_data)
{
  DemoStage *demo = user_data;
  demo_compute (demo, demo->output, stream);
}

static void
demo_reference (void *stream, void *output, void *user_data)
{
  demo_compute (user_data, output, stream);
}

static void
demo_free (void *user_data)
{
  DemoStage *demo = user_data;
  for (size_t i = 0; i < 5; i++)
    {
#if WICK_HAVE_CUDA
      if (demo->on_device)
        {
          wick_demo_cuda_free (demo->buffers[i]);
          continue;
        }
#endif
      free (demo->buffers[i]);
    }
  free (demo);
}

static void
demo_fill_noise (float *noise, uint64_t seed)
{
  for (uint32_t i = 0; i < DEMO_N; i++)
    noise[i] = wick_demo_gauss (seed, -1, i);
}

/* Host values of noise, cond and weight, in the order of demo->buffers. */
static void
demo_fill (float *noise, float *cond, float *weight)
{
  demo_fill_noise (noise, 1);
  for (int i = 0; i < DEMO_DIM; i++)
    cond[i] = 0.25f * sinf ((float)i);
  for (uint32_t i = 0; i < DEMO_DIM * DEMO_DIM; i++)
    weight[i] = wick_demo_gauss (2, -2, i) / sqrtf ((float)DEMO_DIM);
}

static const size_t demo_sizes[5] = {
  DEMO_N * sizeof (float), DEMO_DIM * sizeof (float), DEMO_DIM *DEMO_DIM * sizeof (float),
  DEMO_N * sizeof (float), DEMO_N * sizeof (float),
};

static bool
demo_allocate (DemoStage *demo, WickError *error)
{
  static float noise[DEMO_N], cond[DEMO_DIM], weight[DEMO_DIM * DEMO_DIM];
  const void *initial[3] = { noise, cond, weight };
  demo_fill (noise, cond, weight);
  for (size_t i = 0; i < 5; i++)
    {
#if WICK_HAVE_CUDA
      if (demo->on_device)
        {
          demo->buffers[i] = wick_demo_cuda_alloc (demo_sizes[i]);
          if (demo->buffers[i] == NULL
              || (i < 3 && !wick_demo_cuda_upload (demo->buffers[i], initial[i], demo_sizes[i])))
            {
              snprintf (error->message, sizeof error->message,
                        "demo stage: could not allocate or fill %zu bytes on the device",
                        demo_sizes[i]);
              return false;
            }
          continue;
        }
#endif
      demo->buffers[i] = calloc (1, demo_sizes[i]);
      if (demo->buffers[i] == NULL)
        {
          snprintf (error->message, sizeof error->message, "demo stage: out of memory");
          return false;
        }
      if (i < 3)
        memcpy (demo->buffers[i], initial[i], demo_sizes[i]);
    }
  return true;
}

static bool
demo_register_one (WickSession *session, const char *name, bool rng, WickError *error)
{
  DemoStage *demo = calloc (1, sizeof *demo);
  if (demo == NULL)
    {
      snprintf (error->message, sizeof error->message, "demo stage: out of memory");
      return false;
    }
  demo->rng = rng;
  demo->on_device = wick_cuda_available (NULL);
  if (!demo_allocate (demo, error))
    {
      demo_free (demo);
      return false;
    }
  demo->denoise = (WickDemoDenoise){
    .noise = demo->buffers[0],
    .cond = demo->buffers[1],
    .weight = demo->buffers[2],
    .scratch = demo->buffers[3],
    .batch = DEMO_BATCH,
    .dim = DEMO_DIM,
    .steps = DEMO_STEPS,
  };
  demo->output = demo->buffers[4];
  static const int64_t matrix[2] = { DEMO_BATCH, DEMO_DIM };
  static const int64_t vector[1] = { DEMO_DIM };
  const WickStageBuffer windows[2] = {
    { "noise", demo->buffers[0], WICK_STAGE_DTYPE_F32, matrix, 2 },
    { "cond", demo->buffers[1], WICK_STAGE_DTYPE_F32, vector, 1 },
  };
  WickStageInfo info = {
    .name = name,
    .enqueue = demo_enqueue,
    .reference = demo_reference,
    .user_data = demo,
    .destroy_user_data = demo_free,
    .windows = windows,
    .n_windows = 2,
    .output = { NULL, demo->output, WICK_STAGE_DTYPE_F32, matrix, 2 },
  };
  if (wick_session_register_stage (session, &info, error) == NULL)
    {
      demo_free (demo);
      return false;
    }
  return true;
}

bool
wick_demo_stage_register (WickSession *session, WickError *error)
{
  return demo_register_one (session, WICK_DEMO_STAGE_NAME, false, error)
         && demo_register_one (session, WICK_DEMO_UNSAFE_STAGE_NAME, true, error);
}

bool
wick_demo_stage_step (WickSession *session, uint64_t step, WickError *error)
{
  static const int64_t matrix[2] = { DEMO_BATCH, DEMO_DIM };
  float *noise = malloc (DEMO_N * sizeof *noise);
  if (noise == NULL)
    {
      snprintf (error->message, sizeof error->message, "demo stage: out of memory");
      return false;
    }
  demo_fill_noise (noise, step + 1);
  bool ok = true;
  const char *names[2] = { WICK_DEMO_STAGE_NAME, WICK_DEMO_UNSAFE_STAGE_NAME };
  for (size_t i = 0; ok && i < 2; i++)
    {
      WickStage *stage = wick_session_find_stage (session, names[i]);
      if (stage == NULL)
        {
          snprintf (error->message, sizeof error->message,
                    "demo stage: '%s' is not registered on this session", names[i]);
          ok = false;
          break;
        }
      ok = wick_stage_write_window (stage, "noise", noise, DEMO_N * sizeof *noise,
                                    WICK_STAGE_DTYPE_F32, matrix, 2, error)
           && wick_stage_run (stage, NULL, error);
    }
  free (noise);
  return ok;
}
