/* wick-ssh-config.c — host names from ssh_config files (see the header). */
#include "config.h"

#include "wick-ssh-config.h"

#include <errno.h>
#include <glob.h>
#include <string.h>

#include <glib/gstdio.h>

#define MAX_FILE_BYTES (1u << 20)
#define MAX_LINE_BYTES 4096
#define MAX_DEPTH 8
#define MAX_FILES 64

typedef struct
{
  GPtrArray *hosts;
  GHashTable *seen;
  guint files;
  char *ssh_dir; /* where a relative Include is looked up */
} Reader;

static gboolean
host_name_ok (const char *name)
{
  if (name[0] == '\0' || name[0] == '-' || strlen (name) > 255)
    return FALSE;
  for (const char *p = name; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && *p != '.' && *p != '_' && *p != '-')
      return FALSE; /* '*', '?', '!' (patterns) and anything odd */
  return TRUE;
}

/* The words of a line after its keyword: whitespace separated, "quoted"
 * words kept whole; NULL when the line is not of @keyword. */
static GPtrArray *
words_after (const char *line, const char *keyword)
{
  const char *p = line;
  while (*p == ' ' || *p == '\t')
    p++;
  gsize n = strlen (keyword);
  if (g_ascii_strncasecmp (p, keyword, n) != 0)
    return NULL;
  p += n;
  if (*p != ' ' && *p != '\t' && *p != '=')
    return NULL;
  while (*p == ' ' || *p == '\t')
    p++;
  if (*p == '=')
    p++;
  GPtrArray *words = g_ptr_array_new_with_free_func (g_free);
  while (*p != '\0' && words->len < WICK_SSH_CONFIG_MAX_HOSTS)
    {
      while (*p == ' ' || *p == '\t')
        p++;
      if (*p == '\0' || *p == '#')
        break;
      const char *start = p;
      if (*p == '"')
        {
          start = ++p;
          while (*p != '\0' && *p != '"')
            p++;
          g_ptr_array_add (words, g_strndup (start, (gsize)(p - start)));
          if (*p == '"')
            p++;
          continue;
        }
      while (*p != '\0' && *p != ' ' && *p != '\t')
        p++;
      g_ptr_array_add (words, g_strndup (start, (gsize)(p - start)));
    }
  return words;
}

static void read_file (Reader *reader, const char *path, guint depth);

static void
include (Reader *reader, const char *pattern, guint depth)
{
  g_autofree char *full = NULL;
  if (pattern[0] == '~' && pattern[1] == '/')
    full = g_build_filename (g_get_home_dir (), pattern + 2, NULL);
  else if (g_path_is_absolute (pattern))
    full = g_strdup (pattern);
  else
    full = g_build_filename (reader->ssh_dir, pattern, NULL);
  glob_t matches;
  if (glob (full, GLOB_NOSORT, NULL, &matches) != 0)
    return;
  /* sorted as ssh reads them */
  g_autoptr (GPtrArray) paths = g_ptr_array_new ();
  for (size_t i = 0; i < matches.gl_pathc && paths->len < MAX_FILES; i++)
    g_ptr_array_add (paths, matches.gl_pathv[i]);
  g_ptr_array_sort (paths, (GCompareFunc)g_strcmp0);
  for (guint i = 0; i < paths->len; i++)
    read_file (reader, *(char **)&paths->pdata[i], depth + 1);
  globfree (&matches);
}

static void
read_file (Reader *reader, const char *path, guint depth)
{
  if (depth > MAX_DEPTH || reader->files >= MAX_FILES
      || reader->hosts->len >= WICK_SSH_CONFIG_MAX_HOSTS)
    return;
  reader->files++;
  if (!g_file_test (path, G_FILE_TEST_IS_REGULAR)) /* a FIFO would block the open */
    return;
  g_autoptr (GMappedFile) mapped = g_mapped_file_new (path, FALSE, NULL);
  if (mapped == NULL)
    return;
  gsize length = MIN (g_mapped_file_get_length (mapped), MAX_FILE_BYTES);
  const char *data = g_mapped_file_get_contents (mapped);
  gsize at = 0;
  while (at < length && reader->hosts->len < WICK_SSH_CONFIG_MAX_HOSTS)
    {
      const char *end = memchr (data + at, '\n', length - at);
      gsize line_length = end != NULL ? (gsize)(end - (data + at)) : length - at;
      if (line_length <= MAX_LINE_BYTES && memchr (data + at, '\0', line_length) == NULL)
        {
          g_autofree char *line = g_strndup (data + at, line_length);
          g_strchomp (line); /* a '\r' too */
          g_autoptr (GPtrArray) hosts = words_after (line, "Host");
          g_autoptr (GPtrArray) includes = hosts == NULL ? words_after (line, "Include") : NULL;
          for (guint i = 0; hosts != NULL && i < hosts->len; i++)
            {
              const char *name = g_ptr_array_index (hosts, i);
              if (host_name_ok (name) && !g_hash_table_contains (reader->seen, name)
                  && reader->hosts->len < WICK_SSH_CONFIG_MAX_HOSTS)
                {
                  g_hash_table_add (reader->seen, g_strdup (name));
                  g_ptr_array_add (reader->hosts, g_strdup (name));
                }
            }
          for (guint i = 0; includes != NULL && i < includes->len; i++)
            include (reader, g_ptr_array_index (includes, i), depth);
        }
      at += line_length + 1;
    }
}

GPtrArray *
wick_ssh_config_hosts (const char *path, GError **error)
{
  g_autofree char *default_path = NULL;
  if (path == NULL)
    path = default_path = g_build_filename (g_get_home_dir (), ".ssh", "config", NULL);
  Reader reader = { 0 };
  reader.hosts = g_ptr_array_new_with_free_func (g_free);
  reader.seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  reader.ssh_dir = g_build_filename (g_get_home_dir (), ".ssh", NULL);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    ;
  else if (!g_file_test (path, G_FILE_TEST_IS_REGULAR) || g_access (path, R_OK) != 0)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "cannot read %s: %s", path,
                   g_file_test (path, G_FILE_TEST_IS_REGULAR) ? g_strerror (saved)
                                                              : "not a regular file");
      g_clear_pointer (&reader.hosts, g_ptr_array_unref);
    }
  else
    read_file (&reader, path, 0);
  g_hash_table_unref (reader.seen);
  g_free (reader.ssh_dir);
  return reader.hosts;
}
