/* wick-json-scanner-private.h — what only the tests call of wick-json-scanner.h (the app
 * includes wick-json-scanner.h alone). It declares no types: include it after
 * wick-json-scanner.h. */
#pragma once

G_BEGIN_DECLS

void wick_rust_display_f64 (GString *out, double value);

G_END_DECLS
