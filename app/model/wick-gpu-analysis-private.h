/* wick-gpu-analysis-private.h — what only the tests call of wick-gpu-analysis.h (the app
 * includes wick-gpu-analysis.h alone). It declares no types: include it after
 * wick-gpu-analysis.h. */
#pragma once

G_BEGIN_DECLS

/* TRUE for the kernels of a communication library: names containing "nccl"
 * or "rccl" in any case (ncclKernel_AllReduce_..., ncclDevKernel_...), as
 * HTA's "nccl" rule, plus RCCL's. gloo runs on the CPU and has no kernels. */
gboolean wick_gpu_is_communication_kernel (const char *name);

/* What a device interval of @kind named @name counts as. */
WickGpuClass wick_gpu_classify (WickDeviceKind kind, const char *name);

G_END_DECLS
