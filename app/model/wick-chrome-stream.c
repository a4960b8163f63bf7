/* wick-chrome-stream.c — trace-event JSON read one event at a time (see the header).
 *
 * The buffer holds the bytes from the start of the value being read to the
 * end of what was read so far. An event is parsed with the scanner over the
 * whole buffer; when the scanner runs into the buffer's end ("EOF while ...")
 * before the input's end, the buffer is refilled (and grown when one value
 * does not fit) and the event parsed again from its start. Bytes before the
 * event are dropped at each refill, counting their newlines for positions.
 */
#include "config.h"

#include "wick-chrome-stream.h"

#include <glib/gi18n-lib.h>
#include <math.h>
#include <string.h>

#define READ_CHUNK (4 << 20)
#define METADATA_LIMIT (1 << 20)

typedef enum
{
  STATE_START,
  STATE_EVENTS_FIRST, /* at the first element of the events array */
  STATE_EVENTS,       /* after an element */
  STATE_AFTER_EVENTS, /* object form: members after traceEvents */
  STATE_DONE,
} State;

struct _WickChromeReader
{
  WickInput *input;
  char *name;
  char *buffer;
  gsize len, cap, pos; /* [0, len) read; pos: the cursor */
  char *unescape;
  gboolean eof;
  GError *input_error; /* a read failure, reported when the bytes before it are used up */
  guint64 dropped;     /* decoded bytes dropped before buffer[0] */
  guint64 line;        /* newlines before buffer[0] */
  guint64 line_start;  /* decoded offset just after the last of them */
  GString *error;
  WickJsonScanner scanner;
  State state;
  gboolean object_form;
  gboolean seen_events;
  guint64 n_events, non_objects;
  GPtrArray *metadata;
  GPtrArray *warnings;
  gboolean cut_off;
  gboolean chrome_evidence; /* a top-level '[' or a "traceEvents" member was seen */
  WickChromeStartFailure start_failure; /* without that evidence */
  gsize max_value;          /* the longest value read whole: wick_max_line_length () */
  /* the last error as values: its line and column (0 when it has none) and
   * its reason without the file's name */
  guint64 failure_line, failure_column;
  char *failure_cause;
};

WickChromeReader *
wick_chrome_reader_new (WickInput *input, const char *name)
{
  WickChromeReader *r = g_new0 (WickChromeReader, 1);

  r->input = input;
  r->name = g_strdup (name ? name : "<stream>");
  r->max_value = wick_max_line_length ();
  r->cap = READ_CHUNK;
  r->buffer = g_malloc (r->cap);
  r->unescape = g_malloc (r->cap);
  r->error = g_string_new (NULL);
  r->metadata = g_ptr_array_new_with_free_func (g_free);
  r->warnings = g_ptr_array_new_with_free_func (g_free);
  return r;
}

void
wick_chrome_reader_free (WickChromeReader *r)
{
  if (r == NULL)
    return;
  wick_input_free (r->input);
  g_free (r->name);
  g_free (r->buffer);
  g_free (r->unescape);
  g_clear_error (&r->input_error);
  g_free (r->failure_cause);
  g_string_free (r->error, TRUE);
  g_ptr_array_unref (r->metadata);
  g_ptr_array_unref (r->warnings);
  g_free (r);
}

static guint64
count_newlines (const char *p, gsize n, const char **last)
{
  guint64 count = 0;
  const char *end = p + n;

  *last = NULL;
  while (p < end && (p = memchr (p, '\n', (gsize)(end - p))) != NULL)
    {
      count++;
      *last = p;
      p++;
    }
  return count;
}

static void position_of (WickChromeReader *r, gsize offset, guint64 *line, guint64 *column);

/* Keeps an error's values and sets @error from them: "NAME:LINE:COLUMN: CAUSE",
 * or "NAME: CAUSE" when @line is 0. */
static gboolean
set_failure (WickChromeReader *r, WickDocumentError code, guint64 line, guint64 column,
             const char *cause, GError **error)
{
  char *copy = g_strdup (cause);

  g_free (r->failure_cause);
  r->failure_cause = copy;
  r->failure_line = line;
  r->failure_column = line > 0 ? column : 0;
  if (line > 0)
    g_set_error (error, WICK_DOCUMENT_ERROR, (int)code,
                 "%s:%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT ": %s", r->name, line, column,
                 cause);
  else
    g_set_error (error, WICK_DOCUMENT_ERROR, (int)code, "%s: %s", r->name, cause);
  return FALSE;
}

/* Drops [0, pos) and reads more; FALSE when nothing more can come (end or a
 * pending input error). */
static gboolean
refill (WickChromeReader *r)
{
  const char *last;
  gssize n;

  if (r->eof || r->input_error != NULL)
    return FALSE;
  if (r->pos > 0)
    {
      r->line += count_newlines (r->buffer, r->pos, &last);
      if (last != NULL)
        r->line_start = r->dropped + (guint64)(last + 1 - r->buffer);
      memmove (r->buffer, r->buffer + r->pos, r->len - r->pos);
      r->len -= r->pos;
      r->dropped += r->pos;
      r->pos = 0;
    }
  if (r->len >= r->max_value)
    {
      /* [0, len) is one value not yet whole (an event, a top-level member or
       * its key, a string in them): it is never held past the limit, so a
       * 4 GiB string in a small .gz costs the limit, not 4 GiB */
      guint64 line, column;
      g_autofree char *cause = NULL;
      position_of (r, 0, &line, &column);
      cause = g_strdup_printf (
        /* Translators: a byte offset and a size in bytes */
        _ ("the JSON value at byte offset %llu (an event, a string or a top-level member) is "
           "longer than the maximum of %llu bytes (raise it with --max-line-bytes or "
           "WICK_MAX_LINE_BYTES)"),
        (unsigned long long)r->dropped, (unsigned long long)r->max_value);
      set_failure (r, WICK_DOCUMENT_ERROR_TOO_LARGE, line, column, cause, &r->input_error);
      return FALSE;
    }
  if (r->cap - r->len < READ_CHUNK / 2)
    {
      /* at most the limit and a chunk: a read never takes the value much
       * past the limit before the check above refuses it */
      gsize want = MAX (r->max_value, READ_CHUNK) + READ_CHUNK;
      r->cap = r->cap > want / 2 ? MAX (want, r->cap) : r->cap * 2;
      r->buffer = g_realloc (r->buffer, r->cap);
      g_free (r->unescape);
      r->unescape = g_malloc (r->cap);
    }
  n = wick_input_read (r->input, r->buffer + r->len, r->cap - r->len, &r->input_error);
  if (n < 0 && wick_input_error_is_cut (r->input_error))
    {
      /* a cut-off compressed file reads as a cut-off file, with its reason */
      g_ptr_array_add (r->warnings, g_strdup (r->input_error->message));
      g_clear_error (&r->input_error);
      r->eof = TRUE;
      return FALSE;
    }
  if (n < 0)
    {
      /* the input's message names the file itself */
      r->failure_line = r->failure_column = 0;
      g_free (r->failure_cause);
      r->failure_cause = g_strdup (r->input_error->message);
      return FALSE;
    }
  if (n == 0)
    {
      r->eof = TRUE;
      return FALSE;
    }
  r->len += (gsize)n;
  return TRUE;
}

