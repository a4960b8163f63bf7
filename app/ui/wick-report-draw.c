/* wick-report-draw.c — see wick-report-draw.h. */
#include "wick-report-draw.h"

#include <glib/gi18n.h>
#include <pango/pangocairo.h>

#include "wick-palette.h"
#include "wick-record-text.h"

#define ROW 20
#define MARGIN 16

typedef struct
{
  cairo_t *cr;
  PangoLayout *layout;
  int width, height;
  gboolean dark;
  double y;
} Sheet;

static void
sheet_text (Sheet *sheet, const char *s, double x, double y, double width, const char *font)
{
  PangoFontDescription *desc = pango_font_description_from_string (font ? font : "Sans 9");
  pango_layout_set_font_description (sheet->layout, desc);
  pango_font_description_free (desc);
  pango_layout_set_width (sheet->layout, width > 0 ? (int)(width * PANGO_SCALE) : -1);
  pango_layout_set_text (sheet->layout, s, -1);
  cairo_move_to (sheet->cr, x, y);
  pango_cairo_show_layout (sheet->cr, sheet->layout);
}

static void
sheet_begin (Sheet *sheet, cairo_t *cr, int width, int height, gboolean dark)
{
  sheet->cr = cr;
  sheet->width = width;
  sheet->height = height;
  sheet->dark = dark;
  sheet->y = MARGIN;
  sheet->layout = pango_cairo_create_layout (cr);
  pango_layout_set_ellipsize (sheet->layout, PANGO_ELLIPSIZE_END);
  cairo_save (cr);
  wick_palette_set (cr, wick_palette_background (dark), 1);
  cairo_paint (cr);
}

static void
sheet_end (Sheet *sheet)
{
  cairo_restore (sheet->cr);
  g_object_unref (sheet->layout);
}

static WickRgb
verdict_colour (gboolean good, gboolean warn, gboolean dark)
{
  if (good)
    return dark ? (WickRgb){ 0.34, 0.89, 0.54 } : (WickRgb){ 0.15, 0.64, 0.41 };
  if (warn)
    return dark ? (WickRgb){ 0.97, 0.83, 0.35 } : (WickRgb){ 0.80, 0.55, 0.0 };
  return dark ? (WickRgb){ 1.0, 0.48, 0.39 } : (WickRgb){ 0.75, 0.11, 0.16 };
}

static void
sheet_banner (Sheet *sheet, const char *title, const char *body, WickRgb colour)
{
  cairo_t *cr = sheet->cr;
  wick_palette_set (cr, colour, 0.15);
  cairo_rectangle (cr, MARGIN, sheet->y, sheet->width - 2 * MARGIN, 52);
  cairo_fill (cr);
  wick_palette_set (cr, colour, 1);
  cairo_rectangle (cr, MARGIN, sheet->y, 5, 52);
  cairo_fill (cr);
  sheet_text (sheet, title, MARGIN + 16, sheet->y + 6, sheet->width - 3 * MARGIN, "Sans Bold 12");
  wick_palette_set (cr, wick_palette_foreground (sheet->dark), 0.85);
  sheet_text (sheet, body, MARGIN + 16, sheet->y + 29, sheet->width - 3 * MARGIN, "Sans 9");
  sheet->y += 64;
}

static void
sheet_header (Sheet *sheet, const char **columns, const double *x, guint n)
{
  wick_palette_set (sheet->cr, wick_palette_grid (sheet->dark), 1);
  cairo_rectangle (sheet->cr, MARGIN, sheet->y, sheet->width - 2 * MARGIN, ROW);
  cairo_fill (sheet->cr);
  wick_palette_set (sheet->cr, wick_palette_foreground (sheet->dark), 0.8);
  for (guint i = 0; i < n; i++)
    sheet_text (sheet, columns[i], MARGIN + x[i] + 4, sheet->y + 3,
                (i + 1 < n ? x[i + 1] - x[i] : sheet->width - 2 * MARGIN - x[i]) - 8,
                "Sans Bold 9");
  sheet->y += ROW;
}

