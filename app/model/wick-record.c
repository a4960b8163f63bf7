/* wick-record.c — building a record's values for wick_document_commit()
 * (see wick-record.h). */
#include "config.h"

#include "wick-record.h"

#include <string.h>

void
wick_record_builder_init (WickRecordBuilder *builder)
{
  memset (builder, 0, sizeof *builder);
  builder->values = g_array_sized_new (FALSE, TRUE, sizeof (WickValue), 32);
  builder->fields = g_array_sized_new (FALSE, TRUE, sizeof (const WickFieldSchema *), 32);
}

void
wick_record_builder_clear (WickRecordBuilder *builder)
{
  g_clear_pointer (&builder->values, g_array_unref);
  g_clear_pointer (&builder->fields, g_array_unref);
}

/* Appends the slots of an object's fields, defaulted as the decoder does
 * for an absent field; returns the first. */
static guint32
append_block (WickRecordBuilder *builder, const WickRecordSchema *schema, guint extra)
{
  guint32 base = builder->values->len;

  g_array_set_size (builder->values, base + schema->n_fields + extra);
  g_array_set_size (builder->fields, base + schema->n_fields + extra);
  for (guint i = 0; i < schema->n_fields; i++)
    {
      const WickFieldSchema *field = &schema->fields[i];
      WickValue *value = &g_array_index (builder->values, WickValue, base + i);
      memset (value, 0, sizeof *value);
      g_array_index (builder->fields, const WickFieldSchema *, base + i) = field;
      value->is_str = field->type == WICK_FIELD_STR;
      if (field->mode != WICK_FIELD_DEFAULT)
        continue;
      value->set = TRUE;
      if (field->type == WICK_FIELD_ENUM)
        value->variant = field->default_variant;
    }
  for (guint i = 0; i < extra; i++)
    {
      memset (&g_array_index (builder->values, WickValue, base + schema->n_fields + i), 0,
              sizeof (WickValue));
      g_array_index (builder->fields, const WickFieldSchema *, base + schema->n_fields + i) = NULL;
    }
  return base;
}

void
wick_record_builder_begin (WickRecordBuilder *builder, WickRecordKind kind, guint edge_kind)
{
  const WickRecordSchema *schema = wick_trace_record_schema (kind, edge_kind);

  g_return_if_fail (kind < WICK_N_KINDS);
  builder->kind = kind;
  builder->edge_kind = (guint8)edge_kind;
  memset (&builder->facts, 0, sizeof builder->facts);
  g_array_set_size (builder->values, 0);
  g_array_set_size (builder->fields, 0);
  /* a span_start and a memory record have one slot more: their
   * "wick_thread" (SS_WICK_THREAD), their "wick_address" (MEM_WICK_ADDRESS) */
  append_block (builder, schema, kind == WICK_KIND_SPAN_START || kind == WICK_KIND_MEMORY);
}

static WickValue *
slot (WickRecordBuilder *builder, guint32 at)
{
  g_return_val_if_fail (at < builder->values->len, NULL);
  return &g_array_index (builder->values, WickValue, at);
}

void
wick_record_builder_str (WickRecordBuilder *builder, guint32 at, const char *str, gssize len)
{
  WickValue *value = slot (builder, at);

  g_return_if_fail (value != NULL);
  value->set = TRUE;
  value->is_str = TRUE;
  value->str = str != NULL ? str : "";
  value->len = (guint32)(len < 0 ? strlen (value->str) : (gsize)len);
}

void
wick_record_builder_u64 (WickRecordBuilder *builder, guint32 at, guint64 v)
{
  WickValue *value = slot (builder, at);

  g_return_if_fail (value != NULL);
  value->set = TRUE;
  value->u64 = v;
}

void
wick_record_builder_f64 (WickRecordBuilder *builder, guint32 at, double v)
{
  WickValue *value = slot (builder, at);

  g_return_if_fail (value != NULL);
  value->set = TRUE;
  value->f64 = v;
}

void
wick_record_builder_bool (WickRecordBuilder *builder, guint32 at, gboolean v)
{
  WickValue *value = slot (builder, at);

  g_return_if_fail (value != NULL);
  value->set = TRUE;
  value->u64 = 0;
  value->boolean = v;
}

