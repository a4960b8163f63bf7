/* stage-replay-lib.c — a certified Wick stage of bench-stage-replay's chain,
 * as a shared library, so that its replay (wick_stage_run) is timed inside a
 * torch process beside torch.cuda.CUDAGraph of the same length, in the same
 * run (bench-graph-probe.py loads it with ctypes): a bare
 * graph of these kernels replays 0.18 us a kernel faster at 128 kernels in a
 * torch process than in a C process, with the same code and the same loop).
 *
 *   void  *stage_replay_new  (int kernels, int threads, void *stream)
 *   double stage_replay_time (void *handle, int launches)   ms, CUDA events
 *   double stage_replay_speedup (void *handle)              the certificate's
 *   void   stage_replay_free (void *handle)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stage-test-kernels.h"
#include "stages/wick-stage-private.h"

#define REPLAY_N 128

typedef struct
{
  float *input, *output;
  int kernels, threads;
  void *stream, *start, *stop;
  WickStage *stage;
  WickCertification cert;
} ReplayHandle;

static void
replay_enqueue (void *stream, void *user_data)
{
  ReplayHandle *h = user_data;
  stage_test_chain_threads (h->input, h->output, REPLAY_N, h->kernels, h->threads, stream);
}

void *stage_replay_new (int kernels, int threads, void *stream);
double stage_replay_time (void *handle, int launches);
double stage_replay_speedup (void *handle);
void stage_replay_free (void *handle);

void *
stage_replay_new (int kernels, int threads, void *stream)
{
  WickError error = { "" };
  if (!wick_cuda_available (&error))
    {
      fprintf (stderr, "stage-replay-lib: %s\n", error.message);
      return NULL;
    }
  ReplayHandle *h = calloc (1, sizeof *h);
  if (h == NULL)
    return NULL;
  h->kernels = kernels;
  h->threads = threads;
  h->stream = stream;
  h->input = stage_test_alloc (REPLAY_N * sizeof (float));
  h->output = stage_test_alloc (REPLAY_N * sizeof (float));
  float host[REPLAY_N];
  for (int i = 0; i < REPLAY_N; i++)
    host[i] = sinf ((float)i);
  stage_test_upload (h->input, host, sizeof host);
  h->start = stage_test_event_new ();
  h->stop = stage_test_event_new ();
  static const int64_t shape[1] = { REPLAY_N };
  WickStageInfo info = {
    .name = "chain",
    .enqueue = replay_enqueue,
    .user_data = h,
    .windows = &(WickStageBuffer){ "input", h->input, WICK_STAGE_DTYPE_F32, shape, 1 },
    .n_windows = 1,
    .output = { NULL, h->output, WICK_STAGE_DTYPE_F32, shape, 1 },
  };
  h->stage = wick_stage_new (NULL, &info, &error);
  if (h->stage == NULL)
    {
      fprintf (stderr, "stage-replay-lib: %s\n", error.message);
      stage_replay_free (h);
      return NULL;
    }
  wick_stage_capture (h->stage, NULL, &h->cert, &error);
  if (!h->cert.accepted)
    {
      fprintf (stderr, "stage-replay-lib: chain of %d refused: %s\n", kernels, h->cert.reason);
      stage_replay_free (h);
      return NULL;
    }
  return h;
}

double
stage_replay_time (void *handle, int launches)
{
  ReplayHandle *h = handle;
  stage_test_event_record (h->start, h->stream);
  for (int i = 0; i < launches; i++)
    wick_stage_run (h->stage, h->stream, NULL);
  stage_test_event_record (h->stop, h->stream);
  return stage_test_event_ms (h->start, h->stop);
}

double
stage_replay_speedup (void *handle)
{
  return ((ReplayHandle *)handle)->cert.speedup_median;
}

void
stage_replay_free (void *handle)
{
  ReplayHandle *h = handle;
  if (h == NULL)
    return;
  if (h->stage != NULL)
    wick_stage_free (h->stage);
  if (h->start != NULL)
    stage_test_event_free (h->start);
  if (h->stop != NULL)
    stage_test_event_free (h->stop);
  stage_test_free (h->input);
  stage_test_free (h->output);
  free (h);
}
