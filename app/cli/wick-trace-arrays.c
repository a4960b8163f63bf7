/* wick-trace-arrays.c — `wick-trace arrays FILE`: a trace's model as flat
 * columns, for wick.trace.open() (python/wick/trace.py) to map into NumPy
 * arrays without parsing JSON per event.
 *
 * Output on stdout: one line of JSON (the header), then the columns' bytes
 * one after another in the header's order (little-endian, no padding), then
 * the string table: every string once, each followed by a NUL; a column of
 * dtype "str" holds indices into it (uint32). The header:
 *   {"version":1, "file":S, "format":"candle-graph"|"chrome", "origin_ns":N,
 *    "strings":BYTES, "n_strings":N,
 *    "processes":[{"pid","name"}],
 *    "tables":{"tracks":{"rows":N,"columns":[{"name","dtype"}]}, "slices":…,
 *              "kernels":…, "collectives":…}}
 * dtype is a NumPy type string ("<u8", "<i8", "<u4", "<u2", "|u1") or
 * "str". Tables:
 *   tracks       kind str, name str, pid <i8 (-1: none), tid <i8 (-1), events <u8
 *   slices       track <u4 (4294967295: none), start_ns <u8, dur_ns <u8, depth <u2, name str, category str
 *   kernels      track <u4, start_ns <u8, dur_ns <u8, name str, kind str
 *                (kernel/memcpy/memset/…), correlation <i8, stream str, device str
 *   collectives  kernel <i8 (row of kernels, -1 for a gloo host span),
 *                slice <i8 (row of slices, -1 for a kernel), name str, group str,
 *                seq <i8 (-1: none), bytes <u8 (0: unknown), group_size <u4 (0)
 * Times are the document's: ns from origin_ns (the trace's earliest event).
 * Exit status as `check`: 0, 2 parse error (what was read is still
 * written), 3 usage or I/O error.
 */
#include "config.h"

#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#include "wick-chrome-import.h"
#include "wick-chrome-stream.h"
#include "wick-document.h"
#include "wick-ranks.h"
#include "wick-trace-commands.h"
#include "wick-tracks.h"

typedef struct
{
  GHashTable *index; /* char* (owned by strings) → index + 1 */
  GByteArray *bytes;
  guint n;
} Strings;

static guint32
str_index (Strings *s, const char *text)
{
  gpointer v;
  if (text == NULL)
    text = "";
  v = g_hash_table_lookup (s->index, text);
  if (v != NULL)
    return GPOINTER_TO_UINT (v) - 1;
  g_byte_array_append (s->bytes, (const guint8 *)text, (guint)strlen (text) + 1);
  g_hash_table_insert (s->index, g_strdup (text), GUINT_TO_POINTER (++s->n));
  return s->n - 1;
}

typedef struct
{
  const char *name, *dtype;
  GByteArray *data;
} Column;

typedef struct
{
  const char *name;
  guint rows;
  GPtrArray *columns; /* Column*, owned */
} Table;

static Column *
column (Table *t, const char *name, const char *dtype)
{
  Column *c = g_new0 (Column, 1);
  c->name = name;
  c->dtype = dtype;
  c->data = g_byte_array_new ();
  g_ptr_array_add (t->columns, c);
  return c;
}

#define PUT(col, type, value)                                                                     \
  G_STMT_START                                                                                    \
  {                                                                                               \
    type v_ = (type)(value);                                                                      \
    g_byte_array_append ((col)->data, (const guint8 *)&v_, sizeof v_);                            \
  }                                                                                               \
  G_STMT_END

static Table
table_new (const char *name)
{
  Table t = { name, 0, g_ptr_array_new_with_free_func (g_free) };
  return t;
}

