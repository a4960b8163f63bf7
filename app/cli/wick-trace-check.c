/* wick-trace-check.c — `wick-trace check [--json] FILE...`: candle-graph's
 * verdicts on each trace.
 *
 * Per file: the parse status (decode and stream errors exactly as candle-graph
 * words them), the health issues in candle-graph's order, whether the trace is
 * structurally valid and the capture complete, and the gradient coverage
 * verdict. With --json, one object per file per line:
 *   {"file":…, "format":"candle-graph"|"chrome"|"torch-memory-timeline",
 *    "imported":{phase:count}, "skipped":{construct:count} (imported files),
 *    "parse":"ok"|"error", "error":"<message>: <cause>" (on error),
 *    "cause":…, "line":N | "record_index":I (on error), "structurally_valid":…,
 *    "capture_complete":…, "health":[{"code","severity","message","record"?}],
 *    "gradient_coverage":"complete"|"partial"|"invalid"|"unavailable"}
 * Exit status: the worst over the files of 0 (valid), 1 (health errors),
 * 2 (parse error), 3 (usage or I/O error).
 */
#include "config.h"

#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#include "wick-chrome-import.h"
#include "wick-document.h"
#include "wick-trace-commands.h"

typedef struct
{
  const char *file;
  WickDocument *document;
  GError *error;
  gboolean io_error;
  gboolean parsed;
} CheckResult;

static int
result_status (const CheckResult *r)
{
  if (r->io_error)
    return WICK_TRACE_EXIT_USAGE;
  if (!r->parsed)
    return WICK_TRACE_EXIT_PARSE;
  if (!wick_document_get_structurally_valid (r->document))
    return WICK_TRACE_EXIT_HEALTH;
  return WICK_TRACE_EXIT_OK;
}

static char *
error_text (const CheckResult *r)
{
  const WickParseError *pe;

  if (r->io_error)
    return g_strdup (r->error->message);
  pe = wick_document_get_parse_error (r->document);
  if (pe->cause != NULL)
    return g_strdup_printf ("%s: %s", pe->message, pe->cause);
  return g_strdup (pe->message);
}

static gboolean
is_extension_rejection (const CheckResult *r)
{
  const WickParseError *pe = wick_document_get_parse_error (r->document);

  return !r->io_error && pe->cause != NULL
         && g_str_has_prefix (pe->cause, "unknown variant `wick_");
}

static void
print_json (const CheckResult *r)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = NULL;
  g_autofree char *text = NULL;
  gboolean ok = r->parsed && !r->io_error;
  guint n_issues = 0;
  const WickHealthIssue *issues = ok ? wick_document_get_health (r->document, &n_issues) : NULL;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "file");
  json_builder_add_string_value (b, r->file);
  {
    const WickChromeInfo *info = r->document ? wick_chrome_info_get (r->document) : NULL;
    json_builder_set_member_name (b, "format");
    json_builder_add_string_value (b, info ? info->format : "candle-graph");
    if (info != NULL)
      for (int which = 0; which < 2; which++)
        {
          GPtrArray *pairs = which == 0 ? info->imported : info->skipped;
          json_builder_set_member_name (b, which == 0 ? "imported" : "skipped");
          json_builder_begin_object (b);
          for (guint i = 0; i + 1 < pairs->len; i += 2)
            {
              json_builder_set_member_name (b, g_ptr_array_index (pairs, i));
              json_builder_add_int_value (
                b, g_ascii_strtoll (g_ptr_array_index (pairs, i + 1), NULL, 10));
            }
          json_builder_end_object (b);
        }
  }
  json_builder_set_member_name (b, "parse");
  json_builder_add_string_value (b, ok ? "ok" : "error");
  if (!ok)
    {
      g_autofree char *message = error_text (r);
      json_builder_set_member_name (b, "error");
      json_builder_add_string_value (b, message);
      if (!r->io_error)
        {
          const WickParseError *pe = wick_document_get_parse_error (r->document);
          if (pe->cause != NULL)
            {
              json_builder_set_member_name (b, "cause");
              json_builder_add_string_value (b, pe->cause);
            }
          if (pe->line > 0)
            {
              json_builder_set_member_name (b, "line");
              json_builder_add_int_value (b, (gint64)pe->line);
            }
          if (pe->record_index >= 0)
            {
              json_builder_set_member_name (b, "record_index");
              json_builder_add_int_value (b, pe->record_index);
            }
        }
    }
  json_builder_set_member_name (b, "structurally_valid");
  json_builder_add_boolean_value (b, ok && wick_document_get_structurally_valid (r->document));
  json_builder_set_member_name (b, "capture_complete");
  json_builder_add_boolean_value (b, ok && wick_document_get_capture_complete (r->document));
  json_builder_set_member_name (b, "health");
  json_builder_begin_array (b);
  for (guint i = 0; i < n_issues; i++)
    {
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "code");
      json_builder_add_string_value (b, issues[i].code);
      json_builder_set_member_name (b, "severity");
      json_builder_add_string_value (b, wick_severity_to_string (issues[i].severity));
      json_builder_set_member_name (b, "message");
      json_builder_add_string_value (b, issues[i].message);
      if (issues[i].record_id != NULL)
        {
          json_builder_set_member_name (b, "record");
          json_builder_add_string_value (b, issues[i].record_id);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "gradient_coverage");
  json_builder_add_string_value (
    b, wick_coverage_verdict_to_string (ok ? wick_document_get_gradient_coverage (r->document)
                                           : WICK_COVERAGE_VERDICT_UNAVAILABLE));
  json_builder_end_object (b);

  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  text = json_generator_to_data (gen, NULL);
  printf ("%s\n", text);
}

