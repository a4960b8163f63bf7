/* wick-remote-link.h — the desktop's end of a remote session: `ssh HOST
 * wick-trace serve --stdio` run through the system's ssh, and the frames of
 * docs/protocol.md ("Remote sessions over SSH") on its stdin/stdout.
 *
 * The system's ssh is used as is (WICK_SSH names another program, for tests
 * and wrappers), so ~/.ssh/config, keys, the agent and ProxyJump apply and
 * nothing here listens on a port. ssh's prompts (host key, passphrase) reach
 * the user: in the app (wick_remote_link_use_askpass) through wick-askpass, a
 * dialog that ssh runs as SSH_ASKPASS (ssh has no terminal there); in a
 * terminal through it; with neither, BatchMode=yes makes ssh fail at once
 * instead of waiting for an answer nobody can give. Every wait on the node has
 * a deadline, every byte it sends goes through WickRemoteParser; a node that
 * sends garbage, stops, or whose ssh dies ends the link with an error naming
 * the host.
 */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "wick-remote-wire.h"

G_BEGIN_DECLS

typedef struct
{
  char *user; /* NULL: ssh's choice (config, login name) */
  char *host;
  int port;   /* 0: ssh's choice */
  gint64 pid; /* ssh://host/PID; 0 when not given */
  char *name; /* "[user@]host[:port]" for messages */
} WickRemoteTarget;

void wick_remote_target_clear (WickRemoteTarget *target);
/* ssh://[user@]host[:port][/PID]; a bare host is not accepted (a file name
 * could look like one). Refuses a host or user that ssh could take for an
 * option, and characters outside [A-Za-z0-9._-] (host also ':' inside [...]). */
gboolean wick_remote_target_parse (const char *url, WickRemoteTarget *target, GError **error);

/* How long the node may take to say hello (ssh connects and authenticates
 * first: more with a terminal, where the user may be typing a passphrase). */
#define WICK_REMOTE_HELLO_TIMEOUT_MS 30000
#define WICK_REMOTE_HELLO_INTERACTIVE_TIMEOUT_MS 180000
/* While attached the node sends STATS at least every 500 ms: this long
 * without a frame is a dead link. */
#define WICK_REMOTE_IDLE_TIMEOUT_MS 15000
/* A reply to LIST, ATTACH or a control request (capture: the session's own). */
#define WICK_REMOTE_REPLY_TIMEOUT_MS 30000

typedef struct _WickRemoteLink WickRemoteLink;

/* From now on every link's ssh asks its questions through @helper (the
 * app's wick-askpass): SSH_ASKPASS=@helper, SSH_ASKPASS_REQUIRE=force, no
 * controlling terminal, no BatchMode. The helper's lines on ssh's stderr say
 * what it asked and how that ended (a refused host key, a cancelled or
 * unanswered question: the error says so); a deadline is not spent while it
 * asks (the helper has its own, WICK_ASKPASS_TIMEOUT, 120 s). A @helper that
 * is not there (an app run uninstalled elsewhere) leaves ssh in BatchMode,
 * and the error says so. Called once, before any link opens. */
void wick_remote_link_use_askpass (const char *helper);

/* Starts ssh and waits for the node's HELLO. @remote_command: the node's
 * wick-trace (NULL: "wick-trace" on the node's PATH). */
WickRemoteLink *wick_remote_link_open (const WickRemoteTarget *target, const char *remote_command,
                                       GError **error);
/* Closes ssh's stdin (the node exits), waits a moment for ssh, then kills it. */
void wick_remote_link_close (WickRemoteLink *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickRemoteLink, wick_remote_link_close)

const char *wick_remote_link_get_name (WickRemoteLink *self);
/* ssh's pid (tests: which ssh serves a link). */
int wick_remote_link_get_pid (WickRemoteLink *self);
guint64 wick_remote_link_get_bytes_received (WickRemoteLink *self);

gboolean wick_remote_link_send_object (WickRemoteLink *self, guint type, JsonObject *object,
                                       GError **error);
/* The next frame, waiting at most @timeout_ms for it. An ERROR frame is
 * returned as a frame (its sentence is the node's). */
gboolean wick_remote_link_next (WickRemoteLink *self, WickRemoteFrame *frame, int timeout_ms,
                                GError **error);
/* The next frame's JSON object, of type @expect (or ERROR: then FALSE with
 * the node's sentence in @error). */
JsonObject *wick_remote_link_expect_object (WickRemoteLink *self, guint expect, int timeout_ms,
                                            GError **error);
/* The fd to poll for frames (the app's main loop). */
int wick_remote_link_get_fd (WickRemoteLink *self);
/* A pidfd of ssh, readable once ssh exited, for a watch on another thread
 * than the link's reader (it does not reap: the link's own wait does); -1
 * where the kernel has no pidfd_open. */
int wick_remote_link_get_exit_fd (WickRemoteLink *self);
/* Whether ssh exited, without reaping it (safe beside the reader's thread):
 * NULL while it runs, "" when it exited with status 0 (the node's command
 * ended normally), else why ssh ended. */
char *wick_remote_link_peek_exit (WickRemoteLink *self);

G_END_DECLS
