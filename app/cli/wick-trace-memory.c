/* wick-trace-memory.c — `wick-trace memory [--json] [--top N] FILE`: a PyTorch
 * CUDA memory snapshot (torch.cuda.memory._dump_snapshot's pickle, plain,
 * gzip or zstd), read without running any of it (wick-pickle.h).
 *
 * With --json, one object on one line:
 *   {"segments":N, "reserved_bytes":B, "allocated_bytes":B, "trace_entries":N,
 *    "peak_allocated_bytes":B, "peak_time_us":T|null,
 *    "oom":[{"device":D, "time_us":T, "bytes":B, "device_free_bytes":B, "stream":S}],
 *    "top":[{"bytes":B, "frames":["name (file:line)", ...]}]}
 * segments, reserved_bytes and allocated_bytes are the state at the snapshot
 * (allocated: the sizes of active_allocated blocks, as
 * torch.cuda.memory_allocated() counts them); trace_entries counts every
 * device's history entries; the peak is the greatest point of the allocated
 * series PyTorch's viewer draws (wick-memory-snapshot.h says how it is
 * rebuilt; the trace's sizes are requested bytes), null without history.
 * top: the live blocks at the snapshot grouped by their stack (frames
 * innermost first; [] for blocks with no stack recorded), the N largest
 * (default 10) by bytes, ties by their frames in byte order.
 * --from US / --to US keep only the history entries with from <= time_us <= to
 * (wick_memory_snapshot_load_range): trace_entries, the peak and the OOMs are
 * the range's, and "range": {"from_us", "to_us", "entries_outside",
 * "start_allocated_bytes", "start_reserved_bytes"} says what was left out and
 * the state rebuilt at the range's start.
 * --trace TRACE.jsonl: the categories from a Wick session's memory records
 * (wick-snapshot-categories.h: same device and address, lifetimes overlapping),
 * and "categories": {"clock": {"source", "offset_us", "correction_us",
 * "refined_pairs"}, "allocations", "matched", "unmatched", "ambiguous",
 * "live", "live_matched", "live_unmatched", "live_ambiguous", "from_record",
 * "from_frames", "unknown", "records": {"lifetimes", "lifetimes_matched",
 * "without_address", "other_device", "bad_address"}, "at_snapshot": {category:
 * bytes}, "at_peak": {category: bytes}|null}: at the snapshot the
 * active_allocated blocks' sizes (they add up to allocated_bytes), at the peak
 * the allocations live at peak_time_us (requested bytes).
 * Exit status: 0, 2 when the file cannot be read as a snapshot (a refused
 * opcode included: the message names the byte), 3 usage or I/O error.
 */
#include "config.h"

#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#include "wick-document-error.h"
#include "wick-memory-snapshot.h"
#include "wick-snapshot-categories.h"
#include "wick-trace-commands.h"

typedef struct
{
  guint32 stack;
  guint64 bytes;
  char **frames;
} StackBytes;

static char **
stack_frames (WickMemorySnapshot *s, guint32 stack)
{
  guint n;
  const guint32 *frames = wick_memory_snapshot_get_stack (s, stack, &n);
  char **out = g_new0 (char *, n + 1);
  for (guint i = 0; i < n; i++)
    out[i] = wick_memory_snapshot_format_frame (s, frames[i]);
  return out;
}

static gint
compare_frames (char **a, char **b)
{
  for (guint i = 0;; i++)
    {
      if (a[i] == NULL || b[i] == NULL)
        return (a[i] != NULL) - (b[i] != NULL);
      int c = strcmp (a[i], b[i]);
      if (c != 0)
        return c;
    }
}

static gint
stack_bytes_cmp (gconstpointer pa, gconstpointer pb)
{
  const StackBytes *a = pa, *b = pb;
  if (a->bytes != b->bytes)
    return a->bytes > b->bytes ? -1 : 1;
  return compare_frames (a->frames, b->frames);
}

