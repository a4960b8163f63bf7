/* wick-gpu-analysis.h — where the GPU time of a PyTorch profiler trace goes.
 *
 * Computed once per document from its track model (the kernels, copies and
 * fills of the device tracks, each linked to the runtime call that launched
 * it; the host's cpu_op slices; the ProfilerStep#N steps) and kept on the
 * document: the Overview, Kernels and Operators pages and
 * `wick-trace gpu --json` read the same numbers. docs/gpu.md defines every
 * figure and says where Wick differs from HolisticTraceAnalysis.
 *
 * The classification of a device interval (wick_gpu_classify) is a small
 * function of its kind and name so that other analyses (the collectives of
 * a multi-rank document) count communication the same way.
 */
#pragma once

#include "wick-document.h"
#include "wick-tracks.h"

G_BEGIN_DECLS

typedef enum
{
  WICK_GPU_NOT_WORK,      /* an annotation or other interval: keeps no engine busy */
  WICK_GPU_COMPUTE,       /* a kernel that is not communication */
  WICK_GPU_COMMUNICATION, /* a collective or point-to-point kernel (NCCL, RCCL) */
  WICK_GPU_MEMORY,        /* a memcpy or memset */
} WickGpuClass;

typedef struct
{
  char *device;      /* "cuda:0" (its device tracks' device) */
  guint64 busy_ns;   /* union of its kernel, memcpy and memset intervals */
  guint64 kernel_ns; /* sums of durations, overlaps counted twice */
  guint64 memcpy_ns;
  guint64 memset_ns;
  guint64 comm_ns; /* communication kernels (part of kernel_ns) */
  guint64 n_kernels;
} WickGpuDevice;

typedef struct
{
  WickStr name;
  guint64 count, total_ns, min_ns, max_ns;
  double mean_ns; /* total / count */
  double share;   /* total / the sum over every kernel */
  gboolean communication;
  WickStr grid, block; /* the first instance's args.grid / args.block as written, 0 when none */
  gint64 registers;    /* its "registers per thread", -1 when none */
} WickGpuKernel;

typedef struct
{
  WickStr name;
  guint64 count;
  guint64 cpu_self_ns;  /* its slices' durations less their direct children's */
  guint64 cpu_total_ns; /* its slices' durations */
  guint64 gpu_ns;       /* kernels, copies and fills launched inside its slices */
  WickStr shapes;       /* the first instance's args "Input Dims" as written, 0 when none */
} WickGpuOperator;

typedef struct
{
  guint32 span; /* the ProfilerStep#N slice */
  WickStr name;
  guint64 start_ns; /* document time (from the trace's origin) */
  guint64 dur_ns;
  guint64 gpu_busy_ns; /* union of GPU work inside [start, start + dur) */
  guint64 idle_ns;     /* dur - busy */
  guint64 compute_ns;  /* busy time with a compute kernel running */
  guint64 comm_ns;     /* busy time with communication and no compute */
  guint64 memcpy_ns;   /* busy time with only copies and fills */
  guint64 cpu_only_ns; /* idle time with a host operator or runtime call running (part of idle) */
  gboolean slow;       /* dur at least 1.25 × the median step's */
  guint64 launch_bound_ns; /* launch-bound stretches inside the window (summed over streams) */
} WickGpuStep;

typedef struct
{
  guint64 flows;                     /* kernels, copies and fills with a launch (each one arrow) */
  guint64 to_kernel;                 /* runtime calls that launched at least one of them */
  guint64 unmatched;                 /* kernels, copies and fills with no launch in the trace */
  gint64 delay_p50_ns, delay_p99_ns; /* launch start to GPU start, nearest rank */
  guint64 short_kernels;             /* kernels shorter than WICK_GPU_SHORT_KERNEL_NS */
  guint64 graph_kernels;             /* kernels launched by a CUDA graph launch */
  guint64 short_kernel_ns;           /* their total time */
} WickGpuLaunches;

#define WICK_GPU_SHORT_KERNEL_NS 10000

/* The idle gaps of one stream (a device track), between its first and last
 * work interval, by cause (docs/gpu.md, "Idle gaps"): the GPU waiting on a
 * launch (host wait), the gap between back-to-back work (kernel wait, below
 * WICK_GPU_KERNEL_WAIT_NS), or other. */
typedef struct
{
  guint32 track;
  guint64 host_wait_ns, kernel_wait_ns, other_ns;
  guint64 n_host_wait; /* launch-bound stretches on it */
} WickGpuStreamIdle;

/* A launch-bound stretch: a host-wait gap of one stream. */
typedef struct
{
  guint64 start_ns, end_ns; /* document time */
  guint32 track;
  guint32 launch;   /* span index of the next interval's launch */
  guint32 op;       /* innermost cpu_op around that launch, G_MAXUINT32 when none */
} WickGpuStretch;

#define WICK_GPU_KERNEL_WAIT_NS 10000
#define WICK_GPU_LAUNCH_SLACK_NS 5000
#define WICK_GPU_LONGEST_STRETCHES 10

typedef struct
{
  GArray *devices;   /* WickGpuDevice, by device name */
  GArray *kernels;   /* WickGpuKernel, by total descending, then name */
  GArray *operators; /* WickGpuOperator, by GPU time descending, then CPU total, then name */
  GArray *steps;     /* WickGpuStep, by start */
  WickGpuLaunches launches;
  GArray *stream_idle;  /* WickGpuStreamIdle, by track */
  GArray *longest;      /* WickGpuStretch, the longest (at most WICK_GPU_LONGEST_STRETCHES) */
  guint64 n_stretches;  /* launch-bound stretches over every stream */
  guint64 stretch_ns;   /* their total length */
  guint64 gpu_span_ns;  /* first work start to last work end (the share's denominator) */
  guint64 gpu_total_ns; /* sum of kernel durations (the shares' denominator) */
  /* per device slice: its row in kernels, -1 when it is no kernel */
  gint32 *kernel_of_device;
  guint n_device;
  /* per span: its row in operators, -1 when it is no operator */
  gint32 *operator_of_span;
  guint n_spans;
  gboolean has_gpu; /* any kernel, memcpy or memset */
  struct _WickGpuUnions *unions; /* per device: what wick_gpu_analysis_range() measures */
} WickGpuAnalysis;

/* GPU time of one device inside a time range: lengths of unions clipped
 * to the range, so overlaps count once. */
typedef struct
{
  guint64 busy_ns;   /* kernels, copies and fills */
  guint64 kernel_ns; /* kernels */
  guint64 memcpy_ns; /* copies and fills */
  guint64 comm_ns;   /* communication kernels */
} WickGpuRangeTime;

/* Per device of @analysis->devices (in that order), its GPU time inside
 * [@start_ns, @end_ns) (document time) into @out (devices->len entries).
 * O(devices × log intervals): cheap enough for every frame of a drag. */
void wick_gpu_analysis_range (const WickGpuAnalysis *analysis, guint64 start_ns, guint64 end_ns,
                              WickGpuRangeTime *out);

/* The analysis of @document's current track model, computed on first call
 * and kept until the model changes (a live document's rebuild). */
const WickGpuAnalysis *wick_gpu_analysis_get (WickDocument *document);

/* The analysis as one JSON object (docs/gpu.md has the shape); times of
 * steps as the file's ns (the document's origin added back). */
char *wick_gpu_analysis_to_json (const WickGpuAnalysis *analysis, WickDocument *document);

G_END_DECLS
