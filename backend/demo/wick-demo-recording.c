/* wick-demo-recording.c — wick-demo's instrumentation (see the header). */
#include "config.h"

#include "wick-demo-recording.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define DEVICE "cpu"
#define DTYPE "f32"

enum
{
  ACT_INPUT,
  ACT_H1,
  ACT_H2,
  ACT_OUTPUT,
  N_ACTIVATIONS
};

static const char *const activation_names[N_ACTIVATIONS] = { "input", "h1", "h2", "output" };

static _Atomic uint64_t records_asked;

void
wick_demo_count_records (uint64_t n)
{
  atomic_fetch_add_explicit (&records_asked, n, memory_order_relaxed);
}

uint64_t
wick_demo_get_records (void)
{
  return atomic_load_explicit (&records_asked, memory_order_relaxed);
}

WickSpanId
wick_demo_span_begin (WickSession *session, const char *name, WickSpanKind kind, WickStep step)
{
  wick_demo_count_records (1);
  return step == WICK_STEP_NONE ? wick_span_begin (session, name, kind)
                                : wick_span_begin_step (session, name, kind, step);
}

void
wick_demo_span_end (WickSession *session, WickSpanId span)
{
  wick_demo_count_records (1);
  wick_span_end (session, span);
}

static void
report (bool ok, const WickError *error, const char *what)
{
  /* "dropped" is the drop policy working as designed: counted, not fatal. */
  if (!ok && strstr (error->message, "dropped") == NULL)
    fprintf (stderr, "wick-demo: recording %s: %s\n", what, error->message);
}

static uint32_t
activation_shape (const WickDemoModel *model, int which, uint64_t shape[2])
{
  const WickDemoShape *s = &model->shape;
  shape[0] = s->batch;
  shape[1] = which == ACT_INPUT ? s->width : which == ACT_OUTPUT ? s->outputs : s->hidden;
  return 2;
}

static void
record_memory (WickSession *session, WickSpanId span, const char *storage, const char *tensor,
               uint64_t bytes, WickMemoryAction action, WickMemoryCategory category,
               const uint64_t *shape, size_t rank)
{
  WickMemoryRecord record = {
    .timestamp_ns = WICK_NOW,
    .storage_id = storage,
    .tensor_id = tensor,
    .span = span,
    .device = DEVICE,
    .bytes = bytes,
    .action = action,
    .shape = shape,
    .rank = rank,
    .dtype = DTYPE,
    .category = category,
  };
  WickError error;
  wick_demo_count_records (1);
  report (wick_session_record_memory (session, &record, &error), &error, "memory");
}

static void
record_tensor (WickSession *session, WickSpanId span, const char *id, const char *label,
               const uint64_t *shape, size_t rank, bool requires_grad, WickMemoryCategory category)
{
  WickTensorRecord record = {
    .span = span,
    .tensor_id = id,
    .label = label,
    .shape = shape,
    .rank = rank,
    .dtype = DTYPE,
    .device = DEVICE,
    .requires_grad = requires_grad,
    .category = category,
  };
  WickError error;
  wick_demo_count_records (1);
  report (wick_session_record_tensor (session, &record, &error), &error, "tensor");
}

static void
record_op (WickSession *session, WickSpanId span, const char *name, const char *const *inputs,
           size_t n_inputs, const char *output, const uint64_t *shape, size_t rank,
           uint64_t start_ns, uint64_t input_bytes)
{
  uint64_t end_ns = wick_session_now_ns (session);
  WickOpRecord record = {
    .span = span,
    .op_name = name,
    .inputs = inputs,
    .n_inputs = n_inputs,
    .output = output,
    .shape = shape,
    .rank = rank,
    .dtype = DTYPE,
    .device = DEVICE,
    .duration_ns = end_ns > start_ns ? end_ns - start_ns : 0,
    .timestamp_ns = start_ns > 0 ? start_ns : 1,
    .input_dense_bytes = input_bytes,
  };
  WickError error;
  wick_demo_count_records (1);
  report (wick_session_record_op (session, &record, &error), &error, "op");
}

