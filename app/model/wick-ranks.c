/* wick-ranks.c — per-rank streaming reduction and the cross-rank merge (see the header). */
#include "config.h"

#include "wick-ranks.h"
#include "wick-ranks-private.h"

#include <errno.h>
#include <glib/gstdio.h>
/* json-glib: distributedInfo (foreign JSON) and the partials' writer; the scanner reads them. */
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/wick-json.h"
#include "wick-chrome-stream.h"
#include "wick-json-scanner.h"
#include "common/wick-utf8.h"

/* A string kept in a partial longer than this is cut (names, group names). */
#define MAX_NAME_BYTES 256
/* The most collectives, steps and warnings one partial may hold: far beyond
 * any real trace, and what bounds a partial read from JSON. */
#define MAX_COLLECTIVES ((guint)50000000)
#define MAX_STEPS ((guint)10000000)
#define MAX_WARNINGS 64
#define MAX_PARTIAL_JSON ((gsize)1 << 30)

typedef struct
{
  gint64 s, e;
} Interval;

typedef struct
{
  WickRankPartial pub;
  GStringChunk *strings;
} Partial;

void
wick_rank_partial_free (WickRankPartial *partial)
{
  Partial *p = (Partial *)partial;
  if (partial == NULL)
    return;
  g_free (partial->file);
  g_free (partial->rank_source);
  g_array_unref (partial->collectives);
  g_array_unref (partial->steps);
  g_ptr_array_unref (partial->warnings);
  g_string_chunk_free (p->strings);
  g_free (p);
}

static Partial *
partial_new (const char *file)
{
  Partial *p = g_new0 (Partial, 1);
  p->pub.file = g_strdup (file);
  p->pub.rank = -1;
  p->pub.collectives = g_array_new (FALSE, FALSE, sizeof (WickRankCollective));
  p->pub.steps = g_array_new (FALSE, FALSE, sizeof (WickRankStep));
  p->pub.warnings = g_ptr_array_new_with_free_func (g_free);
  p->strings = g_string_chunk_new (4096);
  return p;
}

static const char *
intern (Partial *p, const char *s, gsize len)
{
  char buf[MAX_NAME_BYTES + 1];
  gsize n = MIN (len, (gsize)MAX_NAME_BYTES);
  /* cut at a character boundary, so a cut name stays UTF-8 */
  while (n > 0 && n < len && ((guchar)s[n] & 0xC0) == 0x80)
    n--;
  memcpy (buf, s, n);
  buf[n] = '\0';
  return g_string_chunk_insert_const (p->strings, buf);
}

static void warn (WickRankPartial *partial, const char *format, ...) G_GNUC_PRINTF (2, 3);
static void
warn (WickRankPartial *partial, const char *format, ...)
{
  va_list args;
  if (partial->warnings->len >= MAX_WARNINGS)
    return;
  va_start (args, format);
  g_ptr_array_add (partial->warnings, g_strdup_vprintf (format, args));
  va_end (args);
}

gboolean
wick_is_nccl_kernel (const char *name, gsize len)
{
  return (len >= 11 && memcmp (name, "ncclKernel_", 11) == 0)
         || (len >= 14 && memcmp (name, "ncclDevKernel_", 14) == 0);
}

/* "ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)" -> "allreduce" */
static void
name_from_kernel (const char *name, gsize len, GString *out)
{
  gsize i = name[4] == 'D' ? 14 : 11;
  for (; i < len && name[i] != '_' && name[i] != '(' && out->len < 64; i++)
    g_string_append_c (out, g_ascii_tolower (name[i]));
}

