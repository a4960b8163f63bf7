/* wick-trace-ranks.c — `wick-trace ranks [--json] FILES…`: the ranks of one
 * distributed job as one picture (wick-ranks.h): each rank's clock offset
 * from the collectives, every collective matched across ranks, stragglers.
 *
 *   --partial FILE…       each file's per-rank reduction as JSON (one object a
 *                         line), for running the pass elsewhere (wick.trace)
 *   --partials P…         merge such partials (files, or - for stdin) instead
 *                         of reading traces
 *   --threads N           files reduced at once (default: every core)
 *   --merged OUT          also write one Chrome trace of the job, aligned
 *   --pin RANK            RANK is the reference (offset 0) instead of the
 *                         lowest rank sharing a collective
 *   --offset RANK=OFFSET  RANK's offset by hand (ns, or with a unit: 1.5ms),
 *                         not estimated; repeatable
 *   --include-warmup      the stragglers count the first step's collectives
 *
 * Exit status: 0, 2 when a file does not parse, 3 on usage or I/O errors.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "wick-archive.h"
#include "wick-document-error.h"
#include "wick-ranks.h"
#include "wick-trace-commands.h"

static void
format_ns (char *buffer, gsize size, gint64 ns)
{
  double a = (double)ABS (ns);
  const char *sign = ns < 0 ? "-" : "";
  if (a >= 1e9)
    g_snprintf (buffer, size, "%s%.6f s", sign, a / 1e9);
  else if (a >= 1e6)
    g_snprintf (buffer, size, "%s%.3f ms", sign, a / 1e6);
  else if (a >= 1e3)
    g_snprintf (buffer, size, "%s%.1f µs", sign, a / 1e3);
  else
    g_snprintf (buffer, size, "%s%.0f ns", sign, a);
}

/* @s padded to @width characters (µs is two bytes, one column). */
static void
print_padded (const char *s, int width)
{
  glong n = g_utf8_strlen (s, -1);
  fputs (s, stdout);
  for (glong i = n; i < width; i++)
    putchar (' ');
}

static void
remove_tree (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *p = g_build_filename (dir, name, NULL);
      g_remove (p);
    }
  g_rmdir (dir);
}

static int
error_status (const GError *error)
{
  return error->domain == WICK_DOCUMENT_ERROR ? WICK_TRACE_EXIT_PARSE : WICK_TRACE_EXIT_USAGE;
}

static WickRankPartial *
read_partial (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  gsize len = 0;
  if (strcmp (path, "-") == 0)
    {
      g_autoptr (GString) s = g_string_new (NULL);
      char buf[65536];
      size_t n;
      while ((n = fread (buf, 1, sizeof buf, stdin)) > 0)
        {
          g_string_append_len (s, buf, (gssize)n);
          if (s->len > ((gsize)1 << 30))
            {
              g_set_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_TOO_LARGE,
                           "stdin: a rank's partial is larger than 1 GiB");
              return NULL;
            }
        }
      len = s->len;
      text = g_string_free (g_steal_pointer (&s), FALSE);
    }
  else if (!g_file_get_contents (path, &text, &len, error))
    return NULL;
  return wick_rank_partial_from_json (text, len, strcmp (path, "-") == 0 ? "stdin" : path, error);
}

static void
print_text (const WickRankJob *job)
{
  char a[32], b[32], c[32];
  g_autofree char *ranks = wick_trace_count (job->ranks->len, "rank", "ranks");
  g_autofree char *colls = wick_trace_count (job->collectives->len, "collective", "collectives");

  printf ("%s, %s", ranks, colls);
  if (job->reference_rank >= 0)
    printf (", clocks aligned to rank %d%s", job->reference_rank,
            job->pinned_rank >= 0 ? " (pinned)" : "");
  printf ("\n\n%-6s %-18s %-12s %-12s %-12s %s\n", "rank", "offset", "spread", "collectives",
          "waiting", "file");
  for (guint i = 0; i < job->ranks->len; i++)
    {
      const WickJobRank *r = &g_array_index (job->ranks, WickJobRank, i);
      format_ns (a, sizeof a, r->offset_ns);
      if (r->offset_spread_ns >= 0)
        format_ns (b, sizeof b, r->offset_spread_ns);
      else
        g_strlcpy (b, "wall clock", sizeof b);
      format_ns (c, sizeof c, r->wait_ns);
      if (strcmp (r->offset_source, "set") == 0)
        g_strlcat (a, " (set)", sizeof a);
      printf ("%-6d ", r->rank);
      print_padded (a, 19);
      print_padded (b, 13);
      printf ("%-12u ", r->collectives);
      print_padded (c, 13);
      printf ("%s\n", r->file);
    }
  printf ("\nStragglers (delay they caused the others):\n");
  if (job->stragglers->len == 0)
    printf ("  none\n");
  for (guint i = 0; i < job->stragglers->len && i < 10; i++)
    {
      const WickJobStraggler *s = &g_array_index (job->stragglers, WickJobStraggler, i);
      g_autofree char *n = wick_trace_count (s->collectives, "collective", "collectives");
      format_ns (a, sizeof a, s->delay_ns);
      printf ("  rank %-5d ", s->rank);
      print_padded (a, 15);
      printf ("last in %s\n", n);
    }
  for (guint i = 0; i < job->notes->len; i++)
    printf ("note: %s\n", (const char *)job->notes->pdata[i]);
}