static void
param_storage (WickDemoParam param, const char *prefix, char *out, size_t size)
{
  snprintf (out, size, "%s%s", prefix, wick_demo_param_name (param));
}

void
wick_demo_record_setup (WickDemoRecorder *recorder)
{
  WickSession *session = recorder->session;
  WickSpanId span = wick_demo_span_begin (session, "setup", WICK_SPAN_FUNCTION, WICK_STEP_NONE);
  for (int p = 0; p < WICK_DEMO_N_PARAMS; p++)
    {
      uint64_t dims[2];
      uint32_t rank = wick_demo_param_shape (recorder->model, p, dims);
      uint64_t bytes = recorder->model->n_elements[p] * sizeof (float);
      const char *name = wick_demo_param_name (p);
      bool trainable = wick_demo_param_trainable (p);
      /* the parameters' memory is the weight store's records (its modules
       * hold them: docs/weights.md), written once there */
      record_tensor (session, span, name, name, dims, rank, trainable, WICK_CATEGORY_PARAMETER);
      if (!trainable)
        continue;
      char id[160];
      param_storage (p, "momentum.", id, sizeof id);
      record_tensor (session, span, id, id, dims, rank, false, WICK_CATEGORY_OPTIMIZER);
      record_memory (session, span, id, id, bytes, WICK_MEMORY_ALLOC, WICK_CATEGORY_OPTIMIZER, dims,
                     rank);
    }
  wick_demo_record_host_memory (session);
  wick_demo_span_end (session, span);
}

void
wick_demo_record_teardown (WickDemoRecorder *recorder)
{
  WickSession *session = recorder->session;
  WickSpanId span = wick_demo_span_begin (session, "teardown", WICK_SPAN_FUNCTION, WICK_STEP_NONE);
  for (int p = 0; p < WICK_DEMO_N_PARAMS; p++)
    {
      uint64_t dims[2];
      uint32_t rank = wick_demo_param_shape (recorder->model, p, dims);
      uint64_t bytes = recorder->model->n_elements[p] * sizeof (float);
      if (!wick_demo_param_trainable (p))
        continue;
      char id[160];
      param_storage (p, "momentum.", id, sizeof id);
      record_memory (session, span, id, id, bytes, WICK_MEMORY_FREE, WICK_CATEGORY_OPTIMIZER, dims,
                     rank);
    }
  wick_demo_span_end (session, span);
}

/* Allocation (or free) of one activation of this step. */
static void
activation_memory (WickDemoRecorder *recorder, WickSpanId span, int which, WickMemoryAction action)
{
  uint64_t shape[2];
  uint32_t rank = activation_shape (recorder->model, which, shape);
  char id[64];
  snprintf (id, sizeof id, "%s#%llu", activation_names[which], (unsigned long long)recorder->step);
  record_memory (recorder->session, span, activation_names[which], id,
                 wick_demo_model_activation_bytes (recorder->model, which), action,
                 WICK_CATEGORY_ACTIVATION, shape, rank);
  if (action == WICK_MEMORY_ALLOC)
    record_tensor (recorder->session, span, id, activation_names[which], shape, rank,
                   which != ACT_INPUT, WICK_CATEGORY_ACTIVATION);
}

static void
step_data (WickDemoRecorder *recorder)
{
  WickSession *session = recorder->session;
  WickSpanId span = wick_demo_span_begin (session, "data", WICK_SPAN_FUNCTION, WICK_STEP_NONE);
  if (recorder->loader == NULL || !wick_demo_loader_take (recorder->loader, recorder->model))
    wick_demo_model_draw_tokens (recorder->model, &recorder->model->rng, recorder->model->tokens);
  uint64_t start = wick_session_now_ns (session);
  if (!recorder->skip_compute)
    wick_demo_model_embed_batch (recorder->model);
  uint64_t shape[2];
  activation_shape (recorder->model, ACT_INPUT, shape);
  const char *inputs[] = { "embedding.weight" };
  char output[64];
  snprintf (output, sizeof output, "input#%llu", (unsigned long long)recorder->step);
  activation_memory (recorder, span, ACT_INPUT, WICK_MEMORY_ALLOC);
  record_op (session, span, "embedding_bag_mean", inputs, 1, output, shape, 2, start,
             (uint64_t)recorder->model->shape.batch * recorder->model->shape.bag * 4);
  wick_demo_span_end (session, span);
}

