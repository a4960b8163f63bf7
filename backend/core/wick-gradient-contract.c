/* wick-gradient-contract.c — exact gradient contracts (spec §7.3, §7.4) and the
 * gradient capture plan (named parameters -> sorted, validated contract ->
 * exactly one gradient record per manifest entry).
 *
 * The validation messages are candle-graph's, word for word, so that what a
 * producer is refused for and what the reader reports read the same.
 */
#include "wick-session-internal.h"

#include <ctype.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdlib.h>

struct WickGradientContract
{
  WickExpectedGradient *expected;
  size_t n_expected;
  WickGradientFamily *families;
  size_t n_families;
  char digest[WICK_SHA256_TEXT_LEN];
};

struct WickGradientPlan
{
  char *root;
  char **keys;
  size_t n_keys;
  WickGradientContract *contract;
};

static bool
is_blank (const char *string)
{
  if (string == NULL)
    return true;
  for (; *string != '\0'; string++)
    if (!isspace ((unsigned char)*string))
      return false;
  return true;
}

bool
wick_gradient_manifest_sha256 (const WickExpectedGradient *expected, size_t n_expected,
                               char out[WICK_SHA256_TEXT_LEN], WickError *error)
{
  static const char domain[] = "candle-graph/gradient-manifest/1";
  unsigned char hash[32];
  unsigned int length = 0;
  EVP_MD_CTX *context = EVP_MD_CTX_new ();
  bool ok = context != NULL && EVP_DigestInit_ex (context, EVP_sha256 (), NULL) == 1
            && EVP_DigestUpdate (context, domain, sizeof domain) == 1; /* with its NUL: 0x00 */
  for (size_t i = 0; ok && i < n_expected; i++)
    {
      const char *fields[3] = { expected[i].root, expected[i].key, expected[i].family };
      for (int f = 0; ok && f < 3; f++)
        {
          const char *field = fields[f] ? fields[f] : "";
          uint64_t size = strlen (field);
          unsigned char le[8];
          for (int b = 0; b < 8; b++)
            le[b] = (unsigned char)(size >> (8 * b));
          ok = EVP_DigestUpdate (context, le, 8) == 1
               && EVP_DigestUpdate (context, field, size) == 1;
        }
    }
  ok = ok && EVP_DigestFinal_ex (context, hash, &length) == 1 && length == 32;
  EVP_MD_CTX_free (context);
  if (!ok)
    {
      wick_set_error (error, WICK_ERROR_FAILED, "computing the gradient manifest SHA-256 with libcrypto failed");
      return false;
    }
  static const char hex[] = "0123456789abcdef";
  memcpy (out, "sha256:", 7);
  for (int i = 0; i < 32; i++)
    {
      out[7 + 2 * i] = hex[hash[i] >> 4];
      out[8 + 2 * i] = hex[hash[i] & 15];
    }
  out[71] = '\0';
  return true;
}

static size_t
family_members (const WickExpectedGradient *expected, size_t n, const char *family)
{
  size_t members = 0;
  for (size_t i = 0; i < n; i++)
    if (expected[i].family != NULL && strcmp (expected[i].family, family) == 0)
      members++;
  return members;
}

static bool
validate_entries (const WickExpectedGradient *expected, size_t n, WickError *error)
{
  for (size_t i = 0; i < n; i++)
    {
      if (is_blank (expected[i].root) || is_blank (expected[i].key)
          || is_blank (expected[i].family))
        {
          wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "gradient manifest root, key, and family must not be empty");
          return false;
        }
      for (size_t j = 0; j < i; j++)
        if (strcmp (expected[i].root, expected[j].root) == 0
            && strcmp (expected[i].key, expected[j].key) == 0)
          {
            wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "gradient manifest declares (\"%s\", \"%s\") more than once",
                            expected[i].root, expected[i].key);
            return false;
          }
    }
  return true;
}