void
wick_record_builder_enum (WickRecordBuilder *builder, guint32 at, guint variant)
{
  WickValue *value = slot (builder, at);

  g_return_if_fail (value != NULL);
  value->set = TRUE;
  value->u64 = 0;
  value->variant = variant;
}

gboolean
wick_record_builder_enum_name (WickRecordBuilder *builder, guint32 at, const char *name)
{
  const WickFieldSchema *field;

  g_return_val_if_fail (at < builder->values->len, FALSE);
  field = g_array_index (builder->fields, const WickFieldSchema *, at);
  g_return_val_if_fail (field != NULL && field->type == WICK_FIELD_ENUM, FALSE);
  for (guint i = 0; field->variants[i] != NULL; i++)
    if (strcmp (field->variants[i], name) == 0)
      {
        wick_record_builder_enum (builder, at, i);
        return TRUE;
      }
  g_critical ("%s: no variant `%s` of field `%s`", G_STRFUNC, name, field->name);
  return FALSE;
}

guint32
wick_record_builder_object (WickRecordBuilder *builder, guint32 at)
{
  const WickFieldSchema *field;
  guint32 block;

  g_return_val_if_fail (at < builder->values->len, 0);
  field = g_array_index (builder->fields, const WickFieldSchema *, at);
  g_return_val_if_fail (field != NULL && field->type == WICK_FIELD_OBJECT, 0);
  block = append_block (builder, field->object, 0);
  slot (builder, at)->set = TRUE;
  slot (builder, at)->offset = block;
  return block;
}

guint32
wick_record_builder_list (WickRecordBuilder *builder, guint32 at, guint32 n)
{
  const WickFieldSchema *field;
  guint32 first = builder->values->len;
  WickValue *value;

  g_return_val_if_fail (at < builder->values->len, 0);
  field = g_array_index (builder->fields, const WickFieldSchema *, at);
  g_return_val_if_fail (field != NULL, 0);
  switch (field->type)
    {
      case WICK_FIELD_OBJECT_LIST:
        for (guint32 i = 0; i < n; i++)
          append_block (builder, field->object, 0);
        break;
      case WICK_FIELD_STR_LIST:
      case WICK_FIELD_U64_LIST:
      case WICK_FIELD_STR_MAP:
        {
          guint32 width = field->type == WICK_FIELD_STR_MAP ? 2 : 1;
          g_array_set_size (builder->values, first + width * n);
          g_array_set_size (builder->fields, first + width * n);
          for (guint32 i = first; i < first + width * n; i++)
            {
              WickValue *element = &g_array_index (builder->values, WickValue, i);
              memset (element, 0, sizeof *element);
              element->set = TRUE;
              element->is_str = field->type != WICK_FIELD_U64_LIST;
              element->str = "";
              g_array_index (builder->fields, const WickFieldSchema *, i) = NULL;
            }
          break;
        }
      default:
        g_return_val_if_reached (0);
    }
  value = slot (builder, at);
  value->set = TRUE;
  value->len = n;
  value->offset = first;
  return first;
}

char *
wick_record_builder_missing (WickRecordBuilder *builder)
{
  const WickValue *values = (const WickValue *)(gpointer)builder->values->data;
  const WickFieldSchema *const *fields
    = (const WickFieldSchema *const *)(gpointer)builder->fields->data;

  for (guint32 i = 0; i < builder->values->len; i++)
    if (fields[i] != NULL && fields[i]->mode == WICK_FIELD_REQUIRED && !values[i].set)
      return g_strdup_printf ("missing field `%s` of %s", fields[i]->name,
                              wick_trace_record_kind_name (builder->kind));
  return NULL;
}

void
wick_record_builder_get (WickRecordBuilder *builder, WickRecord *out)
{
  memset (out, 0, sizeof *out);
  out->kind = builder->kind;
  out->edge_kind = builder->edge_kind;
  out->values = (const WickValue *)(gpointer)builder->values->data;
  out->facts = builder->facts.present != 0 ? &builder->facts : NULL;
}
