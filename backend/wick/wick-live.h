/* wick-live.h — discovery and control of a live session.
 *
 * A session whose host enables control (WickSessionOptions.enable_control,
 * wick_session_enable_control(), or WICK_CONTROL=1 in the environment) listens
 * on a Unix stream socket named "<pid>-<n>.sock" in a per-user directory:
 * $XDG_RUNTIME_DIR/wick/, or <tmpdir>/wick-<uid>/ when XDG_RUNTIME_DIR is unset.
 * The directory is created 0700 and its owner and mode are verified before use.
 * A listener thread inside libwick admits only peers of the same uid
 * (SO_PEERCRED), answers "hello" with the session's metadata and the live
 * ring's memfd (SCM_RIGHTS), and executes control commands one at a time.
 * docs/protocol.md specifies the framing, the messages and their replies.
 *
 * Commands run one at a time on the listener thread, never on the workload's
 * threads. The weight store and stage capture synchronise with the workload
 * themselves (wick_weight_store_use_begin(), wick_stage_run()): a command that
 * evicts a module in use waits for its use to end. The weight commands (evict,
 * restore, restore-all) also hold the session's control lock while they run,
 * so a host can check a module's residency and begin using it as one step
 * with respect to them (wick-demo does, to wait for evicted weights instead of
 * restoring them on demand).
 */
#pragma once

#if !defined(WICK_INSIDE) && !defined(WICK_COMPILATION)
#error "Only <wick/wick.h> can be included directly."
#endif

#include "wick-session.h"

WICK_BEGIN_DECLS

/* Version of the control protocol ("v" of every message). */
#define WICK_CONTROL_PROTOCOL_VERSION 1
/* Largest message body either side accepts, in bytes. */
#define WICK_CONTROL_MAX_MESSAGE (64 * 1024)

/* Starts the control socket and its listener thread. Idempotent.
 * wick_session_open() calls it when options.enable_control is set or the
 * environment has WICK_CONTROL=1 (a failure there is reported on stderr and
 * the session records without control). */
WICK_AVAILABLE_IN_1_0
bool wick_session_enable_control (WickSession *session, WickError *error);

/* Stops the listener (waiting for a command in progress), closes its clients
 * and removes the socket. wick_session_close() calls it first, before the
 * weight store and the stages go away; safe to call when control is off. */
WICK_AVAILABLE_IN_1_0
void wick_session_disable_control (WickSession *session);

/* Whether the environment asks for control (WICK_CONTROL=1). */
WICK_AVAILABLE_IN_1_0
bool wick_control_requested_by_environment (void);

/* The socket's path, or NULL when control is off. Owned by the session. */
WICK_AVAILABLE_IN_1_0
const char *wick_session_get_control_socket_path (WickSession *session);

/* The control lock (see above); no-ops while control is off. Hold it briefly:
 * a weight command waits for it. */
WICK_AVAILABLE_IN_1_0
void wick_session_lock_control (WickSession *session);
WICK_AVAILABLE_IN_1_0
void wick_session_unlock_control (WickSession *session);

/* The per-user socket directory, created 0700 when missing; fails when it
 * exists with another owner, other permissions, or is not a directory. */
WICK_AVAILABLE_IN_1_0
bool wick_control_directory (char *out, size_t out_size, WickError *error);

/* Removes sockets in the directory whose process is gone or that refuse
 * connections. Returns the number removed. */
WICK_AVAILABLE_IN_1_0
unsigned wick_control_remove_stale_sockets (void);

WICK_END_DECLS
