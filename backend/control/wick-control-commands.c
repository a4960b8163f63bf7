/* wick-control-commands.c — the control commands and their replies.
 *
 * Each command validates its members, acts only on stages and modules the host
 * registered by name, and writes {"ok": true, ...fields} or
 * {"ok": false, "error": "<sentence>"}.
 */
#include "config.h"

#include "wick-control-private.h"
#include "common/wick-utf8.h"

#include <stdio.h>
#include <string.h>
#include "core/wick-error-private.h"

typedef void (*CommandFunc) (WickSession *session, const WickControlRequest *request,
                             WickControlWriter *reply, bool *send_ring_fd);

static void
reply_error (WickControlWriter *reply, const char *message)
{
  /* Messages come from fixed buffers: one cut by snprintf at the end of its
   * buffer loses the partial character, never the reply's validity. */
  char text[sizeof ((WickError *)0)->message];
  snprintf (text, sizeof text, "%s", message);
  wick_utf8_trim_end (text);
  wick_control_writer_bool (reply, "ok", false);
  wick_control_writer_string (reply, "error", text);
}

/* The store, or NULL after writing the error reply. */
static WickWeightStore *
require_store (WickSession *session, WickControlWriter *reply)
{
  WickWeightStore *store = wick_session_get_weight_store (session);
  if (store == NULL)
    reply_error (reply, "the process registered no weight modules");
  return store;
}

static const char *
wick_control_stage_state_name (WickStageState state)
{
  switch (state)
    {
      case WICK_STAGE_EAGER:
        return "eager";
      case WICK_STAGE_CAPTURED:
        return "captured";
      case WICK_STAGE_REFUSED:
        return "refused";
      default:
        return "unknown";
    }
}

/* Where a module's parameters are now: resident, disk, ram or disk+ram. */
static const char *
module_where (const WickWeightStats *stats)
{
  if (stats->resident)
    return "resident";
  if (stats->disk > 0 && stats->ram > 0)
    return "disk+ram";
  return stats->disk > 0 ? "disk" : "ram";
}

size_t
wick_control_foreach_module (WickSession *session, WickControlModuleFunc func, void *data)
{
  WickWeightStore *store = wick_session_get_weight_store (session);
  size_t n = store != NULL ? wick_weight_store_get_n_modules (store) : 0, done = 0;
  for (size_t i = 0; i < n; i++)
    {
      WickWeightStats stats;
      memset (&stats, 0, sizeof stats);
      if (!wick_weight_store_get_module_stats (store, i, &stats))
        continue;
      func (&stats, data);
      done++;
    }
  return done;
}

void
wick_control_write_module (WickControlWriter *writer, const WickWeightStats *stats)
{
  wick_control_writer_string (writer, "name", stats->module);
  wick_control_writer_uint (writer, "bytes", stats->bytes);
  wick_control_writer_uint (writer, "parameters", stats->parameters);
  wick_control_writer_string (writer, "where", module_where (stats));
  wick_control_writer_uint (writer, "disk", stats->disk);
  wick_control_writer_uint (writer, "ram", stats->ram);
  wick_control_writer_uint (writer, "restored_count", stats->restored_count);
}

size_t
wick_control_foreach_stage (WickSession *session, WickControlStageFunc func, void *data)
{
  size_t n = wick_session_get_n_stages (session), done = 0;
  for (size_t i = 0; i < n; i++)
    {
      WickStage *stage = wick_session_get_stage (session, i);
      if (stage == NULL)
        continue;
      func (stage, data);
      done++;
    }
  return done;
}

void
wick_control_write_stage (WickControlWriter *writer, WickStage *stage)
{
  wick_control_writer_string (writer, "name", wick_stage_get_name (stage));
  wick_control_writer_string (writer, "state",
                              wick_control_stage_state_name (wick_stage_get_state (stage)));
}

static void
write_module_stats (WickControlWriter *reply, const WickWeightStats *stats)
{
  wick_control_writer_string (reply, "module", stats->module);
  wick_control_writer_string (reply, "where", module_where (stats));
  wick_control_writer_uint (reply, "parameters", stats->parameters);
  wick_control_writer_uint (reply, "bytes", stats->bytes);
  wick_control_writer_uint (reply, "disk", stats->disk);
  wick_control_writer_uint (reply, "ram", stats->ram);
}

