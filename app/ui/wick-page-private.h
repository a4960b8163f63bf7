/* wick-page-private.h — what only the tests call of wick-page.h (the app
 * includes wick-page.h alone). It declares no types: include it after
 * wick-page.h. */
#pragma once

G_BEGIN_DECLS

/* The session's document (NULL without a session or document). */
WickDocument *wick_page_get_document (WickPage *self);

G_END_DECLS