static void
print_text (const CheckResult *r)
{
  guint n_issues = 0, n_errors = 0, n_info = 0;
  const WickHealthIssue *issues;

  if (r->io_error || !r->parsed)
    {
      g_autofree char *message = error_text (r);
      printf ("%s: %s: %s\n", r->file, r->io_error ? "cannot read" : "parse error", message);
      if (is_extension_rejection (r))
        printf ("  hint: line %" G_GUINT64_FORMAT " is a Wick extension record (kind wick_…), "
                "which candle-graph rejects;\n"
                "        `wick-trace convert %s --output OUT` moves them into wick_ keys, "
                "which it reads;\n"
                "        `wick-trace convert --strict %s --output OUT` removes them.\n",
                wick_document_get_parse_error (r->document)->line, r->file, r->file);
      return;
    }
  issues = wick_document_get_health (r->document, &n_issues);
  for (guint i = 0; i < n_issues; i++)
    {
      n_errors += issues[i].severity == WICK_SEVERITY_ERROR;
      n_info += issues[i].severity == WICK_SEVERITY_INFO;
    }
  g_autofree char *errors = wick_trace_count (n_errors, "error", "errors");
  g_autofree char *warnings
    = wick_trace_count (n_issues - n_errors - n_info, "warning", "warnings");
  printf ("%s: %s, capture %s, gradient coverage %s (%s, %s)\n", r->file,
          wick_document_get_structurally_valid (r->document) ? "structurally valid"
                                                             : "NOT structurally valid",
          wick_document_get_capture_complete (r->document) ? "complete" : "failed",
          wick_coverage_verdict_to_string (wick_document_get_gradient_coverage (r->document)),
          errors, warnings);
  for (guint i = 0; i < n_issues; i++)
    printf ("  %-7s %s: %s\n", wick_severity_to_string (issues[i].severity), issues[i].code,
            issues[i].message);
}

static void
check_file (CheckResult *r)
{
  r->document = wick_document_new ();
  if (wick_document_load_file_auto (r->document, r->file, NULL, NULL, NULL, &r->error))
    {
      r->parsed = TRUE;
      return;
    }
  r->io_error = !wick_document_get_parse_error (r->document)->failed;
}

int
wick_trace_check (int argc, char **argv)
{
  gboolean json = FALSE;
  int worst = WICK_TRACE_EXIT_OK;
  const GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "One JSON object per file per line", NULL },
    G_OPTION_ENTRY_NULL,
  };
  int status = wick_trace_parse_options (
    "check", "FILE...",
    "Parse status, health issues and gradient verdict of each trace (candle-graph's "
    "verdicts).\nExit status: the worst of 0 (valid), 1 (health errors), 2 (parse error), "
    "3 (usage or I/O error).",
    entries, FALSE, &argc, &argv);
  if (status >= 0)
    return status;
  if (argc < 2)
    return wick_trace_usage_error ("check", "at least one FILE is required");

  for (int i = 1; i < argc; i++)
    {
      CheckResult r = { argv[i], NULL, NULL, FALSE, FALSE };
      check_file (&r);
      if (json)
        print_json (&r);
      else
        print_text (&r);
      worst = MAX (worst, result_status (&r));
      g_clear_error (&r.error);
      g_clear_object (&r.document);
    }
  fflush (stdout);
  return worst;
}
