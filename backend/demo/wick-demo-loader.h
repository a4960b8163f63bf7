/* wick-demo-loader.h — wick-demo's data-loader thread.
 *
 * A second recording thread, named "data_loader" (wick_thread_set_name): it
 * draws the tokens of the next batch under its own spans (load_batch >
 * sample_tokens, collate) while the main thread trains on the current one,
 * and hands them over through a one-batch queue. It draws with the model's
 * random state in batch order and touches no parameter, so the batches — and
 * the training, evictions and restores included — are bit-exact the same as
 * when the main thread drew them itself.
 */
#pragma once

#include <wick/wick.h>

#include "wick-demo-model.h"

typedef struct WickDemoLoader WickDemoLoader;

/* Takes over model->rng (the main thread must not draw from it any more). */
WickDemoLoader *wick_demo_loader_start (WickSession *session, WickDemoModel *model,
                                        WickError *error);
/* Waits for the next batch and copies its tokens into model->tokens; records
 * a "wait_for_batch" span when it had to wait. False once stopped. */
bool wick_demo_loader_take (WickDemoLoader *loader, WickDemoModel *model);
/* Stops and joins the thread (it ends its open spans first). NULL is ignored. */
void wick_demo_loader_stop (WickDemoLoader *loader);
