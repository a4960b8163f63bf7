/* wick-render-private.h — what only the tests call of wick-render.h (the app
 * includes wick-render.h alone). It declares no types: include it after
 * wick-render.h. */
#pragma once

G_BEGIN_DECLS

/* Draws onto any cairo context of options->width × options->height. */
void wick_render_draw (WickDocument *document, const WickRenderOptions *options, cairo_t *cr);

G_END_DECLS
