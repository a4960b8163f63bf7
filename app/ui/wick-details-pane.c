/* wick-details-pane.c — see wick-details-pane.h for the contract. */
#include "wick-details-pane.h"
#include "wick-details-pane-private.h"

#include <adwaita.h>

#include <glib/gi18n.h>
#include <string.h>

#include "model/wick-gpu-analysis.h"
#include "model/wick-json-scanner.h"
#include "model/wick-range-summary.h"
#include "model/wick-span-costs.h"
#include "wick-format.h"
#include "wick-record-text.h"
#include "wick-timeline-scene.h"

#define MAX_LISTED 200

struct _WickDetailsPane
{
  WickPage parent_instance;
  /* Template children (data/ui/wick-details-pane.ui). */
  GtkWidget *scrolled;
  GtkWidget *range_box; /* summary of the box-selected range, above the record */
  GtkWidget *title;
  GtkWidget *grid;     /* the record's fields, key and value by row */
  GtkWidget *hint;     /* shown while nothing is selected */
  GtkWidget *contents; /* the record's headings and lists */

  guint range_source;
  guint grid_rows;
  GtkWidget *args_grid; /* the record's args, key and value by row (in contents) */
  guint args_rows;
  WickDocument *document; /* the session's, as of the last refresh */
  WickSpanIndex *span_index;
};

G_DEFINE_FINAL_TYPE (WickDetailsPane, wick_details_pane, WICK_TYPE_PAGE)

static char *track_text (WickTracks *tracks, guint32 track);
static void show_launched (WickDetailsPane *self, guint index);
static void add_args (WickDetailsPane *self, const char *args);
static gboolean is_chrome (WickDocument *document);

static void
add_field (WickDetailsPane *self, const char *key, const char *value)
{
  GtkWidget *k = gtk_label_new (key);
  gtk_label_set_xalign (GTK_LABEL (k), 1.0);
  gtk_label_set_yalign (GTK_LABEL (k), 0.0);
  gtk_widget_add_css_class (k, "dim-label");
  GtkWidget *v = gtk_label_new (value ? value : "—");
  gtk_label_set_xalign (GTK_LABEL (v), 0.0);
  gtk_label_set_selectable (GTK_LABEL (v), TRUE);
  /* Selectable with the mouse, but never focused (and fully selected) by default. */
  gtk_widget_set_focusable (v, FALSE);
  gtk_label_set_wrap (GTK_LABEL (v), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (v), PANGO_WRAP_WORD_CHAR);
  gtk_widget_set_hexpand (v, TRUE);
  gtk_grid_attach (GTK_GRID (self->grid), k, 0, self->grid_rows, 1, 1);
  gtk_grid_attach (GTK_GRID (self->grid), v, 1, self->grid_rows, 1, 1);
  self->grid_rows++;
}

static void
add_field_take (WickDetailsPane *self, const char *key, char *value)
{
  add_field (self, key, value);
  g_free (value);
}

static void
add_heading (WickDetailsPane *self, const char *text)
{
  GtkWidget *label = gtk_label_new (text);
  gtk_label_set_xalign (GTK_LABEL (label), 0.0);
  gtk_widget_add_css_class (label, "heading");
  gtk_widget_set_margin_top (label, 12);
  gtk_box_append (GTK_BOX (self->contents), label);
}

typedef struct
{
  WickSelection *selection;
  WickRecordType type;
  gint64 index;
  guint event_kind; /* WICK_EVENT_NONE: the record alone */
  gint64 event_index;
} Link;

static void
on_row_activated (GtkListBox *list, GtkListBoxRow *row, gpointer user_data)
{
  Link *link = g_object_get_data (G_OBJECT (row), "wick-link");
  if (link == NULL)
    return;
  if (link->event_kind != WICK_EVENT_NONE)
    wick_selection_set_record_event (link->selection, link->type, link->index, link->event_kind,
                                     link->event_index);
  else
    wick_selection_set_record (link->selection, link->type, link->index);
}

static GtkWidget *
add_list (WickDetailsPane *self)
{
  GtkWidget *list = gtk_list_box_new ();
  gtk_widget_add_css_class (list, "boxed-list");
  gtk_list_box_set_selection_mode (GTK_LIST_BOX (list), GTK_SELECTION_NONE);
  g_signal_connect (list, "row-activated", G_CALLBACK (on_row_activated), NULL);
  gtk_box_append (GTK_BOX (self->contents), list);
  return list;
}

static void
add_list_row (WickDetailsPane *self, GtkWidget *list, const char *title, const char *subtitle,
              WickRecordType type, gint64 index)
{
  GtkWidget *row = gtk_list_box_row_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  gtk_widget_set_margin_start (box, 8);
  gtk_widget_set_margin_end (box, 8);
  gtk_widget_set_margin_top (box, 4);
  gtk_widget_set_margin_bottom (box, 4);
  GtkWidget *t = gtk_label_new (title);
  gtk_label_set_xalign (GTK_LABEL (t), 0.0);
  gtk_label_set_ellipsize (GTK_LABEL (t), PANGO_ELLIPSIZE_END);
  GtkWidget *s = gtk_label_new (subtitle);
  gtk_label_set_xalign (GTK_LABEL (s), 0.0);
  gtk_label_set_ellipsize (GTK_LABEL (s), PANGO_ELLIPSIZE_END);
  gtk_widget_add_css_class (s, "dim-label");
  gtk_widget_add_css_class (s, "caption");
  gtk_box_append (GTK_BOX (box), t);
  gtk_box_append (GTK_BOX (box), s);
  gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), box);
  Link *link = g_new (Link, 1);
  *link = (Link){ wick_page_get_selection (WICK_PAGE (self)), type, index, WICK_EVENT_NONE, -1 };
  g_object_set_data_full (G_OBJECT (row), "wick-link", link, g_free);
  gtk_list_box_append (GTK_LIST_BOX (list), row);
}

/* A row selecting an event of the track model (a Chrome device slice: no
 * document record). */
static void
add_event_row (WickDetailsPane *self, GtkWidget *list, const char *title, const char *subtitle,
               WickEventRef ref)
{
  add_list_row (self, list, title, subtitle, WICK_RECORD_NONE, -1);
  GtkWidget *row = gtk_widget_get_last_child (list);
  Link *link = g_object_get_data (G_OBJECT (row), "wick-link");
  link->event_kind = ref.kind;
  link->event_index = ref.index;
  if (ref.kind == WICK_EVENT_SLICE)
    {
      link->type = WICK_RECORD_SPAN;
      link->index = ref.index;
    }
}

static void
clear (WickDetailsPane *self)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (self->contents)))
    gtk_box_remove (GTK_BOX (self->contents), child);
  while ((child = gtk_widget_get_first_child (self->grid)))
    gtk_grid_remove (GTK_GRID (self->grid), child);
  self->grid_rows = 0;
  self->args_grid = NULL;
  self->args_rows = 0;
  gtk_label_set_text (GTK_LABEL (self->title), NULL);
  gtk_widget_set_tooltip_text (self->title, NULL);
  gtk_widget_set_visible (self->hint, FALSE);
}

static char *
rel_time (WickDetailsPane *self, guint64 t)
{
  guint64 origin = wick_document_origin_ns (self->document);
  g_autofree char *rel = wick_format_duration (t >= origin ? t - origin : 0);
  return g_strdup_printf ("+%s  (%" G_GUINT64_FORMAT " ns)", rel, t);
}

static char *
bytes_text (guint64 bytes)
{
  g_autofree char *human = wick_format_bytes (bytes);
  return g_strdup_printf ("%s (%" G_GUINT64_FORMAT " B)", human, bytes);
}

