/* wick-gpu-graphs.h — the CUDA graphs of a profiler trace: which graph each
 * kernel of a graph launch belongs to, which replay, which node, and the Wick
 * stage whose graph it is.
 *
 * Kineto writes no graph id for torch 2.x's `cudaGraphLaunch` (newer CUPTI
 * adds `graph id` / `graph node id` args to the kernels; where they are, they
 * name the graph). Without them a graph is what a replay runs: the kernels of
 * one graph launch (WICK_DEVICE_FLAG_GRAPH, launched by it through their
 * correlation id), in start order, and two replays of the same kernel names
 * in the same order are the same graph. A kernel's node is its position in
 * its replay (0-based; `graph node id` is in its args where written).
 *
 * A Wick stage: wick.torch's Stage replays its graph inside
 * `record_function("wick stage: NAME")` while the torch profiler records
 * (python/wick/_torch_stage.py), so a graph launch nested in a host slice
 * named "wick stage: NAME" is stage NAME's, and so are its graph's kernels.
 * The stage's capture is the `stage capture: NAME` span of Wick's own trace
 * (docs/stages.md); the profiler trace has only its replays.
 *
 * Built once per document version in linear time plus a sort of the graph
 * kernels; not thread-safe.
 */
#pragma once

#include "wick-tracks.h"

G_BEGIN_DECLS

#define WICK_GPU_STAGE_PREFIX "wick stage: "

typedef struct
{
  guint n_nodes;      /* kernels, copies and fills of one replay */
  guint n_replays;    /* graph launches that ran it */
  guint64 gpu_ns;     /* sum of its intervals' durations over every replay */
  gint64 graph_id;    /* the kernels' `graph id` arg; -1 when not written */
  const char *stage;  /* the Wick stage whose graph it is; NULL when none */
  guint32 first_launch; /* span index of its first graph launch */
} WickGpuGraph;

typedef struct
{
  guint32 graph;  /* index into wick_gpu_graphs_get(); G_MAXUINT32 when not a graph kernel */
  guint32 replay; /* 0-based: which of the graph's replays */
  guint32 node;   /* 0-based position in its replay */
} WickGpuGraphNode;

typedef struct _WickGpuGraphs WickGpuGraphs;

WickGpuGraphs *wick_gpu_graphs_new (WickDocument *document);
void wick_gpu_graphs_free (WickGpuGraphs *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickGpuGraphs, wick_gpu_graphs_free)

/* Graphs by first launch. */
const WickGpuGraph *wick_gpu_graphs_get (WickGpuGraphs *self, guint *n);
/* Where device slice @device (wick_tracks_get_device_slices()) sits; FALSE
 * (and @node->graph G_MAXUINT32) when it is not a graph kernel. */
gboolean wick_gpu_graphs_node (WickGpuGraphs *self, guint32 device, WickGpuGraphNode *node);
/* ---- torch.compile ------------------------------------------------------- */

/* What a torch.compile trace's slices say about compiled code, by name:
 * Dynamo's frame ("Torch-Compiled Region: 0/0", a cpu_op around the compiled
 * call), AOTAutograd's function (CompiledFunction, CompiledFunctionBackward
 * and the autograd engine's "evaluate_function: CompiledFunctionBackward"),
 * Inductor's graph call ("## Call CompiledFxGraph HASH ##", a user_annotation
 * and its gpu_user_annotation over the graph's kernels) and Dynamo's guard
 * check ("TorchDynamo Cache Lookup"). The timeline outlines them. */
typedef enum
{
  WICK_COMPILED_NONE,
  WICK_COMPILED_REGION,
  WICK_COMPILED_FUNCTION,
  WICK_COMPILED_GRAPH_CALL,
  WICK_COMPILED_GUARD,
} WickCompiledKind;

WickCompiledKind wick_gpu_compiled_kind (const char *name);
/* A kernel Inductor generated with Triton: named "triton_{poi,red,per,tem}_..."
 * in the file, and kept so (Wick never demangles or shortens a name). */
gboolean wick_gpu_is_triton_kernel (const char *name);

G_END_DECLS
