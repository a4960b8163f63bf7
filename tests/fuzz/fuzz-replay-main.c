/* Replays a libFuzzer corpus directory through LLVMFuzzerTestOneInput with any
 * compiler, so the seed corpus is exercised in every build. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static int
replay_file (const char *path)
{
  FILE *file = fopen (path, "rb");
  if (file == NULL)
    return -1;
  fseek (file, 0, SEEK_END);
  long length = ftell (file);
  fseek (file, 0, SEEK_SET);
  uint8_t *data = malloc (length > 0 ? (size_t) length : 1);
  size_t got = fread (data, 1, (size_t) length, file);
  fclose (file);
  LLVMFuzzerTestOneInput (data, got);
  free (data);
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc != 2)
    {
      fprintf (stderr, "usage: %s CORPUS_DIR\n", argv[0]);
      return 2;
    }
  DIR *dir = opendir (argv[1]);
  if (dir == NULL)
    {
      fprintf (stderr, "cannot open corpus %s\n", argv[1]);
      return 1;
    }
  unsigned count = 0;
  struct dirent *entry;
  while ((entry = readdir (dir)) != NULL)
    {
      if (entry->d_name[0] == '.')
        continue;
      char path[4096];
      snprintf (path, sizeof path, "%s/%s", argv[1], entry->d_name);
      if (replay_file (path) == 0)
        count++;
    }
  closedir (dir);
  printf ("replayed %u inputs from %s\n", count, argv[1]);
  return count > 0 ? 0 : 1;
}