static void
show_span_contents (WickDetailsPane *self, guint index)
{
  WickDocument *doc = self->document;
  guint n;
  const guint32 *ops = wick_span_index_get_ops (self->span_index, index, &n);
  if (n > 0)
    {
      g_autofree char *heading = g_strdup_printf (g_dngettext (NULL, "%u op", "%u ops", n), n);
      add_heading (self, heading);
      GtkWidget *list = add_list (self);
      const WickOp *all = wick_document_get_ops (doc, NULL);
      for (guint i = 0; i < MIN (n, MAX_LISTED); i++)
        {
          const WickOp *op = &all[ops[i]];
          g_autofree char *shape = wick_format_shape (doc, op->shape_offset, op->rank);
          g_autofree char *dur = wick_format_duration (op->duration_ns);
          g_autofree char *out = wick_format_bytes (op->output_dense_bytes);
          g_autofree char *sub
            = g_strdup_printf ("%s %s · %s · %s · out %s", wick_document_str (doc, op->dtype),
                               shape, wick_document_str (doc, op->device), dur, out);
          add_list_row (self, list, wick_document_str (doc, op->op_name), sub, WICK_RECORD_OP,
                        ops[i]);
        }
    }
  const guint32 *tensors = wick_span_index_get_tensors (self->span_index, index, &n);
  if (n > 0)
    {
      g_autofree char *heading
        = g_strdup_printf (g_dngettext (NULL, "%u tensor", "%u tensors", n), n);
      add_heading (self, heading);
      GtkWidget *list = add_list (self);
      const WickTensor *all = wick_document_get_tensors (doc, NULL);
      for (guint i = 0; i < MIN (n, MAX_LISTED); i++)
        {
          const WickTensor *t = &all[tensors[i]];
          g_autofree char *shape = wick_format_shape (doc, t->shape_offset, t->rank);
          g_autofree char *bytes = wick_format_bytes (t->dense_bytes);
          g_autofree char *sub = g_strdup_printf (
            "%s · %s %s · %s · %s", wick_category_name (t->category),
            wick_document_str (doc, t->dtype), shape, wick_document_str (doc, t->device), bytes);
          const char *label = wick_document_str (doc, t->label);
          add_list_row (self, list, label ? label : wick_document_str (doc, t->tensor_id), sub,
                        WICK_RECORD_TENSOR, tensors[i]);
        }
    }
  const guint32 *intervals = wick_span_index_get_device_intervals (self->span_index, index, &n);
  if (n > 0)
    {
      add_heading (self, _ ("Device intervals"));
      GtkWidget *list = add_list (self);
      const WickDeviceInterval *all = wick_document_get_device_intervals (doc, NULL);
      for (guint i = 0; i < MIN (n, MAX_LISTED); i++)
        {
          const WickDeviceInterval *iv = &all[intervals[i]];
          g_autofree char *dur = wick_format_duration (iv->duration_ns);
          g_autofree char *title
            = g_strdup_printf ("%s · stream %s", wick_document_str (doc, iv->device),
                               wick_document_str (doc, iv->stream_id));
          g_autofree char *sub
            = g_strdup_printf ("%s · %s", wick_document_str (doc, iv->backend), dur);
          add_list_row (self, list, title, sub, WICK_RECORD_DEVICE_INTERVAL, intervals[i]);
        }
    }
}

/* A host slice of a Chrome/PyTorch trace: what it has (no candle-graph
 * step, id, measured flag or bytes), what it launched, its args. */
static void
show_chrome_slice (WickDetailsPane *self, guint index)
{
  WickDocument *doc = self->document;
  WickTracks *tracks = wick_document_get_tracks (doc);
  const WickSpan *spans = wick_document_get_spans (doc, NULL);
  const WickSpan *span = &spans[index];
  const char *category = wick_tracks_span_category (tracks, index);
  add_field (self, _ ("Category"), category && *category ? category : NULL);
  add_field_take (self, _ ("Thread"), track_text (tracks, wick_tracks_span_track (tracks, index)));
  add_field_take (self, _ ("Start"), rel_time (self, span->start_ns));
  if (span->flags & WICK_SPAN_FLAG_CLOSED)
    add_field_take (self, _ ("Duration"), wick_format_duration (span->duration_ns));
  else
    add_field (self, _ ("Duration"), _ ("open (no end)"));
  add_field_take (self, _ ("Self time"),
                  wick_format_duration (wick_span_index_get_self_ns (self->span_index, index)));
  add_field_take (self, _ ("Depth"), g_strdup_printf ("%u", span->depth));
  add_field (self, _ ("Parent"),
             span->parent >= 0 ? wick_document_str (doc, spans[span->parent].name)
                               : _ ("none (root)"));
  guint n_children;
  wick_span_index_get_children (self->span_index, index, &n_children);
  add_field_take (self, _ ("Children"), g_strdup_printf ("%u", n_children));
  if (span->parent >= 0)
    {
      const WickSpan *parent = &spans[span->parent];
      add_heading (self, _ ("Parent"));
      GtkWidget *list = add_list (self);
      g_autofree char *dur = wick_format_duration (parent->duration_ns);
      const char *pcat = wick_tracks_span_category (tracks, (guint32)span->parent);
      g_autofree char *sub = g_strdup_printf ("%s · %s", pcat ? pcat : "", dur);
      add_list_row (self, list, wick_document_str (doc, parent->name), sub, WICK_RECORD_SPAN,
                    span->parent);
    }
  show_launched (self, index);
  add_args (self, wick_tracks_event_args (tracks, (WickEventRef){ WICK_EVENT_SLICE, index }));
}

static void
show_span (WickDetailsPane *self, guint index)
{
  WickDocument *doc = self->document;
  const WickSpan *span = &wick_document_get_spans (doc, NULL)[index];
  gtk_label_set_text (GTK_LABEL (self->title), wick_document_str (doc, span->name));
  if (is_chrome (doc))
    {
      const char *name = wick_document_str (doc, span->name);
      gtk_widget_set_tooltip_text (self->title,
                                   name && g_utf8_strlen (name, -1) > 80 ? name : NULL);
      show_chrome_slice (self, index);
      return;
    }
  add_field (self, _ ("Kind"), wick_span_kind_name (span->kind));
  add_field (self, _ ("Step"), wick_step_name (span->step));
  add_field (self, _ ("Id"), wick_document_str (doc, span->id));
  if (span->parent >= 0)
    {
      /* "name (id)"; an imported span (Chrome) has no id: its name alone */
      const WickSpan *parent = &wick_document_get_spans (doc, NULL)[span->parent];
      const char *parent_id = wick_document_str (doc, parent->id);
      add_field_take (self, _ ("Parent"),
                      parent_id && *parent_id ? g_strdup_printf (
                        "%s (%s)", wick_document_str (doc, parent->name), parent_id)
                                              : g_strdup (wick_document_str (doc, parent->name)));
    }
  else
    add_field (self, _ ("Parent"),
               span->parent_id ? wick_document_str (doc, span->parent_id) : _ ("none (root)"));
  add_field_take (self, _ ("Start"), rel_time (self, span->start_ns));
  if (span->flags & WICK_SPAN_FLAG_CLOSED)
    add_field_take (self, _ ("Duration"), wick_format_duration (span->duration_ns));
  else
    add_field (self, _ ("Duration"), _ ("open (no span_end)"));
  add_field_take (self, _ ("Self time"),
                  wick_format_duration (wick_span_index_get_self_ns (self->span_index, index)));
  add_field (self, _ ("Measured"), (span->flags & WICK_SPAN_FLAG_MEASURED) ? _ ("yes") : _ ("no"));
  add_field_take (self, _ ("Depth"), g_strdup_printf ("%u", span->depth));
  add_field_take (self, _ ("Allocated here"),
                  bytes_text (wick_span_index_get_bytes_allocated (self->span_index, index)));
  add_field_take (self, _ ("Freed here"),
                  bytes_text (wick_span_index_get_bytes_freed (self->span_index, index)));
  guint n_children;
  wick_span_index_get_children (self->span_index, index, &n_children);
  add_field_take (self, _ ("Children"), g_strdup_printf ("%u", n_children));
  if (span->parent >= 0)
    {
      const WickSpan *parent = &wick_document_get_spans (doc, NULL)[span->parent];
      add_heading (self, _ ("Parent"));
      GtkWidget *list = add_list (self);
      g_autofree char *dur = wick_format_duration (parent->duration_ns);
      g_autofree char *sub = g_strdup_printf ("%s · %s", wick_span_kind_name (parent->kind), dur);
      add_list_row (self, list, wick_document_str (doc, parent->name), sub, WICK_RECORD_SPAN,
                    span->parent);
    }
  show_span_contents (self, index);
}

