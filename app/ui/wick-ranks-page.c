/* wick-ranks-page.c — the Ranks page and opening several rank files as one job
 * (see wick-ranks-page.h). */
#include "config.h"

#include "wick-ranks-page.h"
#include "wick-ranks-page-private.h"

#include <adwaita.h>
#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <string.h>

#include "wick-archive.h"
#include "wick-format.h"
#include "wick-tracks.h"
#include <stdio.h>
#include "wick-palette.h"

/* Rows of the collectives list drawn at most: a job of many steps has
 * thousands; the rest are counted in a last line. */
#define MAX_COLLECTIVE_ROWS 400

struct _WickRanksPage
{
  WickPage parent_instance;
  WickRankJob *job;
  guint max_steps;
  gint64 max_step_ns, max_exposed_ns, min_step_ns, min_exposed_ns;

  GtkWidget *scroll;
  GWeakRef window;
  char *merged; /* the timeline's trace of the job, rewritten when re-aligned */
  /* the alignment by hand: the pinned rank (-1: none), the offsets set */
  int pin_rank;
  GArray *set_ranks;   /* int */
  GArray *set_offsets; /* gint64 */
  gboolean realigning; /* the merged trace is being rewritten */
  GHashTable *entries; /* rank → its offset entry */
  GHashTable *pins;    /* rank → its pin button */
  GHashTable *loads;   /* rank → its Load check button */
  gboolean *full;      /* by index in job->ranks: in full on the timeline, else a summary row */
  char *error;         /* the last re-alignment's failure, shown until the next */
};

G_DEFINE_FINAL_TYPE (WickRanksPage, wick_ranks_page, WICK_TYPE_PAGE)

static void fill (WickRanksPage *self);
static void rewrite_timeline (WickRanksPage *self);

static void
wick_ranks_page_finalize (GObject *object)
{
  WickRanksPage *self = WICK_RANKS_PAGE (object);
  g_clear_pointer (&self->job, wick_rank_job_free);
  g_weak_ref_clear (&self->window);
  g_free (self->merged);
  g_free (self->error);
  g_array_unref (self->set_ranks);
  g_array_unref (self->set_offsets);
  g_hash_table_unref (self->entries);
  g_hash_table_unref (self->pins);
  g_hash_table_unref (self->loads);
  g_free (self->full);
  G_OBJECT_CLASS (wick_ranks_page_parent_class)->finalize (object);
}

static void
wick_ranks_page_class_init (WickRanksPageClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = wick_ranks_page_finalize;
}

static void
wick_ranks_page_init (WickRanksPage *self)
{
  wick_page_set_title (WICK_PAGE (self), _ ("Ranks"));
  wick_page_set_icon_name (WICK_PAGE (self), "view-grid-symbolic");
  g_weak_ref_init (&self->window, NULL);
  self->pin_rank = -1;
  self->set_ranks = g_array_new (FALSE, FALSE, sizeof (int));
  self->set_offsets = g_array_new (FALSE, FALSE, sizeof (gint64));
  self->entries = g_hash_table_new (g_direct_hash, g_direct_equal);
  self->pins = g_hash_table_new (g_direct_hash, g_direct_equal);
  self->loads = g_hash_table_new (g_direct_hash, g_direct_equal);
}

const WickRankJob *
wick_ranks_page_get_job (WickRanksPage *self)
{
  return self->job;
}

static char *
duration_text (gint64 ns)
{
  if (ns < 0)
    {
      g_autofree char *a = wick_format_duration ((guint64)(-ns));
      return g_strdup_printf ("−%s", a);
    }
  return wick_format_duration ((guint64)ns);
}

/* A colour from pale to deep orange for 0..1 (light theme) */
static void
heat_colour (cairo_t *cr, double v)
{
  v = CLAMP (v, 0, 1);
  cairo_set_source_rgb (cr, 1.0 - 0.10 * v, 0.96 - 0.62 * v, 0.88 - 0.80 * v);
}

/* Two heat maps side by side: rows are ranks, columns steps; the left one
 * step time, the right one exposed communication; each scaled to its max. */