static void
position_of (WickChromeReader *r, gsize offset, guint64 *line, guint64 *column)
{
  const char *last;
  guint64 lines = count_newlines (r->buffer, offset, &last);
  guint64 start = last != NULL ? r->dropped + (guint64)(last + 1 - r->buffer) : r->line_start;

  *line = r->line + lines + 1;
  *column = r->dropped + offset - start + 1;
}

static gboolean
fail_with_code (WickChromeReader *r, WickDocumentError code, gsize offset, GError **error,
                const char *message)
{
  guint64 line, column;

  position_of (r, MIN (offset, r->len), &line, &column);
  return set_failure (r, code, line, column, message, error);
}

/* The bytes at @offset break the JSON or the trace's structure. */
static gboolean
fail_at (WickChromeReader *r, gsize offset, GError **error, const char *message)
{
  return fail_with_code (r, WICK_DOCUMENT_ERROR_INVALID, offset, error, message);
}

/* The input ends inside a value at @offset. */
static gboolean
fail_cut_at (WickChromeReader *r, gsize offset, GError **error, const char *message)
{
  return fail_with_code (r, WICK_DOCUMENT_ERROR_TRUNCATED, offset, error, message);
}

static gboolean
input_failed (WickChromeReader *r, GError **error)
{
  if (r->input_error == NULL)
    return FALSE;
  g_propagate_error (error, g_steal_pointer (&r->input_error));
  return TRUE;
}

/* The first non-whitespace byte at or after pos, refilling; -1 at the end. */
static int
peek_byte (WickChromeReader *r)
{
  for (;;)
    {
      while (r->pos < r->len)
        {
          char c = r->buffer[r->pos];
          if (c != ' ' && c != '\n' && c != '\t' && c != '\r')
            return (guchar)c;
          r->pos++;
        }
      if (!refill (r))
        return -1;
    }
}

static void
scanner_at_pos (WickChromeReader *r)
{
  wick_json_scanner_init (&r->scanner, r->buffer + r->pos, r->buffer + r->len, r->error,
                          r->unescape);
}

static gboolean
ran_out (WickChromeReader *r)
{
  return r->scanner.ran_out;
}

/* ---- values ----------------------------------------------------------- */

static gboolean
text_number (const char *text, gsize len, double *out)
{
  char small[64];
  char *end = NULL;

  if (len == 0 || len >= sizeof small)
    return FALSE;
  memcpy (small, text, len);
  small[len] = '\0';
  *out = g_ascii_strtod (small, &end);
  while (end != NULL && (*end == ' ' || *end == '\t'))
    end++;
  return end != small && end != NULL && *end == '\0' && isfinite (*out);
}

gboolean
wick_chrome_numeric_string (const char *text, gsize len, double *value)
{
  /* g_ascii_strtod reads hexadecimal too; a decimal number is what is meant */
  if (memchr (text, 'x', len) != NULL || memchr (text, 'X', len) != NULL)
    return FALSE;
  return text_number (text, len, value);
}

/* µs written in decimal to ns, exactly: a double has no room for the ns of
 * an epoch-based µs timestamp (1.7e18 ns > 2^53), and rounding there nests
 * slices that only touch. FALSE for exponents and out-of-range values. */
static gboolean
decimal_us_to_ns (const char *p, gsize len, gint64 *ns)
{
  const char *end = p + len;
  gboolean negative = FALSE;
  guint64 whole = 0, frac = 0;
  int frac_digits = 0;
  gboolean round_up = FALSE, any = FALSE;

  while (p < end && (*p == ' ' || *p == '\t'))
    p++;
  while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
    end--;
  if (p < end && (*p == '-' || *p == '+'))
    negative = *p++ == '-';
  for (; p < end && g_ascii_isdigit (*p); p++, any = TRUE)
    {
      if (whole > (guint64)G_MAXINT64 / 10000)
        return FALSE;
      whole = whole * 10 + (guint64)(*p - '0');
    }
  if (p < end && *p == '.')
    for (p++; p < end && g_ascii_isdigit (*p); p++, any = TRUE)
      {
        if (frac_digits < 3)
          frac = frac * 10 + (guint64)(*p - '0'), frac_digits++;
        else if (frac_digits == 3)
          round_up = *p >= '5', frac_digits++;
      }
  if (!any || p != end)
    return FALSE;
  for (int i = MIN (frac_digits, 3); i < 3; i++)
    frac *= 10;
  whole = whole * 1000 + frac + (round_up ? 1 : 0);
  if (whole > (guint64)G_MAXINT64)
    return FALSE;
  *ns = negative ? -(gint64)whole : (gint64)whole;
  return TRUE;
}

/* A number, or a string holding one; FALSE (cursor after the value) otherwise.
 * @ns (may be NULL): the value as µs converted to ns exactly. */
