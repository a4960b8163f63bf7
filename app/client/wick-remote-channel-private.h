/* wick-remote-channel-private.h — what only the tests call of wick-remote-channel.h (the app
 * includes wick-remote-channel.h alone). It declares no types: include it after
 * wick-remote-channel.h. */
#pragma once

G_BEGIN_DECLS

/* Tests: the channel's ssh pid (0: no link open) and links opened so far. */
int wick_remote_channel_get_ssh_pid (const char *url);
guint wick_remote_channel_get_links_opened (const char *url);

G_END_DECLS
