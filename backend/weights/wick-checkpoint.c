/* wick-checkpoint.c — a safetensors checkpoint: one file, or a directory of
 * shards with or without model.safetensors.index.json (see
 * wick-safetensors-private.h). Shards stay open so that a restore reads the
 * file it verified (its bytes are checked against their digests, not the
 * file's size or mtime). */
#include "wick-safetensors-private.h"
#include "common/wick-utf8.h"
#include "wick-weights-json-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/wick-error-private.h"

#define INDEX_NAME "model.safetensors.index.json"
#define MAX_INDEX_BYTES (64u << 20)

static bool
read_header (WickSafetensorsShard *shard, WickError *error)
{
  struct stat st;
  if (fstat (shard->fd, &st) != 0)
    return wick_fail (error, wick_error_code_from_errno (errno), "cannot stat: %s",
                      strerror (errno));
  if (!S_ISREG (st.st_mode))
    return wick_fail (error, WICK_ERROR_INVALID_DATA, "not a regular file");
  uint64_t file_size = (uint64_t)st.st_size;
  uint8_t prefix[8];
  uint64_t length;
  if (file_size < 8)
    return wick_fail (error, WICK_ERROR_INVALID_DATA,
                      "the file is %" PRIu64 " bytes, shorter than the 8-byte header length",
                      file_size);
  if (!wick_read_exact (shard->fd, prefix, 8, 0, shard->path, error)
      || !wick_safetensors_header_length (prefix, file_size, &length, error))
    return false;
  char *json = malloc (length);
  if (json == NULL)
    return wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory for a %" PRIu64 "-byte header",
                      length);
  bool ok = wick_read_exact (shard->fd, json, length, 8, shard->path, error)
            && wick_safetensors_parse_header (json, length, file_size - 8 - length, &shard->header,
                                              error);
  free (json);
  shard->header.data_offset = 8 + length;
  return ok;
}

/* A checkpoint is opened while a control command holds the lock the
 * workload's step takes: opening a FIFO (or a device) put in the path's
 * place would wait for a writer that may never come, and the workload with
 * it. O_NONBLOCK makes open() return at once whatever the file is, and only
 * a regular file is kept (then blocking again: regular files ignore it, but
 * the reads stay plain). -1 with errno EINVAL when it is not a regular file. */
#define NOT_REGULAR "not a regular file (a FIFO, socket or device is never read)"