static gboolean
read_number_value_ns (WickJsonScanner *s, double *out, gint64 *ns, gboolean *ok)
{
  WickJsonType type;
  const char *text = NULL;
  gsize text_len = 0;

  *ok = FALSE;
  if (!wick_json_peek_type (s, &type))
    return FALSE;
  if (type == WICK_JSON_NUMBER && ns != NULL)
    {
      /* the common case, [-]digits[.digits] with at most 16 integer digits
       * and no exponent: exact ns in one pass over the text, no strtod; the
       * same rounding as decimal_us_to_ns() (the fourth fraction digit
       * rounds half up, later ones are ignored) */
      const char *q = s->p, *end = s->end;
      gboolean negative = *q == '-';
      guint64 whole = 0, frac = 0;
      int digits = 0, frac_digits = 0;
      gboolean round_up = FALSE;
      if (negative)
        q++;
      if (q < end && *q == '0')
        q++, digits = 1;
      else
        {
          guint64 eight;
          /* epoch µs have 16 digits: eight at a time */
          while (end - q >= 8 && digits <= 8 && wick_json_eight_digits (q, &eight))
            whole = whole * 100000000u + eight, q += 8, digits += 8;
          for (; q < end && (guint)(*q - '0') < 10 && digits < 17; q++, digits++)
            whole = whole * 10 + (guint)(*q - '0');
        }
      /* 16 digits hold epoch µs; the ns, rounded up, must fit an int64 */
      if (digits > 0 && digits <= 16 && whole <= (guint64)(G_MAXINT64 - 1000) / 1000 && q < end
          && (guint)(*q - '0') >= 10)
        {
          gboolean ok_frac = TRUE;
          if (*q == '.')
            {
              const char *f = ++q;
              for (; q < end && (guint)(*q - '0') < 10; q++)
                {
                  if (frac_digits < 3)
                    frac = frac * 10 + (guint)(*q - '0'), frac_digits++;
                  else if (frac_digits == 3)
                    round_up = *q >= '5', frac_digits++;
                }
              ok_frac = q > f;
            }
          if (ok_frac && q < end && *q != 'e' && *q != 'E')
            {
              gint64 v;
              for (int i = MIN (frac_digits, 3); i < 3; i++)
                frac *= 10;
              v = (gint64)(whole * 1000 + frac + (round_up ? 1 : 0));
              *ns = negative ? -v : v;
              s->p = q;
              *out = (double)*ns / 1000.0;
              *ok = TRUE;
              return TRUE;
            }
        }
      /* anything else: the general path below */
    }
  if (type == WICK_JSON_NUMBER)
    {
      WickJsonNumber n;
      text = s->p;
      if (!wick_json_read_number (s, &n))
        return FALSE;
      text_len = (gsize)(s->p - text);
      *out = n.f64;
      *ok = isfinite (n.f64);
    }
  else if (type == WICK_JSON_STRING)
    {
      if (!wick_json_read_string (s, &text, &text_len))
        return FALSE;
      *ok = text_number (text, text_len, out);
    }
  else
    return wick_json_skip_value (s);
  if (*ok && ns != NULL && !decimal_us_to_ns (text, text_len, ns))
    {
      double v = *out * 1000.0;
      *ns = v > 9e18 ? (gint64)9e18 : v < -9e18 ? (gint64)-9e18 : (gint64)llround (v);
    }
  return TRUE;
}

static gboolean
read_number_value (WickJsonScanner *s, double *out, gboolean *ok)
{
  return read_number_value_ns (s, out, NULL, ok);
}

/* A string (its content) or a number (its digits); other values are skipped. */
static gboolean
read_text_value (WickJsonScanner *s, const char **str, gsize *len, gboolean *ok)
{
  WickJsonType type;

  *ok = FALSE;
  if (!wick_json_peek_type (s, &type))
    return FALSE;
  if (type == WICK_JSON_STRING)
    {
      *ok = TRUE;
      return wick_json_read_string (s, str, len);
    }
  if (type == WICK_JSON_NUMBER)
    {
      const char *start = s->p, *q = start;
      /* a plain integer (a pid or tid) followed by something else in the buffer */
      if ((guint)(*q - '1') < 9)
        {
          for (q++; q < s->end && (guint)(*q - '0') < 10; q++)
            ;
          if (q < s->end && *q != '.' && *q != 'e' && *q != 'E')
            {
              s->p = q;
              *str = start;
              *len = (gsize)(q - start);
              *ok = TRUE;
              return TRUE;
            }
        }
      if (!wick_json_skip_number (s))
        return FALSE;
      *str = start;
      *len = (gsize)(s->p - start);
      *ok = TRUE;
      return TRUE;
    }
  if (type == WICK_JSON_TRUE || type == WICK_JSON_FALSE)
    {
      const char *start = s->p;
      if (!wick_json_skip_value (s))
        return FALSE;
      *str = start;
      *len = (gsize)(s->p - start);
      *ok = TRUE;
      return TRUE;
    }
  return wick_json_skip_value (s);
}

static gboolean
read_bool_value (WickJsonScanner *s, gboolean *out)
{
  WickJsonType type;

  if (!wick_json_peek_type (s, &type))
    return FALSE;
  *out = type == WICK_JSON_TRUE;
  return wick_json_skip_value (s);
}

/* "id2": {"local": X} or {"global": X} -> "local:X" text in the unescape
 * scratch (kept apart from other strings) */
static gboolean
read_id2 (WickJsonScanner *s, const char **str, gsize *len)
{
  gboolean first = TRUE;
  const char *key;
  gsize key_len;
  WickJsonType type;

  if (!wick_json_peek_type (s, &type))
    return FALSE;
  if (type != WICK_JSON_OBJECT)
    return wick_json_skip_value (s);
  if (!wick_json_object_begin (s))
    return FALSE;
  while (wick_json_object_next (s, &first, &key, &key_len))
    {
      const char *v;
      gsize v_len;
      gboolean ok;
      char *out;
      gsize k = MIN (key_len, 6);
      char prefix[8];
      memcpy (prefix, key, k);
      if (!read_text_value (s, &v, &v_len, &ok))
        return FALSE;
      if (!ok)
        continue;
      out = s->unescape + s->unescape_len;
      memcpy (out, prefix, k);
      out[k] = ':';
      memmove (out + k + 1, v, v_len);
      *str = out;
      *len = k + 1 + v_len;
      s->unescape_len += *len;
    }
  return !wick_json_failed (s);
}

#define KEY_IS(lit) (key_len == sizeof (lit) - 1 && memcmp (key, lit, sizeof (lit) - 1) == 0)

