/* wick-demo-loader.c — the data-loader thread (see the header). */
#include "config.h"

#include "wick-demo-loader.h"

#include "wick-demo-recording.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct WickDemoLoader
{
  WickSession *session;
  const WickDemoModel *model;
  uint64_t rng;
  size_t n_tokens;
  uint32_t *staging; /* the loader's batch in preparation */
  uint32_t *ready;   /* the batch handed over */
  bool has_ready;
  bool stop;
  uint64_t batches;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  pthread_t thread;
};

static void
record_collate (WickDemoLoader *loader, WickSpanId span, uint64_t start)
{
  uint64_t shape[1] = { loader->n_tokens };
  char output[64];
  snprintf (output, sizeof output, "tokens#%llu", (unsigned long long)loader->batches + 1);
  WickOpRecord op = {
    .span = span,
    .op_name = "collate_tokens",
    .inputs = NULL,
    .n_inputs = 0,
    .output = output,
    .shape = shape,
    .rank = 1,
    .dtype = "u32",
    .device = "cpu",
    .duration_ns = wick_session_now_ns (loader->session) - start,
    .timestamp_ns = start > 0 ? start : 1,
    .input_dense_bytes = 0,
    .has_output_dense_bytes = true,
    .output_dense_bytes = loader->n_tokens * sizeof (uint32_t),
  };
  WickError error;
  wick_demo_count_records (1);
  if (!wick_session_record_op (loader->session, &op, &error)
      && strstr (error.message, "dropped") == NULL)
    fprintf (stderr, "wick-demo: recording the loader's op: %s\n", error.message);
}

static void *
loader_thread (void *data)
{
  WickDemoLoader *loader = data;
  pthread_setname_np (pthread_self (), "data_loader");
  wick_thread_set_name ("data_loader");
  WickSession *session = loader->session;
  /* this thread's own loop: its handle and its names, once (the spans are
   * written inline, wick/wick-thread-handle.h) */
  WickThreadHandle *thread = wick_thread_handle_get (session);
  WickString load_batch = wick_intern (session, "load_batch");
  WickString sample_tokens = wick_intern (session, "sample_tokens");
  WickString collate_name = wick_intern (session, "collate");
  for (;;)
    {
      wick_demo_count_records (4); /* load_batch and sample_tokens, begun and ended */
      WickSpanId batch
        = wick_span_begin_on (thread, load_batch, WICK_SPAN_FUNCTION, WICK_STEP_NONE);
      WickSpanId sample
        = wick_span_begin_on (thread, sample_tokens, WICK_SPAN_FUNCTION, WICK_STEP_NONE);
      wick_demo_model_draw_tokens (loader->model, &loader->rng, loader->staging);
      wick_span_end_on (thread, sample);
      wick_span_end_on (thread, batch);
      /* idle (not recorded) until the trainer took the previous batch */
      pthread_mutex_lock (&loader->lock);
      while (loader->has_ready && !loader->stop)
        pthread_cond_wait (&loader->changed, &loader->lock);
      if (loader->stop)
        {
          pthread_mutex_unlock (&loader->lock);
          break;
        }
      wick_demo_count_records (2);
      WickSpanId collate
        = wick_span_begin_on (thread, collate_name, WICK_SPAN_FUNCTION, WICK_STEP_NONE);
      uint64_t start = wick_session_now_ns (session);
      memcpy (loader->ready, loader->staging, loader->n_tokens * sizeof (uint32_t));
      loader->has_ready = true;
      pthread_cond_broadcast (&loader->changed);
      pthread_mutex_unlock (&loader->lock);
      record_collate (loader, collate, start);
      wick_span_end_on (thread, collate);
      loader->batches++;
    }
  return NULL;
}

WickDemoLoader *
wick_demo_loader_start (WickSession *session, WickDemoModel *model, WickError *error)
{
  WickDemoLoader *loader = calloc (1, sizeof *loader);
  if (loader == NULL)
    {
      snprintf (error->message, sizeof error->message, "out of memory for the data loader");
      return NULL;
    }
  loader->session = session;
  loader->model = model;
  loader->rng = model->rng;
  loader->n_tokens = (size_t)model->shape.batch * model->shape.bag;
  loader->staging = calloc (loader->n_tokens, sizeof (uint32_t));
  loader->ready = calloc (loader->n_tokens, sizeof (uint32_t));
  pthread_mutex_init (&loader->lock, NULL);
  pthread_cond_init (&loader->changed, NULL);
  int status = loader->staging && loader->ready
                 ? pthread_create (&loader->thread, NULL, loader_thread, loader)
                 : -1;
  if (status != 0)
    {
      snprintf (error->message, sizeof error->message, "cannot start the data loader thread: %s",
                status > 0 ? strerror (status) : "out of memory");
      free (loader->staging);
      free (loader->ready);
      pthread_mutex_destroy (&loader->lock);
      pthread_cond_destroy (&loader->changed);
      free (loader);
      return NULL;
    }
  return loader;
}

bool
wick_demo_loader_take (WickDemoLoader *loader, WickDemoModel *model)
{
  pthread_mutex_lock (&loader->lock);
  WickSpanId wait = 0;
  if (!loader->has_ready && !loader->stop)
    wait = wick_demo_span_begin (loader->session, "wait_for_batch", WICK_SPAN_FUNCTION,
                                 WICK_STEP_NONE);
  while (!loader->has_ready && !loader->stop)
    pthread_cond_wait (&loader->changed, &loader->lock);
  bool ok = loader->has_ready;
  if (ok)
    {
      memcpy (model->tokens, loader->ready, loader->n_tokens * sizeof (uint32_t));
      loader->has_ready = false;
      pthread_cond_broadcast (&loader->changed);
    }
  pthread_mutex_unlock (&loader->lock);
  if (wait != 0)
    wick_demo_span_end (loader->session, wait);
  return ok;
}

void
wick_demo_loader_stop (WickDemoLoader *loader)
{
  if (loader == NULL)
    return;
  pthread_mutex_lock (&loader->lock);
  loader->stop = true;
  pthread_cond_broadcast (&loader->changed);
  pthread_mutex_unlock (&loader->lock);
  pthread_join (loader->thread, NULL);
  pthread_mutex_destroy (&loader->lock);
  pthread_cond_destroy (&loader->changed);
  free (loader->staging);
  free (loader->ready);
  free (loader);
}