static guint
dtype_size (const char *d)
{
  static const struct
  {
    const char *name;
    guint size;
  } table[] = {
    { "Float", 4 },
    { "Double", 8 },
    { "Half", 2 },
    { "BFloat16", 2 },
    { "Int", 4 },
    { "Long", 8 },
    { "Short", 2 },
    { "Char", 1 },
    { "Byte", 1 },
    { "Bool", 1 },
    { "Float8_e4m3fn", 1 },
    { "Float8_e5m2", 1 },
    { "Float8_e4m3fnuz", 1 },
    { "Float8_e5m2fnuz", 1 },
    { "ComplexHalf", 4 },
    { "ComplexFloat", 8 },
    { "ComplexDouble", 16 },
    { "UInt16", 2 },
    { "UInt32", 4 },
    { "UInt64", 8 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (table); i++)
    if (g_ascii_strcasecmp (d, table[i].name) == 0)
      return table[i].size;
  return 0;
}

/* 64-bit FNV-1a: a communicator's member list named in a few bytes. */
static guint64
fnv1a (const char *s, gsize len)
{
  guint64 h = 0xcbf29ce484222325ull;
  for (gsize i = 0; i < len; i++)
    {
      h ^= (guchar)s[i];
      h *= 0x100000001b3ull;
    }
  return h;
}

static gboolean
str_eq (const char *s, gsize len, const char *lit)
{
  gsize n = strlen (lit);
  return len == n && g_ascii_strncasecmp (s, lit, n) == 0;
}

static void
read_collective (Partial *p, const WickChromeEvent *ev, GString *scratch, GString *text)
{
  static const char *const keys[] = { "Seq", "In msg nelems", "Out msg nelems", "Group size" };
  double v[G_N_ELEMENTS (keys)];
  gboolean found[G_N_ELEMENTS (keys)];
  WickRankCollective c = { 0 };
  char key[MAX_NAME_BYTES + 32];
  const char *group;
  guint64 ranks_hash = 0;
  guint size = 0;

  c.start_ns = ev->ts_ns;
  c.end_ns = ev->ts_ns + (ev->has_dur && ev->dur_ns > 0 ? ev->dur_ns : 0);
  g_string_truncate (scratch, 0);
  wick_chrome_args_numbers (ev->args, ev->args_len, keys, G_N_ELEMENTS (keys), v, found, scratch);
  c.seq = found[0] && v[0] >= 0 && v[0] < 9e15 ? (gint64)v[0] : -1;
  c.group_size = found[3] && v[3] >= 1 && v[3] < 1e7 ? (guint)v[3] : 0;

  g_string_truncate (text, 0);
  if (wick_chrome_args_string (ev->args, ev->args_len, "Collective name", text) && text->len > 0)
    c.name = intern (p, text->str, text->len);
  else
    {
      name_from_kernel (ev->name, ev->name_len, text);
      c.name = intern (p, text->str, text->len);
    }
  g_string_truncate (text, 0);
  if (wick_chrome_args_string (ev->args, ev->args_len, "Process Group Name", text))
    group = intern (p, text->str, text->len);
  else
    {
      group = "";
      p->pub.nccl_without_group++;
    }
  c.group = group;
  g_string_truncate (text, 0);
  if (wick_chrome_args_string (ev->args, ev->args_len, "Process Group Ranks", text))
    ranks_hash = fnv1a (text->str, text->len);
  g_snprintf (key, sizeof key, "%s@%016" G_GINT64_MODIFIER "x", group, ranks_hash);
  c.group_key = intern (p, key, strlen (key));

  g_string_truncate (text, 0);
  if (wick_chrome_args_string (ev->args, ev->args_len, "dtype", text))
    size = dtype_size (text->str);
  if (size > 0 && (found[1] || found[2]))
    {
      double n = MAX (found[1] ? v[1] : 0, found[2] ? v[2] : 0);
      if (n >= 0 && n * size < 1.8e19)
        c.bytes = (guint64)n * size;
    }
  if (c.bytes == 0)
    p->pub.unknown_dtype++;
  if (p->pub.collectives->len < MAX_COLLECTIVES)
    g_array_append_val (p->pub.collectives, c);
}

static int
cmp_interval (gconstpointer a, gconstpointer b)
{
  const Interval *x = a, *y = b;
  return x->s < y->s ? -1 : x->s > y->s ? 1 : (x->e < y->e ? -1 : x->e > y->e);
}

/* Sorts and merges @a into disjoint intervals. */
static void
union_intervals (GArray *a)
{
  guint out = 0;
  Interval *v = (Interval *)(void *)a->data;

  g_array_sort (a, cmp_interval);
  for (guint i = 0; i < a->len; i++)
    {
      if (out > 0 && v[i].s <= v[out - 1].e)
        v[out - 1].e = MAX (v[out - 1].e, v[i].e);
      else
        v[out++] = v[i];
    }
  g_array_set_size (a, out);
}

/* First interval of disjoint sorted @a that ends after @t. */
static guint
first_after (const GArray *a, gint64 t)
{
  const Interval *v = (const Interval *)(const void *)a->data;
  guint lo = 0, hi = a->len;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (v[mid].e <= t)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

static gint64
covered (const GArray *a, gint64 s, gint64 e)
{
  const Interval *v = (const Interval *)(const void *)a->data;
  gint64 sum = 0;
  for (guint i = first_after (a, s); i < a->len && v[i].s < e; i++)
    sum += MIN (v[i].e, e) - MAX (v[i].s, s);
  return sum;
}

static gint64
overlap (const GArray *a, const GArray *b, gint64 s, gint64 e)
{
  const Interval *x = (const Interval *)(const void *)a->data;
  const Interval *y = (const Interval *)(const void *)b->data;
  guint i = first_after (a, s), j = first_after (b, s);
  gint64 sum = 0;
  while (i < a->len && j < b->len && x[i].s < e && y[j].s < e)
    {
      gint64 lo = MAX (MAX (x[i].s, y[j].s), s), hi = MIN (MIN (x[i].e, y[j].e), e);
      if (hi > lo)
        sum += hi - lo;
      if (x[i].e < y[j].e)
        i++;
      else
        j++;
    }
  return sum;
}

static int
cmp_rank_collective (gconstpointer a, gconstpointer b)
{
  const WickRankCollective *x = a, *y = b;
  return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static int
cmp_step (gconstpointer a, gconstpointer b)
{
  const WickRankStep *x = a, *y = b;
  return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* The rank in a file name: the digits after the last "rank" (any case, with
 * '-', '_' or '.' between), as "rank-3.pt.trace.json.gz" or "rank_12.json". */
static int
rank_from_name (const char *path)
{
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *lower = g_ascii_strdown (base, -1);
  const char *p = NULL, *q = lower;
  while ((q = strstr (q, "rank")) != NULL)
    p = q++;
  if (p == NULL)
    return -1;
  p += 4;
  while (*p == '-' || *p == '_' || *p == '.')
    p++;
  if (!g_ascii_isdigit (*p))
    return -1;
  gint64 r = g_ascii_strtoll (p, NULL, 10);
  return r >= 0 && r < (1 << 24) ? (int)r : -1;
}

static void
read_metadata (Partial *p, const GPtrArray *meta)
{
  for (guint i = 0; i + 1 < meta->len; i += 2)
    {
      const char *key = meta->pdata[i], *text = meta->pdata[i + 1];
      if (strcmp (key, "baseTimeNanoseconds") == 0)
        {
          const char *t = text;
          char *end;
          gint64 v;
          if (*t == '"')
            t++;
          v = g_ascii_strtoll (t, &end, 10);
          if (end != t && v >= 0)
            {
              p->pub.base_ns = v;
              p->pub.has_base = TRUE;
            }
          else
            warn (&p->pub, "baseTimeNanoseconds is not an integer; the trace's own clock is used");
        }
      else if (strcmp (key, "distributedInfo") == 0)
        {
          /* foreign JSON: PyTorch's distributedInfo, as the profiler wrote it */
          g_autoptr (JsonParser) parser = json_parser_new ();
          JsonNode *root;
          if (!json_parser_load_from_data (parser, text, -1, NULL)
              || (root = json_parser_get_root (parser)) == NULL || !JSON_NODE_HOLDS_OBJECT (root))
            {
              warn (&p->pub, "distributedInfo is not a JSON object: ignored");
              continue;
            }
          JsonObject *o = json_node_get_object (root);
          JsonNode *r = json_object_get_member (o, "rank");
          JsonNode *w = json_object_get_member (o, "world_size");
          if (r != NULL && JSON_NODE_HOLDS_VALUE (r) && json_node_get_value_type (r) == G_TYPE_INT64
              && json_node_get_int (r) >= 0 && json_node_get_int (r) < (1 << 24))
            {
              p->pub.rank = (int)json_node_get_int (r);
              g_free (p->pub.rank_source);
              p->pub.rank_source = g_strdup ("distributedInfo");
            }
          if (w != NULL && JSON_NODE_HOLDS_VALUE (w) && json_node_get_value_type (w) == G_TYPE_INT64
              && json_node_get_int (w) > 0 && json_node_get_int (w) < (1 << 24))
            p->pub.world_size = (int)json_node_get_int (w);
        }
    }
}

WickRankPartial *
wick_rank_reduce_file (const char *path, GCancellable *cancellable, GError **error)
{
  g_autoptr (WickChromeReader) reader = NULL;
  g_autoptr (GArray) compute = g_array_new (FALSE, FALSE, sizeof (Interval));
  g_autoptr (GArray) comm = g_array_new (FALSE, FALSE, sizeof (Interval));
  g_autoptr (GString) scratch = g_string_new (NULL);
  g_autoptr (GString) text = g_string_new (NULL);
  GError *local = NULL;
  WickChromeEvent ev;
  WickFileFormat format;
  WickInput *input;
  Partial *p;
  gboolean any = FALSE;

  input = wick_input_open (path, error);
  if (input == NULL)
    return NULL;
  reader = wick_chrome_reader_new (input, path);
  if (!wick_chrome_reader_start (reader, &format, error))
    return NULL;
  if (format != WICK_FILE_FORMAT_CHROME)
    {
      g_set_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID,
                   "%s: not a trace-event JSON file (the ranks of a job are read from their "
                   "PyTorch profiler traces)",
                   path);
      return NULL;
    }
  p = partial_new (path);
  while (wick_chrome_reader_next (reader, &ev, &local))
    {
      p->pub.events++;
      if ((p->pub.events & 0xffff) == 0
          && g_cancellable_set_error_if_cancelled (cancellable, &local))
        break;
      if (!ev.has_ts || ev.ph_len != 1 || ev.ph[0] != 'X')
        continue;
      gint64 s = ev.ts_ns, e = ev.ts_ns + (ev.has_dur && ev.dur_ns > 0 ? ev.dur_ns : 0);
      if (!any || s < p->pub.first_ns)
        p->pub.first_ns = s;
      if (!any || e > p->pub.last_ns)
        p->pub.last_ns = e;
      any = TRUE;
      if (str_eq (ev.cat, ev.cat_len, "kernel") || str_eq (ev.cat, ev.cat_len, "gpu_memcpy")
          || str_eq (ev.cat, ev.cat_len, "gpu_memset"))
        {
          Interval iv = { s, e };
          p->pub.gpu_events++;
          if (ev.cat_len == 6 && wick_is_nccl_kernel (ev.name, ev.name_len))
            {
              p->pub.nccl_kernels++;
              read_collective (p, &ev, scratch, text);
              g_array_append_val (comm, iv);
            }
          else
            g_array_append_val (compute, iv);
        }
      else if (ev.name_len > 5 && memcmp (ev.name, "gloo:", 5) == 0
               && str_eq (ev.cat, ev.cat_len, "user_annotation"))
        {
          /* a gloo collective: kineto records it on gloo's worker thread as
           * "gloo:all_reduce" with no args (no group, no Seq), so it is
           * matched by order in one unnamed group; it is host time, counted
           * as communication in the steps */
          WickRankCollective c = { 0 };
          Interval iv = { s, e };
          g_string_truncate (text, 0);
          for (gsize i = 5; i < ev.name_len && text->len < 64; i++)
            g_string_append_c (text, g_ascii_tolower (ev.name[i]));
          c.name = intern (p, text->str, text->len);
          c.group = "";
          c.group_key = "gloo@0";
          c.seq = -1;
          c.start_ns = s;
          c.end_ns = e;
          p->pub.gloo_ops++;
          p->pub.unknown_dtype++;
          if (p->pub.collectives->len < MAX_COLLECTIVES)
            g_array_append_val (p->pub.collectives, c);
          g_array_append_val (comm, iv);
        }
      else if (ev.name_len > 13 && memcmp (ev.name, "ProfilerStep#", 13) == 0
               && !str_eq (ev.cat, ev.cat_len, "gpu_user_annotation"))
        {
          WickRankStep st = { 0 };
          char num[24];
          gsize n = MIN (ev.name_len - 13, sizeof num - 1);
          memcpy (num, ev.name + 13, n);
          num[n] = '\0';
          st.step = g_ascii_strtoll (num, NULL, 10);
          st.start_ns = s;
          st.end_ns = e;
          if (p->pub.steps->len < MAX_STEPS)
            g_array_append_val (p->pub.steps, st);
        }
    }
  if (local != NULL)
    {
      g_propagate_error (error, local);
      wick_rank_partial_free (&p->pub);
      return NULL;
    }
  if (wick_chrome_reader_get_warnings (reader) != NULL)
    {
      const GPtrArray *w = wick_chrome_reader_get_warnings (reader);
      for (guint i = 0; i < w->len; i++)
        warn (&p->pub, "%s", (const char *)w->pdata[i]);
    }
  read_metadata (p, wick_chrome_reader_get_metadata (reader));
  if (p->pub.rank < 0 && (p->pub.rank = rank_from_name (path)) >= 0)
    p->pub.rank_source = g_strdup ("file name");
  if (p->pub.nccl_kernels == 0 && p->pub.gloo_ops == 0)
    warn (&p->pub, "no NCCL kernels or gloo collectives: nothing to align this rank's clock by");
  else if (p->pub.nccl_without_group > 0)
    warn (&p->pub,
          "%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
          " NCCL kernels have no Process Group Name: matched as one unnamed group",
          p->pub.nccl_without_group, p->pub.nccl_kernels);

  /* the rank's raw clock: baseTimeNanoseconds + ts */
  if (p->pub.has_base)
    {
      for (guint i = 0; i < p->pub.collectives->len; i++)
        {
          WickRankCollective *c = &g_array_index (p->pub.collectives, WickRankCollective, i);
          c->start_ns += p->pub.base_ns;
          c->end_ns += p->pub.base_ns;
        }
      for (guint i = 0; i < compute->len; i++)
        {
          g_array_index (compute, Interval, i).s += p->pub.base_ns;
          g_array_index (compute, Interval, i).e += p->pub.base_ns;
        }
      for (guint i = 0; i < comm->len; i++)
        {
          g_array_index (comm, Interval, i).s += p->pub.base_ns;
          g_array_index (comm, Interval, i).e += p->pub.base_ns;
        }
      for (guint i = 0; i < p->pub.steps->len; i++)
        {
          g_array_index (p->pub.steps, WickRankStep, i).start_ns += p->pub.base_ns;
          g_array_index (p->pub.steps, WickRankStep, i).end_ns += p->pub.base_ns;
        }
      p->pub.first_ns += p->pub.base_ns;
      p->pub.last_ns += p->pub.base_ns;
    }

  /* in time order: the order fallback counts a group's collectives as they
   * ran, not as the file lists them (kineto writes thread by thread) */
  g_array_sort (p->pub.collectives, cmp_rank_collective);

  /* each step's GPU time: the unions of compute and of NCCL work inside its window */
  union_intervals (compute);
  union_intervals (comm);
  g_array_sort (p->pub.steps, cmp_step);
  for (guint i = 0; i < p->pub.steps->len; i++)
    {
      WickRankStep *st = &g_array_index (p->pub.steps, WickRankStep, i);
      gint64 c = covered (compute, st->start_ns, st->end_ns);
      gint64 m = covered (comm, st->start_ns, st->end_ns);
      gint64 both = overlap (compute, comm, st->start_ns, st->end_ns);
      st->compute_ns = c;
      st->comm_ns = m;
      st->exposed_comm_ns = m - both;
      st->idle_ns = MAX (0, (st->end_ns - st->start_ns) - (c + m - both));
    }
  if (p->pub.steps->len == 0)
    warn (&p->pub, "no ProfilerStep windows: no per-step figures");
  return &p->pub;
}

/* ------------------------------------------------------------------------ */
/* Partials as JSON */

/* json-glib writes U+001F unescaped (it escapes the other control
 * characters), which is not JSON: a name from a file carrying one gets
 * U+FFFD there instead. */
static void
add_str (JsonBuilder *b, const char *s)
{
  if (strchr (s, 0x1f) == NULL)
    json_builder_add_string_value (b, s);
  else
    {
      g_autoptr (GString) t = g_string_new (NULL);
      for (const char *p = s; *p; p++)
        if (*p == 0x1f)
          g_string_append (t, "\xef\xbf\xbd");
        else
          g_string_append_c (t, *p);
      json_builder_add_string_value (b, t->str);
    }
}

static void
add_int (JsonBuilder *b, const char *key, gint64 v)
{
  json_builder_set_member_name (b, key);
  json_builder_add_int_value (b, v);
}

char *
wick_rank_partial_to_json (const WickRankPartial *p)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = NULL;

  json_builder_begin_object (b);
  add_int (b, "wick_rank_partial", 1);
  json_builder_set_member_name (b, "file");
  add_str (b, p->file);
  add_int (b, "rank", p->rank);
  json_builder_set_member_name (b, "rank_source");
  add_str (b, p->rank_source ? p->rank_source : "");
  add_int (b, "world_size", p->world_size);
  json_builder_set_member_name (b, "base_ns");
  if (p->has_base)
    json_builder_add_int_value (b, p->base_ns);
  else
    json_builder_add_null_value (b);
  add_int (b, "first_ns", p->first_ns);
  add_int (b, "last_ns", p->last_ns);
  add_int (b, "events", (gint64)p->events);
  add_int (b, "gpu_events", (gint64)p->gpu_events);
  add_int (b, "nccl_kernels", (gint64)p->nccl_kernels);
  add_int (b, "nccl_without_group", (gint64)p->nccl_without_group);
  add_int (b, "gloo_ops", (gint64)p->gloo_ops);
  add_int (b, "unknown_dtype", (gint64)p->unknown_dtype);
  json_builder_set_member_name (b, "warnings");
  json_builder_begin_array (b);
  for (guint i = 0; i < p->warnings->len; i++)
    add_str (b, p->warnings->pdata[i]);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "collectives");
  json_builder_begin_array (b);
  for (guint i = 0; i < p->collectives->len; i++)
    {
      const WickRankCollective *c = &g_array_index (p->collectives, WickRankCollective, i);
      json_builder_begin_array (b);
      add_str (b, c->group);
      add_str (b, c->group_key);
      add_str (b, c->name);
      json_builder_add_int_value (b, c->seq);
      json_builder_add_int_value (b, c->start_ns);
      json_builder_add_int_value (b, c->end_ns);
      json_builder_add_int_value (b, (gint64)MIN (c->bytes, (guint64)G_MAXINT64));
      json_builder_add_int_value (b, c->group_size);
      json_builder_end_array (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "steps");
  json_builder_begin_array (b);
  for (guint i = 0; i < p->steps->len; i++)
    {
      const WickRankStep *s = &g_array_index (p->steps, WickRankStep, i);
      json_builder_begin_array (b);
      json_builder_add_int_value (b, s->step);
      json_builder_add_int_value (b, s->start_ns);
      json_builder_add_int_value (b, s->end_ns);
      json_builder_add_int_value (b, s->compute_ns);
      json_builder_add_int_value (b, s->comm_ns);
      json_builder_add_int_value (b, s->exposed_comm_ns);
      json_builder_add_int_value (b, s->idle_ns);
      json_builder_end_array (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  return json_generator_to_data (gen, NULL);
}

/* ---- reading a partial back ------------------------------------------------
 *
 * A partial is Wick's own document (wick_rank_partial_to_json above), read
 * from a file another process wrote: strict JSON by the model's scanner,
 * streamed (no tree: a partial of 50 M collectives is read in one pass), each
 * known member at most once, every row checked as it comes. */

enum
{
  PK_MARK,
  PK_FILE,
  PK_RANK,
  PK_WORLD_SIZE,
  PK_FIRST_NS,
  PK_LAST_NS,
  PK_EVENTS,
  PK_GPU_EVENTS,
  PK_NCCL_KERNELS,
  PK_NCCL_WITHOUT_GROUP,
  PK_GLOO_OPS,
  PK_UNKNOWN_DTYPE,
  PK_RANK_SOURCE,
  PK_BASE_NS,
  PK_WARNINGS,
  PK_COLLECTIVES,
  PK_STEPS,
  PK_N
};

static const char *const partial_keys[PK_N]
  = { "wick_rank_partial", "file",        "rank",     "world_size",         "first_ns",
      "last_ns",           "events",      "gpu_events", "nccl_kernels",     "nccl_without_group",
      "gloo_ops",          "unknown_dtype", "rank_source", "base_ns",       "warnings",
      "collectives",       "steps" };

typedef struct
{
  WickJsonScanner scanner;
  const char *name; /* the file, for messages */
  GError **error;
} PartialReader;

/* An integer that fits gint64 at the cursor: *@is_int says whether it was
 * one (any other value is stepped over). */
static gboolean
partial_read_int (WickJsonScanner *s, gint64 *out, gboolean *is_int)
{
  WickJsonType type;
  *is_int = FALSE;
  if (!wick_json_peek_type (s, &type))
    return FALSE;
  if (type != WICK_JSON_NUMBER)
    return wick_json_skip_value (s);
  WickJsonNumber number;
  if (!wick_json_read_number (s, &number))
    return FALSE;
  if (number.kind == WICK_JSON_U64 && number.u64 <= (guint64)G_MAXINT64)
    *out = (gint64)number.u64, *is_int = TRUE;
  else if (number.kind == WICK_JSON_I64)
    *out = number.i64, *is_int = TRUE;
  return TRUE;
}

/* A string at the cursor into @str/@len (NULL when the value is not one). */
static gboolean
partial_read_string (WickJsonScanner *s, const char **str, gsize *len)
{
  WickJsonType type;
  *str = NULL;
  *len = 0;
  if (!wick_json_peek_type (s, &type))
    return FALSE;
  if (type != WICK_JSON_STRING)
    return wick_json_skip_value (s);
  return wick_json_read_string (s, str, len);
}

typedef enum
{
  ROW_OK,
  ROW_BAD,    /* not the row's shape or types */
  ROW_FAILED, /* not JSON: the scanner's error */
} RowResult;

/* One row at the cursor: @n_strings strings, then integers up to @n in all,
 * exactly @n elements. */
static RowResult
partial_read_row (WickJsonScanner *s, guint n_strings, guint n, const char **strings,
                  gsize *lengths, gint64 *ints)
{
  WickJsonType type;
  if (!wick_json_peek_type (s, &type))
    return ROW_FAILED;
  if (type != WICK_JSON_ARRAY)
    return ROW_BAD;
  if (!wick_json_array_begin (s))
    return ROW_FAILED;
  gboolean first = TRUE;
  guint i = 0;
  while (wick_json_array_next (s, &first))
    {
      if (i == n)
        return ROW_BAD;
      gboolean ok;
      if (i < n_strings)
        {
          if (!partial_read_string (s, &strings[i], &lengths[i]))
            return ROW_FAILED;
          ok = strings[i] != NULL;
        }
      else if (!partial_read_int (s, &ints[i - n_strings], &ok))
        return ROW_FAILED;
      if (!ok)
        return ROW_BAD;
      i++;
    }
  if (wick_json_failed (s))
    return ROW_FAILED;
  return i == n ? ROW_OK : ROW_BAD;
}

static gboolean
partial_syntax_error (PartialReader *r)
{
  g_set_error (r->error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID, "%s: %s at byte %td",
               r->name, r->scanner.error->str, r->scanner.p - r->scanner.start);
  return FALSE;
}

static gboolean
partial_too_many (PartialReader *r, const char *key, guint max)
{
  g_set_error (r->error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID,
               "%s: \"%s\" must be an array of at most %u rows", r->name, key, max);
  return FALSE;
}

static gboolean
partial_read_collectives (PartialReader *r, Partial *p)
{
  WickJsonScanner *s = &r->scanner;
  WickJsonType type;
  if (!wick_json_peek_type (s, &type))
    return partial_syntax_error (r);
  if (type != WICK_JSON_ARRAY)
    return partial_too_many (r, "collectives", MAX_COLLECTIVES);
  if (!wick_json_array_begin (s))
    return partial_syntax_error (r);
  gboolean first = TRUE;
  for (guint i = 0; wick_json_array_next (s, &first); i++)
    {
      if (i == MAX_COLLECTIVES)
        return partial_too_many (r, "collectives", MAX_COLLECTIVES);
      const char *str[3];
      gsize len[3];
      gint64 v[5]; /* seq, start_ns, end_ns, bytes, group_size */
      RowResult row = partial_read_row (s, 3, 8, str, len, v);
      if (row == ROW_FAILED)
        return partial_syntax_error (r);
      if (row == ROW_BAD || v[0] < -1 || v[2] < v[1] || v[3] < 0 || v[4] < 0 || v[4] >= (1 << 24))
        {
          g_set_error (r->error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID,
                       "%s: collectives[%u] must be [group, group_key, name, seq >= -1, start_ns, "
                       "end_ns >= start_ns, bytes >= 0, group_size]",
                       r->name, i);
          return FALSE;
        }
      WickRankCollective c = { 0 };
      c.group = intern (p, str[0], len[0]);
      c.group_key = intern (p, str[1], len[1]);
      c.name = intern (p, str[2], len[2]);
      c.seq = v[0];
      c.start_ns = v[1];
      c.end_ns = v[2];
      c.bytes = (guint64)v[3];
      c.group_size = (guint)v[4];
      g_array_append_val (p->pub.collectives, c);
    }
  return wick_json_failed (s) ? partial_syntax_error (r) : TRUE;
}

static gboolean
partial_read_steps (PartialReader *r, Partial *p)
{
  WickJsonScanner *s = &r->scanner;
  WickJsonType type;
  if (!wick_json_peek_type (s, &type))
    return partial_syntax_error (r);
  if (type != WICK_JSON_ARRAY)
    return partial_too_many (r, "steps", MAX_STEPS);
  if (!wick_json_array_begin (s))
    return partial_syntax_error (r);
  gboolean first = TRUE;
  for (guint i = 0; wick_json_array_next (s, &first); i++)
    {
      if (i == MAX_STEPS)
        return partial_too_many (r, "steps", MAX_STEPS);
      gint64 v[7];
      RowResult row = partial_read_row (s, 0, 7, NULL, NULL, v);
      if (row == ROW_FAILED)
        return partial_syntax_error (r);
      if (row == ROW_BAD || v[2] < v[1])
        {
          g_set_error (r->error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID,
                       "%s: steps[%u] must be [step, start_ns, end_ns >= start_ns, compute_ns, "
                       "comm_ns, exposed_comm_ns, idle_ns]",
                       r->name, i);
          return FALSE;
        }
      WickRankStep st = { v[0], v[1], v[2], v[3], v[4], v[5], v[6] };
      g_array_append_val (p->pub.steps, st);
    }
  return wick_json_failed (s) ? partial_syntax_error (r) : TRUE;
}

static gboolean
partial_read_warnings (PartialReader *r, Partial *p)
{
  WickJsonScanner *s = &r->scanner;
  WickJsonType type;
  if (!wick_json_peek_type (s, &type))
    return partial_syntax_error (r);
  if (type != WICK_JSON_ARRAY)
    return wick_json_skip_value (s) || partial_syntax_error (r);
  if (!wick_json_array_begin (s))
    return partial_syntax_error (r);
  gboolean first = TRUE;
  while (wick_json_array_next (s, &first))
    {
      const char *w;
      gsize len;
      if (!partial_read_string (s, &w, &len))
        return partial_syntax_error (r);
      if (w != NULL && p->pub.warnings->len < MAX_WARNINGS)
        g_ptr_array_add (p->pub.warnings, g_strndup (w, MIN (len, 1024)));
    }
  return wick_json_failed (s) ? partial_syntax_error (r) : TRUE;
}

/* The members of the partial's object, into @p and @ints / @has_int. */
static gboolean
partial_read_members (PartialReader *r, Partial *p, gboolean *seen, gint64 *ints,
                      gboolean *has_int)
{
  WickJsonScanner *s = &r->scanner;
  gboolean first = TRUE;
  const char *key;
  gsize key_len;
  if (!wick_json_object_begin (s))
    return partial_syntax_error (r);
  while (wick_json_object_next (s, &first, &key, &key_len))
    {
      guint k = 0;
      while (k < PK_N && !(strlen (partial_keys[k]) == key_len
                           && memcmp (partial_keys[k], key, key_len) == 0))
        k++;
      if (k == PK_N)
        {
          if (!wick_json_skip_value (s))
            return partial_syntax_error (r);
          continue;
        }
      if (seen[k])
        {
          g_set_error (r->error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID,
                       "%s: \"%s\" appears twice", r->name, partial_keys[k]);
          return FALSE;
        }
      seen[k] = TRUE;
      const char *str;
      gsize len;
      gboolean ok = TRUE;
      switch (k)
        {
          case PK_MARK:
            ok = wick_json_skip_value (s);
            break;
          case PK_FILE:
            if ((ok = partial_read_string (s, &str, &len)) && str != NULL)
              {
                g_free (p->pub.file);
                p->pub.file = g_strndup (str, len);
              }
            break;
          case PK_RANK_SOURCE:
            if ((ok = partial_read_string (s, &str, &len)) && str != NULL && len > 0)
              p->pub.rank_source = g_strndup (str, MIN (len, MAX_NAME_BYTES));
            break;
          case PK_WARNINGS:
            if (!partial_read_warnings (r, p))
              return FALSE;
            break;
          case PK_COLLECTIVES:
            if (!partial_read_collectives (r, p))
              return FALSE;
            break;
          case PK_STEPS:
            if (!partial_read_steps (r, p))
              return FALSE;
            break;
          default: /* the integers, base_ns among them */
            ok = partial_read_int (s, &ints[k], &has_int[k]);
            break;
        }
      if (!ok)
        return partial_syntax_error (r);
    }
  return wick_json_failed (s) ? partial_syntax_error (r) : TRUE;
}

WickRankPartial *
wick_rank_partial_from_json (const char *json, gsize len, const char *name, GError **error)
{
  if (len > MAX_PARTIAL_JSON)
    {
      g_set_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID,
                   "%s: a rank's partial is larger than %" G_GSIZE_FORMAT " bytes", name,
                   MAX_PARTIAL_JSON);
      return NULL;
    }
  if (!wick_utf8_validate (json, len))
    {
      g_set_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID,
                   "%s: a rank's partial is not valid UTF-8", name);
      return NULL;
    }
  g_autoptr (GString) message = g_string_new (NULL);
  g_autofree char *unescape = g_malloc (len + 1);
  PartialReader r = { .name = name, .error = error };
  wick_json_scanner_init (&r.scanner, json, json + len, message, unescape);
  WickJsonType type;
  if (!wick_json_peek_type (&r.scanner, &type))
    {
      partial_syntax_error (&r);
      return NULL;
    }
  if (type != WICK_JSON_OBJECT)
    {
      g_set_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID,
                   "%s: not a rank partial (wick-trace ranks --partial writes them)", name);
      return NULL;
    }
  Partial *p = partial_new (name);
  gboolean seen[PK_N] = { FALSE }, has_int[PK_N] = { FALSE };
  gint64 ints[PK_N] = { 0 };
  if (!partial_read_members (&r, p, seen, ints, has_int))
    goto fail;
  wick_json_skip_whitespace (&r.scanner);
  if (r.scanner.p != r.scanner.end)
    {
      wick_json_fail (&r.scanner, "trailing characters");
      partial_syntax_error (&r);
      goto fail;
    }
  if (!seen[PK_MARK])
    {
      g_set_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID,
                   "%s: not a rank partial (wick-trace ranks --partial writes them)", name);
      goto fail;
    }
  static const struct
  {
    guint key;
    gint64 min, max;
  } bounds[] = {
    { PK_RANK, -1, (1 << 24) - 1 },       { PK_WORLD_SIZE, 0, (1 << 24) - 1 },
    { PK_FIRST_NS, G_MININT64, G_MAXINT64 }, { PK_LAST_NS, G_MININT64, G_MAXINT64 },
    { PK_EVENTS, 0, G_MAXINT64 },         { PK_GPU_EVENTS, 0, G_MAXINT64 },
    { PK_NCCL_KERNELS, 0, G_MAXINT64 },   { PK_NCCL_WITHOUT_GROUP, 0, G_MAXINT64 },
    { PK_GLOO_OPS, 0, G_MAXINT64 },       { PK_UNKNOWN_DTYPE, 0, G_MAXINT64 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (bounds); i++)
    {
      guint k = bounds[i].key;
      if (!has_int[k] || ints[k] < bounds[i].min || ints[k] > bounds[i].max)
        {
          g_set_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID,
                       "%s: \"%s\" must be an integer from %" G_GINT64_FORMAT
                       " to %" G_GINT64_FORMAT,
                       name, partial_keys[k], bounds[i].min, bounds[i].max);
          goto fail;
        }
    }
  if (!seen[PK_COLLECTIVES])
    {
      partial_too_many (&r, "collectives", MAX_COLLECTIVES);
      goto fail;
    }
  if (!seen[PK_STEPS])
    {
      partial_too_many (&r, "steps", MAX_STEPS);
      goto fail;
    }
  p->pub.rank = (int)ints[PK_RANK];
  p->pub.world_size = (int)ints[PK_WORLD_SIZE];
  p->pub.first_ns = ints[PK_FIRST_NS];
  p->pub.last_ns = ints[PK_LAST_NS];
  p->pub.events = (guint64)ints[PK_EVENTS];
  p->pub.gpu_events = (guint64)ints[PK_GPU_EVENTS];
  p->pub.nccl_kernels = (guint64)ints[PK_NCCL_KERNELS];
  p->pub.nccl_without_group = (guint64)ints[PK_NCCL_WITHOUT_GROUP];
  p->pub.gloo_ops = (guint64)ints[PK_GLOO_OPS];
  p->pub.unknown_dtype = (guint64)ints[PK_UNKNOWN_DTYPE];
  if (has_int[PK_BASE_NS])
    {
      p->pub.base_ns = ints[PK_BASE_NS];
      p->pub.has_base = TRUE;
    }
  return &p->pub;
fail:
  wick_rank_partial_free (&p->pub);
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* The merge */

double
wick_collective_busbw_factor (const char *name, guint n)
{
  char norm[64];
  gsize k = 0;
  double f = n > 0 ? (double)(n - 1) / n : 1;

  for (const char *s = name; *s && k + 1 < sizeof norm; s++)
    if (g_ascii_isalnum (*s))
      norm[k++] = g_ascii_tolower (*s);
  norm[k] = '\0';
  if (n == 0)
    return 1;
  if (strstr (norm, "allreduce") || strstr (norm, "barrier"))
    return 2 * f;
  if (strstr (norm, "allgather") || strstr (norm, "reducescatter") || strstr (norm, "alltoall"))
    return f;
  return 1;
}

typedef struct
{
  guint idx; /* into job->ranks */
  gint64 s, e;
} Entry;

typedef struct
{
  const WickRankCollective *first;
  gint64 seq;
  gboolean by_seq;
  GArray *entries; /* Entry */
  guint index;     /* in the merge's list of instances */
  WickJobCollective *collective;
} Instance;

static void
instance_free (gpointer data)
{
  Instance *in = data;
  g_array_unref (in->entries);
  g_free (in);
}

static void
job_collective_free (gpointer data)
{
  WickJobCollective *c = data;
  g_free (c->group);
  g_free (c->name);
  g_array_unref (c->ranks);
  g_free (c);
}

void
wick_rank_job_free (WickRankJob *job)
{
  if (job == NULL)
    return;
  for (guint i = 0; i < job->ranks->len; i++)
    {
      g_free (g_array_index (job->ranks, WickJobRank, i).file);
      g_free (g_array_index (job->ranks, WickJobRank, i).collective_index);
    }
  g_array_unref (job->ranks);
  g_ptr_array_unref (job->collectives);
  g_array_unref (job->stragglers);
  g_ptr_array_unref (job->notes);
  g_ptr_array_unref (job->partials);
  g_free (job);
}

static int
cmp_i64 (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *)a, y = *(const gint64 *)b;
  return x < y ? -1 : x > y;
}

