/* wick-control-snapshot.c — the "snapshot" command: the state a late reader
 * cannot find in the ring (docs/protocol.md, "snapshot").
 *
 * The reply is small ({"ok":true,"command":"snapshot","timestamp_ns":T,
 * "allocations":N,...}); the snapshot itself travels as a sealed memfd passed
 * with the reply (SCM_RIGHTS), one JSON object per line, so its size has no
 * protocol limit:
 *
 *   {"kind":"wick_attach_snapshot","timestamp_ns":T,"allocations":N,...}
 *   {"kind":"wick_snapshot_allocation",...one per live storage...}
 *   {"kind":"wick_snapshot_module",...one per registered weight module...}
 *   {"kind":"wick_snapshot_stage",...one per registered stage...}
 *
 * The meta line (run metadata and contract) and the spans open on each thread
 * are already delivered by every new ring reader; the snapshot adds what only
 * the host knows.
 */
#include "config.h"

#include "wick-control-private.h"
#include "core/wick-error-private.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct
{
  char *data;
  size_t length;
  size_t capacity;
  bool failed;
  uint64_t lines;
  uint64_t skipped; /* lines longer than a control message */
} Buffer;

static void
buffer_line (Buffer *buffer, WickControlWriter *line)
{
  if (line->overflow)
    {
      buffer->skipped++;
      return;
    }
  if (buffer->failed)
    return;
  if (buffer->length + line->length + 1 > buffer->capacity)
    {
      size_t capacity = buffer->capacity ? buffer->capacity : 4096;
      while (capacity < buffer->length + line->length + 1)
        capacity *= 2;
      char *data = realloc (buffer->data, capacity);
      if (data == NULL)
        {
          buffer->failed = true;
          return;
        }
      buffer->data = data;
      buffer->capacity = capacity;
    }
  memcpy (buffer->data + buffer->length, line->data, line->length);
  buffer->length += line->length;
  buffer->data[buffer->length++] = '\n';
  buffer->lines++;
}

static void
span_text (WickSpanId id, char *out, size_t size)
{
  snprintf (out, size, "s%llu", (unsigned long long)id);
}

/* Called under the live table's lock: formats into memory only. */
static void
on_allocation (const WickMemoryRecord *allocation, void *user_data)
{
  Buffer *buffer = user_data;
  WickControlWriter line;
  char span[32];
  wick_control_writer_init (&line);
  wick_control_writer_begin_object (&line, NULL);
  wick_control_writer_string (&line, "kind", "wick_snapshot_allocation");
  wick_control_writer_uint (&line, "timestamp_ns", allocation->timestamp_ns);
  wick_control_writer_string (&line, "storage_id", allocation->storage_id);
  wick_control_writer_string (&line, "tensor_id", allocation->tensor_id);
  span_text (allocation->span, span, sizeof span);
  wick_control_writer_string (&line, "span_id", span);
  if (allocation->op_name != NULL)
    wick_control_writer_string (&line, "op_name", allocation->op_name);
  wick_control_writer_string (&line, "device", allocation->device);
  wick_control_writer_uint (&line, "bytes", allocation->bytes);
  wick_control_writer_begin_array (&line, "shape");
  for (size_t i = 0; i < allocation->rank; i++)
    wick_control_writer_uint (&line, NULL, allocation->shape[i]);
  wick_control_writer_end_array (&line);
  wick_control_writer_string (&line, "dtype", allocation->dtype);
  wick_control_writer_string (&line, "category",
                              wick_memory_category_to_string (allocation->category));
  if (allocation->address != 0)
    {
      /* the allocation's device address, as the trace's "wick_address":
       * "0x" and lower-case hex (a JSON number past 2^53 loses digits) */
      char address[24];
      snprintf (address, sizeof address, "0x%" PRIx64, allocation->address);
      wick_control_writer_string (&line, "address", address);
    }
  wick_control_writer_end_object (&line);
  buffer_line (buffer, &line);
  wick_control_writer_clear (&line);
}

static void
snapshot_module (const WickWeightStats *stats, void *data)
{
  WickControlWriter line;
  wick_control_writer_init (&line);
  wick_control_writer_begin_object (&line, NULL);
  wick_control_writer_string (&line, "kind", "wick_snapshot_module");
  wick_control_write_module (&line, stats);
  wick_control_writer_end_object (&line);
  buffer_line (data, &line);
  wick_control_writer_clear (&line);
}

