/* _wick.c — the CPython extension over libwick (the `wick` package's core).
 *
 * Thin by design: every call maps to one libwick function; the Pythonic layer
 * (context managers, decorators, torch) is python/wick/ (*.py). Every libwick
 * failure raises wick.Error with libwick's sentence; wrong types raise
 * TypeError/ValueError naming the argument. Built against the limited API
 * (Py_LIMITED_API, 3.10) where the interpreter allows it (python/meson.build).
 *
 * The GIL is released around calls that may wait (finish, evict, restore,
 * use_begin, a capture request), so the control socket's thread and Python
 * threads never wait on each other through it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include <wick/wick.h>

#define MAX_RANK 32
#define MAX_ITEMS 64

/* ------------------------------------------------------------------------ */
/* Module state (one module instance; the types are heap types). */

static PyObject *WickErrorType;
static PyObject *SessionType;
static PyObject *SpanType;
static PyObject *ContractType;
static PyObject *PlanType;
static PyObject *StageType;

static PyObject *
raise_wick (const WickError *error)
{
  PyErr_SetString (WickErrorType, error->message[0] != '\0' ? error->message : "libwick failed");
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Argument helpers */

/* The name of obj's type, for messages (the limited API hides tp_name). Not
 * reentrant: one use per message. */
static const char *
type_name (PyObject *obj)
{
  static char buffer[128];
  PyObject *name = PyObject_GetAttrString ((PyObject *)Py_TYPE (obj), "__name__");
  const char *text = name != NULL ? PyUnicode_AsUTF8AndSize (name, NULL) : NULL;
  snprintf (buffer, sizeof buffer, "%s", text != NULL ? text : "?");
  Py_XDECREF (name);
  if (text == NULL)
    PyErr_Clear ();
  return buffer;
}

typedef struct
{
  const char *name;
  int value;
} EnumEntry;

static const EnumEntry span_kinds[] = {
  { "function", WICK_SPAN_FUNCTION }, { "op", WICK_SPAN_OP }, { "module", WICK_SPAN_MODULE },
  { NULL, 0 }
};
static const EnumEntry steps[] = { { "forward", WICK_STEP_FORWARD },
                                   { "backward", WICK_STEP_BACKWARD },
                                   { "optimizer", WICK_STEP_OPTIMIZER },
                                   { NULL, 0 } };
static const EnumEntry categories[] = {
  { "parameter", WICK_CATEGORY_PARAMETER }, { "activation", WICK_CATEGORY_ACTIVATION },
  { "gradient", WICK_CATEGORY_GRADIENT },   { "optimizer", WICK_CATEGORY_OPTIMIZER },
  { "other", WICK_CATEGORY_OTHER },         { NULL, 0 }
};
static const EnumEntry actions[]
  = { { "alloc", WICK_MEMORY_ALLOC }, { "free", WICK_MEMORY_FREE }, { NULL, 0 } };
static const EnumEntry gradient_states[] = { { "present", WICK_GRADIENT_PRESENT },
                                             { "missing", WICK_GRADIENT_MISSING },
                                             { "zero", WICK_GRADIENT_ZERO },
                                             { "non_finite", WICK_GRADIENT_NON_FINITE },
                                             { NULL, 0 } };
static const EnumEntry expectations[] = { { "active", WICK_EXPECT_ACTIVE },
                                          { "inactive", WICK_EXPECT_INACTIVE },
                                          { "data_conditional", WICK_EXPECT_DATA_CONDITIONAL },
                                          { NULL, 0 } };
static const EnumEntry phases[]
  = { { "train", WICK_PHASE_TRAIN }, { "infer", WICK_PHASE_INFER }, { NULL, 0 } };
static const EnumEntry coverages[] = { { "none", WICK_COVERAGE_NONE },
                                       { "partial", WICK_COVERAGE_PARTIAL },
                                       { "complete", WICK_COVERAGE_COMPLETE },
                                       { NULL, 0 } };
static const EnumEntry scopes[] = { { "unknown", WICK_SCOPE_UNKNOWN },
                                    { "profiled_work", WICK_SCOPE_PROFILED_WORK },
                                    { "production_equivalent", WICK_SCOPE_PRODUCTION_EQUIVALENT },
                                    { NULL, 0 } };
static const EnumEntry timing_modes[] = { { "host", WICK_TIMING_HOST },
                                          { "device_synchronized",
                                            WICK_TIMING_DEVICE_SYNCHRONIZED },
                                          { NULL, 0 } };
static const EnumEntry policies[] = { { "drop", WICK_RING_DROP },
                                      { "block", WICK_RING_BLOCK },
                                      { "overwrite", WICK_RING_OVERWRITE },
                                      { NULL, 0 } };
static const EnumEntry tiers[] = {
  { "auto", WICK_TIER_AUTO }, { "disk", WICK_TIER_DISK }, { "ram", WICK_TIER_RAM }, { NULL, 0 }
};
static const EnumEntry memories[]
  = { { "host", WICK_WEIGHT_MEMORY_HOST }, { "cuda", WICK_WEIGHT_MEMORY_CUDA }, { NULL, 0 } };
static const EnumEntry stage_dtypes[]
  = { { "f32", WICK_STAGE_DTYPE_F32 }, { "f16", WICK_STAGE_DTYPE_F16 },
      { "bf16", WICK_STAGE_DTYPE_BF16 }, { "f64", WICK_STAGE_DTYPE_F64 },
      { "i32", WICK_STAGE_DTYPE_I32 }, { "i64", WICK_STAGE_DTYPE_I64 },
      { "u8", WICK_STAGE_DTYPE_U8 }, { NULL, 0 } };

/* A str argument; NULL with TypeError naming the argument otherwise. */
static const char *
arg_string (PyObject *obj, const char *what)
{
  if (!PyUnicode_Check (obj))
    {
      PyErr_Format (PyExc_TypeError, "%s must be a str, not %s", what, type_name (obj));
      return NULL;
    }
  Py_ssize_t size;
  const char *text = PyUnicode_AsUTF8AndSize (obj, &size);
  if (text != NULL && (size_t)size != strlen (text))
    {
      PyErr_Format (PyExc_ValueError, "%s must not contain NUL characters", what);
      return NULL;
    }
  return text;
}

/* A str or None (NULL out, true). */
static bool
arg_optional_string (PyObject *obj, const char *what, const char **out)
{
  if (obj == NULL || obj == Py_None)
    {
      *out = NULL;
      return true;
    }
  *out = arg_string (obj, what);
  return *out != NULL;
}

static bool
arg_enum (PyObject *obj, const EnumEntry *table, const char *what, int *out)
{
  const char *text = arg_string (obj, what);
  if (text == NULL)
    return false;
  for (const EnumEntry *e = table; e->name != NULL; e++)
    if (strcmp (e->name, text) == 0)
      {
        *out = e->value;
        return true;
      }
  /* the list of names only for the error (every record passes here) */
  char names[256] = "";
  size_t used = 0;
  for (const EnumEntry *e = table; e->name != NULL; e++)
    used += (size_t)snprintf (names + used, used < sizeof names ? sizeof names - used : 0,
                              "%s'%s'", e == table ? "" : ", ", e->name);
  PyErr_Format (PyExc_ValueError, "%s must be one of %s, got '%s'", what, names, text);
  return false;
}

static const char *
enum_name (const EnumEntry *table, int value)
{
  for (const EnumEntry *e = table; e->name != NULL; e++)
    if (e->value == value)
      return e->name;
  return "unknown";
}

static bool
arg_u64 (PyObject *obj, const char *what, uint64_t *out)
{
  if (!PyLong_Check (obj))
    {
      PyErr_Format (PyExc_TypeError, "%s must be an int, not %s", what, type_name (obj));
      return false;
    }
  unsigned long long value = PyLong_AsUnsignedLongLong (obj);
  if (value == (unsigned long long)-1 && PyErr_Occurred ())
    {
      PyErr_Clear ();
      PyErr_Format (PyExc_ValueError, "%s must be a non-negative int below 2**64", what);
      return false;
    }
  *out = value;
  return true;
}

static bool
arg_double (PyObject *obj, const char *what, double *out)
{
  if (!PyFloat_Check (obj) && !PyLong_Check (obj))
    {
      PyErr_Format (PyExc_TypeError, "%s must be a float, not %s", what, type_name (obj));
      return false;
    }
  *out = PyFloat_AsDouble (obj);
  return !(*out == -1.0 && PyErr_Occurred ());
}

/* A sequence of non-negative ints into out[MAX_RANK]. */
static bool
arg_shape (PyObject *obj, const char *what, uint64_t *out, size_t *rank)
{
  *rank = 0;
  if (obj == NULL || obj == Py_None)
    return true;
  if (PyUnicode_Check (obj) || !PySequence_Check (obj))
    {
      PyErr_Format (PyExc_TypeError, "%s must be a sequence of ints, not %s", what,
                    type_name (obj));
      return false;
    }
  Py_ssize_t n = PySequence_Size (obj);
  if (n < 0)
    return false;
  if (n > MAX_RANK)
    {
      PyErr_Format (PyExc_ValueError, "%s has %zd dimensions, at most %d are allowed", what, n,
                    MAX_RANK);
      return false;
    }
  for (Py_ssize_t i = 0; i < n; i++)
    {
      PyObject *item = PySequence_GetItem (obj, i);
      if (item == NULL)
        return false;
      /* an exact non-negative int goes straight through; anything else is
       * named shape[i] in the error (formatted only then) */
      unsigned long long value = PyLong_CheckExact (item) ? PyLong_AsUnsignedLongLong (item)
                                                          : (unsigned long long)-1;
      if (value == (unsigned long long)-1)
        {
          PyErr_Clear ();
          char name[96];
          snprintf (name, sizeof name, "%s[%zd]", what, i);
          bool ok = arg_u64 (item, name, &out[i]);
          Py_DECREF (item);
          if (!ok)
            return false;
          continue;
        }
      out[i] = value;
      Py_DECREF (item);
    }
  *rank = (size_t)n;
  return true;
}

/* A sequence of str: pointers into the objects, which `keep` (a new list)
 * holds. */
static bool
arg_strings (PyObject *obj, const char *what, const char **out, size_t max, size_t *n_out,
             PyObject **keep)
{
  *n_out = 0;
  *keep = NULL;
  if (obj == NULL || obj == Py_None)
    return true;
  if (PyUnicode_Check (obj) || !PySequence_Check (obj))
    {
      PyErr_Format (PyExc_TypeError, "%s must be a sequence of str", what);
      return false;
    }
  PyObject *list = PySequence_List (obj);
  if (list == NULL)
    return false;
  Py_ssize_t n = PyList_Size (list);
  if ((size_t)n > max)
    {
      Py_DECREF (list);
      PyErr_Format (PyExc_ValueError, "%s has %zd entries, at most %zu are allowed", what, n, max);
      return false;
    }
  for (Py_ssize_t i = 0; i < n; i++)
    {
      char name[96];
      snprintf (name, sizeof name, "%s[%zd]", what, i);
      out[i] = arg_string (PyList_GetItem (list, i), name);
      if (out[i] == NULL)
        {
          Py_DECREF (list);
          return false;
        }
    }
  *n_out = (size_t)n;
  *keep = list;
  return true;
}

/* ------------------------------------------------------------------------ */
/* GradientContract */

typedef struct
{
  PyObject_HEAD WickGradientContract *contract;
} ContractObject;

/* expected: sequence of (root, key, family); families: sequence of
 * (family, expectation, min_present). Fills arrays whose strings `keep` holds. */
static bool
parse_expected (PyObject *expected, WickExpectedGradient **out, size_t *n_out, PyObject *keep)
{
  PyObject *list = PySequence_List (expected);
  if (list == NULL)
    {
      PyErr_SetString (PyExc_TypeError, "expected must be a sequence of (root, key, family)");
      return false;
    }
  PyList_Append (keep, list);
  Py_DECREF (list);
  Py_ssize_t n = PyList_Size (list);
  *out = PyMem_Calloc ((size_t)n + 1, sizeof **out);
  *n_out = (size_t)n;
  for (Py_ssize_t i = 0; i < n; i++)
    {
      PyObject *item = PyList_GetItem (list, i);
      if (!PyTuple_Check (item) || PyTuple_Size (item) != 3)
        {
          PyErr_Format (PyExc_TypeError, "expected[%zd] must be a (root, key, family) tuple", i);
          return false;
        }
      char name[64];
      snprintf (name, sizeof name, "expected[%zd].root", i);
      (*out)[i].root = arg_string (PyTuple_GetItem (item, 0), name);
      snprintf (name, sizeof name, "expected[%zd].key", i);
      (*out)[i].key = (*out)[i].root ? arg_string (PyTuple_GetItem (item, 1), name) : NULL;
      snprintf (name, sizeof name, "expected[%zd].family", i);
      (*out)[i].family = (*out)[i].key ? arg_string (PyTuple_GetItem (item, 2), name) : NULL;
      if ((*out)[i].family == NULL)
        return false;
    }
  return true;
}

static bool
parse_families (PyObject *families, WickGradientFamily **out, size_t *n_out, PyObject *keep)
{
  PyObject *list = PySequence_List (families);
  if (list == NULL)
    {
      PyErr_SetString (PyExc_TypeError,
                       "families must be a sequence of (family, expectation, min_present)");
      return false;
    }
  PyList_Append (keep, list);
  Py_DECREF (list);
  Py_ssize_t n = PyList_Size (list);
  *out = PyMem_Calloc ((size_t)n + 1, sizeof **out);
  *n_out = (size_t)n;
  for (Py_ssize_t i = 0; i < n; i++)
    {
      PyObject *item = PyList_GetItem (list, i);
      if (!PyTuple_Check (item) || PyTuple_Size (item) != 3)
        {
          PyErr_Format (PyExc_TypeError,
                        "families[%zd] must be a (family, expectation, min_present) tuple", i);
          return false;
        }
      char name[64];
      snprintf (name, sizeof name, "families[%zd].family", i);
      (*out)[i].family = arg_string (PyTuple_GetItem (item, 0), name);
      if ((*out)[i].family == NULL)
        return false;
      int expectation;
      snprintf (name, sizeof name, "families[%zd].expectation", i);
      if (!arg_enum (PyTuple_GetItem (item, 1), expectations, name, &expectation))
        return false;
      (*out)[i].expectation = expectation;
      snprintf (name, sizeof name, "families[%zd].min_present", i);
      if (!arg_u64 (PyTuple_GetItem (item, 2), name, &(*out)[i].min_present))
        return false;
    }
  return true;
}

static PyObject *
contract_wrap (WickGradientContract *contract)
{
  ContractObject *self = PyObject_New (ContractObject, (PyTypeObject *)ContractType);
  if (self == NULL)
    {
      wick_gradient_contract_free (contract);
      return NULL;
    }
  self->contract = contract;
  return (PyObject *)self;
}

static PyObject *
contract_new (PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
  static char *kwlist[] = { "expected", "families", NULL };
  PyObject *expected, *families;
  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "OO:GradientContract", kwlist, &expected,
                                    &families))
    return NULL;
  PyObject *keep = PyList_New (0);
  WickExpectedGradient *e = NULL;
  WickGradientFamily *f = NULL;
  size_t n_e = 0, n_f = 0;
  PyObject *result = NULL;
  if (parse_expected (expected, &e, &n_e, keep) && parse_families (families, &f, &n_f, keep))
    {
      WickError error = { "" };
      WickGradientContract *contract = wick_gradient_contract_new (e, n_e, f, n_f, &error);
      result = contract != NULL ? contract_wrap (contract) : raise_wick (&error);
    }
  PyMem_Free (e);
  PyMem_Free (f);
  Py_DECREF (keep);
  return result;
}

static void
contract_dealloc (PyObject *obj)
{
  ContractObject *self = (ContractObject *)obj;
  PyTypeObject *type = Py_TYPE (obj);
  wick_gradient_contract_free (self->contract);
  freefunc tp_free = (freefunc)PyType_GetSlot (type, Py_tp_free);
  tp_free (obj);
  Py_DECREF (type);
}

static PyObject *
contract_get_digest (PyObject *obj, void *closure)
{
  return PyUnicode_FromString (wick_gradient_contract_get_digest (((ContractObject *)obj)->contract));
}

static PyObject *
contract_get_expected (PyObject *obj, void *closure)
{
  const WickGradientContract *c = ((ContractObject *)obj)->contract;
  size_t n = wick_gradient_contract_get_n_expected (c);
  PyObject *list = PyList_New ((Py_ssize_t)n);
  for (size_t i = 0; list != NULL && i < n; i++)
    {
      const WickExpectedGradient *e = wick_gradient_contract_get_expected (c, i);
      PyList_SetItem (list, (Py_ssize_t)i, Py_BuildValue ("(sss)", e->root, e->key, e->family));
    }
  return list;
}

static PyObject *
contract_get_families (PyObject *obj, void *closure)
{
  const WickGradientContract *c = ((ContractObject *)obj)->contract;
  size_t n = wick_gradient_contract_get_n_families (c);
  PyObject *list = PyList_New ((Py_ssize_t)n);
  for (size_t i = 0; list != NULL && i < n; i++)
    {
      const WickGradientFamily *f = wick_gradient_contract_get_family (c, i);
      PyList_SetItem (list, (Py_ssize_t)i,
                      Py_BuildValue ("(ssK)", f->family, enum_name (expectations, f->expectation),
                                     (unsigned long long)f->min_present));
    }
  return list;
}

static PyGetSetDef contract_getset[] = {
  { "digest", contract_get_digest, NULL, "The manifest digest, \"sha256:<64 hex>\".", NULL },
  { "expected", contract_get_expected, NULL, "[(root, key, family)] in manifest order.", NULL },
  { "families", contract_get_families, NULL, "[(family, expectation, min_present)].", NULL },
  { NULL }
};

static PyType_Slot contract_slots[] = {
  { Py_tp_new, contract_new },
  { Py_tp_dealloc, contract_dealloc },
  { Py_tp_getset, contract_getset },
  { Py_tp_doc, "GradientContract(expected, families): an exact gradient contract validated with "
               "candle-graph's rules; its manifest digest is bound at construction." },
  { 0, NULL },
};

static PyType_Spec contract_spec = {
  "wick._wick.GradientContract", sizeof (ContractObject), 0, Py_TPFLAGS_DEFAULT, contract_slots,
};

static PyObject *
manifest_sha256 (PyObject *module, PyObject *expected)
{
  PyObject *keep = PyList_New (0);
  WickExpectedGradient *e = NULL;
  size_t n = 0;
  PyObject *result = NULL;
  if (parse_expected (expected, &e, &n, keep))
    {
      char digest[WICK_SHA256_TEXT_LEN];
      WickError error = { "" };
      result = wick_gradient_manifest_sha256 (e, n, digest, &error) ? PyUnicode_FromString (digest)
                                                                    : raise_wick (&error);
    }
  PyMem_Free (e);
  Py_DECREF (keep);
  return result;
}

/* ------------------------------------------------------------------------ */
/* GradientCapturePlan */

typedef struct
{
  PyObject_HEAD WickGradientPlan *plan;
} PlanObject;

typedef struct
{
  PyObject *callable;
  PyObject *results; /* list keeping returned strings alive */
  bool failed;
} FamilyCall;

static const char *
plan_family (const char *key, void *user_data)
{
  FamilyCall *call = user_data;
  if (call->failed)
    return NULL;
  PyObject *result = PyObject_CallFunction (call->callable, "s", key);
  if (result == NULL)
    {
      call->failed = true;
      return NULL;
    }
  PyList_Append (call->results, result);
  Py_DECREF (result);
  if (!PyUnicode_Check (result))
    {
      PyErr_Format (PyExc_TypeError, "assign_family('%s') must return a str, not %s", key,
                    type_name (result));
      call->failed = true;
      return NULL;
    }
  return PyUnicode_AsUTF8AndSize (result, NULL);
}

static PyObject *
plan_new (PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
  static char *kwlist[] = { "root", "keys", "assign_family", "families", NULL };
  const char *root;
  PyObject *keys, *assign, *families;
  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "sOOO:GradientCapturePlan", kwlist, &root, &keys,
                                    &assign, &families))
    return NULL;
  if (!PyCallable_Check (assign))
    {
      PyErr_SetString (PyExc_TypeError, "assign_family must be callable");
      return NULL;
    }
  PyObject *keep = PyList_New (0);
  PyObject *key_list = PySequence_List (keys);
  if (key_list == NULL)
    {
      Py_DECREF (keep);
      PyErr_SetString (PyExc_TypeError, "keys must be a sequence of str");
      return NULL;
    }
  Py_ssize_t n = PyList_Size (key_list);
  const char **k = PyMem_Calloc ((size_t)n + 1, sizeof *k);
  WickGradientFamily *f = NULL;
  size_t n_f = 0;
  PyObject *result = NULL;
  bool ok = true;
  for (Py_ssize_t i = 0; ok && i < n; i++)
    {
      char name[48];
      snprintf (name, sizeof name, "keys[%zd]", i);
      k[i] = arg_string (PyList_GetItem (key_list, i), name);
      ok = k[i] != NULL;
    }
  if (ok && parse_families (families, &f, &n_f, keep))
    {
      FamilyCall call = { assign, keep, false };
      WickError error = { "" };
      WickGradientPlan *plan
        = wick_gradient_plan_new (root, k, (size_t)n, plan_family, &call, f, n_f, &error);
      if (call.failed)
        wick_gradient_plan_free (plan);
      else if (plan == NULL)
        raise_wick (&error);
      else
        {
          PlanObject *self = PyObject_New (PlanObject, type);
          if (self != NULL)
            self->plan = plan;
          else
            wick_gradient_plan_free (plan);
          result = (PyObject *)self;
        }
    }
  PyMem_Free (k);
  PyMem_Free (f);
  Py_DECREF (key_list);
  Py_DECREF (keep);
  return result;
}

static void
plan_dealloc (PyObject *obj)
{
  PyTypeObject *type = Py_TYPE (obj);
  wick_gradient_plan_free (((PlanObject *)obj)->plan);
  freefunc tp_free = (freefunc)PyType_GetSlot (type, Py_tp_free);
  tp_free (obj);
  Py_DECREF (type);
}

static PyObject *
plan_get_contract (PyObject *obj, void *closure)
{
  const WickGradientContract *c = wick_gradient_plan_get_contract (((PlanObject *)obj)->plan);
  WickGradientContract *copy = wick_gradient_contract_copy (c);
  if (copy == NULL)
    return PyErr_NoMemory ();
  return contract_wrap (copy);
}

