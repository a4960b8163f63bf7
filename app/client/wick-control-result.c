/* wick-control-result.c — typed control results (see the header). */
#include "config.h"

#include "wick-control-result.h"
#include "wick-control-result-private.h"

#include <math.h>
#include <string.h>

#include "wick-live-client.h"

static const char *const command_names[] = {
  [WICK_CONTROL_RESULT_LIST] = "list",       [WICK_CONTROL_RESULT_EVICT] = "evict",
  [WICK_CONTROL_RESULT_RESTORE] = "restore", [WICK_CONTROL_RESULT_RESTORE_ALL] = "restore-all",
  [WICK_CONTROL_RESULT_CAPTURE] = "capture", [WICK_CONTROL_RESULT_RELEASE] = "release",
  [WICK_CONTROL_RESULT_MARK] = "mark",
};

static const char *const where_names[] = {
  [WICK_CONTROL_WHERE_RESIDENT] = "resident",
  [WICK_CONTROL_WHERE_DISK] = "disk",
  [WICK_CONTROL_WHERE_RAM] = "ram",
  [WICK_CONTROL_WHERE_DISK_RAM] = "disk+ram",
};

static const char *const state_names[] = {
  [WICK_STAGE_EAGER] = "eager",
  [WICK_STAGE_CAPTURED] = "captured",
  [WICK_STAGE_REFUSED] = "refused",
};

const char *
wick_control_result_command_name (WickControlCommand command)
{
  return (guint)command < G_N_ELEMENTS (command_names) ? command_names[command] : "?";
}

const char *
wick_control_where_to_string (WickControlWhere where)
{
  return (guint)where < G_N_ELEMENTS (where_names) ? where_names[where] : "?";
}

const char *
wick_control_stage_state_to_string (WickStageState state)
{
  return (guint)state < G_N_ELEMENTS (state_names) ? state_names[state] : "?";
}

/* The reader of one reply: the first problem wins and names its member. */
typedef struct
{
  WickControlCommand command;
  GError **error;
  gboolean failed;
} Reader;

/* @prefix is "" at the top level, "modules[2]." inside a list element. */
static void G_GNUC_PRINTF (4, 5)
  fail (Reader *r, const char *prefix, const char *member, const char *format, ...)
{
  if (r->failed)
    return;
  r->failed = TRUE;
  va_list args;
  va_start (args, format);
  g_autofree char *what = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (r->error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
               "the %s reply's member \"%s%s\" %s", wick_control_result_command_name (r->command),
               prefix, member, what);
}

/* A short rendering of a bad value for the message. */
static char *
describe (JsonNode *node)
{
  if (JSON_NODE_HOLDS_NULL (node))
    return g_strdup ("null");
  if (JSON_NODE_HOLDS_OBJECT (node))
    return g_strdup ("an object");
  if (JSON_NODE_HOLDS_ARRAY (node))
    return g_strdup ("an array");
  g_autofree char *text = json_to_string (node, FALSE);
  if (g_utf8_strlen (text, -1) > 40)
    {
      char *cut = g_utf8_offset_to_pointer (text, 40);
      *cut = '\0';
      return g_strdup_printf ("%s…", text);
    }
  return g_steal_pointer (&text);
}

static JsonNode *
member (Reader *r, JsonObject *object, const char *prefix, const char *name, gboolean required)
{
  JsonNode *node = json_object_get_member (object, name);
  if (node == NULL && required)
    fail (r, prefix, name, "is missing");
  return node;
}

static char *
get_string (Reader *r, JsonObject *object, const char *prefix, const char *name, gboolean required)
{
  JsonNode *node = member (r, object, prefix, name, required);
  if (node == NULL)
    return NULL;
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    {
      g_autofree char *value = describe (node);
      fail (r, prefix, name, "must be a string, not %s", value);
      return NULL;
    }
  return g_strdup (json_node_get_string (node));
}

static gboolean
get_boolean (Reader *r, JsonObject *object, const char *prefix, const char *name)
{
  JsonNode *node = member (r, object, prefix, name, TRUE);
  if (node == NULL)
    return FALSE;
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_BOOLEAN)
    {
      g_autofree char *value = describe (node);
      fail (r, prefix, name, "must be true or false, not %s", value);
      return FALSE;
    }
  return json_node_get_boolean (node);
}