static void
command_hello (WickSession *session, const WickControlRequest *request, WickControlWriter *reply,
               bool *send_ring_fd)
{
  WickControlSessionInfo info;
  wick_control_session_info (session, &info);
  wick_control_writer_bool (reply, "ok", true);
  wick_control_writer_string (reply, "command", "hello");
  wick_control_writer_int (reply, "protocol", WICK_CONTROL_PROTOCOL_VERSION);
  wick_control_writer_string (reply, "program", info.program);
  wick_control_writer_int (reply, "pid", info.pid);
  wick_control_writer_string (reply, "entrypoint", info.entrypoint);
  wick_control_writer_string (reply, "started", info.started);
  wick_control_writer_uint (reply, "started_unix_ns", info.started_unix_ns);
  wick_control_writer_string (reply, "policy", info.policy);
  wick_control_writer_uint (reply, "dropped", info.dropped);
  wick_control_writer_bool (reply, "strict", info.strict);
  wick_control_writer_string (reply, "run_id", info.run_id);
  wick_control_writer_bool (reply, "finished", info.finished);
  wick_control_writer_bool (reply, "ring", info.ring_fd >= 0);
  wick_control_writer_bool (reply, "snapshot", true);
  *send_ring_fd = info.ring_fd >= 0;
}

static void
list_stage (WickStage *stage, void *data)
{
  WickControlWriter *reply = data;
  wick_control_writer_begin_object (reply, NULL);
  wick_control_write_stage (reply, stage);
  wick_control_writer_end_object (reply);
}

static void
list_module (const WickWeightStats *stats, void *data)
{
  WickControlWriter *reply = data;
  wick_control_writer_begin_object (reply, NULL);
  wick_control_write_module (reply, stats);
  wick_control_writer_end_object (reply);
}

static void
command_list (WickSession *session, const WickControlRequest *request, WickControlWriter *reply,
              bool *send_ring_fd)
{
  wick_control_writer_bool (reply, "ok", true);
  wick_control_writer_begin_array (reply, "stages");
  wick_control_foreach_stage (session, list_stage, reply);
  wick_control_writer_end_array (reply);
  wick_control_writer_begin_array (reply, "modules");
  wick_control_foreach_module (session, list_module, reply);
  wick_control_writer_end_array (reply);
  WickError why = { "" };
  bool cuda = wick_cuda_available (&why);
  wick_control_writer_bool (reply, "cuda", cuda);
  if (!cuda)
    wick_control_writer_string (reply, "cuda_unavailable", why.message);
  /* the protocol's capability flags: this libwick always has both */
  wick_control_writer_bool (reply, "weights", true);
  wick_control_writer_bool (reply, "capture", true);
}

static bool
parse_tier (const char *name, WickTier *tier)
{
  if (name == NULL || strcmp (name, "auto") == 0)
    *tier = WICK_TIER_AUTO;
  else if (strcmp (name, "disk") == 0)
    *tier = WICK_TIER_DISK;
  else if (strcmp (name, "ram") == 0)
    *tier = WICK_TIER_RAM;
  else
    return false;
  return true;
}

/* evict and restore: the module (and evict's tier) from the request, the store
 * call under the host lock, then the module's stats and the call's figures. */
