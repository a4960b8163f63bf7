/* wick-control-message-private.h — what only the tests call of wick-control-message.h (libwick
 * includes wick-control-message.h alone). It declares no types: include it after
 * wick-control-message.h. */
#pragma once

#ifdef __cplusplus
extern "C"
{
#endif

const WickControlField *wick_control_request_get (const WickControlRequest *request,
                                                  const char *key);

/* A JSON value written verbatim (the caller guarantees it is valid JSON). */
void wick_control_writer_raw (WickControlWriter *writer, const char *key, const char *json);

#ifdef __cplusplus
}
#endif