static void
show_op (WickDetailsPane *self, guint index)
{
  WickDocument *doc = self->document;
  const WickOp *op = &wick_document_get_ops (doc, NULL)[index];
  gtk_label_set_text (GTK_LABEL (self->title), wick_document_str (doc, op->op_name));
  add_field (self, _ ("Record"), "op");
  add_field (self, _ ("Span"), wick_document_str (doc, op->span_id));
  const WickStr *inputs = wick_document_get_op_inputs (doc, op);
  GString *in = g_string_new (NULL);
  for (guint i = 0; inputs && i < op->n_inputs; i++)
    g_string_append_printf (in, "%s%s", i ? ", " : "", wick_document_str (doc, inputs[i]));
  add_field (self, _ ("Inputs"), in->len ? in->str : "—");
  g_string_free (in, TRUE);
  add_field (self, _ ("Output"), op->output ? wick_document_str (doc, op->output) : NULL);
  add_field_take (self, _ ("Shape"), wick_format_shape (doc, op->shape_offset, op->rank));
  add_field (self, _ ("Dtype"), wick_document_str (doc, op->dtype));
  add_field (self, _ ("Device"), wick_document_str (doc, op->device));
  add_field_take (self, _ ("Timestamp"), rel_time (self, op->timestamp_ns));
  add_field_take (self, _ ("Duration"), wick_format_duration (op->duration_ns));
  add_field_take (self, _ ("Input bytes"), bytes_text (op->input_dense_bytes));
  add_field_take (self, _ ("Output bytes"), bytes_text (op->output_dense_bytes));
}

static void
show_tensor (WickDetailsPane *self, guint index)
{
  WickDocument *doc = self->document;
  const WickTensor *t = &wick_document_get_tensors (doc, NULL)[index];
  gtk_label_set_text (GTK_LABEL (self->title), t->label ? wick_document_str (doc, t->label)
                                                        : wick_document_str (doc, t->tensor_id));
  add_field (self, _ ("Record"), "tensor");
  add_field (self, _ ("Tensor id"), wick_document_str (doc, t->tensor_id));
  add_field (self, _ ("Span"), wick_document_str (doc, t->span_id));
  add_field (self, _ ("Category"), wick_category_name (t->category));
  add_field_take (self, _ ("Shape"), wick_format_shape (doc, t->shape_offset, t->rank));
  add_field (self, _ ("Dtype"), wick_document_str (doc, t->dtype));
  add_field (self, _ ("Device"), wick_document_str (doc, t->device));
  add_field_take (self, _ ("Dense bytes"), bytes_text (t->dense_bytes));
  add_field (self, _ ("Requires grad"), t->requires_grad ? _ ("yes") : _ ("no"));
}

static void
show_memory (WickDetailsPane *self, guint index)
{
  WickDocument *doc = self->document;
  const WickMemoryEvent *m = &wick_document_get_memory (doc, NULL)[index];
  g_autofree char *title
    = g_strdup_printf ("%s %s", m->action == WICK_MEMORY_ALLOC ? "alloc" : "free",
                       wick_document_str (doc, m->storage_id));
  gtk_label_set_text (GTK_LABEL (self->title), title);
  add_field (self, _ ("Record"), "memory");
  add_field_take (self, _ ("Timestamp"), rel_time (self, m->timestamp_ns));
  add_field (self, _ ("Device"), wick_document_str (doc, m->device));
  add_field (self, _ ("Storage"), wick_document_str (doc, m->storage_id));
  add_field (self, _ ("Tensor id"), wick_document_str (doc, m->tensor_id));
  add_field (self, _ ("Span"), wick_document_str (doc, m->span_id));
  add_field (self, _ ("Op"), m->op_name ? wick_document_str (doc, m->op_name) : NULL);
  add_field_take (self, _ ("Bytes"), bytes_text (m->bytes));
  add_field (self, _ ("Category"), wick_category_name (m->category));
  add_field_take (self, _ ("Shape"), wick_format_shape (doc, m->shape_offset, m->rank));
  add_field (self, _ ("Dtype"), wick_document_str (doc, m->dtype));
}

static void
show_interval (WickDetailsPane *self, guint index)
{
  WickDocument *doc = self->document;
  const WickDeviceInterval *iv = &wick_document_get_device_intervals (doc, NULL)[index];
  gtk_label_set_text (GTK_LABEL (self->title), _ ("Device interval"));
  add_field (self, _ ("Span"), wick_document_str (doc, iv->span_id));
  add_field (self, _ ("Device"), wick_document_str (doc, iv->device));
  add_field (self, _ ("Stream"), wick_document_str (doc, iv->stream_id));
  add_field (self, _ ("Clock"), wick_document_str (doc, iv->clock_id));
  add_field (self, _ ("Backend"), wick_document_str (doc, iv->backend));
  add_field_take (self, _ ("Start (device clock)"),
                  g_strdup_printf ("%" G_GUINT64_FORMAT " ns", iv->start_ns));
  add_field_take (self, _ ("Duration"), wick_format_duration (iv->duration_ns));
  if (iv->span >= 0)
    show_span_contents (self, iv->span);
}

/* One arg in the compact table under "Arguments". */
static void
add_arg (WickDetailsPane *self, const char *key, gsize key_len, const char *value,
         gsize value_len)
{
  if (self->args_grid == NULL)
    {
      add_heading (self, _ ("Arguments"));
      self->args_grid = gtk_grid_new ();
      gtk_grid_set_column_spacing (GTK_GRID (self->args_grid), 12);
      gtk_grid_set_row_spacing (GTK_GRID (self->args_grid), 2);
      gtk_widget_set_name (self->args_grid, "args");
      gtk_box_append (GTK_BOX (self->contents), self->args_grid);
    }
  g_autofree char *k_text = g_utf8_make_valid (key, (gssize)key_len);
  g_autofree char *v_text = g_utf8_make_valid (value, (gssize)value_len);
  GtkWidget *k = gtk_label_new (k_text);
  gtk_label_set_xalign (GTK_LABEL (k), 1.0);
  gtk_label_set_yalign (GTK_LABEL (k), 0.0);
  gtk_widget_add_css_class (k, "dim-label");
  gtk_widget_add_css_class (k, "caption");
  GtkWidget *v = gtk_label_new (v_text);
  gtk_label_set_xalign (GTK_LABEL (v), 0.0);
  gtk_label_set_selectable (GTK_LABEL (v), TRUE);
  gtk_widget_set_focusable (v, FALSE);
  gtk_label_set_wrap (GTK_LABEL (v), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (v), PANGO_WRAP_WORD_CHAR);
  gtk_widget_add_css_class (v, "caption");
  gtk_widget_set_hexpand (v, TRUE);
  gtk_grid_attach (GTK_GRID (self->args_grid), k, 0, (int)self->args_rows, 1, 1);
  gtk_grid_attach (GTK_GRID (self->args_grid), v, 1, (int)self->args_rows, 1, 1);
  self->args_rows++;
}

#define MAX_ARGS 256              /* members shown */
#define MAX_ARG_TEXT (16 * 1024) /* bytes of one value shown */

/* The args object as written in the file: each member's value as its text
 * there (a number stays 1.939394, an array [4, 1, 1]); a string unquoted. A
 * value that is not an object is shown whole. */