/* The median of @v (sorted in place); 0 for none. */
static gint64
median (GArray *v)
{
  gint64 *x = (gint64 *)(void *)v->data;
  if (v->len == 0)
    return 0;
  g_array_sort (v, cmp_i64);
  if (v->len % 2)
    return x[v->len / 2];
  return x[v->len / 2 - 1] + (x[v->len / 2] - x[v->len / 2 - 1]) / 2;
}

static int
cmp_partial_rank (gconstpointer a, gconstpointer b)
{
  const WickRankPartial *x = *(WickRankPartial *const *)a, *y = *(WickRankPartial *const *)b;
  return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int
cmp_collective (gconstpointer a, gconstpointer b)
{
  const WickJobCollective *x = *(WickJobCollective *const *)a, *y = *(WickJobCollective *const *)b;
  if (x->first_start_ns != y->first_start_ns)
    return x->first_start_ns < y->first_start_ns ? -1 : 1;
  return strcmp (x->group, y->group);
}

static int
cmp_straggler (gconstpointer a, gconstpointer b)
{
  const WickJobStraggler *x = a, *y = b;
  if (x->delay_ns != y->delay_ns)
    return x->delay_ns > y->delay_ns ? -1 : 1;
  return x->rank - y->rank;
}

static void note (WickRankJob *job, const char *format, ...) G_GNUC_PRINTF (2, 3);
static void
note (WickRankJob *job, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_ptr_array_add (job->notes, g_strdup_vprintf (format, args));
  va_end (args);
}

/* T_c, the collective's end on the reference clock: the median aligned end of
 * its aligned entries, leaving out the ranks whose offset was set by hand
 * (@fixed, may be NULL) unless they are all it has: a hand offset places its
 * rank, it does not move the estimated ones. FALSE when none is aligned. */
static gboolean
instance_end (const Instance *in, const gint64 *off, const gboolean *aligned,
              const gboolean *fixed, GArray *scratch, gint64 *t)
{
  for (int pass = 0; pass < 2; pass++)
    {
      g_array_set_size (scratch, 0);
      for (guint k = 0; k < in->entries->len; k++)
        {
          const Entry *en = &g_array_index (in->entries, Entry, k);
          if (aligned[en->idx] && (pass == 1 || fixed == NULL || !fixed[en->idx]))
            {
              gint64 v = en->e + off[en->idx];
              g_array_append_val (scratch, v);
            }
        }
      if (scratch->len > 0)
        {
          *t = median (scratch);
          return TRUE;
        }
    }
  return FALSE;
}

static guint
rank_index (const WickRankJob *job, int rank)
{
  for (guint i = 0; i < job->ranks->len; i++)
    if (g_array_index (job->ranks, WickJobRank, i).rank == rank)
      return i;
  return G_MAXUINT;
}

/* NULL when @a fits @job's ranks, else the reason. */
static char *
alignment_problem (const WickRankJob *job, const WickRanksAlignment *a)
{
  if (a->pin_rank >= 0 && rank_index (job, a->pin_rank) == G_MAXUINT)
    return g_strdup_printf ("pin: the job has no rank %d", a->pin_rank);
  if (a->pin_rank < -1)
    return g_strdup_printf ("pin: %d is not a rank", a->pin_rank);
  for (guint k = 0; k < a->n_set; k++)
    {
      if (rank_index (job, a->set_ranks[k]) == G_MAXUINT)
        return g_strdup_printf ("offset: the job has no rank %d", a->set_ranks[k]);
      if (a->set_ranks[k] == a->pin_rank)
        return g_strdup_printf ("offset: rank %d is pinned (its offset is 0 by definition)",
                                a->set_ranks[k]);
      if (ABS (a->set_offsets_ns[k]) > (gint64)1000000 * 1000000000)
        return g_strdup_printf ("offset: rank %d's offset is more than 10⁶ s", a->set_ranks[k]);
      for (guint j = 0; j < k; j++)
        if (a->set_ranks[j] == a->set_ranks[k])
          return g_strdup_printf ("offset: rank %d is set twice", a->set_ranks[k]);
    }
  return NULL;
}

gboolean
wick_ranks_parse_offset (const char *text, gint64 default_unit_ns, gint64 *ns, GError **error)
{
  static const struct
  {
    const char *name;
    gint64 ns;
  } units[] = { { "ns", 1 }, { "us", 1000 }, { "µs", 1000 }, { "ms", 1000000 }, { "s", 1000000000 } };
  const char *p = text;
  gboolean negative = FALSE, digits = FALSE;
  gint64 whole = 0, unit = default_unit_ns;
  double frac = 0, scale = 0.1, v;

  while (*p == ' ')
    p++;
  if (*p == '-' || *p == '+' || g_str_has_prefix (p, "−"))
    {
      negative = *p == '-' || (guchar)*p == 0xe2;
      p += (guchar)*p == 0xe2 ? strlen ("−") : 1;
    }
  for (; g_ascii_isdigit (*p); p++, digits = TRUE)
    {
      if (whole > (gint64)1000000000000000)
        goto bad;
      whole = whole * 10 + (*p - '0');
    }
  if (*p == '.')
    for (p++; g_ascii_isdigit (*p); p++, digits = TRUE, scale /= 10)
      frac += (*p - '0') * scale;
  if (!digits)
    goto bad;
  while (*p == ' ')
    p++;
  if (*p != '\0')
    {
      guint k;
      for (k = 0; k < G_N_ELEMENTS (units); k++)
        if (g_str_has_prefix (p, units[k].name))
          {
            const char *q = p + strlen (units[k].name);
            while (*q == ' ')
              q++;
            if (*q == '\0')
              break;
          }
      if (k == G_N_ELEMENTS (units))
        goto bad;
      unit = units[k].ns;
    }
  v = ((double)whole + frac) * (double)unit;
  if (v > 1e15)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "“%s”: an offset of more than 10⁶ s", text);
      return FALSE;
    }
  *ns = (gint64)(v + 0.5);
  if (negative)
    *ns = -*ns;
  return TRUE;
