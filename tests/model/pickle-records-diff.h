/* pickle-records-diff.h — reads one pickle twice, the ordinary way (every
 * list item built and offered to the element callback) and with the record
 * callback (wick_pickle_reader_set_record_func: a batch of snapshot-shaped
 * dicts given as their keys' values, never built), and tells whether the two
 * reads were the same: the same callbacks with the same lists, indices and
 * values, the same verdicts, the same result or the same error. Used by
 * test-model-snapshot (/snapshot/pickle/records) and fuzz-pickle.
 *
 * The callbacks stand in for the snapshot model's: an item that has "action"
 * and "addr" is taken (and fails, naming the reader's offset, when "addr" is
 * a str, as the model's would); any other item is kept. */
#pragma once

#include <string.h>

#include "wick-input.h"
#include "wick-pickle.h"

static const char *const records_diff_keys[] = { "action", "addr", "size", "frames",
                                                 "compile_context" };
#define RECORDS_DIFF_N_KEYS 5

typedef struct
{
  GString *log;
  WickPickleReader *reader;
  WickPickleKeyCache *keys;
} RecordsDiff;

/* What a value is, in a few bytes: containers by their length and list id. */
static void
records_diff_render (GString *out, const WickPickleValue *v, guint depth)
{
  gsize len;
  const char *text;
  if (v == NULL)
    {
      g_string_append (out, "-");
      return;
    }
  switch (v->type)
    {
      case WICK_PICKLE_NONE:
        g_string_append (out, "None");
        break;
      case WICK_PICKLE_BOOL:
      case WICK_PICKLE_INT:
      case WICK_PICKLE_BIG:
        g_string_append_printf (out, "%s:%" G_GINT64_FORMAT, wick_pickle_type_to_string (v->type),
                                v->as.i);
        break;
      case WICK_PICKLE_UINT:
        g_string_append_printf (out, "u:%" G_GUINT64_FORMAT, v->as.u);
        break;
      case WICK_PICKLE_FLOAT:
        g_string_append_printf (out, "f:%a", v->as.f);
        break;
      case WICK_PICKLE_STR:
      case WICK_PICKLE_BYTES:
        text = wick_pickle_value_get_string (v, &len);
        g_string_append_printf (out, "%s:%" G_GSIZE_FORMAT ":", wick_pickle_type_to_string (v->type),
                                len);
        g_string_append_len (out, text, (gssize)MIN (len, (gsize)64));
        break;
      default:
        g_string_append_printf (out, "%s(%" G_GSIZE_FORMAT " #%" G_GUINT64_FORMAT ")",
                                wick_pickle_type_to_string (v->type),
                                wick_pickle_value_get_length (v), wick_pickle_value_get_list_id (v));
        if (depth > 0)
          {
            gboolean dict = v->type == WICK_PICKLE_DICT;
            for (gsize i = 0; i < wick_pickle_value_get_length (v) && i < 16; i++)
              {
                const WickPickleValue *key = NULL, *item;
                if (dict)
                  wick_pickle_value_get_pair (v, i, &key, &item);
                else
                  item = wick_pickle_value_get_item (v, i);
                g_string_append_c (out, ' ');
                if (key != NULL)
                  {
                    records_diff_render (out, key, depth - 1);
                    g_string_append_c (out, '=');
                  }
                records_diff_render (out, item, depth - 1);
              }
          }
        break;
    }
}

static WickPickleVerdict
records_diff_judge (RecordsDiff *d, guint64 list_id, guint64 index,
                    const WickPickleValue *const *found, GError **error)
{
  g_string_append_printf (d->log, "%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT ":", list_id, index);
  for (guint k = 0; k < RECORDS_DIFF_N_KEYS; k++)
    {
      g_string_append_c (d->log, ' ');
      records_diff_render (d->log, found[k], 1);
    }
  if (found[0] == NULL || found[1] == NULL)
    {
      g_string_append (d->log, " kept\n");
      return WICK_PICKLE_KEEP;
    }
  if (found[1]->type == WICK_PICKLE_STR)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "byte %" G_GUINT64_FORMAT ": addr",
                   wick_pickle_reader_get_offset (d->reader));
      return WICK_PICKLE_FAILED;
    }
  g_string_append (d->log, " taken\n");
  return WICK_PICKLE_TAKEN;
}

static WickPickleVerdict
records_diff_on_item (guint64 list_id, guint64 index, const WickPickleValue *item,
                      gpointer user_data, GError **error)
{
  RecordsDiff *d = user_data;
  const WickPickleValue *found[RECORDS_DIFF_N_KEYS];
  if (item->type != WICK_PICKLE_DICT)
    {
      g_string_append_printf (d->log, "%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT ": ", list_id,
                              index);
      records_diff_render (d->log, item, 0);
      g_string_append (d->log, " kept\n");
      return WICK_PICKLE_KEEP;
    }
  wick_pickle_value_lookup_cached (item, d->keys, found);
  return records_diff_judge (d, list_id, index, found, error);
}

static WickPickleVerdict
records_diff_on_record (guint64 list_id, guint64 index, const WickPickleValue *const *found,
                        gpointer user_data, GError **error)
{
  return records_diff_judge (user_data, list_id, index, found, error);
}

/* One read of @data; returns its log, result and error as one string. */
static char *
records_diff_read (const void *data, gsize len, gboolean records)
{
  static const guint32 masks[] = { 1u << 0 | 1u << 1 };
  WickInput *input = wick_input_new_for_data (data, len, "diff.pickle");
  RecordsDiff d = { g_string_new (NULL), wick_pickle_reader_new (input, "diff.pickle"),
                    wick_pickle_key_cache_new (records_diff_keys, RECORDS_DIFF_N_KEYS) };
  wick_pickle_reader_set_element_func (d.reader, records_diff_on_item, &d);
  if (records)
    wick_pickle_reader_set_record_func (d.reader, d.keys, masks, G_N_ELEMENTS (masks),
                                        records_diff_on_record, &d);
  WickPickleValue result;
  GError *error = NULL;
  if (wick_pickle_reader_read (d.reader, &result, &error))
    {
      g_string_append (d.log, "result ");
      records_diff_render (d.log, &result, 3);
      wick_pickle_value_clear (&result);
    }
  else
    g_string_append_printf (d.log, "error %s", error->message);
  g_string_append_printf (d.log, " at %" G_GUINT64_FORMAT,
                          wick_pickle_reader_get_offset (d.reader));
  g_clear_error (&error);
  wick_pickle_reader_free (d.reader);
  wick_pickle_key_cache_free (d.keys);
  wick_input_free (input);
  return g_string_free (d.log, FALSE);
}

/* NULL when both reads agree, else the first differing line of each. */
static char *
records_diff (const void *data, gsize len)
{
  g_autofree char *plain = records_diff_read (data, len, FALSE);
  g_autofree char *fast = records_diff_read (data, len, TRUE);
  if (strcmp (plain, fast) == 0)
    return NULL;
  gsize i = 0;
  while (plain[i] == fast[i])
    i++;
  while (i > 0 && plain[i - 1] != '\n')
    i--;
  return g_strdup_printf ("ordinary: %.300s\nrecords:  %.300s", plain + i, fast + i);
}