static void
snapshot_stage (WickStage *stage, void *data)
{
  WickCertification certification;
  memset (&certification, 0, sizeof certification);
  bool certified
    = wick_stage_get_certification (stage, &certification);
  WickControlWriter line;
  wick_control_writer_init (&line);
  wick_control_writer_begin_object (&line, NULL);
  wick_control_writer_string (&line, "kind", "wick_snapshot_stage");
  wick_control_write_stage (&line, stage);
  if (certified)
    {
      wick_control_writer_string (&line, "verdict", certification.verdict);
      wick_control_writer_string (&line, "reason", certification.reason);
      if (certification.parity_checked)
        wick_control_writer_double (&line, "parity_cos", certification.parity_cos);
      if (certification.speedup_checked)
        wick_control_writer_double (&line, "speedup_median", certification.speedup_median);
    }
  wick_control_writer_end_object (&line);
  buffer_line (data, &line);
  wick_control_writer_clear (&line);
}

static int
sealed_memfd (const char *data, size_t length, WickError *error)
{
  int fd = memfd_create ("wick-attach-snapshot", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    {
      int saved = errno;
      wick_set_error (error, wick_error_code_from_errno (saved),
                      "cannot create the snapshot: memfd: %s", strerror (saved));
      return -1;
    }
  size_t done = 0;
  while (done < length)
    {
      ssize_t n = write (fd, data + done, length - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          int saved = n < 0 ? errno : 0;
          wick_set_error (error, n < 0 ? wick_error_code_from_errno (saved) : WICK_ERROR_IO,
                          "cannot write the snapshot: %s",
                          n < 0 ? strerror (saved) : "short write");
          close (fd);
          return -1;
        }
      done += (size_t)n;
    }
  /* Readers get a file nobody can change under them. */
  (void)fcntl (fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  return fd;
}

void
wick_control_command_snapshot (WickSession *session, const WickControlRequest *request,
                               WickControlWriter *reply, bool *send_ring_fd)
{
  (void)request;
  (void)send_ring_fd;
  Buffer allocations = { 0 }, rest = { 0 };
  WickLiveAllocationTotals totals;
  wick_session_foreach_live_allocation (session, on_allocation, &allocations, &totals);
  size_t modules = wick_control_foreach_module (session, snapshot_module, &rest);
  size_t stages = wick_control_foreach_stage (session, snapshot_stage, &rest);

  WickControlWriter header;
  wick_control_writer_init (&header);
  wick_control_writer_begin_object (&header, NULL);
  wick_control_writer_string (&header, "kind", "wick_attach_snapshot");
  wick_control_writer_uint (&header, "timestamp_ns", totals.timestamp_ns);
  wick_control_writer_uint (&header, "allocations", allocations.lines);
  wick_control_writer_uint (&header, "allocated_bytes", totals.bytes);
  wick_control_writer_bool (&header, "incomplete",
                            totals.incomplete || allocations.skipped > 0 || allocations.failed);
  wick_control_writer_uint (&header, "modules", modules);
  wick_control_writer_uint (&header, "stages", stages);
  wick_control_writer_end_object (&header);
  Buffer all = { 0 };
  buffer_line (&all, &header);
  wick_control_writer_clear (&header);
  bool failed = allocations.failed || rest.failed || all.failed;
  if (!failed)
    {
      size_t length = all.length + allocations.length + rest.length;
      char *data = realloc (all.data, length + 1);
      if (data == NULL)
        failed = true;
      else
        {
          all.data = data;
          if (allocations.length > 0)
            memcpy (data + all.length, allocations.data, allocations.length);
          if (rest.length > 0)
            memcpy (data + all.length + allocations.length, rest.data, rest.length);
          all.length = length;
        }
    }
  WickError error = { "" };
  size_t snapshot_bytes = all.length;
  int fd = failed ? -1 : sealed_memfd (all.data, all.length, &error);
  if (failed)
    wick_set_error (&error, WICK_ERROR_NO_MEMORY, "out of memory building the snapshot");
  free (allocations.data);
  free (rest.data);
  free (all.data);
  if (fd < 0)
    {
      wick_control_writer_bool (reply, "ok", false);
      wick_control_writer_string (reply, "error", error.message);
      return;
    }
  wick_control_writer_bool (reply, "ok", true);
  wick_control_writer_string (reply, "command", "snapshot");
  wick_control_writer_uint (reply, "timestamp_ns", totals.timestamp_ns);
  wick_control_writer_uint (reply, "allocations", allocations.lines);
  wick_control_writer_uint (reply, "allocated_bytes", totals.bytes);
  wick_control_writer_uint (reply, "modules", modules);
  wick_control_writer_uint (reply, "stages", stages);
  wick_control_writer_uint (reply, "bytes", snapshot_bytes);
  reply->pass_fd = fd;
  reply->has_pass_fd = true;
}
