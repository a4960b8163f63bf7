/* test-ssh-config.c — the host names "Attach to Remote Process…" offers, from
 * ssh_config files written here as hostile input: patterns, negations,
 * option-like and odd names left out; "Host=", quotes and CRLF read; a line
 * over 4 KiB, a line with a NUL, a FIFO and a device never read; an Include
 * of itself and a chain deeper than 8 end; at most 1000 names. No display.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>

#include "client/wick-ssh-config.h"

static char *
joined (GPtrArray *hosts)
{
  GString *out = g_string_new (NULL);
  for (guint i = 0; i < hosts->len; i++)
    g_string_append_printf (out, "%s%s", i > 0 ? " " : "", (char *)g_ptr_array_index (hosts, i));
  return g_string_free (out, FALSE);
}

static void
write_file (const char *path, const char *text, gssize length)
{
  g_autoptr (GError) error = NULL;
  g_assert_true (g_file_set_contents (path, text, length, &error));
}

static void
test_names (void)
{
  g_autofree char *dir = g_dir_make_tmp ("wick-ssh-config-XXXXXX", NULL);
  g_autofree char *config = g_build_filename (dir, "config", NULL);
  g_autofree char *fifo = g_build_filename (dir, "fifo", NULL);
  g_autofree char *more = g_build_filename (dir, "more", NULL);
  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  write_file (more, "Host included-1\n", -1);
  GString *text = g_string_new (NULL);
  g_string_append (text, "# a comment\nHost alpha beta # trailing comment\n");
  g_string_append (text, "  host=gamma\r\nHOST \"delta\" *.cluster !bad ?x -oProxyCommand=x\n");
  g_string_append (text, "Hostname not-a-host\nHost alpha\nHost bad/slash bad;semi\n");
  /* a line over 4 KiB: left out whole */
  g_string_append (text, "Host long-line-");
  for (int i = 0; i < 5000; i++)
    g_string_append_c (text, 'x');
  g_string_append (text, "\n");
  g_string_append_printf (text, "Include %s %s %s\n", fifo, config, more);
  g_string_append (text, "Include /dev/zero\n");
  g_string_append (text, "Host after-nul\n");
  gsize nul_at = text->len - 3;
  text->str[nul_at] = '\0'; /* "Host after-n\0l": a line with a NUL is left out */
  g_string_append (text, "Host last\n");
  write_file (config, text->str, (gssize)text->len);
  g_string_free (text, TRUE);

  g_autoptr (GError) error = NULL;
  gint64 start = g_get_monotonic_time ();
  g_autoptr (GPtrArray) hosts = wick_ssh_config_hosts (config, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 5 * G_USEC_PER_SEC); /* the FIFO did not block */
  g_autofree char *names = joined (hosts);
  /* the Include of itself goes 8 deep; "last" comes first from the deepest copy */
  g_assert_cmpstr (names, ==, "alpha beta gamma delta last included-1");

  /* a missing file: no hosts, no error; a directory: an error */
  g_autofree char *missing = g_build_filename (dir, "missing", NULL);
  g_autoptr (GPtrArray) none = wick_ssh_config_hosts (missing, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (none->len, ==, 0);
  g_autoptr (GPtrArray) refused = wick_ssh_config_hosts (dir, &error);
  g_assert_null (refused);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "not a regular file"));

  g_unlink (config);
  g_unlink (fifo);
  g_unlink (more);
  g_rmdir (dir);
}

static void
test_limits (void)
{
  g_autofree char *dir = g_dir_make_tmp ("wick-ssh-config-XXXXXX", NULL);
  /* a chain of Includes 12 deep: the names of the first 9 files (depth 0..8) */
  for (int i = 0; i < 12; i++)
    {
      g_autofree char *path = g_strdup_printf ("%s/c%d", dir, i);
      g_autofree char *body = g_strdup_printf ("Host depth-%d\nInclude %s/c%d\n", i, dir, i + 1);
      write_file (path, body, -1);
    }
  g_autofree char *first = g_strdup_printf ("%s/c0", dir);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) chain = wick_ssh_config_hosts (first, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (chain->len, ==, 9);
  g_assert_cmpstr (g_ptr_array_index (chain, 8), ==, "depth-8");

  /* 1500 names: the first 1000 */
  GString *many = g_string_new (NULL);
  for (int i = 0; i < 1500; i++)
    g_string_append_printf (many, "Host node-%04d\n", i);
  g_autofree char *big = g_build_filename (dir, "big", NULL);
  write_file (big, many->str, (gssize)many->len);
  g_string_free (many, TRUE);
  g_autoptr (GPtrArray) capped = wick_ssh_config_hosts (big, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (capped->len, ==, WICK_SSH_CONFIG_MAX_HOSTS);
  g_assert_cmpstr (g_ptr_array_index (capped, 999), ==, "node-0999");

  for (int i = 0; i < 12; i++)
    {
      g_autofree char *path = g_strdup_printf ("%s/c%d", dir, i);
      g_unlink (path);
    }
  g_unlink (big);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/remote/ssh-config/names", test_names);
  g_test_add_func ("/remote/ssh-config/limits", test_limits);
  return g_test_run ();
}