static void
add_args (WickDetailsPane *self, const char *args)
{
  if (args == NULL || *args == '\0')
    return;
  gsize len = strlen (args);
  g_autoptr (GString) error = g_string_new (NULL);
  g_autofree char *scratch = g_malloc (len + 1);
  WickJsonScanner sc;
  gboolean first = TRUE;
  const char *key;
  gsize key_len;
  wick_json_scanner_init (&sc, args, args + len, error, scratch);
  wick_json_skip_whitespace (&sc);
  if (!wick_json_object_begin (&sc))
    {
      add_arg (self, "", 0, args, MIN (len, MAX_ARG_TEXT));
      return;
    }
  guint n = 0;
  while (wick_json_object_next (&sc, &first, &key, &key_len))
    {
      /* the key may sit in the scratch buffer: copied before the value is read */
      g_autofree char *k = g_strndup (key, key_len);
      wick_json_skip_whitespace (&sc);
      WickJsonType type;
      if (!wick_json_peek_type (&sc, &type))
        break;
      const char *start = sc.p;
      if (type == WICK_JSON_STRING)
        {
          const char *str;
          gsize str_len;
          if (!wick_json_read_string (&sc, &str, &str_len))
            break;
          if (n++ < MAX_ARGS)
            add_arg (self, k, key_len, str, MIN (str_len, MAX_ARG_TEXT));
        }
      else
        {
          if (!wick_json_skip_value (&sc))
            break;
          if (n++ < MAX_ARGS)
            add_arg (self, k, key_len, start, MIN ((gsize)(sc.p - start), MAX_ARG_TEXT));
        }
    }
  if (n > MAX_ARGS)
    {
      g_autofree char *more = g_strdup_printf (_ ("%u more not shown"), n - MAX_ARGS);
      add_arg (self, "…", strlen ("…"), more, strlen (more));
    }
}

/* Member @key of @args as written (a string unquoted), NULL when absent. */
static char *
arg_raw (const char *args, const char *key)
{
  if (args == NULL)
    return NULL;
  gsize len = strlen (args), want = strlen (key);
  g_autoptr (GString) error = g_string_new (NULL);
  g_autofree char *scratch = g_malloc (len + 1);
  WickJsonScanner sc;
  gboolean first = TRUE;
  const char *k;
  gsize k_len;
  wick_json_scanner_init (&sc, args, args + len, error, scratch);
  wick_json_skip_whitespace (&sc);
  if (!wick_json_object_begin (&sc))
    return NULL;
  while (wick_json_object_next (&sc, &first, &k, &k_len))
    {
      gboolean match = k_len == want && memcmp (k, key, want) == 0;
      wick_json_skip_whitespace (&sc);
      WickJsonType type;
      if (!wick_json_peek_type (&sc, &type))
        return NULL;
      const char *start = sc.p;
      if (type == WICK_JSON_STRING)
        {
          const char *str;
          gsize str_len;
          if (!wick_json_read_string (&sc, &str, &str_len))
            return NULL;
          if (match)
            return g_utf8_make_valid (str, (gssize)MIN (str_len, MAX_ARG_TEXT));
        }
      else
        {
          if (!wick_json_skip_value (&sc))
            return NULL;
          if (match)
            return g_utf8_make_valid (start, (gssize)MIN ((gsize)(sc.p - start), MAX_ARG_TEXT));
        }
    }
  return NULL;
}

static void
add_arg_field (WickDetailsPane *self, const char *label, const char *args, const char *key)
{
  g_autofree char *value = arg_raw (args, key);
  if (value != NULL)
    add_field (self, label, value);
}

static char *
track_text (WickTracks *tracks, guint32 track)
{
  guint n;
  const WickTrack *t = wick_tracks_get_tracks (tracks, &n);
  if (track >= n)
    return g_strdup ("—");
  g_autofree char *name = wick_track_display_name (tracks, track);
  return g_strdup_printf ("%s · %s", wick_track_kind_name (t[track].kind), name ? name : "—");
}

static char *
flow_end_text (WickTracks *tracks, const WickFlowEnd *end)
{
  g_autofree char *track = track_text (tracks, end->track);
  const char *event
    = end->event.kind != WICK_EVENT_NONE ? wick_tracks_event_name (tracks, end->event) : NULL;
  return g_strdup_printf ("%s @ %" G_GUINT64_FORMAT " ns%s%s", track, end->timestamp_ns,
                          event ? " · " : "", event ? event : "");
}

static gboolean
is_chrome (WickDocument *document)
{
  return wick_tracks_get_format (wick_document_get_tracks (document)) == WICK_TRACE_FORMAT_CHROME;
}

static const char *
device_kind_text (guint8 kind)
{
  switch (kind)
    {
      case WICK_DEVICE_KERNEL:
        return _ ("kernel");
      case WICK_DEVICE_MEMCPY:
        return _ ("memcpy");
      case WICK_DEVICE_MEMSET:
        return _ ("memset");
      case WICK_DEVICE_ANNOTATION:
        return _ ("GPU annotation");
      default:
        return _ ("device interval");
    }
}

/* "24 µs later" / "3 µs earlier": @b's start against @a's. */
static char *
offset_text (guint64 a, guint64 b)
{
  g_autofree char *d = wick_format_duration (b >= a ? b - a : a - b);
  return g_strdup_printf (b >= a ? _ ("%s later") : _ ("%s earlier"), d);
}

/* A kernel, memcpy, memset or GPU annotation of a Chrome trace: what it is,
 * where it ran, its launch geometry, its name's totals, the runtime call
 * that launched it (a link), its graph, its args as written. */
static void
show_device_slice (WickDetailsPane *self, guint32 index)
{
  WickDocument *doc = self->document;
  WickTracks *tracks = wick_document_get_tracks (doc);
  guint nd, n_spans;
  const WickDeviceSlice *all = wick_tracks_get_device_slices (tracks, &nd);
  const WickSpan *spans = wick_document_get_spans (doc, &n_spans);
  if (index >= nd)
    return;
  const WickDeviceSlice *d = &all[index];
  WickEventRef ref = { WICK_EVENT_DEVICE, index };
  /* before reading args: a first analysis interns texts, which may move
   * the string pool they are in */
  const WickGpuAnalysis *a = wick_gpu_analysis_get (doc);
  const char *args = wick_tracks_event_args (tracks, ref);
  add_field (self, _ ("Kind"), device_kind_text (d->kind));
  g_autofree char *stream = wick_track_display_name (tracks, d->track);
  add_field (self, _ ("Stream"), stream);
  add_field_take (self, _ ("Start"), rel_time (self, d->start_ns));
  add_field_take (self, _ ("Duration"), wick_format_duration (d->duration_ns));
  if (d->kind == WICK_DEVICE_KERNEL)
    {
      add_arg_field (self, _ ("Grid"), args, "grid");
      add_arg_field (self, _ ("Block"), args, "block");
      add_arg_field (self, _ ("Registers per thread"), args, "registers per thread");
      add_arg_field (self, _ ("Shared memory"), args, "shared memory");
      if (index < a->n_device && a->kernel_of_device[index] >= 0)
        {
          const WickGpuKernel *k
            = &g_array_index (a->kernels, WickGpuKernel, a->kernel_of_device[index]);
          g_autofree char *total = wick_format_duration (k->total_ns);
          add_field_take (self, _ ("This kernel"),
                          g_strdup_printf (g_dngettext (NULL, "%u instance, %s in all (%.1f %% of kernel time)",
                                                        "%u instances, %s in all (%.1f %% of kernel time)",
                                                        (gulong)k->count),
                                           (guint)k->count, total, 100.0 * k->share));
        }
    }
  else if (d->kind == WICK_DEVICE_MEMCPY || d->kind == WICK_DEVICE_MEMSET)
    {
      add_arg_field (self, _ ("Bytes"), args, "bytes");
      add_arg_field (self, _ ("Memory bandwidth (GB/s)"), args, "memory bandwidth (GB/s)");
    }
  if (d->flags & WICK_DEVICE_FLAG_GRAPH)
    {
      g_autofree char *graph = arg_raw (args, "graph id");
      g_autofree char *node = arg_raw (args, "graph node id");
      add_field_take (self, _ ("CUDA graph"),
                      graph ? g_strdup_printf (_ ("graph %s, node %s"), graph, node ? node : "—")
                            : g_strdup (_ ("a node of a graph launch")));
    }
  if (d->launcher < n_spans)
    {
      const WickSpan *l = &spans[d->launcher];
      g_autofree char *when = offset_text (l->start_ns, d->start_ns);
      add_field_take (self, _ ("Launched by"),
                      g_strdup_printf (_ ("%s (GPU start %s)"), wick_document_str (doc, l->name),
                                       when));
      add_heading (self, _ ("Launched by"));
      GtkWidget *list = add_list (self);
      g_autofree char *thread = track_text (tracks, wick_tracks_span_track (tracks, d->launcher));
      g_autofree char *dur = wick_format_duration (l->duration_ns);
      g_autofree char *sub = g_strdup_printf ("%s · %s", thread, dur);
      add_list_row (self, list, wick_document_str (doc, l->name), sub, WICK_RECORD_SPAN,
                    d->launcher);
    }
  else if (WICK_DEVICE_KIND_IS_WORK (d->kind))
    add_field (self, _ ("Launched by"), _ ("no launch in the trace"));
  guint32 flows[16];
  guint n_flows = wick_tracks_event_flows (tracks, ref, flows, G_N_ELEMENTS (flows));
  if (n_flows > 0)
    add_field_take (self, _ ("Flows"), g_strdup_printf ("%u", n_flows));
  add_args (self, args);
}

