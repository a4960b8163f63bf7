/* fuzz-follow-file.c — libFuzzer target for following a growing file: the
 * input is appended to a file in pieces (its first byte says where it is
 * cut), the file is truncated or replaced between
 * polls as its second byte says, and every line goes to a WickDocument as
 * `wick-trace attach --follow` does, under a 256-byte line limit. No crash,
 * no hang, a partial line held to the limit. */
#include "config.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "client/wick-follow-file.h"
#include "client/wick-follow-file-private.h"
#include "wick-document.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static char *path;

static void
on_line (const char *line, gsize length, gpointer user_data)
{
  wick_document_feed_line (user_data, line, length, NULL);
}

static void
append (const uint8_t *data, size_t size)
{
  int fd = open (path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    abort ();
  if (size > 0 && write (fd, data, size) != (ssize_t)size)
    abort ();
  close (fd);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (path == NULL)
    {
      g_autofree char *dir = g_dir_make_tmp ("wick-fuzz-follow-XXXXXX", NULL);
      path = g_build_filename (dir, "followed.jsonl", NULL);
    }
  if (size < 2)
    return 0;
  size_t cut = (size_t)data[0] * (size - 2) / 255;
  uint8_t change = data[1];
  data += 2;
  size -= 2;
  g_unlink (path);
  append (data, cut);
  WickFollowFile *file = wick_follow_file_new (path, NULL);
  if (file == NULL)
    return 0;
  wick_follow_file_set_max_line (file, 256);
  WickDocument *document = wick_document_new_with_extensions (TRUE);
  wick_follow_file_poll (file, 64, on_line, document, NULL, NULL);
  if (change & 1)
    (void)truncate (path, (off_t)(cut / 2));
  if (change & 2)
    {
      g_autofree char *other = g_strconcat (path, ".new", NULL);
      g_file_set_contents (other, (const char *)data, (gssize)(size - cut), NULL);
      g_rename (other, path);
    }
  append (data + cut, size - cut);
  for (int i = 0; i < 4; i++)
    {
      char *restarted = NULL;
      if (wick_follow_file_poll (file, 0, on_line, document, &restarted, NULL) < 0)
        break;
      g_free (restarted);
    }
  if (wick_follow_file_get_pending (file) > 256)
    abort ();
  g_object_unref (document);
  wick_follow_file_free (file);
  return 0;
}
