/* wick-control-result-private.h — what only the tests call of wick-control-result.h (the app
 * includes wick-control-result.h alone). It declares no types: include it after
 * wick-control-result.h. */
#pragma once

G_BEGIN_DECLS

/* The request's "command" name ("restore-all", ...). */
const char *wick_control_result_command_name (WickControlCommand command);

/* The same from the reply's text (tests, replay). */
WickControlResult *wick_control_result_parse_text (WickControlCommand command, const char *text,
                                                   gssize length, GError **error);

G_END_DECLS
