/* wick-demo-model.h — the demo's model: a bag-of-tokens regressor trained in C.
 *
 * A frozen embedding table (vocabulary × width) is averaged over a bag of
 * tokens, then a trunk (two ReLU layers) and a head (a linear layer) predict a
 * target vector. Targets come from a fixed random teacher network applied to
 * the same embeddings, so the task is learnable and the loss goes down. The
 * trunk and head train by SGD with momentum; the embedding is frozen (it has
 * no gradient), which is the demo's inactive gradient family.
 *
 * Every parameter lives in its own page-aligned buffer from the allocator the
 * caller gives (the weight store's, so modules can be evicted in place).
 * Forward, backward and the optimizer step are separate so the caller can
 * record each as a span; they touch only the buffers listed in the header.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WICK_DEMO_N_PARAMS 5

typedef enum
{
  WICK_DEMO_EMBEDDING,   /* embedding.weight  [vocab, width]  frozen */
  WICK_DEMO_FC1_WEIGHT,  /* trunk.fc1.weight  [hidden, width] */
  WICK_DEMO_FC1_BIAS,    /* trunk.fc1.bias    [hidden] */
  WICK_DEMO_FC2_WEIGHT,  /* trunk.fc2.weight  [hidden, hidden] */
  WICK_DEMO_HEAD_WEIGHT, /* head.weight       [outputs, hidden] */
} WickDemoParam;

typedef struct
{
  uint32_t vocab, width, hidden, outputs, batch, bag;
} WickDemoShape;

typedef void *(*WickDemoAllocFunc) (size_t bytes, void *user_data);
typedef void (*WickDemoFreeFunc) (void *data, void *user_data);

typedef struct
{
  WickDemoShape shape;
  /* parameters, momentum buffers and gradients (no gradient for the embedding) */
  float *params[WICK_DEMO_N_PARAMS];
  float *momentum[WICK_DEMO_N_PARAMS];
  float *grads[WICK_DEMO_N_PARAMS];
  uint64_t n_elements[WICK_DEMO_N_PARAMS];
  /* teacher (fixed) */
  float *teacher1, *teacher2;
  /* a batch and its activations */
  uint32_t *tokens;
  float *input, *h1, *h2, *output, *target;
  float *d_output, *d_h2, *d_h1;
  uint64_t rng;
  float learning_rate, momentum_rate;
  WickDemoAllocFunc alloc;
  WickDemoFreeFunc free;
  void *alloc_data;
} WickDemoModel;

const char *wick_demo_param_name (WickDemoParam param);
/* Module of a parameter ("embedding", "trunk", "head") and its name inside it. */
const char *wick_demo_param_module (WickDemoParam param);
const char *wick_demo_param_local_name (WickDemoParam param);
/* Shape of a parameter: rank and dims (at most 2). */
uint32_t wick_demo_param_shape (const WickDemoModel *model, WickDemoParam param, uint64_t dims[2]);
bool wick_demo_param_trainable (WickDemoParam param);

/* Parameters come from @alloc (the weight store's host allocator); everything
 * else from malloc. Deterministic for a seed. */
bool wick_demo_model_init (WickDemoModel *model, const WickDemoShape *shape, uint64_t seed,
                           WickDemoAllocFunc alloc, WickDemoFreeFunc free_func, void *alloc_data);
void wick_demo_model_clear (WickDemoModel *model);

/* The tokens of the next batch (batch × bag) from rng: touches no parameter,
 * so a data-loader thread can draw them while a step runs. */
void wick_demo_model_draw_tokens (const WickDemoModel *model, uint64_t *rng, uint32_t *tokens);
/* input = mean embedding of model->tokens, target from the teacher. */
void wick_demo_model_embed_batch (WickDemoModel *model);
/* Forward: the layers in order (0: fc1+relu, 1: fc2+relu, 2: head), then the
 * loss (mean squared error, which also seeds backward). */
#define WICK_DEMO_N_LAYERS 3
void wick_demo_model_forward_layer (WickDemoModel *model, int layer);
double wick_demo_model_loss (WickDemoModel *model);
void wick_demo_model_backward (WickDemoModel *model);
void wick_demo_model_optimizer_step (WickDemoModel *model);
/* L2 norm of a parameter's gradient (after backward). */
double wick_demo_model_grad_norm (const WickDemoModel *model, WickDemoParam param);

/* Bytes of the activations of one batch, for memory records. */
uint64_t wick_demo_model_activation_bytes (const WickDemoModel *model, int which);