/* What a host slice of a Chrome trace launched (a runtime call's kernels,
 * copies and fills), each a link. */
static void
show_launched (WickDetailsPane *self, guint index)
{
  WickTracks *tracks = wick_document_get_tracks (self->document);
  guint32 launched[MAX_LISTED];
  guint n = wick_tracks_span_launched (tracks, index, launched, G_N_ELEMENTS (launched));
  if (n == 0)
    return;
  const WickSpan *span = &wick_document_get_spans (self->document, NULL)[index];
  const WickDeviceSlice *all = wick_tracks_get_device_slices (tracks, NULL);
  g_autofree char *heading
    = g_strdup_printf (g_dngettext (NULL, "Launched %u kernel, copy or fill",
                                    "Launched %u kernels, copies and fills", n),
                       n);
  add_heading (self, heading);
  GtkWidget *list = add_list (self);
  for (guint i = 0; i < MIN (n, MAX_LISTED); i++)
    {
      const WickDeviceSlice *d = &all[launched[i]];
      g_autofree char *dur = wick_format_duration (d->duration_ns);
      g_autofree char *when = offset_text (span->start_ns, d->start_ns);
      g_autofree char *stream = wick_track_display_name (tracks, d->track);
      g_autofree char *sub
        = g_strdup_printf ("%s · %s · %s · %s", device_kind_text (d->kind), stream, dur, when);
      add_event_row (self, list, wick_document_str (self->document, d->name), sub,
                     (WickEventRef){ WICK_EVENT_DEVICE, launched[i] });
    }
}

/* An event of the track model with no document record of its own: async
 * slice, counter sample, instant, Chrome device interval, or a flow. */
static void
show_event (WickDetailsPane *self, guint kind, guint32 index)
{
  WickTracks *tracks = wick_document_get_tracks (self->document);
  if (kind == WICK_TIMELINE_EVENT_FLOW)
    {
      guint n;
      const WickFlow *flows = wick_tracks_get_flows (tracks, &n);
      if (index >= n)
        return;
      const WickFlow *f = &flows[index];
      const char *name = wick_document_str (self->document, f->name);
      gtk_label_set_text (GTK_LABEL (self->title), name && *name ? name : _ ("Flow"));
      add_field (self, _ ("Kind"), _ ("flow"));
      add_field (self, _ ("Category"), wick_document_str (self->document, f->category));
      add_field (self, _ ("Id"), wick_document_str (self->document, f->id));
      add_field_take (self, _ ("From"), flow_end_text (tracks, &f->from));
      add_field_take (self, _ ("To"), flow_end_text (tracks, &f->to));
      add_field_take (self, _ ("Latency"),
                      wick_format_duration (f->to.timestamp_ns > f->from.timestamp_ns
                                              ? f->to.timestamp_ns - f->from.timestamp_ns
                                              : 0));
      return;
    }
  WickEventRef ref = { kind, index };
  const char *name = wick_tracks_event_name (tracks, ref);
  gtk_label_set_text (GTK_LABEL (self->title), name && *name ? name : _ ("Event"));
  gtk_widget_set_tooltip_text (self->title, name && g_utf8_strlen (name, -1) > 80 ? name : NULL);
  if (kind == WICK_EVENT_DEVICE && is_chrome (self->document))
    {
      show_device_slice (self, index);
      return;
    }
  static const char *kinds[] = { "",
                                 N_ ("slice"),
                                 N_ ("async slice"),
                                 N_ ("counter sample"),
                                 N_ ("instant"),
                                 N_ ("device interval") };
  add_field (self, _ ("Kind"), kind < G_N_ELEMENTS (kinds) ? _ (kinds[kind]) : "?");
  add_field_take (self, _ ("Track"), track_text (tracks, wick_tracks_event_track (tracks, ref)));
  guint64 start = wick_tracks_event_start (tracks, ref), end = wick_tracks_event_end (tracks, ref);
  add_field_take (self, _ ("Start"), rel_time (self, start));
  switch (kind)
    {
      case WICK_EVENT_COUNTER:
        {
          const WickCounterSample *c = &wick_tracks_get_counter_samples (tracks, NULL)[index];
          add_field_take (self, _ ("Value"), g_strdup_printf ("%.10g", c->value));
          break;
        }
      case WICK_EVENT_INSTANT:
        {
          const WickInstant *i = &wick_tracks_get_instants (tracks, NULL)[index];
          static const char *scopes[] = { N_ ("thread"), N_ ("process"), N_ ("global") };
          add_field (self, _ ("Scope"), _ (scopes[MIN (i->scope, 2)]));
          add_field (self, _ ("Category"), wick_document_str (self->document, i->category));
          if (i->phase == 'N' || i->phase == 'O' || i->phase == 'D')
            {
              add_field (self, _ ("Object event"),
                         i->phase == 'N'   ? _ ("created")
                         : i->phase == 'O' ? _ ("snapshot")
                                           : _ ("destroyed"));
              add_field (self, _ ("Object id"), wick_document_str (self->document, i->id));
            }
          else if (i->phase == 'P')
            add_field (self, _ ("Record"), _ ("sample"));
          break;
        }
      case WICK_EVENT_ASYNC:
        {
          const WickAsyncSlice *a = &wick_tracks_get_async (tracks, NULL)[index];
          add_field_take (self, _ ("Duration"),
                          wick_tracks_event_is_open (tracks, ref)
                            ? g_strdup (_ ("open (no end)"))
                            : wick_format_duration (end - start));
          add_field (self, _ ("Category"), wick_document_str (self->document, a->category));
          add_field (self, _ ("Id"), wick_document_str (self->document, a->id));
          add_field_take (self, _ ("Lane"), g_strdup_printf ("%u", a->lane));
          break;
        }
      case WICK_EVENT_DEVICE:
        {
          const WickDeviceSlice *d = &wick_tracks_get_device_slices (tracks, NULL)[index];
          add_field_take (self, _ ("Duration"), wick_format_duration (d->duration_ns));
          add_field (self, _ ("Category"), wick_document_str (self->document, d->category));
          break;
        }
      default:
        add_field_take (self, _ ("Duration"), wick_format_duration (end - start));
        break;
    }
  guint32 flows[16];
  guint n_flows = wick_tracks_event_flows (tracks, ref, flows, G_N_ELEMENTS (flows));
  if (n_flows > 0)
    add_field_take (self, _ ("Flows"), g_strdup_printf ("%u", n_flows));
  add_args (self, wick_tracks_event_args (tracks, ref));
}