static guint64
get_uint (Reader *r, JsonObject *object, const char *prefix, const char *name)
{
  JsonNode *node = member (r, object, prefix, name, TRUE);
  if (node == NULL)
    return 0;
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64
      || json_node_get_int (node) < 0)
    {
      g_autofree char *value = describe (node);
      fail (r, prefix, name, "must be a non-negative integer, not %s", value);
      return 0;
    }
  return (guint64)json_node_get_int (node);
}

/* A number (the writer prints 0.0 as 0, an integer token); null is NAN when
 * @nullable (a figure that was not measured). */
static double
get_number (Reader *r, JsonObject *object, const char *prefix, const char *name, gboolean nullable)
{
  JsonNode *node = member (r, object, prefix, name, TRUE);
  if (node == NULL)
    return NAN;
  if (nullable && JSON_NODE_HOLDS_NULL (node))
    return NAN;
  GType type = JSON_NODE_HOLDS_VALUE (node) ? json_node_get_value_type (node) : G_TYPE_INVALID;
  if (type == G_TYPE_INT64)
    return (double)json_node_get_int (node);
  if (type == G_TYPE_DOUBLE)
    return json_node_get_double (node);
  g_autofree char *value = describe (node);
  fail (r, prefix, name, nullable ? "must be a number or null, not %s" : "must be a number, not %s",
        value);
  return NAN;
}

/* One of @names (NULL entries skipped); the index, 0 after a failure. */
static guint
get_enum (Reader *r, JsonObject *object, const char *prefix, const char *name,
          const char *const *names, guint n_names)
{
  g_autofree char *value = get_string (r, object, prefix, name, TRUE);
  if (value == NULL)
    return 0;
  for (guint i = 0; i < n_names; i++)
    if (names[i] != NULL && g_strcmp0 (names[i], value) == 0)
      return i;
  g_autoptr (GString) expected = g_string_new (NULL);
  for (guint i = 0; i < n_names; i++)
    g_string_append_printf (expected, "%s\"%s\"",
                            i == 0             ? ""
                            : i + 1 == n_names ? " or "
                                               : ", ",
                            names[i]);
  g_autofree char *shown = g_strescape (value, NULL);
  fail (r, prefix, name, "must be %s, not \"%s\"", expected->str, shown);
  return 0;
}

static void
module_clear (gpointer data)
{
  WickControlModule *module = data;
  g_free (module->name);
}

static void
stage_clear (gpointer data)
{
  WickControlStage *stage = data;
  g_free (stage->name);
}

/* The module members of list elements and of evict/restore replies; the
 * latter name it "module". */
static void
read_module (Reader *r, JsonObject *object, const char *prefix, const char *name_member,
             WickControlModule *out)
{
  out->name = get_string (r, object, prefix, name_member, TRUE);
  out->where = get_enum (r, object, prefix, "where", where_names, G_N_ELEMENTS (where_names));
  out->bytes = get_uint (r, object, prefix, "bytes");
  out->parameters = get_uint (r, object, prefix, "parameters");
  out->disk = get_uint (r, object, prefix, "disk");
  out->ram = get_uint (r, object, prefix, "ram");
}

static WickStageState
read_state (Reader *r, JsonObject *object, const char *prefix)
{
  return get_enum (r, object, prefix, "state", state_names, G_N_ELEMENTS (state_names));
}

/* The elements of array @name, each an object, to @read. */
static void
read_array (Reader *r, JsonObject *reply, const char *name, GArray *out,
            void (*read) (Reader *, JsonObject *, const char *, gpointer))
{
  JsonNode *node = member (r, reply, "", name, TRUE);
  if (node == NULL)
    return;
  if (!JSON_NODE_HOLDS_ARRAY (node))
    {
      g_autofree char *value = describe (node);
      fail (r, "", name, "must be an array, not %s", value);
      return;
    }
  JsonArray *array = json_node_get_array (node);
  guint n = json_array_get_length (array);
  for (guint i = 0; i < n && !r->failed; i++)
    {
      JsonNode *element = json_array_get_element (array, i);
      g_autofree char *prefix = g_strdup_printf ("%s[%u].", name, i);
      if (!JSON_NODE_HOLDS_OBJECT (element))
        {
          g_autofree char *value = describe (element);
          g_autofree char *at = g_strdup_printf ("%s[%u]", name, i);
          fail (r, "", at, "must be an object, not %s", value);
          return;
        }
      g_array_set_size (out, out->len + 1);
      read (r, json_node_get_object (element), prefix,
            out->data + (gsize)(out->len - 1) * g_array_get_element_size (out));
    }
}