static gboolean
parse_event (WickJsonScanner *s, WickChromeEvent *e)
{
  gboolean first = TRUE;
  const char *key;
  gsize key_len;

  memset (e, 0, sizeof *e);
  if (!wick_json_object_begin (s))
    return FALSE;
  while (wick_json_object_next (s, &first, &key, &key_len))
    {
      gboolean ok = FALSE, handled = TRUE;
      switch (key_len)
        {
          case 1:
            if (key[0] == 's')
              {
                if (!read_text_value (s, &e->s, &e->s_len, &ok))
                  return FALSE;
              }
            else
              handled = FALSE;
            break;
          case 2:
            if (KEY_IS ("ph"))
              {
                if (!read_text_value (s, &e->ph, &e->ph_len, &ok))
                  return FALSE;
              }
            else if (KEY_IS ("ts"))
              {
                if (!read_number_value_ns (s, &e->ts, &e->ts_ns, &e->has_ts))
                  return FALSE;
              }
            else if (KEY_IS ("id"))
              {
                if (!read_text_value (s, &e->id, &e->id_len, &ok))
                  return FALSE;
              }
            else if (KEY_IS ("bp"))
              {
                if (!read_text_value (s, &e->bp, &e->bp_len, &ok))
                  return FALSE;
              }
            else
              handled = FALSE;
            break;
          case 3:
            if (KEY_IS ("pid"))
              {
                if (!read_text_value (s, &e->pid, &e->pid_len, &e->has_pid))
                  return FALSE;
              }
            else if (KEY_IS ("tid"))
              {
                if (!read_text_value (s, &e->tid, &e->tid_len, &e->has_tid))
                  return FALSE;
              }
            else if (KEY_IS ("dur"))
              {
                if (!read_number_value_ns (s, &e->dur, &e->dur_ns, &e->has_dur))
                  return FALSE;
              }
            else if (KEY_IS ("cat"))
              {
                if (!read_text_value (s, &e->cat, &e->cat_len, &ok))
                  return FALSE;
              }
            else if (KEY_IS ("id2"))
              {
                if (!read_id2 (s, &e->id, &e->id_len))
                  return FALSE;
              }
            else
              handled = FALSE;
            break;
          case 4:
            if (KEY_IS ("name"))
              {
                if (!read_text_value (s, &e->name, &e->name_len, &ok))
                  return FALSE;
              }
            else if (KEY_IS ("args"))
              {
                WickJsonType type;
                const char *start;
                if (!wick_json_peek_type (s, &type))
                  return FALSE;
                start = s->p;
                if (!wick_json_skip_value (s))
                  return FALSE;
                if (type == WICK_JSON_OBJECT)
                  {
                    e->args = start;
                    e->args_len = (gsize)(s->p - start);
                  }
              }
            else
              handled = FALSE;
            break;
          case 5:
            if (KEY_IS ("scope"))
              {
                if (!read_text_value (s, &e->scope, &e->scope_len, &ok))
                  return FALSE;
              }
            else
              handled = FALSE;
            break;
          case 7:
            if (KEY_IS ("bind_id"))
              {
                if (!read_text_value (s, &e->bind_id, &e->bind_id_len, &ok))
                  return FALSE;
              }
            else if (KEY_IS ("flow_in"))
              {
                if (!read_bool_value (s, &e->flow_in))
                  return FALSE;
              }
            else
              handled = FALSE;
            break;
          case 8:
            if (KEY_IS ("flow_out"))
              {
                if (!read_bool_value (s, &e->flow_out))
                  return FALSE;
              }
            else
              handled = FALSE;
            break;
          default:
            handled = FALSE;
        }
      if (!handled && !wick_json_skip_value (s))
        return FALSE;
    }
  return !wick_json_failed (s);
}

/* ---- top level -------------------------------------------------------- */

/* Runs @parse at pos with refills until it succeeds, fails for good, or the
 * input ends inside it (then *cut is TRUE). */
typedef gboolean (*ParseFunc) (WickJsonScanner *s, gpointer data);

static gboolean
parse_with_refill (WickChromeReader *r, ParseFunc parse, gpointer data, gboolean *cut,
                   GError **error)
{
  *cut = FALSE;
  for (;;)
    {
      scanner_at_pos (r);
      if (parse (&r->scanner, data))
        {
          r->pos = (gsize)(r->scanner.p - r->buffer);
          return TRUE;
        }
      if (!ran_out (r))
        return fail_at (r, (gsize)(r->scanner.p - r->buffer), error, r->error->str);
      if (!refill (r))
        {
          if (input_failed (r, error))
            return FALSE;
          *cut = TRUE;
          return FALSE;
        }
    }
}

static gboolean
parse_key (WickJsonScanner *s, gpointer data)
{
  const char **kv = data;
  gsize len;

  if (!wick_json_read_string (s, &kv[0], &len))
    return FALSE;
  kv[1] = (const char *)(gsize)len;
  return TRUE;
}

static gboolean
parse_skip (WickJsonScanner *s, gpointer data)
{
  (void)data;
  return wick_json_skip_value (s);
}

static gboolean
parse_event_cb (WickJsonScanner *s, gpointer data)
{
  return parse_event (s, data);
}

/* At a member key of the top-level object (after '{' or ','): reads the key
 * and the ':'; *key is a copy. */
static gboolean
read_member_key (WickChromeReader *r, char **key, GError **error)
{
  const char *kv[2];
  gboolean cut;
  int c = peek_byte (r);

  if (c != '"')
    {
      if (c < 0)
        return input_failed (r, error)
                 ? FALSE
                 : fail_cut_at (r, r->pos, error, "EOF while parsing an object");
      return fail_at (r, r->pos, error, "key must be a string");
    }
  if (!parse_with_refill (r, parse_key, kv, &cut, error))
    return cut ? fail_cut_at (r, r->len, error, "EOF while parsing a string") : FALSE;
  *key = g_strndup (kv[0], (gsize)kv[1]);
  c = peek_byte (r);
  if (c < 0)
    return input_failed (r, error) ? FALSE
                                   : fail_cut_at (r, r->pos, error, "EOF while parsing an object");
  if (c != ':')
    return fail_at (r, r->pos, error, "expected `:`");
  r->pos++;
  return TRUE;
}

