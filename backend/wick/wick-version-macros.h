/* wick-version-macros.h — symbol visibility and availability of libwick's API.
 *
 * libwick is built with hidden visibility: a function is part of the ABI only
 * when its declaration in an installed header carries WICK_AVAILABLE_IN_x_y
 * and its name is in backend/wick-1.map. docs/api.md ("Adding a public
 * function") says how to add one and refresh the ABI baseline.
 */
#pragma once

#if !defined(WICK_INSIDE) && !defined(WICK_COMPILATION)
#error "Only <wick/wick.h> can be included directly."
#endif

#define WICK_MAJOR_VERSION 1
#define WICK_MINOR_VERSION 0

#ifdef __cplusplus
#define WICK_BEGIN_DECLS extern "C" {
#define WICK_END_DECLS }
#else
#define WICK_BEGIN_DECLS
#define WICK_END_DECLS
#endif

#if defined(__GNUC__) || defined(__clang__)
#define _WICK_EXTERN __attribute__ ((visibility ("default"))) extern
#define _WICK_DEPRECATED __attribute__ ((__deprecated__))
#define _WICK_DEPRECATED_FOR(f) __attribute__ ((__deprecated__ ("Use '" #f "' instead")))
#else
#define _WICK_EXTERN extern
#define _WICK_DEPRECATED
#define _WICK_DEPRECATED_FOR(f)
#endif

/* Every public function of 1.0 (symbol version WICK_1.0 in wick-1.map). */
#define WICK_AVAILABLE_IN_1_0 _WICK_EXTERN
/* For later additions: WICK_AVAILABLE_IN_1_1 with a WICK_1.1 node in the map. */
#define WICK_DEPRECATED_IN_1_0 _WICK_DEPRECATED _WICK_EXTERN
#define WICK_DEPRECATED_IN_1_0_FOR(f) _WICK_DEPRECATED_FOR (f) _WICK_EXTERN
