/* wick-health.h — the health verdicts' entry points inside the model (the
 * getters are in wick-document.h). Not for the app or the CLI. */
#pragma once

#include "wick-document-private.h"

G_BEGIN_DECLS

/* Health and coverage per spec §6–7 into the document's analysis fields. With
 * @live, the capture is taken as still running (see wick_document_analyze). */
void wick_health_analyze (WickDocument *self, gboolean live);

/* Resolves every span's parent index and depth (candle-graph's parent walk,
 * cycles cut), whether or not the document finished. */
void wick_document_resolve_hierarchy (WickDocument *self);

/* Spec §7.4 digest of a contract's expected list, "sha256:" + hex. */
char *wick_manifest_digest (WickDocument *self, const GArray *expected);
/* Spec §7.3; NULL when the contract is valid. */
char *wick_gradient_contract_validate (WickDocument *self);

G_END_DECLS
