/* wick-demo-model.c — the demo's bag-of-tokens regressor (see the header). */
#include "config.h"

#include "wick-demo-model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const param_names[WICK_DEMO_N_PARAMS] = {
  "embedding.weight", "trunk.fc1.weight", "trunk.fc1.bias", "trunk.fc2.weight", "head.weight",
};

const char *
wick_demo_param_name (WickDemoParam param)
{
  return param_names[param];
}

const char *
wick_demo_param_module (WickDemoParam param)
{
  switch (param)
    {
      case WICK_DEMO_EMBEDDING:
        return "embedding";
      case WICK_DEMO_HEAD_WEIGHT:
        return "head";
      default:
        return "trunk";
    }
}

const char *
wick_demo_param_local_name (WickDemoParam param)
{
  const char *name = param_names[param];
  return strchr (name, '.') + 1;
}

bool
wick_demo_param_trainable (WickDemoParam param)
{
  return param != WICK_DEMO_EMBEDDING;
}

uint32_t
wick_demo_param_shape (const WickDemoModel *model, WickDemoParam param, uint64_t dims[2])
{
  const WickDemoShape *s = &model->shape;
  switch (param)
    {
      case WICK_DEMO_EMBEDDING:
        dims[0] = s->vocab, dims[1] = s->width;
        return 2;
      case WICK_DEMO_FC1_WEIGHT:
        dims[0] = s->hidden, dims[1] = s->width;
        return 2;
      case WICK_DEMO_FC1_BIAS:
        dims[0] = s->hidden, dims[1] = 1;
        return 1;
      case WICK_DEMO_FC2_WEIGHT:
        dims[0] = s->hidden, dims[1] = s->hidden;
        return 2;
      case WICK_DEMO_HEAD_WEIGHT:
        dims[0] = s->outputs, dims[1] = s->hidden;
        return 2;
      default:
        return 0;
    }
}

/* xorshift64*: deterministic, fast, good enough for synthetic data. */
static uint64_t
next_random (uint64_t *state)
{
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545F4914F6CDD1DULL;
}

/* Uniform in [-scale, scale). */
static float
uniform (uint64_t *state, float scale)
{
  double u = (double)(next_random (state) >> 11) / (double)(1ULL << 53);
  return (float)((2.0 * u - 1.0) * scale);
}

static void
fill_uniform (float *data, uint64_t n, uint64_t *state, float scale)
{
  for (uint64_t i = 0; i < n; i++)
    data[i] = uniform (state, scale);
}

static float *
zeroed (uint64_t n)
{
  return calloc (n > 0 ? n : 1, sizeof (float));
}

bool
wick_demo_model_init (WickDemoModel *model, const WickDemoShape *shape, uint64_t seed,
                      WickDemoAllocFunc alloc, WickDemoFreeFunc free_func, void *alloc_data)
{
  memset (model, 0, sizeof *model);
  model->shape = *shape;
  model->rng = seed | 1;
  model->learning_rate = 0.05f;
  model->momentum_rate = 0.9f;
  model->alloc = alloc;
  model->free = free_func;
  model->alloc_data = alloc_data;
  for (int p = 0; p < WICK_DEMO_N_PARAMS; p++)
    {
      uint64_t dims[2];
      uint32_t rank = wick_demo_param_shape (model, p, dims);
      model->n_elements[p] = rank == 2 ? dims[0] * dims[1] : dims[0];
      model->params[p] = alloc (model->n_elements[p] * sizeof (float), alloc_data);
      if (model->params[p] == NULL)
        return false;
      if (wick_demo_param_trainable (p))
        {
          model->momentum[p] = zeroed (model->n_elements[p]);
          model->grads[p] = zeroed (model->n_elements[p]);
        }
    }
  fill_uniform (model->params[WICK_DEMO_EMBEDDING], model->n_elements[WICK_DEMO_EMBEDDING],
                &model->rng, 1.0f);
  fill_uniform (model->params[WICK_DEMO_FC1_WEIGHT], model->n_elements[WICK_DEMO_FC1_WEIGHT],
                &model->rng, sqrtf (6.0f / shape->width));
  fill_uniform (model->params[WICK_DEMO_FC2_WEIGHT], model->n_elements[WICK_DEMO_FC2_WEIGHT],
                &model->rng, sqrtf (6.0f / shape->hidden));
  fill_uniform (model->params[WICK_DEMO_HEAD_WEIGHT], model->n_elements[WICK_DEMO_HEAD_WEIGHT],
                &model->rng, sqrtf (3.0f / shape->hidden));
  model->teacher1 = zeroed ((uint64_t)shape->hidden * shape->width);
  model->teacher2 = zeroed ((uint64_t)shape->outputs * shape->hidden);
  fill_uniform (model->teacher1, (uint64_t)shape->hidden * shape->width, &model->rng,
                sqrtf (6.0f / shape->width));
  fill_uniform (model->teacher2, (uint64_t)shape->outputs * shape->hidden, &model->rng,
                sqrtf (3.0f / shape->hidden));
  uint64_t b = shape->batch;
  model->tokens = calloc (b * shape->bag, sizeof (uint32_t));
  model->input = zeroed (b * shape->width);
  model->h1 = zeroed (b * shape->hidden);
  model->h2 = zeroed (b * shape->hidden);
  model->output = zeroed (b * shape->outputs);
  model->target = zeroed (b * shape->outputs);
  model->d_output = zeroed (b * shape->outputs);
  model->d_h2 = zeroed (b * shape->hidden);
  model->d_h1 = zeroed (b * shape->hidden);
  return model->tokens != NULL && model->input != NULL && model->h1 != NULL;
}