static PyObject *
plan_get_keys (PyObject *obj, void *closure)
{
  WickGradientPlan *plan = ((PlanObject *)obj)->plan;
  size_t n = wick_gradient_plan_get_n_keys (plan);
  PyObject *list = PyList_New ((Py_ssize_t)n);
  for (size_t i = 0; list != NULL && i < n; i++)
    PyList_SetItem (list, (Py_ssize_t)i, PyUnicode_FromString (wick_gradient_plan_get_key (plan, i)));
  return list;
}

static PyObject *
plan_get_root (PyObject *obj, void *closure)
{
  return PyUnicode_FromString (wick_gradient_plan_get_root (((PlanObject *)obj)->plan));
}

static PyObject *
plan_find_key (PyObject *obj, PyObject *key)
{
  const char *text = arg_string (key, "key");
  if (text == NULL)
    return NULL;
  return PyLong_FromLong (wick_gradient_plan_find_key (((PlanObject *)obj)->plan, text));
}

/* Span names of this session already interned, by the str object: a span
 * from Python looks its name up by pointer (the cache holds the str, so the
 * pointer stays that string's) instead of measuring, hashing and comparing it
 * in libwick's table on every begin. Direct mapped, replaced on a miss. */
#define NAME_CACHE_SLOTS 64

typedef struct
{
  PyObject *name; /* a str, held; NULL: empty */
  WickString handle;
} NameCacheSlot;

typedef struct
{
  PyObject_HEAD WickSession *session;
  PyObject *entrypoint;
  WickWeightStore *store;
  uint64_t serial; /* this open session's number in the process, from 1 (thread_cache) */
  NameCacheSlot names[NAME_CACHE_SLOTS];
} SessionObject;

/* The calling thread's handle (wick/wick-thread-handle.h) in the session it
 * last recorded a span in from Python, with the session's serial: spans from
 * Python take the handle's inline calls, and the thread asks libwick for it
 * once per session. Serials are never reused (a new session at a closed
 * one's address does not match), and a closed session is refused before the
 * cache is read (self->session NULL). A thread with no ring gets the
 * session's unclaimed handle, whose calls take libwick's slow path, which
 * claims a ring when one is free; a forked child keeps its parent's handle,
 * whose calls all take that path too (they record nothing, counted). */
typedef struct
{
  uint64_t serial; /* 0: none */
  WickThreadHandle *thread;
  unsigned long ident; /* PyThread_get_thread_ident () */
} ThreadCache;

static __thread ThreadCache thread_cache;
static uint64_t session_serials; /* the last serial given (under the GIL) */

static __attribute__ ((noinline)) ThreadCache *
session_thread_slow (SessionObject *self)
{
  ThreadCache *cache = &thread_cache;
  cache->thread = wick_thread_handle_get (self->session);
  cache->ident = PyThread_get_thread_ident ();
  cache->serial = self->serial;
  return cache;
}

/* The calling thread's cache, filled for the open session self: its handle
 * and thread ident (one thread-local address on either path). */
static inline ThreadCache *
session_thread_cache (SessionObject *self)
{
  ThreadCache *cache = &thread_cache;
  if (__builtin_expect (cache->serial != self->serial, 0))
    cache = session_thread_slow (self);
  return cache;
}

/* The calling thread's handle in the open session self. */
static inline WickThreadHandle *
session_thread (SessionObject *self)
{
  return session_thread_cache (self)->thread;
}

static void
name_cache_clear (SessionObject *self)
{
  for (int i = 0; i < NAME_CACHE_SLOTS; i++)
    {
      Py_CLEAR (self->names[i].name);
      self->names[i].handle = 0;
    }
}

/* name's handle in the open session self (0 when the string arena has no
 * room: libwick records such a span under its lost-name string); false with
 * the error set when name is not a str without NUL characters. */
static bool
session_name_handle (SessionObject *self, PyObject *name, WickString *handle)
{
  NameCacheSlot *slot = &self->names[((uintptr_t)name >> 4) & (NAME_CACHE_SLOTS - 1)];
  if (slot->name == name)
    {
      *handle = slot->handle;
      return true;
    }
  const char *text = arg_string (name, "name");
  if (text == NULL)
    return false;
  *handle = wick_intern (self->session, text);
  if (*handle != 0)
    {
      PyObject *old = slot->name;
      slot->name = Py_NewRef (name);
      slot->handle = *handle;
      Py_XDECREF (old);
    }
  return true;
}

static bool session_check (SessionObject *self, const char *what);
static PyObject *session_span (PyObject *obj, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames);

static PyObject *
plan_record (PyObject *obj, PyObject *args)
{
  PyObject *session_obj, *gradients;
  if (!PyArg_ParseTuple (args, "O!O:record", (PyTypeObject *)SessionType, &session_obj,
                         &gradients))
    return NULL;
  SessionObject *session = (SessionObject *)session_obj;
  if (!session_check (session, "GradientCapturePlan.record"))
    return NULL;
  WickGradientPlan *plan = ((PlanObject *)obj)->plan;
  PyObject *list = PySequence_List (gradients);
  if (list == NULL)
    {
      PyErr_SetString (PyExc_TypeError, "gradients must be a sequence of float or None");
      return NULL;
    }
  Py_ssize_t n = PyList_Size (list);
  WickParameterGradient *g = PyMem_Calloc ((size_t)n + 1, sizeof *g);
  bool ok = true;
  for (Py_ssize_t i = 0; ok && i < n; i++)
    {
      PyObject *item = PyList_GetItem (list, i);
      g[i].has_gradient = item != Py_None;
      if (g[i].has_gradient)
        {
          char name[48];
          snprintf (name, sizeof name, "gradients[%zd]", i);
          ok = arg_double (item, name, &g[i].norm);
        }
    }
  Py_DECREF (list);
  PyObject *result = NULL;
  if (ok)
    {
      WickError error = { "" };
      result = wick_gradient_plan_record (plan, session->session, g, (size_t)n, &error)
                 ? Py_NewRef (Py_None)
                 : raise_wick (&error);
    }
  PyMem_Free (g);
  return result;
}

static PyMethodDef plan_methods[] = {
  { "find_key", plan_find_key, METH_O, "Index of key in manifest order, or -1." },
  { "record", plan_record, METH_VARARGS,
    "record(session, gradients): one L2 norm (or None: no gradient) per key, manifest order." },
  { NULL }
};

static PyGetSetDef plan_getset[] = {
  { "contract", plan_get_contract, NULL, "The exact contract (a GradientContract).", NULL },
  { "keys", plan_get_keys, NULL, "Keys in manifest order (sorted ascending, byte order).", NULL },
  { "root", plan_get_root, NULL, "The root of every manifest entry.", NULL },
  { NULL }
};

static PyType_Slot plan_slots[] = {
  { Py_tp_new, plan_new },
  { Py_tp_dealloc, plan_dealloc },
  { Py_tp_methods, plan_methods },
  { Py_tp_getset, plan_getset },
  { Py_tp_doc, "GradientCapturePlan(root, keys, assign_family, families): libwick's gradient "
               "capture plan." },
  { 0, NULL },
};

static PyType_Spec plan_spec = {
  "wick._wick.GradientCapturePlan", sizeof (PlanObject), 0, Py_TPFLAGS_DEFAULT, plan_slots,
};

/* ------------------------------------------------------------------------ */
/* Session */

static bool
session_check (SessionObject *self, const char *what)
{
  if (self->session == NULL)
    {
      PyErr_Format (WickErrorType, "%s: the session is closed", what);
      return false;
    }
  if (wick_session_is_finished (self->session))
    {
      PyErr_Format (WickErrorType, "%s: the session '%U' is finished; nothing more can be recorded",
                    what, self->entrypoint);
      return false;
    }
  return true;
}

static bool
session_check_open (SessionObject *self, const char *what)
{
  if (self->session == NULL)
    {
      PyErr_Format (WickErrorType, "%s: the session is closed", what);
      return false;
    }
  return true;
}

static bool
parse_coverage (PyObject *dict, const char *key, WickCoverage *out)
{
  if (dict == NULL || dict == Py_None)
    return true;
  PyObject *value = PyDict_GetItemString (dict, key);
  if (value == NULL)
    return true;
  char name[64];
  snprintf (name, sizeof name, "coverage['%s']", key);
  int v;
  if (!arg_enum (value, coverages, name, &v))
    return false;
  *out = v;
  return true;
}

static PyObject *
session_new (PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
  static char *kwlist[] = { "entrypoint", "phase", "capture_step", "warmup_steps", "device",
                            "contract", "jsonl_path", "strict", "control", "coverage",
                            "measurement_scope", "timing_mode", "tags", "policy", "ring_bytes",
                            NULL };
  PyObject *entrypoint, *phase = NULL, *device = NULL, *contract = Py_None, *jsonl = Py_None;
  PyObject *coverage = Py_None, *scope = NULL, *timing = NULL, *tags = Py_None, *policy = NULL;
  unsigned long long capture_step = 1, warmup_steps = 0, ring_bytes = 0;
  int strict = 0, control = 0;
  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "U|$OKKOOOppOOOOOK:Session", kwlist,
                                    &entrypoint, &phase, &capture_step, &warmup_steps, &device,
                                    &contract, &jsonl, &strict, &control, &coverage, &scope,
                                    &timing, &tags, &policy, &ring_bytes))
    return NULL;
  WickRunInfo run = { .capture_step = capture_step, .warmup_steps = warmup_steps };
  WickCaptureContract cc = { .measurement_scope = WICK_SCOPE_PROFILED_WORK };
  WickSessionOptions options = { .strict = strict, .enable_control = control,
                                 .ring_bytes = ring_bytes };
  int v;
  if ((run.entrypoint = arg_string (entrypoint, "entrypoint")) == NULL)
    return NULL;
  if (phase != NULL)
    {
      if (!arg_enum (phase, phases, "phase", &v))
        return NULL;
      run.phase = v;
    }
  run.device = "cpu";
  if (device != NULL && (run.device = arg_string (device, "device")) == NULL)
    return NULL;
  if (timing != NULL)
    {
      if (!arg_enum (timing, timing_modes, "timing_mode", &v))
        return NULL;
      run.timing_mode = v;
    }
  if (scope != NULL)
    {
      if (!arg_enum (scope, scopes, "measurement_scope", &v))
        return NULL;
      cc.measurement_scope = v;
    }
  if (policy != NULL)
    {
      if (!arg_enum (policy, policies, "policy", &v))
        return NULL;
      options.policy = v;
    }
  if (coverage != Py_None && !PyDict_Check (coverage))
    {
      PyErr_SetString (PyExc_TypeError, "coverage must be a dict of str to str");
      return NULL;
    }
  if (!parse_coverage (coverage, "operations", &cc.operations)
      || !parse_coverage (coverage, "tensors", &cc.tensors)
      || !parse_coverage (coverage, "gradients", &cc.gradients)
      || !parse_coverage (coverage, "logical_memory", &cc.logical_memory)
      || !parse_coverage (coverage, "physical_memory", &cc.physical_memory)
      || !parse_coverage (coverage, "device_timing", &cc.device_timing))
    return NULL;
  if (contract != Py_None)
    {
      if (!PyObject_TypeCheck (contract, (PyTypeObject *)ContractType))
        {
          PyErr_Format (PyExc_TypeError, "contract must be a wick.GradientContract or None, not %s",
                        type_name (contract));
          return NULL;
        }
      cc.gradient_contract = ((ContractObject *)contract)->contract;
    }
  if (!arg_optional_string (jsonl, "jsonl_path", &options.jsonl_path))
    return NULL;
  WickTag tag_array[MAX_ITEMS];
  if (tags != Py_None)
    {
      if (!PyDict_Check (tags))
        {
          PyErr_SetString (PyExc_TypeError, "tags must be a dict of str to str");
          return NULL;
        }
      Py_ssize_t pos = 0;
      PyObject *key, *value;
      while (PyDict_Next (tags, &pos, &key, &value))
        {
          if (run.n_tags == MAX_ITEMS)
            {
              PyErr_Format (PyExc_ValueError, "tags: at most %d are allowed", MAX_ITEMS);
              return NULL;
            }
          tag_array[run.n_tags].key = arg_string (key, "tags key");
          if (tag_array[run.n_tags].key == NULL)
            return NULL;
          tag_array[run.n_tags].value = arg_string (value, "tags value");
          if (tag_array[run.n_tags].value == NULL)
            return NULL;
          run.n_tags++;
        }
      run.tags = tag_array;
    }
  WickError error = { "" };
  WickSession *session;
  Py_BEGIN_ALLOW_THREADS session = wick_session_open (&run, &cc, &options, &error);
  Py_END_ALLOW_THREADS if (session == NULL) return raise_wick (&error);
  SessionObject *self = (SessionObject *)PyType_GenericAlloc (type, 0);
  if (self == NULL)
    {
      wick_session_close (session);
      return NULL;
    }
  self->session = session;
  self->entrypoint = Py_NewRef (entrypoint);
  self->serial = ++session_serials;
  return (PyObject *)self;
}

static void
session_dealloc (PyObject *obj)
{
  SessionObject *self = (SessionObject *)obj;
  PyTypeObject *type = Py_TYPE (obj);
  if (self->session != NULL)
    {
      Py_BEGIN_ALLOW_THREADS wick_session_close (self->session);
      Py_END_ALLOW_THREADS
    }
  Py_XDECREF (self->entrypoint);
  name_cache_clear (self);
  freefunc tp_free = (freefunc)PyType_GetSlot (type, Py_tp_free);
  tp_free (obj);
  Py_DECREF (type);
}

static PyObject *
session_finish (PyObject *obj, PyObject *unused)
{
  SessionObject *self = (SessionObject *)obj;
  if (!session_check (self, "finish"))
    return NULL;
  WickError error = { "" };
  bool ok;
  Py_BEGIN_ALLOW_THREADS ok = wick_session_finish (self->session, &error);
  Py_END_ALLOW_THREADS return ok ? Py_NewRef (Py_None) : raise_wick (&error);
}

static PyObject *
session_finish_failed (PyObject *obj, PyObject *reason)
{
  SessionObject *self = (SessionObject *)obj;
  const char *text = arg_string (reason, "reason");
  if (text == NULL || !session_check (self, "finish_failed"))
    return NULL;
  WickError error = { "" };
  bool ok;
  Py_BEGIN_ALLOW_THREADS ok = wick_session_finish_failed (self->session, text, &error);
  Py_END_ALLOW_THREADS return ok ? Py_NewRef (Py_None) : raise_wick (&error);
}

static PyObject *
session_close (PyObject *obj, PyObject *unused)
{
  SessionObject *self = (SessionObject *)obj;
  WickSession *session = self->session;
  self->session = NULL;
  self->store = NULL;
  name_cache_clear (self);
  if (session != NULL)
    {
      Py_BEGIN_ALLOW_THREADS wick_session_close (session);
      Py_END_ALLOW_THREADS
    }
  Py_RETURN_NONE;
}

static PyObject *
session_now_ns (PyObject *obj, PyObject *unused)
{
  SessionObject *self = (SessionObject *)obj;
  if (!session_check_open (self, "now_ns"))
    return NULL;
  return PyLong_FromUnsignedLongLong (wick_session_now_ns (self->session));
}

/* span_begin(name, kind, step) with kind and step as ints (the Python layer's
 * fast path; wick.Span is the usual way). */
static PyObject *
session_span_begin (PyObject *obj, PyObject *const *args, Py_ssize_t nargs)
{
  SessionObject *self = (SessionObject *)obj;
  if (nargs != 3)
    {
      PyErr_SetString (PyExc_TypeError, "span_begin(name, kind, step) takes 3 arguments");
      return NULL;
    }
  WickString name;
  if (!PyUnicode_Check (args[0]))
    {
      arg_string (args[0], "name");
      return NULL;
    }
  if (!session_check (self, "span") || !session_name_handle (self, args[0], &name))
    return NULL;
  long kind = PyLong_AsLong (args[1]), step = PyLong_AsLong (args[2]);
  if (PyErr_Occurred ())
    return NULL;
  WickSpanId id
    = wick_span_begin_on (session_thread (self), name, (WickSpanKind)kind, (WickStep)step);
  return PyLong_FromUnsignedLongLong (id);
}

static PyObject *
session_span_begin_child (PyObject *obj, PyObject *const *args, Py_ssize_t nargs)
{
  SessionObject *self = (SessionObject *)obj;
  if (nargs != 4)
    {
      PyErr_SetString (PyExc_TypeError,
                       "span_begin_child(parent, name, kind, step) takes 4 arguments");
      return NULL;
    }
  uint64_t parent;
  const char *name = arg_string (args[1], "name");
  if (name == NULL || !arg_u64 (args[0], "parent", &parent) || !session_check (self, "span"))
    return NULL;
  long kind = PyLong_AsLong (args[2]), step = PyLong_AsLong (args[3]);
  if (PyErr_Occurred ())
    return NULL;
  return PyLong_FromUnsignedLongLong (wick_span_begin_child (self->session, parent, name,
                                                             (WickSpanKind)kind, (WickStep)step));
}

static PyObject *
session_span_end (PyObject *obj, PyObject *id_obj)
{
  SessionObject *self = (SessionObject *)obj;
  if (self->session == NULL)
    {
      PyErr_SetString (WickErrorType, "span_end: the session is closed");
      return NULL;
    }
  unsigned long long id = PyLong_AsUnsignedLongLong (id_obj);
  if (PyErr_Occurred ())
    return NULL;
  /* a span begun on another thread is an error with its sentence; a span
   * not open anywhere (ended already) or 0 stays a False, as before (a
   * failing call fills error) */
  WickError error;
  if (wick_span_end_checked_on (session_thread (self), id, &error))
    Py_RETURN_TRUE;
  if (error.code == WICK_ERROR_WRONG_THREAD)
    return raise_wick (&error);
  Py_RETURN_FALSE;
}

static PyObject *
session_span_current (PyObject *obj, PyObject *unused)
{
  SessionObject *self = (SessionObject *)obj;
  if (!session_check_open (self, "current_span"))
    return NULL;
  return PyLong_FromUnsignedLongLong (wick_span_current (self->session));
}

static PyObject *
session_measurement_begin (PyObject *obj, PyObject *name_obj)
{
  SessionObject *self = (SessionObject *)obj;
  const char *name = arg_string (name_obj, "name");
  if (name == NULL || !session_check (self, "measurement"))
    return NULL;
  WickError error = { "" };
  WickSpanId id = wick_measurement_begin (self->session, name, &error);
  return id != 0 ? PyLong_FromUnsignedLongLong (id) : raise_wick (&error);
}

/* A span id, or 0 for None: the record then belongs to the innermost span
 * open on this thread (fill_span). */
static bool
optional_span (PyObject *obj, WickSpanId *out)
{
  if (obj == NULL || obj == Py_None)
    {
      *out = 0;
      return true;
    }
  return arg_u64 (obj, "span", out);
}

static WickSpanId
fill_span (SessionObject *self, WickSpanId span)
{
  return span != 0 ? span : wick_span_current (self->session);
}

static PyObject *
record_result (bool ok, WickError *error)
{
  return ok ? Py_NewRef (Py_None) : raise_wick (error);
}

static PyObject *
session_record_op (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *kwlist[] = { "op_name", "inputs", "output", "shape", "dtype", "device",
                            "duration_ns", "timestamp_ns", "span", "output_dense_bytes",
                            "input_dense_bytes", NULL };
  SessionObject *self = (SessionObject *)obj;
  PyObject *op, *inputs = Py_None, *output = Py_None, *shape = Py_None, *dtype, *device;
  PyObject *span = Py_None, *out_bytes = Py_None;
  unsigned long long duration = 0, timestamp = 0, in_bytes = 0;
  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "O|$OOOOOKKOOK:record_op", kwlist, &op, &inputs,
                                    &output, &shape, &dtype, &device, &duration, &timestamp, &span,
                                    &out_bytes, &in_bytes))
    return NULL;
  WickOpRecord r = { .duration_ns = duration, .timestamp_ns = timestamp,
                     .input_dense_bytes = in_bytes };
  uint64_t dims[MAX_RANK];
  const char *input_names[MAX_ITEMS];
  PyObject *keep = NULL;
  if ((r.op_name = arg_string (op, "op_name")) == NULL
      || !arg_strings (inputs, "inputs", input_names, MAX_ITEMS, &r.n_inputs, &keep))
    return NULL;
  bool ok = arg_optional_string (output, "output", &r.output)
            && arg_shape (shape, "shape", dims, &r.rank) && optional_span (span, &r.span)
            && (r.dtype = arg_string (dtype, "dtype")) != NULL
            && (r.device = arg_string (device, "device")) != NULL
            && session_check (self, "record_op");
  if (ok && out_bytes != Py_None)
    {
      r.has_output_dense_bytes = true;
      ok = arg_u64 (out_bytes, "output_dense_bytes", &r.output_dense_bytes);
    }
  PyObject *result = NULL;
  if (ok)
    {
      r.inputs = input_names;
      r.shape = dims;
      r.span = fill_span (self, r.span);
      WickError error = { "" };
      result = record_result (wick_session_record_op (self->session, &r, &error), &error);
    }
  Py_XDECREF (keep);
  return result;
}

static PyObject *
session_record_tensor (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *kwlist[] = { "tensor_id", "shape", "dtype", "device", "category", "label",
                            "requires_grad", "span", "dense_bytes", NULL };
  SessionObject *self = (SessionObject *)obj;
  PyObject *id, *shape, *dtype, *device, *category, *label = Py_None, *span = Py_None;
  PyObject *bytes = Py_None;
  int requires_grad = 0;
  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "OOOOO|$OpOO:record_tensor", kwlist, &id, &shape,
                                    &dtype, &device, &category, &label, &requires_grad, &span,
                                    &bytes))
    return NULL;
  WickTensorRecord r = { .requires_grad = requires_grad };
  uint64_t dims[MAX_RANK];
  int cat;
  bool ok = (r.tensor_id = arg_string (id, "tensor_id")) != NULL
            && arg_shape (shape, "shape", dims, &r.rank)
            && (r.dtype = arg_string (dtype, "dtype")) != NULL
            && (r.device = arg_string (device, "device")) != NULL
            && arg_enum (category, categories, "category", &cat)
            && arg_optional_string (label, "label", &r.label) && optional_span (span, &r.span)
            && session_check (self, "record_tensor");
  if (ok && bytes != Py_None)
    {
      r.has_dense_bytes = true;
      ok = arg_u64 (bytes, "dense_bytes", &r.dense_bytes);
    }
  if (!ok)
    return NULL;
  r.category = cat;
  r.shape = dims;
  r.span = fill_span (self, r.span);
  WickError error = { "" };
  return record_result (wick_session_record_tensor (self->session, &r, &error), &error);
}

