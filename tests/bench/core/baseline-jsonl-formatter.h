/* baseline-jsonl-formatter.h — the formatter before its rewrite (bench only). */
#pragma once

#include "wick-session-internal.h"

typedef struct BaselineJsonlFormatter BaselineJsonlFormatter;
BaselineJsonlFormatter *baseline_jsonl_formatter_new (bool strict);
void baseline_jsonl_formatter_free (BaselineJsonlFormatter *formatter);
void baseline_jsonl_formatter_feed (BaselineJsonlFormatter *formatter, const WickRingRecord *record,
                                    WickLineFunc emit, void *user_data);
void baseline_jsonl_formatter_finish (BaselineJsonlFormatter *formatter, const char *reason_if_none,
                                      WickLineFunc emit, void *user_data);
size_t baseline_ring_record_format (const WickRingRecord *record, char *buffer, size_t size);