void
wick_demo_model_clear (WickDemoModel *model)
{
  for (int p = 0; p < WICK_DEMO_N_PARAMS; p++)
    {
      if (model->params[p] != NULL)
        model->free (model->params[p], model->alloc_data);
      free (model->momentum[p]);
      free (model->grads[p]);
    }
  free (model->teacher1);
  free (model->teacher2);
  free (model->tokens);
  free (model->input);
  free (model->h1);
  free (model->h2);
  free (model->output);
  free (model->target);
  free (model->d_output);
  free (model->d_h2);
  free (model->d_h1);
  memset (model, 0, sizeof *model);
}

/* out[b, o] = sum_i in[b, i] * w[o, i] (+ bias[o]) */
static void
linear (const float *in, const float *w, const float *bias, float *out, uint32_t batch,
        uint32_t n_in, uint32_t n_out)
{
  for (uint32_t b = 0; b < batch; b++)
    for (uint32_t o = 0; o < n_out; o++)
      {
        const float *row = w + (uint64_t)o * n_in;
        const float *x = in + (uint64_t)b * n_in;
        float sum = bias != NULL ? bias[o] : 0.0f;
        for (uint32_t i = 0; i < n_in; i++)
          sum += x[i] * row[i];
        out[(uint64_t)b * n_out + o] = sum;
      }
}

static void
relu (float *data, uint64_t n)
{
  for (uint64_t i = 0; i < n; i++)
    if (data[i] < 0.0f)
      data[i] = 0.0f;
}

void
wick_demo_model_draw_tokens (const WickDemoModel *model, uint64_t *rng, uint32_t *tokens)
{
  const WickDemoShape *s = &model->shape;
  for (uint64_t i = 0; i < (uint64_t)s->batch * s->bag; i++)
    tokens[i] = (uint32_t)(next_random (rng) % s->vocab);
}

void
wick_demo_model_embed_batch (WickDemoModel *model)
{
  const WickDemoShape *s = &model->shape;
  const float *embedding = model->params[WICK_DEMO_EMBEDDING];
  for (uint32_t b = 0; b < s->batch; b++)
    {
      float *x = model->input + (uint64_t)b * s->width;
      memset (x, 0, s->width * sizeof (float));
      for (uint32_t t = 0; t < s->bag; t++)
        {
          const float *row = embedding + (uint64_t)model->tokens[b * s->bag + t] * s->width;
          for (uint32_t i = 0; i < s->width; i++)
            x[i] += row[i] / (float)s->bag;
        }
    }
  /* target = teacher2 · relu(teacher1 · x) */
  linear (model->input, model->teacher1, NULL, model->h1, s->batch, s->width, s->hidden);
  relu (model->h1, (uint64_t)s->batch * s->hidden);
  linear (model->h1, model->teacher2, NULL, model->target, s->batch, s->hidden, s->outputs);
}

void
wick_demo_model_forward_layer (WickDemoModel *model, int layer)
{
  const WickDemoShape *s = &model->shape;
  switch (layer)
    {
      case 0:
        linear (model->input, model->params[WICK_DEMO_FC1_WEIGHT],
                model->params[WICK_DEMO_FC1_BIAS], model->h1, s->batch, s->width, s->hidden);
        relu (model->h1, (uint64_t)s->batch * s->hidden);
        break;
      case 1:
        linear (model->h1, model->params[WICK_DEMO_FC2_WEIGHT], NULL, model->h2, s->batch,
                s->hidden, s->hidden);
        relu (model->h2, (uint64_t)s->batch * s->hidden);
        break;
      default:
        linear (model->h2, model->params[WICK_DEMO_HEAD_WEIGHT], NULL, model->output, s->batch,
                s->hidden, s->outputs);
        break;
    }
}

