/* test-remote-wire.c — the RECORDS codec of app/client/wick-remote-wire.c (one
 * field table per kind, read by the encoder and the decoder):
 *  - every kind the wire carries, filled with values of every field, comes
 *    back equal field by field, and re-encodes to the same bytes;
 *  - the bytes of a span, an op and a tensor record are the protocol's v1
 *    layout (docs/protocol.md, "RECORDS"), written out here by hand;
 *  - a value out of range, a flag bit past its flags, span id 0, a bad
 *    extension kind and a cut record are refused naming the field.
 */
#include "config.h"

#include <string.h>

#include "client/wick-live-client.h"
#include "client/wick-remote-wire.h"

static const uint64_t shape[] = { 2, 3, 5 };
static const char *const inputs[] = { "t1", "t2" };

/* One record of each kind, every field set. */
static guint
sample_records (WickRingRecord *out)
{
  guint n = 0;
  WickRingRecord *r;
#define NEXT(k)                                                                                    \
  r = &out[n++];                                                                                   \
  memset (r, 0, sizeof *r);                                                                        \
  r->kind = (k);                                                                                   \
  r->ring = n
  NEXT (WICK_RING_RECORD_META);
  r->meta.line = "{\"kind\":\"meta\",\"x\":1}";
  NEXT (WICK_RING_RECORD_SPAN_START);
  r->span = (WickRingSpan){ .id = 7, .parent = 3, .name = "forward", .span_kind = WICK_SPAN_MODULE,
                            .step = WICK_STEP_BACKWARD, .measured = true, .synthesized = true,
                            .start_ns = 11, .duration_ns = 0, .thread = 4 };
  NEXT (WICK_RING_RECORD_SPAN_END);
  r->span = (WickRingSpan){ .id = 7, .parent = 3, .name = "forward", .span_kind = WICK_SPAN_OP,
                            .step = WICK_STEP_FORWARD, .synthesized = true, .start_ns = 11,
                            .duration_ns = 99, .thread = 4 };
  NEXT (WICK_RING_RECORD_OP);
  r->op = (WickOpRecord){ .span = 7, .op_name = "matmul", .inputs = inputs, .n_inputs = 2,
                          .output = "t3", .shape = shape, .rank = 3, .dtype = "float32",
                          .device = "cpu", .duration_ns = 5, .timestamp_ns = 6,
                          .has_output_dense_bytes = true, .output_dense_bytes = 120,
                          .input_dense_bytes = 240 };
  NEXT (WICK_RING_RECORD_TENSOR);
  r->tensor = (WickTensorRecord){ .span = 7, .tensor_id = "t3", .label = NULL, .shape = shape,
                                  .rank = 2, .dtype = "bf16", .device = "cuda:0",
                                  .requires_grad = true, .has_dense_bytes = false,
                                  .dense_bytes = 12, .category = WICK_N_CATEGORIES - 1 };
  NEXT (WICK_RING_RECORD_TENSOR_STATS);
  r->tensor_stats = (WickTensorStatsRecord){ .span = 7, .label = "w", .shape = shape, .rank = 1,
                                             .dtype = "float32", .elements = 2, .non_finite = 1,
                                             .rms = 0.5, .abs_max = -2.25, .mean = 1e-300 };
  NEXT (WICK_RING_RECORD_MEMORY);
  r->memory = (WickMemoryRecord){ .timestamp_ns = 8, .storage_id = "s1", .tensor_id = "t3",
                                  .span = 7, .op_name = NULL, .device = "cpu", .bytes = 64,
                                  .action = WICK_MEMORY_FREE, .shape = shape, .rank = 3,
                                  .dtype = "int8", .category = 2 };
  NEXT (WICK_RING_RECORD_DEVICE_MEMORY);
  r->device_memory = (WickDeviceMemoryRecord){ .timestamp_ns = 9, .device = "cuda:1",
                                               .has_used_bytes = true, .has_free_bytes = false,
                                               .has_reserved_bytes = true,
                                               .has_capacity_bytes = true, .used_bytes = 1,
                                               .free_bytes = 2, .reserved_bytes = 3,
                                               .capacity_bytes = 4 };
  NEXT (WICK_RING_RECORD_DEVICE_INTERVAL);
  r->device_interval = (WickDeviceIntervalRecord){ .span = 7, .device = "cuda:0",
                                                   .stream_id = "7", .clock_id = "c",
                                                   .backend = "cupti", .start_ns = 10,
                                                   .duration_ns = 20 };
  NEXT (WICK_RING_RECORD_GRADIENT);
  r->gradient.event_number = 12;
  r->gradient.root = "loss";
  r->gradient.key = "w";
  r->gradient.state = WICK_GRADIENT_NON_FINITE;
  r->gradient.has_norm = true;
  r->gradient.norm = 3.5;
  NEXT (WICK_RING_RECORD_CALL_EDGE);
  r->call_edge.from = 1;
  r->call_edge.to = 2;
  r->call_edge.host_duration_ns = 3;
  NEXT (WICK_RING_RECORD_DATA_EDGE);
  r->data_edge.from_tensor = "a";
  r->data_edge.to_tensor = "b";
  NEXT (WICK_RING_RECORD_TERMINAL);
  r->terminal.outcome = WICK_OUTCOME_FAILED;
  r->terminal.timestamp_ns = 13;
  r->terminal.reason = "cut";
  NEXT (WICK_RING_RECORD_EXTENSION);
  r->extension.kind = "wick_stage";
  r->extension.timestamp_ns = 14;
  r->extension.json_fields = "\"a\":1";
  NEXT (WICK_RING_RECORD_DROPPED);
  r->dropped.count = 1;
  r->dropped.first_ns = 2;
  r->dropped.last_ns = 3;
  r->dropped.total = 4;
  NEXT (WICK_RING_RECORD_LOST);
  r->lost.count = 5;
  r->lost.after_ns = 6;
  NEXT (WICK_RING_RECORD_THREAD);
  r->thread.number = 2;
  r->thread.os_tid = -5;
  r->thread.timestamp_ns = 15;
  r->thread.name = "worker";
#undef NEXT
  return n;
}