static bool
validate_families (const WickExpectedGradient *expected, size_t n_expected,
                   const WickGradientFamily *families, size_t n_families, WickError *error)
{
  for (size_t i = 0; i < n_families; i++)
    {
      const char *name = families[i].family;
      if (is_blank (name))
        {
          wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "gradient family name must not be empty");
          return false;
        }
      for (size_t j = 0; j < i; j++)
        if (strcmp (families[j].family, name) == 0)
          {
            wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "gradient family \"%s\" is declared more than once", name);
            return false;
          }
      size_t members = family_members (expected, n_expected, name);
      if (members == 0)
        {
          wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "gradient family \"%s\" has no manifest members", name);
          return false;
        }
      if (families[i].expectation == WICK_EXPECT_INACTIVE && families[i].min_present != 0)
        {
          wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "inactive gradient family \"%s\" must have min_present=0", name);
          return false;
        }
      if (families[i].expectation != WICK_EXPECT_INACTIVE
          && (families[i].min_present < 1 || families[i].min_present > members))
        {
          wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT,
                          "active or data-conditional gradient family \"%s\" needs "
                          "min_present in 1..=%zu",
                          name, members);
          return false;
        }
      if ((unsigned)families[i].expectation > WICK_EXPECT_DATA_CONDITIONAL)
        {
          wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "gradient family \"%s\" has an invalid expectation", name);
          return false;
        }
    }
  return true;
}

static int
compare_strings (const void *a, const void *b)
{
  return strcmp (*(const char *const *)a, *(const char *const *)b);
}

/* Families used by the manifest, sorted, each must have a contract. */
static bool
validate_family_coverage (const WickExpectedGradient *expected, size_t n_expected,
                          const WickGradientFamily *families, size_t n_families, WickError *error)
{
  const char **used = malloc ((n_expected + 1) * sizeof *used);
  if (used == NULL)
    {
      wick_set_error (error, WICK_ERROR_NO_MEMORY, "out of memory validating the gradient contract");
      return false;
    }
  for (size_t i = 0; i < n_expected; i++)
    used[i] = expected[i].family;
  qsort (used, n_expected, sizeof *used, compare_strings);
  bool ok = true;
  for (size_t i = 0; ok && i < n_expected; i++)
    {
      bool found = false;
      for (size_t f = 0; f < n_families && !found; f++)
        found = strcmp (families[f].family, used[i]) == 0;
      if (!found)
        {
          wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "gradient manifest family \"%s\" has no family contract", used[i]);
          ok = false;
        }
    }
  free (used);
  return ok;
}

static bool
validate_contract (const WickExpectedGradient *expected, size_t n_expected,
                   const WickGradientFamily *families, size_t n_families, WickError *error)
{
  if (n_expected == 0)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "gradient manifest must not be empty");
      return false;
    }
  if (n_families == 0)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "gradient families must not be empty");
      return false;
    }
  /* Rule 3 (digest) holds by construction: the digest is computed here. */
  return validate_entries (expected, n_expected, error)
         && validate_families (expected, n_expected, families, n_families, error)
         && validate_family_coverage (expected, n_expected, families, n_families, error);
}

void
wick_gradient_contract_free (WickGradientContract *contract)
{
  if (contract == NULL)
    return;
  for (size_t i = 0; i < contract->n_expected; i++)
    {
      free ((char *)contract->expected[i].root);
      free ((char *)contract->expected[i].key);
      free ((char *)contract->expected[i].family);
    }
  for (size_t i = 0; i < contract->n_families; i++)
    free ((char *)contract->families[i].family);
  free (contract->expected);
  free (contract->families);
  free (contract);
}

static WickGradientContract *
contract_copy_arrays (const WickExpectedGradient *expected, size_t n_expected,
                      const WickGradientFamily *families, size_t n_families)
{
  WickGradientContract *contract = calloc (1, sizeof *contract);
  if (contract == NULL)
    return NULL;
  contract->expected = calloc (n_expected + 1, sizeof *contract->expected);
  contract->families = calloc (n_families + 1, sizeof *contract->families);
  if (contract->expected == NULL || contract->families == NULL)
    {
      wick_gradient_contract_free (contract);
      return NULL;
    }
  bool ok = true;
  for (size_t i = 0; i < n_expected; i++, contract->n_expected++)
    {
      contract->expected[i].root = strdup (expected[i].root);
      contract->expected[i].key = strdup (expected[i].key);
      contract->expected[i].family = strdup (expected[i].family);
      ok = ok && contract->expected[i].root && contract->expected[i].key
           && contract->expected[i].family;
    }
  for (size_t i = 0; i < n_families; i++, contract->n_families++)
    {
      contract->families[i] = families[i];
      contract->families[i].family = strdup (families[i].family);
      ok = ok && contract->families[i].family;
    }
  if (!ok)
    {
      wick_gradient_contract_free (contract);
      return NULL;
    }
  return contract;
}

