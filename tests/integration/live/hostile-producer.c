/* hostile-producer.c — a process that answers the control protocol like a
 * recording session but hands its readers hostile rings and snapshots.
 * test-hostile-producer.c runs it beside `wick-trace attach` / `sessions`,
 * which must neither crash, hang past their deadline nor run out of memory.
 *
 *   hostile-producer MODE
 *
 * It makes its socket in the control directory (XDG_RUNTIME_DIR/wick, as a
 * session does), prints "ready" on stdout, and serves until killed:
 *
 *   truncate        an unsealed ring memfd, cut to nothing when the snapshot is asked for
 *   meta-overflow   a sealed ring whose meta_length and meta_capacity are
 *                   0xffffffff (a 4 GiB sparse memfd)
 *   commit-wrap     ring 0's commit counter set just below 2^64 once the reader started
 *   names           1024 rings, each with 128 open spans naming one 1 MiB string
 *   snapshot-eventfd  a valid ring; the snapshot's fd is an eventfd
 *   snapshot-fifo     a valid ring; the snapshot's fd is a FIFO nobody writes
 *   snapshot-deep   a valid ring; a snapshot line nested 200 000 deep
 *   snapshot-lines  a valid ring; a 150 MB snapshot of tiny lines
 *   silent          31 sockets that accept and never answer
 *   silent-many     600 sockets that accept and never answer (one process)
 *   frozen-snapshot a valid ring and hello; the snapshot request is never answered
 *   frozen-restart  a ring with 4 open spans; the first snapshot is refused, every
 *                   later one never answered (a second attach froze there)
 */
#include "wick-session-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_SOCKETS 640
#define MAX_CLIENTS 64

static const char *mode;
static int ring_fd = -1;
static uint8_t *ring_map;

static void
die (const char *what)
{
  fprintf (stderr, "hostile-producer: %s: %s\n", what, strerror (errno));
  exit (2);
}

/* The ring memfd: a valid layout of n_rings rings with ring_bytes each and
 * an arena of arena_bytes, sealed against size changes unless unsealed. */
