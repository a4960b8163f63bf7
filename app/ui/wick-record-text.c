/* wick-record-text.c — see wick-record-text.h. */
#include "wick-record-text.h"

#include <glib/gi18n.h>
#include <string.h>

#include "wick-palette.h"

char *
wick_track_display_name (WickTracks *tracks, guint32 track)
{
  guint n;
  const WickTrack *t = wick_tracks_get_tracks (tracks, &n);
  g_return_val_if_fail (track < n, NULL);
  const char *name = wick_document_str (wick_tracks_get_document (tracks), t[track].name);
  if (name == NULL || *name == '\0')
    return NULL;
  if (t[track].kind == WICK_TRACK_COUNTER
      && wick_tracks_get_format (tracks) == WICK_TRACE_FORMAT_CANDLE_GRAPH)
    {
      if (g_str_has_prefix (name, "device memory "))
        return g_strdup (name + strlen ("device memory "));
      if (g_str_has_prefix (name, "memory "))
        /* Translators: a candle-graph trace's counter of the live tensor bytes of a device */
        return g_strdup_printf (_ ("%s tensors"), name + strlen ("memory "));
    }
  return g_strdup (name);
}

const char *
wick_span_kind_name (guint kind)
{
  /* Translators: the kinds of a span (its span_kind: function, op or module) */
  static const char *names[] = { NC_ ("span kind", "function"), NC_ ("span kind", "op"),
                                 NC_ ("span kind", "module") };
  return kind < G_N_ELEMENTS (names) ? g_dpgettext2 (NULL, "span kind", names[kind]) : "?";
}

const char *
wick_step_name (guint step)
{
  static const char *names[] = { "—", N_ ("forward"), N_ ("backward"), N_ ("optimizer") };
  return step == 0 ? names[0] : step < G_N_ELEMENTS (names) ? _ (names[step]) : "?";
}

const char *
wick_category_name (guint category)
{
  return category < 5 ? wick_palette_category_name (category) : "?";
}

const char *
wick_severity_name (WickSeverity severity)
{
  switch (severity)
    {
      case WICK_SEVERITY_ERROR:
        return C_ ("severity", "error");
      case WICK_SEVERITY_WARNING:
        return C_ ("severity", "warning");
      case WICK_SEVERITY_INFO:
        return C_ ("severity", "info");
      case WICK_SEVERITY_PENDING:
        /* Translators: a rule that only the end of a run still being written decides */
        return C_ ("severity", "pending");
    }
  return "?";
}

const char *
wick_track_kind_name (guint kind)
{
  /* Translators: kinds of timeline track, shown for a track without a name */
  static const char *names[] = { NC_ ("track kind", "slices"), NC_ ("track kind", "async"),
                                 NC_ ("track kind", "counter"), NC_ ("track kind", "instants"),
                                 NC_ ("track kind", "device") };
  return kind < G_N_ELEMENTS (names) ? g_dpgettext2 (NULL, "track kind", names[kind]) : "?";
}

const char *
wick_compare_kind_name (WickCompareKind kind)
{
  /* Translators: what a row of the comparison is about */
  static const char *names[] = { NC_ ("compare kind", "span"), NC_ ("compare kind", "op"),
                                 NC_ ("compare kind", "kernel") };
  return (guint)kind < G_N_ELEMENTS (names) ? g_dpgettext2 (NULL, "compare kind", names[kind])
                                            : "?";
}

const char *
wick_gradient_state_name (WickGradientState state)
{
  /* Translators: the state of a captured gradient */
  static const char *names[] = { NC_ ("gradient state", "present"),
                                 NC_ ("gradient state", "missing"), NC_ ("gradient state", "zero"),
                                 NC_ ("gradient state", "non-finite") };
  return (guint)state < G_N_ELEMENTS (names) ? g_dpgettext2 (NULL, "gradient state", names[state])
                                             : "?";
}

const char *
wick_gradient_expectation_name (WickGradientExpectation expectation)
{
  /* Translators: what a gradient family's contract expects of it */
  static const char *names[] = { NC_ ("gradient expectation", "active"),
                                 NC_ ("gradient expectation", "inactive"),
                                 NC_ ("gradient expectation", "data-conditional") };
  return (guint)expectation < G_N_ELEMENTS (names)
           ? g_dpgettext2 (NULL, "gradient expectation", names[expectation])
           : "?";
}

