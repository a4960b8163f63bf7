/* test-model-chrome-export.c — the track model written as Chrome JSON
 * (wick-chrome-export.h): device intervals of a candle-graph trace on the host
 * clock through their spans, object events and samples kept, the counts by
 * phase kept through an export and a re-import, gzip files. */
#include "config.h"

#include <glib/gstdio.h>

#include "model-test-util.h"
#include "wick-chrome-export.h"
#include "wick-chrome-import.h"
#include "wick-chrome-import-private.h"
#include "wick-device-clock.h"
#include "wick-tracks.h"

static gboolean
append_to_string (const char *data, gsize len, gpointer user_data, GError **error)
{
  g_string_append_len (user_data, data, (gssize)len);
  return TRUE;
}

static char *
export_text (WickDocument *doc)
{
  GString *out = g_string_new (NULL);
  g_assert_true (wick_chrome_export (doc, append_to_string, out, NULL));
  return g_string_free (out, FALSE);
}

/* The text of the first event line holding @needle. */
static char *
event_with (const char *text, const char *needle)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    if (strstr (lines[i], needle))
      return g_strdup (lines[i]);
  g_error ("no event with %s in %s", needle, text);
  return NULL;
}

#define INTERVAL(span, clock, start, dur)                                                          \
  "{\"kind\":\"device_interval\",\"span_id\":\"" span "\",\"device\":\"cuda:0\",\"stream_id\":"    \
  "\"7\",\"clock_id\":\"" clock "\",\"backend\":\"cuda\",\"start_ns\":" start                      \
  ",\"duration_ns\":" dur "}"

/* A device clock hours away from the host's is moved onto it so that the
 * earliest launch starts with its span; a clock already on the host's keeps
 * its times. */
static void
test_export_device_clock (void)
{
  g_autoptr (WickDocument) doc = parse_lines (
    META_INFER, ROOT_START,
    "{\"kind\":\"span_start\",\"id\":\"s2\",\"parent_id\":\"s1\",\"name\":\"forward\","
    "\"start_ns\":10,\"span_kind\":\"module\"}",
    "{\"kind\":\"op\",\"span_id\":\"s2\",\"op_name\":\"matmul\",\"shape\":[2],\"dtype\":\"f32\","
    "\"device\":\"cuda:0\",\"duration_ns\":3,\"input_dense_bytes\":8,\"timestamp_ns\":11}",
    "{\"kind\":\"span_end\",\"id\":\"s2\",\"duration_ns\":30}",
    "{\"kind\":\"span_start\",\"id\":\"s3\",\"parent_id\":\"s1\",\"name\":\"backward\","
    "\"start_ns\":50,\"span_kind\":\"module\"}",
    "{\"kind\":\"span_end\",\"id\":\"s3\",\"duration_ns\":40}",
    /* device clock: 5 000 000 000 000 ns, launched by s2 at 10 and s3 at 50 */
    INTERVAL ("s2", "gpu", "5000000000000", "20"), INTERVAL ("s3", "gpu", "5000000000045", "10"),
    /* already the host's: inside its span */
    INTERVAL ("s3", "host", "60", "5"), ROOT_END, TERMINAL, NULL);
  guint n;
  const WickDeviceInterval *d = wick_document_get_device_intervals (doc, &n);
  g_assert_cmpuint (n, ==, 3);
  g_autoptr (WickDeviceClocks) clocks = wick_device_clocks_new (doc);
  g_assert_cmpint (wick_device_clocks_get_offset (clocks, d[0].clock_id), ==,
                   10 - G_GINT64_CONSTANT (5000000000000));
  g_assert_cmpint (wick_device_clocks_get_offset (clocks, d[2].clock_id), ==, 0);

  g_autofree char *text = export_text (doc);
  /* named by the span's op; forward's at 10 ns, backward's 45 ns after it */
  g_autofree char *matmul = event_with (text, "\"name\":\"matmul\",\"cat\"");
  g_assert_nonnull (strstr (matmul, "\"ts\":0.010,"));
  g_assert_nonnull (strstr (matmul, "\"dur\":0.020"));
  g_autofree char *backward = event_with (text, "\"ts\":0.055,\"name\":\"backward\",\"cat\"");
  g_autofree char *host = event_with (text, "\"ts\":0.060,\"name\":\"backward\",\"cat\"");
  /* the Wick records are not written twice: no "wick" thread of another process */
  g_assert_null (strstr (text, "\"name\":\"wick\""));
}

/* One batch of @lines (NULL-terminated) committed to @doc, then the live
 * analysis that resolves spans. */
static void
commit_lines (WickDocument *doc, WickLineDecoder *decoder, const char *const *lines)
{
  g_autoptr (WickLineBatch) batch = wick_line_batch_new ();
  for (guint i = 0; lines[i] != NULL; i++)
    g_assert_true (wick_line_batch_add (batch, decoder, lines[i], strlen (lines[i])));
  g_assert_true (wick_document_commit_batch (doc, batch, NULL));
  wick_document_analyze (doc);
}