static void
stack_bytes_clear (gpointer p)
{
  g_strfreev (((StackBytes *)p)->frames);
}

/* Live block bytes by stack, largest first. */
static GArray *
top_stacks (WickMemorySnapshot *s)
{
  guint n_blocks;
  const WickSnapshotBlock *blocks = wick_memory_snapshot_get_blocks (s, &n_blocks);
  g_autoptr (GHashTable) by_stack = g_hash_table_new (g_direct_hash, g_direct_equal);
  GArray *out = g_array_new (FALSE, FALSE, sizeof (StackBytes));
  g_array_set_clear_func (out, stack_bytes_clear);
  for (guint i = 0; i < n_blocks; i++)
    {
      if (blocks[i].state != WICK_BLOCK_ACTIVE_ALLOCATED)
        continue;
      gpointer key = GUINT_TO_POINTER (blocks[i].stack);
      gpointer at;
      if (!g_hash_table_lookup_extended (by_stack, key, NULL, &at))
        {
          StackBytes sb = { blocks[i].stack, 0, stack_frames (s, blocks[i].stack) };
          at = GUINT_TO_POINTER (out->len);
          g_array_append_val (out, sb);
          g_hash_table_insert (by_stack, key, at);
        }
      g_array_index (out, StackBytes, GPOINTER_TO_UINT (at)).bytes += blocks[i].size;
    }
  g_array_sort (out, stack_bytes_cmp);
  return out;
}

static const char *const category_keys[WICK_SNAPSHOT_N_CATEGORIES] = {
  [WICK_CATEGORY_PARAMETER] = "parameters", [WICK_CATEGORY_ACTIVATION] = "activations",
  [WICK_CATEGORY_GRADIENT] = "gradients",   [WICK_CATEGORY_OPTIMIZER] = "optimizer_state",
  [WICK_CATEGORY_OTHER] = "unknown",
};

static void
add_member (JsonBuilder *b, const char *name, guint64 value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_int_value (b, (gint64)MIN (value, (guint64)G_MAXINT64));
}

static void
add_category_bytes (JsonBuilder *b, const char *name, const guint64 *bytes)
{
  json_builder_set_member_name (b, name);
  json_builder_begin_object (b);
  for (guint c = 0; c < WICK_SNAPSHOT_N_CATEGORIES; c++)
    add_member (b, category_keys[c], bytes[c]);
  json_builder_end_object (b);
}

static void
add_categories (JsonBuilder *b, WickMemorySnapshot *s, WickSnapshotCategories *cats)
{
  const WickSnapshotMatchCounts *c = wick_snapshot_categories_get_counts (cats);
  guint64 bytes[WICK_SNAPSHOT_N_CATEGORIES], peak;
  gint64 peak_us;

  json_builder_set_member_name (b, "categories");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "clock");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "source");
  json_builder_add_string_value (b, wick_snapshot_clock_to_string (c->clock));
  json_builder_set_member_name (b, "offset_us");
  json_builder_add_int_value (b, c->offset_us);
  json_builder_set_member_name (b, "correction_us");
  json_builder_add_int_value (b, c->correction_us);
  add_member (b, "refined_pairs", c->refined_pairs);
  json_builder_end_object (b);
  add_member (b, "allocations", c->allocations);
  add_member (b, "matched", c->matched);
  add_member (b, "unmatched", c->unmatched);
  add_member (b, "ambiguous", c->ambiguous);
  add_member (b, "live", c->live);
  add_member (b, "live_matched", c->live_matched);
  add_member (b, "live_unmatched", c->live_unmatched);
  add_member (b, "live_ambiguous", c->live_ambiguous);
  add_member (b, "from_record", c->from_record);
  add_member (b, "from_frames", c->from_frames);
  add_member (b, "unknown", c->unknown);
  json_builder_set_member_name (b, "records");
  json_builder_begin_object (b);
  add_member (b, "lifetimes", c->record_lifetimes);
  add_member (b, "lifetimes_matched", c->lifetimes_matched);
  add_member (b, "without_address", c->records_without_address);
  add_member (b, "other_device", c->records_other_device);
  add_member (b, "bad_address", c->records_bad_address);
  json_builder_end_object (b);
  wick_snapshot_categories_at_snapshot (cats, bytes);
  add_category_bytes (b, "at_snapshot", bytes);
  if (wick_memory_snapshot_get_peak (s, &peak, &peak_us))
    {
      wick_snapshot_categories_at (cats, peak_us, bytes);
      add_category_bytes (b, "at_peak", bytes);
    }
  else
    {
      json_builder_set_member_name (b, "at_peak");
      json_builder_add_null_value (b);
    }
  json_builder_end_object (b);
}