bad:
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
               "“%s” is not an offset (a number and ns, µs, ms or s: “-1.25 ms”)", text);
  return FALSE;
}

WickRankJob *
wick_ranks_merge (GPtrArray *partials, GError **error)
{
  return wick_ranks_merge_aligned (partials, NULL, error);
}

WickRankJob *
wick_rank_job_realign (WickRankJob *job, const WickRanksAlignment *alignment, GError **error)
{
  g_autofree char *problem = alignment ? alignment_problem (job, alignment) : NULL;
  GPtrArray *partials;
  if (problem != NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "%s", problem);
      return NULL;
    }
  partials = g_steal_pointer (&job->partials);
  job->partials = g_ptr_array_new ();
  wick_rank_job_free (job);
  return wick_ranks_merge_aligned (partials, alignment, error);
}

WickRankJob *
wick_ranks_merge_aligned (GPtrArray *partials, const WickRanksAlignment *alignment,
                          GError **error)
{
  static const WickRanksAlignment defaults = WICK_RANKS_ALIGNMENT_INIT;
  g_autofree gboolean *fixed = NULL;
  guint ref = G_MAXUINT;
  g_autoptr (GHashTable) table
    = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, instance_free);
  g_autoptr (GPtrArray) instances = g_ptr_array_new ();
  g_autoptr (GArray) scratch = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GString) key = g_string_new (NULL);
  g_autofree gint64 *off = NULL;
  g_autofree gboolean *aligned = NULL;
  g_autofree GArray **samples = NULL;
  WickRankJob *job = g_new0 (WickRankJob, 1);
  guint n;
  int next_free = 0;
  guint64 duplicates = 0;

  job->partials = partials;
  job->ranks = g_array_new (FALSE, TRUE, sizeof (WickJobRank));
  job->collectives = g_ptr_array_new_with_free_func (job_collective_free);
  job->stragglers = g_array_new (FALSE, FALSE, sizeof (WickJobStraggler));
  job->notes = g_ptr_array_new_with_free_func (g_free);
  job->reference_rank = -1;
  job->pinned_rank = -1;
  job->warmup_end_ns = -1;
  n = partials->len;
  if (alignment == NULL)
    alignment = &defaults;

  /* ranks: those known first; a file without one takes the lowest free number */
  g_ptr_array_sort (partials, cmp_partial_rank);
  for (guint i = 0; i < n; i++)
    {
      WickRankPartial *p = partials->pdata[i];
      if (p->rank < 0)
        continue;
      for (guint j = i + 1; j < n; j++)
        {
          WickRankPartial *q = partials->pdata[j];
          if (q->rank == p->rank)
            {
              g_set_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID,
                           "%s and %s both are rank %d (from their %s and %s)", p->file, q->file,
                           p->rank, p->rank_source, q->rank_source);
              wick_rank_job_free (job);
              return NULL;
            }
          if (q->rank > p->rank)
            break;
        }
    }
  for (guint i = 0; i < n; i++)
    {
      WickRankPartial *p = partials->pdata[i];
      if (p->rank >= 0)
        continue;
      for (gboolean used = TRUE; used; next_free++)
        {
          used = FALSE;
          for (guint j = 0; j < n && !used; j++)
            used = ((WickRankPartial *)partials->pdata[j])->rank == next_free;
          if (!used)
            break;
        }
      p->rank = next_free++;
      p->rank_source = g_strdup ("order");
      note (job,
            "%s names no rank (no distributedInfo.rank, no rank in its name): taken as rank %d",
            p->file, p->rank);
    }
  g_ptr_array_sort (partials, cmp_partial_rank);

  for (guint i = 0; i < n; i++)
    {
      WickRankPartial *p = partials->pdata[i];
      WickJobRank r = { 0 };
      g_autoptr (GHashTable) order = g_hash_table_new (g_str_hash, g_str_equal);
      r.rank = p->rank;
      r.file = g_strdup (p->file);
      r.offset_spread_ns = -1;
      r.partial = p;
      r.collective_index = g_new (guint, MAX (p->collectives->len, 1));
      g_array_append_val (job->ranks, r);
      for (guint k = 0; k < p->collectives->len; k++)
        {
          const WickRankCollective *c = &g_array_index (p->collectives, WickRankCollective, k);
          gint64 seq = c->seq;
          gboolean by_seq = seq >= 0;
          Instance *in;
          Entry en = { i, c->start_ns, c->end_ns };
          if (!by_seq)
            {
              /* the documented fallback: the k-th collective of a communicator on every rank */
              gpointer cnt = g_hash_table_lookup (order, c->group_key);
              seq = GPOINTER_TO_SIZE (cnt);
              g_hash_table_insert (order, (gpointer)c->group_key,
                                   GSIZE_TO_POINTER ((gsize)seq + 1));
              job->any_without_seq = TRUE;
            }
          g_string_printf (key, "%c%s\x1e%" G_GINT64_FORMAT, by_seq ? 'S' : 'O', c->group_key, seq);
          in = g_hash_table_lookup (table, key->str);
          if (in == NULL)
            {
              in = g_new0 (Instance, 1);
              in->first = c;
              in->seq = seq;
              in->by_seq = by_seq;
              in->entries = g_array_new (FALSE, FALSE, sizeof (Entry));
              in->index = instances->len;
              g_hash_table_insert (table, g_strdup (key->str), in);
              g_ptr_array_add (instances, in);
            }
          /* for now the instance's place; its collective's index once sorted */
          g_array_index (job->ranks, WickJobRank, i).collective_index[k] = in->index;
          if (in->entries->len > 0
              && g_array_index (in->entries, Entry, in->entries->len - 1).idx == i)
            {
              /* one collective in several kernels on this rank: its first start, last end */
              Entry *last = &g_array_index (in->entries, Entry, in->entries->len - 1);
              last->s = MIN (last->s, en.s);
              last->e = MAX (last->e, en.e);
              duplicates++;
            }
          else
            g_array_append_val (in->entries, en);
          if (in->first->bytes == 0 && c->bytes > 0)
            in->first = c;
        }
    }
  {
    g_autofree char *problem = alignment_problem (job, alignment);
    if (problem != NULL)
      {
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "%s", problem);
        wick_rank_job_free (job);
        return NULL;
      }
  }
  if (job->any_without_seq)
    note (job, "some collectives have no Seq (NCCL kernels without it, gloo): they are matched by "
               "their order of "
               "appearance within their process group");
  if (duplicates > 0)
    note (job,
          "%" G_GUINT64_FORMAT " kernels repeat a collective already seen on their rank: each "
          "rank's part is taken from its first start to its last end",
          duplicates);

  /* offsets: breadth-first from the reference rank over shared collectives,
   * each rank's offset the median over its collectives of (the collective's
   * end on the aligned ranks' clock − its own end); then two rounds of
   * refinement against every aligned rank */
  off = g_new0 (gint64, MAX (n, 1));
  aligned = g_new0 (gboolean, MAX (n, 1));
  fixed = g_new0 (gboolean, MAX (n, 1));
  samples = g_new0 (GArray *, MAX (n, 1));
  for (guint i = 0; i < n; i++)
    samples[i] = g_array_new (FALSE, FALSE, sizeof (gint64));
  {
    for (guint k = 0; k < instances->len; k++)
      {
        Instance *in = instances->pdata[k];
        if (in->entries->len >= 2)
          ref = MIN (ref, g_array_index (in->entries, Entry, 0).idx);
      }
    if (alignment->pin_rank >= 0)
      {
        ref = rank_index (job, alignment->pin_rank);
        job->pinned_rank = alignment->pin_rank;
      }
    if (ref != G_MAXUINT)
      {
        aligned[ref] = TRUE;
        job->reference_rank = g_array_index (job->ranks, WickJobRank, ref).rank;
      }
    for (guint k = 0; k < alignment->n_set; k++)
      {
        guint i = rank_index (job, alignment->set_ranks[k]);
        off[i] = alignment->set_offsets_ns[k];
        aligned[i] = fixed[i] = TRUE;
      }
    for (gboolean progress = ref != G_MAXUINT || alignment->n_set > 0; progress;)
      {
        progress = FALSE;
        for (guint i = 0; i < n; i++)
          g_array_set_size (samples[i], 0);
        for (guint k = 0; k < instances->len; k++)
          {
            Instance *in = instances->pdata[k];
            gint64 t;
            if (!instance_end (in, off, aligned, fixed, scratch, &t))
              continue;
            for (guint e = 0; e < in->entries->len; e++)
              {
                const Entry *en = &g_array_index (in->entries, Entry, e);
                if (!aligned[en->idx])
                  {
                    gint64 d = t - en->e;
                    g_array_append_val (samples[en->idx], d);
                  }
              }
          }
        for (guint i = 0; i < n; i++)
          if (!aligned[i] && samples[i]->len > 0)
            {
              off[i] = median (samples[i]);
              aligned[i] = TRUE;
              progress = TRUE;
            }
      }
    /* refinement: each rank (not the reference) against the others' median end */
    for (int round = 0; round < 3; round++)
      {
        for (guint i = 0; i < n; i++)
          g_array_set_size (samples[i], 0);
        for (guint k = 0; k < instances->len; k++)
          {
            Instance *in = instances->pdata[k];
            gint64 t;
            if (in->entries->len < 2 || !instance_end (in, off, aligned, fixed, scratch, &t))
              continue;
            for (guint e = 0; e < in->entries->len; e++)
              {
                const Entry *en = &g_array_index (in->entries, Entry, e);
                gint64 d = en->e + off[en->idx] - t;
                g_array_append_val (samples[en->idx], d);
              }
          }
        for (guint i = 0; i < n; i++)
          {
            WickJobRank *r = &g_array_index (job->ranks, WickJobRank, i);
            if (!aligned[i] || samples[i]->len == 0)
              continue;
            if (round < 2)
              {
                if (i != ref && !fixed[i])
                  off[i] -= median (samples[i]);
              }
            else
              {
                /* the spread: median |residual| around the rank's own median */
                gint64 m = median (samples[i]);
                for (guint s = 0; s < samples[i]->len; s++)
                  {
                    gint64 *x = &g_array_index (samples[i], gint64, s);
                    *x = ABS (*x - m);
                  }
                r->offset_spread_ns = median (samples[i]);
              }
          }
      }
  }
  for (guint i = 0; i < n; i++)
    {
      WickJobRank *r = &g_array_index (job->ranks, WickJobRank, i);
      r->aligned = aligned[i];
      r->offset_ns = off[i];
      r->collectives = r->partial->collectives->len;
      r->offset_source = fixed[i]                  ? "set"
                         : i == ref && job->pinned_rank >= 0 ? "pinned"
                         : i == ref                          ? "reference"
                         : aligned[i]                        ? "collectives"
                                                             : "wall clock";
      if (fixed[i])
        note (job, "rank %d's offset is set by hand: %" G_GINT64_FORMAT " ns", r->rank, off[i]);
      if (!aligned[i])
        {
          r->offset_spread_ns = -1;
          const char *clock
            = r->partial->has_base ? "baseTimeNanoseconds + ts" : "its ts as written";
          if (job->reference_rank >= 0)
            note (job,
                  "rank %d (%s) shares no collective with the ranks aligned to rank %d: it keeps "
                  "its wall-clock alignment (%s)",
                  r->rank, r->file, job->reference_rank, clock);
          else
            note (job,
                  "rank %d (%s) shares no collective with another rank: it keeps its wall-clock "
                  "alignment (%s)",
                  r->rank, r->file, clock);
        }
      g_array_unref (samples[i]);
    }

  /* the job's origin: the earliest event on the reference clock */
  for (guint i = 0; i < n; i++)
    {
      const WickJobRank *r = &g_array_index (job->ranks, WickJobRank, i);
      gint64 f = r->partial->first_ns + r->offset_ns;
      if (i == 0 || f < job->origin_ns)
        job->origin_ns = f;
    }

  /* warm-up: until the first ProfilerStep has ended on every rank that has one */
  for (guint i = 0; i < n; i++)
    {
      const WickJobRank *r = &g_array_index (job->ranks, WickJobRank, i);
      if (r->partial->steps->len > 0)
        {
          const WickRankStep *st = &g_array_index (r->partial->steps, WickRankStep, 0);
          job->warmup_end_ns = MAX (job->warmup_end_ns, st->end_ns + r->offset_ns - job->origin_ns);
        }
    }

  /* collectives */
  {
    g_autofree WickJobStraggler *st = g_new0 (WickJobStraggler, MAX (n, 1));
    g_autofree WickJobStraggler *st_warm = g_new0 (WickJobStraggler, MAX (n, 1));
    g_autofree gint64 *wait = g_new0 (gint64, MAX (n, 1));
    guint counted = 0, warm = 0;
    gint64 warm_delay = 0;
    for (guint k = 0; k < instances->len; k++)
      {
        Instance *in = instances->pdata[k];
        WickJobCollective *c = g_new0 (WickJobCollective, 1);
        gint64 second = G_MININT64, t;
        guint last = 0;
        c->group = g_strdup (in->first->group);
        c->name = g_strdup (in->first->name);
        c->seq = in->seq;
        c->by_seq = in->by_seq;
        c->bytes = in->first->bytes;
        c->group_size = in->first->group_size ? in->first->group_size : in->entries->len;
        c->ranks = g_array_new (FALSE, FALSE, sizeof (int));
        c->first_start_ns = G_MAXINT64;
        c->last_start_ns = G_MININT64;
        for (guint e = 0; e < in->entries->len; e++)
          {
            const Entry *en = &g_array_index (in->entries, Entry, e);
            int rank = g_array_index (job->ranks, WickJobRank, en->idx).rank;
            gint64 s = en->s + off[en->idx] - job->origin_ns;
            g_array_append_val (c->ranks, rank);
            c->first_start_ns = MIN (c->first_start_ns, s);
            if (s > c->last_start_ns)
              {
                second = c->last_start_ns;
                c->last_start_ns = s;
                last = en->idx;
              }
            else if (s > second)
              second = s;
          }
        c->last_rank = g_array_index (job->ranks, WickJobRank, last).rank;
        c->arrival_skew_ns = c->last_start_ns - c->first_start_ns;
        c->straggle_ns = in->entries->len >= 2 ? c->last_start_ns - second : 0;
        if (!instance_end (in, off, aligned, fixed, scratch, &t))
          {
            g_array_set_size (scratch, 0);
            for (guint e = 0; e < in->entries->len; e++)
              {
                const Entry *en = &g_array_index (in->entries, Entry, e);
                gint64 v = en->e + off[en->idx];
                g_array_append_val (scratch, v);
              }
            t = median (scratch);
          }
        c->end_ns = t - job->origin_ns;
        c->latency_ns = MAX (0, c->end_ns - c->last_start_ns);
        c->busbw_gbps = c->bytes > 0 && c->latency_ns > 0
                          ? (double)c->bytes / (double)c->latency_ns
                              * wick_collective_busbw_factor (c->name, c->group_size)
                          : -1;
        c->warmup = job->warmup_end_ns >= 0 && c->last_start_ns < job->warmup_end_ns;
        if (in->entries->len >= 2)
          {
            WickJobStraggler *to = c->warmup ? st_warm : st;
            to[last].delay_ns += c->straggle_ns;
            to[last].collectives++;
            if (c->warmup)
              {
                warm++;
                warm_delay += c->straggle_ns;
              }
            else
              counted++;
            for (guint e = 0; e < in->entries->len; e++)
              {
                const Entry *en = &g_array_index (in->entries, Entry, e);
                wait[en->idx] += c->last_start_ns - (en->s + off[en->idx] - job->origin_ns);
              }
          }
        g_ptr_array_add (job->collectives, c);
        in->collective = c;
      }
    g_ptr_array_sort (job->collectives, cmp_collective);
    {
      /* each rank's collectives: from the instance's place to the index of its collective */
      g_autoptr (GHashTable) where = g_hash_table_new (NULL, NULL);
      for (guint k = 0; k < job->collectives->len; k++)
        g_hash_table_insert (where, job->collectives->pdata[k], GUINT_TO_POINTER (k));
      for (guint i = 0; i < n; i++)
        {
          WickJobRank *r = &g_array_index (job->ranks, WickJobRank, i);
          for (guint k = 0; k < r->partial->collectives->len; k++)
            {
              Instance *in = instances->pdata[r->collective_index[k]];
              r->collective_index[k]
                = GPOINTER_TO_UINT (g_hash_table_lookup (where, in->collective));
            }
        }
    }
    if (warm > 0 && (alignment->include_warmup || counted == 0))
      {
        for (guint i = 0; i < n; i++)
          {
            st[i].delay_ns += st_warm[i].delay_ns;
            st[i].collectives += st_warm[i].collectives;
          }
        if (!alignment->include_warmup)
          note (job,
                "every collective shared by ranks is in the first step (warm-up): the stragglers "
                "count them, there being no others");
      }
    else if (warm > 0)
      {
        g_autofree char *end = g_strdup_printf ("%.3f ms", (double)job->warmup_end_ns / 1e6);
        g_autofree char *delay = g_strdup_printf ("%.3f ms", (double)warm_delay / 1e6);
        job->warmup_collectives = warm;
        note (job,
              "the stragglers leave out the warm-up: the %u collectives before the first step "
              "ended on every rank (%s into the job), which held the others %s (--include-warmup "
              "counts them)",
              warm, end, delay);
      }
    for (guint i = 0; i < n; i++)
      {
        WickJobRank *r = &g_array_index (job->ranks, WickJobRank, i);
        r->wait_ns = wait[i];
        if (st[i].delay_ns > 0)
          {
            st[i].rank = r->rank;
            g_array_append_val (job->stragglers, st[i]);
          }
      }
    g_array_sort (job->stragglers, cmp_straggler);
  }
  return job;
}