int
wick_trace_ranks (int argc, char **argv)
{
  gboolean json = FALSE, partial = FALSE, partials = FALSE, pretty = FALSE;
  int threads = 0, pin = -1;
  gboolean include_warmup = FALSE;
  g_auto (GStrv) offsets = NULL;
  g_autofree char *merged = NULL;
  const GOptionEntry entries[] = {
    { "merged", 0, 0, G_OPTION_ARG_FILENAME, &merged,
      "Also write one Chrome trace of the whole job, every rank on the aligned clock", "OUT" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print the job as one JSON object", NULL },
    { "pretty", 0, 0, G_OPTION_ARG_NONE, &pretty, "Indent the JSON", NULL },
    { "partial", 0, 0, G_OPTION_ARG_NONE, &partial,
      "Print each file's per-rank reduction (JSON, one a line) instead of merging", NULL },
    { "partials", 0, 0, G_OPTION_ARG_NONE, &partials,
      "The operands are per-rank reductions (--partial's output, - for stdin)", NULL },
    { "threads", 0, 0, G_OPTION_ARG_INT, &threads, "Files reduced at once (default: every core)",
      "N" },
    { "pin", 0, 0, G_OPTION_ARG_INT, &pin,
      "RANK is the reference clock (offset 0; default: the lowest rank sharing a collective)",
      "RANK" },
    { "offset", 0, 0, G_OPTION_ARG_STRING_ARRAY, &offsets,
      "RANK's clock offset set by hand, not estimated (ns, or a unit: 3=-1.5ms); repeatable",
      "RANK=OFFSET" },
    { "include-warmup", 0, 0, G_OPTION_ARG_NONE, &include_warmup,
      "The stragglers count the collectives of the first step too (start-up lateness)", NULL },
    G_OPTION_ENTRY_NULL,
  };
  g_autoptr (WickRankJob) job = NULL;
  g_autoptr (GError) error = NULL;
  WickRanksAlignment alignment = WICK_RANKS_ALIGNMENT_INIT;
  g_autofree int *set_ranks = NULL;
  g_autofree gint64 *set_offsets = NULL;
  int status = wick_trace_parse_options (
    "ranks", "FILE…",
    "The ranks of one distributed job (PyTorch profiler traces, one a rank): clock offsets "
    "from the collectives, every collective matched by process group and Seq, stragglers.",
    entries, FALSE, &argc, &argv);

  if (status >= 0)
    return status;
  if (argc < 2)
    return wick_trace_usage_error ("ranks", "one or more rank traces are required");
  if (threads < 0 || threads > 4096)
    return wick_trace_usage_error ("ranks", "--threads needs a count from 0 to 4096");
  if (partial && partials)
    return wick_trace_usage_error ("ranks", "--partial and --partials go apart");
  if (pin < -1 || pin > 1000000)
    return wick_trace_usage_error ("ranks", "--pin needs a rank from 0");
  alignment.pin_rank = pin;
  alignment.include_warmup = include_warmup;
  if (offsets != NULL)
    {
      guint n = g_strv_length (offsets);
      if (n > 100000)
        return wick_trace_usage_error ("ranks", "too many --offset");
      set_ranks = g_new0 (int, n);
      set_offsets = g_new0 (gint64, n);
      for (guint i = 0; i < n; i++)
        {
          const char *eq = strchr (offsets[i], '=');
          char *end = NULL;
          gint64 rank;
          g_autoptr (GError) e = NULL;
          g_autofree char *msg = NULL;
          if (eq == NULL)
            {
              msg = g_strdup_printf ("--offset %s: RANK=OFFSET (3=-1.5ms)", offsets[i]);
              return wick_trace_usage_error ("ranks", "%s", msg);
            }
          rank = g_ascii_strtoll (offsets[i], &end, 10);
          if (end != eq || end == offsets[i] || rank < 0 || rank > 1000000)
            {
              msg = g_strdup_printf ("--offset %s: the rank before = is not a number from 0",
                                     offsets[i]);
              return wick_trace_usage_error ("ranks", "%s", msg);
            }
          if (!wick_ranks_parse_offset (eq + 1, 1, &set_offsets[i], &e))
            {
              msg = g_strdup_printf ("--offset %s: %s", offsets[i], e->message);
              return wick_trace_usage_error ("ranks", "%s", msg);
            }
          set_ranks[i] = (int)rank;
        }
      alignment.n_set = n;
      alignment.set_ranks = set_ranks;
      alignment.set_offsets_ns = set_offsets;
    }

  if (partial)
    {
      for (int i = 1; i < argc; i++)
        {
          g_autoptr (WickRankPartial) p = wick_rank_reduce_file (argv[i], NULL, &error);
          g_autofree char *text = NULL;
          if (p == NULL)
            {
              fprintf (stderr, "wick-trace ranks: %s\n", error->message);
              return error_status (error);
            }
          text = wick_rank_partial_to_json (p);
          printf ("%s\n", text);
        }
      return WICK_TRACE_EXIT_OK;
    }
  if (partials)
    {
      GPtrArray *list = g_ptr_array_new_with_free_func ((GDestroyNotify)wick_rank_partial_free);
      for (int i = 1; i < argc; i++)
        {
          WickRankPartial *p = read_partial (argv[i], &error);
          if (p == NULL)
            {
              fprintf (stderr, "wick-trace ranks: %s\n", error->message);
              g_ptr_array_unref (list);
              return error_status (error);
            }
          g_ptr_array_add (list, p);
        }
      job = wick_ranks_merge_aligned (list, &alignment, &error);
    }
  else
    {
      /* a directory or a .zip/.tar(.gz) of the ranks: their traces, an
       * archive's extracted under a temporary directory removed at the end */
      g_autoptr (GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
      g_autoptr (GPtrArray) tmp_dirs = g_ptr_array_new_with_free_func (g_free);
      g_autoptr (GHashTable) labels = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
      g_autoptr (GPtrArray) expand_notes = g_ptr_array_new_with_free_func (g_free);
      for (int i = 1; i < argc; i++)
        {
          if (!wick_job_is_container (argv[i]))
            {
              g_ptr_array_add (paths, g_strdup (argv[i]));
              continue;
            }
          {
            g_autofree char *dir = NULL;
            g_autoptr (GPtrArray) found = NULL;
            if (!g_file_test (argv[i], G_FILE_TEST_IS_DIR))
              {
                dir = g_dir_make_tmp ("wick-job-XXXXXX", &error);
                if (dir == NULL)
                  break;
                g_ptr_array_add (tmp_dirs, g_strdup (dir));
              }
            found = wick_job_expand (argv[i], dir, labels, expand_notes, NULL, &error);
            if (found == NULL)
              break;
            for (guint k = 0; k < found->len; k++)
              g_ptr_array_add (paths, g_strdup (found->pdata[k]));
          }
        }
      for (guint i = 0; i < expand_notes->len; i++)
        fprintf (stderr, "wick-trace ranks: note: %s\n", (const char *)expand_notes->pdata[i]);
      if (error == NULL)
        job = wick_ranks_reduce_files_aligned ((const char *const *)paths->pdata, paths->len,
                                               (guint)threads, &alignment, NULL, &error);
      if (job != NULL && merged != NULL && !partials
          && !wick_rank_job_write_merged (job, merged, NULL, &error))
        g_clear_pointer (&job, wick_rank_job_free);
      g_clear_pointer (&merged, g_free); /* written (the extracted files go below) */
      for (guint i = 0; job != NULL && i < job->ranks->len; i++)
        {
          WickJobRank *r = &g_array_index (job->ranks, WickJobRank, i);
          const char *label = g_hash_table_lookup (labels, r->file);
          if (label != NULL)
            {
              g_free (r->file);
              r->file = g_strdup (label);
            }
        }
      for (guint i = 0; job != NULL && i < job->partials->len; i++)
        {
          WickRankPartial *p = job->partials->pdata[i];
          const char *label = g_hash_table_lookup (labels, p->file);
          if (label != NULL)
            {
              g_free (p->file);
              p->file = g_strdup (label);
            }
        }
      for (guint i = 0; i < tmp_dirs->len; i++)
        remove_tree (tmp_dirs->pdata[i]);
    }
  if (job == NULL)
    {
      fprintf (stderr, "wick-trace ranks: %s\n", error->message);
      return error_status (error);
    }
  for (guint i = 0; i < job->partials->len; i++)
    {
      const WickRankPartial *p = job->partials->pdata[i];
      for (guint k = 0; k < p->warnings->len; k++)
        fprintf (stderr, "wick-trace ranks: %s: %s\n", p->file,
                 (const char *)p->warnings->pdata[k]);
    }
  if (merged != NULL)
    {
      if (partials)
        return wick_trace_usage_error ("ranks", "--merged needs the traces, not partials");
      if (!wick_rank_job_write_merged (job, merged, NULL, &error))
        {
          fprintf (stderr, "wick-trace ranks: %s\n", error->message);
          return error_status (error);
        }
    }
  if (json)
    {
      g_autofree char *text = wick_rank_job_to_json (job, pretty);
      for (guint i = 0; i < job->notes->len; i++)
        fprintf (stderr, "wick-trace ranks: note: %s\n", (const char *)job->notes->pdata[i]);
      printf ("%s\n", text);
    }
  else
    print_text (job);
  return WICK_TRACE_EXIT_OK;
}