/* Skips a member's value, keeping its text when small. */
static gboolean
read_member_value (WickChromeReader *r, const char *key, GError **error)
{
  gboolean cut;
  gsize start;
  int c = peek_byte (r);

  if (c < 0)
    return input_failed (r, error) ? FALSE
                                   : fail_cut_at (r, r->pos, error, "EOF while parsing a value");
  start = r->pos;
  /* parse_with_refill moves the buffer: remember the offset from pos */
  if (!parse_with_refill (r, parse_skip, NULL, &cut, error))
    return cut ? fail_cut_at (r, r->len, error, "EOF while parsing a value") : FALSE;
  (void)start;
  {
    /* the value is [pos - its length, pos): refill only drops bytes before the
     * start of the parse, which is where the value starts */
    gsize value_start = r->pos - (gsize)(r->scanner.p - r->scanner.start);
    gsize value_len = r->pos - value_start;
    if (value_len <= METADATA_LIMIT)
      {
        g_ptr_array_add (r->metadata, g_strdup (key));
        g_ptr_array_add (r->metadata, g_strndup (r->buffer + value_start, value_len));
      }
    else
      g_ptr_array_add (r->warnings,
                       /* Translators: a member name of the trace's top-level JSON object and
                        * its size in bytes. */
                       g_strdup_printf (_ ("the top-level member \"%s\" (%llu bytes) is larger "
                                           "than 1 MiB and was not kept"),
                                        key, (unsigned long long)value_len));
  }
  return TRUE;
}

/* After a member value of the top-level object: ',' (TRUE, *more) or '}'. */
static gboolean
after_member (WickChromeReader *r, gboolean *more, GError **error)
{
  int c = peek_byte (r);

  if (c == ',')
    {
      r->pos++;
      *more = TRUE;
      return TRUE;
    }
  if (c == '}')
    {
      r->pos++;
      *more = FALSE;
      return TRUE;
    }
  if (c < 0)
    return input_failed (r, error) ? FALSE
                                   : fail_cut_at (r, r->pos, error, "EOF while parsing an object");
  return fail_at (r, r->pos, error, "expected `,` or `}`");
}

static gboolean
expect_end (WickChromeReader *r, GError **error)
{
  int c = peek_byte (r);

  if (c >= 0)
    return fail_at (r, r->pos, error, "trailing characters");
  return !input_failed (r, error);
}

static void
skip_bom (WickChromeReader *r)
{
  if (r->len - r->pos >= 3 && (guchar)r->buffer[r->pos] == 0xEF
      && (guchar)r->buffer[r->pos + 1] == 0xBB && (guchar)r->buffer[r->pos + 2] == 0xBF)
    r->pos += 3;
}

gboolean
wick_chrome_reader_start (WickChromeReader *r, WickFileFormat *format, GError **error)
{
  int c;

  *format = WICK_FILE_FORMAT_UNKNOWN;
  if (r->len == 0)
    refill (r);
  skip_bom (r);
  c = peek_byte (r);
  if (c < 0)
    {
      if (input_failed (r, error))
        return FALSE;
      r->start_failure = WICK_CHROME_START_EMPTY;
      return set_failure (r, WICK_DOCUMENT_ERROR_EMPTY, 0, 0, "the file is empty", error);
    }
  if (c == '[')
    {
      r->pos++;
      r->chrome_evidence = TRUE;
      c = peek_byte (r);
      if (c == '[')
        {
          *format = WICK_FILE_FORMAT_MEMORY_TIMELINE;
          return TRUE;
        }
      *format = WICK_FILE_FORMAT_CHROME;
      r->state = STATE_EVENTS_FIRST;
      r->seen_events = TRUE;
      return TRUE;
    }
  if (c != '{')
    return fail_at (r, r->pos, error,
                    "expected a JSON object or array (a Chrome trace, a torch memory "
                    "timeline or candle-graph JSONL)");
  r->pos++;
  r->object_form = TRUE;
  c = peek_byte (r);
  if (c == '}')
    {
      r->pos++;
      c = peek_byte (r);
      if (c >= 0)
        *format = WICK_FILE_FORMAT_JSONL;
      else
        return fail_at (r, r->pos, error,
                        "an empty object is not a trace: expected \"traceEvents\" (Chrome "
                        "trace) or one candle-graph record per line");
      return TRUE;
    }
  for (;;)
    {
      g_autofree char *key = NULL;
      gboolean more;
      if (!read_member_key (r, &key, error))
        return FALSE;
      if (strcmp (key, "traceEvents") == 0)
        {
          r->chrome_evidence = TRUE;
          c = peek_byte (r);
          if (c != '[')
            return fail_at (r, r->pos, error, "\"traceEvents\" must be an array of events");
          r->pos++;
          r->seen_events = TRUE;
          r->state = STATE_EVENTS_FIRST;
          *format = WICK_FILE_FORMAT_CHROME;
          return TRUE;
        }
      if (strcmp (key, "kind") == 0)
        {
          *format = WICK_FILE_FORMAT_JSONL;
          return TRUE;
        }
      if (!read_member_value (r, key, error))
        return FALSE;
      if (!after_member (r, &more, error))
        return FALSE;
      if (!more)
        break;
    }
  /* an object without traceEvents: JSONL when another value follows */
  c = peek_byte (r);
  if (c >= 0)
    {
      *format = WICK_FILE_FORMAT_JSONL;
      return TRUE;
    }
  if (input_failed (r, error))
    return FALSE;
  {
    g_autoptr (GString) keys = g_string_new (NULL);
    for (guint i = 0; i < r->metadata->len && i < 16; i += 2)
      g_string_append_printf (keys, "%s\"%s\"", i ? ", " : "",
                              (const char *)g_ptr_array_index (r->metadata, i));
    g_autofree char *cause
      = g_strdup_printf ("not a trace Wick can read: a JSON object with the members %s but no "
                         "\"traceEvents\" array (expected a Chrome trace-event file, a torch "
                         "memory timeline [times, sizes] or candle-graph JSONL)",
                         keys->len ? keys->str : "(none)");
    r->start_failure = WICK_CHROME_START_NOT_A_TRACE;
    return set_failure (r, WICK_DOCUMENT_ERROR_NOT_A_TRACE, 0, 0, cause, error);
  }
}

const char *
wick_chrome_reader_get_failure (WickChromeReader *r, guint64 *line, guint64 *column)
{
  *line = r->failure_line;
  *column = r->failure_column;
  return r->failure_cause;
}

WickChromeStartFailure
wick_chrome_reader_get_start_failure (WickChromeReader *r)
{
  return r->chrome_evidence ? WICK_CHROME_START_DAMAGED : r->start_failure;
}