/* ------------------------------------------------------------------------ */
/* Many files on a pool */

typedef struct
{
  const char *path;
  GCancellable *cancellable;
  WickRankPartial *partial;
  GError *error;
} Task;

static void
reduce_task (gpointer data, gpointer user_data)
{
  Task *t = data;
  (void)user_data;
  t->partial = wick_rank_reduce_file (t->path, t->cancellable, &t->error);
}

WickRankJob *
wick_ranks_reduce_files (const char *const *paths, guint n_paths, guint threads,
                         GCancellable *cancellable, GError **error)
{
  return wick_ranks_reduce_files_aligned (paths, n_paths, threads, NULL, cancellable, error);
}

WickRankJob *
wick_ranks_reduce_files_aligned (const char *const *paths, guint n_paths, guint threads,
                                 const WickRanksAlignment *alignment, GCancellable *cancellable,
                                 GError **error)
{
  g_autofree Task *tasks = g_new0 (Task, MAX (n_paths, 1));
  GPtrArray *partials;
  GThreadPool *pool;
  GError *first = NULL;

  if (threads == 0)
    threads = g_get_num_processors ();
  threads = MAX (1, MIN (threads, n_paths));
  pool = g_thread_pool_new (reduce_task, NULL, (gint)threads, FALSE, error);
  if (pool == NULL)
    return NULL;
  for (guint i = 0; i < n_paths; i++)
    {
      tasks[i].path = paths[i];
      tasks[i].cancellable = cancellable;
      g_thread_pool_push (pool, &tasks[i], NULL);
    }
  g_thread_pool_free (pool, FALSE, TRUE);
  partials = g_ptr_array_new_with_free_func ((GDestroyNotify)wick_rank_partial_free);
  for (guint i = 0; i < n_paths; i++)
    {
      if (tasks[i].error != NULL && first == NULL)
        first = g_steal_pointer (&tasks[i].error);
      g_clear_error (&tasks[i].error);
      if (tasks[i].partial != NULL)
        g_ptr_array_add (partials, tasks[i].partial);
    }
  if (first != NULL)
    {
      g_propagate_error (error, first);
      g_ptr_array_unref (partials);
      return NULL;
    }
  return wick_ranks_merge_aligned (partials, alignment, error);
}

