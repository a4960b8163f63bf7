/* compare-workload.h — synthetic training runs with known answers, for the
 * comparison test and benchmark: a root span, N train_step spans each with a
 * forward (matmul, relu, matmul, softmax) and a backward (matmul_grad,
 * relu_grad, matmul_grad) of op spans with op records, log-normal noise per
 * occurrence and per step, and optionally one op made slower, softmax
 * removed or another precision in the comparison identity. */
#pragma once

#include <math.h>
#include <string.h>

#include "model-test-util.h"

typedef struct
{
  guint64 seed;
  guint n_steps;
  const char *slow_name; /* op span made slower, NULL for none */
  double slow_factor;
  const char *precision;
  gboolean without_softmax;
  double noise; /* sigma of the per-occurrence log-normal noise */
  guint n_extra_ops; /* ops op000, op001, ... once a step after the backward: many names */
} Workload;

typedef struct
{
  guint64 state;
} Gen;

static inline double
gen_uniform (Gen *g)
{
  g->state = g->state * G_GUINT64_CONSTANT (6364136223846793005) + G_GUINT64_CONSTANT (1442695040888963407);
  return ((g->state >> 11) + 0.5) / 9007199254740992.0;
}

static inline double
gen_normal (Gen *g)
{
  double u1 = gen_uniform (g), u2 = gen_uniform (g);
  return sqrt (-2 * log (u1)) * cos (2 * G_PI * u2);
}

typedef struct
{
  GString *text;
  guint next_id;
  guint64 t;
  Gen gen;
  const Workload *w;
} Builder;

static inline void
feed (Builder *b, const char *line)
{
  g_string_append (b->text, line);
  g_string_append_c (b->text, '\n');
}

static inline guint
span_start (Builder *b, const char *name, guint parent, const char *kind, const char *step)
{
  guint id = ++b->next_id;
  g_autofree char *line = g_strdup_printf (
    "{\"kind\":\"span_start\",\"id\":\"s%u\",\"parent_id\":\"s%u\",\"name\":\"%s\","
    "\"start_ns\":%" G_GUINT64_FORMAT ",\"span_kind\":\"%s\"%s%s%s}",
    id, parent, name, b->t, kind, step ? ",\"step\":\"" : "", step ? step : "", step ? "\"" : "");
  feed (b, line);
  return id;
}

static inline void
span_end (Builder *b, guint id, guint64 start)
{
  g_autofree char *line = g_strdup_printf (
    "{\"kind\":\"span_end\",\"id\":\"s%u\",\"duration_ns\":%" G_GUINT64_FORMAT "}", id,
    b->t - start);
  feed (b, line);
}

/* An op span of about @base_ns, noisy, with its op record. */
static inline void
op (Builder *b, const char *name, guint parent, double base_ns, double step_factor)
{
  guint64 start = b->t;
  double factor = b->w->slow_name && strcmp (name, b->w->slow_name) == 0 ? b->w->slow_factor : 1;
  guint64 duration = (guint64) (base_ns * factor * step_factor * exp (b->w->noise * gen_normal (&b->gen)));
  guint id = span_start (b, name, parent, "op", NULL);
  g_autofree char *record = NULL;

  /* an activation of 1 MiB for the op's lifetime: memory to compare */
  {
    g_autofree char *alloc = g_strdup_printf (
      "{\"kind\":\"memory\",\"timestamp_ns\":%" G_GUINT64_FORMAT ",\"storage_id\":\"st%u\","
      "\"tensor_id\":\"t%u\",\"span_id\":\"s%u\",\"device\":\"cpu\",\"bytes\":1048576,"
      "\"action\":\"alloc\",\"shape\":[262144],\"dtype\":\"f32\",\"category\":\"activation\"}",
      b->t, id, id, id);
    feed (b, alloc);
  }
  b->t += duration;
  {
    g_autofree char *release = g_strdup_printf (
      "{\"kind\":\"memory\",\"timestamp_ns\":%" G_GUINT64_FORMAT ",\"storage_id\":\"st%u\","
      "\"tensor_id\":\"t%u\",\"span_id\":\"s%u\",\"device\":\"cpu\",\"bytes\":1048576,"
      "\"action\":\"free\",\"shape\":[262144],\"dtype\":\"f32\",\"category\":\"activation\"}",
      b->t, id, id, id);
    record = g_strdup_printf ("{\"kind\":\"op\",\"span_id\":\"s%u\",\"op_name\":\"%s\",\"shape\":[64],"
                            "\"dtype\":\"f32\",\"device\":\"cpu\",\"duration_ns\":%" G_GUINT64_FORMAT
                            ",\"timestamp_ns\":%" G_GUINT64_FORMAT ",\"input_dense_bytes\":256}",
                            id, name, duration, start);
    feed (b, record);
    feed (b, release);
  }
  b->t += 100;
  span_end (b, id, start);
}

