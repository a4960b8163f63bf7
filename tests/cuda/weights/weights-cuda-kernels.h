/* weights-cuda-kernels.h — the device side of the weight store's CUDA tests:
 * a matrix-vector product captured into a CUDA graph that reads the weights
 * straight from their (evicted and restored) addresses. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C"
{
#endif

  typedef struct WeightsTestGraph WeightsTestGraph;

  /* Captures y = W x (W rows x cols, row-major f32) on a stream of its own. */
  WeightsTestGraph *weights_test_graph_new (const float *w, const float *x, float *y, int rows,
                                            int cols, char *error, size_t error_size);
  bool weights_test_graph_replay (WeightsTestGraph *graph, char *error, size_t error_size);
  void weights_test_graph_free (WeightsTestGraph *graph);

  /* Adds 1 to every element in place (a kernel writing through the pointer). */
  bool weights_test_increment (float *data, size_t count, char *error, size_t error_size);

  bool weights_test_copy (void *destination, const void *source, size_t bytes, bool to_device,
                          char *error, size_t error_size);
  /* Free and total device memory. */
  bool weights_test_mem_info (size_t *free_bytes, size_t *total_bytes);

#ifdef __cplusplus
}
#endif