static void
cut_off_warning (WickChromeReader *r)
{
  guint64 line, column;

  position_of (r, r->len, &line, &column);
  r->cut_off = TRUE;
  g_ptr_array_add (r->warnings,
                   g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                                 /* Translators: file:line:column, then the
                                                  * number of events read. */
                                                 "%s:%llu:%llu: the file is cut off inside the "
                                                 "events; the %llu event before the cut was read",
                                                 "%s:%llu:%llu: the file is cut off inside the "
                                                 "events; the %llu events before the cut were "
                                                 "read",
                                                 r->n_events > G_MAXULONG ? G_MAXULONG
                                                                          : (gulong)r->n_events),
                                    r->name, (unsigned long long)line,
                                    (unsigned long long)column,
                                    (unsigned long long)r->n_events));
}

/* After the events array closed: the rest of the top-level object. A second
 * "traceEvents" array is read too, with a warning (a parser that keeps one
 * member of a name sees only one of them): *more_events then says the reader
 * is back inside an events array. */
static gboolean
finish_object (WickChromeReader *r, gboolean *more_events, GError **error)
{
  gboolean more;

  *more_events = FALSE;
  if (!r->object_form)
    return expect_end (r, error);
  if (!after_member (r, &more, error))
    return FALSE;
  while (more)
    {
      g_autofree char *key = NULL;
      if (!read_member_key (r, &key, error))
        return FALSE;
      if (strcmp (key, "traceEvents") == 0 && peek_byte (r) == '[')
        {
          guint64 line, column;
          position_of (r, r->pos, &line, &column);
          g_ptr_array_add (r->warnings,
                           /* Translators: %s:%llu:%llu is file:line:column; traceEvents is
                            * the name of the member, kept as it is. */
                           g_strdup_printf (_ ("%s:%llu:%llu: a second \"traceEvents\" array; "
                                               "its events are read too (a JSON reader that "
                                               "keeps one member of a name sees only one of "
                                               "the arrays)"),
                                            r->name, (unsigned long long)line,
                                            (unsigned long long)column));
          r->pos++;
          r->state = STATE_EVENTS_FIRST;
          *more_events = TRUE;
          return TRUE;
        }
      if (!read_member_value (r, key, error) || !after_member (r, &more, error))
        return FALSE;
    }
  return expect_end (r, error);
}

gboolean
wick_chrome_reader_next (WickChromeReader *r, WickChromeEvent *event, GError **error)
{
  for (;;)
    {
      int c;
      gboolean cut;
      gsize start;

      if (r->state == STATE_DONE || r->state == STATE_START)
        return FALSE;
      c = peek_byte (r);
      if (c < 0)
        {
          if (input_failed (r, error))
            return FALSE;
          cut_off_warning (r);
          r->state = STATE_DONE;
          return FALSE;
        }
      if (c == ']')
        {
          GError *local = NULL;
          gboolean more_events = FALSE;
          r->pos++;
          r->state = STATE_DONE;
          if (finish_object (r, &more_events, &local))
            {
              if (more_events)
                continue;
              return FALSE;
            }
          if (r->eof && g_error_matches (local, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_TRUNCATED))
            {
              /* cut off in the members after the events: the events are whole */
              g_ptr_array_add (r->warnings,
                               /* Translators: %s is the parse error (file:line:column: what
                                * was expected). */
                               g_strdup_printf (_ ("%s (the file is cut off after the events)"),
                                                local->message));
              r->cut_off = TRUE;
              g_error_free (local);
              return FALSE;
            }
          g_propagate_error (error, local);
          return FALSE;
        }
      if (r->state == STATE_EVENTS)
        {
          if (c != ',')
            return fail_at (r, r->pos, error, "expected `,` or `]`");
          r->pos++;
          c = peek_byte (r);
          if (c == ']')
            {
              guint64 line, column;
              position_of (r, r->pos, &line, &column);
              g_ptr_array_add (r->warnings,
                               /* Translators: %s:%llu:%llu is file:line:column. */
                               g_strdup_printf (_ ("%s:%llu:%llu: trailing comma after the "
                                                   "last event"),
                                                r->name, (unsigned long long)line,
                                                (unsigned long long)column));
              continue;
            }
          if (c < 0)
            continue;
        }
      r->state = STATE_EVENTS;
      start = r->pos;
      (void)start;
      if (c != '{')
        {
          if (!parse_with_refill (r, parse_skip, NULL, &cut, error))
            {
              if (!cut)
                return FALSE;
              cut_off_warning (r);
              r->state = STATE_DONE;
              return FALSE;
            }
          r->non_objects++;
          continue;
        }
      if (!parse_with_refill (r, parse_event_cb, event, &cut, error))
        {
          if (!cut)
            return FALSE;
          cut_off_warning (r);
          r->state = STATE_DONE;
          return FALSE;
        }
      event->index = r->n_events++;
      /* refills drop only bytes before the start of the parse: the event is
       * the last (scanner.p - scanner.start) bytes before pos */
      event->raw_len = (gsize)(r->scanner.p - r->scanner.start);
      event->raw = r->buffer + r->pos - event->raw_len;
      event->scratch_len = r->scanner.unescape_len;
      return TRUE;
    }
}

/* ---- copies of events ------------------------------------------------- */