/* _tensor_fast (tensor_id, shape, dtype, device, category, label|None,
 * requires_grad, span|None): record_tensor for wick.torch's tracker, which
 * records a tensor or two per module, gradient and optimizer state a step:
 * positional through vectorcall, no keyword parsing (a third of the cost of
 * a record from Python). Checks every argument as record_tensor does. */
static PyObject *
session_record_tensor_fast (PyObject *obj, PyObject *const *args, Py_ssize_t nargs)
{
  SessionObject *self = (SessionObject *)obj;
  if (nargs != 8)
    {
      PyErr_Format (PyExc_TypeError, "_tensor_fast takes 8 arguments (%zd given)", nargs);
      return NULL;
    }
  WickTensorRecord r = { .requires_grad = PyObject_IsTrue (args[6]) == 1 };
  uint64_t dims[MAX_RANK];
  int cat;
  if ((r.tensor_id = arg_string (args[0], "tensor_id")) == NULL
      || !arg_shape (args[1], "shape", dims, &r.rank)
      || (r.dtype = arg_string (args[2], "dtype")) == NULL
      || (r.device = arg_string (args[3], "device")) == NULL
      || !arg_enum (args[4], categories, "category", &cat)
      || !arg_optional_string (args[5], "label", &r.label) || !optional_span (args[7], &r.span)
      || !session_check (self, "record_tensor"))
    return NULL;
  r.category = cat;
  r.shape = dims;
  r.span = fill_span (self, r.span);
  WickError error = { "" };
  return record_result (wick_session_record_tensor (self->session, &r, &error), &error);
}

static PyObject *
session_record_tensor_stats (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *kwlist[] = { "label", "shape", "dtype", "elements", "non_finite", "rms",
                            "abs_max", "mean", "span", NULL };
  SessionObject *self = (SessionObject *)obj;
  PyObject *label, *shape, *dtype, *span = Py_None;
  unsigned long long elements, non_finite;
  double rms, abs_max, mean;
  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "OOOKKddd|$O:record_tensor_stats", kwlist,
                                    &label, &shape, &dtype, &elements, &non_finite, &rms, &abs_max,
                                    &mean, &span))
    return NULL;
  WickTensorStatsRecord r = { .elements = elements, .non_finite = non_finite, .rms = rms,
                              .abs_max = abs_max, .mean = mean };
  uint64_t dims[MAX_RANK];
  if ((r.label = arg_string (label, "label")) == NULL || !arg_shape (shape, "shape", dims, &r.rank)
      || (r.dtype = arg_string (dtype, "dtype")) == NULL || !optional_span (span, &r.span)
      || !session_check (self, "record_tensor_stats"))
    return NULL;
  r.shape = dims;
  r.span = fill_span (self, r.span);
  WickError error = { "" };
  return record_result (wick_session_record_tensor_stats (self->session, &r, &error), &error);
}

static PyObject *
session_record_memory (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *kwlist[] = { "storage_id", "tensor_id", "bytes", "action", "category", "device",
                            "span", "op_name", "shape", "dtype", "timestamp_ns", "address",
                            NULL };
  SessionObject *self = (SessionObject *)obj;
  PyObject *storage, *tensor, *action, *category, *device, *span = Py_None, *op = Py_None;
  PyObject *shape = Py_None, *dtype = Py_None, *ts = Py_None, *address = Py_None;
  unsigned long long bytes;
  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "OOKOOO|$OOOOOO:record_memory", kwlist, &storage,
                                    &tensor, &bytes, &action, &category, &device, &span, &op,
                                    &shape, &dtype, &ts, &address))
    return NULL;
  WickMemoryRecord r = { .bytes = bytes, .timestamp_ns = WICK_NOW };
  uint64_t dims[MAX_RANK];
  int act, cat;
  if ((r.storage_id = arg_string (storage, "storage_id")) == NULL
      || (r.tensor_id = arg_string (tensor, "tensor_id")) == NULL
      || !arg_enum (action, actions, "action", &act)
      || !arg_enum (category, categories, "category", &cat)
      || (r.device = arg_string (device, "device")) == NULL || !optional_span (span, &r.span)
      || !arg_optional_string (op, "op_name", &r.op_name)
      || !arg_shape (shape, "shape", dims, &r.rank)
      || !arg_optional_string (dtype, "dtype", &r.dtype)
      || (ts != Py_None && !arg_u64 (ts, "timestamp_ns", &r.timestamp_ns))
      || (address != Py_None && !arg_u64 (address, "address", &r.address))
      || !session_check (self, "record_memory"))
    return NULL;
  r.action = act;
  r.category = cat;
  r.shape = dims;
  r.span = fill_span (self, r.span);
  WickError error = { "" };
  return record_result (wick_session_record_memory (self->session, &r, &error), &error);
}

/* _memory_fast (storage_id, tensor_id, bytes, action, category, device,
 * span|None, shape|None, dtype|None[, address]): record_memory for wick.torch's
 * tracker, positional through vectorcall (see _tensor_fast). */
static PyObject *
session_record_memory_fast (PyObject *obj, PyObject *const *args, Py_ssize_t nargs)
{
  SessionObject *self = (SessionObject *)obj;
  if (nargs != 9 && nargs != 10)
    {
      PyErr_Format (PyExc_TypeError, "_memory_fast takes 9 or 10 arguments (%zd given)", nargs);
      return NULL;
    }
  WickMemoryRecord r = { .timestamp_ns = WICK_NOW };
  uint64_t dims[MAX_RANK];
  int act, cat;
  if ((r.storage_id = arg_string (args[0], "storage_id")) == NULL
      || (r.tensor_id = arg_string (args[1], "tensor_id")) == NULL
      || !arg_u64 (args[2], "bytes", &r.bytes) || !arg_enum (args[3], actions, "action", &act)
      || !arg_enum (args[4], categories, "category", &cat)
      || (r.device = arg_string (args[5], "device")) == NULL || !optional_span (args[6], &r.span)
      || !arg_shape (args[7], "shape", dims, &r.rank)
      || !arg_optional_string (args[8], "dtype", &r.dtype)
      || (nargs == 10 && args[9] != Py_None && !arg_u64 (args[9], "address", &r.address))
      || !session_check (self, "record_memory"))
    return NULL;
  r.action = act;
  r.category = cat;
  r.shape = dims;
  r.span = fill_span (self, r.span);
  WickError error = { "" };
  return record_result (wick_session_record_memory (self->session, &r, &error), &error);
}

static bool
optional_u64 (PyObject *obj, const char *what, bool *has, uint64_t *out)
{
  *has = obj != Py_None;
  return !*has || arg_u64 (obj, what, out);
}

static PyObject *
session_record_device_memory (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *kwlist[] = { "device", "used_bytes", "free_bytes", "reserved_bytes",
                            "capacity_bytes", "timestamp_ns", NULL };
  SessionObject *self = (SessionObject *)obj;
  PyObject *device, *used = Py_None, *free_ = Py_None, *reserved = Py_None, *capacity = Py_None;
  PyObject *ts = Py_None;
  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "O|$OOOOO:record_device_memory", kwlist,
                                    &device, &used, &free_, &reserved, &capacity, &ts))
    return NULL;
  WickDeviceMemoryRecord r = { .timestamp_ns = WICK_NOW };
  if ((r.device = arg_string (device, "device")) == NULL
      || !optional_u64 (used, "used_bytes", &r.has_used_bytes, &r.used_bytes)
      || !optional_u64 (free_, "free_bytes", &r.has_free_bytes, &r.free_bytes)
      || !optional_u64 (reserved, "reserved_bytes", &r.has_reserved_bytes, &r.reserved_bytes)
      || !optional_u64 (capacity, "capacity_bytes", &r.has_capacity_bytes, &r.capacity_bytes)
      || (ts != Py_None && !arg_u64 (ts, "timestamp_ns", &r.timestamp_ns))
      || !session_check (self, "record_device_memory"))
    return NULL;
  WickError error = { "" };
  return record_result (wick_session_record_device_memory (self->session, &r, &error), &error);
}

static PyObject *
session_record_device_interval (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *kwlist[] = { "device", "stream_id", "clock_id", "backend", "start_ns",
                            "duration_ns", "span", NULL };
  SessionObject *self = (SessionObject *)obj;
  PyObject *device, *stream, *clock, *backend, *span = Py_None;
  unsigned long long start, duration;
  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "OOOOKK|$O:record_device_interval", kwlist,
                                    &device, &stream, &clock, &backend, &start, &duration, &span))
    return NULL;
  WickDeviceIntervalRecord r = { .start_ns = start, .duration_ns = duration };
  if ((r.device = arg_string (device, "device")) == NULL
      || (r.stream_id = arg_string (stream, "stream_id")) == NULL
      || (r.clock_id = arg_string (clock, "clock_id")) == NULL
      || (r.backend = arg_string (backend, "backend")) == NULL || !optional_span (span, &r.span)
      || !session_check (self, "record_device_interval"))
    return NULL;
  r.span = fill_span (self, r.span);
  WickError error = { "" };
  return record_result (wick_session_record_device_interval (self->session, &r, &error), &error);
}

static PyObject *
session_record_call_edge (PyObject *obj, PyObject *args)
{
  SessionObject *self = (SessionObject *)obj;
  unsigned long long from, to, duration;
  if (!PyArg_ParseTuple (args, "KKK:record_call_edge", &from, &to, &duration)
      || !session_check (self, "record_call_edge"))
    return NULL;
  WickError error = { "" };
  return record_result (wick_session_record_call_edge (self->session, from, to, duration, &error),
                        &error);
}

static PyObject *
session_record_data_edge (PyObject *obj, PyObject *args)
{
  SessionObject *self = (SessionObject *)obj;
  PyObject *from, *to;
  if (!PyArg_ParseTuple (args, "OO:record_data_edge", &from, &to))
    return NULL;
  const char *f = arg_string (from, "from_tensor"), *t = f ? arg_string (to, "to_tensor") : NULL;
  if (t == NULL || !session_check (self, "record_data_edge"))
    return NULL;
  WickError error = { "" };
  return record_result (wick_session_record_data_edge (self->session, f, t, &error), &error);
}

static PyObject *
session_record_gradient (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *kwlist[] = { "root", "key", "state", "norm", NULL };
  SessionObject *self = (SessionObject *)obj;
  PyObject *root, *key, *state, *norm = Py_None;
  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "OOO|O:record_gradient", kwlist, &root, &key,
                                    &state, &norm))
    return NULL;
  const char *r = arg_string (root, "root"), *k = r ? arg_string (key, "key") : NULL;
  int s;
  double n = 0.0;
  if (k == NULL || !arg_enum (state, gradient_states, "state", &s)
      || (norm != Py_None && !arg_double (norm, "norm", &n))
      || !session_check (self, "record_gradient"))
    return NULL;
  WickError error = { "" };
  return record_result (
    wick_session_record_gradient (self->session, r, k, s, norm != Py_None, n, &error), &error);
}

static PyObject *
session_mark (PyObject *obj, PyObject *label)
{
  SessionObject *self = (SessionObject *)obj;
  const char *text = arg_string (label, "label");
  if (text == NULL || !session_check (self, "mark"))
    return NULL;
  WickError error = { "" };
  return record_result (wick_session_mark (self->session, text, &error), &error);
}

static PyObject *
session_enable_control (PyObject *obj, PyObject *unused)
{
  SessionObject *self = (SessionObject *)obj;
  if (!session_check_open (self, "enable_control"))
    return NULL;
  WickError error = { "" };
  return record_result (wick_session_enable_control (self->session, &error), &error);
}

static PyObject *
session_lock_control (PyObject *obj, PyObject *unused)
{
  SessionObject *self = (SessionObject *)obj;
  if (!session_check_open (self, "lock_control"))
    return NULL;
  Py_BEGIN_ALLOW_THREADS wick_session_lock_control (self->session);
  Py_END_ALLOW_THREADS Py_RETURN_NONE;
}

static PyObject *
session_unlock_control (PyObject *obj, PyObject *unused)
{
  SessionObject *self = (SessionObject *)obj;
  if (!session_check_open (self, "unlock_control"))
    return NULL;
  wick_session_unlock_control (self->session);
  Py_RETURN_NONE;
}

/* ---- weight store ---- */

static WickWeightStore *
session_store (SessionObject *self, const char *what, bool create)
{
  if (!session_check_open (self, what))
    return NULL;
  if (self->store == NULL)
    self->store = wick_session_get_weight_store (self->session);
  if (self->store == NULL && create)
    {
      WickError error = { "" };
      self->store = wick_weight_store_new (self->session, &error);
      if (self->store == NULL)
        raise_wick (&error);
      return self->store;
    }
  if (self->store == NULL)
    PyErr_Format (WickErrorType, "%s: no module is registered in this session's weight store",
                  what);
  return self->store;
}

static PyObject *
stats_dict (const WickWeightStats *s)
{
  return Py_BuildValue ("{s:s,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:d,s:d,s:O}", "module", s->module,
                        "parameters", (unsigned long long)s->parameters, "bytes",
                        (unsigned long long)s->bytes, "disk", (unsigned long long)s->disk, "ram",
                        (unsigned long long)s->ram, "freed_bytes",
                        (unsigned long long)s->freed_bytes, "restored_bytes",
                        (unsigned long long)s->restored_bytes, "restored",
                        (unsigned long long)s->restored, "restored_count",
                        (unsigned long long)s->restored_count, "evict_seconds", s->evict_seconds,
                        "restore_seconds", s->restore_seconds, "resident",
                        s->resident ? Py_True : Py_False);
}

/* weights_register(name, params, memory, checkpoint): params is a sequence of
 * (name, address, dtype, shape) with dtype a safetensors name ("F32"). */
static PyObject *
session_weights_register (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *kwlist[] = { "name", "params", "memory", "checkpoint", NULL };
  SessionObject *self = (SessionObject *)obj;
  PyObject *name, *params, *memory, *checkpoint = Py_None;
  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "OOO|O:weights_register", kwlist, &name, &params,
                                    &memory, &checkpoint))
    return NULL;
  WickWeightModuleInfo info = { 0 };
  int mem;
  if ((info.name = arg_string (name, "name")) == NULL
      || !arg_enum (memory, memories, "memory", &mem)
      || !arg_optional_string (checkpoint, "checkpoint", &info.checkpoint))
    return NULL;
  info.memory = mem;
  PyObject *list = PySequence_List (params);
  if (list == NULL)
    return NULL;
  Py_ssize_t n = PyList_Size (list);
  WickWeightParam *p = PyMem_Calloc ((size_t)n + 1, sizeof *p);
  uint64_t(*dims)[MAX_RANK] = PyMem_Calloc ((size_t)n + 1, sizeof *dims);
  bool ok = true;
  for (Py_ssize_t i = 0; ok && i < n; i++)
    {
      PyObject *item = PyList_GetItem (list, i);
      uint64_t address;
      char what[64];
      if (!PyTuple_Check (item) || PyTuple_Size (item) != 4)
        {
          PyErr_Format (PyExc_TypeError, "params[%zd] must be (name, address, dtype, shape)", i);
          ok = false;
          break;
        }
      snprintf (what, sizeof what, "params[%zd].name", i);
      ok = (p[i].name = arg_string (PyTuple_GetItem (item, 0), what)) != NULL;
      snprintf (what, sizeof what, "params[%zd].address", i);
      ok = ok && arg_u64 (PyTuple_GetItem (item, 1), what, &address);
      snprintf (what, sizeof what, "params[%zd].dtype", i);
      const char *dtype = ok ? arg_string (PyTuple_GetItem (item, 2), what) : NULL;
      WickWeightDtype d;
      if (dtype != NULL && !wick_weight_dtype_from_name (dtype, &d))
        {
          PyErr_Format (PyExc_ValueError, "%s: '%s' is not a safetensors dtype", what, dtype);
          dtype = NULL;
        }
      ok = dtype != NULL;
      snprintf (what, sizeof what, "params[%zd].shape", i);
      size_t rank = 0;
      ok = ok && arg_shape (PyTuple_GetItem (item, 3), what, dims[i], &rank);
      if (ok && rank > WICK_WEIGHT_MAX_DIMS)
        {
          PyErr_Format (PyExc_ValueError, "%s: at most %d dimensions", what, WICK_WEIGHT_MAX_DIMS);
          ok = false;
        }
      if (ok)
        {
          p[i].data = (void *)(uintptr_t)address;
          p[i].dtype = d;
          p[i].shape = dims[i];
          p[i].n_dims = rank;
        }
    }
  WickWeightStore *store = ok ? session_store (self, "weights_register", true) : NULL;
  PyObject *result = NULL;
  if (store != NULL)
    {
      info.params = p;
      info.n_params = (size_t)n;
      WickError error = { "" };
      bool done;
      Py_BEGIN_ALLOW_THREADS done = wick_weight_store_register_module (store, &info, &error);
      Py_END_ALLOW_THREADS result = done ? Py_NewRef (Py_None) : raise_wick (&error);
    }
  PyMem_Free (p);
  PyMem_Free (dims);
  Py_DECREF (list);
  return result;
}

static PyObject *
session_weights_evict (PyObject *obj, PyObject *args)
{
  SessionObject *self = (SessionObject *)obj;
  const char *module;
  PyObject *tier_obj = NULL;
  if (!PyArg_ParseTuple (args, "s|O:weights_evict", &module, &tier_obj))
    return NULL;
  int tier = WICK_TIER_AUTO;
  if (tier_obj != NULL && !arg_enum (tier_obj, tiers, "tier", &tier))
    return NULL;
  WickWeightStore *store = session_store (self, "weights_evict", false);
  if (store == NULL)
    return NULL;
  WickWeightStats stats;
  WickError error = { "" };
  bool ok;
  Py_BEGIN_ALLOW_THREADS ok = wick_weight_store_evict (store, module, tier, &stats, &error);
  Py_END_ALLOW_THREADS return ok ? stats_dict (&stats) : raise_wick (&error);
}

static PyObject *
session_weights_restore (PyObject *obj, PyObject *args)
{
  SessionObject *self = (SessionObject *)obj;
  const char *module;
  if (!PyArg_ParseTuple (args, "s:weights_restore", &module))
    return NULL;
  WickWeightStore *store = session_store (self, "weights_restore", false);
  if (store == NULL)
    return NULL;
  WickWeightStats stats;
  WickError error = { "" };
  bool ok;
  Py_BEGIN_ALLOW_THREADS ok = wick_weight_store_restore (store, module, &stats, &error);
  Py_END_ALLOW_THREADS return ok ? stats_dict (&stats) : raise_wick (&error);
}

static PyObject *
session_weights_stats (PyObject *obj, PyObject *args)
{
  SessionObject *self = (SessionObject *)obj;
  const char *module;
  if (!PyArg_ParseTuple (args, "s:weights_stats", &module))
    return NULL;
  WickWeightStore *store = session_store (self, "weights_stats", false);
  if (store == NULL)
    return NULL;
  WickWeightStats stats;
  if (!wick_weight_store_find_stats (store, module, &stats))
    {
      PyErr_Format (WickErrorType, "weights_stats: no module '%s' is registered", module);
      return NULL;
    }
  return stats_dict (&stats);
}

static PyObject *
session_weights_modules (PyObject *obj, PyObject *unused)
{
  SessionObject *self = (SessionObject *)obj;
  if (!session_check_open (self, "weights_modules"))
    return NULL;
  WickWeightStore *store = self->store ? self->store : wick_session_get_weight_store (self->session);
  PyObject *list = PyList_New (0);
  size_t n = store != NULL ? wick_weight_store_get_n_modules (store) : 0;
  for (size_t i = 0; list != NULL && i < n; i++)
    {
      WickWeightStats stats;
      if (!wick_weight_store_get_module_stats (store, i, &stats))
        continue;
      PyObject *d = stats_dict (&stats);
      PyList_Append (list, d);
      Py_XDECREF (d);
    }
  return list;
}

static const char *const place_names[] = { "resident", "disk", "ram", "dropped" };

static PyObject *
session_weights_param_info (PyObject *obj, PyObject *args)
{
  SessionObject *self = (SessionObject *)obj;
  const char *module;
  Py_ssize_t index;
  if (!PyArg_ParseTuple (args, "sn:weights_param_info", &module, &index))
    return NULL;
  WickWeightStore *store = session_store (self, "weights_param_info", false);
  if (store == NULL)
    return NULL;
  WickWeightParamInfo info;
  if (index < 0 || !wick_weight_store_get_param_info (store, module, (size_t)index, &info))
    Py_RETURN_NONE;
  return Py_BuildValue ("{s:s,s:s,s:s,s:K,s:O,s:s,s:s,s:s}", "name", info.name, "place",
                        place_names[info.place & 3], "last_tier", enum_name (tiers, info.last_tier),
                        "bytes", (unsigned long long)info.bytes, "tied", info.tied ? Py_True : Py_False,
                        "key", info.key, "shard", info.shard, "reason", info.reason);
}

static PyObject *
session_weights_is_resident (PyObject *obj, PyObject *args)
{
  SessionObject *self = (SessionObject *)obj;
  const char *module;
  if (!PyArg_ParseTuple (args, "s:weights_is_resident", &module))
    return NULL;
  WickWeightStore *store = session_store (self, "weights_is_resident", false);
  if (store == NULL)
    return NULL;
  return PyBool_FromLong (wick_weight_store_is_resident (store, module));
}

static PyObject *
session_weights_use_begin (PyObject *obj, PyObject *args)
{
  SessionObject *self = (SessionObject *)obj;
  const char *module;
  if (!PyArg_ParseTuple (args, "s:weights_use_begin", &module))
    return NULL;
  WickWeightStore *store = session_store (self, "weights_use_begin", false);
  if (store == NULL)
    return NULL;
  WickError error = { "" };
  bool ok;
  Py_BEGIN_ALLOW_THREADS ok = wick_weight_store_use_begin (store, module, &error);
  Py_END_ALLOW_THREADS return record_result (ok, &error);
}

static PyObject *
session_weights_use_end (PyObject *obj, PyObject *args)
{
  SessionObject *self = (SessionObject *)obj;
  const char *module;
  if (!PyArg_ParseTuple (args, "s:weights_use_end", &module))
    return NULL;
  WickWeightStore *store = session_store (self, "weights_use_end", false);
  if (store == NULL)
    return NULL;
  wick_weight_store_use_end (store, module);
  Py_RETURN_NONE;
}

