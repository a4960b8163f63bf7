/* test-model-address.c — a memory record's "wick_address" (docs/format.md)
 * read into WickMemoryEvent.address: from a file's lines (good values, bad
 * ones counted and named in the health, never a load failure, nothing read
 * in strict mode) and from a live session's ring records committed as values,
 * which must give the same document as the stream's lines read as text. */
#include "config.h"

#include <glib/gstdio.h>
#include <unistd.h>
#include <wick/wick.h>

#include "client/wick-live-stream.h"
#include "client/wick-live-stream-private.h"
#include "wick-document.h"
#include "wick-document-private.h"
#include "wick-record.h"

#define META                                                                                       \
  "{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/10\",\"run_id\":\"r\","                      \
  "\"correlation_id\":\"c\",\"entrypoint\":\"e\",\"phase\":\"train\","                             \
  "\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"capture_step\":1,\"warmup_steps\":0,"             \
  "\"device\":\"cuda:0\",\"measured_region_device_synchronized\":false,"                          \
  "\"timing_mode\":\"host\",\"capture_contract\":{\"measurement_scope\":\"profiled_work\","   \
  "\"operations\":\"none\",\"tensors\":\"none\",\"gradients\":\"none\","      \
  "\"logical_memory\":\"partial\",\"physical_memory\":\"none\","                           \
  "\"device_timing\":\"none\"},\"tags\":{}}"
#define ROOT "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"root\",\"start_ns\":0,\"span_kind\":\"function\"}"
#define MEM(ts, storage, action, extra)                                                            \
  "{\"kind\":\"memory\",\"timestamp_ns\":" ts ",\"storage_id\":\"" storage                         \
  "\",\"tensor_id\":\"t\",\"span_id\":\"s1\",\"device\":\"cuda:0\",\"bytes\":64,\"action\":\""     \
  action "\",\"dtype\":\"f32\",\"category\":\"activation\"" extra "}"
#define END "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":100}"
#define TERMINAL "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":100}"

static WickDocument *
load_lines (const char *const *lines, gboolean extensions)
{
  WickDocument *doc = wick_document_new_with_extensions (extensions);
  GError *error = NULL;
  for (guint i = 0; lines[i] != NULL; i++)
    {
      gboolean fed = wick_document_feed_line (doc, lines[i], strlen (lines[i]), &error);
      g_assert_no_error (error);
      g_assert_true (fed);
    }
  g_assert_true (wick_document_finish (doc, &error));
  g_assert_no_error (error);
  return doc;
}

static const WickHealthIssue *
find_issue (WickDocument *doc, const char *code)
{
  guint n;
  const WickHealthIssue *issues = wick_document_get_health (doc, &n);
  for (guint i = 0; i < n; i++)
    if (g_strcmp0 (issues[i].code, code) == 0)
      return &issues[i];
  return NULL;
}