#define EVENT_STRING(field)                                                                        \
  {                                                                                                \
    G_STRUCT_OFFSET (WickChromeEvent, field), G_STRUCT_OFFSET (WickChromeEvent, field##_len)       \
  }
static const struct
{
  gsize str, len;
} event_strings[] = {
  EVENT_STRING (ph),    EVENT_STRING (name), EVENT_STRING (cat),  EVENT_STRING (id),
  EVENT_STRING (scope), EVENT_STRING (s),    EVENT_STRING (bp),   EVENT_STRING (bind_id),
  EVENT_STRING (pid),   EVENT_STRING (tid),  EVENT_STRING (args),
};
/* 11 strings, raw and scratch_len, 6 flags, 4 numbers and index: a field added to
 * WickChromeEvent changes this; add its string to event_strings above */
#if GLIB_SIZEOF_VOID_P == 8
G_STATIC_ASSERT (sizeof (WickChromeEvent) == 11 * 16 + 24 + 6 * sizeof (gboolean) + 4 * 8 + 8);
#endif

#define FIELD_STR(e, k) (*(const char **)(gpointer)((char *)(e) + event_strings[k].str))
#define FIELD_LEN(e, k) (*(gsize *)(gpointer)((char *)(e) + event_strings[k].len))

static gboolean
in_raw (const WickChromeEvent *e, const char *p)
{
  return p >= e->raw && p < e->raw + e->raw_len;
}

gsize
wick_chrome_event_copy_size (const WickChromeEvent *e)
{
  return e->raw_len + e->scratch_len;
}

gsize
wick_chrome_event_copy (const WickChromeEvent *e, WickChromeEvent *copy, char *arena)
{
  gsize used = e->raw_len;

  *copy = *e;
  if (e->raw_len > 0)
    memcpy (arena, e->raw, e->raw_len);
  copy->raw = arena;
  for (guint k = 0; k < G_N_ELEMENTS (event_strings); k++)
    {
      const char *p = FIELD_STR (e, k);
      if (p == NULL)
        continue;
      if (in_raw (e, p))
        FIELD_STR (copy, k) = arena + (p - e->raw);
      else
        {
          /* unescaped text lives in the reader's scratch */
          gsize len = FIELD_LEN (e, k);
          memcpy (arena + used, p, len);
          FIELD_STR (copy, k) = arena + used;
          used += len;
        }
    }
  return used;
}

const GPtrArray *
wick_chrome_reader_get_metadata (WickChromeReader *r)
{
  return r->metadata;
}

guint64
wick_chrome_reader_get_non_objects (WickChromeReader *r)
{
  return r->non_objects;
}

const GPtrArray *
wick_chrome_reader_get_warnings (WickChromeReader *r)
{
  return r->warnings->len > 0 ? r->warnings : NULL;
}

gboolean
wick_chrome_reader_was_cut_off (WickChromeReader *r)
{
  return r->cut_off;
}

/* ---- torch memory timeline -------------------------------------------- */

typedef struct
{
  GArray *times, *sizes;
  guint n_categories;
  const char *problem;
  gboolean raw; /* export_memory_timeline's .raw.json: [t_ns, action, bytes, category] rows */
} Timeline;

#define RAW_CATEGORIES 8 /* torch's _CATEGORY_TO_INDEX: PARAMETER ... AUTOGRAD_DETAIL, None */

/* The raw rows (in @times, 4 numbers each) into the [times, sizes] form,
 * as torch's _coalesce_timeline makes it for export_memory_timeline: a row
 * per distinct time in µs (int (t_ns / 1000.0), as Python divides), each
 * row the last one plus the deltas at that time in column category + 1
 * (column 0 stays 0), pre-existing ones (t = -1) at the first real time. */
static const char *
raw_to_timeline (GArray *rows, GArray *times, GArray *sizes)
{
  g_autoptr (GArray) out_t = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GArray) out_s = g_array_new (FALSE, FALSE, sizeof (gint64));
  gint64 t_min = -1;
  for (guint i = 0; i + 3 < rows->len; i += 4)
    {
      gint64 t = g_array_index (rows, gint64, i);
      gint64 action = g_array_index (rows, gint64, i + 1);
      gint64 bytes = g_array_index (rows, gint64, i + 2);
      gint64 category = g_array_index (rows, gint64, i + 3);
      if (category < 0 || category >= RAW_CATEGORIES)
        return "a raw memory timeline's category is not 0 to 7";
      if (action < 1 || action > 4)
        return "a raw memory timeline's action is not 1 to 4";
      /* Python's int / int is the double nearest the exact quotient (not
       * float (t) / 1000); long double holds t exactly, so one rounding. */
      if (t != -1)
        t = (gint64)(double)((long double)t / 1000.0L);
      if (t_min == -1 || (t < t_min && t > 0))
        t_min = t;
      if (out_t->len == 0 || t != g_array_index (out_t, gint64, out_t->len - 1))
        {
          g_array_append_val (out_t, t);
          guint from = out_s->len;
          g_array_set_size (out_s, from + RAW_CATEGORIES + 1);
          for (guint c = 0; c <= RAW_CATEGORIES; c++)
            g_array_index (out_s, gint64, from + c)
              = from == 0 ? 0 : g_array_index (out_s, gint64, from - RAW_CATEGORIES - 1 + c);
        }
      g_array_index (out_s, gint64, out_s->len - RAW_CATEGORIES + category) += bytes;
    }
  g_array_set_size (times, 0);
  g_array_set_size (sizes, 0);
  for (guint i = 0; i < out_t->len; i++)
    {
      gint64 t = g_array_index (out_t, gint64, i);
      if (t < 0)
        t = t_min;
      g_array_append_val (times, t);
    }
  g_array_append_vals (sizes, out_s->data, out_s->len);
  return NULL;
}

static gboolean
read_int_array (WickJsonScanner *s, GArray *out, guint *count, const char **problem)
{
  gboolean first = TRUE;
  WickJsonType type;

  *count = 0;
  if (!wick_json_peek_type (s, &type))
    return FALSE;
  if (type != WICK_JSON_ARRAY)
    {
      *problem = "expected an array of numbers";
      return wick_json_skip_value (s);
    }
  if (!wick_json_array_begin (s))
    return FALSE;
  while (wick_json_array_next (s, &first))
    {
      WickJsonNumber n;
      gint64 v;
      if (!wick_json_peek_type (s, &type))
        return FALSE;
      if (type != WICK_JSON_NUMBER)
        {
          *problem = "expected numbers";
          if (!wick_json_skip_value (s))
            return FALSE;
          continue;
        }
      if (!wick_json_read_number (s, &n))
        return FALSE;
      v = n.kind == WICK_JSON_U64 ? (gint64)MIN (n.u64, (guint64)G_MAXINT64)
          : n.kind == WICK_JSON_I64 ? n.i64
                                    : (gint64)CLAMP (n.f64, -9e18, 9e18);
      g_array_append_val (out, v);
      (*count)++;
    }
  return !wick_json_failed (s);
}