WickGradientContract *
wick_gradient_contract_new (const WickExpectedGradient *expected, size_t n_expected,
                            const WickGradientFamily *families, size_t n_families, WickError *error)
{
  if ((n_expected > 0 && expected == NULL) || (n_families > 0 && families == NULL))
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "gradient contract: NULL array with a non-zero count");
      return NULL;
    }
  if (!validate_contract (expected, n_expected, families, n_families, error))
    return NULL;
  WickGradientContract *contract
    = contract_copy_arrays (expected, n_expected, families, n_families);
  if (contract == NULL)
    {
      wick_set_error (error, WICK_ERROR_NO_MEMORY, "out of memory copying the gradient contract");
      return NULL;
    }
  if (!wick_gradient_manifest_sha256 (contract->expected, contract->n_expected, contract->digest,
                                      error))
    {
      wick_gradient_contract_free (contract);
      return NULL;
    }
  return contract;
}

WickGradientContract *
wick_gradient_contract_copy (const WickGradientContract *contract)
{
  if (contract == NULL)
    return NULL;
  WickGradientContract *copy = contract_copy_arrays (contract->expected, contract->n_expected,
                                                     contract->families, contract->n_families);
  if (copy != NULL)
    memcpy (copy->digest, contract->digest, sizeof copy->digest);
  return copy;
}

const char *
wick_gradient_contract_get_digest (const WickGradientContract *contract)
{
  return contract->digest;
}

size_t
wick_gradient_contract_get_n_expected (const WickGradientContract *contract)
{
  return contract->n_expected;
}

const WickExpectedGradient *
wick_gradient_contract_get_expected (const WickGradientContract *contract, size_t index)
{
  return index < contract->n_expected ? &contract->expected[index] : NULL;
}

size_t
wick_gradient_contract_get_n_families (const WickGradientContract *contract)
{
  return contract->n_families;
}

const WickGradientFamily *
wick_gradient_contract_get_family (const WickGradientContract *contract, size_t index)
{
  return index < contract->n_families ? &contract->families[index] : NULL;
}

/* ---------------------------------------------------------------------------
 * The capture plan
 */

void
wick_gradient_plan_free (WickGradientPlan *plan)
{
  if (plan == NULL)
    return;
  for (size_t i = 0; i < plan->n_keys; i++)
    free (plan->keys[i]);
  free (plan->keys);
  free (plan->root);
  wick_gradient_contract_free (plan->contract);
  free (plan);
}

static WickGradientPlan *
plan_new_sorted (const char *root, const char *const *keys, size_t n_keys)
{
  WickGradientPlan *plan = calloc (1, sizeof *plan);
  if (plan == NULL)
    return NULL;
  plan->root = strdup (root);
  plan->keys = calloc (n_keys + 1, sizeof *plan->keys);
  if (plan->root == NULL || plan->keys == NULL)
    {
      wick_gradient_plan_free (plan);
      return NULL;
    }
  for (size_t i = 0; i < n_keys; i++, plan->n_keys++)
    if ((plan->keys[i] = strdup (keys[i] ? keys[i] : "")) == NULL)
      {
        wick_gradient_plan_free (plan);
        return NULL;
      }
  qsort (plan->keys, plan->n_keys, sizeof *plan->keys, compare_strings);
  return plan;
}