static int
open_regular (const char *path)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    return -1;
  struct stat st;
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      close (fd);
      errno = EINVAL;
      return -1;
    }
  int flags = fcntl (fd, F_GETFL);
  if (flags >= 0)
    (void)fcntl (fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

/* Opens one shard; on failure the shard keeps the reason and fd -1. */
static bool
shard_open (WickSafetensorsShard *shard, const char *path)
{
  WickError error;
  memset (shard, 0, sizeof *shard);
  shard->fd = -1;
  shard->path = strdup (path);
  if (shard->path == NULL)
    {
      snprintf (shard->error, sizeof shard->error, "%.*s: out of memory",
                WICK_UTF8_CUT (path, 300));
      return false;
    }
  shard->fd = open_regular (path);
  if (shard->fd < 0)
    {
      snprintf (shard->error, sizeof shard->error, "%.*s: cannot open: %.*s",
                WICK_UTF8_CUT (path, 300),
                WICK_UTF8_CUT (errno == EINVAL ? NOT_REGULAR : strerror (errno), 100));
      return false;
    }
  if (!read_header (shard, &error))
    {
      snprintf (shard->error, sizeof shard->error, "%.*s: %.*s", WICK_UTF8_CUT (path, 200),
                WICK_UTF8_CUT (error.message, 300));
      close (shard->fd);
      shard->fd = -1;
      return false;
    }
  return true;
}

static void
shard_close (WickSafetensorsShard *shard)
{
  if (shard->fd >= 0)
    close (shard->fd);
  wick_safetensors_header_clear (&shard->header);
  free (shard->path);
}

static int
compare_keys (const void *a, const void *b)
{
  return strcmp (((const WickCheckpointKey *)a)->key, ((const WickCheckpointKey *)b)->key);
}

/* Sorts keys and refuses a key that two shards claim. */
static bool
sort_keys (WickCheckpoint *checkpoint, WickError *error)
{
  qsort (checkpoint->keys, checkpoint->n_keys, sizeof *checkpoint->keys, compare_keys);
  for (size_t i = 1; i < checkpoint->n_keys; i++)
    if (strcmp (checkpoint->keys[i - 1].key, checkpoint->keys[i].key) == 0)
      return wick_fail (error, WICK_ERROR_INVALID_DATA, "key '%.*s' appears twice",
                        WICK_UTF8_CUT (checkpoint->keys[i].key, 200));
  return true;
}

static bool
add_shard (WickCheckpoint *checkpoint, const char *path, size_t *index, WickError *error)
{
  for (size_t i = 0; i < checkpoint->n_shards; i++)
    if (strcmp (checkpoint->shards[i].path, path) == 0)
      {
        *index = i;
        return true;
      }
  WickSafetensorsShard *shards
    = realloc (checkpoint->shards, (checkpoint->n_shards + 1) * sizeof *shards);
  if (shards == NULL)
    return wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory");
  checkpoint->shards = shards;
  shard_open (&shards[checkpoint->n_shards], path);
  *index = checkpoint->n_shards++;
  return true;
}

/* The keys of every tensor of the shards (single file, or directory scan). */
static bool
keys_from_headers (WickCheckpoint *checkpoint, WickError *error)
{
  size_t total = 0;
  for (size_t s = 0; s < checkpoint->n_shards; s++)
    total += checkpoint->shards[s].header.n_tensors;
  checkpoint->keys = calloc (total + 1, sizeof *checkpoint->keys);
  if (checkpoint->keys == NULL)
    return wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory");
  for (size_t s = 0; s < checkpoint->n_shards; s++)
    for (size_t t = 0; t < checkpoint->shards[s].header.n_tensors; t++)
      {
        WickCheckpointKey *key = &checkpoint->keys[checkpoint->n_keys++];
        key->key = strdup (checkpoint->shards[s].header.tensors[t].name);
        key->shard = s;
        if (key->key == NULL)
          return wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory");
      }
  return sort_keys (checkpoint, error);
}

static bool
is_plain_file_name (const char *name)
{
  return name[0] != '\0' && strchr (name, '/') == NULL && strcmp (name, ".") != 0
         && strcmp (name, "..") != 0;
}

static void
free_index (WickCheckpointKey *keys, char **shard_names, size_t n_keys)
{
  for (size_t i = 0; i < n_keys; i++)
    {
      if (keys != NULL)
        free (keys[i].key);
      if (shard_names != NULL)
        free (shard_names[i]);
    }
  free (keys);
  free (shard_names);
}

static bool
parse_weight_map (const WickJsonDocument *document, const WickJsonNode *map,
                  WickCheckpointKey *keys, char **shard_names, size_t *n_keys, WickError *error)
{
  for (const WickJsonNode *entry = wick_weights_json_first (document, map); entry != NULL;
       entry = wick_weights_json_next (document, entry))
    {
      if (entry->kind != WICK_JSON_STRING)
        return wick_fail (
          error, WICK_ERROR_INVALID_DATA, "weight_map['%.*s'] is %s, not a shard file name",
          WICK_UTF8_CUT (entry->key, 200), wick_weights_json_kind_name (entry->kind));
      if (strlen (entry->key) != entry->key_length || strlen (entry->text) != entry->length)
        return wick_fail (error, WICK_ERROR_INVALID_DATA, "weight_map contains a NUL character");
      if (!is_plain_file_name (entry->text))
        return wick_fail (error, WICK_ERROR_INVALID_DATA,
                          "weight_map['%.*s']: shard '%.*s' is not a file name in the checkpoint "
                          "directory",
                          WICK_UTF8_CUT (entry->key, 200), WICK_UTF8_CUT (entry->text, 200));
      keys[*n_keys].key = strdup (entry->key);
      shard_names[*n_keys] = strdup (entry->text);
      keys[*n_keys].shard = *n_keys;
      (*n_keys)++;
      if (keys[*n_keys - 1].key == NULL || shard_names[*n_keys - 1] == NULL)
        return wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory");
    }
  return true;
}

bool
wick_checkpoint_parse_index (const char *json, size_t length, WickCheckpointKey **keys_out,
                             char ***shard_names_out, size_t *n_keys, WickError *error)
{
  WickJsonDocument document;
  WickError json_error;
  *keys_out = NULL;
  *shard_names_out = NULL;
  *n_keys = 0;
  if (!wick_weights_json_parse (json, length, &document, &json_error))
    return wick_fail (error, json_error.code, "invalid JSON: %s", json_error.message);
  const WickJsonNode *root = wick_weights_json_root (&document);
  const WickJsonNode *map = wick_weights_json_member (&document, root, "weight_map");
  bool ok;
  if (root->kind != WICK_JSON_OBJECT)
    ok = wick_fail (error, WICK_ERROR_INVALID_DATA, "the index is %s, not an object",
                    wick_weights_json_kind_name (root->kind));
  else if (map == NULL)
    ok = wick_fail (error, WICK_ERROR_INVALID_DATA, "missing \"weight_map\"");
  else if (map->kind != WICK_JSON_OBJECT)
    ok = wick_fail (error, WICK_ERROR_INVALID_DATA, "\"weight_map\" is %s, not an object",
                    wick_weights_json_kind_name (map->kind));
  else
    {
      *keys_out = calloc (map->n_children + 1, sizeof **keys_out);
      *shard_names_out = calloc (map->n_children + 1, sizeof **shard_names_out);
      ok = *keys_out != NULL && *shard_names_out != NULL
             ? parse_weight_map (&document, map, *keys_out, *shard_names_out, n_keys, error)
             : wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory");
    }
  wick_weights_json_clear (&document);
  if (!ok)
    {
      free_index (*keys_out, *shard_names_out, *n_keys);
      *keys_out = NULL;
      *shard_names_out = NULL;
      *n_keys = 0;
    }
  return ok;
}

static bool
read_small_file (const char *path, char **out, size_t *length, WickError *error)
{
  int fd = open_regular (path);
  struct stat st;
  if (fd < 0 && errno == EINVAL)
    return wick_fail (error, WICK_ERROR_INVALID_DATA, "%s: %s", path, NOT_REGULAR);
  if (fd < 0)
    return wick_fail (error, wick_error_code_from_errno (errno), "%s: cannot open: %s", path,
                      strerror (errno));
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode) || (uint64_t)st.st_size > MAX_INDEX_BYTES)
    {
      close (fd);
      return wick_fail (error, WICK_ERROR_INVALID_DATA,
                        "%s: not a regular file of at most %u bytes", path, MAX_INDEX_BYTES);
    }
  *length = (size_t)st.st_size;
  *out = malloc (*length + 1);
  bool ok = *out != NULL && wick_read_exact (fd, *out, *length, 0, path, error);
  close (fd);
  if (!ok)
    {
      free (*out);
      *out = NULL;
    }
  return ok;
}

