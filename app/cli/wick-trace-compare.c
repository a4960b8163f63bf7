/* wick-trace-compare.c — `wick-trace compare [--json] [--allow-mismatch] A B`
 * and `wick-trace compare A1 A2 ... --cohort-b B1 --cohort-b B2 ...` (or
 * `--cohort A1 A2 ... -- B1 B2 ...` where the option parser leaves the `--`:
 * GLib 2.74's removes it): what changed from A to B (wick-compare.h has the
 * statistics).
 *
 * Two CUDA memory snapshots (pickles) are compared by stack instead
 * (wick_trace_memory_compare in wick-trace-memory.c).
 *
 * Exit status: 0 when nothing changed significantly, 1 when something did
 * (for CI gates), 2 when a file does not parse, 3 on usage or I/O errors and
 * when the runs' identities differ without --allow-mismatch.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wick-chrome-import.h"
#include "wick-compare.h"
#include "wick-memory-snapshot.h"
#include "wick-trace-commands.h"

static int
usage (void)
{
  return wick_trace_usage_error ("compare", "two traces A B, or cohorts A1 A2 ... --cohort-b B1 "
                                            "--cohort-b B2 ...");
}

/* The value of a numeric option (a double when @base is -1, else an integer
 * in that base, 0 for C's prefixes); FALSE after the usage error naming it. */
static gboolean
parse_number (const char *option, const char *text, int base, double *number, guint64 *count)
{
  char *end = NULL;
  if (text == NULL)
    return TRUE;
  if (base >= 0)
    *count = g_ascii_strtoull (text, &end, (guint)base);
  else
    *number = g_ascii_strtod (text, &end);
  if (end == NULL || *end != '\0' || end == text)
    {
      fprintf (stderr, "wick-trace compare: %s needs a number, not “%s”\n", option, text);
      return FALSE;
    }
  return TRUE;
}

/* Loads one file; a parse error is fatal (exit 2): comparing half a run
 * against a whole one would report the cut as a change. */
static WickDocument *
load (const char *path, int *status)
{
  g_autoptr (WickDocument) doc = wick_document_new_with_extensions (TRUE);
  g_autoptr (GError) error = NULL;

  if (!wick_document_load_file_auto (doc, path, NULL, NULL, NULL, &error))
    {
      const WickParseError *pe = wick_document_get_parse_error (doc);
      if (pe->failed)
        {
          fprintf (stderr, "wick-trace compare: %s%s%s\n", pe->message, pe->cause ? ": " : "",
                   pe->cause ? pe->cause : "");
          *status = MAX (*status, WICK_TRACE_EXIT_PARSE);
        }
      else
        {
          fprintf (stderr, "wick-trace compare: %s\n", error->message);
          *status = WICK_TRACE_EXIT_USAGE;
        }
      return NULL;
    }
  return g_steal_pointer (&doc);
}

static void
format_ns (char *buffer, gsize size, double ns)
{
  if (isnan (ns))
    g_snprintf (buffer, size, "—");
  else if (ns >= 1e9)
    g_snprintf (buffer, size, "%.3f s", ns / 1e9);
  else if (ns >= 1e6)
    g_snprintf (buffer, size, "%.3f ms", ns / 1e6);
  else if (ns >= 1e3)
    g_snprintf (buffer, size, "%.2f µs", ns / 1e3);
  else
    g_snprintf (buffer, size, "%.0f ns", ns);
}

