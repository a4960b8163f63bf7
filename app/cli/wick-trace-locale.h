/* wick-trace-locale.h — the locale wick-trace runs in (shared with its test,
 * tests/model/test-model-cli-locale.c). */
#pragma once

#include <locale.h>

/* The user's locale for everything but messages. The model translates its
 * health sentences (the app's Health page shows them in the user's language),
 * and once Wick is installed under /usr glibc finds the wick catalog by
 * itself; but wick-trace prints candle-graph's verdicts for scripts and CI
 * (`check --json` and the text that greps read), so its messages stay the
 * English that candle-graph writes whatever LANG, LC_ALL or LANGUAGE say. In
 * the "C" LC_MESSAGES locale gettext translates nothing (LANGUAGE is ignored
 * there too). */
static inline void
wick_trace_setup_locale (void)
{
  setlocale (LC_ALL, "");
  setlocale (LC_MESSAGES, "C");
}
