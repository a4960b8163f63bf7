/* model-test-util.h — building small traces line by line for the model tests. */
#pragma once

#include <stdarg.h>
#include <string.h>

#include "wick-document.h"

/* A valid meta line: inference, every plane "none", no labels. */
#define META_INFER                                                                                 \
  "{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/10\",\"run_id\":\"run\","                    \
  "\"correlation_id\":\"corr\",\"entrypoint\":\"demo\",\"phase\":\"infer\","                       \
  "\"timestamp\":\"2026-08-19T00:00:00Z\",\"capture_step\":1,\"warmup_steps\":0,"                  \
  "\"device\":\"cpu\",\"timing_mode\":\"host\",\"capture_contract\":{\"measurement_scope\":"       \
  "\"unknown\",\"operations\":\"none\",\"logical_memory\":\"none\",\"physical_memory\":"           \
  "\"none\",\"device_timing\":\"none\"},\"tags\":{}}"

#define ROOT_START                                                                                 \
  "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"demo\",\"start_ns\":0,\"span_kind\":"         \
  "\"function\",\"measured\":true}"
#define ROOT_END "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":100}"
#define TERMINAL "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":100}"
#define TERMINAL_FAILED                                                                            \
  "{\"kind\":\"terminal\",\"outcome\":\"failed\",\"timestamp_ns\":100,\"reason\":\"boom\"}"

/* Builds a meta line from META_INFER with @from replaced by @to. */
static inline char *
meta_with (const char *from, const char *to)
{
  const char *meta = META_INFER;
  const char *at = strstr (meta, from);

  g_assert_nonnull (at);
  return g_strdup_printf ("%.*s%s%s", (int)(at - meta), meta, to, at + strlen (from));
}

/* Feeds each argument as one line (NULL-terminated) and finishes. */
static inline WickDocument *
parse_lines_v (gboolean extensions, const char *first, va_list args)
{
  WickDocument *doc = wick_document_new_with_extensions (extensions);
  const char *line = first;

  for (; line != NULL; line = va_arg (args, const char *))
    if (!wick_document_feed_line (doc, line, strlen (line), NULL))
      break;
  wick_document_finish (doc, NULL);
  return doc;
}

static inline WickDocument *
parse_lines (const char *first, ...)
{
  va_list args;
  WickDocument *doc;

  va_start (args, first);
  doc = parse_lines_v (FALSE, first, args);
  va_end (args);
  return doc;
}

/* "E code W code ..." of the issues, leaving out the *_absent warnings unless
 * @with_absent. */
static inline char *
issue_codes (WickDocument *doc, gboolean with_absent)
{
  guint n;
  const WickHealthIssue *issues = wick_document_get_health (doc, &n);
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < n; i++)
    {
      if (!with_absent && g_str_has_suffix (issues[i].code, "_absent"))
        continue;
      g_string_append_printf (out, "%s%c %s", out->len ? " " : "",
                              issues[i].severity == WICK_SEVERITY_ERROR     ? 'E'
                              : issues[i].severity == WICK_SEVERITY_INFO    ? 'I'
                              : issues[i].severity == WICK_SEVERITY_PENDING ? 'P'
                                                                            : 'W',
                              issues[i].code);
    }
  return g_string_free (out, FALSE);
}

static inline const WickHealthIssue *
find_issue (WickDocument *doc, const char *code)
{
  guint n;
  const WickHealthIssue *issues = wick_document_get_health (doc, &n);

  for (guint i = 0; i < n; i++)
    if (strcmp (issues[i].code, code) == 0)
      return &issues[i];
  return NULL;
}

static inline const char *
parse_message (WickDocument *doc)
{
  const WickParseError *pe = wick_document_get_parse_error (doc);

  return pe->failed ? pe->message : NULL;
}

static inline const char *
parse_cause (WickDocument *doc)
{
  return wick_document_get_parse_error (doc)->cause;
}

/* The @nth issue, not counting the *_absent warnings. */
static inline const WickHealthIssue *
nth_issue (WickDocument *doc, guint nth)
{
  guint n;
  const WickHealthIssue *issues = wick_document_get_health (doc, &n);

  for (guint i = 0; i < n; i++)
    {
      if (g_str_has_suffix (issues[i].code, "_absent"))
        continue;
      if (nth-- == 0)
        return &issues[i];
    }
  g_assert_not_reached ();
  return NULL;
}