static int
make_ring (uint32_t n_rings, uint64_t ring_bytes, uint64_t arena_bytes, bool sealed,
           uint8_t **map_out, uint64_t *total_out)
{
  uint64_t meta_offset = WICK_RING_HEADER_BYTES;
  uint64_t arena_offset = meta_offset + WICK_RING_META_CAPACITY;
  uint64_t controls_offset = arena_offset + arena_bytes;
  uint64_t data_offset = controls_offset + (uint64_t)n_rings * WICK_RING_CONTROL_BYTES;
  uint64_t total = data_offset + (uint64_t)n_rings * ring_bytes;
  int fd = memfd_create ("hostile-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0 || ftruncate (fd, (off_t)total) != 0)
    die ("memfd");
  uint8_t *map = mmap (NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED)
    die ("mmap");
  if (sealed && fcntl (fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0)
    die ("seal");
  WickRingHeader *h = (WickRingHeader *)(void *)map;
  h->magic = WICK_RING_MAGIC;
  h->version = WICK_RING_FORMAT_VERSION;
  h->header_bytes = WICK_RING_HEADER_BYTES;
  h->file_bytes = total;
  h->pid = getpid ();
  h->n_rings = n_rings;
  h->ring_bytes = ring_bytes;
  h->chunk_bytes = WICK_RING_CHUNK_BYTES;
  h->max_record_bytes = WICK_RING_MAX_RECORD;
  h->meta_offset = meta_offset;
  h->meta_capacity = WICK_RING_META_CAPACITY;
  static const char meta[]
    = "{\"kind\":\"meta\",\"format\":\"candle-graph-trace\",\"format_version\":10,"
      "\"entrypoint\":\"hostile\",\"phase\":\"infer\",\"capture_step\":1,\"device\":\"cpu\","
      "\"clock\":\"session\"}";
  memcpy (map + meta_offset, meta, sizeof meta - 1);
  h->meta_length = sizeof meta - 1;
  h->arena_offset = arena_offset;
  h->arena_capacity = arena_bytes;
  /* the root's name at handle 8 */
  uint32_t length = 4;
  memcpy (map + arena_offset + 8, &length, 4);
  memcpy (map + arena_offset + 16, "root", 5);
  atomic_store (&h->arena_used, 24);
  h->controls_offset = controls_offset;
  h->control_bytes = WICK_RING_CONTROL_BYTES;
  h->data_offset = data_offset;
  h->root_name = 8;
  h->hold_timeout_ns = UINT64_MAX;
  snprintf (h->program, sizeof h->program, "hostile-producer");
  snprintf (h->entrypoint, sizeof h->entrypoint, "hostile");
  atomic_store (&h->state, WICK_RING_STATE_RUNNING);
  atomic_store (&h->rings_in_use, 1);
  *map_out = map;
  *total_out = total;
  return fd;
}

static WickRingControl *
control_of (uint8_t *map, uint32_t index)
{
  WickRingHeader *h = (WickRingHeader *)(void *)map;
  return (WickRingControl *)(void *)(map + h->controls_offset + (uint64_t)index * h->control_bytes);
}

static void
prepare_ring (void)
{
  uint8_t *map;
  uint64_t total;
  if (strcmp (mode, "truncate") == 0)
    {
      ring_fd = make_ring (1, 256 * 1024, 1 << 20, false, &map, &total);
      return;
    }
  if (strcmp (mode, "meta-overflow") == 0)
    {
      /* the meta region claims 4 GiB: the memfd is made that large (sparse),
       * so that the region fits the file and only the length is hostile */
      ring_fd = make_ring (1, 256 * 1024, 1 << 20, false, &map, &total);
      WickRingHeader *h = (WickRingHeader *)(void *)map;
      uint64_t meta_end = h->meta_offset + UINT32_MAX;
      uint64_t data_end = total;
      uint64_t shift = (meta_end + 4095) & ~(uint64_t)4095;
      /* move arena, controls and data past the 4 GiB meta region */
      if (ftruncate (ring_fd, (off_t)(shift + data_end)) != 0)
        die ("ftruncate");
      uint8_t *big = mmap (NULL, shift + data_end, PROT_READ | PROT_WRITE, MAP_SHARED, ring_fd, 0);
      if (big == MAP_FAILED)
        die ("mmap");
      WickRingHeader *b = (WickRingHeader *)(void *)big;
      memcpy (big + shift + b->arena_offset, big + b->arena_offset, 32);
      b->arena_offset += shift;
      b->controls_offset += shift;
      b->data_offset += shift;
      b->file_bytes = shift + data_end;
      b->meta_capacity = UINT32_MAX;
      b->meta_length = UINT32_MAX;
      if (fcntl (ring_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0)
        die ("seal");
      return;
    }
  if (strcmp (mode, "names") == 0 || strcmp (mode, "frozen-restart") == 0)
    {
      bool names = strcmp (mode, "names") == 0;
      const uint32_t n_rings = names ? WICK_RING_MAX_RINGS : 1;
      const uint32_t name_bytes = names ? 1 << 20 : 4;
      const uint32_t depth = names ? WICK_RING_MAX_DEPTH : 4;
      ring_fd = names ? make_ring (n_rings, WICK_RING_MIN_RING_BYTES, name_bytes + 4096, true, &map,
                                   &total)
                      : make_ring (1, 256 * 1024, 1 << 20, true, &map, &total);
      WickRingHeader *h = (WickRingHeader *)(void *)map;
      uint8_t *arena = map + h->arena_offset;
      uint32_t handle = 24;
      memcpy (arena + handle, &name_bytes, 4);
      memset (arena + handle + 8, 'n', name_bytes);
      arena[handle + 8 + name_bytes] = '\0';
      atomic_store (&h->arena_used, (uint64_t)handle + 8 + name_bytes + 8);
      for (uint32_t r = 0; r < n_rings; r++)
        {
          WickRingControl *control = control_of (map, r);
          atomic_store (&control->thread_number, r + 1);
          atomic_store (&control->owner_tid, (int32_t)(100000 + r));
          for (uint32_t d = 0; d < depth; d++)
            {
              WickSpanPayload *span = (WickSpanPayload *)&control->stack[d];
              span->id = 2 + (uint64_t)r * WICK_RING_MAX_DEPTH + d;
              span->parent = d == 0 ? 1 : span->id - 1;
              span->name = handle;
              span->start_ns = 1000 + d;
            }
          atomic_store (&control->depth_gen, depth);
        }
      atomic_store (&h->rings_in_use, n_rings);
      return;
    }
  ring_fd = make_ring (1, 256 * 1024, 1 << 20, true, &map, &total);
  ring_map = map;
  if (strcmp (mode, "commit-wrap") == 0)
    {
      /* every chunk of ring 0 one well-formed pad record: whatever position
       * a reader takes, it finds records to read, for ever */
      WickRingHeader *h = (WickRingHeader *)(void *)map;
      for (uint64_t chunk = 0; chunk < h->ring_bytes; chunk += WICK_RING_CHUNK_BYTES)
        {
          WickRecordHeader pad = { .words = WICK_RING_CHUNK_BYTES / 8, .kind = WICK_KIND_PAD };
          memcpy (map + h->data_offset + chunk, &pad, sizeof pad);
        }
    }
}

/* The fd answering "snapshot", or -1 (no snapshot). */
static int
snapshot_fd (void)
{
  if (strcmp (mode, "snapshot-eventfd") == 0)
    return eventfd (0, EFD_CLOEXEC);
  if (strcmp (mode, "snapshot-fifo") == 0)
    {
      char path[] = "/tmp/hostile-fifo-XXXXXX";
      if (mkdtemp (path) == NULL)
        die ("mkdtemp");
      char fifo[64];
      snprintf (fifo, sizeof fifo, "%s/fifo", path);
      if (mkfifo (fifo, 0600) != 0)
        die ("mkfifo");
      int fd = open (fifo, O_RDWR | O_CLOEXEC); /* a writer that never writes */
      unlink (fifo);
      rmdir (path);
      return fd;
    }
  bool deep = strcmp (mode, "snapshot-deep") == 0;
  bool lines = strcmp (mode, "snapshot-lines") == 0;
  if (!deep && !lines)
    return -1;
  int fd = memfd_create ("hostile-snapshot", MFD_CLOEXEC);
  FILE *out = fdopen (dup (fd), "w");
  if (fd < 0 || out == NULL)
    die ("snapshot");
  fprintf (out, "{\"kind\":\"wick_attach_snapshot\",\"timestamp_ns\":10,\"allocated_bytes\":0}\n");
  if (deep)
    {
      fprintf (out, "{\"kind\":\"wick_snapshot_x\",\"a\":");
      for (int i = 0; i < 200000; i++)
        fputc ('[', out);
      for (int i = 0; i < 200000; i++)
        fputc (']', out);
      fprintf (out, "}\n");
    }
  else
    for (long i = 0; i < 150000000 / 26; i++)
      fputs ("{\"kind\":\"wick_snapshot_\"}\n", out);
  fclose (out);
  return fd;
}

static void
send_reply (int client, const char *body, int fd)
{
  size_t length = strlen (body);
  uint8_t header[4] = { length & 0xff, length >> 8 & 0xff, length >> 16 & 0xff, length >> 24 };
  struct iovec iov[2] = { { header, 4 }, { (void *)body, length } };
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } control;
  struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };
  if (fd >= 0)
    {
      msg.msg_control = control.buf;
      msg.msg_controllen = sizeof control.buf;
      struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (sizeof (int));
      memcpy (CMSG_DATA (c), &fd, sizeof fd);
    }
  (void)sendmsg (client, &msg, MSG_NOSIGNAL);
}

/* One request of a client, answered (or, silent, ignored); false when the
 * client has gone. */
static int prepared_snapshot = -1;

static bool
serve (int client)
{
  char request[65536];
  ssize_t n = recv (client, request, sizeof request - 1, 0);
  if (n <= 0)
    return false;
  request[n] = '\0';
  if (n <= 4 || strcmp (mode, "silent") == 0)
    return true;
  const char *body = request + 4;
  if (strstr (body, "\"hello\"") != NULL)
    {
      char reply[512];
      snprintf (reply, sizeof reply,
                "{\"ok\":true,\"v\":1,\"program\":\"hostile-producer\",\"pid\":%d,"
                "\"entrypoint\":\"hostile\",\"started\":\"\",\"policy\":\"drop\"}",
                (int)getpid ());
      send_reply (client, reply, ring_fd);
      return true;
    }
  static int snapshots_asked;
  if (strstr (body, "\"snapshot\"") != NULL
      && (strcmp (mode, "frozen-snapshot") == 0
          || (strcmp (mode, "frozen-restart") == 0 && snapshots_asked++ > 0)))
    return true; /* asked, never answered: the process froze there */
  if (strstr (body, "\"snapshot\"") != NULL)
    {
      /* an attach asks for the snapshot once it has mapped the ring: cut
       * the ring under its mapping */
      if (strcmp (mode, "truncate") == 0 && ftruncate (ring_fd, 0) != 0)
        die ("ftruncate");
      /* the reader started at commit 0; now ring 0 "wrote" almost 2^64 bytes:
       * the reader is lapped, and a resync near 2^64 wraps */
      if (strcmp (mode, "commit-wrap") == 0)
        atomic_store (&control_of (ring_map, 0)->commit, UINT64_MAX - 100000);
      int fd = prepared_snapshot;
      send_reply (client, fd >= 0 ? "{\"ok\":true,\"v\":1}"
                                  : "{\"ok\":false,\"v\":1,\"error\":\"no snapshot here\"}",
                  fd);
      return true;
    }
  send_reply (client, "{\"ok\":false,\"v\":1,\"error\":\"unknown command\"}", -1);
  return true;
}

int
main (int argc, char **argv)
{
  if (argc != 2)
    {
      fprintf (stderr, "usage: hostile-producer MODE\n");
      return 2;
    }
  mode = argv[1];
  signal (SIGPIPE, SIG_IGN);
  bool silent = strncmp (mode, "silent", 6) == 0;
  if (!silent)
    prepare_ring ();
  /* made before "ready": a big one takes seconds */
  prepared_snapshot = strncmp (mode, "snapshot-", 9) == 0 ? snapshot_fd () : -1;
  char directory[256];
  WickError error;
  if (!wick_control_directory (directory, sizeof directory, &error))
    {
      fprintf (stderr, "hostile-producer: %s\n", error.message);
      return 2;
    }
  int n_sockets = strcmp (mode, "silent-many") == 0 ? 600 : silent ? 31 : 1;
  static struct pollfd fds[MAX_SOCKETS + MAX_CLIENTS];
  int n_fds = 0;
  for (int i = 0; i < n_sockets; i++)
    {
      struct sockaddr_un address = { .sun_family = AF_UNIX };
      int n = snprintf (address.sun_path, sizeof address.sun_path, "%s/%d-%d.sock", directory,
                        (int)getpid (), i + 1);
      if (n < 0 || (size_t)n >= sizeof address.sun_path)
        die ("socket path too long");
      int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0 || bind (fd, (struct sockaddr *)&address, sizeof address) != 0
          || listen (fd, 64) != 0)
        die ("listen");
      fds[n_fds++] = (struct pollfd){ fd, POLLIN, 0 };
    }
  printf ("ready\n");
  fflush (stdout);
  if (strcmp (mode, "silent-many") == 0)
    for (;;)
      pause (); /* never accepted: each connect lands in a backlog, its hello unread */
  int clients[MAX_CLIENTS];
  int n_clients = 0;
  for (;;)
    {
      static struct pollfd all[MAX_SOCKETS + MAX_CLIENTS];
      memcpy (all, fds, sizeof fds[0] * (size_t)n_fds);
      for (int i = 0; i < n_clients; i++)
        all[n_fds + i] = (struct pollfd){ clients[i], POLLIN, 0 };
      if (poll (all, (nfds_t)(n_fds + n_clients), -1) < 0 && errno != EINTR)
        die ("poll");
      int kept = 0;
      for (int i = 0; i < n_clients; i++)
        {
          if ((all[n_fds + i].revents & (POLLIN | POLLHUP | POLLERR)) && !serve (clients[i]))
            close (clients[i]);
          else
            clients[kept++] = clients[i];
        }
      n_clients = kept;
      for (int i = 0; i < n_fds; i++)
        if (all[i].revents & POLLIN)
          {
            int client = accept4 (fds[i].fd, NULL, NULL, SOCK_CLOEXEC);
            if (client >= 0 && n_clients < MAX_CLIENTS)
              clients[n_clients++] = client;
            else if (client >= 0)
              close (client);
          }
    }
}