typedef struct
{
  GByteArray *again; /* the decoded records, encoded again */
  GPtrArray *kinds;
} Decoded;

static gboolean
on_record (const WickRingRecord *record, gpointer user_data)
{
  Decoded *decoded = user_data;
  wick_remote_record_encode (decoded->again, record);
  g_ptr_array_add (decoded->kinds, GUINT_TO_POINTER (record->kind));
  /* spot checks that the bytes alone would not show (a bool is a bool) */
  if (record->kind == WICK_RING_RECORD_SPAN_START)
    {
      g_assert_true (record->span.measured && record->span.synthesized);
      g_assert_cmpstr (record->span.name, ==, "forward");
      g_assert_cmpint (record->span.step, ==, WICK_STEP_BACKWARD);
    }
  if (record->kind == WICK_RING_RECORD_OP)
    {
      g_assert_cmpuint (record->op.n_inputs, ==, 2);
      g_assert_cmpstr (record->op.inputs[1], ==, "t2");
      g_assert_cmpuint (record->op.rank, ==, 3);
      g_assert_cmpuint (record->op.shape[2], ==, 5);
      g_assert_true (record->op.has_output_dense_bytes);
    }
  if (record->kind == WICK_RING_RECORD_TENSOR)
    {
      g_assert_null (record->tensor.label);
      g_assert_true (record->tensor.requires_grad && !record->tensor.has_dense_bytes);
      g_assert_cmpint (record->tensor.category, ==, WICK_N_CATEGORIES - 1);
    }
  if (record->kind == WICK_RING_RECORD_TENSOR_STATS)
    g_assert_cmpfloat (record->tensor_stats.mean, ==, 1e-300);
  if (record->kind == WICK_RING_RECORD_DEVICE_MEMORY)
    g_assert_true (record->device_memory.has_used_bytes && !record->device_memory.has_free_bytes
                   && record->device_memory.has_capacity_bytes);
  if (record->kind == WICK_RING_RECORD_THREAD)
    g_assert_cmpint (record->thread.os_tid, ==, -5);
  return TRUE;
}

