/* weights-test-util.h — helpers shared by the weight store's test suites
 * (backend on host memory, cuda on device memory). */
#pragma once

#include <glib.h>

#include "wick-session-private.h"

/* A fresh temporary directory, removed (with its files) by weights_test_rmdir. */
char *weights_test_tmpdir (void);
void weights_test_rmdir (const char *path);

/* Writes 8-byte little-endian length + header + data bytes. */
void weights_test_write_raw (const char *path, const char *header, const void *data,
                             size_t data_bytes);
/* Writes a prefix declaring header_length, followed by the given bytes. */
void weights_test_write_prefix (const char *path, uint64_t header_length, const char *rest);

/* SHA-256 of bytes, as 64 hex digits (g_free it). */
char *weights_test_sha256 (const void *data, size_t bytes);

/* Deterministic pseudo-random fill. */
void weights_test_fill (void *data, size_t bytes, uint32_t seed);
/* Fills count floats with values exactly representable in bf16. */
void weights_test_fill_bf16_exact_f32 (float *data, size_t count, uint32_t seed);
