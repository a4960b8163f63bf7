/* wick-gradient-report.c — the gradient coverage table (see the header). */
#include "config.h"

#include "wick-gradient-report.h"

#include "wick-health.h"

#include <string.h>

typedef struct
{
  gint32 first;
  guint32 count;
} KeyUse;

/* (root, key) -> first gradient record and number of records */
static GHashTable *
index_gradients (WickDocument *document)
{
  guint n;
  const WickGradient *gradients = wick_document_get_gradients (document, &n);
  GHashTable *uses = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);

  for (guint i = 0; i < n; i++)
    {
      gint64 key = (gint64)(((guint64)gradients[i].root << 32) | gradients[i].key);
      KeyUse *use = g_hash_table_lookup (uses, &key);
      if (use == NULL)
        {
          use = g_new (KeyUse, 1);
          use->first = (gint32)i;
          use->count = 0;
          g_hash_table_insert (uses, g_memdup2 (&key, sizeof key), use);
        }
      use->count++;
    }
  return uses;
}

static void
fill_entries (WickGradientReport *report, WickDocument *document, const WickTraceMeta *meta)
{
  const WickGradient *gradients = wick_document_get_gradients (document, NULL);
  g_autoptr (GHashTable) uses = index_gradients (document);

  for (guint i = 0; i < meta->expected->len; i++)
    {
      const WickExpectedGradientEntry *e
        = &g_array_index (meta->expected, WickExpectedGradientEntry, i);
      WickGradientEntryRow row = { e->root, e->key, e->family, -1, 0, FALSE, 0, FALSE, 0.0 };
      gint64 key = (gint64)(((guint64)e->root << 32) | e->key);
      const KeyUse *use = g_hash_table_lookup (uses, &key);
      if (use != NULL)
        {
          const WickGradient *g = &gradients[use->first];
          row.gradient = use->first;
          row.observed_count = use->count;
          row.observed = TRUE;
          row.state = g->state;
          row.has_norm = g->has_norm;
          row.norm = g->norm;
        }
      g_array_append_val (report->entries, row);
    }
}

static void
fill_families (WickGradientReport *report, const WickTraceMeta *meta, gboolean failed,
               gboolean provisional)
{
  for (guint i = 0; i < meta->families->len; i++)
    {
      const WickGradientFamilyContract *f
        = &g_array_index (meta->families, WickGradientFamilyContract, i);
      WickGradientFamilyRow row = { f->family, f->expectation, f->min_present, 0 };
      gboolean complete;

      for (guint j = 0; j < report->entries->len; j++)
        {
          const WickGradientEntryRow *e = &g_array_index (report->entries, WickGradientEntryRow, j);
          if (e->family != f->family)
            continue;
          row.members++;
          if (!e->observed)
            continue;
          row.observed++;
          row.present += e->state == WICK_GRADIENT_PRESENT;
          row.attached += e->state != WICK_GRADIENT_MISSING;
          row.non_finite += e->state == WICK_GRADIENT_NON_FINITE;
        }
      complete = row.observed == row.members;
      row.ok = TRUE;
      row.verdict = "ok";
      if (row.members == 0)
        row.ok = FALSE, row.verdict = "no members";
      else if (row.non_finite > 0)
        row.ok = FALSE, row.verdict = "non-finite";
      else if (provisional && f->expectation == WICK_EXPECT_ACTIVE && row.present < f->min_present)
        row.ok = FALSE, row.verdict = "pending"; /* the run may still capture them */
      else if (f->expectation == WICK_EXPECT_ACTIVE && (!failed || complete)
               && row.present < f->min_present)
        row.ok = FALSE, row.verdict = "below minimum";
      else if (f->expectation == WICK_EXPECT_INACTIVE && row.attached > 0)
        row.ok = FALSE, row.verdict = "leakage";
      else if (provisional && f->expectation == WICK_EXPECT_DATA_CONDITIONAL && row.present > 0
               && row.present < f->min_present)
        row.ok = FALSE, row.verdict = "pending";
      else if (f->expectation == WICK_EXPECT_DATA_CONDITIONAL && (!failed || complete)
               && row.present > 0 && row.present < f->min_present)
        row.ok = FALSE, row.verdict = "below minimum";
      g_array_append_val (report->families, row);
    }
}

WickGradientReport *
wick_gradient_report_new (WickDocument *document)
{
  const WickTraceMeta *meta = wick_document_get_meta (document);
  WickGradientReport *report = g_new0 (WickGradientReport, 1);
  gboolean failed
    = wick_document_has_terminal (document) && !wick_document_get_capture_complete (document);

  report->entries = g_array_new (FALSE, FALSE, sizeof (WickGradientEntryRow));
  report->families = g_array_new (FALSE, FALSE, sizeof (WickGradientFamilyRow));
  wick_document_get_gradients (document, &report->n_gradients);
  report->declared = meta->gradients;
  report->verdict = wick_document_get_gradient_coverage (document);
  report->reason = g_strdup (wick_document_get_gradient_coverage_reason (document));
  if (!meta->present || !meta->has_gradient_contract)
    return report;

  report->has_contract = TRUE;
  report->declared_sha256 = g_strdup (wick_document_str (document, meta->manifest_sha256));
  report->computed_sha256 = wick_manifest_digest (document, meta->expected);
  report->digest_matches = g_strcmp0 (report->declared_sha256, report->computed_sha256) == 0;
  report->contract_error = wick_gradient_contract_validate (document);
  fill_entries (report, document, meta);
  fill_families (report, meta, failed, wick_document_get_health_provisional (document));
  return report;
}

void
wick_gradient_report_free (WickGradientReport *report)
{
  if (report == NULL)
    return;
  g_array_unref (report->entries);
  g_array_unref (report->families);
  g_free (report->declared_sha256);
  g_free (report->computed_sha256);
  g_free (report->contract_error);
  g_free (report->reason);
  g_free (report);
}
