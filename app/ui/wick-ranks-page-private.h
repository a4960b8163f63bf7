/* wick-ranks-page-private.h — what only the tests call of wick-ranks-page.h (the app
 * includes wick-ranks-page.h alone). It declares no types: include it after
 * wick-ranks-page.h. */
#pragma once

G_BEGIN_DECLS

const WickRankJob *wick_ranks_page_get_job (WickRanksPage *self);

/* For tests: a rank's offset entry (µs, Enter sets it) and pin button, and
 * whether the timeline's trace is being rewritten. */
GtkWidget *wick_ranks_page_get_offset_entry (WickRanksPage *self, int rank);
GtkWidget *wick_ranks_page_get_pin_button (WickRanksPage *self, int rank);
GtkWidget *wick_ranks_page_get_load_button (WickRanksPage *self, int rank);
gboolean wick_ranks_page_is_realigning (WickRanksPage *self);

G_END_DECLS