static gboolean
sheet_row (Sheet *sheet, const char **cells, const WickRgb **colours, const double *x, guint n,
           gboolean strong)
{
  if (sheet->y + ROW > sheet->height - MARGIN)
    return FALSE;
  if (strong)
    {
      wick_palette_set (sheet->cr, wick_palette_grid (sheet->dark), 0.5);
      cairo_rectangle (sheet->cr, MARGIN, sheet->y, sheet->width - 2 * MARGIN, ROW);
      cairo_fill (sheet->cr);
    }
  for (guint i = 0; i < n; i++)
    {
      if (colours && colours[i])
        wick_palette_set (sheet->cr, *colours[i], 1);
      else
        wick_palette_set (sheet->cr, wick_palette_foreground (sheet->dark), 0.9);
      sheet_text (sheet, cells[i] ? cells[i] : "", MARGIN + x[i] + 4, sheet->y + 3,
                  (i + 1 < n ? x[i + 1] - x[i] : sheet->width - 2 * MARGIN - x[i]) - 8,
                  strong ? "Sans Bold 9" : "Sans 9");
    }
  sheet->y += ROW;
  return TRUE;
}

static void
sheet_more (Sheet *sheet, guint left)
{
  if (left == 0)
    return;
  g_autofree char *more
    = g_strdup_printf (g_dngettext (NULL, "… %u more row", "… %u more rows", left), left);
  wick_palette_set (sheet->cr, wick_palette_foreground (sheet->dark), 0.6);
  sheet_text (sheet, more, MARGIN + 4, sheet->height - MARGIN - ROW + 3, -1, "Sans Italic 9");
}

void
wick_coverage_draw (WickDocument *document, const WickGradientReport *report, cairo_t *cr,
                    int width, int height, gboolean dark)
{
  Sheet sheet;
  sheet_begin (&sheet, cr, width, height, dark);
  WickCoverageVerdict verdict = report->verdict;
  g_autofree char *title
    = g_strdup_printf (_ ("Gradient coverage: %s"), wick_coverage_verdict_name (verdict));
  WickRgb colour = verdict_colour (
    verdict == WICK_COVERAGE_VERDICT_COMPLETE,
    verdict == WICK_COVERAGE_VERDICT_PARTIAL || verdict == WICK_COVERAGE_VERDICT_UNAVAILABLE, dark);
  wick_palette_set (cr, colour, 1);
  g_autofree char *body = NULL;
  if (report->has_contract)
    body = g_strdup_printf ("%s — %s %s", report->reason ? report->reason : "",
                            report->digest_matches ? _ ("manifest digest matches")
                                                   : _ ("manifest digest DOES NOT match"),
                            report->computed_sha256 ? report->computed_sha256 : "");
  else
    body = g_strdup (report->reason ? report->reason : "");
  sheet_banner (&sheet, title, body, colour);

  const char *columns[]
    = { _ ("Entry"), _ ("Family"), _ ("State"), _ ("Norm"), _ ("Expectation"), _ ("Verdict") };
  const double x[] = { 0,
                       0.28 * (width - 2 * MARGIN),
                       0.58 * (width - 2 * MARGIN),
                       0.68 * (width - 2 * MARGIN),
                       0.78 * (width - 2 * MARGIN),
                       0.90 * (width - 2 * MARGIN) };
  sheet_header (&sheet, columns, x, G_N_ELEMENTS (columns));
  guint rows_left = report->entries->len + report->families->len;
  gboolean room = TRUE;
  WickRgb good = verdict_colour (TRUE, FALSE, dark), bad = verdict_colour (FALSE, FALSE, dark),
          warn = verdict_colour (FALSE, TRUE, dark);
  for (guint f = 0; room && f < report->families->len; f++)
    {
      const WickGradientFamilyRow *family
        = &g_array_index (report->families, WickGradientFamilyRow, f);
      g_autofree char *counts = g_strdup_printf (
        g_dngettext (NULL, "%u member · %u present · %u attached · min %llu",
                     "%u members · %u present · %u attached · min %llu", family->members),
        family->members, family->present, family->attached,
        (unsigned long long)family->min_present);
      const char *cells[] = { wick_document_str (document, family->family),
                              counts,
                              "",
                              "",
                              wick_gradient_expectation_name (family->expectation),
                              wick_family_verdict_name (family->verdict) };
      const WickRgb *colours[] = { NULL, NULL, NULL, NULL, NULL, family->ok ? &good : &bad };
      room = sheet_row (&sheet, cells, colours, x, 6, TRUE);
      if (room)
        rows_left--;
      for (guint e = 0; room && e < report->entries->len; e++)
        {
          const WickGradientEntryRow *entry
            = &g_array_index (report->entries, WickGradientEntryRow, e);
          if (entry->family != family->family)
            continue;
          g_autofree char *name
            = g_strdup_printf ("    %s · %s", wick_document_str (document, entry->root),
                               wick_document_str (document, entry->key));
          g_autofree char *norm = entry->observed && entry->has_norm
                                    ? g_strdup_printf ("%.4g", entry->norm)
                                    : g_strdup ("—");
          const char *state
            = entry->observed ? wick_gradient_state_name (entry->state) : _ ("not recorded");
          const char *ecells[]
            = { name, wick_document_str (document, entry->family), state, norm, "", "" };
          const WickRgb *state_colour = !entry->observed                           ? &bad
                                        : entry->state == WICK_GRADIENT_PRESENT    ? &good
                                        : entry->state == WICK_GRADIENT_NON_FINITE ? &bad
                                                                                   : &warn;
          const WickRgb *ecolours[] = { NULL, NULL, state_colour, NULL, NULL, NULL };
          room = sheet_row (&sheet, ecells, ecolours, x, 6, FALSE);
          if (room)
            rows_left--;
        }
    }
  if (!report->has_contract)
    {
      wick_palette_set (cr, wick_palette_foreground (dark), 0.6);
      sheet_text (&sheet, _ ("This trace declares no gradient contract."), MARGIN + 4, sheet.y + 8,
                  -1, NULL);
    }
  sheet_more (&sheet, room ? 0 : rows_left);
  sheet_end (&sheet);
}