/* Device clocks kept across a live document's batches
 * (wick_device_clocks_update) give the offsets clocks made afresh give,
 * batch after batch: a kernel that moves its clock's fit, a kernel whose
 * span comes after it (and moves the fit then), a span whose end (when it
 * closes) takes the host's end past a kernel (the clock is the host's
 * again). */
static void
test_device_clock_update (void)
{
  static const char *const b1[] = { META_INFER, ROOT_START,
    "{\"kind\":\"span_start\",\"id\":\"s2\",\"parent_id\":\"s1\",\"name\":\"a\","
    "\"start_ns\":10,\"span_kind\":\"module\"}",
    /* on a clock of the host's, after every end so far: s2 is open */
    INTERVAL ("s2", "host", "40", "5"), INTERVAL ("s2", "gpu", "7000", "5"), NULL };
  static const char *const b2[] = {
    /* s2 closes at 60: the host kernel lies inside the host's spans now */
    "{\"kind\":\"span_end\",\"id\":\"s2\",\"duration_ns\":50}",
    /* launched by s3, which comes in the next batch */
    INTERVAL ("s3", "gpu", "6850", "5"), NULL };
  static const char *const b3[] = {
    "{\"kind\":\"span_start\",\"id\":\"s3\",\"parent_id\":\"s1\",\"name\":\"b\","
    "\"start_ns\":70,\"span_kind\":\"module\"}",
    "{\"kind\":\"span_end\",\"id\":\"s3\",\"duration_ns\":5}",
    /* the kernel of batch 2 has the gpu clock's largest launch - start now,
     * not this one */
    INTERVAL ("s3", "gpu", "6900", "5"), NULL };
  static const char *const b4[] = {
    /* this one has it */
    INTERVAL ("s3", "gpu", "6800", "5"), INTERVAL ("s3", "host", "90", "5"), ROOT_END, TERMINAL,
    NULL };
  static const char *const *const batches[] = { b1, b2, b3, b4 };
  /* host, gpu after each batch */
  static const gint64 expected[][2] = { { -30, 10 - 7000 }, { 0, 10 - 7000 },
                                        { 0, 70 - 6850 }, { 0, 70 - 6800 } };
  g_autoptr (WickDocument) doc = wick_document_new_with_extensions (TRUE);
  g_autoptr (WickLineDecoder) decoder = wick_line_decoder_new (TRUE);
  g_autoptr (WickDeviceClocks) kept = NULL;
  for (guint b = 0; b < G_N_ELEMENTS (batches); b++)
    {
      commit_lines (doc, decoder, batches[b]);
      if (kept == NULL)
        kept = wick_device_clocks_new (doc);
      else
        wick_device_clocks_update (kept, doc);
      g_autoptr (WickDeviceClocks) fresh = wick_device_clocks_new (doc);
      guint n;
      const WickDeviceInterval *d = wick_document_get_device_intervals (doc, &n);
      for (guint i = 0; i < n; i++)
        g_assert_cmpint (wick_device_clocks_get_offset (kept, d[i].clock_id), ==,
                         wick_device_clocks_get_offset (fresh, d[i].clock_id));
      g_assert_cmpint (wick_device_clocks_get_offset (kept, d[0].clock_id), ==, expected[b][0]);
      g_assert_cmpint (wick_device_clocks_get_offset (kept, d[1].clock_id), ==, expected[b][1]);
    }
}

static const char objects_trace[]
  = "{\"traceEvents\":["
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"Renderer\"}},"
    "{\"ph\":\"X\",\"name\":\"Paint\",\"pid\":1,\"tid\":2,\"ts\":10,\"dur\":5},"
    "{\"ph\":\"N\",\"name\":\"cc::Layer\",\"cat\":\"cc\",\"pid\":1,\"tid\":2,\"ts\":11,\"id\":"
    "\"0x1\"},"
    "{\"ph\":\"O\",\"name\":\"cc::Layer\",\"cat\":\"cc\",\"pid\":1,\"tid\":2,\"ts\":12,\"id\":"
    "\"0x1\","
    "\"args\":{\"snapshot\":{\"bounds\":[0,0,4,4]}}},"
    "{\"ph\":\"D\",\"name\":\"cc::Layer\",\"cat\":\"cc\",\"pid\":1,\"tid\":2,\"ts\":14,\"id\":"
    "\"0x1\"},"
    "{\"ph\":\"P\",\"name\":\"sample\",\"pid\":1,\"tid\":2,\"ts\":13,\"args\":{\"stack\":[1,2]}},"
    "{\"ph\":\"i\",\"name\":\"mark\",\"pid\":1,\"tid\":2,\"ts\":12,\"s\":\"t\"}"
    "]}";

static const char *
imported (WickDocument *doc, const char *phase)
{
  const WickChromeInfo *info = wick_chrome_info_get (doc);
  g_assert_nonnull (info);
  for (guint i = 0; i + 1 < info->imported->len; i += 2)
    if (strcmp (g_ptr_array_index (info->imported, i), phase) == 0)
      return g_ptr_array_index (info->imported, i + 1);
  return "0";
}