double
wick_demo_model_loss (WickDemoModel *model)
{
  const WickDemoShape *s = &model->shape;
  double loss = 0.0;
  uint64_t n = (uint64_t)s->batch * s->outputs;
  for (uint64_t i = 0; i < n; i++)
    {
      double d = (double)model->output[i] - (double)model->target[i];
      loss += d * d;
      model->d_output[i] = (float)(2.0 * d / (double)n);
    }
  return loss / (double)n;
}

/* grad_w[o, i] = sum_b d_out[b, o] * in[b, i]; d_in[b, i] = sum_o d_out[b, o] * w[o, i] */
static void
linear_backward (const float *in, const float *w, const float *d_out, float *grad_w,
                 float *grad_bias, float *d_in, uint32_t batch, uint32_t n_in, uint32_t n_out)
{
  memset (grad_w, 0, (uint64_t)n_out * n_in * sizeof (float));
  if (grad_bias != NULL)
    memset (grad_bias, 0, n_out * sizeof (float));
  if (d_in != NULL)
    memset (d_in, 0, (uint64_t)batch * n_in * sizeof (float));
  for (uint32_t b = 0; b < batch; b++)
    for (uint32_t o = 0; o < n_out; o++)
      {
        float g = d_out[(uint64_t)b * n_out + o];
        if (g == 0.0f)
          continue;
        const float *x = in + (uint64_t)b * n_in;
        float *gw = grad_w + (uint64_t)o * n_in;
        const float *row = w + (uint64_t)o * n_in;
        float *dx = d_in != NULL ? d_in + (uint64_t)b * n_in : NULL;
        for (uint32_t i = 0; i < n_in; i++)
          gw[i] += g * x[i];
        if (dx != NULL)
          for (uint32_t i = 0; i < n_in; i++)
            dx[i] += g * row[i];
        if (grad_bias != NULL)
          grad_bias[o] += g;
      }
}

static void
relu_backward (const float *activation, float *grad, uint64_t n)
{
  for (uint64_t i = 0; i < n; i++)
    if (activation[i] <= 0.0f)
      grad[i] = 0.0f;
}

void
wick_demo_model_backward (WickDemoModel *model)
{
  const WickDemoShape *s = &model->shape;
  linear_backward (model->h2, model->params[WICK_DEMO_HEAD_WEIGHT], model->d_output,
                   model->grads[WICK_DEMO_HEAD_WEIGHT], NULL, model->d_h2, s->batch, s->hidden,
                   s->outputs);
  relu_backward (model->h2, model->d_h2, (uint64_t)s->batch * s->hidden);
  linear_backward (model->h1, model->params[WICK_DEMO_FC2_WEIGHT], model->d_h2,
                   model->grads[WICK_DEMO_FC2_WEIGHT], NULL, model->d_h1, s->batch, s->hidden,
                   s->hidden);
  relu_backward (model->h1, model->d_h1, (uint64_t)s->batch * s->hidden);
  linear_backward (model->input, model->params[WICK_DEMO_FC1_WEIGHT], model->d_h1,
                   model->grads[WICK_DEMO_FC1_WEIGHT], model->grads[WICK_DEMO_FC1_BIAS], NULL,
                   s->batch, s->width, s->hidden);
}

void
wick_demo_model_optimizer_step (WickDemoModel *model)
{
  for (int p = 0; p < WICK_DEMO_N_PARAMS; p++)
    {
      if (!wick_demo_param_trainable (p))
        continue;
      float *w = model->params[p], *m = model->momentum[p];
      const float *g = model->grads[p];
      for (uint64_t i = 0; i < model->n_elements[p]; i++)
        {
          m[i] = model->momentum_rate * m[i] + g[i];
          w[i] -= model->learning_rate * m[i];
        }
    }
}

double
wick_demo_model_grad_norm (const WickDemoModel *model, WickDemoParam param)
{
  if (model->grads[param] == NULL)
    return 0.0;
  double sum = 0.0;
  for (uint64_t i = 0; i < model->n_elements[param]; i++)
    sum += (double)model->grads[param][i] * (double)model->grads[param][i];
  return sqrt (sum);
}

uint64_t
wick_demo_model_activation_bytes (const WickDemoModel *model, int which)
{
  const WickDemoShape *s = &model->shape;
  switch (which)
    {
      case 0:
        return (uint64_t)s->batch * s->width * sizeof (float);
      case 1:
      case 2:
        return (uint64_t)s->batch * s->hidden * sizeof (float);
      default:
        return (uint64_t)s->batch * s->outputs * sizeof (float);
    }
}
