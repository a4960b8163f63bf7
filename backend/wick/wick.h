/* wick.h — libwick, the recording library linked into a profiled process.
 *
 * Include this header only. Everything is prefixed wick_, handles are opaque,
 * and every call that can fail returns false (or NULL) and fills a WickError
 * with a human sentence.
 */
#pragma once

#define WICK_INSIDE
#include "wick-version-macros.h"
#include "wick-session.h"
#include "wick-thread-handle.h"
#include "wick-ring.h"
#include "wick-live.h"
#include "wick-weights.h"
#include "wick-stages.h"
#undef WICK_INSIDE
