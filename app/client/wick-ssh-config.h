/* wick-ssh-config.h — the host names of the user's ~/.ssh/config, for
 * "Attach to Remote Process…" to offer.
 *
 * Only the names after `Host` are taken (ssh itself reads the file again when
 * it connects: nothing else here matters). The file is the user's, but it is
 * read as hostile input all the same: at most 1 MiB per file, lines of at
 * most 4 KiB, 1000 names, `Include` followed at most 8 deep and 64 files in
 * all (a loop ends there); a pattern (`*`, `?`, `!` negation) names no host
 * and is left out, and so is a name ssh would take for an option or that holds
 * characters outside [A-Za-z0-9._-] (what ssh://NAME accepts).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define WICK_SSH_CONFIG_MAX_HOSTS 1000

/* The host names of @path (NULL: ~/.ssh/config) in the order they appear,
 * each once; an empty array when the file does not exist. NULL with @error
 * only when @path itself cannot be read for another reason. */
GPtrArray *wick_ssh_config_hosts (const char *path, GError **error);

G_END_DECLS
