/* wick-live.h — placeholder, filled by its owner. */
#pragma once

#if !defined(WICK_INSIDE) && !defined(WICK_COMPILATION)
#error "Only <wick/wick.h> can be included directly."
#endif

#include "wick-session.h"