static void
print_text (const WickComparison *c, guint n_a, guint n_b)
{
  guint shown = 0;

  g_autofree char *runs_a = wick_trace_count (n_a, "run", "runs");
  g_autofree char *runs_b = wick_trace_count (n_b, "run", "runs");
  g_autofree char *testable = wick_trace_count (c->n_testable, "entry", "entries");
  printf ("A: %s, B: %s; %s testable, %u changed significantly "
          "(bootstrap %u resamples, seed %" G_GUINT64_FORMAT ", Bonferroni over %u, "
          "min change %.0f%%)\n",
          runs_a, runs_b, testable, c->n_significant, c->n_resamples, c->seed, c->n_testable,
          c->min_change * 100);
  for (guint i = 0; i < c->differences->len; i++)
    {
      const WickCompareDifference *d = g_ptr_array_index (c->differences, i);
      printf ("%s %s: %s vs %s (%s)\n", d->informational ? "note:" : "identity differs:", d->field,
              d->a, d->b, d->run);
    }

  printf ("\n%-4s %-7s %-40s %12s %12s %8s %19s\n", "", "kind", "name", "mean A", "mean B", "B/A",
          "95% CI");
  for (guint i = 0; i < c->entries->len; i++)
    {
      const WickCompareEntry *e = &g_array_index (c->entries, WickCompareEntry, i);
      char ma[32], mb[32], ratio[32] = "—", ci[48] = "";
      const char *mark = e->significant                      ? "***"
                         : e->status == WICK_COMPARE_ADDED   ? "+"
                         : e->status == WICK_COMPARE_REMOVED ? "-"
                                                             : "";

      /* text output: what changed, then the 20 largest other changes */
      if (!e->significant && e->status == WICK_COMPARE_BOTH && shown >= 20)
        continue;
      if (!e->significant && e->status == WICK_COMPARE_BOTH)
        shown++;
      format_ns (ma, sizeof ma, e->count_a ? e->mean_ns_a : NAN);
      format_ns (mb, sizeof mb, e->count_b ? e->mean_ns_b : NAN);
      if (!isnan (e->ratio))
        g_snprintf (ratio, sizeof ratio, "%.3f", e->ratio);
      if (e->testable)
        g_snprintf (ci, sizeof ci, "[%.3f, %.3f]", e->ci95_low, e->ci95_high);
      else if (e->status == WICK_COMPARE_BOTH)
        g_snprintf (ci, sizeof ci, "(too few samples)");
      else
        g_snprintf (ci, sizeof ci, "(%s)", wick_compare_status_to_string (e->status));
      printf ("%-4s %-7s %-40.40s %12s %12s %8s %19s\n", mark,
              wick_compare_kind_to_string (e->kind), e->name, ma, mb, ratio, ci);
    }

  if (c->memory->len)
    {
      printf ("\n%-12s %-18s %14s %14s %14s\n", "device", "memory", "peak A", "peak B", "B − A");
      for (guint i = 0; i < c->memory->len; i++)
        {
          const WickCompareMemory *m = &g_array_index (c->memory, WickCompareMemory, i);
          printf ("%-12s %-18s %14" G_GUINT64_FORMAT " %14" G_GUINT64_FORMAT " %+14" G_GINT64_FORMAT
                  "\n",
                  m->device, m->category, m->peak_a, m->peak_b, (gint64)(m->peak_b - m->peak_a));
        }
    }
  printf ("\ngradient coverage: %s (A) vs %s (B)", c->coverage_a, c->coverage_b);
  printf (", %u manifest entr%s changed\n", c->gradient_changes->len,
          c->gradient_changes->len == 1 ? "y" : "ies");
  for (guint i = 0; i < c->gradient_changes->len; i++)
    {
      const WickCompareGradientChange *g
        = &g_array_index (c->gradient_changes, WickCompareGradientChange, i);
      printf ("  %s/%s: %s → %s", g->root, g->key, g->state_a, g->state_b);
      if (strcmp (g->change, "norm") == 0)
        printf (" (norm %.4g → %.4g)", g->norm_a, g->norm_b);
      printf ("\n");
    }
  for (guint i = 0; i < c->health->len; i++)
    {
      const WickCompareHealth *h = &g_array_index (c->health, WickCompareHealth, i);
      printf ("health only in %s: %s %s ×%u: %s\n", h->in_a ? "A" : "B", h->severity, h->code,
              h->count, h->message);
    }
  for (guint side = 0; side < 2; side++)
    {
      GPtrArray *runs = side == 0 ? c->runs_a : c->runs_b;
      for (guint i = 0; i < runs->len; i++)
        {
          const WickCompareRun *run = g_ptr_array_index (runs, i);
          if (run->steps->len && !isnan (run->drift))
            {
              g_autofree char *steps = wick_trace_count (run->steps->len, "step", "steps");
              printf ("%s: %s, second half / first half median step time %.3f\n", run->label,
                      steps, run->drift);
            }
        }
    }
}