static void
print_json (WickMemorySnapshot *s, guint top_n, WickSnapshotCategories *cats)
{
  gint64 from_us, to_us;
  guint64 n_outside;
  gboolean ranged = wick_memory_snapshot_get_range (s, &from_us, &to_us, &n_outside);
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  guint n_segments, n_entries;
  guint64 peak;
  gint64 peak_us;
  wick_memory_snapshot_get_segments (s, &n_segments);
  const WickSnapshotEntry *entries = wick_memory_snapshot_get_entries (s, &n_entries);

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "segments");
  json_builder_add_int_value (b, n_segments);
  json_builder_set_member_name (b, "reserved_bytes");
  json_builder_add_int_value (b, (gint64)wick_memory_snapshot_get_reserved (s));
  json_builder_set_member_name (b, "allocated_bytes");
  json_builder_add_int_value (b, (gint64)wick_memory_snapshot_get_allocated (s));
  json_builder_set_member_name (b, "trace_entries");
  json_builder_add_int_value (b, n_entries);
  gboolean has_peak = wick_memory_snapshot_get_peak (s, &peak, &peak_us);
  json_builder_set_member_name (b, "peak_allocated_bytes");
  json_builder_add_int_value (b, (gint64)peak);
  json_builder_set_member_name (b, "peak_time_us");
  if (has_peak)
    json_builder_add_int_value (b, peak_us);
  else
    json_builder_add_null_value (b);
  if (ranged)
    {
      guint n_points;
      const WickSnapshotPoint *alloc = wick_memory_snapshot_get_allocated_series (s, &n_points);
      const WickSnapshotPoint *res = wick_memory_snapshot_get_reserved_series (s, &n_points);
      json_builder_set_member_name (b, "range");
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "from_us");
      json_builder_add_int_value (b, from_us);
      json_builder_set_member_name (b, "to_us");
      json_builder_add_int_value (b, to_us);
      json_builder_set_member_name (b, "entries_outside");
      json_builder_add_int_value (b, (gint64)n_outside);
      json_builder_set_member_name (b, "start_allocated_bytes");
      json_builder_add_int_value (b, (gint64)alloc[0].bytes);
      json_builder_set_member_name (b, "start_reserved_bytes");
      json_builder_add_int_value (b, (gint64)res[0].bytes);
      json_builder_end_object (b);
    }
  json_builder_set_member_name (b, "oom");
  json_builder_begin_array (b);
  guint n_ooms;
  const guint32 *ooms = wick_memory_snapshot_get_oom_entries (s, &n_ooms);
  for (guint o = 0; o < n_ooms; o++)
    {
      guint i = ooms[o];
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "device");
      json_builder_add_int_value (b, entries[i].device_index);
      json_builder_set_member_name (b, "time_us");
      json_builder_add_int_value (b, entries[i].time_us);
      json_builder_set_member_name (b, "bytes");
      json_builder_add_int_value (b, (gint64)entries[i].size);
      json_builder_set_member_name (b, "device_free_bytes");
      json_builder_add_int_value (b, (gint64)entries[i].addr);
      json_builder_set_member_name (b, "stream");
      json_builder_add_int_value (b, (gint64)entries[i].stream);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "top");
  json_builder_begin_array (b);
  g_autoptr (GArray) top = top_stacks (s);
  for (guint i = 0; i < top->len && i < top_n; i++)
    {
      const StackBytes *sb = &g_array_index (top, StackBytes, i);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "bytes");
      json_builder_add_int_value (b, (gint64)sb->bytes);
      json_builder_set_member_name (b, "frames");
      json_builder_begin_array (b);
      for (guint f = 0; sb->frames[f] != NULL; f++)
        json_builder_add_string_value (b, sb->frames[f]);
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  if (cats != NULL)
    add_categories (b, s, cats);
  json_builder_end_object (b);

  g_autoptr (JsonNode) root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  g_autofree char *text = json_generator_to_data (gen, NULL);
  printf ("%s\n", text);
}