static void
command_move_module (WickSession *session, const WickControlRequest *request,
                     WickControlWriter *reply, bool evict)
{
  WickError error = { "" };
  const char *module = wick_control_request_get_string (request, "module", true, &error);
  if (module == NULL)
    {
      reply_error (reply, error.message);
      return;
    }
  WickTier tier = WICK_TIER_AUTO;
  if (evict)
    {
      const char *tier_name = wick_control_request_get_string (request, "tier", false, &error);
      if (error.message[0] != '\0')
        {
          reply_error (reply, error.message);
          return;
        }
      if (!parse_tier (tier_name, &tier))
        {
          reply_error (reply, "member \"tier\" must be \"auto\", \"disk\" or \"ram\"");
          return;
        }
    }
  WickWeightStore *store = require_store (session, reply);
  if (store == NULL)
    return;
  WickWeightStats stats;
  memset (&stats, 0, sizeof stats);
  wick_control_server_lock_host (session);
  bool ok = evict ? wick_weight_store_evict (store, module, tier, &stats, &error)
                  : wick_weight_store_restore (store, module, &stats, &error);
  wick_control_server_unlock_host (session);
  if (!ok)
    {
      reply_error (reply, error.message);
      return;
    }
  wick_control_writer_bool (reply, "ok", true);
  write_module_stats (reply, &stats);
  if (evict)
    {
      wick_control_writer_uint (reply, "freed_bytes", stats.freed_bytes);
      wick_control_writer_double (reply, "seconds", stats.evict_seconds);
    }
  else
    {
      wick_control_writer_uint (reply, "restored", stats.restored);
      wick_control_writer_uint (reply, "restored_bytes", stats.restored_bytes);
      wick_control_writer_double (reply, "seconds", stats.restore_seconds);
    }
}

static void
command_evict (WickSession *session, const WickControlRequest *request, WickControlWriter *reply,
               bool *send_ring_fd)
{
  command_move_module (session, request, reply, true);
}

static void
command_restore (WickSession *session, const WickControlRequest *request, WickControlWriter *reply,
                 bool *send_ring_fd)
{
  command_move_module (session, request, reply, false);
}

static void
command_restore_all (WickSession *session, const WickControlRequest *request,
                     WickControlWriter *reply, bool *send_ring_fd)
{
  WickError error = { "" };
  WickWeightStore *store = require_store (session, reply);
  if (store == NULL)
    return;
  uint64_t restored = 0;
  wick_control_server_lock_host (session);
  bool ok = wick_weight_store_restore_all (store, &restored, &error);
  wick_control_server_unlock_host (session);
  if (!ok)
    {
      reply_error (reply, error.message);
      return;
    }
  wick_control_writer_bool (reply, "ok", true);
  wick_control_writer_uint (reply, "restored_modules", restored);
}

/* The stage named by the request, or NULL after writing the error reply. */
static WickStage *
require_stage (WickSession *session, const WickControlRequest *request, WickControlWriter *reply)
{
  WickError error = { "" };
  const char *name = wick_control_request_get_string (request, "stage", true, &error);
  if (name == NULL)
    {
      reply_error (reply, error.message);
      return NULL;
    }
  WickStage *stage = wick_session_find_stage (session, name);
  if (stage == NULL)
    {
      char message[300];
      snprintf (message, sizeof message, "no stage named \"%.*s\" is registered",
                WICK_UTF8_CUT (name, 200));
      reply_error (reply, message);
    }
  return stage;
}

static bool
read_capture_options (const WickControlRequest *request, WickCaptureOptions *options,
                      WickError *error)
{
  uint64_t warmup = options->warmup;
  uint64_t rounds = options->timing_rounds;
  uint64_t iterations = options->timing_iterations;
  if (!wick_control_request_get_number (request, "gate_cos", &options->gate_cos, error)
      || !wick_control_request_get_number (request, "min_speedup", &options->min_speedup, error)
      || !wick_control_request_get_uint (request, "warmup", 1000, &warmup, error)
      || !wick_control_request_get_uint (request, "timing_rounds", 1000, &rounds, error)
      || !wick_control_request_get_uint (request, "timing_iterations", 100000, &iterations, error))
    return false;
  if (options->gate_cos < 0 || options->gate_cos > 1)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "gate_cos must be within 0 to 1, not %g",
                      options->gate_cos);
      return false;
    }
  if (options->min_speedup < 0)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "min_speedup must be 0 or more, not %g",
                      options->min_speedup);
      return false;
    }
  options->warmup = (uint32_t)warmup;
  options->timing_rounds = (uint32_t)rounds;
  options->timing_iterations = (uint32_t)iterations;
  return true;
}