static gboolean
parse_timeline (WickJsonScanner *s, gpointer data)
{
  Timeline *t = data;
  gboolean first = TRUE;
  guint n;

  g_array_set_size (t->times, 0);
  g_array_set_size (t->sizes, 0);
  t->problem = NULL;
  t->n_categories = 0;
  t->raw = FALSE;
  if (!read_int_array (s, t->times, &n, &t->problem))
    return FALSE;
  wick_json_skip_whitespace (s);
  if (s->p >= s->end)
    return wick_json_fail_eof (s, "EOF while parsing a list");
  if (*s->p == ']' && n == 4)
    {
      s->p++; /* a raw timeline of one row */
      t->raw = TRUE;
      return TRUE;
    }
  if (*s->p != ',')
    {
      t->problem = "expected [times, sizes]";
      return TRUE;
    }
  s->p++;
  wick_json_skip_whitespace (s);
  if (s->p >= s->end)
    return wick_json_fail_eof (s, "EOF while parsing a list");
  if (*s->p != '[')
    {
      t->problem = "expected the sizes as an array of arrays";
      return wick_json_skip_value (s);
    }
  /* [[t, action, bytes, category], [t, ...], ...]: the raw form (its second
   * element holds numbers, where the sizes' holds rows) */
  const char *q = wick_json_lex_whitespace (s->p + 1, s->end);
  if (n == 4 && q < s->end && (*q == '-' || (*q >= '0' && *q <= '9')))
    {
      t->raw = TRUE;
      for (;;)
        {
          if (!read_int_array (s, t->times, &n, &t->problem))
            return FALSE;
          if (n != 4 && t->problem == NULL)
            t->problem = "a raw memory timeline's row is not [time, action, bytes, category]";
          wick_json_skip_whitespace (s);
          if (s->p >= s->end)
            return wick_json_fail_eof (s, "EOF while parsing a list");
          if (*s->p == ']')
            {
              s->p++;
              return TRUE;
            }
          if (*s->p != ',')
            return wick_json_fail (s, "expected , or ] between the raw timeline's rows");
          s->p++;
          wick_json_skip_whitespace (s);
        }
    }
  if (!wick_json_array_begin (s))
    return FALSE;
  while (wick_json_array_next (s, &first))
    {
      if (!read_int_array (s, t->sizes, &n, &t->problem))
        return FALSE;
      if (t->n_categories == 0)
        t->n_categories = n;
      else if (n != t->n_categories)
        t->problem = "the rows of sizes differ in length";
    }
  if (wick_json_failed (s))
    return FALSE;
  wick_json_skip_whitespace (s);
  if (s->p >= s->end)
    return wick_json_fail_eof (s, "EOF while parsing a list");
  if (*s->p != ']')
    {
      t->problem = "expected exactly two arrays, [times, sizes]";
      return TRUE;
    }
  s->p++;
  return TRUE;
}

gboolean
wick_chrome_reader_memory_timeline (WickChromeReader *r, GArray *times, GArray *sizes,
                                    guint *n_categories, GError **error)
{
  Timeline t = { times, sizes, 0, NULL };
  gboolean cut;

  if (!parse_with_refill (r, parse_timeline, &t, &cut, error))
    {
      if (cut)
        return fail_at (r, r->len, error, "the memory timeline is cut off");
      return FALSE;
    }
  if (t.problem == NULL && t.raw)
    {
      g_autoptr (GArray) rows = g_array_copy (times);
      t.problem = raw_to_timeline (rows, times, sizes);
      t.n_categories = RAW_CATEGORIES + 1;
    }
  if (t.problem == NULL && times->len * MAX (1u, t.n_categories) != sizes->len)
    t.problem = "times and sizes differ in length";
  if (t.problem != NULL)
    return fail_at (r, r->pos, error, t.problem);
  *n_categories = t.n_categories;
  return expect_end (r, error);
}

/* ---- args ------------------------------------------------------------- */

static gboolean
find_member (WickJsonScanner *s, const char *key_wanted)
{
  gboolean first = TRUE;
  const char *key;
  gsize key_len, wanted = strlen (key_wanted);

  if (s->p >= s->end || *s->p != '{' || !wick_json_object_begin (s))
    return FALSE;
  while (wick_json_object_next (s, &first, &key, &key_len))
    {
      if (key_len == wanted && memcmp (key, key_wanted, wanted) == 0)
        return TRUE;
      if (!wick_json_skip_value (s))
        return FALSE;
    }
  return FALSE;
}

gboolean
wick_chrome_args_number (const char *args, gsize len, const char *key, double *value)
{
  g_autoptr (GString) error = NULL;
  WickJsonScanner s;
  char small[256];
  g_autofree char *large = NULL;
  gboolean ok = FALSE;

  if (args == NULL)
    return FALSE;
  error = g_string_new (NULL);
  wick_json_scanner_init (&s, args, args + len, error,
                          len <= sizeof small ? small : (large = g_malloc (len)));
  if (!find_member (&s, key))
    return FALSE;
  if (!read_number_value (&s, value, &ok))
    return FALSE;
  return ok;
}

void
wick_chrome_args_numbers (const char *args, gsize len, const char *const *keys, guint n_keys,
                          double *values, gboolean *found, GString *error)
{
  WickJsonScanner s;
  char small[512];
  g_autofree char *large = NULL;
  gboolean first = TRUE;
  const char *key;
  gsize key_len;
  guint64 seen = 0, all = n_keys >= 64 ? G_MAXUINT64 : ((guint64)1 << n_keys) - 1;

  g_assert (n_keys <= 64);
  for (guint k = 0; k < n_keys; k++)
    found[k] = FALSE, values[k] = 0;
  if (args == NULL || len == 0 || *args != '{')
    return;
  wick_json_scanner_init (&s, args, args + len, error,
                          len <= sizeof small ? small : (large = g_malloc (len)));
  if (!wick_json_object_begin (&s))
    return;
  while (seen != all && wick_json_object_next (&s, &first, &key, &key_len))
    {
      guint k;
      for (k = 0; k < n_keys; k++)
        if (!(seen & ((guint64)1 << k)) && strlen (keys[k]) == key_len
            && memcmp (keys[k], key, key_len) == 0)
          break;
      if (k == n_keys)
        {
          if (!wick_json_skip_value (&s))
            return;
          continue;
        }
      seen |= (guint64)1 << k;
      if (!read_number_value (&s, &values[k], &found[k]))
        return;
      if (!found[k])
        values[k] = 0;
    }
}

gboolean
wick_chrome_args_string (const char *args, gsize len, const char *key, GString *out)
{
  g_autoptr (GString) error = NULL;
  WickJsonScanner s;
  g_autofree char *scratch = NULL;
  const char *str;
  gsize str_len;
  gboolean ok = FALSE;

  if (args == NULL)
    return FALSE;
  error = g_string_new (NULL);
  scratch = g_malloc (len + 1);
  wick_json_scanner_init (&s, args, args + len, error, scratch);
  if (!find_member (&s, key))
    return FALSE;
  if (!read_text_value (&s, &str, &str_len, &ok) || !ok)
    return FALSE;
  g_string_append_len (out, str, (gssize)str_len);
  return TRUE;
}