/* The run as candle-graph JSONL text. */
static inline char *
make_run_text (const Workload *w)
{
  Builder b = { g_string_new (NULL), 1, 0, { w->seed * 2654435761u + 17 }, w };
  g_autofree char *identity = g_strdup_printf (
    "\"comparison_identity\":{\"workload_id\":\"mlp\",\"model_id\":\"m\",\"config_id\":\"c\","
    "\"data_id\":\"d\",\"seed_policy\":\"fixed\",\"physical_batch\":64,\"accumulation_steps\":1,"
    "\"precision\":\"%s\",\"device_state\":\"idle\"},\"tags\":{}",
    w->precision ? w->precision : "bf16");
  g_autofree char *meta = meta_with ("\"tags\":{}", identity);
  g_autofree char *end = NULL;
  g_autofree char *terminal = NULL;

  feed (&b, meta);
  feed (&b, "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"demo\",\"start_ns\":0,"
            "\"span_kind\":\"function\",\"measured\":true}");
  b.t = 1000;
  for (guint k = 0; k < w->n_steps; k++)
    {
      double step_factor = exp (0.02 * gen_normal (&b.gen));
      guint64 s0 = b.t, f0, k0;
      guint step = span_start (&b, "train_step", 1, "function", NULL), fwd, bwd;

      b.t += 200;
      f0 = b.t;
      fwd = span_start (&b, "forward", step, "function", "forward");
      op (&b, "matmul", fwd, 40000, step_factor);
      op (&b, "relu", fwd, 8000, step_factor);
      op (&b, "matmul", fwd, 40000, step_factor);
      if (!w->without_softmax)
        op (&b, "softmax", fwd, 12000, step_factor);
      span_end (&b, fwd, f0);
      k0 = b.t;
      bwd = span_start (&b, "backward", step, "function", "backward");
      op (&b, "matmul_grad", bwd, 80000, step_factor);
      op (&b, "relu_grad", bwd, 9000, step_factor);
      op (&b, "matmul_grad", bwd, 80000, step_factor);
      span_end (&b, bwd, k0);
      for (guint x = 0; x < w->n_extra_ops; x++)
        {
          char name[16];
          g_snprintf (name, sizeof name, "op%03u", x);
          op (&b, name, step, 3000 + 40 * (x % 50), step_factor);
        }
      b.t += 300;
      span_end (&b, step, s0);
    }
  end = g_strdup_printf ("{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":%" G_GUINT64_FORMAT "}",
                         b.t);
  feed (&b, end);
  terminal = g_strdup_printf ("{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":%"
                              G_GUINT64_FORMAT "}", b.t);
  feed (&b, terminal);
  return g_string_free (b.text, FALSE);
}

static inline WickDocument *
make_run (const Workload *w)
{
  g_autofree char *text = make_run_text (w);
  WickDocument *doc = wick_document_new ();
  g_autoptr (GError) error = NULL;
  char *line = text, *nl;

  while ((nl = strchr (line, '\n')) != NULL)
    {
      g_assert_true (wick_document_feed_line (doc, line, nl - line, &error));
      line = nl + 1;
    }
  g_assert_true (wick_document_finish (doc, &error));
  g_assert_no_error (error);
  g_assert_true (wick_document_get_structurally_valid (doc));
  return doc;
}