static void
print_text (const char *file, WickMemorySnapshot *s, guint top_n, WickSnapshotCategories *cats)
{
  guint n_segments, n_entries, n_blocks;
  guint64 peak;
  gint64 peak_us;
  wick_memory_snapshot_get_segments (s, &n_segments);
  wick_memory_snapshot_get_blocks (s, &n_blocks);
  const WickSnapshotEntry *entries = wick_memory_snapshot_get_entries (s, &n_entries);
  g_autofree char *reserved
    = g_format_size_full (wick_memory_snapshot_get_reserved (s), G_FORMAT_SIZE_IEC_UNITS);
  g_autofree char *allocated
    = g_format_size_full (wick_memory_snapshot_get_allocated (s), G_FORMAT_SIZE_IEC_UNITS);
  g_autofree char *segments = wick_trace_count (n_segments, "segment", "segments");
  g_autofree char *blocks = wick_trace_count (n_blocks, "block", "blocks");
  g_autofree char *history = wick_trace_count (n_entries, "history entry", "history entries");
  printf ("%s: CUDA memory snapshot, %u device trace%s\n", file,
          wick_memory_snapshot_get_n_devices (s),
          wick_memory_snapshot_get_n_devices (s) == 1 ? "" : "s");
  printf ("  at the snapshot: %s reserved in %s (%s), %s allocated\n", reserved, segments, blocks,
          allocated);
  if (wick_memory_snapshot_get_peak (s, &peak, &peak_us))
    {
      g_autofree char *p = g_format_size_full (peak, G_FORMAT_SIZE_IEC_UNITS);
      printf ("  history: %s; peak allocated %s at time_us %" G_GINT64_FORMAT "\n", history, p,
              peak_us);
    }
  else
    printf ("  history: none recorded (no peak)\n");
  gint64 from_us, to_us;
  guint64 n_outside;
  if (wick_memory_snapshot_get_range (s, &from_us, &to_us, &n_outside))
    {
      guint n_points;
      const WickSnapshotPoint *alloc = wick_memory_snapshot_get_allocated_series (s, &n_points);
      g_autofree char *at_start = g_format_size_full (alloc[0].bytes, G_FORMAT_SIZE_IEC_UNITS);
      printf ("  range: time_us %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT " (%" G_GUINT64_FORMAT
              " entries outside it left out); %s allocated at its start\n",
              from_us, to_us, n_outside, at_start);
    }
  guint n_ooms;
  const guint32 *ooms = wick_memory_snapshot_get_oom_entries (s, &n_ooms);
  for (guint o = 0; o < n_ooms; o++)
    {
      guint i = ooms[o];
      g_autofree char *want = g_format_size_full (entries[i].size, G_FORMAT_SIZE_IEC_UNITS);
      g_autofree char *free_bytes = g_format_size_full (entries[i].addr, G_FORMAT_SIZE_IEC_UNITS);
      printf ("  OOM on device %u at time_us %" G_GINT64_FORMAT
              ": %s asked, %s free on the device\n",
              entries[i].device_index, entries[i].time_us, want, free_bytes);
    }
  g_autoptr (GArray) top = top_stacks (s);
  if (top->len > 0)
    printf ("  largest live stacks:\n");
  for (guint i = 0; i < top->len && i < top_n; i++)
    {
      const StackBytes *sb = &g_array_index (top, StackBytes, i);
      g_autofree char *bytes = g_format_size_full (sb->bytes, G_FORMAT_SIZE_IEC_UNITS);
      printf (
        "    %s  %s  [%s]\n", bytes, sb->frames[0] != NULL ? sb->frames[0] : "(no stack recorded)",
        wick_memory_snapshot_category_name (wick_memory_snapshot_stack_category (s, sb->stack)));
    }
  for (guint i = 0; i < wick_memory_snapshot_get_n_unmodelled (s); i++)
    {
      guint64 count;
      const char *what = wick_memory_snapshot_get_unmodelled (s, i, &count);
      printf ("  not modelled: %s (%" G_GUINT64_FORMAT ")\n", what, count);
    }
  if (cats == NULL)
    return;
  const WickSnapshotMatchCounts *c = wick_snapshot_categories_get_counts (cats);
  guint64 bytes[WICK_SNAPSHOT_N_CATEGORIES];
  printf ("  the trace's records: %" G_GUINT64_FORMAT " lifetimes with a CUDA address, %"
          G_GUINT64_FORMAT " records without an address, %" G_GUINT64_FORMAT
          " of another device, %" G_GUINT64_FORMAT " bad addresses; clock from %s, offset %"
          G_GINT64_FORMAT " us (%" G_GINT64_FORMAT " us from %" G_GUINT64_FORMAT " pairs)\n",
          c->record_lifetimes, c->records_without_address, c->records_other_device,
          c->records_bad_address, wick_snapshot_clock_to_string (c->clock), c->offset_us,
          c->correction_us, c->refined_pairs);
  printf ("  allocations: %" G_GUINT64_FORMAT " matched to a record, %" G_GUINT64_FORMAT
          " unmatched, %" G_GUINT64_FORMAT " ambiguous (of %" G_GUINT64_FORMAT
          "); categories from records %" G_GUINT64_FORMAT ", from frames %" G_GUINT64_FORMAT
          ", unknown %" G_GUINT64_FORMAT "\n",
          c->matched, c->unmatched, c->ambiguous, c->allocations, c->from_record, c->from_frames,
          c->unknown);
  wick_snapshot_categories_at_snapshot (cats, bytes);
  printf ("  allocated at the snapshot by category:");
  for (guint i = 0; i < WICK_SNAPSHOT_N_CATEGORIES; i++)
    {
      g_autofree char *size = g_format_size_full (bytes[i], G_FORMAT_SIZE_IEC_UNITS);
      printf ("%s %s %s", i == 0 ? "" : ",", wick_memory_snapshot_category_name (i), size);
    }
  printf ("\n");
}

int
wick_trace_memory (int argc, char **argv)
{
  gboolean json = FALSE;
  int top_n = 10;
  gint64 from_us = G_MININT64, to_us = G_MAXINT64;
  g_autofree char *trace = NULL;
  const GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print one JSON object", NULL },
    { "top", 0, 0, G_OPTION_ARG_INT, &top_n, "How many stacks to list (default 10)", "N" },
    { "from", 0, 0, G_OPTION_ARG_INT64, &from_us,
      "Keep only the history from this time_us on (the state then is rebuilt)", "US" },
    { "to", 0, 0, G_OPTION_ARG_INT64, &to_us, "Keep only the history up to this time_us", "US" },
    { "trace", 0, 0, G_OPTION_ARG_FILENAME, &trace,
      "A Wick trace of the same run: categories from its memory records (matched by device, "
      "address and lifetime)", "TRACE" },
    G_OPTION_ENTRY_NULL,
  };
  int status = wick_trace_parse_options (
    "memory", "FILE",
    "A PyTorch CUDA memory snapshot (torch.cuda.memory._dump_snapshot): segments, history, "
    "peak, OOMs and the largest live stacks. The pickle is read as data only: an opcode that "
    "would import or call code is refused.",
    entries, FALSE, &argc, &argv);
  if (status >= 0)
    return status;
  if (argc != 2)
    return wick_trace_usage_error ("memory", "one FILE is required");
  if (top_n < 0)
    return wick_trace_usage_error ("memory", "--top needs a count of 0 or more");

  g_autoptr (GError) error = NULL;
  if (from_us > to_us)
    return wick_trace_usage_error ("memory", "--from is after --to");
  g_autoptr (WickMemorySnapshot) s
    = wick_memory_snapshot_load_range (argv[1], from_us, to_us, NULL, NULL, NULL, &error);
  if (s == NULL)
    {
      fprintf (stderr, "wick-trace memory: %s\n", error->message);
      return error->domain == WICK_DOCUMENT_ERROR ? WICK_TRACE_EXIT_PARSE : WICK_TRACE_EXIT_USAGE;
    }
  g_autoptr (WickDocument) document = NULL;
  g_autoptr (WickSnapshotCategories) cats = NULL;
  if (trace != NULL)
    {
      document = wick_document_new_with_extensions (TRUE);
      if (!wick_document_load_file_auto (document, trace, NULL, NULL, NULL, &error))
        {
          fprintf (stderr, "wick-trace memory: --trace %s: %s\n", trace, error->message);
          return error->domain == WICK_DOCUMENT_ERROR ? WICK_TRACE_EXIT_PARSE
                                                      : WICK_TRACE_EXIT_USAGE;
        }
      cats = wick_snapshot_categories_new (s, document);
    }
  if (json)
    print_json (s, (guint)top_n, cats);
  else
    print_text (argv[1], s, (guint)top_n, cats);
  return WICK_TRACE_EXIT_OK;
}