/* ---- stages ---- */

typedef struct
{
  PyObject_HEAD PyObject *session; /* SessionObject, kept alive */
  WickStage *stage;
} StageObject;

static bool
parse_stage_buffer (PyObject *item, const char *what, bool named, WickStageBuffer *out,
                    int64_t *shape)
{
  Py_ssize_t want = named ? 4 : 3;
  if (!PyTuple_Check (item) || PyTuple_Size (item) != want)
    {
      PyErr_Format (PyExc_TypeError, "%s must be a tuple (%saddress, dtype, shape)", what,
                    named ? "name, " : "");
      return false;
    }
  Py_ssize_t at = 0;
  char name[160];
  out->name = NULL;
  if (named)
    {
      snprintf (name, sizeof name, "%s.name", what);
      if ((out->name = arg_string (PyTuple_GetItem (item, at++), name)) == NULL)
        return false;
    }
  uint64_t address, dims[MAX_RANK];
  size_t rank;
  int dtype;
  snprintf (name, sizeof name, "%s.address", what);
  if (!arg_u64 (PyTuple_GetItem (item, at++), name, &address))
    return false;
  snprintf (name, sizeof name, "%s.dtype", what);
  if (!arg_enum (PyTuple_GetItem (item, at++), stage_dtypes, name, &dtype))
    return false;
  snprintf (name, sizeof name, "%s.shape", what);
  if (!arg_shape (PyTuple_GetItem (item, at), name, dims, &rank))
    return false;
  if (rank > WICK_STAGE_MAX_RANK)
    {
      PyErr_Format (PyExc_ValueError, "%s: at most %d dimensions", name, WICK_STAGE_MAX_RANK);
      return false;
    }
  for (size_t i = 0; i < rank; i++)
    shape[i] = (int64_t)dims[i];
  out->data = (void *)(uintptr_t)address;
  out->dtype = dtype;
  out->shape = shape;
  out->rank = rank;
  return true;
}

static PyObject *
session_register_host_stage (PyObject *obj, PyObject *args)
{
  SessionObject *self = (SessionObject *)obj;
  const char *name;
  PyObject *windows, *output;
  if (!PyArg_ParseTuple (args, "sOO:register_host_stage", &name, &windows, &output)
      || !session_check (self, "register_stage"))
    return NULL;
  PyObject *list = PySequence_List (windows);
  if (list == NULL)
    return NULL;
  Py_ssize_t n = PyList_Size (list);
  if (n > WICK_STAGE_MAX_WINDOWS)
    {
      Py_DECREF (list);
      PyErr_Format (PyExc_ValueError, "windows: %zd, at most %d are allowed", n,
                    WICK_STAGE_MAX_WINDOWS);
      return NULL;
    }
  WickStageBuffer buffers[WICK_STAGE_MAX_WINDOWS];
  int64_t shapes[WICK_STAGE_MAX_WINDOWS + 1][WICK_STAGE_MAX_RANK];
  WickStageInfo info = { .name = name, .windows = buffers, .n_windows = (size_t)n };
  bool ok = true;
  for (Py_ssize_t i = 0; ok && i < n; i++)
    {
      char what[48];
      snprintf (what, sizeof what, "windows[%zd]", i);
      ok = parse_stage_buffer (PyList_GetItem (list, i), what, true, &buffers[i], shapes[i]);
    }
  ok = ok && parse_stage_buffer (output, "output", false, &info.output, shapes[n]);
  PyObject *result = NULL;
  if (ok)
    {
      WickError error = { "" };
      WickStage *stage = wick_session_register_host_stage (self->session, &info, &error);
      if (stage == NULL)
        raise_wick (&error);
      else
        {
          StageObject *s = PyObject_New (StageObject, (PyTypeObject *)StageType);
          if (s != NULL)
            {
              s->session = Py_NewRef (obj);
              s->stage = stage;
            }
          result = (PyObject *)s;
        }
    }
  Py_DECREF (list);
  return result;
}

static void
stage_dealloc (PyObject *obj)
{
  PyTypeObject *type = Py_TYPE (obj);
  Py_XDECREF (((StageObject *)obj)->session);
  freefunc tp_free = (freefunc)PyType_GetSlot (type, Py_tp_free);
  tp_free (obj);
  Py_DECREF (type);
}

static WickStage *
stage_get (PyObject *obj, const char *what)
{
  StageObject *self = (StageObject *)obj;
  if (!session_check_open ((SessionObject *)self->session, what))
    return NULL;
  return self->stage;
}

static PyObject *
options_dict (const WickCaptureOptions *o)
{
  return Py_BuildValue ("{s:I,s:d,s:d,s:I,s:I}", "warmup", o->warmup, "gate_cos", o->gate_cos,
                        "min_speedup", o->min_speedup, "timing_rounds", o->timing_rounds,
                        "timing_iterations", o->timing_iterations);
}

static bool
parse_options (PyObject *dict, WickCaptureOptions *o)
{
  wick_capture_options_init (o);
  if (dict == NULL || dict == Py_None)
    return true;
  if (!PyDict_Check (dict))
    {
      PyErr_SetString (PyExc_TypeError, "options must be a dict");
      return false;
    }
  PyObject *v;
  uint64_t u;
  if ((v = PyDict_GetItemString (dict, "warmup")) != NULL)
    {
      if (!arg_u64 (v, "options['warmup']", &u))
        return false;
      o->warmup = (uint32_t)(u > 100000 ? 100000 : u);
    }
  if ((v = PyDict_GetItemString (dict, "gate_cos")) != NULL
      && !arg_double (v, "options['gate_cos']", &o->gate_cos))
    return false;
  if ((v = PyDict_GetItemString (dict, "min_speedup")) != NULL
      && !arg_double (v, "options['min_speedup']", &o->min_speedup))
    return false;
  if ((v = PyDict_GetItemString (dict, "timing_rounds")) != NULL)
    {
      if (!arg_u64 (v, "options['timing_rounds']", &u))
        return false;
      o->timing_rounds = (uint32_t)(u > 100000 ? 100000 : u);
    }
  if ((v = PyDict_GetItemString (dict, "timing_iterations")) != NULL)
    {
      if (!arg_u64 (v, "options['timing_iterations']", &u))
        return false;
      o->timing_iterations = (uint32_t)(u > 1000000 ? 1000000 : u);
    }
  return true;
}

static PyObject *
nullable (double value)
{
  return isfinite (value) ? PyFloat_FromDouble (value) : Py_NewRef (Py_None);
}

static PyObject *
cert_dict (const WickCertification *c)
{
  PyObject *d = Py_BuildValue ("{s:s,s:O,s:s,s:s,s:d,s:d,s:O,s:O,s:K,s:I}", "stage", c->stage,
                               "accepted", c->accepted ? Py_True : Py_False, "verdict", c->verdict,
                               "reason", c->reason, "gate_cos", c->gate_cos, "min_speedup",
                               c->min_speedup, "parity_checked",
                               c->parity_checked ? Py_True : Py_False, "speedup_checked",
                               c->speedup_checked ? Py_True : Py_False, "kernel_nodes",
                               (unsigned long long)c->kernel_nodes, "warmup", c->warmup);
  if (d == NULL)
    return NULL;
  const char *keys[] = { "parity_cos",     "max_abs",     "p99_abs",
                         "eager_ms",       "replay_ms",   "speedup_median",
                         "speedup_min",    "speedup_max", "eager_instrumented_ms" };
  double values[] = { c->parity_cos,     c->max_abs,     c->p99_abs,
                      c->eager_ms,       c->replay_ms,   c->speedup_median,
                      c->speedup_min,    c->speedup_max, c->eager_instrumented_ms };
  const char *recording = wick_eager_recording_name ((WickEagerRecording)c->eager_recording);
  PyObject *r = PyUnicode_FromString (recording != NULL ? recording : "unknown");
  if (r == NULL || PyDict_SetItemString (d, "eager_recording", r) < 0)
    {
      Py_XDECREF (r);
      Py_DECREF (d);
      return NULL;
    }
  Py_DECREF (r);
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    {
      PyObject *v = nullable (values[i]);
      PyDict_SetItemString (d, keys[i], v);
      Py_DECREF (v);
    }
  return d;
}

static PyObject *
stage_state (PyObject *obj, PyObject *unused)
{
  WickStage *stage = stage_get (obj, "Stage.state");
  if (stage == NULL)
    return NULL;
  static const char *const names[] = { "eager", "captured", "refused" };
  return PyUnicode_FromString (names[wick_stage_get_state (stage) % 3]);
}

static PyObject *
stage_capture_requested (PyObject *obj, PyObject *unused)
{
  WickStage *stage = stage_get (obj, "Stage.capture_requested");
  if (stage == NULL)
    return NULL;
  return PyBool_FromLong (wick_stage_capture_requested (stage));
}

static PyObject *
stage_take_request (PyObject *obj, PyObject *unused)
{
  WickStage *stage = stage_get (obj, "Stage.take_capture_request");
  if (stage == NULL)
    return NULL;
  WickCaptureOptions o;
  if (!wick_stage_take_capture_request (stage, &o))
    Py_RETURN_NONE;
  return options_dict (&o);
}

/* begin_capture(options=None): a capture the host begins unasked
 * (wick.torch's Stage.capture()): its span starts now (wick_stage_begin_capture). */
static PyObject *
stage_begin (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *kwlist[] = { "options", NULL };
  PyObject *options = Py_None;
  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "|O:begin_capture", kwlist, &options))
    return NULL;
  WickStage *stage = stage_get (obj, "Stage.begin_capture");
  if (stage == NULL)
    return NULL;
  WickCaptureOptions o;
  if (!parse_options (options, &o))
    return NULL;
  WickError error = { "" };
  if (!wick_stage_begin_capture (stage, &o, &error))
    return raise_wick (&error);
  Py_RETURN_NONE;
}

static PyObject *
stage_complete (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *kwlist[] = { "options", "figures", "failure", NULL };
  PyObject *options = Py_None, *figures = Py_None, *failure = Py_None;
  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "|OOO:complete_capture", kwlist, &options,
                                    &figures, &failure))
    return NULL;
  WickStage *stage = stage_get (obj, "Stage.complete_capture");
  if (stage == NULL)
    return NULL;
  WickCaptureOptions o;
  const char *why = NULL;
  if (!parse_options (options, &o) || !arg_optional_string (failure, "failure", &why))
    return NULL;
  WickStageFigures f = { 0 };
  double *eager = NULL, *replay = NULL;
  bool ok = true;
  if (figures != Py_None)
    {
      if (!PyDict_Check (figures))
        {
          PyErr_SetString (PyExc_TypeError, "figures must be a dict");
          return NULL;
        }
      const char *keys[] = { "dot", "out_squared", "ref_squared", "max_abs", "p99_abs" };
      double *slots[] = { &f.dot, &f.out_squared, &f.ref_squared, &f.max_abs, &f.p99_abs };
      for (size_t i = 0; ok && i < 5; i++)
        {
          PyObject *v = PyDict_GetItemString (figures, keys[i]);
          char what[48];
          snprintf (what, sizeof what, "figures['%s']", keys[i]);
          if (v == NULL)
            {
              PyErr_Format (PyExc_KeyError, "%s is missing", what);
              ok = false;
            }
          else
            ok = arg_double (v, what, slots[i]);
        }
      PyObject *e = ok ? PyDict_GetItemString (figures, "eager_ms") : NULL;
      PyObject *r = ok ? PyDict_GetItemString (figures, "replay_ms") : NULL;
      if (ok && e != NULL && r != NULL)
        {
          Py_ssize_t n = PySequence_Size (e);
          if (n < 0 || PySequence_Size (r) != n)
            {
              PyErr_Clear ();
              PyErr_SetString (PyExc_ValueError,
                               "figures['eager_ms'] and ['replay_ms'] must be sequences of one "
                               "length");
              ok = false;
            }
          eager = PyMem_Calloc ((size_t)n + 1, sizeof *eager);
          replay = PyMem_Calloc ((size_t)n + 1, sizeof *replay);
          for (Py_ssize_t i = 0; ok && i < n; i++)
            {
              PyObject *a = PySequence_GetItem (e, i), *b = PySequence_GetItem (r, i);
              ok = a && b && arg_double (a, "figures['eager_ms'][i]", &eager[i])
                   && arg_double (b, "figures['replay_ms'][i]", &replay[i]);
              Py_XDECREF (a);
              Py_XDECREF (b);
            }
          f.eager_ms = eager;
          f.replay_ms = replay;
          f.n_rounds = ok ? (size_t)n : 0;
        }
      PyObject *k = ok ? PyDict_GetItemString (figures, "kernel_nodes") : NULL;
      if (k != NULL)
        ok = arg_u64 (k, "figures['kernel_nodes']", &f.kernel_nodes);
    }
  PyObject *result = NULL;
  if (ok)
    {
      WickCertification cert;
      WickError error = { "" };
      result = wick_stage_complete_capture (stage, &o, figures != Py_None ? &f : NULL, why, &cert,
                                            &error)
                 ? cert_dict (&cert)
                 : raise_wick (&error);
    }
  PyMem_Free (eager);
  PyMem_Free (replay);
  return result;
}

/* note_eager_timing(suspended, instrumented_ms=None): how the next
 * complete_capture's eager rounds were timed (wick_stage_note_eager_timing). */
static PyObject *
stage_note_eager (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *kwlist[] = { "suspended", "instrumented_ms", NULL };
  int suspended = 0;
  PyObject *rounds = Py_None;
  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "p|O:note_eager_timing", kwlist, &suspended,
                                    &rounds))
    return NULL;
  WickStage *stage = stage_get (obj, "Stage.note_eager_timing");
  if (stage == NULL)
    return NULL;
  double *times = NULL;
  Py_ssize_t n = 0;
  if (rounds != Py_None)
    {
      n = PySequence_Check (rounds) ? PySequence_Size (rounds) : -1;
      if (n < 0)
        {
          if (!PyErr_Occurred ())
            PyErr_SetString (PyExc_TypeError, "instrumented_ms must be a sequence of ms");
          return NULL;
        }
      if (n > 1024)
        n = 1025; /* refused by libwick with its sentence; read no further */
      times = PyMem_Calloc (n > 0 ? (size_t)n : 1, sizeof *times);
      if (times == NULL)
        return PyErr_NoMemory ();
      bool ok = true;
      for (Py_ssize_t i = 0; ok && i < n; i++)
        {
          PyObject *item = PySequence_GetItem (rounds, i);
          ok = item != NULL && arg_double (item, "instrumented_ms[i]", &times[i]);
          Py_XDECREF (item);
        }
      if (!ok)
        {
          PyMem_Free (times);
          return NULL;
        }
    }
  WickError error = { "" };
  bool ok = wick_stage_note_eager_timing (
    stage, suspended ? WICK_EAGER_RECORDING_SUSPENDED : WICK_EAGER_RECORDING_ACTIVE, times,
    (size_t)n, &error);
  PyMem_Free (times);
  return record_result (ok, &error);
}

static PyObject *
stage_release (PyObject *obj, PyObject *unused)
{
  WickStage *stage = stage_get (obj, "Stage.release");
  if (stage == NULL)
    return NULL;
  WickError error = { "" };
  return record_result (wick_stage_release (stage, &error), &error);
}

static PyObject *
stage_capture (PyObject *obj, PyObject *args)
{
  PyObject *options = Py_None;
  if (!PyArg_ParseTuple (args, "|O:capture", &options))
    return NULL;
  WickStage *stage = stage_get (obj, "Stage.capture");
  WickCaptureOptions o;
  if (stage == NULL || !parse_options (options, &o))
    return NULL;
  WickCertification cert;
  WickError error = { "" };
  bool ok;
  Py_BEGIN_ALLOW_THREADS ok = wick_stage_capture (stage, &o, &cert, &error);
  Py_END_ALLOW_THREADS return ok ? cert_dict (&cert) : raise_wick (&error);
}

static PyObject *
stage_certification (PyObject *obj, PyObject *unused)
{
  WickStage *stage = stage_get (obj, "Stage.certification");
  if (stage == NULL)
    return NULL;
  WickCertification cert;
  if (!wick_stage_get_certification (stage, &cert))
    Py_RETURN_NONE;
  return cert_dict (&cert);
}

static PyObject *
stage_check_window (PyObject *obj, PyObject *args)
{
  const char *name;
  unsigned long long n_bytes;
  PyObject *dtype_obj, *shape_obj;
  if (!PyArg_ParseTuple (args, "sKOO:check_window", &name, &n_bytes, &dtype_obj, &shape_obj))
    return NULL;
  WickStage *stage = stage_get (obj, "Stage.check_window");
  int dtype;
  uint64_t dims[MAX_RANK];
  size_t rank;
  if (stage == NULL || !arg_enum (dtype_obj, stage_dtypes, "dtype", &dtype)
      || !arg_shape (shape_obj, "shape", dims, &rank))
    return NULL;
  int64_t shape[MAX_RANK];
  for (size_t i = 0; i < rank; i++)
    shape[i] = (int64_t)dims[i];
  WickError error = { "" };
  return record_result (
    wick_stage_check_window (stage, name, n_bytes, dtype, shape, rank, &error), &error);
}

static PyMethodDef stage_methods[] = {
  { "state", stage_state, METH_NOARGS, "'eager', 'captured' or 'refused'." },
  { "capture_requested", stage_capture_requested, METH_NOARGS, NULL },
  { "take_capture_request", stage_take_request, METH_NOARGS,
    "The pending request's options (a dict), or None." },
  { "begin_capture", (PyCFunction)(void (*) (void))stage_begin, METH_VARARGS | METH_KEYWORDS,
    "begin_capture(options=None): the span of a capture the host begins unasked" },
  { "complete_capture", (PyCFunction)(void (*) (void))stage_complete,
    METH_VARARGS | METH_KEYWORDS,
    "complete_capture(options=None, figures=None, failure=None) -> certificate dict" },
  { "note_eager_timing", (PyCFunction)(void (*) (void))stage_note_eager,
    METH_VARARGS | METH_KEYWORDS,
    "note_eager_timing(suspended, instrumented_ms=None): how the eager rounds were timed." },
  { "release", stage_release, METH_NOARGS, NULL },
  { "capture", stage_capture, METH_VARARGS, "wick_stage_capture (as the control socket asks)." },
  { "certification", stage_certification, METH_NOARGS, NULL },
  { "check_window", stage_check_window, METH_VARARGS, NULL },
  { NULL }
};

static PyType_Slot stage_slots[] = {
  { Py_tp_dealloc, stage_dealloc },
  { Py_tp_methods, stage_methods },
  { Py_tp_doc, "A libwick stage captured by its host (see wick.torch.register_stage)." },
  { 0, NULL },
};

static PyType_Spec stage_spec = {
  "wick._wick.Stage", sizeof (StageObject), 0, Py_TPFLAGS_DEFAULT, stage_slots,
};

/* ---- properties ---- */

static PyObject *
session_get_pid (PyObject *obj, void *closure)
{
  SessionObject *self = (SessionObject *)obj;
  if (!session_check_open (self, "pid"))
    return NULL;
  return PyLong_FromLong (wick_session_get_pid (self->session));
}

static PyObject *
session_get_run_id (PyObject *obj, void *closure)
{
  SessionObject *self = (SessionObject *)obj;
  if (!session_check_open (self, "run_id"))
    return NULL;
  return PyUnicode_FromString (wick_session_get_run_id (self->session));
}

static PyObject *
session_get_dropped (PyObject *obj, void *closure)
{
  SessionObject *self = (SessionObject *)obj;
  if (!session_check_open (self, "dropped"))
    return NULL;
  return PyLong_FromUnsignedLongLong (wick_session_get_dropped (self->session));
}

static PyObject *
session_get_finished (PyObject *obj, void *closure)
{
  SessionObject *self = (SessionObject *)obj;
  return PyBool_FromLong (self->session == NULL || wick_session_is_finished (self->session));
}

static PyObject *
session_get_closed (PyObject *obj, void *closure)
{
  return PyBool_FromLong (((SessionObject *)obj)->session == NULL);
}

static PyObject *
session_get_strict (PyObject *obj, void *closure)
{
  SessionObject *self = (SessionObject *)obj;
  if (!session_check_open (self, "strict"))
    return NULL;
  return PyBool_FromLong (wick_session_get_strict (self->session));
}

static PyObject *
session_get_control_socket (PyObject *obj, void *closure)
{
  SessionObject *self = (SessionObject *)obj;
  if (!session_check_open (self, "control_socket_path"))
    return NULL;
  const char *path = wick_session_get_control_socket_path (self->session);
  return path != NULL ? PyUnicode_FromString (path) : Py_NewRef (Py_None);
}

static PyObject *
session_get_entrypoint (PyObject *obj, void *closure)
{
  return Py_NewRef (((SessionObject *)obj)->entrypoint);
}

static PyGetSetDef session_getset[] = {
  { "pid", session_get_pid, NULL, NULL, NULL },
  { "run_id", session_get_run_id, NULL, NULL, NULL },
  { "dropped", session_get_dropped, NULL, "Records dropped by the ring so far.", NULL },
  { "finished", session_get_finished, NULL, NULL, NULL },
  { "closed", session_get_closed, NULL, NULL, NULL },
  { "strict", session_get_strict, NULL, NULL, NULL },
  { "control_socket_path", session_get_control_socket, NULL, NULL, NULL },
  { "entrypoint", session_get_entrypoint, NULL, NULL, NULL },
  { NULL }
};

#define KW(f) (PyCFunction) (void (*) (void)) f, METH_VARARGS | METH_KEYWORDS