static void
draw_heat (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  WickRanksPage *self = data;
  const WickRankJob *job = self->job;
  guint n = job->ranks->len, steps = MAX (self->max_steps, 1);
  double label_w = 70, top = 22, gap = 40;
  double map_w = (width - label_w * 2 - gap) / 2;
  double cell_h = MIN (28.0, (height - top - 4) / MAX (n, 1));
  double cell_w = map_w / steps;
  PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (area), NULL);
  gboolean dark = adw_style_manager_get_dark (adw_style_manager_get_default ());
  WickRgb rgb = wick_palette_foreground (dark);
  GdkRGBA fg = { (float)rgb.r, (float)rgb.g, (float)rgb.b, 1 };

  for (int map = 0; map < 2; map++)
    {
      double x0 = label_w + map * (map_w + label_w + gap);
      gint64 max = map == 0 ? self->max_step_ns : self->max_exposed_ns;
      gint64 min = map == 0 ? self->min_step_ns : self->min_exposed_ns;
      g_autofree char *mn = duration_text (min);
      g_autofree char *mx = duration_text (max);
      /* scaled from the least to the most, so that a few % between ranks shows */
      g_autofree char *title
        = g_strdup_printf (_ ("%s (%s pale – %s deep)"),
                           map == 0 ? _ ("Step time") : _ ("Exposed communication"), mn, mx);
      gdk_cairo_set_source_rgba (cr, &fg);
      pango_layout_set_text (layout, title, -1);
      /* over the map; wider than it, over its label column too, shortened
       * rather than drawn over the next map or cut at the edge (a 700 px
       * window) */
      int title_w;
      pango_layout_get_pixel_size (layout, &title_w, NULL);
      if (title_w > map_w)
        {
          pango_layout_set_width (
            layout, (int)((label_w + map_w + (map == 0 ? gap : 0) - 8) * PANGO_SCALE));
          pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
        }
      cairo_move_to (cr, title_w > map_w ? x0 - label_w + 4 : x0, 0);
      pango_cairo_show_layout (cr, layout);
      pango_layout_set_width (layout, -1);
      pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_NONE);
      for (guint i = 0; i < n; i++)
        {
          const WickJobRank *r = &g_array_index (job->ranks, WickJobRank, i);
          g_autofree char *label = g_strdup_printf (_ ("rank %d"), r->rank);
          gdk_cairo_set_source_rgba (cr, &fg);
          pango_layout_set_text (layout, label, -1);
          cairo_move_to (cr, x0 - label_w + 4, top + i * cell_h + (cell_h - 16) / 2);
          pango_cairo_show_layout (cr, layout);
          for (guint s = 0; s < r->partial->steps->len && s < steps; s++)
            {
              const WickRankStep *st = &g_array_index (r->partial->steps, WickRankStep, s);
              gint64 v = map == 0 ? st->end_ns - st->start_ns : st->exposed_comm_ns;
              heat_colour (cr, max > min ? (double)(v - min) / (double)(max - min) : 0.5);
              cairo_rectangle (cr, x0 + s * cell_w + 1, top + i * cell_h + 1, cell_w - 2,
                               cell_h - 2);
              cairo_fill (cr);
            }
        }
    }
  g_object_unref (layout);
}

static GtkWidget *
label_new (const char *text, gboolean dim, float xalign)
{
  GtkWidget *label = gtk_label_new (text);
  gtk_label_set_xalign (GTK_LABEL (label), xalign);
  if (dim)
    gtk_widget_add_css_class (label, "dim-label");
  return label;
}

static void
attach_row (GtkGrid *grid, int row, const char *const *cells, guint n, gboolean header)
{
  for (guint i = 0; i < n; i++)
    {
      GtkWidget *l = label_new (cells[i], FALSE, i == 0 ? 0 : 1);
      if (header)
        gtk_widget_add_css_class (l, "heading");
      else
        gtk_widget_add_css_class (l, "numeric");
      gtk_grid_attach (grid, l, (int)i, row, 1, 1);
    }
}

static GtkWidget *
section (GtkWidget *box, const char *title)
{
  GtkWidget *t = label_new (title, FALSE, 0);
  gtk_widget_add_css_class (t, "title-4");
  gtk_widget_set_margin_top (t, 12);
  gtk_box_append (GTK_BOX (box), t);
  return t;
}

/* @child in a scroller that scrolls sideways when the page is narrower (a
 * 700 px window), as wide as @child when there is room. */
static GtkWidget *
sideways (GtkWidget *child)
{
  GtkWidget *side = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (side), GTK_POLICY_AUTOMATIC,
                                  GTK_POLICY_NEVER);
  gtk_scrolled_window_set_propagate_natural_height (GTK_SCROLLED_WINDOW (side), TRUE);
  gtk_scrolled_window_set_propagate_natural_width (GTK_SCROLLED_WINDOW (side), TRUE);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (side), child);
  return side;
}

static GtkWidget *
grid_new (void)
{
  GtkWidget *grid = gtk_grid_new ();
  gtk_grid_set_column_spacing (GTK_GRID (grid), 24);
  gtk_grid_set_row_spacing (GTK_GRID (grid), 2);
  return grid;
}