static WickMemorySnapshot *
load_or_complain (const char *path, int *status)
{
  g_autoptr (GError) error = NULL;
  WickMemorySnapshot *s = wick_memory_snapshot_load (path, NULL, NULL, NULL, &error);
  if (s == NULL)
    {
      fprintf (stderr, "wick-trace compare: %s\n", error->message);
      *status
        = error->domain == WICK_DOCUMENT_ERROR ? WICK_TRACE_EXIT_PARSE : WICK_TRACE_EXIT_USAGE;
    }
  return s;
}

static void
add_side (JsonBuilder *b, const char *name, const char *path, WickMemorySnapshot *s)
{
  guint n_segments;
  wick_memory_snapshot_get_segments (s, &n_segments);
  json_builder_set_member_name (b, name);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "file");
  json_builder_add_string_value (b, path);
  json_builder_set_member_name (b, "segments");
  json_builder_add_int_value (b, n_segments);
  json_builder_set_member_name (b, "reserved_bytes");
  json_builder_add_int_value (b, (gint64)wick_memory_snapshot_get_reserved (s));
  json_builder_set_member_name (b, "allocated_bytes");
  json_builder_add_int_value (b, (gint64)wick_memory_snapshot_get_allocated (s));
  json_builder_end_object (b);
}

/* Exit status: 0 when every stack holds the same bytes in both, 1 when some
 * stack differs, 2/3 as `memory`. JSON: {"a": {...}, "b": {...}, "stacks":
 * [{"bytes_a", "bytes_b", "delta_bytes", "count_a", "count_b", "frames"}]},
 * every stack of either snapshot, largest |delta| first. */
