/* test-app-plurals.c — counts in sentences take their plural forms through
 * gettext ("1 parameter", "1 module"), in English (the messages
 * themselves) and in German through the catalog the build compiles
 * (<build>/po/de/LC_MESSAGES/wick.mo, LANGUAGE=de): the Weights page's module
 * rows and restore toasts, the model's health messages (retained
 * allocations), and the catalog's Plural-Forms header. Each language runs in
 * a subprocess of its own (gettext and GLib decide once per process whether
 * and what to translate). No display needed. Suite: app.
 */
#include "config.h"

#include <glib/gi18n.h>
#include <locale.h>
#include <string.h>

#include "app-test-util.h"
#include "ui/session/wick-weights-panel.h"
#include "ui/session/wick-weights-panel-private.h"

static char *
module_text (guint64 parameters)
{
  WickControlModule module
    = { (char *)"embedding", WICK_CONTROL_WHERE_RESIDENT, 4194304, parameters, 0, 0, 0 };
  return wick_weights_panel_module_text (&module);
}

static char *
restored_text (guint64 parameters)
{
  WickControlResult result = { 0 };
  result.command = WICK_CONTROL_RESULT_RESTORE;
  result.weights.module.name = (char *)"embedding";
  result.weights.restored = parameters;
  result.weights.seconds = 0.002;
  return wick_weights_panel_restored_text (&result);
}

static char *
restored_all_text (guint64 modules)
{
  WickControlResult result = { 0 };
  result.command = WICK_CONTROL_RESULT_RESTORE_ALL;
  result.restore_all.restored_modules = modules;
  return wick_weights_panel_restored_text (&result);
}

/* The retained_allocations message of a trace leaving @n storages live:
 * finished, or (@live) still being written. */
static char *
retained_text (guint n, gboolean live)
{
  g_autoptr (WickDocument) document = wick_document_new ();
  g_autoptr (GString) text = g_string_new (APP_TEST_META);
  g_string_append (text, "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"root\",\"start_ns\":"
                         "0,\"span_kind\":\"function\",\"measured\":true}\n");
  for (guint i = 0; i < n; i++)
    g_string_append_printf (text,
                            "{\"kind\":\"memory\",\"timestamp_ns\":%u,\"storage_id\":\"st%u\","
                            "\"tensor_id\":\"t%u\",\"span_id\":\"s1\",\"device\":\"cpu\","
                            "\"bytes\":8,\"action\":\"alloc\",\"dtype\":\"f32\","
                            "\"category\":\"activation\"}\n",
                            i + 1, i, i);
  if (!live)
    g_string_append (text, "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":100}\n"
                           "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":100}");
  g_auto (GStrv) lines = g_strsplit (text->str, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (lines[i][0] != '\0')
      {
        g_autoptr (GError) error = NULL;
        if (!wick_document_feed_line (document, lines[i], strlen (lines[i]), &error))
          g_error ("line %u: %s", i + 1, error->message);
      }
  if (live)
    wick_document_analyze (document);
  else
    g_assert_true (wick_document_finish (document, NULL));
  guint n_issues;
  const WickHealthIssue *issues = wick_document_get_health (document, &n_issues);
  for (guint i = 0; i < n_issues; i++)
    if (g_strcmp0 (issues[i].code, "retained_allocations") == 0)
      return g_strdup (issues[i].message);
  g_error ("no retained_allocations issue for %u storages", n);
}

typedef struct
{
  const char *language;
  /* module row subtitle (after the size), restore toast, restore all */
  const char *one_parameter, *two_parameters;
  const char *restored_one, *restored_two;
  const char *all_one, *all_two;
  /* retained allocations: live, at the end */
  const char *live_one, *live_two, *end_one, *end_two;
} Expected;

static const Expected english = { "C",
                                  " · 1 parameter · resident",
                                  " · 2 parameters · resident",
                                  "Restored embedding: 1 parameter in 2.0 ms",
                                  "Restored embedding: 2 parameters in 2.0 ms",
                                  "Restored all: 1 module",
                                  "Restored all: 2 modules",
                                  "1 storage is live now",
                                  "2 storages are live now",
                                  "1 storage remained live at capture end",
                                  "2 storages remained live at capture end" };

static const Expected german = { "de",
                                 " · 1 Parameter · geladen",
                                 " · 2 Parameter · geladen",
                                 "embedding wiederhergestellt: 1 Parameter in 2.0 ms",
                                 "embedding wiederhergestellt: 2 Parameter in 2.0 ms",
                                 "Alle wiederhergestellt: 1 Modul",
                                 "Alle wiederhergestellt: 2 Module",
                                 "1 Speicherblock ist jetzt belegt",
                                 "2 Speicherblöcke sind jetzt belegt",
                                 "1 Speicherblock blieb am Ende der Aufzeichnung belegt",
                                 "2 Speicherblöcke blieben am Ende der Aufzeichnung belegt" };

static void
assert_suffix (const char *text, const char *suffix)
{
  if (!g_str_has_suffix (text, suffix))
    g_error ("\"%s\" does not end in \"%s\"", text, suffix);
}

static void
check_language (const Expected *want)
{
  g_autofree char *one = module_text (1), *two = module_text (2);
  assert_suffix (one, want->one_parameter);
  assert_suffix (two, want->two_parameters);
  g_autofree char *restored_one = restored_text (1), *restored_two = restored_text (2);
  g_assert_cmpstr (restored_one, ==, want->restored_one);
  g_assert_cmpstr (restored_two, ==, want->restored_two);
  g_autofree char *all_one = restored_all_text (1), *all_two = restored_all_text (2);
  g_assert_cmpstr (all_one, ==, want->all_one);
  g_assert_cmpstr (all_two, ==, want->all_two);
  g_autofree char *live_one = retained_text (1, TRUE), *live_two = retained_text (2, TRUE);
  g_assert_cmpstr (live_one, ==, want->live_one);
  g_assert_cmpstr (live_two, ==, want->live_two);
  g_autofree char *end_one = retained_text (1, FALSE), *end_two = retained_text (2, FALSE);
  g_assert_cmpstr (end_one, ==, want->end_one);
  g_assert_cmpstr (end_two, ==, want->end_two);
}

/* Runs the checks for @want in a child with LANGUAGE set to its language. */
static void
run_in_language (const Expected *want)
{
  if (g_test_subprocess ())
    {
      check_language (want);
      return;
    }
  g_setenv ("LANGUAGE", want->language, TRUE);
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_unsetenv ("LANGUAGE");
  g_test_trap_assert_passed ();
}

static void
test_english (void)
{
  run_in_language (&english);
}

static void
test_german (void)
{
  if (!g_test_subprocess ())
    {
      g_autofree char *mo
        = g_build_filename (WICK_BUILD_DIR, "po", "de", "LC_MESSAGES", "wick.mo", NULL);
      if (!g_file_test (mo, G_FILE_TEST_EXISTS))
        g_error ("%s is missing: the build compiles po/de.po there", mo);
    }
  else
    {
      /* The catalog is the one in use: its header says how German counts. */
      const char *header = gettext ("");
      g_assert_nonnull (strstr (header, "Language: de\n"));
      g_assert_nonnull (strstr (header, "Plural-Forms: nplurals=2; plural=(n != 1);\n"));
    }
  run_in_language (&german);
}

int
main (int argc, char **argv)
{
  if (!app_test_bind_build_catalogs ())
    return 0;
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/plurals/english", test_english);
  g_test_add_func ("/plurals/german", test_german);
  return g_test_run ();
}
