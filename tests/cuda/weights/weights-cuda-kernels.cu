/* weights-cuda-kernels.cu — see weights-cuda-kernels.h. */
#include "weights-cuda-kernels.h"

#include <cuda_runtime.h>
#include <stdio.h>

struct WeightsTestGraph
{
  cudaStream_t stream;
  cudaGraph_t graph;
  cudaGraphExec_t exec;
};

static bool
check (cudaError_t result, const char *what, char *error, size_t error_size)
{
  if (result == cudaSuccess)
    return true;
  snprintf (error, error_size, "%s: %s", what, cudaGetErrorString (result));
  return false;
}

__global__ void
matvec (const float *w, const float *x, float *y, int rows, int cols)
{
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows)
    return;
  float sum = 0.0f;
  for (int c = 0; c < cols; c++)
    sum += w[(size_t) row * cols + c] * x[c];
  y[row] = sum;
}

__global__ void
increment (float *data, size_t count)
{
  size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count)
    data[i] += 1.0f;
}

extern "C" WeightsTestGraph *
weights_test_graph_new (const float *w, const float *x, float *y, int rows, int cols, char *error,
                        size_t error_size)
{
  WeightsTestGraph *graph = new WeightsTestGraph ();
  if (!check (cudaStreamCreateWithFlags (&graph->stream, cudaStreamNonBlocking),
              "cudaStreamCreate", error, error_size)
      || !check (cudaStreamBeginCapture (graph->stream, cudaStreamCaptureModeThreadLocal),
                 "cudaStreamBeginCapture", error, error_size))
    {
      delete graph;
      return NULL;
    }
  matvec<<<(rows + 127) / 128, 128, 0, graph->stream>>> (w, x, y, rows, cols);
  if (!check (cudaStreamEndCapture (graph->stream, &graph->graph), "cudaStreamEndCapture", error,
              error_size)
      || !check (cudaGraphInstantiate (&graph->exec, graph->graph, 0), "cudaGraphInstantiate",
                 error, error_size))
    {
      delete graph;
      return NULL;
    }
  return graph;
}

extern "C" bool
weights_test_graph_replay (WeightsTestGraph *graph, char *error, size_t error_size)
{
  return check (cudaGraphLaunch (graph->exec, graph->stream), "cudaGraphLaunch", error, error_size)
         && check (cudaStreamSynchronize (graph->stream), "cudaStreamSynchronize", error,
                   error_size);
}

extern "C" void
weights_test_graph_free (WeightsTestGraph *graph)
{
  if (graph == NULL)
    return;
  cudaGraphExecDestroy (graph->exec);
  cudaGraphDestroy (graph->graph);
  cudaStreamDestroy (graph->stream);
  delete graph;
}

extern "C" bool
weights_test_increment (float *data, size_t count, char *error, size_t error_size)
{
  increment<<<(unsigned) ((count + 255) / 256), 256>>> (data, count);
  return check (cudaGetLastError (), "increment launch", error, error_size)
         && check (cudaDeviceSynchronize (), "cudaDeviceSynchronize", error, error_size);
}

extern "C" bool
weights_test_copy (void *destination, const void *source, size_t bytes, bool to_device,
                   char *error, size_t error_size)
{
  return check (cudaMemcpy (destination, source, bytes,
                            to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost),
                "cudaMemcpy", error, error_size);
}

extern "C" bool
weights_test_mem_info (size_t *free_bytes, size_t *total_bytes)
{
  return cudaMemGetInfo (free_bytes, total_bytes) == cudaSuccess;
}