/* A collective's fields from an NCCL kernel's (or gloo span's) args. */
static void
put_collective (Table *t, Column **c, Strings *s, gint64 kernel, gint64 slice, const char *ev_name,
                const char *args)
{
  g_autoptr (GString) text = g_string_new (NULL);
  static const char *const keys[] = { "Seq", "In msg nelems", "Out msg nelems", "Group size" };
  double v[4];
  gboolean found[4];
  gsize len = args ? strlen (args) : 0;
  guint64 bytes = 0;
  const char *name = ev_name;
  g_autofree char *coll = NULL;

  memset (found, 0, sizeof found);
  if (args != NULL)
    wick_chrome_args_numbers (args, len, keys, 4, v, found, text);
  g_string_truncate (text, 0);
  if (args != NULL && wick_chrome_args_string (args, len, "Collective name", text) && text->len)
    coll = g_strdup (text->str);
  else if (g_str_has_prefix (ev_name, "gloo:"))
    coll = g_strdup (ev_name + 5);
  name = coll ? coll : ev_name;
  g_string_truncate (text, 0);
  if (args != NULL && wick_chrome_args_string (args, len, "dtype", text))
    {
      static const struct
      {
        const char *name;
        guint size;
      } sizes[] = { { "Float", 4 }, { "Double", 8 }, { "Half", 2 }, { "BFloat16", 2 },
                    { "Int", 4 },   { "Long", 8 },   { "Byte", 1 }, { "Char", 1 },
                    { "Bool", 1 },  { "Short", 2 } };
      for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
        if (strcmp (text->str, sizes[i].name) == 0)
          {
            double n = MAX (found[1] ? v[1] : 0, found[2] ? v[2] : 0);
            if (n > 0 && n * sizes[i].size < 1.8e19)
              bytes = (guint64)n * sizes[i].size;
          }
    }
  g_string_truncate (text, 0);
  if (args == NULL || !wick_chrome_args_string (args, len, "Process Group Name", text))
    g_string_truncate (text, 0);
  PUT (c[0], gint64, kernel);
  PUT (c[1], gint64, slice);
  PUT (c[2], guint32, str_index (s, name));
  PUT (c[3], guint32, str_index (s, text->str));
  PUT (c[4], gint64, found[0] && v[0] >= 0 && v[0] < 9e15 ? (gint64)v[0] : -1);
  PUT (c[5], guint64, bytes);
  PUT (c[6], guint32, found[3] && v[3] >= 1 && v[3] < 1e7 ? (guint32)v[3] : 0);
  t->rows++;
}