void
wick_health_draw (WickDocument *document, cairo_t *cr, int width, int height, gboolean dark)
{
  Sheet sheet;
  sheet_begin (&sheet, cr, width, height, dark);
  guint n;
  const WickHealthIssue *issues = wick_document_get_health (document, &n);
  guint errors = 0, warnings = 0;
  for (guint i = 0; i < n; i++)
    issues[i].severity == WICK_SEVERITY_ERROR ? errors++ : warnings++;
  const WickParseError *parse = wick_document_get_parse_error (document);
  g_autofree char *title = NULL, *body = NULL;
  WickRgb colour;
  if (parse && parse->failed)
    {
      title = g_strdup (_ ("The trace did not parse"));
      body = g_strdup_printf ("%s%s%s", parse->message, parse->cause ? ": " : "",
                              parse->cause ? parse->cause : "");
      colour = verdict_colour (FALSE, FALSE, dark);
    }
  else
    {
      /* The Health page's words: "1 error", "2 warnings". */
      g_autofree char *n_errors
        = g_strdup_printf (g_dngettext (NULL, "%u error", "%u errors", errors), errors);
      g_autofree char *n_warnings
        = g_strdup_printf (g_dngettext (NULL, "%u warning", "%u warnings", warnings), warnings);
      title = g_strdup_printf ("%s, %s", n_errors, n_warnings);
      body = g_strdup (wick_document_get_structurally_valid (document)
                         ? _ ("The trace is structurally valid.")
                         : _ ("The trace is not structurally valid: see the errors below."));
      colour = verdict_colour (errors == 0 && warnings == 0, errors == 0, dark);
    }
  wick_palette_set (cr, colour, 1);
  sheet_banner (&sheet, title, body, colour);
  const char *columns[] = { _ ("Severity"), _ ("Code"), _ ("Message") };
  const double x[] = { 0, 90, 330 };
  sheet_header (&sheet, columns, x, 3);
  WickRgb bad = verdict_colour (FALSE, FALSE, dark), warn = verdict_colour (FALSE, TRUE, dark);
  guint i;
  for (i = 0; i < n; i++)
    {
      const char *cells[]
        = { wick_severity_name (issues[i].severity), issues[i].code, issues[i].message };
      const WickRgb *colours[]
        = { issues[i].severity == WICK_SEVERITY_ERROR ? &bad : &warn, NULL, NULL };
      if (!sheet_row (&sheet, cells, colours, x, 3, FALSE))
        break;
    }
  sheet_more (&sheet, n - i);
  sheet_end (&sheet);
}
