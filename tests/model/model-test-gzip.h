/* model-test-gzip.h — gzip members made with zlib, for the model tests that
 * damage or bound compressed input (model-test-gzip.c; those tests link
 * zlib, the others need not). */
#pragma once

#include <glib.h>

/* Appends one gzip member of @data to @out, compressed at @level (1-9) with
 * zlib's memory level @mem_level (1-9). */
void model_test_gzip_append (GByteArray *out, const void *data, gsize length, int level,
                             int mem_level);

/* One gzip member of @data at zlib's defaults (level 6, memory level 8). */
GBytes *model_test_gzip_bytes (const void *data, gsize length);