static PyMethodDef session_methods[] = {
  { "finish", session_finish, METH_NOARGS, NULL },
  { "finish_failed", session_finish_failed, METH_O, NULL },
  { "close", session_close, METH_NOARGS, NULL },
  { "now_ns", session_now_ns, METH_NOARGS, NULL },
  { "span", (PyCFunction)(void (*) (void))session_span, METH_FASTCALL | METH_KEYWORDS,
    "span(name, kind='function', step=None): a Span (context manager and decorator)." },
  { "span_begin", (PyCFunction)(void (*) (void))session_span_begin, METH_FASTCALL, NULL },
  { "span_begin_child", (PyCFunction)(void (*) (void))session_span_begin_child, METH_FASTCALL,
    NULL },
  { "span_end", session_span_end, METH_O, NULL },
  { "current_span", session_span_current, METH_NOARGS, NULL },
  { "measurement_begin", session_measurement_begin, METH_O, NULL },
  { "record_op", KW (session_record_op), NULL },
  { "record_tensor", KW (session_record_tensor), NULL },
  { "record_tensor_stats", KW (session_record_tensor_stats), NULL },
  { "record_memory", KW (session_record_memory), NULL },
  { "_memory_fast", (PyCFunction)(void (*) (void))session_record_memory_fast, METH_FASTCALL, NULL },
  { "_tensor_fast", (PyCFunction)(void (*) (void))session_record_tensor_fast, METH_FASTCALL, NULL },
  { "record_device_memory", KW (session_record_device_memory), NULL },
  { "record_device_interval", KW (session_record_device_interval), NULL },
  { "record_call_edge", session_record_call_edge, METH_VARARGS, NULL },
  { "record_data_edge", session_record_data_edge, METH_VARARGS, NULL },
  { "record_gradient", KW (session_record_gradient), NULL },
  { "mark", session_mark, METH_O, NULL },
  { "enable_control", session_enable_control, METH_NOARGS, NULL },
  { "lock_control", session_lock_control, METH_NOARGS, NULL },
  { "unlock_control", session_unlock_control, METH_NOARGS, NULL },
  { "weights_register", KW (session_weights_register), NULL },
  { "weights_evict", session_weights_evict, METH_VARARGS, NULL },
  { "weights_restore", session_weights_restore, METH_VARARGS, NULL },
  { "weights_stats", session_weights_stats, METH_VARARGS, NULL },
  { "weights_modules", session_weights_modules, METH_NOARGS, NULL },
  { "weights_param_info", session_weights_param_info, METH_VARARGS, NULL },
  { "weights_is_resident", session_weights_is_resident, METH_VARARGS, NULL },
  { "weights_use_begin", session_weights_use_begin, METH_VARARGS, NULL },
  { "weights_use_end", session_weights_use_end, METH_VARARGS, NULL },
  { "register_host_stage", session_register_host_stage, METH_VARARGS, NULL },
  { NULL }
};

static PyType_Slot session_slots[] = {
  { Py_tp_new, session_new },
  { Py_tp_dealloc, session_dealloc },
  { Py_tp_methods, session_methods },
  { Py_tp_getset, session_getset },
  { Py_tp_doc, "The libwick session (wick.Session wraps it)." },
  { 0, NULL },
};

static PyType_Spec session_spec = {
  "wick._wick.Session", sizeof (SessionObject), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
  session_slots,
};

/* ------------------------------------------------------------------------ */
/* _Tracker: wick.torch's storages and their memory records, kept here so that
 * a module call's outputs, a step's gradients and the optimizer's state cost
 * a C loop, not a Python frame a tensor. One alloc record per storage while
 * a tensor we saw on it is alive, a free when that tensor object is
 * collected (a weak reference whose callback is the storage's entry); a
 * tensor record for every storage seen the first time and for every labelled
 * tensor (tests/python/test_tracker_records.py holds the contract in plain
 * Python and compares the records).
 *
 * What a new storage costs is torch's attribute calls (its storage, the data
 * pointer, bytes, shape, dtype, device, requires_grad) and two records; the
 * rest is kept small (docs/performance.md, "fifth round (mem22)"): the table
 * is the tracker's own, open addressing on the data pointer (no int object,
 * no dict), its entries also in a list in insertion order (free_all frees in
 * that order); dtype and device names come from small caches (a dtype by
 * identity, a device by equality) that also hold the dtype's element size,
 * so libwick is given the tensor's dense bytes; a storage id is a str only
 * when track() returns it. Everything is touched under the GIL with no Python
 * code between a lookup and its insert, so two threads tracking one storage
 * record one alloc. */

typedef struct TrackerObject TrackerObject;
typedef struct EntryObject EntryObject;

struct EntryObject
{
  PyObject_HEAD TrackerObject *tracker; /* borrowed: the tracker clears it (and ref) first */
  EntryObject *prev, *next;             /* the tracker's insertion order, while tracker is set */
  PyObject *ref;                        /* the weak reference to the tensor; NULL once fired */
  PyObject *label;                      /* the tensor id when labelled (str); NULL: the storage id */
  PyObject *device, *dtype;             /* str */
  PyObject *sid_object;                 /* the storage id as a str, made when track() returns it */
  uint64_t address, bytes;
  int category;
  int sid_length;
  char sid[24]; /* "st" and the counter */
  size_t rank;
  uint64_t dims[MAX_RANK];
};

typedef struct
{
  uint64_t address; /* 0: empty */
  EntryObject *entry;
} TrackerSlot;

#define TRACKER_DTYPES 16
#define TRACKER_DEVICES 4

typedef struct
{
  PyObject *dtype, *name; /* held; NULL: empty */
  uint64_t size;          /* wick_dtype_size of the name (0: not known to libwick) */
} DtypeName;

typedef struct
{
  PyObject *device, *name; /* held; NULL: empty */
} DeviceName;

struct TrackerObject
{
  PyObject_HEAD SessionObject *session;
  PyObject *tensor_type;
  PyObject *dtypes, *dtype_name;   /* {torch.dtype: str}, its fallback callable */
  PyObject *devices, *device_name; /* {torch.device: str}, its fallback callable */
  PyObject *storage_method;        /* "untyped_storage", "_storage" or "storage" */
  TrackerSlot *slots;              /* capacity slots (a power of two), or NULL */
  size_t capacity, count;
  int shift; /* 64 - log2 (capacity) */
  EntryObject *first, *last; /* every entry of the table, oldest first */
  DtypeName dtype_names[TRACKER_DTYPES];
  DeviceName device_names[TRACKER_DEVICES];
  PyObject *category_object; /* the category str seen last (held) and its value */
  int category;
  unsigned long long counter, errors;
};

static PyObject *EntryType;
static PyObject *TrackerType;
static PyObject *str_data_ptr, *str_nbytes, *str_shape, *str_dtype, *str_device,
  *str_requires_grad, *str_grad;

static void
entry_dealloc (PyObject *obj)
{
  EntryObject *e = (EntryObject *)obj;
  PyTypeObject *type = Py_TYPE (obj);
  Py_XDECREF (e->ref);
  Py_XDECREF (e->label);
  Py_XDECREF (e->device);
  Py_XDECREF (e->dtype);
  Py_XDECREF (e->sid_object);
  freefunc tp_free = (freefunc)PyType_GetSlot (type, Py_tp_free);
  tp_free (obj);
  Py_DECREF (type);
}

/* The storage id as a str (a new reference), made once. */
static PyObject *
entry_sid (EntryObject *e)
{
  if (e->sid_object == NULL)
    e->sid_object = PyUnicode_FromStringAndSize (e->sid, e->sid_length);
  return Py_XNewRef (e->sid_object);
}

/* --- the table: linear probing on the data pointer, deletion by backward
 * shift (no tombstones), at most half full --- */

static size_t
tracker_slot_of (const TrackerObject *self, uint64_t address)
{
  /* Fibonacci hashing: the product's top bits */
  return (size_t)((address * UINT64_C (0x9E3779B97F4A7C15)) >> self->shift);
}

static EntryObject *
tracker_lookup (const TrackerObject *self, uint64_t address)
{
  if (self->count == 0)
    return NULL;
  for (size_t i = tracker_slot_of (self, address);; i = (i + 1) & (self->capacity - 1))
    {
      if (self->slots[i].address == address)
        return self->slots[i].entry;
      if (self->slots[i].address == 0)
        return NULL;
    }
}

static bool
tracker_grow (TrackerObject *self)
{
  size_t capacity = self->capacity != 0 ? self->capacity * 2 : 256;
  TrackerSlot *slots = PyMem_Calloc (capacity, sizeof *slots);
  if (slots == NULL)
    {
      PyErr_NoMemory ();
      return false;
    }
  TrackerSlot *old = self->slots;
  size_t old_capacity = self->capacity;
  self->slots = slots;
  self->capacity = capacity;
  self->shift = 64 - __builtin_ctzll (capacity);
  for (size_t i = 0; i < old_capacity; i++)
    if (old[i].address != 0)
      {
        size_t j = tracker_slot_of (self, old[i].address);
        while (slots[j].address != 0)
          j = (j + 1) & (capacity - 1);
        slots[j] = old[i];
      }
  PyMem_Free (old);
  return true;
}

/* Adds address -> e (not present): the table holds a reference, and e goes
 * last in the insertion order. */
static bool
tracker_insert (TrackerObject *self, uint64_t address, EntryObject *e)
{
  if ((self->count + 1) * 2 > self->capacity && !tracker_grow (self))
    return false;
  size_t i = tracker_slot_of (self, address);
  while (self->slots[i].address != 0)
    i = (i + 1) & (self->capacity - 1);
  self->slots[i].address = address;
  self->slots[i].entry = (EntryObject *)Py_NewRef ((PyObject *)e);
  self->count++;
  e->prev = self->last;
  e->next = NULL;
  if (self->last != NULL)
    self->last->next = e;
  else
    self->first = e;
  self->last = e;
  return true;
}

/* Takes address's entry out of the table and the order: the table's
 * reference passes to the caller; NULL when there is none. */
static EntryObject *
tracker_remove (TrackerObject *self, uint64_t address)
{
  if (self->count == 0)
    return NULL;
  size_t mask = self->capacity - 1;
  size_t i = tracker_slot_of (self, address);
  while (self->slots[i].address != address)
    {
      if (self->slots[i].address == 0)
        return NULL;
      i = (i + 1) & mask;
    }
  EntryObject *e = self->slots[i].entry;
  /* shift back the entries after i whose home slot is not in (i, j] */
  for (size_t j = (i + 1) & mask; self->slots[j].address != 0; j = (j + 1) & mask)
    {
      size_t home = tracker_slot_of (self, self->slots[j].address);
      if (((j - home) & mask) >= ((j - i) & mask))
        {
          self->slots[i] = self->slots[j];
          i = j;
        }
    }
  self->slots[i].address = 0;
  self->slots[i].entry = NULL;
  self->count--;
  if (e->prev != NULL)
    e->prev->next = e->next;
  else
    self->first = e->next;
  if (e->next != NULL)
    e->next->prev = e->prev;
  else
    self->last = e->prev;
  e->prev = e->next = NULL;
  return e;
}

/* Empties the table; its entries, oldest first, come back as a list through
 * their next pointers, each with the table's reference, detached: its weak
 * reference dropped (its callback never runs) and no tracker. */
static EntryObject *
tracker_take_all (TrackerObject *self)
{
  EntryObject *first = self->first;
  PyMem_Free (self->slots);
  self->slots = NULL;
  self->capacity = self->count = 0;
  self->first = self->last = NULL;
  for (EntryObject *e = first; e != NULL; e = e->next)
    {
      e->tracker = NULL;
      Py_CLEAR (e->ref);
    }
  return first;
}

static void
entries_release (EntryObject *first)
{
  while (first != NULL)
    {
      EntryObject *next = first->next;
      Py_DECREF ((PyObject *)first);
      first = next;
    }
}

/* A memory record of an entry; a failure is counted, never raised (the
 * session may have finished under a collection). */
static void
tracker_record_memory (TrackerObject *self, EntryObject *e, int action, WickSpanId span)
{
  if (!session_check (self->session, "record_memory"))
    {
      PyErr_Clear ();
      self->errors++;
      return;
    }
  WickMemoryRecord r = { .timestamp_ns = WICK_NOW };
  r.storage_id = e->sid;
  r.tensor_id = e->label != NULL ? PyUnicode_AsUTF8AndSize (e->label, NULL) : e->sid;
  r.device = PyUnicode_AsUTF8AndSize (e->device, NULL);
  r.dtype = PyUnicode_AsUTF8AndSize (e->dtype, NULL);
  r.bytes = e->bytes;
  r.action = action;
  r.category = e->category;
  r.address = e->address; /* the storage's data_ptr(): an allocator snapshot's block address */
  r.shape = e->dims;
  r.rank = e->rank;
  r.span = fill_span (self->session, span);
  WickError error; /* written when the call fails; only counted here */
  if (!wick_session_record_memory (self->session->session, &r, &error))
    self->errors++;
}

/* The weak reference's callback: the tensor we saw on this storage is gone. */
static PyObject *
entry_call (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  EntryObject *e = (EntryObject *)obj;
  TrackerObject *self = e->tracker;
  if (self == NULL || tracker_lookup (self, e->address) != e)
    Py_RETURN_NONE;
  tracker_remove (self, e->address); /* its reference is ours now */
  Py_CLEAR (e->ref);
  e->tracker = NULL;
  if (self->session->session != NULL && !wick_session_is_finished (self->session->session))
    tracker_record_memory (self, e, WICK_MEMORY_FREE, 0);
  Py_DECREF (obj);
  Py_RETURN_NONE;
}

static PyType_Slot entry_slots[] = {
  { Py_tp_dealloc, entry_dealloc },
  { Py_tp_call, entry_call },
  { Py_tp_doc, "A storage the tracker recorded (its weak reference's callback)." },
  { 0, NULL },
};

static PyType_Spec entry_spec = {
  "wick._wick._TrackedStorage", sizeof (EntryObject), 0, Py_TPFLAGS_DEFAULT, entry_slots,
};

static PyObject *
tracker_new (PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
  static char *kwlist[] = { "session",     "tensor_type", "dtypes",         "dtype_name",
                            "devices",     "device_name", "storage_method", NULL };
  PyObject *session, *tensor_type, *dtypes, *dtype_name, *devices, *device_name, *method;
  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "O!OO!OO!OU:_Tracker", kwlist,
                                    (PyTypeObject *)SessionType, &session, &tensor_type,
                                    &PyDict_Type, &dtypes, &dtype_name, &PyDict_Type, &devices,
                                    &device_name, &method))
    return NULL;
  if (!PyCallable_Check (dtype_name) || !PyCallable_Check (device_name))
    {
      PyErr_SetString (PyExc_TypeError, "_Tracker: dtype_name and device_name must be callable");
      return NULL;
    }
  TrackerObject *self = PyObject_New (TrackerObject, type);
  if (self == NULL)
    return NULL;
  memset ((char *)self + sizeof (PyObject), 0, sizeof *self - sizeof (PyObject));
  self->session = (SessionObject *)Py_NewRef (session);
  self->tensor_type = Py_NewRef (tensor_type);
  self->dtypes = Py_NewRef (dtypes);
  self->dtype_name = Py_NewRef (dtype_name);
  self->devices = Py_NewRef (devices);
  self->device_name = Py_NewRef (device_name);
  self->storage_method = Py_NewRef (method);
  return (PyObject *)self;
}

static void
tracker_dealloc (PyObject *obj)
{
  TrackerObject *self = (TrackerObject *)obj;
  PyTypeObject *type = Py_TYPE (obj);
  entries_release (tracker_take_all (self));
  for (int i = 0; i < TRACKER_DTYPES; i++)
    {
      Py_XDECREF (self->dtype_names[i].dtype);
      Py_XDECREF (self->dtype_names[i].name);
    }
  for (int i = 0; i < TRACKER_DEVICES; i++)
    {
      Py_XDECREF (self->device_names[i].device);
      Py_XDECREF (self->device_names[i].name);
    }
  Py_XDECREF (self->category_object);
  Py_XDECREF ((PyObject *)self->session);
  Py_XDECREF (self->tensor_type);
  Py_XDECREF (self->dtypes);
  Py_XDECREF (self->dtype_name);
  Py_XDECREF (self->devices);
  Py_XDECREF (self->device_name);
  Py_XDECREF (self->storage_method);
  freefunc tp_free = (freefunc)PyType_GetSlot (type, Py_tp_free);
  tp_free (obj);
  Py_DECREF (type);
}

/* tensor.<storage method>(): a new reference, or NULL with no error set for a
 * tensor that has none (meta, sparse, functional: RuntimeError or
 * NotImplementedError), or NULL with the error set. */
static PyObject *
tracker_storage (TrackerObject *self, PyObject *t)
{
  PyObject *storage = PyObject_CallMethodObjArgs (t, self->storage_method, NULL);
  if (storage == NULL
      && (PyErr_ExceptionMatches (PyExc_RuntimeError)
          || PyErr_ExceptionMatches (PyExc_NotImplementedError)))
    PyErr_Clear ();
  return storage;
}

/* storage.data_ptr() into *address: 1, or 0 with no error set when the call
 * refuses as tracker_storage does, or -1 with the error set. */
static int
tracker_data_ptr (PyObject *storage, uint64_t *address)
{
  PyObject *ptr = PyObject_CallMethodObjArgs (storage, str_data_ptr, NULL);
  if (ptr == NULL)
    {
      if (!PyErr_ExceptionMatches (PyExc_RuntimeError)
          && !PyErr_ExceptionMatches (PyExc_NotImplementedError))
        return -1;
      PyErr_Clear ();
      return 0;
    }
  if (!PyLong_Check (ptr))
    {
      PyErr_Format (PyExc_TypeError, "storage.data_ptr() returned %s, not an int", type_name (ptr));
      Py_DECREF (ptr);
      return -1;
    }
  *address = PyLong_AsUnsignedLongLong (ptr);
  Py_DECREF (ptr);
  return *address == (uint64_t)-1 && PyErr_Occurred () ? -1 : 1;
}

/* A str from a cache dict, else from the fallback callable: a new reference. */
static PyObject *
tracker_name (PyObject *cache, PyObject *fallback, PyObject *key, const char *what)
{
  PyObject *name = PyDict_GetItemWithError (cache, key);
  if (name != NULL)
    return PyUnicode_Check (name) ? Py_NewRef (name) : NULL;
  if (PyErr_Occurred ())
    return NULL;
  name = PyObject_CallFunctionObjArgs (fallback, key, NULL);
  if (name != NULL && !PyUnicode_Check (name))
    {
      PyErr_Format (PyExc_TypeError, "%s must be a str, not %s", what, type_name (name));
      Py_CLEAR (name);
    }
  return name;
}

/* The tensor's dtype name (a new reference) and element size: torch's dtypes
 * are singletons, so the object itself is the key. NULL with the error set. */
static PyObject *
tracker_dtype (TrackerObject *self, PyObject *t, uint64_t *size)
{
  PyObject *dtype = PyObject_GetAttr (t, str_dtype);
  if (dtype == NULL)
    return NULL;
  DtypeName *free_slot = NULL;
  for (int i = 0; i < TRACKER_DTYPES; i++)
    {
      DtypeName *slot = &self->dtype_names[i];
      if (slot->dtype == dtype)
        {
          Py_DECREF (dtype);
          *size = slot->size;
          return Py_NewRef (slot->name);
        }
      if (slot->dtype == NULL && free_slot == NULL)
        free_slot = slot;
    }
  PyObject *name = tracker_name (self->dtypes, self->dtype_name, dtype, "dtype");
  const char *text = name != NULL ? PyUnicode_AsUTF8AndSize (name, NULL) : NULL;
  if (text == NULL)
    {
      Py_DECREF (dtype);
      Py_XDECREF (name);
      return NULL;
    }
  *size = wick_dtype_size (text);
  if (free_slot == NULL)
    free_slot = &self->dtype_names[TRACKER_DTYPES - 1]; /* more dtypes than slots: the last is replaced */
  PyObject *old_dtype = free_slot->dtype, *old_name = free_slot->name;
  free_slot->dtype = dtype; /* the reference we were given */
  free_slot->name = Py_NewRef (name);
  free_slot->size = *size;
  Py_XDECREF (old_dtype);
  Py_XDECREF (old_name);
  return name;
}

/* The tensor's device name (a new reference): a torch.device is a new object
 * each time it is read, so a device is found by equality (type and index)
 * among the few seen. NULL with the error set. */
static PyObject *
tracker_device (TrackerObject *self, PyObject *t)
{
  PyObject *device = PyObject_GetAttr (t, str_device);
  if (device == NULL)
    return NULL;
  DeviceName *free_slot = NULL;
  for (int i = 0; i < TRACKER_DEVICES; i++)
    {
      DeviceName *slot = &self->device_names[i];
      if (slot->device == NULL)
        {
          if (free_slot == NULL)
            free_slot = slot;
          continue;
        }
      if (Py_TYPE (slot->device) != Py_TYPE (device))
        continue;
      int equal = PyObject_RichCompareBool (slot->device, device, Py_EQ);
      if (equal < 0)
        {
          Py_DECREF (device);
          return NULL;
        }
      if (equal)
        {
          Py_DECREF (device);
          return Py_NewRef (slot->name);
        }
    }
  PyObject *name = tracker_name (self->devices, self->device_name, device, "device");
  if (name == NULL)
    {
      Py_DECREF (device);
      return NULL;
    }
  if (free_slot == NULL)
    free_slot = &self->device_names[TRACKER_DEVICES - 1];
  PyObject *old_device = free_slot->device, *old_name = free_slot->name;
  free_slot->device = device;
  free_slot->name = Py_NewRef (name);
  Py_XDECREF (old_device);
  Py_XDECREF (old_name);
  return name;
}

/* A tensor's shape into dims (torch.Size is a tuple of ints). */
static bool
tracker_shape (PyObject *t, uint64_t *dims, size_t *rank)
{
  PyObject *shape = PyObject_GetAttr (t, str_shape);
  if (shape == NULL)
    return false;
  Py_ssize_t n = PyTuple_Check (shape) ? PyTuple_Size (shape) : -1;
  bool fast = n >= 0 && n <= MAX_RANK;
  for (Py_ssize_t i = 0; fast && i < n; i++)
    {
      PyObject *item = PyTuple_GetItem (shape, i);
      fast = PyLong_CheckExact (item)
             && (dims[i] = PyLong_AsUnsignedLongLong (item)) != (unsigned long long)-1;
    }
  bool ok = fast;
  if (fast)
    *rank = (size_t)n;
  else
    {
      PyErr_Clear ();
      ok = arg_shape (shape, "shape", dims, rank); /* names what is wrong */
    }
  Py_DECREF (shape);
  return ok;
}

/* trace/10's dense bytes: libwick's wick_dense_bytes, from the cached size. */
static bool
tracker_dense_bytes (const uint64_t *dims, size_t rank, uint64_t size, uint64_t *out)
{
  if (size == 0)
    return false;
  for (size_t i = 0; i < rank; i++)
    if (__builtin_mul_overflow (size, dims[i], &size))
      return false;
  *out = size;
  return true;
}

