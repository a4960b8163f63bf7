/* wick-record-text.c — see wick-record-text.h. */
#include "wick-record-text.h"

#include <glib/gi18n.h>

const char *
wick_span_kind_name (guint kind)
{
  static const char *names[] = { "function", "op", "module" };
  return kind < G_N_ELEMENTS (names) ? names[kind] : "?";
}

const char *
wick_step_name (guint step)
{
  static const char *names[] = { "—", "forward", "backward", "optimizer" };
  return step < G_N_ELEMENTS (names) ? names[step] : "?";
}

const char *
wick_category_name (guint category)
{
  static const char *names[] = { "parameter", "activation", "gradient", "optimizer", "other" };
  return category < G_N_ELEMENTS (names) ? names[category] : "?";
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