/* ---- the alignment by hand ---- */

static void
merged_written (GObject *source, GAsyncResult *result, gpointer data)
{
  WickRanksPage *self = WICK_RANKS_PAGE (source);
  g_autoptr (GError) error = NULL;
  g_autoptr (WickWindow) window = g_weak_ref_get (&self->window);

  self->realigning = FALSE;
  if (!g_task_propagate_boolean (G_TASK (result), &error))
    {
      g_free (self->error);
      self->error = g_strdup_printf (_ ("The timeline was not re-aligned: %s"), error->message);
    }
  else if (window != NULL)
    {
      g_autoptr (GFile) file = g_file_new_for_path (self->merged);
      wick_window_load_file (window, file);
    }
  fill (self);
}

static void
write_merged_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  WickRanksPage *self = source;
  GError *error = NULL;
  /* the job is not replaced while this runs (the page waits for it) */
  if (wick_rank_job_write_merged_some (self->job, self->merged, self->full, cancellable, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static gboolean
fill_idle (gpointer data)
{
  fill (data);
  return G_SOURCE_REMOVE;
}

/* The timeline's trace written again (the ranks in full as self->full says,
 * the others as summary rows) on a worker, then reloaded. */
static void
rewrite_timeline (WickRanksPage *self)
{
  g_autoptr (GTask) task = NULL;
  if (self->merged == NULL)
    return;
  task = g_task_new (self, NULL, merged_written, NULL);
  self->realigning = TRUE;
  g_task_run_in_thread (task, write_merged_thread);
}

/* The job re-merged with the alignment by hand, the page refilled (from an
 * idle: the widget that asked is among those replaced) and the timeline's
 * trace rewritten on the new clocks, then reloaded. */
static void
realign (WickRanksPage *self)
{
  WickRanksAlignment a = WICK_RANKS_ALIGNMENT_INIT;
  g_autoptr (GError) error = NULL;
  WickRankJob *job;

  if (self->realigning)
    return;
  a.pin_rank = self->pin_rank;
  a.n_set = self->set_ranks->len;
  a.set_ranks = (const int *)(void *)self->set_ranks->data;
  a.set_offsets_ns = (const gint64 *)(void *)self->set_offsets->data;
  g_clear_pointer (&self->error, g_free);
  job = wick_rank_job_realign (self->job, &a, &error);
  if (job == NULL)
    self->error = g_strdup_printf (_ ("Not re-aligned: %s"), error->message);
  else
    {
      self->job = job;
      rewrite_timeline (self);
    }
  g_idle_add_full (G_PRIORITY_DEFAULT, fill_idle, g_object_ref (self), g_object_unref);
}

static void
on_load_toggled (GtkCheckButton *button, WickRanksPage *self)
{
  int rank = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (button), "wick-rank"));
  gboolean on = gtk_check_button_get_active (button);
  for (guint i = 0; i < self->job->ranks->len; i++)
    if (g_array_index (self->job->ranks, WickJobRank, i).rank == rank && self->full[i] != on)
      {
        if (self->realigning)
          {
            gtk_check_button_set_active (button, self->full[i]);
            return;
          }
        self->full[i] = on;
        rewrite_timeline (self);
        g_idle_add_full (G_PRIORITY_DEFAULT, fill_idle, g_object_ref (self), g_object_unref);
        return;
      }
}

static void
unset (WickRanksPage *self, int rank)
{
  for (guint i = 0; i < self->set_ranks->len; i++)
    if (g_array_index (self->set_ranks, int, i) == rank)
      {
        g_array_remove_index (self->set_ranks, i);
        g_array_remove_index (self->set_offsets, i);
        return;
      }
}

static void
on_pin_toggled (GtkCheckButton *button, WickRanksPage *self)
{
  int rank = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (button), "wick-rank"));
  if (!gtk_check_button_get_active (button) || rank == self->pin_rank)
    return;
  self->pin_rank = rank;
  unset (self, rank);
  realign (self);
}

static void
on_offset_activate (GtkEntry *entry, WickRanksPage *self)
{
  int rank = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (entry), "wick-rank"));
  const char *text = gtk_editable_get_text (GTK_EDITABLE (entry));
  g_autoptr (GError) error = NULL;
  gint64 ns;

  if (text[strspn (text, " ")] == '\0')
    {
      /* emptied: estimated again */
      unset (self, rank);
      realign (self);
      return;
    }
  /* a bare number is µs */
  if (!wick_ranks_parse_offset (text, 1000, &ns, &error))
    {
      gtk_widget_add_css_class (GTK_WIDGET (entry), "error");
      gtk_widget_set_tooltip_text (GTK_WIDGET (entry), error->message);
      return;
    }
  unset (self, rank);
  g_array_append_val (self->set_ranks, rank);
  g_array_append_val (self->set_offsets, ns);
  realign (self);
}