static EntryObject *
tracker_entry_new (TrackerObject *self, uint64_t address, uint64_t nbytes, int category,
                   PyObject *label, PyObject *dtype, PyObject *device, const uint64_t *dims,
                   size_t rank)
{
  EntryObject *e = PyObject_New (EntryObject, (PyTypeObject *)EntryType);
  if (e == NULL)
    return NULL;
  e->tracker = self;
  e->prev = e->next = NULL;
  e->ref = e->sid_object = NULL;
  e->label = Py_XNewRef (label);
  e->device = Py_NewRef (device);
  e->dtype = Py_NewRef (dtype);
  e->address = address;
  e->bytes = nbytes;
  e->category = category;
  e->rank = rank;
  memcpy (e->dims, dims, rank * sizeof dims[0]);
  /* "st" and the counter in decimal, without printf's format machinery */
  unsigned long long counter = ++self->counter;
  char digits[20];
  int n = 0;
  do
    digits[n++] = (char)('0' + counter % 10);
  while ((counter /= 10) != 0);
  e->sid[0] = 's';
  e->sid[1] = 't';
  for (int i = 0; i < n; i++)
    e->sid[2 + i] = digits[n - 1 - i];
  e->sid[2 + n] = '\0';
  e->sid_length = 2 + n;
  return e;
}

/* Records one tensor (see the section's comment). 1 with *out its storage's
 * entry (a new reference); 0 when it has no storage or no bytes; -1 on an
 * error that is not libwick's (libwick's refusals are counted in errors). */
static int
tracker_track_one (TrackerObject *self, PyObject *t, int category, PyObject *label,
                   WickSpanId span, EntryObject **out)
{
  PyObject *storage = tracker_storage (self, t);
  if (storage == NULL)
    return PyErr_Occurred () ? -1 : 0;
  uint64_t address = 0;
  int got = tracker_data_ptr (storage, &address);
  if (got <= 0 || address == 0)
    {
      Py_DECREF (storage);
      return got < 0 ? -1 : 0;
    }
  /* a storage seen before, unlabelled: nothing to record (the optimizer's
   * state after its first step, an activation passed up unchanged) */
  EntryObject *e = tracker_lookup (self, address);
  if (e != NULL && label == NULL)
    {
      Py_DECREF (storage);
      *out = (EntryObject *)Py_NewRef ((PyObject *)e);
      return 1;
    }
  PyObject *nbytes_obj = PyObject_CallMethodObjArgs (storage, str_nbytes, NULL);
  Py_DECREF (storage);
  uint64_t nbytes;
  bool ok = nbytes_obj != NULL && arg_u64 (nbytes_obj, "storage.nbytes()", &nbytes);
  Py_XDECREF (nbytes_obj);
  if (!ok)
    return -1;
  if (nbytes == 0)
    return 0;
  uint64_t dims[MAX_RANK], dtype_size = 0;
  size_t rank;
  PyObject *dtype = NULL, *device = NULL, *rg = NULL;
  int requires_grad = -1;
  if (tracker_shape (t, dims, &rank) && (dtype = tracker_dtype (self, t, &dtype_size)) != NULL
      && (device = tracker_device (self, t)) != NULL
      && (rg = PyObject_GetAttr (t, str_requires_grad)) != NULL)
    requires_grad = PyObject_IsTrue (rg);
  Py_XDECREF (rg);
  if (requires_grad < 0)
    {
      Py_XDECREF (dtype);
      Py_XDECREF (device);
      return -1;
    }

  /* From here to the insert no Python code runs: the lookup and the insert
   * are one step under the GIL. */
  e = tracker_lookup (self, address);
  bool is_new = e == NULL;
  if (is_new)
    {
      e = tracker_entry_new (self, address, nbytes, category, label, dtype, device, dims, rank);
      ok = e != NULL && tracker_insert (self, address, e);
      if (!ok)
        {
          Py_XDECREF ((PyObject *)e);
          Py_DECREF (dtype);
          Py_DECREF (device);
          return -1;
        }
    }
  else
    {
      Py_INCREF ((PyObject *)e);
      if (label == NULL)
        {
          /* another thread recorded it while this one read the tensor */
          Py_DECREF (dtype);
          Py_DECREF (device);
          *out = e;
          return 1;
        }
    }
  const char *tensor_id = label != NULL ? PyUnicode_AsUTF8AndSize (label, NULL) : e->sid;
  if (tensor_id == NULL)
    {
      Py_DECREF ((PyObject *)e);
      Py_DECREF (dtype);
      Py_DECREF (device);
      return -1;
    }
  if (!session_check (self->session, "record_tensor"))
    {
      PyErr_Clear ();
      self->errors++;
    }
  else
    {
      WickTensorRecord r = { .requires_grad = requires_grad == 1 };
      r.tensor_id = tensor_id;
      r.label = label != NULL ? tensor_id : NULL;
      r.shape = dims;
      r.rank = rank;
      r.dtype = PyUnicode_AsUTF8AndSize (dtype, NULL);
      r.device = PyUnicode_AsUTF8AndSize (device, NULL);
      r.category = category;
      r.has_dense_bytes = tracker_dense_bytes (dims, rank, dtype_size, &r.dense_bytes);
      r.span = fill_span (self->session, span);
      WickError error; /* written when the call fails; only counted here */
      if (!wick_session_record_tensor (self->session->session, &r, &error))
        self->errors++;
      else if (is_new)
        tracker_record_memory (self, e, WICK_MEMORY_ALLOC, span);
    }
  Py_DECREF (dtype);
  Py_DECREF (device);
  if (is_new)
    {
      /* the free is recorded when this tensor object is collected */
      e->ref = PyWeakref_NewRef (t, (PyObject *)e);
      if (e->ref == NULL)
        {
          Py_DECREF ((PyObject *)e);
          return -1;
        }
    }
  *out = e;
  return 1;
}

/* A category argument: the str seen last is taken by identity (the callers
 * pass the same literal each time). */
static bool
tracker_category (TrackerObject *self, PyObject *obj, int *out)
{
  if (obj == self->category_object && obj != NULL)
    {
      *out = self->category;
      return true;
    }
  if (!arg_enum (obj, categories, "category", out))
    return false;
  PyObject *old = self->category_object;
  self->category_object = Py_NewRef (obj);
  self->category = *out;
  Py_XDECREF (old);
  return true;
}

static bool
tracker_is_tensor (TrackerObject *self, PyObject *obj, int *is)
{
  *is = PyObject_IsInstance (obj, self->tensor_type);
  return *is >= 0;
}

/* tracker_track_one for a call that does not want the entry: false on an
 * error (set). */
static bool
tracker_track_quiet (TrackerObject *self, PyObject *t, int category, PyObject *label,
                     WickSpanId span)
{
  EntryObject *e = NULL;
  int got = tracker_track_one (self, t, category, label, span, &e);
  Py_XDECREF ((PyObject *)e);
  return got >= 0;
}

/* track_all's work: a tensor, or each tensor in a tuple or list (not
 * recursive), tracked with category and span; false with the error set. */
static bool
tracker_track_objects (TrackerObject *self, PyObject *objects, int category, WickSpanId span)
{
  int is;
  bool tuple = PyTuple_Check (objects);
  if (!tuple && !PyList_Check (objects))
    return tracker_is_tensor (self, objects, &is)
           && (!is || tracker_track_quiet (self, objects, category, NULL, span));
  /* a list may change under a collection's callback: its length is read
   * each round and each item held while it is tracked */
  for (Py_ssize_t i = 0; i < (tuple ? PyTuple_Size (objects) : PyList_Size (objects)); i++)
    {
      PyObject *item = tuple ? PyTuple_GetItem (objects, i) : PyList_GetItem (objects, i);
      if (item == NULL)
        return false;
      Py_INCREF (item);
      bool ok = tracker_is_tensor (self, item, &is)
                && (!is || tracker_track_quiet (self, item, category, NULL, span));
      Py_DECREF (item);
      if (!ok)
        return false;
    }
  return true;
}

/* track (tensor, category, label=None, span=None): the storage's id, or None
 * for anything that is not a tensor with a storage of some bytes. */
static PyObject *
tracker_track (PyObject *obj, PyObject *const *args, Py_ssize_t nargs)
{
  TrackerObject *self = (TrackerObject *)obj;
  if (nargs < 2 || nargs > 4)
    {
      PyErr_Format (PyExc_TypeError, "track takes 2 to 4 arguments (%zd given)", nargs);
      return NULL;
    }
  int category, is;
  PyObject *label = nargs > 2 && args[2] != Py_None ? args[2] : NULL;
  WickSpanId span = 0;
  if (!tracker_category (self, args[1], &category)
      || (label != NULL && arg_string (label, "label") == NULL)
      || !optional_span (nargs > 3 ? args[3] : NULL, &span) || !tracker_is_tensor (self, args[0], &is))
    return NULL;
  if (!is)
    Py_RETURN_NONE;
  EntryObject *e = NULL;
  int got = tracker_track_one (self, args[0], category, label, span, &e);
  if (got <= 0)
    return got < 0 ? NULL : Py_NewRef (Py_None);
  PyObject *sid = entry_sid (e);
  Py_DECREF ((PyObject *)e);
  return sid;
}

/* track_all (objects, category, span): track() of a tensor, or of each tensor
 * in a tuple or list (a module's inputs or outputs; not recursive). */
static PyObject *
tracker_track_all (PyObject *obj, PyObject *const *args, Py_ssize_t nargs)
{
  TrackerObject *self = (TrackerObject *)obj;
  if (nargs != 3)
    {
      PyErr_Format (PyExc_TypeError, "track_all takes 3 arguments (%zd given)", nargs);
      return NULL;
    }
  int category;
  WickSpanId span;
  if (!tracker_category (self, args[1], &category) || !optional_span (args[2], &span)
      || !tracker_track_objects (self, args[0], category, span))
    return NULL;
  Py_RETURN_NONE;
}

/* track_gradients (pairs, span): for each (label, parameter) whose .grad is
 * not None, track (grad, "gradient", label, span). */
static PyObject *
tracker_track_gradients (PyObject *obj, PyObject *const *args, Py_ssize_t nargs)
{
  TrackerObject *self = (TrackerObject *)obj;
  if (nargs != 2)
    {
      PyErr_Format (PyExc_TypeError, "track_gradients takes 2 arguments (%zd given)", nargs);
      return NULL;
    }
  WickSpanId span;
  if (!optional_span (args[1], &span))
    return NULL;
  PyObject *pairs = args[0];
  if (!PyList_Check (pairs))
    {
      PyErr_Format (PyExc_TypeError, "pairs must be a list, not %s", type_name (pairs));
      return NULL;
    }
  for (Py_ssize_t i = 0; i < PyList_Size (pairs); i++)
    {
      PyObject *pair = PyList_GetItem (pairs, i);
      if (pair == NULL)
        return NULL;
      if (!PyTuple_Check (pair) || PyTuple_Size (pair) != 2)
        {
          PyErr_Format (PyExc_TypeError, "pairs[%zd] must be a (label, parameter) tuple", i);
          return NULL;
        }
      Py_INCREF (pair);
      PyObject *label = PyTuple_GetItem (pair, 0);
      PyObject *grad = PyObject_GetAttr (PyTuple_GetItem (pair, 1), str_grad);
      int is = 0;
      bool ok = grad != NULL && arg_string (label, "label") != NULL
                && (grad == Py_None || tracker_is_tensor (self, grad, &is))
                && (!is || tracker_track_quiet (self, grad, WICK_CATEGORY_GRADIENT, label, span));
      Py_XDECREF (grad);
      Py_DECREF (pair);
      if (!ok)
        return NULL;
    }
  Py_RETURN_NONE;
}

/* forget (tensors): frees the storages of tensors that another owner records
 * from now (the weight store); the set of id() of the tensors it freed. */
static PyObject *
tracker_forget (PyObject *obj, PyObject *tensors)
{
  TrackerObject *self = (TrackerObject *)obj;
  PyObject *iter = PyObject_GetIter (tensors);
  if (iter == NULL)
    return NULL;
  PyObject *freed = PySet_New (NULL);
  PyObject *entries = PyList_New (0);
  PyObject *t;
  bool ok = freed != NULL && entries != NULL;
  while (ok && (t = PyIter_Next (iter)) != NULL)
    {
      PyObject *storage = tracker_storage (self, t);
      uint64_t address = 0;
      int got = storage != NULL ? tracker_data_ptr (storage, &address) : 0;
      Py_XDECREF (storage);
      EntryObject *e = got > 0 && address != 0 ? tracker_remove (self, address) : NULL;
      if (e != NULL)
        {
          PyObject *id = PyLong_FromVoidPtr (t);
          ok = id != NULL && PyList_Append (entries, (PyObject *)e) == 0 && PySet_Add (freed, id) == 0;
          Py_XDECREF (id);
          Py_DECREF ((PyObject *)e);
        }
      else
        ok = got >= 0 && !PyErr_Occurred ();
      Py_DECREF (t);
    }
  Py_DECREF (iter);
  ok = ok && !PyErr_Occurred ();
  for (Py_ssize_t i = 0; entries != NULL && i < PyList_Size (entries); i++)
    {
      EntryObject *e = (EntryObject *)PyList_GetItem (entries, i);
      e->tracker = NULL;
      Py_CLEAR (e->ref);
      tracker_record_memory (self, e, WICK_MEMORY_FREE, 0);
    }
  Py_XDECREF (entries);
  if (!ok)
    {
      Py_XDECREF (freed);
      return NULL;
    }
  return freed;
}

/* free_all (): frees every storage still live (at the end of the session),
 * oldest first. */
static PyObject *
tracker_free_all (PyObject *obj, PyObject *unused)
{
  TrackerObject *self = (TrackerObject *)obj;
  EntryObject *first = tracker_take_all (self);
  for (EntryObject *e = first; e != NULL; e = e->next)
    tracker_record_memory (self, e, WICK_MEMORY_FREE, 0);
  entries_release (first);
  Py_RETURN_NONE;
}

static PyObject *
tracker_get_live (PyObject *obj, void *closure)
{
  return PyLong_FromSize_t (((TrackerObject *)obj)->count);
}

static PyObject *
tracker_get_errors (PyObject *obj, void *closure)
{
  return PyLong_FromUnsignedLongLong (((TrackerObject *)obj)->errors);
}

static PyMethodDef tracker_methods[] = {
  { "track", (PyCFunction)(void (*) (void))tracker_track, METH_FASTCALL,
    "track(tensor, category, label=None, span=None) -> the storage's id or None" },
  { "track_all", (PyCFunction)(void (*) (void))tracker_track_all, METH_FASTCALL,
    "track_all(tensor_tuple_or_list, category, span)" },
  { "track_gradients", (PyCFunction)(void (*) (void))tracker_track_gradients, METH_FASTCALL,
    "track_gradients([(label, parameter), ...], span)" },
  { "forget", tracker_forget, METH_O, "forget(tensors) -> {id(tensor) freed}" },
  { "free_all", tracker_free_all, METH_NOARGS, "free_all(): a free for every live storage" },
  { NULL }
};

static PyGetSetDef tracker_getset[] = {
  { "live", tracker_get_live, NULL, "how many storages are live (alloc recorded, no free)", NULL },
  { "errors", tracker_get_errors, NULL, "records libwick refused", NULL },
  { NULL }
};

static PyType_Slot tracker_slots[] = {
  { Py_tp_new, tracker_new },
  { Py_tp_dealloc, tracker_dealloc },
  { Py_tp_methods, tracker_methods },
  { Py_tp_getset, tracker_getset },
  { Py_tp_doc, "wick.torch's storages and their memory records." },
  { 0, NULL },
};

static PyType_Spec tracker_spec = {
  "wick._wick._Tracker", sizeof (TrackerObject), 0, Py_TPFLAGS_DEFAULT, tracker_slots,
};

static int
tracker_init_strings (void)
{
  return (str_data_ptr = PyUnicode_InternFromString ("data_ptr")) != NULL
             && (str_nbytes = PyUnicode_InternFromString ("nbytes")) != NULL
             && (str_shape = PyUnicode_InternFromString ("shape")) != NULL
             && (str_dtype = PyUnicode_InternFromString ("dtype")) != NULL
             && (str_device = PyUnicode_InternFromString ("device")) != NULL
             && (str_requires_grad = PyUnicode_InternFromString ("requires_grad")) != NULL
             && (str_grad = PyUnicode_InternFromString ("grad")) != NULL
           ? 0
           : -1;
}


/* ------------------------------------------------------------------------ */
/* Span: a reusable context manager over span_begin/span_end. Entering it
 * twice before leaving nests (up to SPAN_DEPTH ids are kept). */

#define SPAN_DEPTH 8

typedef struct
{
  PyObject_HEAD SessionObject *session;
  PyObject *name; /* a str without NUL characters */
  int kind, step;
  int depth;
  bool from_alloc; /* made by span_alloc (PyObject_New): may go to span_free_list */
  WickString handle; /* the name's in the session, 0: looked up when entered */
  WickSpanId ids[SPAN_DEPTH];
  unsigned long threads[SPAN_DEPTH]; /* the thread that began each (PyThread_get_thread_ident) */
  WickThreadHandle *handles[SPAN_DEPTH]; /* that thread's handle in the session */
} SpanObject;

static PyObject *
span_new (PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
  static char *kwlist[] = { "session", "name", "kind", "step", NULL };
  PyObject *session, *name, *kind = NULL, *step = Py_None;
  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "O!O|OO:Span", kwlist,
                                    (PyTypeObject *)SessionType, &session, &name, &kind, &step))
    return NULL;
  const char *text = arg_string (name, "name");
  int k = WICK_SPAN_FUNCTION, s = WICK_STEP_NONE;
  if (text == NULL || (kind != NULL && kind != Py_None && !arg_enum (kind, span_kinds, "kind", &k))
      || (step != Py_None && !arg_enum (step, steps, "step", &s)))
    return NULL;
  SpanObject *self = (SpanObject *)PyType_GenericAlloc (type, 0);
  if (self == NULL)
    return NULL;
  self->session = (SessionObject *)Py_NewRef (session);
  self->name = Py_NewRef (name);
  self->kind = k;
  self->step = s;
  return (PyObject *)self;
}

static PyObject *span_decorator; /* wick._decorate (span, fn), set by the package */

/* Span objects that session.span() made and that were freed, kept for the
 * next (a span in a `with` is made and freed once per use): no allocator
 * call a span. A kept object keeps its reference to the type, so taking it
 * back is setting its count. Only the GIL's holder touches it. */
#define SPAN_FREE_MAX 16
static SpanObject *span_free_list[SPAN_FREE_MAX];
static int span_free_count;

static inline SpanObject *
span_alloc (void)
{
  if (__builtin_expect (span_free_count > 0, 1))
    {
      SpanObject *self = span_free_list[--span_free_count];
      Py_SET_REFCNT ((PyObject *)self, 1);
      return self;
    }
  return PyObject_New (SpanObject, (PyTypeObject *)SpanType);
}

/* A Span of session named name (checked), its handle (0: looked up when
 * entered), kind and step. */
static inline PyObject *
span_fill (SessionObject *session, PyObject *name, WickString handle, int kind, int step)
{
  SpanObject *self = span_alloc ();
  if (self == NULL)
    return NULL;
  self->session = (SessionObject *)Py_NewRef ((PyObject *)session);
  self->name = Py_NewRef (name);
  self->kind = kind;
  self->step = step;
  self->depth = 0;
  self->from_alloc = true;
  self->handle = handle;
  return (PyObject *)self;
}

/* The slot of session's name cache that name would be in. */
static inline NameCacheSlot *
name_cache_slot (SessionObject *session, PyObject *name)
{
  return &session->names[((uintptr_t)name >> 4) & (NAME_CACHE_SLOTS - 1)];
}

static PyObject *
span_make (SessionObject *session, PyObject *name, PyObject *kind, PyObject *step)
{
  /* a name in the session's cache was checked when it went in, and its
   * handle is the session's for as long as the session is open */
  NameCacheSlot *slot = name_cache_slot (session, name);
  WickString handle = slot->name == name ? slot->handle : 0;
  int k = WICK_SPAN_FUNCTION, s = WICK_STEP_NONE;
  if ((handle == 0 && arg_string (name, "name") == NULL)
      || (kind != NULL && kind != Py_None && !arg_enum (kind, span_kinds, "kind", &k))
      || (step != NULL && step != Py_None && !arg_enum (step, steps, "step", &s)))
    return NULL;
  return span_fill (session, name, handle, k, s);
}

static __attribute__ ((noinline)) PyObject *
session_span_general (PyObject *obj, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);

static PyObject *
session_span (PyObject *obj, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
  /* span(name) of a name in the cache: the usual call */
  if (__builtin_expect (nargs == 1 && kwnames == NULL, 1))
    {
      SessionObject *session = (SessionObject *)obj;
      NameCacheSlot *slot = name_cache_slot (session, args[0]);
      if (slot->name == args[0])
        return span_fill (session, args[0], slot->handle, WICK_SPAN_FUNCTION, WICK_STEP_NONE);
    }
  return session_span_general (obj, args, nargs, kwnames);
}

static PyObject *
session_span_general (PyObject *obj, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
  PyObject *values[3] = { NULL, NULL, NULL };
  static const char *const names[3] = { "name", "kind", "step" };
  if (nargs > 3)
    {
      PyErr_SetString (PyExc_TypeError, "span() takes at most 3 arguments (name, kind, step)");
      return NULL;
    }
  for (Py_ssize_t i = 0; i < nargs; i++)
    values[i] = args[i];
  Py_ssize_t n_kw = kwnames != NULL ? PyTuple_Size (kwnames) : 0;
  for (Py_ssize_t i = 0; i < n_kw; i++)
    {
      PyObject *key = PyTuple_GetItem (kwnames, i);
      int which = -1;
      for (int j = 0; j < 3; j++)
        if (PyUnicode_CompareWithASCIIString (key, names[j]) == 0)
          which = j;
      if (which < 0 || values[which] != NULL)
        {
          PyErr_Format (PyExc_TypeError, "span() got %s keyword argument '%U'",
                        which < 0 ? "an unexpected" : "a repeated", key);
          return NULL;
        }
      values[which] = args[nargs + i];
    }
  if (values[0] == NULL)
    {
      PyErr_SetString (PyExc_TypeError, "span() missing its name");
      return NULL;
    }
  return span_make ((SessionObject *)obj, values[0], values[1], values[2]);
}

static PyObject *
span_call (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  PyObject *fn;
  if (kwargs != NULL || !PyArg_ParseTuple (args, "O:Span", &fn) || !PyCallable_Check (fn))
    {
      PyErr_Clear ();
      PyErr_SetString (PyExc_TypeError, "a Span decorates one callable: @session.span(name)");
      return NULL;
    }
  if (span_decorator == NULL)
    {
      PyErr_SetString (PyExc_RuntimeError, "wick._wick: the span decorator is not installed");
      return NULL;
    }
  return PyObject_CallFunctionObjArgs (span_decorator, obj, fn, NULL);
}