int
wick_trace_memory_compare (const char *path_a, const char *path_b, gboolean json)
{
  int status = WICK_TRACE_EXIT_OK;
  g_autoptr (WickMemorySnapshot) a = load_or_complain (path_a, &status);
  g_autoptr (WickMemorySnapshot) b = a != NULL ? load_or_complain (path_b, &status) : NULL;
  if (a == NULL || b == NULL)
    return status;
  g_autoptr (GArray) diff = wick_memory_snapshot_diff (a, b);
  gboolean changed = FALSE;
  for (guint i = 0; i < diff->len; i++)
    {
      const WickSnapshotStackDiff *d = &g_array_index (diff, WickSnapshotStackDiff, i);
      changed |= d->bytes_a != d->bytes_b;
    }
  if (json)
    {
      g_autoptr (JsonBuilder) jb = json_builder_new ();
      g_autoptr (JsonGenerator) gen = json_generator_new ();
      json_builder_begin_object (jb);
      add_side (jb, "a", path_a, a);
      add_side (jb, "b", path_b, b);
      json_builder_set_member_name (jb, "stacks");
      json_builder_begin_array (jb);
      for (guint i = 0; i < diff->len; i++)
        {
          const WickSnapshotStackDiff *d = &g_array_index (diff, WickSnapshotStackDiff, i);
          json_builder_begin_object (jb);
          json_builder_set_member_name (jb, "bytes_a");
          json_builder_add_int_value (jb, (gint64)d->bytes_a);
          json_builder_set_member_name (jb, "bytes_b");
          json_builder_add_int_value (jb, (gint64)d->bytes_b);
          json_builder_set_member_name (jb, "delta_bytes");
          json_builder_add_int_value (jb, (gint64)(d->bytes_b - d->bytes_a));
          json_builder_set_member_name (jb, "count_a");
          json_builder_add_int_value (jb, d->count_a);
          json_builder_set_member_name (jb, "count_b");
          json_builder_add_int_value (jb, d->count_b);
          json_builder_set_member_name (jb, "frames");
          json_builder_begin_array (jb);
          g_auto (GStrv) frames = d->key[0] != '\0' ? g_strsplit (d->key, "\n", -1) : g_new0 (char *, 1);
          for (guint f = 0; frames[f] != NULL; f++)
            json_builder_add_string_value (jb, frames[f]);
          json_builder_end_array (jb);
          json_builder_end_object (jb);
        }
      json_builder_end_array (jb);
      json_builder_end_object (jb);
      g_autoptr (JsonNode) root = json_builder_get_root (jb);
      json_generator_set_root (gen, root);
      g_autofree char *text = json_generator_to_data (gen, NULL);
      printf ("%s\n", text);
    }
  else
    {
      g_autofree char *ra = g_format_size_full (wick_memory_snapshot_get_allocated (a), G_FORMAT_SIZE_IEC_UNITS);
      g_autofree char *rb = g_format_size_full (wick_memory_snapshot_get_allocated (b), G_FORMAT_SIZE_IEC_UNITS);
      printf ("A %s: %s allocated at the snapshot\nB %s: %s allocated at the snapshot\n", path_a,
              ra, path_b, rb);
      guint shown = 0;
      for (guint i = 0; i < diff->len && shown < 20; i++)
        {
          const WickSnapshotStackDiff *d = &g_array_index (diff, WickSnapshotStackDiff, i);
          if (d->bytes_a == d->bytes_b)
            continue;
          gint64 delta = (gint64)(d->bytes_b - d->bytes_a);
          g_autofree char *mag = g_format_size_full ((guint64)ABS (delta), G_FORMAT_SIZE_IEC_UNITS);
          /* the innermost Python frame names the stack best; else the innermost */
          g_auto (GStrv) frames = g_strsplit (d->key, "\n", -1);
          const char *shown_frame = frames[0] != NULL && frames[0][0] != '\0'
                                      ? frames[0]
                                      : "(no stack recorded)";
          for (guint f = 0; frames[f] != NULL; f++)
            if (strstr (frames[f], ".py:") != NULL)
              {
                shown_frame = frames[f];
                break;
              }
          printf ("  %c%s  (%u -> %u blocks)  %s\n", delta > 0 ? '+' : '-', mag, d->count_a,
                  d->count_b, shown_frame);
          shown++;
        }
      if (!changed)
        printf ("  every stack holds the same bytes\n");
    }
  return changed ? 1 : WICK_TRACE_EXIT_OK;
}
