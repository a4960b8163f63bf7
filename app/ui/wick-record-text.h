/* wick-record-text.h — the words and numbers shown for records, shared by the
 * details pane, the tables and tooltips. */
#pragma once

#include "model/wick-compare.h"
#include "model/wick-document.h"
#include "model/wick-gradient-report.h"
#include "model/wick-tracks.h"

G_BEGIN_DECLS

const char *wick_span_kind_name (guint kind);
const char *wick_step_name (guint step);
/* The memory category's name, translated ("?" beyond the five). */
const char *wick_category_name (guint category);
/* A health issue's severity in words, translated (wick_severity_to_string ()
 * is its code, for scripts). */
const char *wick_severity_name (WickSeverity severity);
/* Translated words for a track's kind, a comparison row's kind, a gradient's
 * state, a family's expectation and the coverage verdict (the *_to_string ()
 * functions of the model are their codes, for files and scripts). */
const char *wick_track_kind_name (guint kind);
const char *wick_compare_kind_name (WickCompareKind kind);
const char *wick_gradient_state_name (WickGradientState state);
const char *wick_gradient_expectation_name (WickGradientExpectation expectation);
const char *wick_coverage_verdict_name (WickCoverageVerdict verdict);
/* A family row's verdict (WickGradientFamilyRow.verdict, a code: "ok",
 * "below minimum", ...) in words; an unknown one as it is. */
const char *wick_family_verdict_name (const char *verdict);
/* A track's name as shown (gutter, range summary): the model's, except that a
 * candle-graph trace's memory counters are named device first ("cuda:0
 * tensors", "cuda:0 used"; the model's "memory cuda:0" and "device memory
 * cuda:0 used" ellipsize alike). NULL for a track without a name. */
char *wick_track_display_name (WickTracks *tracks, guint32 track);
/* "[64, 128]" or "[]" */
char *wick_format_shape (WickDocument *document, guint32 offset, guint32 rank);
/* Time relative to the trace's first span, for display. */
guint64 wick_document_origin_ns (WickDocument *document);
/* "Name (type #index)" for a record, for headers and toasts. */
char *wick_record_title (WickDocument *document, WickRecordType type, gint64 index);

G_END_DECLS