static void
show_generic (WickDetailsPane *self, WickRecordType type, gint64 index)
{
  WickDocument *doc = self->document;
  g_autofree char *title = wick_record_title (doc, type, index);
  gtk_label_set_text (GTK_LABEL (self->title), title);
  if (type == WICK_RECORD_EXTENSION)
    {
      const WickExtensionRecord *ext = &wick_document_get_extensions (doc, NULL)[index];
      add_field_take (self, _ ("Line"), g_strdup_printf ("%u", ext->line));
      if (ext->timestamp_ns)
        add_field_take (self, _ ("Timestamp"), rel_time (self, ext->timestamp_ns));
      /* each member's value as written (numbers not re-printed), a string
       * unquoted, a boolean a word as Measured is ("yes", not true) */
      const char *json = wick_document_str (doc, ext->json);
      gsize len = json ? strlen (json) : 0;
      g_autoptr (GString) error = g_string_new (NULL);
      g_autofree char *scratch = g_malloc (len + 1);
      WickJsonScanner sc;
      gboolean first = TRUE;
      const char *key;
      gsize key_len;
      wick_json_scanner_init (&sc, json ? json : "", (json ? json : "") + len, error, scratch);
      wick_json_skip_whitespace (&sc);
      guint n = 0;
      if (len > 0 && wick_json_object_begin (&sc))
        while (n++ < MAX_ARGS && wick_json_object_next (&sc, &first, &key, &key_len))
          {
            g_autofree char *k = g_utf8_make_valid (key, (gssize)key_len);
            wick_json_skip_whitespace (&sc);
            WickJsonType vt;
            if (!wick_json_peek_type (&sc, &vt))
              break;
            const char *start = sc.p;
            if (vt == WICK_JSON_STRING)
              {
                const char *str;
                gsize str_len;
                if (!wick_json_read_string (&sc, &str, &str_len))
                  break;
                add_field_take (self, k, g_utf8_make_valid (str, (gssize)MIN (str_len, MAX_ARG_TEXT)));
                continue;
              }
            if (!wick_json_skip_value (&sc))
              break;
            gsize vlen = (gsize)(sc.p - start);
            if (vlen == 4 && memcmp (start, "true", 4) == 0)
              add_field (self, k, _ ("yes"));
            else if (vlen == 5 && memcmp (start, "false", 5) == 0)
              add_field (self, k, _ ("no"));
            else
              add_field_take (self, k, g_utf8_make_valid (start, (gssize)MIN (vlen, MAX_ARG_TEXT)));
          }
    }
  else if (type == WICK_RECORD_GRADIENT)
    {
      const WickGradient *g = &wick_document_get_gradients (doc, NULL)[index];
      add_field (self, _ ("Event id"), wick_document_str (doc, g->event_id));
      add_field (self, _ ("Root"), wick_document_str (doc, g->root));
      add_field (self, _ ("Key"), wick_document_str (doc, g->key));
      add_field (self, _ ("State"), wick_gradient_state_name ((WickGradientState)g->state));
      add_field_take (self, _ ("Norm"),
                      g->has_norm ? g_strdup_printf ("%.6g", g->norm) : g_strdup ("—"));
    }
  else if (type == WICK_RECORD_TENSOR_STATS)
    {
      const WickTensorStats *t = &wick_document_get_tensor_stats (doc, NULL)[index];
      add_field (self, _ ("Span"), wick_document_str (doc, t->span_id));
      add_field_take (self, _ ("Shape"), wick_format_shape (doc, t->shape_offset, t->rank));
      add_field (self, _ ("Dtype"), wick_document_str (doc, t->dtype));
      add_field_take (self, _ ("Elements"), g_strdup_printf ("%" G_GUINT64_FORMAT, t->elements));
      add_field_take (self, _ ("Non-finite"),
                      g_strdup_printf ("%" G_GUINT64_FORMAT, t->non_finite));
      add_field_take (self, _ ("RMS"), g_strdup_printf ("%.6g", t->rms));
      add_field_take (self, _ ("Abs max"), g_strdup_printf ("%.6g", t->abs_max));
      add_field_take (self, _ ("Mean"), g_strdup_printf ("%.6g", t->mean));
      if (t->non_finite > 0)
        add_field (
          self, "",
          _ (
            "Aggregates are written as 0 when values are non-finite; the count is authoritative."));
    }
  else if (type == WICK_RECORD_DEVICE_MEMORY)
    {
      const WickDeviceMemorySample *s = &wick_document_get_device_memory (doc, NULL)[index];
      add_field_take (self, _ ("Timestamp"), rel_time (self, s->timestamp_ns));
      add_field (self, _ ("Device"), wick_document_str (doc, s->device));
      if (s->present & WICK_DEVICE_MEMORY_USED)
        add_field_take (self, _ ("Used"), bytes_text (s->used_bytes));
      if (s->present & WICK_DEVICE_MEMORY_RESERVED)
        add_field_take (self, _ ("Reserved"), bytes_text (s->reserved_bytes));
      if (s->present & WICK_DEVICE_MEMORY_FREE)
        add_field_take (self, _ ("Free"), bytes_text (s->free_bytes));
      if (s->present & WICK_DEVICE_MEMORY_CAPACITY)
        add_field_take (self, _ ("Capacity"), bytes_text (s->capacity_bytes));
    }
  else if (type == WICK_RECORD_META)
    add_field (self, _ ("JSON"), wick_document_get_meta_json (doc));
  else if (type == WICK_RECORD_TERMINAL)
    {
      add_field (self, _ ("Outcome"),
                 wick_document_get_capture_complete (doc) ? "complete" : "failed");
      add_field (self, _ ("Reason"), wick_document_get_terminal_reason (doc));
      add_field_take (self, _ ("Timestamp"), rel_time (self, wick_document_get_terminal_ns (doc)));
    }
}

static void
show_nothing (WickDetailsPane *self)
{
  gtk_label_set_text (GTK_LABEL (self->title), _ ("Nothing selected"));
  gtk_widget_set_visible (self->hint, TRUE);
}

static void
refresh (WickDetailsPane *self)
{
  WickSelection *selection = wick_page_get_selection (WICK_PAGE (self));
  clear (self);
  if (selection == NULL)
    {
      show_nothing (self);
      return;
    }
  gint64 index, event_index;
  WickRecordType type = wick_selection_get_record (selection, &index);
  guint event_kind = wick_selection_get_event (selection, &event_index);
  if (self->document != NULL && type == WICK_RECORD_NONE && event_kind != WICK_EVENT_NONE
      && event_index >= 0)
    {
      show_event (self, event_kind, (guint32)event_index);
      return;
    }
  if (self->document == NULL || type == WICK_RECORD_NONE || index < 0)
    {
      show_nothing (self);
      return;
    }
  if (self->span_index == NULL)
    self->span_index = wick_span_index_new (self->document);
  switch (type)
    {
      case WICK_RECORD_SPAN:
        show_span (self, index); /* a Chrome slice's args too */
        break;
      case WICK_RECORD_OP:
        show_op (self, index);
        break;
      case WICK_RECORD_TENSOR:
        show_tensor (self, index);
        break;
      case WICK_RECORD_MEMORY:
        show_memory (self, index);
        break;
      case WICK_RECORD_DEVICE_INTERVAL:
        show_interval (self, index);
        break;
      default:
        show_generic (self, type, index);
        break;
    }
}

#define SUMMARY_SCAN 2000000 /* events read per track at most */

/* Per track of the range: events overlapping it, the time its top row is
 * busy inside it (slices, async, device), a counter's minimum and maximum
 * in it, an instants track's count. */