/* ------------------------------------------------------------------------ */
/* The job as JSON */

char *
wick_rank_job_to_json (const WickRankJob *job, gboolean pretty)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = NULL;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "ranks");
  json_builder_begin_array (b);
  for (guint i = 0; i < job->ranks->len; i++)
    {
      const WickJobRank *r = &g_array_index (job->ranks, WickJobRank, i);
      json_builder_begin_object (b);
      add_int (b, "rank", r->rank);
      json_builder_set_member_name (b, "file");
      add_str (b, r->file);
      add_int (b, "offset_ns", r->offset_ns);
      json_builder_set_member_name (b, "offset_spread_ns");
      if (r->offset_spread_ns >= 0)
        json_builder_add_int_value (b, r->offset_spread_ns);
      else
        json_builder_add_null_value (b);
      add_int (b, "collectives", r->collectives);
      json_builder_set_member_name (b, "steps");
      json_builder_begin_array (b);
      for (guint s = 0; s < r->partial->steps->len; s++)
        {
          const WickRankStep *st = &g_array_index (r->partial->steps, WickRankStep, s);
          json_builder_begin_object (b);
          add_int (b, "step", st->step);
          add_int (b, "start_ns", st->start_ns + r->offset_ns - job->origin_ns);
          add_int (b, "duration_ns", st->end_ns - st->start_ns);
          add_int (b, "compute_ns", st->compute_ns);
          add_int (b, "comm_ns", st->comm_ns);
          add_int (b, "exposed_comm_ns", st->exposed_comm_ns);
          add_int (b, "idle_ns", st->idle_ns);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "collectives");
  json_builder_begin_array (b);
  for (guint i = 0; i < job->collectives->len; i++)
    {
      const WickJobCollective *c = job->collectives->pdata[i];
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "group");
      add_str (b, c->group);
      add_int (b, "seq", c->seq);
      json_builder_set_member_name (b, "name");
      add_str (b, c->name);
      json_builder_set_member_name (b, "ranks");
      json_builder_begin_array (b);
      for (guint k = 0; k < c->ranks->len; k++)
        json_builder_add_int_value (b, g_array_index (c->ranks, int, k));
      json_builder_end_array (b);
      add_int (b, "bytes", (gint64)MIN (c->bytes, (guint64)G_MAXINT64));
      add_int (b, "arrival_skew_ns", c->arrival_skew_ns);
      add_int (b, "last_rank", c->last_rank);
      add_int (b, "latency_ns", c->latency_ns);
      json_builder_set_member_name (b, "busbw_gbps");
      if (c->busbw_gbps >= 0)
        json_builder_add_double_value (b, c->busbw_gbps);
      else
        json_builder_add_null_value (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "stragglers");
  json_builder_begin_array (b);
  for (guint i = 0; i < job->stragglers->len; i++)
    {
      const WickJobStraggler *s = &g_array_index (job->stragglers, WickJobStraggler, i);
      json_builder_begin_object (b);
      add_int (b, "rank", s->rank);
      add_int (b, "delay_ns", s->delay_ns);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, pretty);
  return json_generator_to_data (gen, NULL);
}