static void
read_list_module (Reader *r, JsonObject *object, const char *prefix, gpointer out)
{
  WickControlModule *module = out;
  read_module (r, object, prefix, "name", module);
  module->restored_count = get_uint (r, object, prefix, "restored_count");
}

static void
read_list_stage (Reader *r, JsonObject *object, const char *prefix, gpointer out)
{
  WickControlStage *stage = out;
  stage->name = get_string (r, object, prefix, "name", TRUE);
  stage->state = read_state (r, object, prefix);
}

/* Names in a list are keys (the panels' rows): a repeated one is an error. */
static void
check_unique_names (Reader *r, GArray *array, gsize offset_of_name, gsize size, const char *what)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < array->len && !r->failed; i++)
    {
      const char *name = *(char **)(array->data + (gsize)i * size + offset_of_name);
      if (name == NULL)
        continue;
      if (!g_hash_table_add (seen, (gpointer)name))
        {
          g_autofree char *at = g_strdup_printf ("%s[%u].name", what, i);
          g_autofree char *shown = g_strescape (name, NULL);
          fail (r, "", at, "repeats the name \"%s\"", shown);
        }
    }
}

static void
read_list (Reader *r, JsonObject *reply, WickControlResult *result)
{
  result->list.modules = g_array_new (FALSE, TRUE, sizeof (WickControlModule));
  g_array_set_clear_func (result->list.modules, module_clear);
  result->list.stages = g_array_new (FALSE, TRUE, sizeof (WickControlStage));
  g_array_set_clear_func (result->list.stages, stage_clear);
  read_array (r, reply, "stages", result->list.stages, read_list_stage);
  read_array (r, reply, "modules", result->list.modules, read_list_module);
  check_unique_names (r, result->list.stages, G_STRUCT_OFFSET (WickControlStage, name),
                      sizeof (WickControlStage), "stages");
  check_unique_names (r, result->list.modules, G_STRUCT_OFFSET (WickControlModule, name),
                      sizeof (WickControlModule), "modules");
  result->list.cuda = get_boolean (r, reply, "", "cuda");
  if (!result->list.cuda)
    result->list.cuda_unavailable = get_string (r, reply, "", "cuda_unavailable", FALSE);
  result->list.weights = get_boolean (r, reply, "", "weights");
  result->list.capture = get_boolean (r, reply, "", "capture");
}

static void
read_certificate (Reader *r, JsonObject *reply, WickControlCertificate *c)
{
  static const char *const verdicts[] = { "refused", "accepted" };
  c->stage = get_string (r, reply, "", "stage", TRUE);
  c->accepted = get_enum (r, reply, "", "verdict", verdicts, G_N_ELEMENTS (verdicts)) == 1;
  c->reason = get_string (r, reply, "", "reason", TRUE);
  c->gate_cos = get_number (r, reply, "", "gate_cos", FALSE);
  c->min_speedup = get_number (r, reply, "", "min_speedup", FALSE);
  c->warmup = get_uint (r, reply, "", "warmup");
  c->parity_checked = get_boolean (r, reply, "", "parity_checked");
  c->speedup_checked = get_boolean (r, reply, "", "speedup_checked");
  c->parity_cos = get_number (r, reply, "", "parity_cos", TRUE);
  c->max_abs = get_number (r, reply, "", "max_abs", TRUE);
  c->p99_abs = get_number (r, reply, "", "p99_abs", TRUE);
  c->eager_ms = get_number (r, reply, "", "eager_ms", TRUE);
  c->replay_ms = get_number (r, reply, "", "replay_ms", TRUE);
  c->speedup_median = get_number (r, reply, "", "speedup_median", TRUE);
  c->speedup_min = get_number (r, reply, "", "speedup_min", TRUE);
  c->speedup_max = get_number (r, reply, "", "speedup_max", TRUE);
  c->kernel_nodes = get_uint (r, reply, "", "kernel_nodes");
  c->state = read_state (r, reply, "");
}