WickGradientPlan *
wick_gradient_plan_new (const char *root, const char *const *keys, size_t n_keys,
                        WickFamilyFunc assign_family, void *user_data,
                        const WickGradientFamily *families, size_t n_families, WickError *error)
{
  if (root == NULL || assign_family == NULL || (n_keys > 0 && keys == NULL))
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "gradient plan: root, keys and assign_family are required");
      return NULL;
    }
  WickGradientPlan *plan = plan_new_sorted (root, keys, n_keys);
  WickExpectedGradient *expected = calloc (n_keys + 1, sizeof *expected);
  char **family_names = calloc (n_keys + 1, sizeof *family_names);
  if (plan == NULL || expected == NULL || family_names == NULL)
    {
      wick_set_error (error, WICK_ERROR_NO_MEMORY, "out of memory building the gradient plan");
      goto fail;
    }
  for (size_t i = 0; i < n_keys; i++)
    {
      const char *family = assign_family (plan->keys[i], user_data);
      family_names[i] = strdup (family ? family : "");
      if (family_names[i] == NULL)
        {
          wick_set_error (error, WICK_ERROR_NO_MEMORY, "out of memory building the gradient plan");
          goto fail;
        }
      expected[i].root = plan->root;
      expected[i].key = plan->keys[i];
      expected[i].family = family_names[i];
    }
  WickError inner;
  plan->contract = wick_gradient_contract_new (expected, n_keys, families, n_families, &inner);
  if (plan->contract == NULL)
    {
      wick_set_error (error, inner.code, "building exact gradient contract from named parameters: %s",
                      inner.message);
      goto fail;
    }
  for (size_t i = 0; i < n_keys; i++)
    free (family_names[i]);
  free (family_names);
  free (expected);
  return plan;

fail:
  for (size_t i = 0; family_names != NULL && i < n_keys; i++)
    free (family_names[i]);
  free (family_names);
  free (expected);
  wick_gradient_plan_free (plan);
  return NULL;
}

const char *
wick_gradient_plan_get_root (const WickGradientPlan *plan)
{
  return plan->root;
}

const WickGradientContract *
wick_gradient_plan_get_contract (const WickGradientPlan *plan)
{
  return plan->contract;
}

size_t
wick_gradient_plan_get_n_keys (const WickGradientPlan *plan)
{
  return plan->n_keys;
}

const char *
wick_gradient_plan_get_key (const WickGradientPlan *plan, size_t index)
{
  return index < plan->n_keys ? plan->keys[index] : NULL;
}

long
wick_gradient_plan_find_key (const WickGradientPlan *plan, const char *key)
{
  size_t low = 0, high = plan->n_keys;
  while (low < high)
    {
      size_t mid = (low + high) / 2;
      int order = strcmp (plan->keys[mid], key);
      if (order == 0)
        return (long)mid;
      if (order < 0)
        low = mid + 1;
      else
        high = mid;
    }
  return -1;
}

bool
wick_gradient_plan_record (const WickGradientPlan *plan, WickSession *session,
                           const WickParameterGradient *gradients, size_t n_gradients,
                           WickError *error)
{
  if (plan == NULL || session == NULL || gradients == NULL || n_gradients != plan->n_keys)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "gradient plan: %zu gradients given for %zu manifest entries",
                      n_gradients, plan ? plan->n_keys : 0);
      return false;
    }
  for (size_t i = 0; i < plan->n_keys; i++)
    {
      WickGradientState state;
      bool has_norm = false;
      double norm = 0.0;
      if (!gradients[i].has_gradient)
        state = WICK_GRADIENT_MISSING;
      else if (!isfinite (gradients[i].norm))
        state = WICK_GRADIENT_NON_FINITE;
      else if (gradients[i].norm == 0.0)
        state = WICK_GRADIENT_ZERO, has_norm = true, norm = 0.0;
      else
        state = WICK_GRADIENT_PRESENT, has_norm = true, norm = gradients[i].norm;
      WickError inner;
      if (!wick_session_record_gradient (session, plan->root, plan->keys[i], state, has_norm, norm,
                                         &inner))
        {
          wick_set_error (error, inner.code, "recording gradient event for \"%s\": %s", plan->keys[i],
                          inner.message);
          return false;
        }
    }
  return true;
}