/* ------------------------------------------------------------------------ */
/* One trace of the whole job, every rank on the reference clock */

typedef struct
{
  FILE *f;
  GString *buf;
  gboolean first;
} Writer;

static void
put_escaped (Writer *w, const char *s, gsize len)
{
  gsize old = w->buf->len;
  g_string_set_size (w->buf, old + WICK_JSON_ESCAPED_MAX (len));
  g_string_truncate (w->buf, old + wick_json_escape (s, len, w->buf->str + old));
}

static void
put_time (Writer *w, gint64 ns)
{
  guint64 a = ns < 0 ? (guint64)(-(ns + 1)) + 1 : (guint64)ns;
  g_string_append_printf (w->buf, "%s%" G_GUINT64_FORMAT ".%03u", ns < 0 ? "-" : "", a / 1000,
                          (guint)(a % 1000));
}

/* a pid or tid as written: a number stays one, anything else a string */
static void
put_id_text (Writer *w, const char *s, gsize len)
{
  gboolean number = len > 0 && len < 19;
  for (gsize i = 0; i < len && number; i++)
    number = g_ascii_isdigit (s[i]) || (i == 0 && s[i] == '-' && len > 1);
  if (number)
    g_string_append_len (w->buf, s, (gssize)len);
  else
    put_escaped (w, s, len);
}

static void
begin_event (Writer *w)
{
  g_string_append (w->buf, w->first ? "\n" : ",\n");
  w->first = FALSE;
}

static gboolean
flush_writer (Writer *w, const char *path, GError **error)
{
  if (w->buf->len > 0 && fwrite (w->buf->str, 1, w->buf->len, w->f) != w->buf->len)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno), "write %s: %s", path,
                   g_strerror (errno));
      return FALSE;
    }
  g_string_truncate (w->buf, 0);
  return TRUE;
}

static void
put_pid (Writer *w, int rank, const char *pid, gsize len)
{
  g_autofree char *text = g_strdup_printf ("rank %d/%.*s", rank, (int)MIN (len, 64), pid);
  put_escaped (w, text, strlen (text));
}

static void
put_process_meta (Writer *w, int rank, const char *pid, gsize len, const char *key,
                  const char *value_json)
{
  begin_event (w);
  g_string_append (w->buf, "{\"ph\":\"M\",\"name\":\"");
  g_string_append (w->buf, key);
  g_string_append (w->buf, "\",\"pid\":");
  put_pid (w, rank, pid, len);
  g_string_append (w->buf, ",\"tid\":0,\"args\":");
  g_string_append (w->buf, value_json);
  g_string_append (w->buf, "}");
}

typedef struct
{
  gint64 s, e;
} TimeKey;

static guint
time_key_hash (gconstpointer k)
{
  const TimeKey *t = k;
  guint64 h = (guint64)t->s * 0x9e3779b97f4a7c15ull ^ (guint64)t->e;
  return (guint)(h ^ (h >> 32));
}

static gboolean
time_key_equal (gconstpointer a, gconstpointer b)
{
  const TimeKey *x = a, *y = b;
  return x->s == y->s && x->e == y->e;
}