static void
on_reset_clicked (GtkButton *button, WickRanksPage *self)
{
  self->pin_rank = -1;
  g_array_set_size (self->set_ranks, 0);
  g_array_set_size (self->set_offsets, 0);
  realign (self);
}

static const char *
source_text (const WickJobRank *r)
{
  if (g_strcmp0 (r->offset_source, "pinned") == 0)
    return _ ("pinned");
  if (g_strcmp0 (r->offset_source, "reference") == 0)
    return _ ("reference");
  if (g_strcmp0 (r->offset_source, "set") == 0)
    return _ ("set by hand");
  if (g_strcmp0 (r->offset_source, "wall clock") == 0)
    return _ ("wall clock");
  return _ ("collectives");
}

/* A summary row's header clicked on the timeline: its rank loaded. */
static void
on_process_toggled (GtkWidget *timeline, guint process, WickRanksPage *self)
{
  g_autoptr (WickWindow) window = g_weak_ref_get (&self->window);
  WickDocument *doc = window ? wick_window_get_document (window) : NULL;
  const WickProcess *procs;
  guint n;
  int rank = -1;
  GtkWidget *load;
  if (doc == NULL || self->realigning)
    return;
  procs = wick_tracks_get_processes (wick_document_get_tracks (doc), &n);
  if (process >= n || procs[process].name == 0
      || sscanf (wick_document_str (doc, procs[process].name), "rank %d \xc2\xb7 summary", &rank)
           != 1)
    return;
  load = g_hash_table_lookup (self->loads, GINT_TO_POINTER (rank));
  if (load != NULL)
    gtk_check_button_set_active (GTK_CHECK_BUTTON (load), TRUE);
}

GtkWidget *
wick_ranks_page_new (WickRankJob *job, WickWindow *window, const char *merged)
{
  WickRanksPage *self = g_object_new (WICK_TYPE_RANKS_PAGE, NULL);
  self->job = job;
  g_weak_ref_set (&self->window, window);
  self->merged = g_strdup (merged);
  if (window != NULL)
    g_signal_connect_object (wick_window_get_timeline (window), "process-toggled",
                             G_CALLBACK (on_process_toggled), self, 0);
  self->full = g_new (gboolean, MAX (job->ranks->len, 1));
  for (guint i = 0; i < job->ranks->len; i++)
    self->full[i] = job->ranks->len <= WICK_RANKS_PAGE_SUMMARY_ABOVE;
  self->scroll = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (self->scroll), GTK_POLICY_NEVER,
                                  GTK_POLICY_AUTOMATIC);
  gtk_widget_set_vexpand (self->scroll, TRUE);
  gtk_widget_set_parent (self->scroll, GTK_WIDGET (self));
  fill (self);
  return GTK_WIDGET (self);
}