static PyObject *
mod_set_span_decorator (PyObject *module, PyObject *fn)
{
  PyObject *old = span_decorator;
  span_decorator = Py_NewRef (fn);
  Py_XDECREF (old);
  Py_RETURN_NONE;
}

static void
span_dealloc (PyObject *obj)
{
  SpanObject *self = (SpanObject *)obj;
  PyTypeObject *type = Py_TYPE (obj);
  Py_XDECREF ((PyObject *)self->session);
  Py_XDECREF (self->name);
  /* only spans of the exact type, allocated by PyObject_New (span_alloc:
   * Span() from Python is a GenericAlloc'ed object, not kept) */
  if (type == (PyTypeObject *)SpanType && self->from_alloc && span_free_count < SPAN_FREE_MAX)
    {
      span_free_list[span_free_count++] = self; /* with its type reference */
      return;
    }
  freefunc tp_free = (freefunc)PyType_GetSlot (type, Py_tp_free);
  tp_free (obj);
  Py_DECREF (type);
}

static PyObject *
span_enter (PyObject *obj, PyObject *unused)
{
  SpanObject *self = (SpanObject *)obj;
  SessionObject *session = self->session;
  if (__builtin_expect (session->session == NULL || wick_session_is_finished (session->session), 0))
    {
      session_check (session, "span"); /* sets the error */
      return NULL;
    }
  if (self->depth == SPAN_DEPTH)
    {
      PyErr_Format (WickErrorType, "span '%U' is entered %d times without leaving", self->name,
                    SPAN_DEPTH);
      return NULL;
    }
  WickString name = self->handle;
  if (name == 0)
    {
      if (!session_name_handle (session, self->name, &name))
        return NULL;
      self->handle = name;
    }
  ThreadCache *cache = session_thread_cache (session);
  int depth = self->depth++;
  self->handles[depth] = cache->thread;
  self->threads[depth] = cache->ident;
  self->ids[depth]
    = wick_span_begin_on (cache->thread, name, (WickSpanKind)self->kind, (WickStep)self->step);
  return Py_NewRef (obj);
}

static PyObject *
span_exit (PyObject *obj, PyObject *const *args, Py_ssize_t nargs)
{
  SpanObject *self = (SpanObject *)obj;
  if (self->depth == 0)
    {
      PyErr_Format (WickErrorType, "span '%U' is left without being entered", self->name);
      return NULL;
    }
  WickSpanId id = self->ids[--self->depth];
  /* a finished session keeps its spans open: nothing to end */
  if (self->session->session == NULL || wick_session_is_finished (self->session->session))
    Py_RETURN_FALSE;
  /* the handle it began on, when this is that thread (the session is the
   * same open one: no thread-local read) */
  unsigned long began = self->threads[self->depth], here = PyThread_get_thread_ident ();
  WickThreadHandle *thread = self->handles[self->depth];
  if (began != here)
    {
      /* libwick keeps a stack per thread: this thread's has no such span;
       * libwick counts and records the attempt (the trace's terminal says it) */
      WickError error = { "" };
      wick_span_end_checked (self->session->session, id, &error);
      PyErr_Format (WickErrorType,
                    "span '%U' was begun on thread %lu and cannot be ended on thread %lu: a "
                    "span ends on the thread that began it (it stays open there)",
                    self->name, began, here);
      return NULL;
    }
  wick_span_end_on (thread, id);
  Py_RETURN_FALSE;
}

static PyObject *
span_get_id (PyObject *obj, void *closure)
{
  SpanObject *self = (SpanObject *)obj;
  return PyLong_FromUnsignedLongLong (self->depth > 0 ? self->ids[self->depth - 1] : 0);
}

static PyObject *
span_get_name (PyObject *obj, void *closure)
{
  return Py_NewRef (((SpanObject *)obj)->name);
}

static PyObject *
span_get_kind (PyObject *obj, void *closure)
{
  return PyUnicode_FromString (enum_name (span_kinds, ((SpanObject *)obj)->kind));
}

static PyObject *
span_get_step (PyObject *obj, void *closure)
{
  int step = ((SpanObject *)obj)->step;
  return step == WICK_STEP_NONE ? Py_NewRef (Py_None) : PyUnicode_FromString (enum_name (steps, step));
}

static PyObject *
span_get_session (PyObject *obj, void *closure)
{
  return Py_NewRef ((PyObject *)((SpanObject *)obj)->session);
}

/* Span.__enter__ and Span.__exit__. A `with` statement looks both up on
 * every use, and a method of tp_methods binds to a new builtin method object
 * each time (a GC-tracked allocation, its free and its call wrapper: more
 * than half the cost of a span from Python). These descriptors bind to a
 * SpanMethod from a free list instead, called by vectorcall; it holds its
 * span as a bound method does (`m = span.__enter__` works later), and the
 * descriptors are callable unbound (`Span.__exit__(span, None, None, None)`,
 * as contextlib.ExitStack calls it). */

/* The vectorcall protocol is in the limited API from 3.12; the 3.11
 * interpreter implements it the same (PEP 590), so these are its values. */
#ifndef PY_VECTORCALL_ARGUMENTS_OFFSET
#define PY_VECTORCALL_ARGUMENTS_OFFSET ((size_t)1 << (8 * sizeof (size_t) - 1))
typedef PyObject *(*vectorcallfunc) (PyObject *callable, PyObject *const *args, size_t nargsf,
                                     PyObject *kwnames);
#endif
#ifndef Py_TPFLAGS_HAVE_VECTORCALL
#define Py_TPFLAGS_HAVE_VECTORCALL (1UL << 11)
#endif

static PyObject *SpanMethodType;      /* bound: a span's __enter__ or __exit__ */
static PyObject *SpanDescriptorType;  /* Span.__enter__, Span.__exit__ */

typedef struct
{
  PyObject_HEAD vectorcallfunc vectorcall;
  SpanObject *span; /* held; NULL while kept in span_method_free_list */
  bool exit;
} SpanMethodObject;

typedef struct
{
  PyObject_HEAD bool exit;
} SpanDescriptorObject;

/* SpanMethod objects freed, kept for the next binding with their type
 * reference (one is alive per open `with` for its __exit__). Only the GIL's
 * holder touches it. */
#define SPAN_METHOD_FREE_MAX 32
static SpanMethodObject *span_method_free_list[SPAN_METHOD_FREE_MAX];
static int span_method_free_count;

/* __enter__ (no arguments) or __exit__ (any, as its METH_FASTCALL method took
 * them) of span, with the arguments after the span's */
static PyObject *
span_method_run (bool exit, PyObject *span, PyObject *const *args, Py_ssize_t nargs,
                 PyObject *kwnames)
{
  if (kwnames != NULL && PyTuple_Size (kwnames) > 0)
    {
      PyErr_Format (PyExc_TypeError, "Span.%s() takes no keyword arguments",
                    exit ? "__exit__" : "__enter__");
      return NULL;
    }
  if (exit)
    return span_exit (span, args, nargs);
  if (nargs != 0)
    {
      PyErr_Format (PyExc_TypeError, "Span.__enter__() takes no arguments (%zd given)", nargs);
      return NULL;
    }
  return span_enter (span, NULL);
}

static PyObject *
span_method_vectorcall (PyObject *obj, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
  SpanMethodObject *self = (SpanMethodObject *)obj;
  Py_ssize_t nargs = (Py_ssize_t)(nargsf & ~PY_VECTORCALL_ARGUMENTS_OFFSET);
  if (__builtin_expect (kwnames == NULL, 1))
    {
      if (self->exit)
        return span_exit ((PyObject *)self->span, args, nargs);
      if (nargs == 0)
        return span_enter ((PyObject *)self->span, NULL);
    }
  return span_method_run (self->exit, (PyObject *)self->span, args, nargs, kwnames);
}

/* args (a tuple) as a vector, for the calls of Span.__enter__/__exit__
 * (@exit) that do not come by vectorcall; no method of a Span takes
 * keywords. False with the error set. */
#define SPAN_CALL_MAX_ARGS 8

static bool
span_call_vector (PyObject *args, PyObject *kwargs, bool exit, PyObject **vector,
                  Py_ssize_t *nargs)
{
  if (kwargs != NULL && PyDict_Size (kwargs) > 0)
    {
      PyErr_Format (PyExc_TypeError, "Span.%s() takes no keyword arguments",
                    exit ? "__exit__" : "__enter__");
      return false;
    }
  *nargs = PyTuple_Size (args);
  if (*nargs < 0 || *nargs > SPAN_CALL_MAX_ARGS)
    {
      if (!PyErr_Occurred ())
        PyErr_Format (PyExc_TypeError, "a Span's method takes at most %d arguments",
                      SPAN_CALL_MAX_ARGS);
      return false;
    }
  for (Py_ssize_t i = 0; i < *nargs; i++)
    vector[i] = PyTuple_GetItem (args, i);
  return true;
}

static PyObject *
span_method_call (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  SpanMethodObject *self = (SpanMethodObject *)obj;
  PyObject *vector[SPAN_CALL_MAX_ARGS];
  Py_ssize_t nargs;
  if (!span_call_vector (args, kwargs, self->exit, vector, &nargs))
    return NULL;
  return span_method_run (self->exit, (PyObject *)self->span, vector, nargs, NULL);
}

static void
span_method_dealloc (PyObject *obj)
{
  SpanMethodObject *self = (SpanMethodObject *)obj;
  SpanObject *span = self->span;
  self->span = NULL;
  if (span_method_free_count < SPAN_METHOD_FREE_MAX)
    span_method_free_list[span_method_free_count++] = self; /* with its type reference */
  else
    {
      PyTypeObject *type = Py_TYPE (obj);
      freefunc tp_free = (freefunc)PyType_GetSlot (type, Py_tp_free);
      tp_free (obj);
      Py_DECREF (type);
    }
  Py_XDECREF ((PyObject *)span);
}

static PyObject *
span_method_repr (PyObject *obj)
{
  SpanMethodObject *self = (SpanMethodObject *)obj;
  return PyUnicode_FromFormat ("<bound method Span.%s of %R>",
                               self->exit ? "__exit__" : "__enter__", (PyObject *)self->span);
}

static PyObject *
span_method_get_self (PyObject *obj, void *closure)
{
  return Py_NewRef ((PyObject *)((SpanMethodObject *)obj)->span);
}

static PyObject *
span_method_get_name (PyObject *obj, void *closure)
{
  return PyUnicode_FromString (((SpanMethodObject *)obj)->exit ? "__exit__" : "__enter__");
}

static PyGetSetDef span_method_getset[] = {
  { "__self__", span_method_get_self, NULL, NULL, NULL },
  { "__name__", span_method_get_name, NULL, NULL, NULL },
  { NULL }
};

static PyMemberDef span_method_members[] = {
  { "__vectorcalloffset__", T_PYSSIZET, offsetof (SpanMethodObject, vectorcall), READONLY, NULL },
  { NULL }
};

static PyType_Slot span_method_slots[] = {
  { Py_tp_call, span_method_call },
  { Py_tp_dealloc, span_method_dealloc },
  { Py_tp_repr, span_method_repr },
  { Py_tp_getset, span_method_getset },
  { Py_tp_members, span_method_members },
  { 0, NULL },
};

static PyType_Spec span_method_spec = {
  "wick._wick.SpanMethod", sizeof (SpanMethodObject), 0,
  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL, span_method_slots,
};

static PyObject *
span_descriptor_get (PyObject *obj, PyObject *instance, PyObject *owner)
{
  SpanDescriptorObject *descriptor = (SpanDescriptorObject *)obj;
  if (instance == NULL)
    return Py_NewRef (obj);
  if (!PyObject_TypeCheck (instance, (PyTypeObject *)SpanType))
    {
      PyErr_Format (PyExc_TypeError,
                    "descriptor '%s' for 'wick._wick.Span' objects doesn't apply to a '%s' object",
                    descriptor->exit ? "__exit__" : "__enter__", type_name (instance));
      return NULL;
    }
  SpanMethodObject *self;
  if (__builtin_expect (span_method_free_count > 0, 1))
    {
      self = span_method_free_list[--span_method_free_count];
      Py_SET_REFCNT ((PyObject *)self, 1);
    }
  else
    {
      self = PyObject_New (SpanMethodObject, (PyTypeObject *)SpanMethodType);
      if (self == NULL)
        return NULL;
      self->vectorcall = span_method_vectorcall;
    }
  self->span = (SpanObject *)Py_NewRef (instance);
  self->exit = descriptor->exit;
  return (PyObject *)self;
}

/* Span.__enter__(span) / Span.__exit__(span, ...) */
static PyObject *
span_descriptor_call (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  SpanDescriptorObject *descriptor = (SpanDescriptorObject *)obj;
  const char *name = descriptor->exit ? "__exit__" : "__enter__";
  PyObject *vector[SPAN_CALL_MAX_ARGS];
  Py_ssize_t nargs;
  if (!span_call_vector (args, kwargs, descriptor->exit, vector, &nargs))
    return NULL;
  if (nargs < 1)
    {
      PyErr_Format (PyExc_TypeError, "unbound method Span.%s() needs an argument", name);
      return NULL;
    }
  if (!PyObject_TypeCheck (vector[0], (PyTypeObject *)SpanType))
    {
      PyErr_Format (PyExc_TypeError,
                    "descriptor '%s' for 'wick._wick.Span' objects doesn't apply to a '%s' object",
                    name, type_name (vector[0]));
      return NULL;
    }
  return span_method_run (descriptor->exit, vector[0], vector + 1, nargs - 1, NULL);
}

static PyObject *
span_descriptor_repr (PyObject *obj)
{
  return PyUnicode_FromFormat ("<method '%s' of 'wick._wick.Span' objects>",
                               ((SpanDescriptorObject *)obj)->exit ? "__exit__" : "__enter__");
}

static PyType_Slot span_descriptor_slots[] = {
  { Py_tp_descr_get, span_descriptor_get },
  { Py_tp_call, span_descriptor_call },
  { Py_tp_repr, span_descriptor_repr },
  { 0, NULL },
};

static PyType_Spec span_descriptor_spec = {
  "wick._wick.SpanDescriptor", sizeof (SpanDescriptorObject), 0, Py_TPFLAGS_DEFAULT,
  span_descriptor_slots,
};

/* Span.__enter__ and Span.__exit__ as SpanDescriptors (after the types) */
static int
span_add_methods (void)
{
  for (int exit = 0; exit < 2; exit++)
    {
      SpanDescriptorObject *descriptor
        = PyObject_New (SpanDescriptorObject, (PyTypeObject *)SpanDescriptorType);
      if (descriptor == NULL)
        return -1;
      descriptor->exit = exit;
      int rc = PyObject_SetAttrString (SpanType, exit ? "__exit__" : "__enter__",
                                       (PyObject *)descriptor);
      Py_DECREF (descriptor);
      if (rc < 0)
        return -1;
    }
  return 0;
}

static PyGetSetDef span_getset[] = {
  { "id", span_get_id, NULL, "The N of sN while entered, 0 otherwise.", NULL },
  { "name", span_get_name, NULL, NULL, NULL },
  { "kind", span_get_kind, NULL, NULL, NULL },
  { "step", span_get_step, NULL, NULL, NULL },
  { "session", span_get_session, NULL, NULL, NULL },
  { NULL }
};

static PyType_Slot span_slots[] = {
  { Py_tp_new, span_new },
  { Py_tp_call, span_call },
  { Py_tp_dealloc, span_dealloc },
  { Py_tp_getset, span_getset },
  { Py_tp_doc, "Span(session, name, kind='function', step=None): a span as a context manager." },
  { 0, NULL },
};

static PyType_Spec span_spec = {
  "wick._wick.Span", sizeof (SpanObject), 0, Py_TPFLAGS_DEFAULT, span_slots,
};

/* ------------------------------------------------------------------------ */
/* Memory and files */

static PyObject *
mod_alloc_host (PyObject *module, PyObject *arg)
{
  uint64_t bytes;
  if (!arg_u64 (arg, "bytes", &bytes))
    return NULL;
  WickError error = { "" };
  void *p = wick_weight_alloc_host (bytes, &error);
  return p != NULL ? PyLong_FromUnsignedLongLong ((uintptr_t)p) : raise_wick (&error);
}

static PyObject *
mod_free_host (PyObject *module, PyObject *arg)
{
  uint64_t address;
  if (!arg_u64 (arg, "address", &address))
    return NULL;
  WickError error = { "" };
  return record_result (wick_weight_free_host ((void *)(uintptr_t)address, &error), &error);
}

static PyObject *
mod_alloc_device (PyObject *module, PyObject *arg)
{
  uint64_t bytes;
  if (!arg_u64 (arg, "bytes", &bytes))
    return NULL;
  WickError error = { "" };
  void *p;
  Py_BEGIN_ALLOW_THREADS p = wick_weight_alloc_device (bytes, &error);
  Py_END_ALLOW_THREADS return p != NULL ? PyLong_FromUnsignedLongLong ((uintptr_t)p)
                                        : raise_wick (&error);
}

static PyObject *
mod_free_device (PyObject *module, PyObject *arg)
{
  uint64_t address;
  if (!arg_u64 (arg, "address", &address))
    return NULL;
  WickError error = { "" };
  return record_result (wick_weight_free_device ((void *)(uintptr_t)address, &error), &error);
}

static PyObject *
mod_safetensors_write (PyObject *module, PyObject *args, PyObject *kwargs)
{
  static char *kwlist[] = { "path", "tensors", "memory", "metadata", NULL };
  const char *path;
  PyObject *tensors, *memory, *metadata = Py_None;
  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "sOO|O:safetensors_write", kwlist, &path,
                                    &tensors, &memory, &metadata))
    return NULL;
  int mem;
  if (!arg_enum (memory, memories, "memory", &mem))
    return NULL;
  PyObject *list = PySequence_List (tensors);
  if (list == NULL)
    return NULL;
  Py_ssize_t n = PyList_Size (list);
  WickWeightParam *p = PyMem_Calloc ((size_t)n + 1, sizeof *p);
  uint64_t(*dims)[MAX_RANK] = PyMem_Calloc ((size_t)n + 1, sizeof *dims);
  WickTag tags[MAX_ITEMS];
  size_t n_tags = 0;
  bool ok = true;
  for (Py_ssize_t i = 0; ok && i < n; i++)
    {
      PyObject *item = PyList_GetItem (list, i);
      if (!PyTuple_Check (item) || PyTuple_Size (item) != 4)
        {
          PyErr_Format (PyExc_TypeError, "tensors[%zd] must be (name, address, dtype, shape)", i);
          ok = false;
          break;
        }
      char what[64];
      uint64_t address;
      size_t rank;
      snprintf (what, sizeof what, "tensors[%zd].name", i);
      ok = (p[i].name = arg_string (PyTuple_GetItem (item, 0), what)) != NULL;
      snprintf (what, sizeof what, "tensors[%zd].address", i);
      ok = ok && arg_u64 (PyTuple_GetItem (item, 1), what, &address);
      snprintf (what, sizeof what, "tensors[%zd].dtype", i);
      const char *dtype = ok ? arg_string (PyTuple_GetItem (item, 2), what) : NULL;
      WickWeightDtype d;
      if (dtype != NULL && !wick_weight_dtype_from_name (dtype, &d))
        {
          PyErr_Format (PyExc_ValueError, "%s: '%s' is not a safetensors dtype", what, dtype);
          dtype = NULL;
        }
      ok = dtype != NULL;
      snprintf (what, sizeof what, "tensors[%zd].shape", i);
      ok = ok && arg_shape (PyTuple_GetItem (item, 3), what, dims[i], &rank);
      if (ok && rank > WICK_WEIGHT_MAX_DIMS)
        {
          PyErr_Format (PyExc_ValueError, "%s: at most %d dimensions", what, WICK_WEIGHT_MAX_DIMS);
          ok = false;
        }
      if (ok)
        {
          p[i].data = (void *)(uintptr_t)address;
          p[i].dtype = d;
          p[i].shape = dims[i];
          p[i].n_dims = rank;
        }
    }
  if (ok && metadata != Py_None)
    {
      if (!PyDict_Check (metadata))
        {
          PyErr_SetString (PyExc_TypeError, "metadata must be a dict of str to str");
          ok = false;
        }
      Py_ssize_t pos = 0;
      PyObject *key, *value;
      while (ok && PyDict_Next (metadata, &pos, &key, &value) && n_tags < MAX_ITEMS)
        {
          ok = (tags[n_tags].key = arg_string (key, "metadata key")) != NULL
               && (tags[n_tags].value = arg_string (value, "metadata value")) != NULL;
          n_tags++;
        }
    }
  PyObject *result = NULL;
  if (ok)
    {
      WickError error = { "" };
      bool done;
      Py_BEGIN_ALLOW_THREADS done
        = wick_safetensors_write (path, p, (size_t)n, mem, tags, n_tags, &error);
      Py_END_ALLOW_THREADS result = record_result (done, &error);
    }
  PyMem_Free (p);
  PyMem_Free (dims);
  Py_DECREF (list);
  return result;
}

static PyObject *
mod_cuda_available (PyObject *module, PyObject *unused)
{
  WickError why = { "" };
  bool available = wick_cuda_available (&why);
  return Py_BuildValue ("(Os)", available ? Py_True : Py_False, available ? "" : why.message);
}

static PyObject *
mod_dense_bytes (PyObject *module, PyObject *args)
{
  PyObject *shape;
  const char *dtype;
  if (!PyArg_ParseTuple (args, "Os:dense_bytes", &shape, &dtype))
    return NULL;
  uint64_t dims[MAX_RANK], out;
  size_t rank;
  if (!arg_shape (shape, "shape", dims, &rank))
    return NULL;
  if (!wick_dense_bytes (dims, rank, dtype, &out))
    Py_RETURN_NONE;
  return PyLong_FromUnsignedLongLong (out);
}

/* The allocator torch.cuda.memory.CUDAPluggableAllocator loads from this
 * file (wick.torch.weights_pool): libwick's CUDA VMM allocations, which the
 * weight store can release and map again at the same address. */
__attribute__ ((visibility ("default"))) void *wick_torch_cuda_malloc (ssize_t size, int device,
                                                                      void *stream);
__attribute__ ((visibility ("default"))) void wick_torch_cuda_free (void *ptr, ssize_t size,
                                                                   int device, void *stream);