static void
add_track_summary (WickDetailsPane *self, guint64 a, guint64 b)
{
  WickTracks *tracks = wick_document_get_tracks (self->document);
  guint n_order, n_tracks;
  const guint32 *order = wick_tracks_get_display_order (tracks, &n_order);
  const WickTrack *all = wick_tracks_get_tracks (tracks, &n_tracks);
  GtkWidget *list = gtk_list_box_new ();
  gtk_widget_add_css_class (list, "boxed-list");
  gtk_list_box_set_selection_mode (GTK_LIST_BOX (list), GTK_SELECTION_NONE);
  gtk_widget_set_name (list, "track-summary");
  guint rows = 0;
  for (guint o = 0; o < n_order; o++)
    {
      guint32 t = order[o];
      guint64 count = 0, busy = 0;
      double lo = G_MAXDOUBLE, hi = -G_MAXDOUBLE;
      gboolean capped = FALSE;
      guint n_rows = wick_tracks_track_n_rows (tracks, t);
      for (guint r = 0; r < n_rows; r++)
        {
          const WickTrackRow *row = wick_tracks_track_row (tracks, t, r);
          guint scanned = 0;
          for (guint i = wick_tracks_row_first_overlapping (tracks, t, r, a ? a - 1 : 0);
               i < row->n_events; i++)
            {
              WickEventRef ref = { row->event_kind, row->events[i] };
              guint64 s = wick_tracks_event_start (tracks, ref);
              guint64 e = wick_tracks_event_end (tracks, ref);
              if (s >= b)
                break;
              if (e < a || (e == a && e != s))
                continue;
              if (++scanned > SUMMARY_SCAN)
                {
                  capped = TRUE;
                  break;
                }
              count++;
              if (r == 0 && all[t].kind != WICK_TRACK_COUNTER && all[t].kind != WICK_TRACK_INSTANTS)
                busy += MIN (e, b) - MAX (s, a);
              if (row->event_kind == WICK_EVENT_COUNTER)
                {
                  double v = wick_tracks_get_counter_samples (tracks, NULL)[ref.index].value;
                  lo = MIN (lo, v);
                  hi = MAX (hi, v);
                }
            }
        }
      if (count == 0)
        continue;
      g_autofree char *line = NULL;
      g_autofree char *n_text = g_strdup_printf ("%s%" G_GUINT64_FORMAT, capped ? "≥ " : "", count);
      if (all[t].kind == WICK_TRACK_COUNTER)
        line = g_strdup_printf (_ ("%s samples · min %.6g · max %.6g"), n_text, lo, hi);
      else if (all[t].kind == WICK_TRACK_INSTANTS)
        line = g_strdup_printf (_ ("%s instants"), n_text);
      else
        {
          g_autofree char *busy_text = wick_format_duration (busy);
          line = g_strdup_printf (_ ("%s events · busy %s (%.0f %%)"), n_text, busy_text,
                                  100.0 * busy / (b - a));
        }
      GtkWidget *row = adw_action_row_new ();
      g_autofree char *title = track_text (tracks, t);
      g_autofree char *escaped = g_markup_escape_text (title, -1);
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), escaped);
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row), line);
      gtk_list_box_append (GTK_LIST_BOX (list), row);
      rows++;
    }
  if (rows == 0)
    {
      g_object_ref_sink (list);
      g_object_unref (list);
      return;
    }
  GtkWidget *heading = gtk_label_new (_ ("By track:"));
  gtk_label_set_xalign (GTK_LABEL (heading), 0.0);
  gtk_widget_add_css_class (heading, "dim-label");
  gtk_box_append (GTK_BOX (self->range_box), heading);
  gtk_box_append (GTK_BOX (self->range_box), list);
  GtkWidget *by_name = gtk_label_new (_ ("By name:"));
  gtk_label_set_xalign (GTK_LABEL (by_name), 0.0);
  gtk_widget_add_css_class (by_name, "dim-label");
  gtk_box_append (GTK_BOX (self->range_box), by_name);
}

/* GPU time inside the range per device (Chrome traces with GPU work), from
 * the analysis's unions: a few binary searches, whatever the trace's size. */
static void
add_gpu_summary (WickDetailsPane *self, guint64 a, guint64 b)
{
  if (!is_chrome (self->document))
    return;
  const WickGpuAnalysis *analysis = wick_gpu_analysis_get (self->document);
  if (!analysis->has_gpu || analysis->devices->len == 0)
    return;
  g_autofree WickGpuRangeTime *t = g_new0 (WickGpuRangeTime, analysis->devices->len);
  wick_gpu_analysis_range (analysis, a, b, t);
  GtkWidget *heading = gtk_label_new (_ ("GPU time in the range:"));
  gtk_label_set_xalign (GTK_LABEL (heading), 0.0);
  gtk_widget_add_css_class (heading, "dim-label");
  gtk_box_append (GTK_BOX (self->range_box), heading);
  GtkWidget *list = gtk_list_box_new ();
  gtk_widget_add_css_class (list, "boxed-list");
  gtk_list_box_set_selection_mode (GTK_LIST_BOX (list), GTK_SELECTION_NONE);
  gtk_widget_set_name (list, "gpu-summary");
  for (guint i = 0; i < analysis->devices->len; i++)
    {
      const WickGpuDevice *dev = &g_array_index (analysis->devices, WickGpuDevice, i);
      g_autofree char *busy = wick_format_duration (t[i].busy_ns);
      g_autofree char *kernels = wick_format_duration (t[i].kernel_ns);
      g_autofree char *memcpy_text = wick_format_duration (t[i].memcpy_ns);
      g_autofree char *comm = wick_format_duration (t[i].comm_ns);
      g_autofree char *line
        = g_strdup_printf (_ ("busy %s (%.0f %%) · kernels %s · memcpy/memset %s · communication %s"),
                           busy, 100.0 * (double)t[i].busy_ns / (double)(b - a), kernels,
                           memcpy_text, comm);
      GtkWidget *row = adw_action_row_new ();
      g_autofree char *title = g_markup_escape_text (dev->device, -1);
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row), line);
      gtk_list_box_append (GTK_LIST_BOX (list), row);
    }
  gtk_box_append (GTK_BOX (self->range_box), list);
}

/* Perfetto's area selection, in short: what the range holds, by span name,
 * each span counted for the part of it inside the range. */
static void
refresh_range (WickDetailsPane *self)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (self->range_box)))
    gtk_box_remove (GTK_BOX (self->range_box), child);
  guint64 a = 0, b = 0;
  WickSelection *selection = wick_page_get_selection (WICK_PAGE (self));
  if (selection)
    wick_selection_get_range (selection, &a, &b);
  gtk_widget_set_visible (self->range_box, self->document != NULL && b > a);
  if (self->document == NULL || b <= a)
    return;
  g_autoptr (WickRangeSummary) summary = wick_range_summary_new (self->document, a, b);
  GArray *shares = summary->shares;
  guint overlapping = summary->n_overlapping;

  g_autofree char *duration = wick_format_duration (b - a);
  g_autofree char *title = g_strdup_printf (_ ("Selected range: %s"), duration);
  GtkWidget *label = gtk_label_new (title);
  gtk_label_set_xalign (GTK_LABEL (label), 0.0);
  gtk_widget_add_css_class (label, "heading");
  gtk_box_append (GTK_BOX (self->range_box), label);
  g_autofree char *count
    = g_strdup_printf (g_dngettext (NULL, "%u span overlaps it; time inside it by name:",
                                    "%u spans overlap it; time inside it by name:", overlapping),
                       overlapping);
  label = gtk_label_new (count);
  gtk_label_set_xalign (GTK_LABEL (label), 0.0);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_widget_add_css_class (label, "dim-label");
  gtk_box_append (GTK_BOX (self->range_box), label);
  add_gpu_summary (self, a, b);
  add_track_summary (self, a, b);
  GtkWidget *list = gtk_list_box_new ();
  gtk_widget_add_css_class (list, "boxed-list");
  gtk_list_box_set_selection_mode (GTK_LIST_BOX (list), GTK_SELECTION_NONE);
  for (guint i = 0; i < MIN (shares->len, 8u); i++)
    {
      const WickRangeShare *share = &g_array_index (shares, WickRangeShare, i);
      g_autofree char *ns = wick_format_duration (share->ns);
      g_autofree char *line
        = g_strdup_printf (g_dngettext (NULL, "%s in %u span · %.0f %% of the range",
                                        "%s in %u spans · %.0f %% of the range", share->count),
                           ns, share->count, 100.0 * share->ns / (b - a));
      GtkWidget *row = adw_action_row_new ();
      g_autofree char *name
        = g_markup_escape_text (wick_document_str (self->document, share->name), -1);
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), name);
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row), line);
      gtk_list_box_append (GTK_LIST_BOX (list), row);
    }
  gtk_box_append (GTK_BOX (self->range_box), list);
}

static gboolean
refresh_range_later (gpointer user_data)
{
  WickDetailsPane *self = user_data;
  self->range_source = 0;
  refresh_range (self);
  return G_SOURCE_REMOVE;
}