static void
fill (WickRanksPage *self)
{
  const WickRankJob *job = self->job;
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  GtkWidget *cols = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  GtkWidget *left = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  GtkWidget *right = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  GtkWidget *heat, *grid;
  g_autofree char *summary = NULL;
  int row;

  g_hash_table_remove_all (self->entries);
  g_hash_table_remove_all (self->pins);
  g_hash_table_remove_all (self->loads);
  self->max_steps = 0;
  self->max_step_ns = self->max_exposed_ns = 0;
  self->min_step_ns = self->min_exposed_ns = G_MAXINT64;
  for (guint i = 0; i < job->ranks->len; i++)
    {
      const WickJobRank *r = &g_array_index (job->ranks, WickJobRank, i);
      self->max_steps = MAX (self->max_steps, r->partial->steps->len);
      for (guint s = 0; s < r->partial->steps->len; s++)
        {
          const WickRankStep *st = &g_array_index (r->partial->steps, WickRankStep, s);
          self->max_step_ns = MAX (self->max_step_ns, st->end_ns - st->start_ns);
          self->max_exposed_ns = MAX (self->max_exposed_ns, st->exposed_comm_ns);
          self->min_step_ns = MIN (self->min_step_ns, st->end_ns - st->start_ns);
          self->min_exposed_ns = MIN (self->min_exposed_ns, st->exposed_comm_ns);
        }
    }
  gtk_widget_set_margin_start (box, 18);
  gtk_widget_set_margin_end (box, 18);
  gtk_widget_set_margin_top (box, 12);
  gtk_widget_set_margin_bottom (box, 18);

  if (job->pinned_rank >= 0)
    summary = g_strdup_printf (_ ("%u ranks, %u collectives, clocks aligned to rank %d (pinned) "
                                  "from the collectives’ ends"),
                               job->ranks->len, job->collectives->len, job->reference_rank);
  else if (job->reference_rank >= 0)
    summary = g_strdup_printf (_ ("%u ranks, %u collectives, clocks aligned to rank %d from the "
                                  "collectives’ ends"),
                               job->ranks->len, job->collectives->len, job->reference_rank);
  else
    summary = g_strdup_printf (_ ("%u ranks, %u collectives; no collective shared between ranks: "
                                  "every rank on its own wall clock"),
                               job->ranks->len, job->collectives->len);
  {
    GtkWidget *t = label_new (summary, FALSE, 0);
    gtk_widget_add_css_class (t, "title-3");
    gtk_label_set_wrap (GTK_LABEL (t), TRUE); /* a 700 px window */
    gtk_box_append (GTK_BOX (box), t);
  }
  for (guint i = 0; i < job->notes->len; i++)
    {
      GtkWidget *l = label_new (job->notes->pdata[i], TRUE, 0);
      gtk_label_set_wrap (GTK_LABEL (l), TRUE);
      gtk_box_append (GTK_BOX (box), l);
    }

  section (box, _ ("Ranks × steps"));
  heat = gtk_drawing_area_new ();
  gtk_drawing_area_set_content_height (
    GTK_DRAWING_AREA (heat),
    (int)(26 + MIN (28, 520 / MAX (job->ranks->len, 1)) * job->ranks->len));
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (heat), draw_heat, self, NULL);
  gtk_widget_set_hexpand (heat, TRUE);
  gtk_box_append (GTK_BOX (box), heat);

  if (self->min_step_ns == G_MAXINT64)
    self->min_step_ns = self->min_exposed_ns = 0;
  gtk_box_append (GTK_BOX (box), cols);
  gtk_box_append (GTK_BOX (cols), left);
  gtk_box_append (GTK_BOX (cols), right);
  gtk_widget_set_hexpand (right, TRUE);
  gtk_widget_set_overflow (box, GTK_OVERFLOW_HIDDEN);

  /* offsets, pinned or set by hand */
  section (left, _ ("Clock offsets"));
  {
    GtkWidget *hint = label_new (_ ("Pin a rank to make its clock the reference; type an offset "
                                    "(µs, or with ns/ms/s) and press Enter to set one by hand, "
                                    "empty to estimate it again."),
                                 TRUE, 0);
    gtk_label_set_wrap (GTK_LABEL (hint), TRUE);
    gtk_label_set_max_width_chars (GTK_LABEL (hint), 60);
    gtk_box_append (GTK_BOX (left), hint);
  }
  if (self->error != NULL)
    {
      GtkWidget *l = label_new (self->error, FALSE, 0);
      gtk_widget_add_css_class (l, "error");
      gtk_label_set_wrap (GTK_LABEL (l), TRUE);
      gtk_box_append (GTK_BOX (left), l);
    }
  grid = grid_new ();
  {
    const char *h[] = { _ ("Rank"),    _ ("Offset"),  _ ("From"), _ ("Spread"), _ ("Collectives"),
                        _ ("Waiting"), _ ("Pin"),    _ ("Set"),  _ ("Loaded") };
    attach_row (GTK_GRID (grid), 0, h, G_N_ELEMENTS (h), TRUE);
  }
  {
    GtkCheckButton *group = NULL;
    for (guint i = 0; i < job->ranks->len; i++)
      {
        const WickJobRank *r = &g_array_index (job->ranks, WickJobRank, i);
        g_autofree char *rank = g_strdup_printf ("%d", r->rank);
        g_autofree char *off = duration_text (r->offset_ns);
        g_autofree char *spread = r->offset_spread_ns >= 0 ? duration_text (r->offset_spread_ns)
                                                           : g_strdup ("—");
        g_autofree char *n = g_strdup_printf ("%u", r->collectives);
        g_autofree char *wait = duration_text (r->wait_ns);
        const char *cells[] = { rank, off, source_text (r), spread, n, wait };
        GtkWidget *pin = gtk_check_button_new ();
        GtkWidget *entry = gtk_entry_new ();
        gboolean set = g_strcmp0 (r->offset_source, "set") == 0;
        attach_row (GTK_GRID (grid), (int)i + 1, cells, G_N_ELEMENTS (cells), FALSE);

        g_object_set_data (G_OBJECT (pin), "wick-rank", GINT_TO_POINTER (r->rank));
        if (group != NULL)
          gtk_check_button_set_group (GTK_CHECK_BUTTON (pin), group);
        else
          group = GTK_CHECK_BUTTON (pin);
        gtk_check_button_set_active (GTK_CHECK_BUTTON (pin), r->rank == job->pinned_rank);
        gtk_widget_set_tooltip_text (pin, _ ("Keep this rank’s clock as the reference"));
        g_signal_connect (pin, "toggled", G_CALLBACK (on_pin_toggled), self);
        gtk_widget_set_sensitive (pin, !self->realigning);
        gtk_grid_attach (GTK_GRID (grid), pin, 6, (int)i + 1, 1, 1);
        g_hash_table_insert (self->pins, GINT_TO_POINTER (r->rank), pin);

        g_object_set_data (G_OBJECT (entry), "wick-rank", GINT_TO_POINTER (r->rank));
        gtk_editable_set_width_chars (GTK_EDITABLE (entry), 10);
        gtk_entry_set_placeholder_text (GTK_ENTRY (entry), _ ("µs"));
        if (set)
          {
            g_autofree char *us = g_strdup_printf ("%.3f", (double)r->offset_ns / 1e3);
            gtk_editable_set_text (GTK_EDITABLE (entry), us);
          }
        gtk_widget_set_tooltip_text (
          entry, r->rank == job->reference_rank
                   ? _ ("The reference: its offset is 0")
                   : _ ("This rank’s offset on the reference clock, by hand (Enter)"));
        gtk_widget_set_sensitive (entry, !self->realigning && r->rank != job->reference_rank);
        g_signal_connect (entry, "activate", G_CALLBACK (on_offset_activate), self);
        gtk_grid_attach (GTK_GRID (grid), entry, 7, (int)i + 1, 1, 1);
        g_hash_table_insert (self->entries, GINT_TO_POINTER (r->rank), entry);
        {
          GtkWidget *load = gtk_check_button_new ();
          g_object_set_data (G_OBJECT (load), "wick-rank", GINT_TO_POINTER (r->rank));
          gtk_check_button_set_active (GTK_CHECK_BUTTON (load), self->full[i]);
          gtk_widget_set_tooltip_text (
            load, _ ("On the timeline in full; unchecked, one summary row (its GPU busy share per "
                     "step) and its file not read"));
          gtk_widget_set_sensitive (load, !self->realigning);
          gtk_widget_set_halign (load, GTK_ALIGN_CENTER);
          g_signal_connect (load, "toggled", G_CALLBACK (on_load_toggled), self);
          gtk_grid_attach (GTK_GRID (grid), load, 8, (int)i + 1, 1, 1);
          g_hash_table_insert (self->loads, GINT_TO_POINTER (r->rank), load);
        }
      }
  }
  gtk_box_append (GTK_BOX (left), sideways (grid));
  {
    GtkWidget *row_box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
    GtkWidget *reset = gtk_button_new_with_label (_ ("Estimate Every Offset"));
    gtk_widget_set_sensitive (reset, !self->realigning
                                       && (self->pin_rank >= 0 || self->set_ranks->len > 0));
    g_signal_connect (reset, "clicked", G_CALLBACK (on_reset_clicked), self);
    gtk_box_append (GTK_BOX (row_box), reset);
    if (self->realigning)
      gtk_box_append (GTK_BOX (row_box), label_new (_ ("Re-aligning the timeline…"), TRUE, 0));
    gtk_box_append (GTK_BOX (left), row_box);
  }

  /* stragglers */
  section (right, _ ("Stragglers (delay they caused the others)"));
  grid = grid_new ();
  {
    const char *h[] = { _ ("Rank"), _ ("Delay caused"), _ ("Last in") };
    attach_row (GTK_GRID (grid), 0, h, G_N_ELEMENTS (h), TRUE);
  }
  for (guint i = 0; i < job->stragglers->len && i < 16; i++)
    {
      const WickJobStraggler *s = &g_array_index (job->stragglers, WickJobStraggler, i);
      g_autofree char *rank = g_strdup_printf ("%d", s->rank);
      g_autofree char *d = duration_text (s->delay_ns);
      g_autofree char *n = g_strdup_printf (
        ngettext ("%u collective", "%u collectives", s->collectives), s->collectives);
      const char *cells[] = { rank, d, n };
      attach_row (GTK_GRID (grid), (int)i + 1, cells, G_N_ELEMENTS (cells), FALSE);
    }
  if (job->stragglers->len == 0)
    gtk_grid_attach (GTK_GRID (grid), label_new (_ ("none"), TRUE, 0), 0, 1, 3, 1);
  gtk_box_append (GTK_BOX (right), grid);

  /* collectives: the whole width, scrolled sideways when narrower */
  section (box, _ ("Collectives (* matched by order: no Seq)"));
  grid = grid_new ();
  {
    const char *h[] = { _ ("Group"), _ ("Seq"),       _ ("Name"),    _ ("Ranks"),        _ ("Size"),
                        _ ("Skew"),  _ ("Last rank"), _ ("Latency"), _ ("Bus bandwidth") };
    attach_row (GTK_GRID (grid), 0, h, G_N_ELEMENTS (h), TRUE);
  }
  row = 1;
  for (guint i = 0; i < job->collectives->len && i < MAX_COLLECTIVE_ROWS; i++, row++)
    {
      const WickJobCollective *c = job->collectives->pdata[i];
      g_autofree char *seq
        = g_strdup_printf ("%" G_GINT64_FORMAT "%s", c->seq, c->by_seq ? "" : "*");
      g_autofree char *ranks = g_strdup_printf ("%u", c->ranks->len);
      g_autofree char *size = c->bytes ? wick_format_bytes (c->bytes) : g_strdup ("—");
      g_autofree char *skew = duration_text (c->arrival_skew_ns);
      g_autofree char *last = g_strdup_printf ("%d", c->last_rank);
      g_autofree char *lat = duration_text (c->latency_ns);
      g_autofree char *bw
        = c->busbw_gbps >= 0 ? g_strdup_printf ("%.1f GB/s", c->busbw_gbps) : g_strdup ("—");
      const char *cells[]
        = { c->group[0] ? c->group : "—", seq, c->name, ranks, size, skew, last, lat, bw };
      attach_row (GTK_GRID (grid), row, cells, G_N_ELEMENTS (cells), FALSE);
    }
  if (job->collectives->len > MAX_COLLECTIVE_ROWS)
    {
      g_autofree char *more
        = g_strdup_printf (_ ("%u more (wick-trace ranks --json lists every one)"),
                           job->collectives->len - MAX_COLLECTIVE_ROWS);
      gtk_grid_attach (GTK_GRID (grid), label_new (more, TRUE, 0), 0, row, 9, 1);
    }
  gtk_box_append (GTK_BOX (box), sideways (grid));

  {
    /* keep the scroll position across a refill */
    GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (self->scroll));
    double v = gtk_adjustment_get_value (adj);
    gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (self->scroll), box);
    gtk_adjustment_set_value (adj, v);
  }
}