static void
write_certification (WickControlWriter *reply, const WickCertification *cert)
{
  wick_control_writer_string (reply, "stage", cert->stage);
  wick_control_writer_string (reply, "verdict", cert->accepted ? "accepted" : "refused");
  wick_control_writer_string (reply, "reason", cert->reason);
  wick_control_writer_double (reply, "gate_cos", cert->gate_cos);
  wick_control_writer_double (reply, "min_speedup", cert->min_speedup);
  wick_control_writer_uint (reply, "warmup", cert->warmup);
  wick_control_writer_bool (reply, "parity_checked", cert->parity_checked);
  wick_control_writer_bool (reply, "speedup_checked", cert->speedup_checked);
  wick_control_writer_double (reply, "parity_cos", cert->parity_cos);
  wick_control_writer_double (reply, "max_abs", cert->max_abs);
  wick_control_writer_double (reply, "p99_abs", cert->p99_abs);
  wick_control_writer_double (reply, "eager_ms", cert->eager_ms);
  wick_control_writer_double (reply, "replay_ms", cert->replay_ms);
  wick_control_writer_double (reply, "speedup_median", cert->speedup_median);
  wick_control_writer_double (reply, "speedup_min", cert->speedup_min);
  wick_control_writer_double (reply, "speedup_max", cert->speedup_max);
  wick_control_writer_uint (reply, "kernel_nodes", cert->kernel_nodes);
}

static void
command_capture (WickSession *session, const WickControlRequest *request, WickControlWriter *reply,
                 bool *send_ring_fd)
{
  WickStage *stage = require_stage (session, request, reply);
  if (stage == NULL)
    return;
  WickCaptureOptions options;
  WickError error = { "" };
  wick_capture_options_init (&options);
  if (!read_capture_options (request, &options, &error))
    {
      reply_error (reply, error.message);
      return;
    }
  WickCertification cert;
  memset (&cert, 0, sizeof cert);
  if (!wick_stage_capture (stage, &options, &cert, &error))
    {
      reply_error (reply, error.message);
      return;
    }
  wick_control_writer_bool (reply, "ok", true);
  write_certification (reply, &cert);
  wick_control_writer_string (reply, "state",
                              wick_control_stage_state_name (wick_stage_get_state (stage)));
}

static void
command_release (WickSession *session, const WickControlRequest *request, WickControlWriter *reply,
                 bool *send_ring_fd)
{
  WickStage *stage = require_stage (session, request, reply);
  if (stage == NULL)
    return;
  WickError error = { "" };
  if (!wick_stage_release (stage, &error))
    {
      reply_error (reply, error.message);
      return;
    }
  wick_control_writer_bool (reply, "ok", true);
  wick_control_writer_string (reply, "stage", wick_stage_get_name (stage));
  wick_control_writer_string (reply, "state",
                              wick_control_stage_state_name (wick_stage_get_state (stage)));
}

static void
command_mark (WickSession *session, const WickControlRequest *request, WickControlWriter *reply,
              bool *send_ring_fd)
{
  WickError error = { "" };
  const char *label = wick_control_request_get_string (request, "label", true, &error);
  if (label == NULL)
    {
      reply_error (reply, error.message);
      return;
    }
  if (label[0] == '\0' || strlen (label) > 1024)
    {
      reply_error (reply, "a mark's label must be 1 to 1024 bytes");
      return;
    }
  if (!wick_control_session_mark (session, label, &error))
    {
      reply_error (reply, error.message);
      return;
    }
  wick_control_writer_bool (reply, "ok", true);
  wick_control_writer_string (reply, "label", label);
}

static const struct
{
  const char *name;
  CommandFunc func;
} commands[] = {
  { "hello", command_hello },
  { "list", command_list },
  { "evict", command_evict },
  { "restore", command_restore },
  { "restore-all", command_restore_all },
  { "capture", command_capture },
  { "release", command_release },
  { "mark", command_mark },
  { "snapshot", wick_control_command_snapshot },
};

void
wick_control_execute (WickSession *session, const WickControlRequest *request,
                      WickControlWriter *reply, bool *send_ring_fd)
{
  *send_ring_fd = false;
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp (request->command, commands[i].name) == 0)
      {
        commands[i].func (session, request, reply, send_ring_fd);
        return;
      }
  char message[200];
  snprintf (message, sizeof message,
            "unknown command \"%.*s\": expected hello, list, evict, restore, restore-all, "
            "capture, release, mark or snapshot",
            WICK_UTF8_CUT (request->command, 64));
  reply_error (reply, message);
}
