/* wick-gradient-report.h — the gradient coverage table: the manifest, the
 * families and the verdict, derived with candle-graph's rules (spec §7).
 *
 * Entries follow the contract's `expected` order. For each entry, the first
 * gradient record with its (root, key) gives the observed state and norm
 * (the record candle-graph judges families by); observed_count is how many
 * records carry that key (more than one is gradient_manifest_duplicate_key).
 *
 * Families follow the contract's `families` order: members = expected entries
 * of that family; observed = members with a record; present = observed members
 * in state present; attached = observed members whose state is not missing;
 * non_finite likewise. verdict is "ok" or the failing rule of §7.5
 * ("non-finite", "below minimum", "leakage"); a family with no members is
 * "no members" (the contract is then invalid).
 *
 * The digest is recomputed from `expected` (spec §7.4) and compared with the
 * declared manifest_sha256. The coverage verdict is the document's (§7.6),
 * with a human reason.
 */
#pragma once

#include "wick-document.h"

G_BEGIN_DECLS

typedef struct
{
  WickStr root, key, family;
  gint32 gradient; /* index of the first matching gradient record, -1 if none */
  guint32 observed_count;
  gboolean observed;
  guint8 state; /* WickGradientState, valid when observed */
  gboolean has_norm;
  double norm;
} WickGradientEntryRow;

typedef struct
{
  WickStr family;
  guint8 expectation; /* WickGradientExpectation */
  guint64 min_present;
  guint members, observed, present, attached, non_finite;
  gboolean ok;
  const char *verdict; /* static: "ok", "non-finite", "below minimum", "leakage", "no members",
                          "pending" (below its minimum so far in a run in progress) */
} WickGradientFamilyRow;

typedef struct
{
  gboolean has_contract;
  guint8 declared;       /* WickCoverage of capture_contract.gradients */
  GArray *entries;       /* WickGradientEntryRow */
  GArray *families;      /* WickGradientFamilyRow */
  char *declared_sha256; /* as written, NULL without a contract */
  char *computed_sha256; /* recomputed, NULL without a contract */
  gboolean digest_matches;
  char *contract_error; /* §7.3 validation message, NULL when valid or absent */
  guint n_gradients;    /* gradient records in the trace */
  WickCoverageVerdict verdict;
  char *reason; /* human reason for the verdict */
} WickGradientReport;

WickGradientReport *wick_gradient_report_new (WickDocument *document);
void wick_gradient_report_free (WickGradientReport *report);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickGradientReport, wick_gradient_report_free)

/* The states' and expectations' spellings are libwick's
 * (wick_gradient_state_to_string, wick_gradient_expectation_to_string in
 * wick/wick-session.h), linked through backend/common. */

G_END_DECLS