GtkWidget *
wick_ranks_page_get_offset_entry (WickRanksPage *self, int rank)
{
  return g_hash_table_lookup (self->entries, GINT_TO_POINTER (rank));
}

GtkWidget *
wick_ranks_page_get_load_button (WickRanksPage *self, int rank)
{
  return g_hash_table_lookup (self->loads, GINT_TO_POINTER (rank));
}

GtkWidget *
wick_ranks_page_get_pin_button (WickRanksPage *self, int rank)
{
  return g_hash_table_lookup (self->pins, GINT_TO_POINTER (rank));
}

gboolean
wick_ranks_page_is_realigning (WickRanksPage *self)
{
  return self->realigning;
}

/* ------------------------------------------------------------------------ */
/* Opening several files as one job */

typedef struct
{
  GPtrArray *paths; /* char* */
  char *merged;
  WickRankJob *job;
  GHashTable *labels; /* an archive's extracted file → "ARCHIVE/MEMBER" */
  GPtrArray *notes;   /* what the archive or directory left out */
} JobTask;

static void
job_task_free (gpointer data)
{
  JobTask *t = data;
  g_ptr_array_unref (t->paths);
  g_free (t->merged);
  g_clear_pointer (&t->job, wick_rank_job_free);
  g_clear_pointer (&t->labels, g_hash_table_unref);
  g_clear_pointer (&t->notes, g_ptr_array_unref);
  g_free (t);
}

