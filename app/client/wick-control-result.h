/* wick-control-result.h — typed results of the control commands the live
 * pages send (docs/protocol.md: list, evict, restore, restore-all, capture,
 * release, mark), so that no panel reads JSON.
 *
 * wick_control_result_parse() takes a reply object as the live client
 * returned it and checks it against the protocol: "ok" must be a boolean; a
 * reply with "ok": false is a result with status REFUSED (or BUSY when it
 * says "busy": true) and its "error" sentence; a reply with "ok": true must
 * carry every member the protocol promises for its command, each of its type
 * (strings, non-negative integers, numbers or null where a figure may be
 * unmeasured, the enumerations' known names). Anything else is a
 * WICK_LIVE_ERROR_PROTOCOL error naming the command, the member (with its
 * index in a list: "modules[2].where") and what was wrong, e.g.
 * `the list reply's member "modules[1].where" must be "resident", "disk",
 * "ram" or "disk+ram", not "tape"`. Unknown members are ignored (the
 * protocol allows additions).
 */
#pragma once

#include <json-glib/json-glib.h>
#include <wick/wick.h>

G_BEGIN_DECLS

typedef enum
{
  WICK_CONTROL_RESULT_LIST,
  WICK_CONTROL_RESULT_EVICT,
  WICK_CONTROL_RESULT_RESTORE,
  WICK_CONTROL_RESULT_RESTORE_ALL,
  WICK_CONTROL_RESULT_CAPTURE,
  WICK_CONTROL_RESULT_RELEASE,
  WICK_CONTROL_RESULT_MARK,
} WickControlCommand;

typedef enum
{
  WICK_CONTROL_STATUS_OK,      /* "ok": true, the typed members below are set */
  WICK_CONTROL_STATUS_REFUSED, /* "ok": false: the request was wrong or failed */
  WICK_CONTROL_STATUS_BUSY,    /* "ok": false, "busy": true: try again later */
} WickControlStatus;

/* Where a weight module's parameters are (the protocol's "where"). */
typedef enum
{
  WICK_CONTROL_WHERE_RESIDENT,
  WICK_CONTROL_WHERE_DISK,
  WICK_CONTROL_WHERE_RAM,
  WICK_CONTROL_WHERE_DISK_RAM, /* some on each tier */
} WickControlWhere;

typedef struct
{
  char *name;
  WickControlWhere where;
  guint64 bytes, parameters;
  guint64 disk, ram;      /* parameters on each tier */
  guint64 restored_count; /* list only, 0 otherwise */
} WickControlModule;

typedef struct
{
  char *name;
  WickStageState state;
} WickControlStage;

/* A capture's certificate. Figures that were not measured (null) are NAN. */
typedef struct
{
  char *stage;
  gboolean accepted; /* verdict "accepted" (else "refused", with the reason) */
  char *reason;
  double gate_cos, min_speedup;
  guint64 warmup;
  gboolean parity_checked, speedup_checked;
  double parity_cos, max_abs, p99_abs;
  double eager_ms, replay_ms;
  double speedup_median, speedup_min, speedup_max;
  guint64 kernel_nodes;
  WickStageState state; /* the stage's state after the capture */
} WickControlCertificate;

typedef struct
{
  WickControlCommand command;
  WickControlStatus status;
  char *error; /* the reply's sentence when not OK, else NULL */
  union
  {
    struct
    {
      GArray *modules; /* WickControlModule */
      GArray *stages;  /* WickControlStage */
      gboolean cuda;
      char *cuda_unavailable;    /* why not, when cuda is FALSE (may be NULL) */
      gboolean weights, capture; /* built with the weight store / stage capture */
    } list;
    /* evict and restore: the module after the command */
    struct
    {
      WickControlModule module;
      guint64 freed_bytes;    /* evict */
      guint64 restored;       /* restore: parameters */
      guint64 restored_bytes; /* restore */
      double seconds;
    } weights;
    struct
    {
      guint64 restored_modules;
    } restore_all;
    WickControlCertificate capture;
    WickControlStage release;
    struct
    {
      char *label;
    } mark;
  };
} WickControlResult;

/* The typed result of @reply to @command, or NULL with a
 * WICK_LIVE_ERROR_PROTOCOL error (see above). */
WickControlResult *wick_control_result_parse (WickControlCommand command, JsonObject *reply,
                                              GError **error);
void wick_control_result_free (WickControlResult *result);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickControlResult, wick_control_result_free)

/* The module of a list result named @name, or NULL. */
const WickControlModule *wick_control_result_find_module (const WickControlResult *result,
                                                          const char *name);

/* Protocol names back ("resident", "disk+ram"; "eager", "captured", "refused"). */
const char *wick_control_where_to_string (WickControlWhere where);
const char *wick_control_stage_state_to_string (WickStageState state);

G_END_DECLS