/* An op over activations a → b with the weight w: "linear" with its shape. */
static void
forward_linear (WickDemoRecorder *recorder, WickSpanId span, const char *name, int in, int out,
                WickDemoParam weight, uint64_t start)
{
  uint64_t shape[2];
  activation_shape (recorder->model, out, shape);
  char input_id[64], output_id[64];
  snprintf (input_id, sizeof input_id, "%s#%llu", activation_names[in],
            (unsigned long long)recorder->step);
  snprintf (output_id, sizeof output_id, "%s#%llu", activation_names[out],
            (unsigned long long)recorder->step);
  const char *inputs[] = { input_id, wick_demo_param_name (weight) };
  record_op (recorder->session, span, name, inputs, 2, output_id, shape, 2, start,
             wick_demo_model_activation_bytes (recorder->model, in)
               + recorder->model->n_elements[weight] * sizeof (float));
}

static double
step_forward (WickDemoRecorder *recorder)
{
  WickSession *session = recorder->session;
  WickSpanId span = wick_demo_span_begin (session, "forward", WICK_SPAN_MODULE, WICK_STEP_FORWARD);
  for (int a = ACT_H1; a < N_ACTIVATIONS; a++)
    activation_memory (recorder, span, a, WICK_MEMORY_ALLOC);
  static const char *const layer_ops[WICK_DEMO_N_LAYERS]
    = { "linear_relu", "linear_relu", "linear" };
  static const WickDemoParam layer_weights[WICK_DEMO_N_LAYERS]
    = { WICK_DEMO_FC1_WEIGHT, WICK_DEMO_FC2_WEIGHT, WICK_DEMO_HEAD_WEIGHT };
  for (int layer = 0; layer < WICK_DEMO_N_LAYERS; layer++)
    {
      uint64_t start = wick_session_now_ns (session);
      if (!recorder->skip_compute)
        wick_demo_model_forward_layer (recorder->model, layer);
      forward_linear (recorder, span, layer_ops[layer], ACT_INPUT + layer, ACT_INPUT + layer + 1,
                      layer_weights[layer], start);
    }
  uint64_t start = wick_session_now_ns (session);
  double loss = wick_demo_model_loss (recorder->model);
  uint64_t scalar[1] = { 1 };
  char output_id[64];
  snprintf (output_id, sizeof output_id, "output#%llu", (unsigned long long)recorder->step);
  const char *inputs[] = { output_id };
  record_op (session, span, "mse_loss", inputs, 1, NULL, scalar, 0, start,
             wick_demo_model_activation_bytes (recorder->model, ACT_OUTPUT) * 2);

  WickTensorStatsRecord stats = { .span = span, .label = "output" };
  uint64_t shape[2];
  activation_shape (recorder->model, ACT_OUTPUT, shape);
  stats.shape = shape;
  stats.rank = 2;
  stats.dtype = DTYPE;
  wick_tensor_stats_compute_f32 (recorder->model->output, shape[0] * shape[1], &stats);
  WickError error;
  wick_demo_count_records (1);
  report (wick_session_record_tensor_stats (session, &stats, &error), &error, "tensor_stats");
  wick_demo_span_end (session, span);
  return loss;
}