const char *
wick_family_verdict_name (const char *verdict)
{
  /* Translators: a gradient family's verdict in the coverage table */
  static const char *names[] = { NC_ ("family verdict", "ok"),
                                 NC_ ("family verdict", "no members"),
                                 NC_ ("family verdict", "non-finite"),
                                 NC_ ("family verdict", "pending"),
                                 NC_ ("family verdict", "below minimum"),
                                 NC_ ("family verdict", "leakage") };
  for (guint i = 0; verdict != NULL && i < G_N_ELEMENTS (names); i++)
    if (strcmp (verdict, names[i]) == 0)
      return g_dpgettext2 (NULL, "family verdict", names[i]);
  return verdict;
}

const char *
wick_coverage_verdict_name (WickCoverageVerdict verdict)
{
  switch (verdict)
    {
      case WICK_COVERAGE_VERDICT_COMPLETE:
        return C_ ("coverage verdict", "complete");
      case WICK_COVERAGE_VERDICT_PARTIAL:
        return C_ ("coverage verdict", "partial");
      case WICK_COVERAGE_VERDICT_INVALID:
        return C_ ("coverage verdict", "invalid");
      case WICK_COVERAGE_VERDICT_UNAVAILABLE:
        return C_ ("coverage verdict", "unavailable");
      case WICK_COVERAGE_VERDICT_PENDING:
        /* Translators: judged when the run ends */
        return C_ ("coverage verdict", "pending");
    }
  return "?";
}

char *
wick_format_shape (WickDocument *document, guint32 offset, guint32 rank)
{
  GString *s = g_string_new ("[");
  const guint64 *dims = rank ? wick_document_get_shape (document, offset) : NULL;
  for (guint32 i = 0; dims && i < rank; i++)
    g_string_append_printf (s, "%s%" G_GUINT64_FORMAT, i ? ", " : "", dims[i]);
  g_string_append_c (s, ']');
  return g_string_free (s, FALSE);
}

guint64
wick_document_origin_ns (WickDocument *document)
{
  guint n;
  const WickSpan *spans = wick_document_get_spans (document, &n);
  guint64 origin = G_MAXUINT64;
  for (guint i = 0; i < n; i++)
    origin = MIN (origin, spans[i].start_ns);
  return origin == G_MAXUINT64 ? 0 : origin;
}

char *
wick_record_title (WickDocument *document, WickRecordType type, gint64 index)
{
  switch (type)
    {
      case WICK_RECORD_SPAN:
        return g_strdup (
          wick_document_str (document, wick_document_get_spans (document, NULL)[index].name));
      case WICK_RECORD_OP:
        return g_strdup_printf (
          _ ("op %s"),
          wick_document_str (document, wick_document_get_ops (document, NULL)[index].op_name));
      case WICK_RECORD_TENSOR:
        return g_strdup_printf (
          _ ("tensor %s"),
          wick_document_str (document,
                             wick_document_get_tensors (document, NULL)[index].tensor_id));
      case WICK_RECORD_TENSOR_STATS:
        return g_strdup_printf (
          _ ("tensor stats %s"),
          wick_document_str (document,
                             wick_document_get_tensor_stats (document, NULL)[index].label));
      case WICK_RECORD_MEMORY:
        return g_strdup_printf (
          _ ("memory %s"),
          wick_document_str (document,
                             wick_document_get_memory (document, NULL)[index].storage_id));
      case WICK_RECORD_DEVICE_MEMORY:
        return g_strdup_printf (_ ("device memory sample %lld"), (long long)index + 1);
      case WICK_RECORD_DEVICE_INTERVAL:
        return g_strdup_printf (
          _ ("device interval on %s"),
          wick_document_str (document,
                             wick_document_get_device_intervals (document, NULL)[index].device));
      case WICK_RECORD_GRADIENT:
        return g_strdup_printf (
          _ ("gradient %s"),
          wick_document_str (document, wick_document_get_gradients (document, NULL)[index].key));
      case WICK_RECORD_EDGE:
        return g_strdup_printf (_ ("edge %lld"), (long long)index + 1);
      case WICK_RECORD_EXTENSION:
        return g_strdup (
          wick_document_str (document, wick_document_get_extensions (document, NULL)[index].kind));
      case WICK_RECORD_META:
        return g_strdup (_ ("run metadata"));
      case WICK_RECORD_TERMINAL:
        return g_strdup (_ ("terminal"));
      case WICK_RECORD_NONE:
      default:
        return g_strdup ("");
    }
}