int
wick_trace_compare (int argc, char **argv)
{
  gboolean json = FALSE, cohort = FALSE;
  WickCompareOptions options = { FALSE, 0, 0, -1 };
  g_autoptr (GPtrArray) a = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr (GPtrArray) b = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr (GPtrArray) files_a = g_ptr_array_new ();
  g_autoptr (GPtrArray) files_b = g_ptr_array_new ();
  g_autoptr (WickComparison) comparison = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *min_change = NULL, *resamples = NULL, *seed = NULL;
  g_auto (GStrv) cohort_a = NULL, cohort_b = NULL;
  gboolean after_separator = FALSE;
  int status = WICK_TRACE_EXIT_OK;
  const GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "The comparison as one JSON object", NULL },
    { "allow-mismatch", 0, 0, G_OPTION_ARG_NONE, &options.allow_mismatch,
      "Compare runs whose identities differ (the mismatch is still reported)", NULL },
    { "cohort", 0, 0, G_OPTION_ARG_NONE, &cohort,
      "Compare cohorts of runs: A1 A2 ... -- B1 B2 ... (where the -- reaches the command)", NULL },
    { "cohort-a", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &cohort_a,
      "A run of cohort A (repeat it; the files without an option are A's too)", "FILE" },
    { "cohort-b", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &cohort_b,
      "A run of cohort B (repeat it): compares cohorts", "FILE" },
    { "min-change", 0, 0, G_OPTION_ARG_STRING, &min_change,
      "Smallest relative change reported (docs/compare.md)", "F" },
    { "resamples", 0, 0, G_OPTION_ARG_STRING, &resamples, "Bootstrap resamples", "N" },
    { "seed", 0, 0, G_OPTION_ARG_STRING, &seed, "Seed of the bootstrap", "N" },
    G_OPTION_ENTRY_NULL,
  };
  int parsed = wick_trace_parse_options (
    "compare", "A B | A1 A2 ... --cohort-b B1 --cohort-b B2 ...",
    "What changed between two runs of the same workload, or two cohorts of runs.\n"
    "Exit status: 0 nothing changed significantly, 1 something did, 2 a parse error, "
    "3 usage or I/O error.",
    entries, TRUE, &argc, &argv);
  if (parsed >= 0)
    return parsed;
  guint64 n_resamples = options.n_resamples;
  if (!parse_number ("--min-change", min_change, -1, &options.min_change, NULL)
      || !parse_number ("--resamples", resamples, 10, NULL, &n_resamples)
      || !parse_number ("--seed", seed, 0, NULL, &options.seed))
    return WICK_TRACE_EXIT_USAGE;
  options.n_resamples = (guint)n_resamples;

  if (cohort_a != NULL || cohort_b != NULL)
    cohort = TRUE;
  for (int i = 0; cohort_a != NULL && cohort_a[i] != NULL; i++)
    g_ptr_array_add (files_a, cohort_a[i]);
  for (int i = 0; cohort_b != NULL && cohort_b[i] != NULL; i++)
    g_ptr_array_add (files_b, cohort_b[i]);
  for (int i = 1; i < argc; i++)
    {
      const char *arg = argv[i];
      if (!after_separator && strcmp (arg, "--") == 0)
        after_separator = TRUE;
      else if (cohort)
        g_ptr_array_add (after_separator ? files_b : files_a, (gpointer)arg);
      else
        g_ptr_array_add (files_a->len == 0 ? files_a : files_b, (gpointer)arg);
    }
  if ((!cohort && (files_a->len != 1 || files_b->len != 1)) || files_a->len == 0
      || files_b->len == 0)
    return usage ();

  if (!cohort)
    {
      const char *fa = g_ptr_array_index (files_a, 0), *fb = g_ptr_array_index (files_b, 0);
      gboolean snap_a = wick_memory_snapshot_sniff_path (fa);
      gboolean snap_b = wick_memory_snapshot_sniff_path (fb);
      if (snap_a && snap_b)
        return wick_trace_memory_compare (fa, fb, json);
      if (snap_a != snap_b)
        return wick_trace_usage_error ("compare", "%s is a CUDA memory snapshot and %s is not",
                                       snap_a ? fa : fb, snap_a ? fb : fa);
    }

  for (guint side = 0; side < 2; side++)
    {
      GPtrArray *files = side == 0 ? files_a : files_b;
      for (guint i = 0; i < files->len; i++)
        {
          WickDocument *doc = load (g_ptr_array_index (files, i), &status);
          if (doc)
            g_ptr_array_add (side == 0 ? a : b, doc);
        }
    }
  if (status != WICK_TRACE_EXIT_OK)
    return status;

  comparison = wick_comparison_new ((WickDocument *const *)a->pdata, a->len,
                                    (WickDocument *const *)b->pdata, b->len, &options, &error);
  if (comparison == NULL)
    {
      fprintf (stderr, "wick-trace compare: %s\n", error->message);
      if (json)
        {
          g_autoptr (GPtrArray) differences = wick_compare_identity (
            (WickDocument *const *)a->pdata, a->len, (WickDocument *const *)b->pdata, b->len);
          g_autofree char *text = wick_compare_identity_to_json (differences);
          printf ("%s\n", text);
        }
      return WICK_TRACE_EXIT_USAGE;
    }
  if (json)
    {
      g_autofree char *text = wick_comparison_to_json (comparison);
      printf ("%s\n", text);
    }
  else
    print_text (comparison, a->len, b->len);
  return comparison->n_significant ? WICK_TRACE_EXIT_HEALTH : WICK_TRACE_EXIT_OK;
}