static bool
open_with_index (WickCheckpoint *checkpoint, const char *directory, const char *index_path,
                 WickError *error)
{
  char *json = NULL;
  size_t length = 0, n_keys = 0;
  WickCheckpointKey *keys;
  char **shard_names;
  WickError index_error;
  if (!read_small_file (index_path, &json, &length, error))
    return false;
  bool ok = wick_checkpoint_parse_index (json, length, &keys, &shard_names, &n_keys, &index_error);
  free (json);
  if (!ok)
    return wick_fail (error, index_error.code, "%s: %s", index_path, index_error.message);
  checkpoint->keys = keys;
  checkpoint->n_keys = n_keys;
  for (size_t i = 0; ok && i < n_keys; i++)
    {
      char path[4096];
      snprintf (path, sizeof path, "%s/%s", directory, shard_names[i]);
      ok = add_shard (checkpoint, path, &keys[i].shard, error);
    }
  free_index (NULL, shard_names, n_keys);
  if (ok && !sort_keys (checkpoint, &index_error))
    ok = wick_fail (error, index_error.code, "%s: weight_map: %s", index_path, index_error.message);
  return ok;
}

static int
compare_strings (const void *a, const void *b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

static bool
ends_with (const char *s, const char *suffix)
{
  size_t n = strlen (s), m = strlen (suffix);
  return n >= m && strcmp (s + n - m, suffix) == 0;
}

static bool
open_directory_scan (WickCheckpoint *checkpoint, const char *directory, WickError *error)
{
  DIR *dir = opendir (directory);
  if (dir == NULL)
    return wick_fail (error, wick_error_code_from_errno (errno),
                      "%s: cannot open the directory: %s", directory, strerror (errno));
  char **names = NULL;
  size_t n = 0;
  struct dirent *entry;
  bool ok = true;
  while (ok && (entry = readdir (dir)) != NULL)
    {
      if (entry->d_name[0] == '.' || !ends_with (entry->d_name, ".safetensors"))
        continue;
      char **grown = realloc (names, (n + 1) * sizeof *names);
      ok = grown != NULL && (grown[n] = strdup (entry->d_name)) != NULL;
      if (grown != NULL)
        names = grown;
      n += ok;
    }
  closedir (dir);
  if (names != NULL)
    qsort (names, n, sizeof *names, compare_strings);
  for (size_t i = 0; ok && i < n; i++)
    {
      char path[4096];
      size_t index;
      snprintf (path, sizeof path, "%s/%s", directory, names[i]);
      ok = add_shard (checkpoint, path, &index, error);
    }
  for (size_t i = 0; i < n; i++)
    free (names[i]);
  free (names);
  if (!ok)
    return wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory");
  if (checkpoint->n_shards == 0)
    return wick_fail (error, WICK_ERROR_INVALID_DATA, "%s: no %s and no *.safetensors file",
                      directory, INDEX_NAME);
  return keys_from_headers (checkpoint, error);
}

bool
wick_checkpoint_open (const char *path, WickCheckpoint *out, WickError *error)
{
  struct stat st;
  memset (out, 0, sizeof *out);
  if (stat (path, &st) != 0)
    return wick_fail (error, wick_error_code_from_errno (errno), "%s: %s", path, strerror (errno));
  bool ok;
  if (S_ISDIR (st.st_mode))
    {
      char index_path[4096];
      snprintf (index_path, sizeof index_path, "%s/%s", path, INDEX_NAME);
      ok = access (index_path, F_OK) == 0 ? open_with_index (out, path, index_path, error)
                                          : open_directory_scan (out, path, error);
    }
  else
    {
      size_t index;
      ok = add_shard (out, path, &index, error);
      if (ok && out->shards[0].fd < 0)
        ok = wick_fail (error, WICK_ERROR_INVALID_DATA, "%s", out->shards[0].error);
      ok = ok && keys_from_headers (out, error);
    }
  if (!ok)
    wick_checkpoint_close (out);
  return ok;
}

void
wick_checkpoint_close (WickCheckpoint *checkpoint)
{
  for (size_t i = 0; i < checkpoint->n_shards; i++)
    shard_close (&checkpoint->shards[i]);
  free (checkpoint->shards);
  for (size_t i = 0; i < checkpoint->n_keys; i++)
    free (checkpoint->keys[i].key);
  free (checkpoint->keys);
  memset (checkpoint, 0, sizeof *checkpoint);
}

WickCheckpointLookup
wick_checkpoint_find (const WickCheckpoint *checkpoint, const char *key,
                      const WickSafetensorsShard **shard_out,
                      const WickSafetensorsTensor **tensor_out, char *reason, size_t reason_size)
{
  WickCheckpointKey probe = { .key = (char *)key };
  const WickCheckpointKey *found
    = checkpoint->n_keys
        ? bsearch (&probe, checkpoint->keys, checkpoint->n_keys, sizeof probe, compare_keys)
        : NULL;
  if (found == NULL)
    return WICK_LOOKUP_ABSENT;
  const WickSafetensorsShard *shard = &checkpoint->shards[found->shard];
  if (shard->fd < 0)
    {
      snprintf (reason, reason_size, "%s", shard->error);
      return WICK_LOOKUP_SHARD_ERROR;
    }
  const WickSafetensorsTensor *tensor = wick_safetensors_header_find (&shard->header, key);
  if (tensor == NULL)
    {
      snprintf (reason, reason_size, "%s: key '%.*s' is in the index but not in the shard",
                shard->path, WICK_UTF8_CUT (key, 200));
      return WICK_LOOKUP_SHARD_ERROR;
    }
  *shard_out = shard;
  *tensor_out = tensor;
  return WICK_LOOKUP_FOUND;
}