static gboolean
write_rank (Writer *w, const WickRankJob *job, const WickJobRank *r, const char *out,
            GCancellable *cancellable, GError **error)
{
  g_autoptr (WickChromeReader) reader = NULL;
  g_autoptr (GHashTable) pids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GString) text = g_string_new (NULL);
  g_autoptr (GString) value = g_string_new (NULL);
  GError *local = NULL;
  WickChromeEvent ev;
  WickFileFormat format;
  WickInput *input;
  gint64 base = r->partial->has_base ? r->partial->base_ns : 0;
  gint64 shift = base + r->offset_ns - job->origin_ns;
  guint order = 0;
  /* the rank's collectives by their raw start and end: a kernel read again is found so */
  g_autofree TimeKey *keys = g_new (TimeKey, MAX (r->partial->collectives->len, 1));
  g_autoptr (GHashTable) collective_of = g_hash_table_new (time_key_hash, time_key_equal);

  for (guint k = 0; k < r->partial->collectives->len; k++)
    {
      const WickRankCollective *c = &g_array_index (r->partial->collectives, WickRankCollective, k);
      keys[k].s = c->start_ns;
      keys[k].e = c->end_ns;
      if (r->collective_index != NULL && r->collective_index[k] != G_MAXUINT)
        g_hash_table_insert (collective_of, &keys[k],
                             GUINT_TO_POINTER (r->collective_index[k] + 1));
    }

  /* the partial's file: r->file may be relabelled for messages */
  input = wick_input_open (r->partial->file, error);
  if (input == NULL)
    return FALSE;
  reader = wick_chrome_reader_new (input, r->partial->file);
  if (!wick_chrome_reader_start (reader, &format, error))
    return FALSE;
  while (wick_chrome_reader_next (reader, &ev, &local))
    {
      const char *pid = ev.has_pid ? ev.pid : "0";
      gsize pid_len = ev.has_pid ? ev.pid_len : 1;
      g_autofree char *pid_key = g_strndup (pid, MIN (pid_len, 64));
      gboolean named = FALSE;

      if (!g_hash_table_contains (pids, pid_key))
        {
          g_autofree char *sort = g_strdup_printf ("{\"sort_index\":%u}", r->rank * 1000 + order++);
          put_process_meta (w, r->rank, pid, pid_len, "process_sort_index", sort);
          g_hash_table_insert (pids, g_strdup (pid_key), GINT_TO_POINTER (0));
        }
      if (ev.ph_len == 1 && ev.ph[0] == 'M' && ev.name_len == 12
          && memcmp (ev.name, "process_name", 12) == 0)
        {
          /* "rank N · python3": the rank first, so that a job's processes read as ranks */
          g_string_truncate (text, 0);
          if (!wick_chrome_args_string (ev.args, ev.args_len, "name", text))
            g_string_append_len (text, pid, (gssize)pid_len);
          g_string_printf (value, "rank %d \xc2\xb7 %s", r->rank, text->str);
          g_string_truncate (text, 0);
          g_string_append (text, "{\"name\":");
          {
            gsize old = text->len;
            g_string_set_size (text, old + WICK_JSON_ESCAPED_MAX (value->len));
            g_string_truncate (text,
                               old + wick_json_escape (value->str, value->len, text->str + old));
          }
          g_string_append (text, "}");
          put_process_meta (w, r->rank, pid, pid_len, "process_name", text->str);
          g_hash_table_insert (pids, g_strdup (pid_key), GINT_TO_POINTER (1));
          named = TRUE;
        }
      if (!named && ev.ph_len == 1 && ev.ph[0] == 'M' && ev.name_len == 18
          && memcmp (ev.name, "process_sort_index", 18) == 0)
        continue; /* ours orders the ranks */
      if (!named)
        {
          begin_event (w);
          g_string_append (w->buf, "{\"ph\":");
          put_escaped (w, ev.ph ? ev.ph : "", ev.ph_len);
          if (ev.cat)
            {
              g_string_append (w->buf, ",\"cat\":");
              put_escaped (w, ev.cat, ev.cat_len);
            }
          if (ev.name)
            {
              g_string_append (w->buf, ",\"name\":");
              put_escaped (w, ev.name, ev.name_len);
            }
          g_string_append (w->buf, ",\"pid\":");
          put_pid (w, r->rank, pid, pid_len);
          if (ev.has_tid)
            {
              g_string_append (w->buf, ",\"tid\":");
              put_id_text (w, ev.tid, ev.tid_len);
            }
          if (ev.has_ts)
            {
              g_string_append (w->buf, ",\"ts\":");
              put_time (w, ev.ts_ns + shift);
            }
          if (ev.has_dur)
            {
              g_string_append (w->buf, ",\"dur\":");
              put_time (w, ev.dur_ns);
            }
          /* flow and async ids are per file: the rank keeps them apart */
          if (ev.id)
            {
              g_autofree char *id
                = g_strdup_printf ("r%d:%.*s", r->rank, (int)MIN (ev.id_len, 64), ev.id);
              g_string_append (w->buf, ",\"id\":");
              put_escaped (w, id, strlen (id));
            }
          if (ev.bind_id)
            {
              g_autofree char *id
                = g_strdup_printf ("r%d:%.*s", r->rank, (int)MIN (ev.bind_id_len, 64), ev.bind_id);
              g_string_append (w->buf, ",\"bind_id\":");
              put_escaped (w, id, strlen (id));
            }
          if (ev.bp)
            {
              g_string_append (w->buf, ",\"bp\":");
              put_escaped (w, ev.bp, ev.bp_len);
            }
          if (ev.s)
            {
              g_string_append (w->buf, ",\"s\":");
              put_escaped (w, ev.s, ev.s_len);
            }
          if (ev.scope)
            {
              g_string_append (w->buf, ",\"scope\":");
              put_escaped (w, ev.scope, ev.scope_len);
            }
          if (ev.flow_in)
            g_string_append (w->buf, ",\"flow_in\":true");
          if (ev.flow_out)
            g_string_append (w->buf, ",\"flow_out\":true");
          guint collective = 0;
          if (ev.has_ts && ev.ph_len == 1 && ev.ph[0] == 'X'
              && ((str_eq (ev.cat, ev.cat_len, "kernel")
                   && wick_is_nccl_kernel (ev.name, ev.name_len))
                  || (ev.name_len > 5 && memcmp (ev.name, "gloo:", 5) == 0
                      && str_eq (ev.cat, ev.cat_len, "user_annotation"))))
            {
              TimeKey key = { ev.ts_ns + base,
                              ev.ts_ns + base + (ev.has_dur && ev.dur_ns > 0 ? ev.dur_ns : 0) };
              collective = GPOINTER_TO_UINT (g_hash_table_lookup (collective_of, &key));
            }
          if (collective > 0)
            {
              /* first in its args, so that a reader finds it without parsing them */
              g_string_append_printf (w->buf, ",\"args\":{\"wick_collective\":%u", collective - 1);
              if (ev.args && ev.args_len > 2 && ev.args[0] == '{')
                {
                  gsize i = 1;
                  while (i < ev.args_len && g_ascii_isspace (ev.args[i]))
                    i++;
                  if (i < ev.args_len && ev.args[i] != '}')
                    g_string_append_c (w->buf, ',');
                  g_string_append_len (w->buf, ev.args + i, (gssize)(ev.args_len - i));
                }
              else
                g_string_append_c (w->buf, '}');
            }
          else if (ev.args)
            {
              g_string_append (w->buf, ",\"args\":");
              g_string_append_len (w->buf, ev.args, (gssize)ev.args_len);
            }
          g_string_append (w->buf, "}");
        }
      if (w->buf->len >= (1 << 20))
        {
          if (!flush_writer (w, out, error))
            return FALSE;
          if (g_cancellable_set_error_if_cancelled (cancellable, error))
            return FALSE;
        }
    }
  if (local != NULL)
    {
      g_propagate_error (error, local);
      return FALSE;
    }
  /* a process the file never named is still the rank's */
  {
    GHashTableIter it;
    gpointer key, val;
    g_hash_table_iter_init (&it, pids);
    while (g_hash_table_iter_next (&it, &key, &val))
      if (GPOINTER_TO_INT (val) == 0)
        {
          g_autofree char *name
            = g_strdup_printf ("rank %d \xc2\xb7 pid %s", r->rank, (const char *)key);
          g_string_truncate (text, 0);
          g_string_append (text, "{\"name\":");
          {
            gsize old = text->len;
            gsize len = strlen (name);
            g_string_set_size (text, old + WICK_JSON_ESCAPED_MAX (len));
            g_string_truncate (text, old + wick_json_escape (name, len, text->str + old));
          }
          g_string_append (text, "}");
          put_process_meta (w, r->rank, key, strlen (key), "process_name", text->str);
        }
  }
  return flush_writer (w, out, error);
}

/* A rank not read again: one process "rank N · summary" with one counter
 * ("GPU", series "busy %"), its GPU busy share per step (compute and communication, from the
 * reduction), so that it is one row on the timeline. */
static void
write_summary (Writer *w, const WickRankJob *job, const WickJobRank *r)
{
  const char *pid = "summary";
  gsize pid_len = strlen (pid);
  g_autofree char *name = g_strdup_printf (
    "{\"name\":\"rank %d \xc2\xb7 summary: GPU busy per step (click to load)\"}", r->rank);
  g_autofree char *sort = g_strdup_printf ("{\"sort_index\":%u}", r->rank * 1000);
  put_process_meta (w, r->rank, pid, pid_len, "process_name", name);
  put_process_meta (w, r->rank, pid, pid_len, "process_sort_index", sort);
  for (guint s = 0; s < r->partial->steps->len; s++)
    {
      const WickRankStep *st = &g_array_index (r->partial->steps, WickRankStep, s);
      gint64 dur = MAX (st->end_ns - st->start_ns, 1);
      double busy = 100.0 * (double)(dur - st->idle_ns) / (double)dur;
      for (int edge = 0; edge < 2; edge++)
        {
          gint64 t = (edge == 0 ? st->start_ns : st->end_ns) + r->offset_ns - job->origin_ns;
          begin_event (w);
          g_string_append (w->buf, "{\"ph\":\"C\",\"name\":\"GPU\",\"pid\":");
          put_pid (w, r->rank, pid, pid_len);
          g_string_append (w->buf, ",\"tid\":0,\"ts\":");
          put_time (w, MAX (t, 0));
          g_string_append_printf (w->buf, ",\"args\":{\"busy %%\":%.1f}}", edge == 0 ? busy : 0.0);
        }
    }
}

gboolean
wick_rank_job_write_merged (const WickRankJob *job, const char *path, GCancellable *cancellable,
                            GError **error)
{
  return wick_rank_job_write_merged_some (job, path, NULL, cancellable, error);
}

gboolean
wick_rank_job_write_merged_some (const WickRankJob *job, const char *path, const gboolean *full,
                                 GCancellable *cancellable, GError **error)
{
  g_autofree char *tmp = g_strdup_printf ("%s.part", path);
  g_autofree char *summary = wick_rank_job_to_json (job, FALSE);
  g_autoptr (GString) buf = g_string_sized_new (1 << 21);
  Writer w = { NULL, buf, TRUE };
  gboolean ok = TRUE;

  w.f = g_fopen (tmp, "wb");
  if (w.f == NULL)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno), "open %s: %s", tmp,
                   g_strerror (errno));
      return FALSE;
    }
  g_string_append (buf, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[");
  for (guint i = 0; i < job->ranks->len && ok; i++)
    {
      const WickJobRank *r = &g_array_index (job->ranks, WickJobRank, i);
      if (full == NULL || full[i])
        ok = write_rank (&w, job, r, tmp, cancellable, error);
      else
        {
          write_summary (&w, job, r);
          ok = flush_writer (&w, tmp, error);
        }
    }
  if (ok)
    {
      /* the job's figures ride along, so the merged file explains itself */
      g_string_append (buf, "\n],\n\"wickRanks\":");
      g_string_append (buf, summary);
      g_string_append (buf, "}\n");
      ok = flush_writer (&w, tmp, error);
    }
  if (fclose (w.f) != 0 && ok)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno), "write %s: %s", tmp,
                   g_strerror (errno));
      ok = FALSE;
    }
  if (ok && g_rename (tmp, path) != 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno), "rename %s to %s: %s", tmp,
                   path, g_strerror (errno));
      ok = FALSE;
    }
  if (!ok)
    g_unlink (tmp);
  return ok;
}
