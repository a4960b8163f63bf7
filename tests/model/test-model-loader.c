/* test-model-loader.c — WickDocumentLoader: the document read on a worker,
 * fraction and message changing on the caller's thread only, rising to 1,
 * cancellation, parse errors kept, unreadable files named. Suite: model. */
#include "config.h"

#include <glib/gstdio.h>
#include <stdio.h>

#include "model-test-util.h"
#include "wick-document-loader.h"

typedef struct
{
  GThread *main_thread;
  guint n_fraction;
  guint n_wrong_thread;
  gboolean decreased;
  double last;
  GAsyncResult *result;
} Watch;

static void
on_fraction (WickDocumentLoader *loader, GParamSpec *pspec, Watch *watch)
{
  double fraction = wick_document_loader_get_fraction (loader);
  watch->n_fraction++;
  if (g_thread_self () != watch->main_thread)
    watch->n_wrong_thread++;
  if (fraction < watch->last)
    watch->decreased = TRUE;
  watch->last = fraction;
}

static void
on_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Watch *watch = user_data;
  watch->result = g_object_ref (result);
}

/* A trace of @n child spans: several of the reader's 4 MiB batches. */
static char *
write_trace (guint n)
{
  char *path = NULL;
  int fd = g_file_open_tmp ("wick-loader-XXXXXX.jsonl", &path, NULL);
  FILE *out = fdopen (fd, "w");
  g_assert_nonnull (out);
  fprintf (out, "%s\n%s\n", META_INFER, ROOT_START);
  for (guint i = 0; i < n; i++)
    fprintf (out,
             "{\"kind\":\"span_start\",\"id\":\"c%u\",\"parent_id\":\"s1\",\"name\":\"item\","
             "\"start_ns\":%u,\"span_kind\":\"function\"}\n"
             "{\"kind\":\"span_end\",\"id\":\"c%u\",\"duration_ns\":0}\n",
             i, i % 100, i);
  fprintf (out, "%s\n%s\n", ROOT_END, TERMINAL);
  fclose (out);
  return path;
}

static WickDocument *
load (const char *path, GCancellable *cancellable, gboolean cancel_at_first, Watch *watch,
      GError **error)
{
  g_autoptr (WickDocumentLoader) loader = wick_document_loader_new (path);
  watch->main_thread = g_thread_self ();
  g_signal_connect (loader, "notify::fraction", G_CALLBACK (on_fraction), watch);
  g_assert_cmpstr (wick_document_loader_get_path (loader), ==, path);
  g_assert_cmpfloat (wick_document_loader_get_fraction (loader), ==, 0.0);
  wick_document_loader_load_async (loader, cancellable, on_done, watch);
  while (watch->result == NULL)
    {
      g_main_context_iteration (NULL, TRUE);
      if (cancel_at_first && watch->n_fraction > 0)
        g_cancellable_cancel (cancellable);
    }
  WickDocument *document = wick_document_loader_load_finish (loader, watch->result, error);
  g_clear_object (&watch->result);
  if (document != NULL)
    {
      g_assert_cmpfloat (wick_document_loader_get_fraction (loader), ==, 1.0);
      g_assert_nonnull (wick_document_loader_get_message (loader));
    }
  return document;
}

static void
test_progress (void)
{
  g_autofree char *path = write_trace (200000);
  Watch watch = { 0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (WickDocument) document = load (path, NULL, FALSE, &watch, &error);
  guint n;

  g_assert_no_error (error);
  g_assert_nonnull (document);
  wick_document_get_spans (document, &n);
  g_assert_cmpuint (n, ==, 200001);
  g_assert_cmpstr (wick_document_get_path (document), ==, path);
  /* notified on this thread only, never backwards, ending at 1 */
  g_assert_cmpuint (watch.n_fraction, >=, 1);
  g_assert_cmpuint (watch.n_wrong_thread, ==, 0);
  g_assert_false (watch.decreased);
  g_assert_cmpfloat (watch.last, ==, 1.0);
  g_unlink (path);
}

static void
test_cancel (void)
{
  g_autofree char *path = write_trace (400000);
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  Watch watch = { 0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (WickDocument) document = load (path, cancellable, TRUE, &watch, &error);

  g_assert_null (document);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_unlink (path);

  /* cancelled before it began: cancelled too, although reading would succeed */
  g_autofree char *small = write_trace (10);
  g_autoptr (GCancellable) before = g_cancellable_new ();
  g_cancellable_cancel (before);
  Watch again = { 0 };
  g_autoptr (GError) error2 = NULL;
  g_autoptr (WickDocument) none = load (small, before, FALSE, &again, &error2);
  g_assert_null (none);
  g_assert_error (error2, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_unlink (small);
}

static void
test_parse_error_kept (void)
{
  g_autofree char *path = NULL;
  int fd = g_file_open_tmp ("wick-loader-XXXXXX.jsonl", &path, NULL);
  g_autofree char *text
    = g_strdup_printf ("%s\n%s\n{\"kind\":\"span_end\",\n", META_INFER, ROOT_START);
  g_assert_true (write (fd, text, strlen (text)) == (gssize)strlen (text));
  close (fd);
  Watch watch = { 0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (WickDocument) document = load (path, NULL, FALSE, &watch, &error);

  /* the records before the error are the result; the document says where */
  g_assert_no_error (error);
  g_assert_nonnull (document);
  const WickParseError *parse = wick_document_get_parse_error (document);
  g_assert_true (parse->failed);
  g_assert_cmpuint (parse->line, ==, 3);
  g_unlink (path);
}

static void
test_missing_file (void)
{
  Watch watch = { 0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (WickDocument) document = load ("/nonexistent/wick.jsonl", NULL, FALSE, &watch, &error);

  g_assert_null (document);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, "/nonexistent/wick.jsonl"));
}

static void
test_loads_once (void)
{
  g_autofree char *path = write_trace (10);
  g_autoptr (WickDocumentLoader) loader = wick_document_loader_new (path);
  Watch first = { 0 }, second = { 0 };

  wick_document_loader_load_async (loader, NULL, on_done, &first);
  wick_document_loader_load_async (loader, NULL, on_done, &second);
  while (first.result == NULL || second.result == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_autoptr (GError) error = NULL;
  g_autoptr (WickDocument) document = wick_document_loader_load_finish (loader, first.result, NULL);
  g_autoptr (WickDocument) none = wick_document_loader_load_finish (loader, second.result, &error);
  g_assert_nonnull (document);
  g_assert_null (none);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_PENDING);
  g_object_unref (first.result);
  g_object_unref (second.result);
  g_unlink (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/loader/progress", test_progress);
  g_test_add_func ("/loader/cancel", test_cancel);
  g_test_add_func ("/loader/parse-error-kept", test_parse_error_kept);
  g_test_add_func ("/loader/missing-file", test_missing_file);
  g_test_add_func ("/loader/loads-once", test_loads_once);
  return g_test_run ();
}