static void
read_ok (Reader *r, JsonObject *reply, WickControlResult *result)
{
  switch (result->command)
    {
      case WICK_CONTROL_RESULT_LIST:
        read_list (r, reply, result);
        break;
      case WICK_CONTROL_RESULT_EVICT:
        read_module (r, reply, "", "module", &result->weights.module);
        result->weights.freed_bytes = get_uint (r, reply, "", "freed_bytes");
        result->weights.seconds = get_number (r, reply, "", "seconds", FALSE);
        break;
      case WICK_CONTROL_RESULT_RESTORE:
        read_module (r, reply, "", "module", &result->weights.module);
        result->weights.restored = get_uint (r, reply, "", "restored");
        result->weights.restored_bytes = get_uint (r, reply, "", "restored_bytes");
        result->weights.seconds = get_number (r, reply, "", "seconds", FALSE);
        break;
      case WICK_CONTROL_RESULT_RESTORE_ALL:
        result->restore_all.restored_modules = get_uint (r, reply, "", "restored_modules");
        break;
      case WICK_CONTROL_RESULT_CAPTURE:
        read_certificate (r, reply, &result->capture);
        break;
      case WICK_CONTROL_RESULT_RELEASE:
        result->release.name = get_string (r, reply, "", "stage", TRUE);
        result->release.state = read_state (r, reply, "");
        break;
      case WICK_CONTROL_RESULT_MARK:
        result->mark.label = get_string (r, reply, "", "label", TRUE);
        break;
    }
}

WickControlResult *
wick_control_result_parse (WickControlCommand command, JsonObject *reply, GError **error)
{
  g_return_val_if_fail ((guint)command < G_N_ELEMENTS (command_names), NULL);
  g_return_val_if_fail (reply != NULL, NULL);
  Reader r = { command, error, FALSE };
  g_autoptr (WickControlResult) result = g_new0 (WickControlResult, 1);
  result->command = command;
  gboolean ok = get_boolean (&r, reply, "", "ok");
  if (r.failed)
    return NULL;
  if (ok)
    {
      result->status = WICK_CONTROL_STATUS_OK;
      read_ok (&r, reply, result);
    }
  else
    {
      /* "busy" is optional; when present it must be a boolean. */
      gboolean busy = json_object_has_member (reply, "busy") && get_boolean (&r, reply, "", "busy");
      result->status = busy ? WICK_CONTROL_STATUS_BUSY : WICK_CONTROL_STATUS_REFUSED;
      result->error = get_string (&r, reply, "", "error", TRUE);
    }
  return r.failed ? NULL : g_steal_pointer (&result);
}

WickControlResult *
wick_control_result_parse_text (WickControlCommand command, const char *text, gssize length,
                                GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) local = NULL;
  if (wick_live_json_too_deep (text, length >= 0 ? (gsize)length : strlen (text),
                               WICK_LIVE_MAX_JSON_DEPTH))
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "the %s reply is nested deeper than %d levels",
                   wick_control_result_command_name (command), WICK_LIVE_MAX_JSON_DEPTH);
      return NULL;
    }
  if (!json_parser_load_from_data (parser, text, length, &local))
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL, "the %s reply is not JSON: %s",
                   wick_control_result_command_name (command), local->message);
      return NULL;
    }
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "the %s reply is not a JSON object", wick_control_result_command_name (command));
      return NULL;
    }
  return wick_control_result_parse (command, json_node_get_object (root), error);
}

void
wick_control_result_free (WickControlResult *result)
{
  if (result == NULL)
    return;
  g_free (result->error);
  switch (result->command)
    {
      case WICK_CONTROL_RESULT_LIST:
        g_clear_pointer (&result->list.modules, g_array_unref);
        g_clear_pointer (&result->list.stages, g_array_unref);
        g_free (result->list.cuda_unavailable);
        break;
      case WICK_CONTROL_RESULT_EVICT:
      case WICK_CONTROL_RESULT_RESTORE:
        g_free (result->weights.module.name);
        break;
      case WICK_CONTROL_RESULT_RESTORE_ALL:
        break;
      case WICK_CONTROL_RESULT_CAPTURE:
        g_free (result->capture.stage);
        g_free (result->capture.reason);
        break;
      case WICK_CONTROL_RESULT_RELEASE:
        g_free (result->release.name);
        break;
      case WICK_CONTROL_RESULT_MARK:
        g_free (result->mark.label);
        break;
    }
  g_free (result);
}

const WickControlModule *
wick_control_result_find_module (const WickControlResult *result, const char *name)
{
  g_return_val_if_fail (result != NULL && result->command == WICK_CONTROL_RESULT_LIST, NULL);
  if (result->status != WICK_CONTROL_STATUS_OK)
    return NULL;
  for (guint i = 0; i < result->list.modules->len; i++)
    {
      const WickControlModule *module = &g_array_index (result->list.modules, WickControlModule, i);
      if (g_strcmp0 (module->name, name) == 0)
        return module;
    }
  return NULL;
}