static void
step_backward (WickDemoRecorder *recorder, WickParameterGradient gradients[WICK_DEMO_N_PARAMS])
{
  WickSession *session = recorder->session;
  WickSpanId span
    = wick_demo_span_begin (session, "backward", WICK_SPAN_MODULE, WICK_STEP_BACKWARD);
  uint64_t start = wick_session_now_ns (session);
  if (!recorder->skip_compute)
    wick_demo_model_backward (recorder->model);
  /* The model's backward is one call: one op for it, honestly timed. */
  uint64_t shape[2];
  activation_shape (recorder->model, ACT_H2, shape);
  char output_id[64];
  snprintf (output_id, sizeof output_id, "output#%llu", (unsigned long long)recorder->step);
  const char *inputs[] = { output_id };
  record_op (session, span, "mlp_backward", inputs, 1, NULL, shape, 2, start,
             wick_demo_model_activation_bytes (recorder->model, ACT_OUTPUT));
  for (int p = 0; p < WICK_DEMO_N_PARAMS; p++)
    {
      if (gradients != NULL)
        {
          gradients[p].has_gradient = wick_demo_param_trainable (p);
          gradients[p].norm = wick_demo_model_grad_norm (recorder->model, p);
        }
      if (!wick_demo_param_trainable (p))
        continue;
      uint64_t dims[2];
      uint32_t rank = wick_demo_param_shape (recorder->model, p, dims);
      char id[160];
      param_storage (p, "grad.", id, sizeof id);
      record_memory (session, span, id, id, recorder->model->n_elements[p] * sizeof (float),
                     WICK_MEMORY_ALLOC, WICK_CATEGORY_GRADIENT, dims, rank);
      record_tensor (session, span, id, id, dims, rank, false, WICK_CATEGORY_GRADIENT);
    }
  wick_demo_span_end (session, span);
}

static void
step_optimizer (WickDemoRecorder *recorder)
{
  WickSession *session = recorder->session;
  WickSpanId span
    = wick_demo_span_begin (session, "optimizer", WICK_SPAN_FUNCTION, WICK_STEP_OPTIMIZER);
  uint64_t start = wick_session_now_ns (session);
  if (!recorder->skip_compute)
    wick_demo_model_optimizer_step (recorder->model);
  uint64_t total = 0;
  for (int p = 0; p < WICK_DEMO_N_PARAMS; p++)
    if (wick_demo_param_trainable (p))
      total += recorder->model->n_elements[p];
  uint64_t shape[1] = { total };
  const char *inputs[]
    = { "trunk.fc1.weight", "trunk.fc1.bias", "trunk.fc2.weight", "head.weight" };
  record_op (session, span, "sgd_momentum", inputs, 4, NULL, shape, 1, start,
             3 * total * sizeof (float));
  for (int p = 0; p < WICK_DEMO_N_PARAMS; p++)
    {
      if (!wick_demo_param_trainable (p))
        continue;
      uint64_t dims[2];
      uint32_t rank = wick_demo_param_shape (recorder->model, p, dims);
      char grad[160];
      param_storage (p, "grad.", grad, sizeof grad);
      record_memory (session, span, grad, grad, recorder->model->n_elements[p] * sizeof (float),
                     WICK_MEMORY_FREE, WICK_CATEGORY_GRADIENT, dims, rank);
    }
  for (int a = ACT_INPUT; a < N_ACTIVATIONS; a++)
    activation_memory (recorder, span, a, WICK_MEMORY_FREE);
  wick_demo_span_end (session, span);
}

double
wick_demo_record_step (WickDemoRecorder *recorder,
                       WickParameterGradient gradients[WICK_DEMO_N_PARAMS])
{
  step_data (recorder);
  double loss = step_forward (recorder);
  step_backward (recorder, gradients);
  step_optimizer (recorder);
  return loss;
}

void
wick_demo_record_host_memory (WickSession *session)
{
  long page = sysconf (_SC_PAGESIZE);
  long pages = sysconf (_SC_PHYS_PAGES);
  unsigned long long size = 0, resident = 0;
  FILE *statm = fopen ("/proc/self/statm", "r");
  if (statm == NULL)
    return;
  int n = fscanf (statm, "%llu %llu", &size, &resident);
  fclose (statm);
  if (n != 2 || page <= 0)
    return;
  WickDeviceMemoryRecord sample = {
    .timestamp_ns = WICK_NOW,
    .device = DEVICE,
    .has_used_bytes = true,
    .used_bytes = resident * (unsigned long long)page,
    .has_capacity_bytes = pages > 0,
    .capacity_bytes = pages > 0 ? (uint64_t)pages * (uint64_t)page : 0,
  };
  WickError error;
  wick_demo_count_records (1);
  report (wick_session_record_device_memory (session, &sample, &error), &error, "device_memory");
}