int
wick_trace_arrays (int argc, char **argv)
{
  const GOptionEntry entries[] = { G_OPTION_ENTRY_NULL };
  int parsed = wick_trace_parse_options (
    "arrays", "FILE",
    "A trace's tracks, slices, kernels and collectives as flat binary columns (for "
    "wick.trace.open in Python).",
    entries, FALSE, &argc, &argv);
  g_autoptr (WickDocument) doc = NULL;
  g_autoptr (GError) error = NULL;
  int status = WICK_TRACE_EXIT_OK;
  Strings s = { g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL), g_byte_array_new (),
                0 };
  Table tables[4];
  WickTracks *t;
  guint n_proc, n_thr, n_tracks, n_spans, n_dev;
  const WickProcess *procs;
  const WickThread *thr;
  const WickTrack *tracks;
  const WickSpan *spans;
  const WickDeviceSlice *dev;

  if (parsed >= 0)
    return parsed;
  if (argc != 2)
    return wick_trace_usage_error ("arrays", argc < 2 ? "a FILE is required"
                                                      : "only one FILE may be given");
  doc = wick_document_new_with_extensions (TRUE);
  if (!wick_document_load_file_auto (doc, argv[1], NULL, NULL, NULL, &error))
    {
      fprintf (stderr, "wick-trace arrays: %s\n", error->message);
      if (!wick_document_get_parse_error (doc)->failed
          && (error->domain == G_FILE_ERROR || error->domain == G_IO_ERROR))
        return WICK_TRACE_EXIT_USAGE;
      status = WICK_TRACE_EXIT_PARSE;
    }
  t = wick_document_get_tracks (doc);
  procs = wick_tracks_get_processes (t, &n_proc);
  thr = wick_tracks_get_threads (t, &n_thr);
  tracks = wick_tracks_get_tracks (t, &n_tracks);
  spans = wick_document_get_spans (doc, &n_spans);
  dev = wick_tracks_get_device_slices (t, &n_dev);
  str_index (&s, ""); /* index 0: none */

  tables[0] = table_new ("tracks");
  {
    Column *kind = column (&tables[0], "kind", "str"), *name = column (&tables[0], "name", "str");
    Column *pid = column (&tables[0], "pid", "<i8"), *tid = column (&tables[0], "tid", "<i8");
    Column *events = column (&tables[0], "events", "<u8");
    for (guint i = 0; i < n_tracks; i++)
      {
        PUT (kind, guint32, str_index (&s, wick_track_describe_kind (&tracks[i])));
        PUT (name, guint32, str_index (&s, tracks[i].name ? wick_document_str (doc, tracks[i].name) : ""));
        PUT (pid, gint64, tracks[i].process >= 0 ? procs[tracks[i].process].pid : -1);
        PUT (tid, gint64, tracks[i].thread >= 0 ? thr[tracks[i].thread].tid : -1);
        PUT (events, guint64, tracks[i].n_events);
        tables[0].rows++;
      }
  }
  tables[1] = table_new ("slices");
  tables[3] = table_new ("collectives");
  {
    Column *cc[7] = {
      column (&tables[3], "kernel", "<i8"),     column (&tables[3], "slice", "<i8"),
      column (&tables[3], "name", "str"),       column (&tables[3], "group", "str"),
      column (&tables[3], "seq", "<i8"),        column (&tables[3], "bytes", "<u8"),
      column (&tables[3], "group_size", "<u4"),
    };
    Column *track = column (&tables[1], "track", "<u4");
    Column *start = column (&tables[1], "start_ns", "<u8");
    Column *dur = column (&tables[1], "dur_ns", "<u8");
    Column *depth = column (&tables[1], "depth", "<u2");
    Column *name = column (&tables[1], "name", "str");
    Column *cat = column (&tables[1], "category", "str");
    for (guint i = 0; i < n_spans; i++)
      {
        const char *nm = spans[i].name ? wick_document_str (doc, spans[i].name) : "";
        PUT (track, guint32, wick_tracks_span_track (t, i));
        PUT (start, guint64, spans[i].start_ns);
        PUT (dur, guint64, spans[i].duration_ns);
        PUT (depth, guint16, spans[i].depth);
        PUT (name, guint32, str_index (&s, nm));
        PUT (cat, guint32, str_index (&s, wick_tracks_span_category (t, i)));
        tables[1].rows++;
        if (g_str_has_prefix (nm, "gloo:"))
          {
            WickEventRef ref = { WICK_EVENT_SLICE, i };
            put_collective (&tables[3], cc, &s, -1, i, nm, wick_tracks_event_args (t, ref));
          }
      }
    tables[2] = table_new ("kernels");
    {
      Column *ktrack = column (&tables[2], "track", "<u4");
      Column *kstart = column (&tables[2], "start_ns", "<u8");
      Column *kdur = column (&tables[2], "dur_ns", "<u8");
      Column *kname = column (&tables[2], "name", "str");
      Column *kkind = column (&tables[2], "kind", "str");
      Column *corr = column (&tables[2], "correlation", "<i8");
      Column *stream = column (&tables[2], "stream", "str");
      Column *device = column (&tables[2], "device", "str");
      for (guint i = 0; i < n_dev; i++)
        {
          const char *nm = dev[i].name ? wick_document_str (doc, dev[i].name) : "";
          const WickTrack *tr = &tracks[dev[i].track];
          PUT (ktrack, guint32, dev[i].track);
          PUT (kstart, guint64, dev[i].start_ns);
          PUT (kdur, guint64, dev[i].duration_ns);
          PUT (kname, guint32, str_index (&s, nm));
          PUT (kkind, guint32, str_index (&s, wick_device_kind_to_string (dev[i].kind)));
          PUT (corr, gint64, dev[i].correlation);
          PUT (stream, guint32, str_index (&s, tr->stream ? wick_document_str (doc, tr->stream) : ""));
          PUT (device, guint32,
               str_index (&s, tr->category ? wick_document_str (doc, tr->category) : ""));
          tables[2].rows++;
          if (wick_is_nccl_kernel (nm, strlen (nm)))
            put_collective (&tables[3], cc, &s, i, -1, nm,
                            dev[i].args ? wick_document_str (doc, dev[i].args) : NULL);
        }
    }
  }

  {
    g_autoptr (JsonBuilder) b = json_builder_new ();
    g_autoptr (JsonGenerator) gen = json_generator_new ();
    g_autoptr (JsonNode) root = NULL;
    g_autofree char *header = NULL;
    json_builder_begin_object (b);
    json_builder_set_member_name (b, "version");
    json_builder_add_int_value (b, 1);
    json_builder_set_member_name (b, "file");
    json_builder_add_string_value (b, argv[1]);
    json_builder_set_member_name (b, "format");
    json_builder_add_string_value (b, wick_trace_format_to_string (wick_tracks_get_format (t)));
    json_builder_set_member_name (b, "origin_ns");
    json_builder_add_int_value (b, wick_tracks_get_origin_ns (t));
    json_builder_set_member_name (b, "strings");
    json_builder_add_int_value (b, s.bytes->len);
    json_builder_set_member_name (b, "n_strings");
    json_builder_add_int_value (b, s.n);
    json_builder_set_member_name (b, "processes");
    json_builder_begin_array (b);
    for (guint i = 0; i < n_proc; i++)
      {
        json_builder_begin_object (b);
        json_builder_set_member_name (b, "pid");
        json_builder_add_int_value (b, procs[i].pid);
        json_builder_set_member_name (b, "name");
        if (procs[i].name)
          json_builder_add_string_value (b, wick_document_str (doc, procs[i].name));
        else
          json_builder_add_null_value (b);
        json_builder_end_object (b);
      }
    json_builder_end_array (b);
    json_builder_set_member_name (b, "tables");
    json_builder_begin_object (b);
    for (guint k = 0; k < G_N_ELEMENTS (tables); k++)
      {
        json_builder_set_member_name (b, tables[k].name);
        json_builder_begin_object (b);
        json_builder_set_member_name (b, "rows");
        json_builder_add_int_value (b, tables[k].rows);
        json_builder_set_member_name (b, "columns");
        json_builder_begin_array (b);
        for (guint c = 0; c < tables[k].columns->len; c++)
          {
            const Column *col = tables[k].columns->pdata[c];
            json_builder_begin_object (b);
            json_builder_set_member_name (b, "name");
            json_builder_add_string_value (b, col->name);
            json_builder_set_member_name (b, "dtype");
            json_builder_add_string_value (b, col->dtype);
            json_builder_end_object (b);
          }
        json_builder_end_array (b);
        json_builder_end_object (b);
      }
    json_builder_end_object (b);
    json_builder_end_object (b);
    root = json_builder_get_root (b);
    json_generator_set_root (gen, root);
    header = json_generator_to_data (gen, NULL);
    fputs (header, stdout);
    fputc ('\n', stdout);
  }
  for (guint k = 0; k < G_N_ELEMENTS (tables); k++)
    {
      for (guint c = 0; c < tables[k].columns->len; c++)
        {
          Column *col = tables[k].columns->pdata[c];
          if (col->data->len > 0 && fwrite (col->data->data, 1, col->data->len, stdout) != col->data->len)
            status = WICK_TRACE_EXIT_USAGE;
          g_byte_array_unref (col->data);
        }
      g_ptr_array_unref (tables[k].columns);
    }
  if (s.bytes->len > 0 && fwrite (s.bytes->data, 1, s.bytes->len, stdout) != s.bytes->len)
    status = WICK_TRACE_EXIT_USAGE;
  if (fflush (stdout) != 0)
    status = WICK_TRACE_EXIT_USAGE;
  g_byte_array_unref (s.bytes);
  g_hash_table_unref (s.index);
  return status;
}
