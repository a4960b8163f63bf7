/* wick-demo-recording.h — what wick-demo records about its model.
 *
 * Wraps the model's phases (data, forward, backward, optimizer) in spans and
 * records around them: ops with shapes and durations, tensors by memory
 * category, logical memory alloc/free by (device "cpu", storage), tensor stats
 * of the loss input, and host memory samples (device_memory on device "cpu":
 * the process's resident set from /proc/self/statm and the machine's memory
 * as capacity — host RSS, not a GPU's memory; the meta's tags say so).
 *
 * Every record the demo asks libwick for (a span's begin and its end count
 * one each) is counted (wick_demo_get_records): --flood paces on the count
 * and reports it, so that a reader can check it lost nothing.
 */
#pragma once

#include <wick/wick.h>

#include "wick-demo-loader.h"
#include "wick-demo-model.h"

typedef struct
{
  WickSession *session;
  WickDemoModel *model;
  uint64_t step;
  WickDemoLoader *loader; /* NULL: the data span draws the batch itself */
  /* --flood: the same records without the model's arithmetic (embedding,
   * layers, backward, optimizer): the step's records at the recording's own
   * speed */
  bool skip_compute;
} WickDemoRecorder;

/* Counts @n records asked of libwick (any thread). */
void wick_demo_count_records (uint64_t n);
/* The records counted so far. */
uint64_t wick_demo_get_records (void);

/* wick_span_begin_step / wick_span_end (wick_span_begin for WICK_STEP_NONE),
 * each counted as one record. */
WickSpanId wick_demo_span_begin (WickSession *session, const char *name, WickSpanKind kind,
                                 WickStep step);
void wick_demo_span_end (WickSession *session, WickSpanId span);

/* Parameters and optimizer state: tensors and allocations, in a "setup" span. */
void wick_demo_record_setup (WickDemoRecorder *recorder);
/* Frees what setup allocated, in a "teardown" span. */
void wick_demo_record_teardown (WickDemoRecorder *recorder);

/* One training step in the current span; returns the loss. @gradients (may be
 * NULL) receives each parameter's gradient after backward. */
double wick_demo_record_step (WickDemoRecorder *recorder,
                              WickParameterGradient gradients[WICK_DEMO_N_PARAMS]);

/* A device_memory sample of the host (RSS, capacity). */
void wick_demo_record_host_memory (WickSession *session);