static void
test_round_trip (void)
{
  WickRingRecord records[32];
  guint n = sample_records (records);
  g_autoptr (GByteArray) bytes = g_byte_array_new ();
  for (guint i = 0; i < n; i++)
    wick_remote_record_encode (bytes, &records[i]);
  g_autoptr (GBytes) payload = g_bytes_new (bytes->data, bytes->len);
  g_autoptr (WickRemoteDecoder) decoder = wick_remote_decoder_new ();
  Decoded decoded = { g_byte_array_new (), g_ptr_array_new () };
  g_autoptr (GError) error = NULL;
  g_assert_true (wick_remote_decode_records (decoder, payload, on_record, &decoded, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (decoded.kinds->len, ==, n);
  for (guint i = 0; i < n; i++)
    g_assert_cmpuint (GPOINTER_TO_UINT (g_ptr_array_index (decoded.kinds, i)), ==, records[i].kind);
  g_assert_cmpmem (decoded.again->data, decoded.again->len, bytes->data, bytes->len);
  g_byte_array_unref (decoded.again);
  g_ptr_array_unref (decoded.kinds);
}

static void
u8 (GByteArray *b, guint8 v)
{
  g_byte_array_append (b, &v, 1);
}

static void
u32 (GByteArray *b, guint32 v)
{
  v = GUINT32_TO_LE (v);
  g_byte_array_append (b, (guint8 *)&v, 4);
}

static void
u64 (GByteArray *b, guint64 v)
{
  v = GUINT64_TO_LE (v);
  g_byte_array_append (b, (guint8 *)&v, 8);
}

static void
str (GByteArray *b, const char *s)
{
  if (s == NULL)
    {
      u32 (b, 0xffffffffu);
      return;
    }
  u32 (b, (guint32)strlen (s));
  g_byte_array_append (b, (const guint8 *)s, (guint)strlen (s));
}

/* The body's length in front of it. */
static void
framed (GByteArray *out, GByteArray *body)
{
  u32 (out, body->len);
  g_byte_array_append (out, body->data, body->len);
}

/* v1's layout, by hand: a span start, an op, a tensor. */
static void
test_v1_layout (void)
{
  WickRingRecord records[32];
  sample_records (records);
  g_autoptr (GByteArray) expected = g_byte_array_new ();
  g_autoptr (GByteArray) body = g_byte_array_new ();
  /* records[1]: span start */
  u8 (body, WICK_RING_RECORD_SPAN_START), u32 (body, 2);
  u64 (body, 7), u64 (body, 3), str (body, "forward");
  u8 (body, WICK_SPAN_MODULE), u8 (body, WICK_STEP_BACKWARD), u8 (body, 3);
  u64 (body, 11), u64 (body, 0), u32 (body, 4);
  framed (expected, body);
  g_byte_array_set_size (body, 0);
  /* records[3]: op */
  u8 (body, WICK_RING_RECORD_OP), u32 (body, 4);
  u64 (body, 7), str (body, "matmul"), u32 (body, 2), str (body, "t1"), str (body, "t2");
  str (body, "t3"), u32 (body, 3), u64 (body, 2), u64 (body, 3), u64 (body, 5);
  str (body, "float32"), str (body, "cpu"), u64 (body, 5), u64 (body, 6), u8 (body, 1);
  u64 (body, 120), u64 (body, 240);
  framed (expected, body);
  g_byte_array_set_size (body, 0);
  /* records[4]: tensor, its label absent */
  u8 (body, WICK_RING_RECORD_TENSOR), u32 (body, 5);
  u64 (body, 7), str (body, "t3"), str (body, NULL), u32 (body, 2), u64 (body, 2), u64 (body, 3);
  str (body, "bf16"), str (body, "cuda:0"), u8 (body, 1), u64 (body, 12);
  u8 (body, WICK_N_CATEGORIES - 1);
  framed (expected, body);

  g_autoptr (GByteArray) got = g_byte_array_new ();
  wick_remote_record_encode (got, &records[1]);
  wick_remote_record_encode (got, &records[3]);
  wick_remote_record_encode (got, &records[4]);
  g_assert_cmpmem (got->data, got->len, expected->data, expected->len);
}

static gboolean
ignore (const WickRingRecord *record, gpointer user_data)
{
  return TRUE;
}

/* @record encoded, byte @at set to @value (or the body cut to @cut bytes):
 * refused with @words in the error. */
static void
refused (const WickRingRecord *record, gssize at, guint8 value, gssize cut, const char *words)
{
  g_autoptr (GByteArray) bytes = g_byte_array_new ();
  wick_remote_record_encode (bytes, record);
  if (at >= 0)
    bytes->data[4 + at] = value;
  if (cut >= 0)
    {
      u32 (bytes, 0); /* room, then the length rewritten */
      guint32 body = GUINT32_TO_LE ((guint32)cut);
      memcpy (bytes->data, &body, 4);
      g_byte_array_set_size (bytes, 4 + (guint)cut);
    }
  g_autoptr (GBytes) payload = g_bytes_new (bytes->data, bytes->len);
  g_autoptr (WickRemoteDecoder) decoder = wick_remote_decoder_new ();
  g_autoptr (GError) error = NULL;
  g_assert_false (wick_remote_decode_records (decoder, payload, ignore, NULL, &error));
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, words));
}

static void
test_refused (void)
{
  WickRingRecord records[32];
  sample_records (records);
  /* span start body: kind 0, ring 1-4, id 5-12, parent 13-20, name 21-32,
   * span_kind 32, step 33, flags 34 */
  refused (&records[1], 32, WICK_SPAN_MODULE + 1, -1, "field span.span_kind: the value is out of range");
  refused (&records[1], 33, 9, -1, "field span.step: the value is out of range");
  refused (&records[1], 34, 4, -1, "field span.flags: the value is out of range");
  WickRingRecord zero = records[1];
  zero.span.id = 0;
  refused (&zero, -1, 0, -1, "field span.id: span id 0 is not a span");
  refused (&records[1], -1, 0, 30, "field span.name: the string runs past the record");
  refused (&records[1], 0, 200, -1, "field kind: unknown record kind");
  WickRingRecord extension = records[13];
  extension.extension.kind = "stage";
  refused (&extension, -1, 0, -1, "field extension.kind: an extension kind must start with");
  extension.extension.kind = "wick_a-b";
  refused (&extension, -1, 0, -1, "an extension kind is letters, digits and '_'");
  extension = records[13];
  extension.extension.json_fields = "\"a\":";
  refused (&extension, -1, 0, -1, "field json_fields: not the inside of a JSON object");
  /* a required string absent: the op's dtype (op_name 13-22 ... ) set NULL */
  WickRingRecord op = records[3];
  op.op.dtype = NULL;
  refused (&op, -1, 0, -1, "field op.dtype: a required string is absent");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/remote/wire/round-trip", test_round_trip);
  g_test_add_func ("/remote/wire/v1-layout", test_v1_layout);
  g_test_add_func ("/remote/wire/refused", test_refused);
  return g_test_run ();
}