static void
wick_details_pane_selection_changed (WickPage *page, guint what)
{
  WickDetailsPane *self = WICK_DETAILS_PANE (page);
  if (what & WICK_SELECTION_CHANGED_RECORD)
    refresh (self);
  /* A range being dragged changes every frame: summarise it when it rests. */
  if ((what & WICK_SELECTION_CHANGED_RANGE) && self->range_source == 0)
    self->range_source = g_timeout_add (120, refresh_range_later, self);
}

/* Another document, or the pane shown after its document grew: the
 * selected record and the range are shown anew from it. */
static void
wick_details_pane_refresh (WickPage *page, WickDocument *document, WickPageRefreshFlags flags)
{
  WickDetailsPane *self = WICK_DETAILS_PANE (page);
  g_set_object (&self->document, document);
  g_clear_pointer (&self->span_index, wick_span_index_free);
  refresh (self);
  refresh_range (self);
}

/* A live document grew while the pane is shown: what it shows stays (it
 * is the selected record, which does not change), the span index is made
 * again when next needed, since the new spans are not in it. */
static void
wick_details_pane_document_grew (WickPage *page)
{
  WickDetailsPane *self = WICK_DETAILS_PANE (page);
  g_clear_pointer (&self->span_index, wick_span_index_free);
}

static void
wick_details_pane_dispose (GObject *object)
{
  WickDetailsPane *self = WICK_DETAILS_PANE (object);
  g_clear_object (&self->document);
  g_clear_pointer (&self->span_index, wick_span_index_free);
  g_clear_handle_id (&self->range_source, g_source_remove);
  gtk_widget_dispose_template (GTK_WIDGET (self), WICK_TYPE_DETAILS_PANE);
  G_OBJECT_CLASS (wick_details_pane_parent_class)->dispose (object);
}

static void
wick_details_pane_class_init (WickDetailsPaneClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  WickPageClass *page_class = WICK_PAGE_CLASS (klass);
  G_OBJECT_CLASS (klass)->dispose = wick_details_pane_dispose;
  page_class->refresh = wick_details_pane_refresh;
  page_class->selection_changed = wick_details_pane_selection_changed;
  page_class->document_grew = wick_details_pane_document_grew;
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "wickdetails");
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/wickprofiler/Wick/wick-details-pane.ui");
  gtk_widget_class_bind_template_child (widget_class, WickDetailsPane, scrolled);
  gtk_widget_class_bind_template_child (widget_class, WickDetailsPane, range_box);
  gtk_widget_class_bind_template_child (widget_class, WickDetailsPane, title);
  gtk_widget_class_bind_template_child (widget_class, WickDetailsPane, grid);
  gtk_widget_class_bind_template_child (widget_class, WickDetailsPane, hint);
  gtk_widget_class_bind_template_child (widget_class, WickDetailsPane, contents);
}

static void
wick_details_pane_init (WickDetailsPane *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  /* a 3 000-character kernel name: four lines, the whole on hover */
  gtk_label_set_lines (GTK_LABEL (self->title), 4);
  gtk_label_set_ellipsize (GTK_LABEL (self->title), PANGO_ELLIPSIZE_END);
}

GtkWidget *
wick_details_pane_new (WickSelection *selection)
{
  g_return_val_if_fail (WICK_IS_SELECTION (selection), NULL);
  return g_object_new (WICK_TYPE_DETAILS_PANE, "selection", selection, NULL);
}

void
wick_details_pane_set_document (WickDetailsPane *self, WickDocument *document)
{
  g_return_if_fail (WICK_IS_DETAILS_PANE (self));
  wick_page_set_document (WICK_PAGE (self), document);
}

guint
wick_details_pane_get_range_rows (WickDetailsPane *self)
{
  GtkWidget *list = gtk_widget_get_last_child (self->range_box);
  guint n = 0;
  if (list && GTK_IS_LIST_BOX (list))
    for (GtkWidget *row = gtk_widget_get_first_child (list); row;
         row = gtk_widget_get_next_sibling (row))
      n++;
  return gtk_widget_get_visible (self->range_box) ? n : 0;
}

const char *
wick_details_pane_get_range_gpu_line (WickDetailsPane *self, guint device)
{
  for (GtkWidget *child = gtk_widget_get_first_child (self->range_box); child;
       child = gtk_widget_get_next_sibling (child))
    if (g_strcmp0 (gtk_widget_get_name (child), "gpu-summary") == 0)
      for (GtkWidget *row = gtk_widget_get_first_child (child); row;
           row = gtk_widget_get_next_sibling (row))
        if (device-- == 0)
          return adw_action_row_get_subtitle (ADW_ACTION_ROW (row));
  return NULL;
}

guint
wick_details_pane_get_range_track_rows (WickDetailsPane *self)
{
  guint n = 0;
  for (GtkWidget *child = gtk_widget_get_first_child (self->range_box); child;
       child = gtk_widget_get_next_sibling (child))
    if (g_strcmp0 (gtk_widget_get_name (child), "track-summary") == 0)
      for (GtkWidget *row = gtk_widget_get_first_child (child); row;
           row = gtk_widget_get_next_sibling (row))
        n++;
  return gtk_widget_get_visible (self->range_box) ? n : 0;
}

const char *
wick_details_pane_get_field (WickDetailsPane *self, const char *key)
{
  g_return_val_if_fail (WICK_IS_DETAILS_PANE (self) && key != NULL, NULL);
  for (guint row = 0; row < self->grid_rows; row++)
    {
      GtkWidget *k = gtk_grid_get_child_at (GTK_GRID (self->grid), 0, (int)row);
      GtkWidget *v = gtk_grid_get_child_at (GTK_GRID (self->grid), 1, (int)row);
      if (GTK_IS_LABEL (k) && GTK_IS_LABEL (v)
          && g_strcmp0 (gtk_label_get_text (GTK_LABEL (k)), key) == 0)
        return gtk_label_get_text (GTK_LABEL (v));
    }
  return NULL;
}

const char *
wick_details_pane_get_arg (WickDetailsPane *self, const char *key)
{
  g_return_val_if_fail (WICK_IS_DETAILS_PANE (self) && key != NULL, NULL);
  for (guint row = 0; self->args_grid && row < self->args_rows; row++)
    {
      GtkWidget *k = gtk_grid_get_child_at (GTK_GRID (self->args_grid), 0, (int)row);
      GtkWidget *v = gtk_grid_get_child_at (GTK_GRID (self->args_grid), 1, (int)row);
      if (GTK_IS_LABEL (k) && GTK_IS_LABEL (v)
          && g_strcmp0 (gtk_label_get_text (GTK_LABEL (k)), key) == 0)
        return gtk_label_get_text (GTK_LABEL (v));
    }
  return NULL;
}

guint
wick_details_pane_get_n_links (WickDetailsPane *self)
{
  guint n = 0;
  for (GtkWidget *c = gtk_widget_get_first_child (self->contents); c;
       c = gtk_widget_get_next_sibling (c))
    if (GTK_IS_LIST_BOX (c))
      for (GtkWidget *row = gtk_widget_get_first_child (c); row;
           row = gtk_widget_get_next_sibling (row))
        n += g_object_get_data (G_OBJECT (row), "wick-link") != NULL;
  return n;
}

gboolean
wick_details_pane_activate_link (WickDetailsPane *self, guint nth)
{
  for (GtkWidget *c = gtk_widget_get_first_child (self->contents); c;
       c = gtk_widget_get_next_sibling (c))
    if (GTK_IS_LIST_BOX (c))
      for (GtkWidget *row = gtk_widget_get_first_child (c); row;
           row = gtk_widget_get_next_sibling (row))
        if (g_object_get_data (G_OBJECT (row), "wick-link") != NULL && nth-- == 0)
          {
            g_signal_emit_by_name (c, "row-activated", row);
            return TRUE;
          }
  return FALSE;
}

const char *
wick_details_pane_get_title (WickDetailsPane *self)
{
  return gtk_label_get_text (GTK_LABEL (self->title));
}