void *
wick_torch_cuda_malloc (ssize_t size, int device, void *stream)
{
  WickError error = { "" };
  void *p = wick_weight_alloc_device ((size_t)size, &error);
  if (p == NULL)
    fprintf (stderr, "wick.torch.weights_pool: %s\n", error.message);
  return p;
}

void
wick_torch_cuda_free (void *ptr, ssize_t size, int device, void *stream)
{
  WickError error = { "" };
  if (ptr != NULL && !wick_weight_free_device (ptr, &error))
    fprintf (stderr, "wick.torch.weights_pool: %s\n", error.message);
}

static PyMethodDef module_methods[] = {
  { "manifest_sha256", manifest_sha256, METH_O,
    "manifest_sha256(expected): the digest of [(root, key, family)] as libwick computes it." },
  { "alloc_host", mod_alloc_host, METH_O, "Page-aligned memory the weight store can release." },
  { "free_host", mod_free_host, METH_O, NULL },
  { "alloc_device", mod_alloc_device, METH_O, "CUDA VMM memory the weight store can release." },
  { "free_device", mod_free_device, METH_O, NULL },
  { "safetensors_write", KW (mod_safetensors_write), NULL },
  { "cuda_available", mod_cuda_available, METH_NOARGS, "(available, why_not)" },
  { "dense_bytes", mod_dense_bytes, METH_VARARGS, NULL },
  { "_set_span_decorator", mod_set_span_decorator, METH_O, NULL },
  { NULL }
};

static int
add_type (PyObject *module, PyType_Spec *spec, const char *name, PyObject **out)
{
  *out = PyType_FromSpec (spec);
  if (*out == NULL)
    return -1;
  return PyModule_AddObjectRef (module, name, *out);
}

/* ------------------------------------------------------------------------ */
/* ModuleCall: wick.torch's replacement of torch.nn.Module.__call__ while a
 * model is instrumented, one C call a module call instead of a Python frame.
 *
 * For a module in `spanned` ({module: span name}) while the session records
 * and `suspended` is 0: a span of kind module (the model's outermost call
 * with grad on and the session still the Python session's own is the step's
 * `forward`), pushed as (module, span id) on the calling thread's stack
 * (`local.stack`, a list the Python layer's _unwind reads too); the model's
 * positional inputs tracked as "other" when `memory`; then the original
 * __call__; then every output tracked as "activation" and the span ended.
 * A call that raises has `unwind(module, True)` end what it opened; spans of
 * submodules left above this one (a forward that caught their exception) end
 * through `unwind(module, False)`. Every other module call is the original's
 * alone. It is a method descriptor: the interpreter calls it with the module
 * first, as it calls a function. */

#define MODULE_CALL_MAX_ARGS 64

/* In the limited API from 3.12; 3.9 and later export it (PEP 590). */
#if defined(Py_LIMITED_API) && Py_LIMITED_API + 0 < 0x030C0000
PyAPI_FUNC (PyObject *)
  PyObject_Vectorcall (PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames);
#endif

typedef struct
{
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject *original, *spanned, *model, *session, *local, *unwind, *is_grad_enabled;
  SessionObject *raw;
  PyObject *tracker; /* a _Tracker (called in C), or an object with its track_all */
  bool native;       /* tracker is a _Tracker */
  uint64_t serial;   /* this object's number, for the thread's stack cache */
  int suspended;     /* suspended() blocks in progress */
  int memory;
} ModuleCallObject;

static PyObject *ModuleCallType;
static PyObject *method_type; /* types.MethodType, for a ModuleCall bound to a module */
static PyObject *str_forward, *str_stack, *str_s, *str_track_all, *str_other, *str_activation;
static uint64_t module_call_serials; /* the last serial given (under the GIL) */

/* The calling thread's stack list of the ModuleCall with this serial,
 * borrowed from its `local` (which keeps it for the thread's life: the
 * Python layer never replaces it). */
static __thread struct
{
  uint64_t serial;
  PyObject *stack;
} module_stack_cache;

static PyObject *
module_call_stack (ModuleCallObject *self)
{
  if (__builtin_expect (module_stack_cache.serial == self->serial, 1))
    return module_stack_cache.stack;
  PyObject *stack = PyObject_GetAttr (self->local, str_stack);
  if (stack == NULL)
    {
      if (!PyErr_ExceptionMatches (PyExc_AttributeError))
        return NULL;
      PyErr_Clear ();
      stack = PyList_New (0);
      if (stack == NULL || PyObject_SetAttr (self->local, str_stack, stack) < 0)
        {
          Py_XDECREF (stack);
          return NULL;
        }
    }
  if (!PyList_Check (stack))
    {
      PyErr_SetString (PyExc_TypeError, "wick.torch: the thread's module stack is not a list");
      Py_DECREF (stack);
      return NULL;
    }
  Py_DECREF (stack); /* the local holds it */
  module_stack_cache.serial = self->serial;
  module_stack_cache.stack = stack;
  return stack;
}

/* tracker.track_all (objects, category, id); false with the error set */
static bool
module_call_track (ModuleCallObject *self, PyObject *objects, int category, WickSpanId id)
{
  if (self->native)
    return tracker_track_objects ((TrackerObject *)self->tracker, objects, category, id);
  PyObject *id_object = PyLong_FromUnsignedLongLong (id);
  if (id_object == NULL)
    return false;
  PyObject *name = category == WICK_CATEGORY_OTHER ? str_other : str_activation;
  PyObject *r
    = PyObject_CallMethodObjArgs (self->tracker, str_track_all, objects, name, id_object, NULL);
  Py_DECREF (id_object);
  Py_XDECREF (r);
  return r != NULL;
}

/* The model's positional inputs (args after the module) tracked as "other" */
static bool
module_call_track_inputs (ModuleCallObject *self, PyObject *const *args, Py_ssize_t nargs,
                          WickSpanId id)
{
  if (self->native)
    {
      TrackerObject *tracker = (TrackerObject *)self->tracker;
      for (Py_ssize_t i = 1; i < nargs; i++)
        {
          int is;
          if (!tracker_is_tensor (tracker, args[i], &is)
              || (is && !tracker_track_quiet (tracker, args[i], WICK_CATEGORY_OTHER, NULL, id)))
            return false;
        }
      return true;
    }
  PyObject *inputs = PyTuple_New (nargs - 1);
  if (inputs == NULL)
    return false;
  for (Py_ssize_t i = 1; i < nargs; i++)
    PyTuple_SetItem (inputs, i - 1, Py_NewRef (args[i]));
  bool ok = module_call_track (self, inputs, WICK_CATEGORY_OTHER, id);
  Py_DECREF (inputs);
  return ok;
}

/* unwind(module, include): true when it returned True, false with no
 * error when it returned anything else, -1 with the error set. */
static int
module_call_unwind (ModuleCallObject *self, PyObject *module, bool include)
{
  PyObject *r
    = PyObject_CallFunctionObjArgs (self->unwind, module, include ? Py_True : Py_False, NULL);
  if (r == NULL)
    return -1;
  int found = r == Py_True;
  Py_DECREF (r);
  return found;
}

/* The original call raised: unwind with the exception kept, a new one from
 * unwind chained to it as its context. Returns NULL. */
static PyObject *
module_call_raised (ModuleCallObject *self, PyObject *module)
{
  PyObject *type, *value, *traceback;
  PyErr_Fetch (&type, &value, &traceback);
  if (module_call_unwind (self, module, true) >= 0)
    {
      PyErr_Restore (type, value, traceback);
      return NULL;
    }
  PyObject *type2, *value2, *traceback2;
  PyErr_Fetch (&type2, &value2, &traceback2);
  PyErr_NormalizeException (&type, &value, &traceback);
  PyErr_NormalizeException (&type2, &value2, &traceback2);
  if (value != NULL && traceback != NULL)
    PyException_SetTraceback (value, traceback);
  if (value2 != NULL && value != NULL)
    PyException_SetContext (value2, value); /* steals value */
  else
    Py_XDECREF (value);
  Py_XDECREF (type);
  Py_XDECREF (traceback);
  PyErr_Restore (type2, value2, traceback2);
  return NULL;
}

static bool
module_call_recording (ModuleCallObject *self)
{
  return self->suspended == 0 && self->raw->session != NULL
         && !wick_session_is_finished (self->raw->session);
}

/* The span a call of module (named name) opens: 0 with the error set when
 * it failed. */
static WickSpanId
module_call_begin (ModuleCallObject *self, PyObject *module, PyObject *name, PyObject *stack)
{
  WickStep step = WICK_STEP_NONE;
  if (module == self->model && PyList_Size (stack) == 0)
    {
      PyObject *grad = PyObject_CallNoArgs (self->is_grad_enabled);
      if (grad == NULL)
        return 0;
      int on = PyObject_IsTrue (grad);
      Py_DECREF (grad);
      if (on < 0)
        return 0;
      if (on)
        {
          PyObject *current = PyObject_GetAttr (self->session, str_s);
          if (current == NULL)
            return 0;
          if (current == (PyObject *)self->raw)
            {
              name = str_forward;
              step = WICK_STEP_FORWARD;
            }
          Py_DECREF (current);
        }
    }
  WickString handle;
  if (!session_check (self->raw, "span") || !session_name_handle (self->raw, name, &handle))
    return 0;
  WickSpanId id = wick_span_begin_on (session_thread (self->raw), handle, WICK_SPAN_MODULE, step);
  PyObject *id_object = PyLong_FromUnsignedLongLong (id);
  PyObject *entry = id_object != NULL ? PyTuple_Pack (2, module, id_object) : NULL;
  Py_XDECREF (id_object);
  int appended = entry != NULL ? PyList_Append (stack, entry) : -1;
  Py_XDECREF (entry);
  return appended < 0 ? 0 : (id != 0 ? id : 1);
}

/* After the original call returned output: this call's entry off the
 * stack, the outputs tracked, its span ended. False with the error set. */
static bool
module_call_end (ModuleCallObject *self, PyObject *module, PyObject *stack, PyObject *output)
{
  Py_ssize_t n = PyList_Size (stack);
  if (n <= 0)
    return n == 0;
  PyObject *top = PyList_GetItem (stack, n - 1);
  PyObject *owner = top != NULL && PyTuple_Check (top) ? PyTuple_GetItem (top, 0) : NULL;
  if (owner != module)
    {
      int found = module_call_unwind (self, module, false);
      if (found <= 0)
        return found == 0;
      n = PyList_Size (stack);
      if (n <= 0)
        return n == 0;
    }
  PyObject *entry = PyList_GetItem (stack, n - 1);
  if (entry == NULL)
    return false;
  Py_INCREF (entry);
  if (PyList_SetSlice (stack, n - 1, n, NULL) < 0)
    {
      Py_DECREF (entry);
      return false;
    }
  PyObject *id_object = PyTuple_Check (entry) ? PyTuple_GetItem (entry, 1) : NULL;
  unsigned long long id = id_object != NULL ? PyLong_AsUnsignedLongLong (id_object) : 0;
  Py_DECREF (entry);
  if (PyErr_Occurred ())
    return false;
  SessionObject *raw = self->raw;
  if (raw->session == NULL || wick_session_is_finished (raw->session))
    return true;
  if (self->memory && !module_call_track (self, output, WICK_CATEGORY_ACTIVATION, (WickSpanId)id))
    return false;
  if (raw->session == NULL)
    return true;
  WickError error;
  if (!wick_span_end_checked_on (session_thread (raw), id, &error)
      && error.code == WICK_ERROR_WRONG_THREAD)
    {
      raise_wick (&error);
      return false;
    }
  return true;
}

static PyObject *
module_call_vectorcall (PyObject *obj, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
  ModuleCallObject *self = (ModuleCallObject *)obj;
  Py_ssize_t nargs = (Py_ssize_t)(nargsf & ~PY_VECTORCALL_ARGUMENTS_OFFSET);
  if (nargs < 1)
    return PyObject_Vectorcall (self->original, args, nargsf, kwnames);
  PyObject *module = args[0];
  PyObject *name = PyDict_GetItemWithError (self->spanned, module);
  if (name == NULL && PyErr_Occurred ())
    return NULL;
  if (name == NULL || !module_call_recording (self))
    return PyObject_Vectorcall (self->original, args, nargsf, kwnames);
  Py_INCREF (name);
  PyObject *stack = module_call_stack (self);
  if (stack == NULL)
    {
      Py_DECREF (name);
      return NULL;
    }
  Py_INCREF (stack);
  WickSpanId id = module_call_begin (self, module, name, stack);
  Py_DECREF (name);
  if (id == 0)
    {
      Py_DECREF (stack);
      return NULL;
    }
  if (module == self->model && self->memory && !module_call_track_inputs (self, args, nargs, id))
    {
      Py_DECREF (stack);
      return NULL;
    }
  PyObject *output = PyObject_Vectorcall (self->original, args, nargsf, kwnames);
  if (output == NULL)
    {
      Py_DECREF (stack);
      return module_call_raised (self, module);
    }
  bool ended = module_call_end (self, module, stack, output);
  Py_DECREF (stack);
  if (!ended)
    Py_CLEAR (output);
  return output;
}

/* A call that did not come by vectorcall (Module.__call__(m, x) through
 * PyObject_Call): its arguments as a vector, at most MODULE_CALL_MAX_ARGS. */
static PyObject *
module_call_call (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  Py_ssize_t nargs = PyTuple_Size (args);
  Py_ssize_t nkw = kwargs != NULL ? PyDict_Size (kwargs) : 0;
  if (nargs < 0 || nkw < 0)
    return NULL;
  if (nargs + nkw > MODULE_CALL_MAX_ARGS)
    {
      PyErr_Format (PyExc_TypeError, "wick.torch: a module call takes at most %d arguments here",
                    MODULE_CALL_MAX_ARGS);
      return NULL;
    }
  PyObject *vector[MODULE_CALL_MAX_ARGS];
  for (Py_ssize_t i = 0; i < nargs; i++)
    vector[i] = PyTuple_GetItem (args, i);
  PyObject *kwnames = NULL;
  if (nkw > 0)
    {
      kwnames = PyTuple_New (nkw);
      if (kwnames == NULL)
        return NULL;
      Py_ssize_t pos = 0, i = 0;
      PyObject *key, *value;
      while (i < nkw && PyDict_Next (kwargs, &pos, &key, &value))
        {
          PyTuple_SetItem (kwnames, i, Py_NewRef (key));
          vector[nargs + i++] = value;
        }
    }
  PyObject *result = module_call_vectorcall (obj, vector, (size_t)nargs, kwnames);
  Py_XDECREF (kwnames);
  return result;
}

/* Module.__call__ is the ModuleCall; module.__call__ a method bound to it. */
static PyObject *
module_call_get (PyObject *obj, PyObject *instance, PyObject *owner)
{
  if (instance == NULL || instance == Py_None)
    return Py_NewRef (obj);
  return PyObject_CallFunctionObjArgs (method_type, obj, instance, NULL);
}

static PyObject *
module_call_new (PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
  static char *kwlist[] = { "original", "spanned", "model",           "session", "raw", "tracker",
                            "local",    "unwind",  "is_grad_enabled", "memory",  NULL };
  PyObject *original, *spanned, *model, *session, *raw, *tracker, *local, *unwind, *grad;
  int memory;
  if (!PyArg_ParseTupleAndKeywords (
        args, kwargs, "OO!OOO!OOOOp:_ModuleCall", kwlist, &original, &PyDict_Type, &spanned, &model,
        &session, (PyTypeObject *)SessionType, &raw, &tracker, &local, &unwind, &grad, &memory))
    return NULL;
  if (!PyCallable_Check (original) || !PyCallable_Check (unwind) || !PyCallable_Check (grad))
    {
      PyErr_SetString (PyExc_TypeError,
                       "_ModuleCall: original, unwind and is_grad_enabled must be callable");
      return NULL;
    }
  allocfunc alloc = (allocfunc)PyType_GetSlot (type, Py_tp_alloc);
  ModuleCallObject *self = (ModuleCallObject *)alloc (type, 0);
  if (self == NULL)
    return NULL;
  self->vectorcall = module_call_vectorcall;
  self->original = Py_NewRef (original);
  self->spanned = Py_NewRef (spanned);
  self->model = Py_NewRef (model);
  self->session = Py_NewRef (session);
  self->raw = (SessionObject *)Py_NewRef (raw);
  self->tracker = Py_NewRef (tracker);
  self->native = Py_IS_TYPE (tracker, (PyTypeObject *)TrackerType);
  self->local = Py_NewRef (local);
  self->unwind = Py_NewRef (unwind);
  self->is_grad_enabled = Py_NewRef (grad);
  self->memory = memory;
  self->serial = ++module_call_serials;
  return (PyObject *)self;
}

static int
module_call_traverse (PyObject *obj, visitproc visit, void *arg)
{
  ModuleCallObject *self = (ModuleCallObject *)obj;
  Py_VISIT (Py_TYPE (obj));
  Py_VISIT (self->original);
  Py_VISIT (self->spanned);
  Py_VISIT (self->model);
  Py_VISIT (self->session);
  Py_VISIT ((PyObject *)self->raw);
  Py_VISIT (self->tracker);
  Py_VISIT (self->local);
  Py_VISIT (self->unwind);
  Py_VISIT (self->is_grad_enabled);
  return 0;
}

static int
module_call_clear (PyObject *obj)
{
  ModuleCallObject *self = (ModuleCallObject *)obj;
  /* a cleared object records nothing (module_call_recording reads raw) */
  self->suspended = 1;
  Py_CLEAR (self->spanned);
  Py_CLEAR (self->model);
  Py_CLEAR (self->session);
  Py_CLEAR (self->local);
  Py_CLEAR (self->unwind);
  Py_CLEAR (self->is_grad_enabled);
  Py_CLEAR (self->tracker);
  return 0;
}

static void
module_call_dealloc (PyObject *obj)
{
  ModuleCallObject *self = (ModuleCallObject *)obj;
  PyTypeObject *type = Py_TYPE (obj);
  PyObject_GC_UnTrack (obj);
  module_call_clear (obj);
  Py_CLEAR (self->original);
  Py_CLEAR (self->raw);
  freefunc tp_free = (freefunc)PyType_GetSlot (type, Py_tp_free);
  tp_free (obj);
  Py_DECREF (type);
}

static PyMemberDef module_call_members[]
  = { { "__vectorcalloffset__", T_PYSSIZET, offsetof (ModuleCallObject, vectorcall), READONLY,
        NULL },
      { "suspended", T_INT, offsetof (ModuleCallObject, suspended), 0,
        "suspended() blocks in progress (module calls record nothing while > 0)" },
      { "memory", T_BOOL, offsetof (ModuleCallObject, memory), READONLY, NULL },
      { NULL } };

static PyType_Slot module_call_slots[] = {
  { Py_tp_new, module_call_new },
  { Py_tp_call, module_call_call },
  { Py_tp_descr_get, module_call_get },
  { Py_tp_traverse, module_call_traverse },
  { Py_tp_clear, module_call_clear },
  { Py_tp_dealloc, module_call_dealloc },
  { Py_tp_members, module_call_members },
  { Py_tp_doc, "wick.torch's torch.nn.Module.__call__ while a model is instrumented." },
  { 0, NULL },
};

static PyType_Spec module_call_spec = {
  "wick._wick._ModuleCall",
  sizeof (ModuleCallObject),
  0,
  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL
    | Py_TPFLAGS_METHOD_DESCRIPTOR,
  module_call_slots,
};

static int
module_call_init (PyObject *module)
{
  PyObject *types = PyImport_ImportModule ("types");
  if (types == NULL)
    return -1;
  method_type = PyObject_GetAttrString (types, "MethodType");
  Py_DECREF (types);
  if (method_type == NULL || (str_forward = PyUnicode_InternFromString ("forward")) == NULL
      || (str_stack = PyUnicode_InternFromString ("stack")) == NULL
      || (str_s = PyUnicode_InternFromString ("_s")) == NULL
      || (str_track_all = PyUnicode_InternFromString ("track_all")) == NULL
      || (str_other = PyUnicode_InternFromString ("other")) == NULL
      || (str_activation = PyUnicode_InternFromString ("activation")) == NULL)
    return -1;
  return add_type (module, &module_call_spec, "_ModuleCall", &ModuleCallType);
}

static struct PyModuleDef module_def = {
  PyModuleDef_HEAD_INIT, "_wick", "libwick for Python (the wick package's core).", -1,
  module_methods,
};

PyMODINIT_FUNC PyInit__wick (void);

PyMODINIT_FUNC
PyInit__wick (void)
{
  PyObject *module = PyModule_Create (&module_def);
  if (module == NULL)
    return NULL;
  WickErrorType = PyErr_NewExceptionWithDoc (
    "wick.Error", "A libwick call failed; the message is libwick's sentence.", NULL, NULL);
  if (WickErrorType == NULL || PyModule_AddObjectRef (module, "Error", WickErrorType) < 0
      || add_type (module, &session_spec, "Session", &SessionType) < 0
      || add_type (module, &span_spec, "Span", &SpanType) < 0
      || (SpanMethodType = PyType_FromSpec (&span_method_spec)) == NULL
      || (SpanDescriptorType = PyType_FromSpec (&span_descriptor_spec)) == NULL
      || span_add_methods () < 0
      || add_type (module, &contract_spec, "GradientContract", &ContractType) < 0
      || add_type (module, &plan_spec, "GradientCapturePlan", &PlanType) < 0
      || add_type (module, &stage_spec, "Stage", &StageType) < 0 || tracker_init_strings () < 0
      || add_type (module, &entry_spec, "_TrackedStorage", &EntryType) < 0
      || add_type (module, &tracker_spec, "_Tracker", &TrackerType) < 0
      || module_call_init (module) < 0
      || PyModule_AddIntConstant (module, "SPAN_FUNCTION", WICK_SPAN_FUNCTION) < 0
      || PyModule_AddIntConstant (module, "SPAN_OP", WICK_SPAN_OP) < 0
      || PyModule_AddIntConstant (module, "SPAN_MODULE", WICK_SPAN_MODULE) < 0
      || PyModule_AddIntConstant (module, "STEP_NONE", WICK_STEP_NONE) < 0
      || PyModule_AddIntConstant (module, "STEP_FORWARD", WICK_STEP_FORWARD) < 0
      || PyModule_AddIntConstant (module, "STEP_BACKWARD", WICK_STEP_BACKWARD) < 0
      || PyModule_AddIntConstant (module, "STEP_OPTIMIZER", WICK_STEP_OPTIMIZER) < 0)
    {
      Py_DECREF (module);
      return NULL;
    }
  return module;
}