static guint
events_of_role (WickDocument *doc, WickInstantsRole role)
{
  guint n, total = 0;
  const WickTrack *tracks = wick_tracks_get_tracks (wick_document_get_tracks (doc), &n);
  for (guint i = 0; i < n; i++)
    if (tracks[i].kind == WICK_TRACK_INSTANTS && tracks[i].role == role)
      total += tracks[i].n_events;
  return total;
}

/* O/N/D are instants of the process's objects track, P of the thread's
 * samples track, imported (not skipped), and come back as themselves. */
static void
test_export_objects_samples (void)
{
  g_autoptr (WickDocument) doc = wick_document_new ();
  g_assert_true (
    wick_chrome_import_data (doc, objects_trace, strlen (objects_trace), "objects.json", NULL));
  g_assert_cmpstr (imported (doc, "N"), ==, "1");
  g_assert_cmpstr (imported (doc, "O"), ==, "1");
  g_assert_cmpstr (imported (doc, "D"), ==, "1");
  g_assert_cmpstr (imported (doc, "P"), ==, "1");
  g_assert_cmpuint (wick_chrome_info_get (doc)->skipped->len, ==, 0);
  g_assert_cmpuint (events_of_role (doc, WICK_INSTANTS_OBJECTS), ==, 3);
  g_assert_cmpuint (events_of_role (doc, WICK_INSTANTS_SAMPLES), ==, 1);
  g_assert_cmpuint (events_of_role (doc, WICK_INSTANTS_EVENTS), ==, 1);

  guint n, n_tracks;
  WickTracks *t = wick_document_get_tracks (doc);
  const WickInstant *in = wick_tracks_get_instants (t, &n);
  const WickTrack *tracks = wick_tracks_get_tracks (t, &n_tracks);
  for (guint i = 0; i < n; i++)
    if (in[i].phase == 'O')
      {
        g_assert_cmpstr (wick_document_str (doc, in[i].id), ==, "0x1");
        g_assert_cmpstr (wick_document_str (doc, in[i].name), ==, "cc::Layer");
        g_assert_cmpstr (wick_track_describe_kind (&tracks[in[i].track]), ==, "objects");
        g_assert_nonnull (
          strstr (wick_tracks_event_args (t, (WickEventRef){ WICK_EVENT_INSTANT, i }), "bounds"));
      }

  g_autofree char *text = export_text (doc);
  g_autoptr (WickDocument) again = wick_document_new ();
  g_assert_true (wick_chrome_import_data (again, text, strlen (text), "again.json", NULL));
  static const char *const phases[] = { "X", "i", "N", "O", "D", "P" };
  for (guint i = 0; i < G_N_ELEMENTS (phases); i++)
    g_assert_cmpstr (imported (again, phases[i]), ==, imported (doc, phases[i]));
  g_assert_cmpuint (events_of_role (again, WICK_INSTANTS_OBJECTS), ==, 3);
  g_assert_cmpuint (events_of_role (again, WICK_INSTANTS_SAMPLES), ==, 1);
}

/* A .json.gz export opens again; a file that cannot be written is an error
 * naming it and leaves nothing behind. */
static void
test_export_file_gzip (void)
{
  g_autoptr (WickDocument) doc = wick_document_new ();
  g_assert_true (
    wick_chrome_import_data (doc, objects_trace, strlen (objects_trace), "objects.json", NULL));
  g_autofree char *dir = g_dir_make_tmp ("wick-export-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "out.json.gz", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (GError) error = NULL;
  g_assert_true (wick_chrome_export_to_file (doc, file, TRUE, NULL, &error));
  g_assert_no_error (error);
  g_autofree char *bytes = NULL;
  gsize len;
  g_assert_true (g_file_get_contents (path, &bytes, &len, NULL));
  g_assert_cmpuint (len, >, 2);
  g_assert_cmpint ((guint8)bytes[0], ==, 0x1f);
  g_assert_cmpint ((guint8)bytes[1], ==, 0x8b);
  g_autoptr (WickDocument) again = wick_document_new ();
  g_assert_true (wick_document_load_file_auto (again, path, NULL, NULL, NULL, &error));
  g_assert_cmpstr (imported (again, "O"), ==, "1");
  g_assert_cmpstr (imported (again, "X"), ==, "1");

  g_autofree char *missing = g_build_filename (dir, "no-such-dir", "out.json", NULL);
  g_autoptr (GFile) bad = g_file_new_for_path (missing);
  g_assert_false (wick_chrome_export_to_file (doc, bad, FALSE, NULL, &error));
  g_assert_nonnull (error);
  g_assert_false (g_file_test (missing, G_FILE_TEST_EXISTS));
  g_unlink (path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model/chrome-export/device-clock", test_export_device_clock);
  g_test_add_func ("/model/chrome-export/device-clock-update", test_device_clock_update);
  g_test_add_func ("/model/chrome-export/objects-samples", test_export_objects_samples);
  g_test_add_func ("/model/chrome-export/file-gzip", test_export_file_gzip);
  return g_test_run ();
}
