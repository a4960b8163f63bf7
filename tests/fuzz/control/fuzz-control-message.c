/* fuzz-control-message.c — libFuzzer target for the control protocol's parser.
 *
 * The input is a stream of frames as a client would send them: each frame's
 * 4-byte length is checked, then its body parsed as a request; every accepted
 * field is written back through the reply writer, whose output is parsed again
 * as a request when it fits (a round trip through both halves of the codec).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "control/wick-control-message.h"
#include "control/wick-control-message-private.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
echo_fields (const WickControlRequest *request)
{
  WickControlWriter writer;
  wick_control_writer_init (&writer);
  wick_control_writer_begin_object (&writer, NULL);
  for (size_t i = 0; i < request->n_fields; i++)
    {
      const WickControlField *field = &request->fields[i];
      switch (field->type)
        {
          case WICK_CONTROL_VALUE_NULL:
            wick_control_writer_raw (&writer, field->key, "null");
            break;
          case WICK_CONTROL_VALUE_BOOL:
            wick_control_writer_bool (&writer, field->key, field->boolean);
            break;
          case WICK_CONTROL_VALUE_NUMBER:
            if (field->is_integer)
              wick_control_writer_uint (&writer, field->key, field->integer);
            else
              wick_control_writer_double (&writer, field->key, field->number);
            break;
          case WICK_CONTROL_VALUE_STRING:
            wick_control_writer_string (&writer, field->key, field->string);
            break;
        }
    }
  wick_control_writer_end_object (&writer);
  if (!writer.overflow)
    {
      WickControlRequest again;
      WickError error;
      if (!wick_control_request_parse (&again, writer.data, writer.length, &error))
        abort (); /* what the writer writes, the parser must read */
      if (again.n_fields != request->n_fields)
        abort ();
      wick_control_request_clear (&again);
    }
  wick_control_writer_clear (&writer);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  while (size >= WICK_CONTROL_FRAME_HEADER)
    {
      uint32_t length;
      WickError error;
      if (!wick_control_frame_length (data, &length, &error))
        return 0;
      data += WICK_CONTROL_FRAME_HEADER;
      size -= WICK_CONTROL_FRAME_HEADER;
      size_t body = length < size ? length : size;
      WickControlRequest request;
      if (wick_control_request_parse (&request, (const char *)data, body, &error))
        {
          echo_fields (&request);
          wick_control_request_clear (&request);
        }
      data += body;
      size -= body;
    }
  return 0;
}
