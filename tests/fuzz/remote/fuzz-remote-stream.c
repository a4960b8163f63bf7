/* fuzz-remote-stream.c — libFuzzer target for the desktop's reader of a remote
 * node's byte stream (docs/protocol.md, "Remote sessions over SSH").
 *
 * The input is what a node would send on ssh's stdout: it is fed to the frame
 * parser in pieces of varying size (the first byte picks the piece size, as
 * reads split a stream anywhere), every frame taken out is handled as the
 * client does — JSON payloads through the bounded parser, SNAPSHOT bytes
 * applied to the stream, RECORDS decoded and fed to libwick's JSONL formatter
 * — and the stream is finished as a cut capture at the end. Nothing may crash,
 * leak or read out of bounds whatever the bytes.
 */
#include "config.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "client/wick-live-stream.h"
#include "client/wick-remote-wire.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
count_line (const char *line, gsize length, gpointer user_data)
{
  gsize *total = user_data;
  *total += length;
}

static gboolean
feed (const WickRingRecord *record, gpointer user_data)
{
  static gsize total;
  wick_live_stream_feed (user_data, record, count_line, &total);
  return TRUE;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  gsize piece = 1 + (data[0] % 64) * 97;
  data++;
  size--;
  WickRemoteParser *parser = wick_remote_parser_new ();
  WickRemoteDecoder *decoder = wick_remote_decoder_new ();
  WickLiveStream *stream = wick_live_stream_new_fed (FALSE);
  GByteArray *snapshot = g_byte_array_new ();
  gboolean snapshot_done = FALSE, dead = FALSE;
  gsize total = 0;
  for (gsize offset = 0; offset < size && !dead; offset += piece)
    {
      GError *error = NULL;
      if (!wick_remote_parser_feed (parser, data + offset, MIN (piece, size - offset), &error))
        {
          g_clear_error (&error);
          break;
        }
      WickRemoteFrame frame;
      while (!dead && wick_remote_parser_next (parser, &frame, &error))
        {
          if (frame.type == WICK_REMOTE_RECORDS)
            dead = !wick_remote_decode_records (decoder, frame.payload, feed, stream, &error);
          else if (frame.type == WICK_REMOTE_SNAPSHOT && !snapshot_done)
            {
              gsize n;
              const guint8 *bytes = g_bytes_get_data (frame.payload, &n);
              if (snapshot->len + n <= (8u << 20))
                g_byte_array_append (snapshot, bytes, (guint)n);
              if (!(frame.flags & WICK_REMOTE_FLAG_MORE))
                {
                  snapshot_done = TRUE;
                  int fd = memfd_create ("fuzz-snapshot", MFD_CLOEXEC);
                  if (fd >= 0 && write (fd, snapshot->data, snapshot->len) == (ssize_t)snapshot->len
                      && wick_live_stream_get_records (stream) == 0)
                    wick_live_stream_apply_snapshot (stream, fd, &error);
                  if (fd >= 0)
                    close (fd);
                  g_clear_error (&error);
                }
            }
          else
            {
              JsonNode *node = wick_remote_parse_json (frame.payload, "fuzz", &error);
              if (node != NULL)
                json_node_unref (node);
              g_clear_error (&error);
            }
          g_clear_error (&error);
          wick_remote_frame_clear (&frame);
        }
      if (error != NULL)
        dead = TRUE;
      g_clear_error (&error);
    }
  wick_live_stream_finish (stream, "capture cut: fuzz input ended", count_line, &total);
  g_byte_array_unref (snapshot);
  wick_live_stream_free (stream);
  wick_remote_decoder_free (decoder);
  wick_remote_parser_free (parser);
  return 0;
}