static void
test_file (void)
{
  const char *lines[] = {
    META,
    ROOT,
    MEM ("1", "a", "alloc", ",\"wick_address\":\"0x7f0012345600\""),
    MEM ("2", "b", "alloc", ",\"wick_address\":\"0xFFFFFFFFFFFFFFFF\""), /* upper case, 2^64-1 */
    MEM ("3", "c", "alloc", ""),                                          /* no key */
    MEM ("4", "d", "alloc", ",\"wick_address\":140737488355328"),         /* a number */
    MEM ("5", "e", "alloc", ",\"wick_address\":\"0x1ffffffffffffffff\""), /* 17 digits */
    MEM ("6", "f", "alloc", ",\"wick_address\":\"7f00\""),                /* no 0x */
    MEM ("7", "g", "alloc", ",\"wick_address\":\"0x\""),                  /* no digits */
    MEM ("8", "h", "alloc", ",\"wick_address\":\"0x0\""),                 /* zero */
    MEM ("9", "i", "alloc", ",\"wick_address\":\"0x10\",\"wick_address\":\"0x20\""),
    MEM ("10", "j", "alloc", ",\"wick_address\":\"0x1g\""),
    MEM ("11", "k", "alloc", ",\"wick_address\":\"0x\\u0031\""), /* an escape */
    MEM ("12", "l", "alloc", ",\"wick_address\":null"),
    MEM ("13", "a", "free", ",\"wick_address\":\"0x7f0012345600\""),
    END,
    TERMINAL,
    NULL,
  };
  const guint64 expected[] = { 0x7f0012345600, G_MAXUINT64, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                               0x7f0012345600 };
  g_autoptr (WickDocument) doc = load_lines (lines, TRUE);
  guint n;
  const WickMemoryEvent *memory = wick_document_get_memory (doc, &n);
  g_assert_cmpuint (n, ==, G_N_ELEMENTS (expected));
  for (guint i = 0; i < n; i++)
    g_assert_cmpuint (memory[i].address, ==, expected[i]);
  guint64 first_line = 0;
  /* d, e, f, g, h, i (twice), j, k, l */
  g_assert_cmpuint (wick_document_get_bad_addresses (doc, &first_line), ==, 9);
  g_assert_cmpuint (first_line, ==, 6);
  const WickHealthIssue *issue = find_issue (doc, "wick_address_invalid");
  g_assert_nonnull (issue);
  g_assert_cmpint (issue->severity, ==, WICK_SEVERITY_WARNING);
  g_assert_cmpint (issue->record_type, ==, WICK_RECORD_MEMORY);
  g_assert_cmpint (issue->record_index, ==, 3);
  g_assert_nonnull (strstr (issue->message, "9 memory records"));
  g_assert_nonnull (strstr (issue->message, "line 6: not a string"));
  /* strict (candle-graph's reading): an unknown key, nothing read or said */
  g_autoptr (WickDocument) strict = load_lines (lines, FALSE);
  /* bad values are no error: the health is the strict one's and the note */
  guint n_strict, n_ext;
  wick_document_get_health (strict, &n_strict);
  wick_document_get_health (doc, &n_ext);
  g_assert_cmpuint (n_ext, ==, n_strict + 1);
  g_assert_cmpint (wick_document_get_structurally_valid (doc), ==,
                   wick_document_get_structurally_valid (strict));
  memory = wick_document_get_memory (strict, &n);
  for (guint i = 0; i < n; i++)
    g_assert_cmpuint (memory[i].address, ==, 0);
  g_assert_cmpuint (wick_document_get_bad_addresses (strict, NULL), ==, 0);
  g_assert_null (find_issue (strict, "wick_address_invalid"));

  /* each problem named */
  const char *single[][2] = {
    { ",\"wick_address\":\"0x1ffffffffffffffff\"", "more than 16 hex digits" },
    { ",\"wick_address\":\"abc\"", "not \"0x\" and hex digits" },
    { ",\"wick_address\":\"0x0\"", "zero" },
    { ",\"wick_address\":\"0x1\",\"wick_address\":\"0x1\"", "the key twice" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (single); i++)
    {
      g_autofree char *line = g_strdup_printf (
        "{\"kind\":\"memory\",\"timestamp_ns\":1,\"storage_id\":\"a\",\"tensor_id\":\"t\","
        "\"span_id\":\"s1\",\"device\":\"cuda:0\",\"bytes\":64,\"action\":\"alloc\","
        "\"dtype\":\"f32\"%s}",
        single[i][0]);
      const char *one[] = { META, ROOT, line, END, TERMINAL, NULL };
      g_autoptr (WickDocument) d = load_lines (one, TRUE);
      const WickHealthIssue *note = find_issue (d, "wick_address_invalid");
      g_assert_nonnull (note);
      g_test_message ("%s", note->message);
      g_autofree char *said = g_strdup_printf ("(line 3: %s)", single[i][1]);
      g_assert_nonnull (strstr (note->message, said));
    }
}

/* ---- live --------------------------------------------------------------- */

typedef struct
{
  WickDocument *values; /* committed from the ring records' values */
  WickDocument *text;   /* the same stream's lines, read as text */
  guint built, as_text;
} Live;

static void
on_record (WickRecordBuilder *builder, const char *line, gsize length, gpointer user_data)
{
  Live *live = user_data;
  GError *error = NULL;
  if (builder != NULL)
    {
      g_assert_true (wick_document_commit_built (live->values, builder, &error));
      live->built += builder->kind == WICK_KIND_MEMORY;
    }
  else
    {
      g_assert_true (wick_document_feed_line (live->values, line, length, &error));
      live->as_text++;
    }
  g_assert_no_error (error);
  g_assert_true (wick_document_feed_line (live->text, line, length, &error));
  g_assert_no_error (error);
}

static void
ok (gboolean result, WickError *error)
{
  if (!result)
    g_error ("%s", error->message);
}

static void
test_live (void)
{
  WickError error;
  g_autofree char *name = g_strdup_printf ("wick-model-address-%d.jsonl", (int)getpid ());
  g_autofree char *path = g_build_filename (g_get_tmp_dir (), name, NULL);
  WickRunInfo run = { .entrypoint = "address", .phase = WICK_PHASE_TRAIN, .capture_step = 1,
                      .device = "cuda:0" };
  WickCaptureContract contract = { .measurement_scope = WICK_SCOPE_PROFILED_WORK,
                                   .logical_memory = WICK_COVERAGE_PARTIAL };
  WickSessionOptions options = { .jsonl_path = path, .policy = WICK_RING_BLOCK };
  WickSession *session = wick_session_open (&run, &contract, &options, &error);
  g_assert_nonnull (session);
  GError *gerror = NULL;
  g_autoptr (WickLiveStream) stream
    = wick_live_stream_new (wick_session_get_ring_fd (session), FALSE, &gerror);
  g_assert_no_error (gerror);
  Live live = { wick_document_new_with_extensions (TRUE), wick_document_new_with_extensions (TRUE) };
  wick_live_stream_set_record_func (stream, on_record);

  WickSpanId span = wick_span_begin (session, "step", WICK_SPAN_FUNCTION);
  uint64_t shape[] = { 16 };
  for (int i = 0; i < 8; i++)
    {
      char storage[32];
      g_snprintf (storage, sizeof storage, "storage:%d", i);
      WickMemoryRecord m = { .timestamp_ns = WICK_NOW, .storage_id = storage,
                             .tensor_id = storage, .span = span, .device = "cuda:0",
                             .bytes = 64, .action = WICK_MEMORY_ALLOC, .shape = shape, .rank = 1,
                             .dtype = "f32", .category = WICK_CATEGORY_ACTIVATION,
                             /* 0 for one of them: no address known */
                             .address = i == 3 ? 0 : 0x7f0000000000u + (uint64_t)i * 0x200 };
      ok (wick_session_record_memory (session, &m, &error), &error);
      m.action = WICK_MEMORY_FREE;
      ok (wick_session_record_memory (session, &m, &error), &error);
    }
  g_assert_true (wick_span_end (session, span));
  ok (wick_session_finish (session, &error), &error);
  for (int tries = 0; tries < 1000 && !wick_live_stream_has_terminal (stream); tries++)
    if (wick_live_stream_drain (stream, 0, NULL, &live) == 0)
      g_usleep (1000);
  g_assert_true (wick_live_stream_has_terminal (stream));
  wick_live_stream_finish (stream, "the test ended", NULL, &live);
  wick_session_close (session);
  gboolean finished = wick_document_finish (live.values, &gerror);
  g_assert_no_error (gerror);
  g_assert_true (finished);
  finished = wick_document_finish (live.text, &gerror);
  g_assert_no_error (gerror);
  g_assert_true (finished);
  g_test_message ("%u memory records as values, %u lines as text", live.built, live.as_text);
  g_assert_cmpuint (live.built, ==, 16);

  guint n;
  const WickMemoryEvent *memory = wick_document_get_memory (live.values, &n);
  g_assert_cmpuint (n, ==, 16);
  for (guint i = 0; i < n; i++)
    g_assert_cmpuint (memory[i].address, ==, i / 2 == 3 ? 0 : 0x7f0000000000u + (i / 2) * 0x200);
  g_autofree char *values_digest = wick_document_digest (live.values);
  g_autofree char *text_digest = wick_document_digest (live.text);
  g_assert_cmpstr (values_digest, ==, text_digest);

  /* and the session's own file */
  g_autoptr (WickDocument) file = wick_document_new_with_extensions (TRUE);
  g_assert_true (wick_document_load_file (file, path, NULL, NULL, NULL, &gerror));
  g_assert_no_error (gerror);
  const WickMemoryEvent *from_file = wick_document_get_memory (file, &n);
  g_assert_cmpuint (n, ==, 16);
  for (guint i = 0; i < n; i++)
    g_assert_cmpuint (from_file[i].address, ==, memory[i].address);
  g_assert_cmpuint (wick_document_get_bad_addresses (file, NULL), ==, 0);
  g_object_unref (live.values);
  g_object_unref (live.text);
  g_unlink (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model/address/file", test_file);
  g_test_add_func ("/model/address/live", test_live);
  return g_test_run ();
}
