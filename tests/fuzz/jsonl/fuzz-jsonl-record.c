/* fuzz-jsonl-record.c — libFuzzer target for the JSONL trace reader.
 *
 * The input is a trace file: its lines are fed to a document (in extension
 * mode when the first byte is odd), which is finished and analysed; the
 * derived data the views use are built. Each decodable line is also written
 * in candle-graph's layout and decoded again, which must succeed and write
 * the same bytes (the writer and reader agree). */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "wick-document.h"
#include "wick-gradient-report.h"
#include "wick-json-scanner.h"
#include "wick-memory-series.h"
#include "wick-span-costs.h"
#include "wick-trace-record.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
round_trip (WickTraceDecoder *decoder, WickTraceDecoder *again, const char *line, gsize len)
{
  g_autoptr (GString) cause = g_string_new (NULL);
  g_autoptr (GString) first = g_string_new (NULL);
  g_autoptr (GString) second = g_string_new (NULL);
  WickRecordKind kind, kind2;

  if (!g_utf8_validate_len (line, len, NULL))
    return;
  wick_rust_trim (&line, &len);
  if (len == 0 || !wick_trace_decoder_decode (decoder, line, len, &kind, cause))
    return;
  if (kind == WICK_KIND_EXTENSION)
    return;
  wick_trace_decoder_write (decoder, kind, first);
  if (!wick_trace_decoder_decode (again, first->str, first->len, &kind2, cause))
    g_error ("rewritten record does not decode: %s\n%s", cause->str, first->str);
  g_assert_cmpint (kind, ==, kind2);
  wick_trace_decoder_write (again, kind2, second);
  g_assert_cmpstr (first->str, ==, second->str);
}

static void
derive (WickDocument *doc)
{
  g_autoptr (WickSpanIndex) index = wick_span_index_new (doc);
  g_autoptr (GArray) costs = wick_span_costs_by_name (doc, index);
  g_autoptr (GPtrArray) series = wick_memory_series_build (doc);
  g_autoptr (GPtrArray) device = wick_device_memory_series_build (doc);
  g_autoptr (WickGradientReport) report = wick_gradient_report_new (doc);

  g_assert_cmpuint (costs->len + series->len + device->len + report->entries->len, <, G_MAXUINT);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr (WickDocument) doc = wick_document_new_with_extensions (size > 0 && (data[0] & 1));
  g_autoptr (WickTraceDecoder) decoder = wick_trace_decoder_new (size > 0 && (data[0] & 2));
  g_autoptr (WickTraceDecoder) again = wick_trace_decoder_new (FALSE);
  const char *p = (const char *)data;
  const char *end = p + size;
  gboolean reading = TRUE;

  while (p < end)
    {
      const char *nl = memchr (p, '\n', (size_t)(end - p));
      const char *line_end = nl ? nl : end;
      gsize len = (gsize)(line_end - p);

      if (reading)
        reading = wick_document_feed_line (doc, p, len, NULL);
      round_trip (decoder, again, p, len);
      p = nl ? nl + 1 : end;
    }
  if (!wick_document_finish (doc, NULL))
    wick_document_analyze (doc);
  derive (doc);
  return 0;
}