static void
job_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  JobTask *t = data;
  GError *error = NULL;
  g_autofree char *dir = g_build_filename (g_get_user_cache_dir (), "wick", "jobs", NULL);

  /* a directory or a .zip/.tar(.gz) of the ranks: its traces (an archive's
   * extracted under the cache, kept while the job is open: a re-alignment
   * reads them again) */
  {
    g_autoptr (GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
    t->labels = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
    t->notes = g_ptr_array_new_with_free_func (g_free);
    for (guint i = 0; i < t->paths->len; i++)
      {
        const char *p = t->paths->pdata[i];
        g_autoptr (GPtrArray) found = NULL;
        g_autofree char *digest = NULL, *into = NULL;
        if (!wick_job_is_container (p))
          {
            g_ptr_array_add (paths, g_strdup (p));
            continue;
          }
        digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, p, -1);
        into = g_strdup_printf ("%s/files-%.16s", dir, digest);
        found = wick_job_expand (p, into, t->labels, t->notes, cancellable, &error);
        if (found == NULL)
          {
            g_task_return_error (task, error);
            return;
          }
        for (guint k = 0; k < found->len; k++)
          g_ptr_array_add (paths, g_strdup (found->pdata[k]));
      }
    g_ptr_array_unref (t->paths);
    t->paths = g_steal_pointer (&paths);
  }
  t->job = wick_ranks_reduce_files ((const char *const *)t->paths->pdata, t->paths->len, 0,
                                    cancellable, &error);
  if (t->job == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      g_task_return_new_error (task, G_IO_ERROR, g_io_error_from_errno (errno), "%s: %s", dir,
                               g_strerror (errno));
      return;
    }
  {
    /* one name per set of files, so opening the same job again rewrites it */
    g_autoptr (GString) key = g_string_new (NULL);
    g_autofree char *base = g_path_get_basename (t->paths->pdata[0]);
    g_autofree char *digest = NULL;
    g_autofree char *name = NULL;
    char *dot;
    for (guint i = 0; i < t->paths->len; i++)
      g_string_append_printf (key, "%s\n", (const char *)t->paths->pdata[i]);
    digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, key->str, -1);
    if ((dot = strchr (base, '.')) != NULL)
      *dot = '\0';
    name = g_strdup_printf ("%s-job-of-%u-ranks-%.8s.json", base, t->paths->len, digest);
    t->merged = g_build_filename (dir, name, NULL);
  }
  {
    /* many ranks: each a summary row until loaded (the page's Loaded column) */
    g_autofree gboolean *full = g_new0 (gboolean, MAX (t->job->ranks->len, 1));
    gboolean many = t->job->ranks->len > WICK_RANKS_PAGE_SUMMARY_ABOVE;
    if (!wick_rank_job_write_merged_some (t->job, t->merged, many ? full : NULL, cancellable,
                                          &error))
      {
        g_task_return_error (task, error);
        return;
      }
  }
  g_task_return_boolean (task, TRUE);
}

static void
job_done (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GError) error = NULL;
  WickWindow *window = WICK_WINDOW (source);
  JobTask *t = g_task_get_task_data (G_TASK (result));

  wick_window_hide_banner (window, "ranks-progress");
  if (!g_task_propagate_boolean (G_TASK (result), &error))
    {
      g_autofree char *msg = g_strdup_printf (_ ("The ranks were not opened: %s"), error->message);
      wick_window_show_banner (window, "ranks-error", msg, NULL, NULL);
      return;
    }
  {
    g_autoptr (GFile) file = g_file_new_for_path (t->merged);
    GtkWidget *page;
    /* the job's notes name an archive's members, not the extracted files */
    for (guint i = 0; i < t->job->ranks->len; i++)
      {
        WickJobRank *r = &g_array_index (t->job->ranks, WickJobRank, i);
        const char *label = g_hash_table_lookup (t->labels, r->file);
        if (label != NULL)
          {
            g_free (r->file);
            r->file = g_strdup (label);
          }
      }
    for (guint i = 0; i < t->notes->len; i++)
      g_ptr_array_add (t->job->notes, g_strdup (t->notes->pdata[i]));
    page = wick_ranks_page_new (g_steal_pointer (&t->job), window, t->merged);
    wick_window_add_page (window, "ranks", NULL, NULL, page);
    wick_window_load_file (window, file);
  }
}

void
wick_window_open_job (WickWindow *window, GFile **files, guint n_files)
{
  JobTask *t = g_new0 (JobTask, 1);
  g_autoptr (GTask) task = g_task_new (window, NULL, job_done, NULL);
  g_autofree char *msg = NULL;

  t->paths = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < n_files; i++)
    {
      char *path = g_file_get_path (files[i]);
      if (path != NULL)
        g_ptr_array_add (t->paths, path);
    }
  g_task_set_task_data (task, t, job_task_free);
  msg = g_strdup_printf (ngettext ("Aligning %u rank…", "Aligning %u ranks…", t->paths->len),
                         t->paths->len);
  wick_window_show_banner (window, "ranks-progress", msg, NULL, NULL);
  g_task_run_in_thread (task, job_thread);
}
