/* test-model-gpu.c — the GPU side of the track model and the GPU analysis:
 * kernels linked to their launch by correlation id both ways, a launch's
 * arrow ending on its kernel (not on the annotation above it), annotations
 * nested above the kernels of their stream, CUDA-graph kernels attributed to
 * the graph launch, GPU processes named from their labels, and the analysis'
 * figures on a small trace shaped as Kineto writes them (the real traces are
 * checked against an independent reference: gpu-reference.py). */
#include "config.h"

#include <gio/gio.h>
#include <string.h>

#include "wick-chrome-import.h"
#include "wick-chrome-import-private.h"
#include "wick-gpu-analysis.h"
#include "wick-gpu-analysis-private.h"
#include "wick-gpu-graphs.h"
#include "wick-tracks.h"
#include "wick-tracks-private.h"

/* µs. Host: ProfilerStep#1 [0, 100) > aten::mm [10, 40) > cudaLaunchKernel
 * [12, 17) (correlation 7), and cudaGraphLaunch [50, 55) (correlation 9).
 * GPU 0 stream 7: annotation replay_0 [60, 90) over two graph kernels
 * [60, 70) and [75, 85); mm_kernel [20, 30); a memcpy [92, 96) whose launch
 * is not in the trace. One ac2g flow, from the graph launch to the stream
 * at 60 (the annotation and the first kernel both start there). */
static const char trace[]
  = "{\"traceEvents\":["
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":100,\"tid\":0,\"args\":{\"name\":\"python3\"}}"
    ","
    "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":100,\"tid\":0,\"args\":{\"labels\":\"CPU\"}}"
    ","
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"tid\":0,\"args\":{\"name\":\"python3\"}},"
    "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":0,\"tid\":0,\"args\":{\"labels\":\"GPU "
    "0\"}},"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":100,\"tid\":1,"
    "\"ts\":1000,\"dur\":100},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":100,\"tid\":1,\"ts\":1010,"
    "\"dur\":30,\"args\":{\"Input Dims\":[[4,4],[4,4]]}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":100,\"tid\":1,"
    "\"ts\":1012,\"dur\":5,\"args\":{\"correlation\":7,\"External id\":3}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaGraphLaunch\",\"pid\":100,\"tid\":1,"
    "\"ts\":1050,\"dur\":5,\"args\":{\"correlation\":9}},"
    "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"replay_0\",\"pid\":0,\"tid\":7,"
    "\"ts\":1060,\"dur\":30,\"args\":{\"device\":0,\"stream\":7,\"correlation\":9}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"graph_gemm\",\"pid\":0,\"tid\":7,\"ts\":1060,"
    "\"dur\":10,\"args\":{\"device\":0,\"stream\":7,\"correlation\":9,\"graph node id\":1,"
    "\"grid\":[8, 1, 1],\"block\":[128, 1, 1],\"registers per thread\":32}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"graph_relu\",\"pid\":0,\"tid\":7,\"ts\":1075,"
    "\"dur\":10,\"args\":{\"device\":0,\"stream\":7,\"correlation\":9,\"graph node id\":2}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"mm_kernel\",\"pid\":0,\"tid\":7,\"ts\":1020,"
    "\"dur\":10,\"args\":{\"device\":0,\"stream\":7,\"correlation\":7}},"
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoH\",\"pid\":0,\"tid\":7,\"ts\":1092,"
    "\"dur\":4,\"args\":{\"device\":0,\"stream\":7,\"correlation\":99}},"
    "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":9,\"pid\":100,\"tid\":1,\"ts\":1050},"
    "{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":9,\"pid\":0,\"tid\":7,\"ts\":1060,"
    "\"bp\":\"e\"}"
    "]}";

static WickDocument *
load_trace (void)
{
  WickDocument *doc = wick_document_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (wick_chrome_import_data (doc, trace, strlen (trace), "gpu.json", &error));
  g_assert_no_error (error);
  return doc;
}

static guint32
span_named (WickDocument *doc, const char *name)
{
  guint n;
  const WickSpan *spans = wick_document_get_spans (doc, &n);
  for (guint i = 0; i < n; i++)
    if (g_strcmp0 (wick_document_str (doc, spans[i].name), name) == 0)
      return i;
  g_error ("no span %s", name);
}

static guint32
device_named (WickTracks *t, const char *name)
{
  guint n;
  const WickDeviceSlice *d = wick_tracks_get_device_slices (t, &n);
  for (guint i = 0; i < n; i++)
    if (g_strcmp0 (wick_tracks_event_name (t, (WickEventRef){ WICK_EVENT_DEVICE, i }), name) == 0)
      return i;
  (void)d;
  g_error ("no device slice %s", name);
}

static void
test_gpu_links (void)
{
  g_autoptr (WickDocument) doc = load_trace ();
  WickTracks *t = wick_document_get_tracks (doc);
  guint n, n_flows;
  const WickDeviceSlice *d = wick_tracks_get_device_slices (t, &n);
  const WickFlow *flows = wick_tracks_get_flows (t, &n_flows);
  guint32 graph_launch = span_named (doc, "cudaGraphLaunch");
  guint32 launch = span_named (doc, "cudaLaunchKernel");
  guint32 gemm = device_named (t, "graph_gemm"), relu = device_named (t, "graph_relu");
  guint32 mm = device_named (t, "mm_kernel"), copy = device_named (t, "Memcpy DtoH");
  guint32 replay = device_named (t, "replay_0");

  /* kinds from the category */
  g_assert_cmpint (d[gemm].kind, ==, WICK_DEVICE_KERNEL);
  g_assert_cmpint (d[copy].kind, ==, WICK_DEVICE_MEMCPY);
  g_assert_cmpint (d[replay].kind, ==, WICK_DEVICE_ANNOTATION);
  /* kernel -> launch by correlation, launch -> kernels */
  g_assert_cmpuint (d[gemm].launcher, ==, graph_launch);
  g_assert_cmpuint (d[relu].launcher, ==, graph_launch);
  g_assert_cmpuint (d[mm].launcher, ==, launch);
  g_assert_cmpuint (d[copy].launcher, ==, G_MAXUINT32);
  g_assert_cmpuint (d[replay].launcher, ==, G_MAXUINT32); /* an annotation is launched by no call */
  g_assert_cmpint (wick_tracks_span_correlation (t, graph_launch), ==, 9);
  guint32 out[4];
  g_assert_cmpuint (wick_tracks_span_launched (t, graph_launch, out, 4), ==, 2);
  g_assert_cmpuint (out[0], ==, gemm);
  g_assert_cmpuint (out[1], ==, relu);
  g_assert_cmpuint (wick_tracks_span_launched (t, launch, out, 4), ==, 1);
  g_assert_cmpuint (out[0], ==, mm);
  /* graph kernels are the graph's */
  g_assert_true (d[gemm].flags & WICK_DEVICE_FLAG_GRAPH);
  g_assert_true (d[relu].flags & WICK_DEVICE_FLAG_GRAPH);
  g_assert_false (d[mm].flags & WICK_DEVICE_FLAG_GRAPH);
  g_assert_cmpstr (wick_tracks_span_category (t, graph_launch), ==, "cuda_runtime");

  /* the annotation above, the kernels below on the one stream track */
  g_assert_cmpuint (d[replay].track, ==, d[gemm].track);
  g_assert_cmpuint (d[replay].row, ==, 0);
  g_assert_cmpuint (d[gemm].row, ==, 1);
  g_assert_cmpuint (d[mm].row, ==, 1);
  g_assert_cmpuint (wick_tracks_track_n_rows (t, d[gemm].track), ==, 2);
  g_assert_cmpuint (wick_tracks_event_row (t, (WickEventRef){ WICK_EVENT_DEVICE, relu }), ==, 1);

  /* the file's ac2g flow ends on the first graph kernel, not on replay_0;
   * each other launched interval gets an arrow from its launch */
  guint to_gemm = 0, to_relu = 0, to_mm = 0, to_replay = 0;
  for (guint f = 0; f < n_flows; f++)
    {
      if (flows[f].to.event.kind != WICK_EVENT_DEVICE)
        continue;
      guint32 to = flows[f].to.event.index;
      g_assert_cmpint (flows[f].from.event.kind, ==, WICK_EVENT_SLICE);
      to_gemm += to == gemm && flows[f].from.event.index == graph_launch;
      to_relu += to == relu && flows[f].from.event.index == graph_launch;
      to_mm += to == mm && flows[f].from.event.index == launch;
      to_replay += to == replay;
    }
  g_assert_cmpuint (n_flows, ==, 3);
  g_assert_cmpuint (wick_tracks_get_n_launch_flows (t), ==, 2);
  g_assert_cmpuint (to_gemm, ==, 1);
  g_assert_cmpuint (to_relu, ==, 1);
  g_assert_cmpuint (to_mm, ==, 1);
  g_assert_cmpuint (to_replay, ==, 0);
  /* both ways from the kernel: the flows of the event */
  g_assert_cmpuint (wick_tracks_event_flows (t, (WickEventRef){ WICK_EVENT_DEVICE, gemm }, out, 4),
                    ==, 1);

  /* the GPU process by its labels */
  guint np;
  const WickProcess *p = wick_tracks_get_processes (t, &np);
  for (guint i = 0; i < np; i++)
    {
      g_autofree char *title = wick_tracks_process_title (t, i);
      if (p[i].pid == 0)
        g_assert_cmpstr (title, ==, "GPU 0 · python3");
      else if (p[i].pid == 100)
        g_assert_cmpstr (title, ==, "python3 · 100 (CPU)");
    }
}

static void
test_gpu_classify (void)
{
  g_assert_true (wick_gpu_is_communication_kernel ("ncclKernel_AllReduce_RING_LL_Sum_float"));
  g_assert_true (
    wick_gpu_is_communication_kernel ("ncclDevKernel_AllGather_RING_LL(ncclDevComm*)"));
  g_assert_true (wick_gpu_is_communication_kernel ("void rccl_kernel"));
  g_assert_false (wick_gpu_is_communication_kernel ("ampere_sgemm_128x64_tn"));
  g_assert_false (wick_gpu_is_communication_kernel (NULL));
  g_assert_cmpint (wick_gpu_classify (WICK_DEVICE_KERNEL, "ncclKernel_x"), ==,
                   WICK_GPU_COMMUNICATION);
  g_assert_cmpint (wick_gpu_classify (WICK_DEVICE_KERNEL, "triton_poi_fused_add_0"), ==,
                   WICK_GPU_COMPUTE);
  g_assert_cmpint (wick_gpu_classify (WICK_DEVICE_MEMSET, "Memset"), ==, WICK_GPU_MEMORY);
  g_assert_cmpint (wick_gpu_classify (WICK_DEVICE_ANNOTATION, "replay_0"), ==, WICK_GPU_NOT_WORK);
}

static void
test_gpu_analysis (void)
{
  g_autoptr (WickDocument) doc = load_trace ();
  const WickGpuAnalysis *a = wick_gpu_analysis_get (doc);

  g_assert_true (a == wick_gpu_analysis_get (doc)); /* computed once */
  g_assert_true (a->has_gpu);
  g_assert_cmpuint (a->devices->len, ==, 1);
  const WickGpuDevice *dev = &g_array_index (a->devices, WickGpuDevice, 0);
  g_assert_cmpstr (dev->device, ==, "cuda:0");
  g_assert_cmpuint (dev->busy_ns, ==, 34000); /* 10 + 10 + 10 + 4 µs, the annotation not */
  g_assert_cmpuint (dev->kernel_ns, ==, 30000);
  g_assert_cmpuint (dev->memcpy_ns, ==, 4000);
  g_assert_cmpuint (a->kernels->len, ==, 3);
  /* ties by name: graph_gemm, graph_relu, mm_kernel */
  const WickGpuKernel *k = &g_array_index (a->kernels, WickGpuKernel, 0);
  g_assert_cmpstr (wick_document_str (doc, k->name), ==, "graph_gemm");
  g_assert_cmpuint (k->count, ==, 1);
  g_assert_cmpuint (k->total_ns, ==, 10000);
  g_assert_cmpfloat_with_epsilon (k->share, 1.0 / 3, 1e-12);
  g_assert_cmpstr (wick_document_str (doc, k->grid), ==, "[8, 1, 1]");
  g_assert_cmpint (k->registers, ==, 32);

  /* aten::mm: 30 µs, its launch 5 µs inside, 10 µs of kernel launched */
  g_assert_cmpuint (a->operators->len, ==, 1);
  const WickGpuOperator *o = &g_array_index (a->operators, WickGpuOperator, 0);
  g_assert_cmpuint (o->cpu_total_ns, ==, 30000);
  g_assert_cmpuint (o->cpu_self_ns, ==, 25000);
  g_assert_cmpuint (o->gpu_ns, ==, 10000);
  g_assert_cmpstr (wick_document_str (doc, o->shapes), ==, "[[4,4],[4,4]]");

  /* the step [0, 100 µs): busy 34, idle 66; compute 30, memcpy 4 */
  g_assert_cmpuint (a->steps->len, ==, 1);
  const WickGpuStep *s = &g_array_index (a->steps, WickGpuStep, 0);
  g_assert_cmpuint (s->dur_ns, ==, 100000);
  g_assert_cmpuint (s->gpu_busy_ns, ==, 34000);
  g_assert_cmpuint (s->idle_ns, ==, 66000);
  g_assert_cmpuint (s->compute_ns, ==, 30000);
  g_assert_cmpuint (s->comm_ns, ==, 0);
  g_assert_cmpuint (s->memcpy_ns, ==, 4000);

  /* three arrows from two launches; the copy's launch is not in the trace;
   * delays 8, 10, 25 µs */
  g_assert_cmpuint (a->launches.flows, ==, 3);
  g_assert_cmpuint (a->launches.to_kernel, ==, 2);
  g_assert_cmpuint (a->launches.unmatched, ==, 1);
  g_assert_cmpint (a->launches.delay_p50_ns, ==, 10000);
  g_assert_cmpint (a->launches.delay_p99_ns, ==, 25000);
  g_assert_cmpuint (a->launches.graph_kernels, ==, 2);

  g_autofree char *json = wick_gpu_analysis_to_json (a, doc);
  g_assert_nonnull (strstr (json, "\"start_ns\":1000000,"));
  g_assert_nonnull (strstr (json, "\"launches\":{\"flows\":3,\"to_kernel\":2,\"unmatched\":1,"));
}

/* A torch 2.11 CUDA-graph replay (tests/data/gpu/README.md): every arrow
 * from a cudaGraphLaunch ends on a kernel of the replay, never on its
 * replay_N annotation, and every kernel of a replay knows its launch. */
static void
test_gpu_real_cudagraph (void)
{
  const char *dir = g_getenv ("WICK_TEST_DATA");
  g_autofree char *path
    = g_build_filename (dir ? dir : "tests/data", "gpu", "torch-cudagraph.json.gz", NULL);
  g_autoptr (WickDocument) doc = wick_document_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (wick_document_load_file_auto (doc, path, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  WickTracks *t = wick_document_get_tracks (doc);
  guint nd, nf, ns;
  const WickDeviceSlice *d = wick_tracks_get_device_slices (t, &nd);
  const WickFlow *flows = wick_tracks_get_flows (t, &nf);
  const WickSpan *spans = wick_document_get_spans (doc, &ns);
  guint graph_arrows = 0, graph_kernels = 0, annotations = 0;
  guint n_tracks;
  wick_tracks_get_tracks (t, &n_tracks);
  g_autofree guint8 *annotated = g_new0 (guint8, n_tracks);
  for (guint i = 0; i < nd; i++)
    if (d[i].kind == WICK_DEVICE_ANNOTATION)
      annotated[d[i].track] = 1;
  for (guint f = 0; f < nf; f++)
    if (flows[f].from.event.kind == WICK_EVENT_SLICE
        && g_strcmp0 (wick_document_str (doc, spans[flows[f].from.event.index].name),
                      "cudaGraphLaunch")
             == 0)
      {
        g_assert_cmpint (flows[f].to.event.kind, ==, WICK_EVENT_DEVICE);
        g_assert_cmpint (d[flows[f].to.event.index].kind, ==, WICK_DEVICE_KERNEL);
        g_assert_cmpuint (d[flows[f].to.event.index].launcher, ==, flows[f].from.event.index);
        graph_arrows++;
      }
  for (guint i = 0; i < nd; i++)
    {
      if (d[i].flags & WICK_DEVICE_FLAG_GRAPH)
        graph_kernels++;
      if (d[i].kind == WICK_DEVICE_ANNOTATION)
        {
          annotations++;
          g_assert_cmpuint (d[i].launcher, ==, G_MAXUINT32);
        }
      else if (d[i].kind == WICK_DEVICE_KERNEL)
        {
          g_assert_cmpuint (d[i].launcher, !=, G_MAXUINT32);
          /* below the stream's annotations, if it has any */
          g_assert_cmpuint (d[i].row > 0, ==, annotated[d[i].track]);
        }
    }
  g_assert_cmpuint (annotations, >, 0);
  g_assert_cmpuint (graph_kernels, >, 0);
  g_assert_cmpuint (graph_arrows, ==, graph_kernels);
}

/* torch 2.x writes a stream's gpu_user_annotation with no device or stream
 * args (pid = device, tid = stream): it nests over the kernels of that
 * stream on their track ("cuda:0 stream 7"), not on a track of its own
 * ("0 stream 7"), whichever comes first in the file. */
static void
check_annotations_share (WickDocument *doc, guint min_annotations)
{
  WickTracks *t = wick_document_get_tracks (doc);
  guint nd, n_tracks;
  const WickDeviceSlice *d = wick_tracks_get_device_slices (t, &nd);
  const WickTrack *tracks = wick_tracks_get_tracks (t, &n_tracks);
  g_autofree guint8 *has_work = g_new0 (guint8, n_tracks);
  g_autofree guint16 *top_work_row = g_new0 (guint16, n_tracks);
  for (guint i = 0; i < nd; i++)
    if (WICK_DEVICE_KIND_IS_WORK (d[i].kind))
      {
        top_work_row[d[i].track] = has_work[d[i].track] ? MIN (top_work_row[d[i].track], d[i].row)
                                                         : d[i].row;
        has_work[d[i].track] = 1;
      }
  guint annotations = 0;
  for (guint i = 0; i < nd; i++)
    {
      if (d[i].kind != WICK_DEVICE_ANNOTATION)
        continue;
      annotations++;
      const WickTrack *track = &tracks[d[i].track];
      const char *name = wick_document_str (doc, track->name);
      g_assert_true (has_work[d[i].track]);
      g_assert_true (g_str_has_prefix (name, "cuda:"));
      g_assert_cmpuint (d[i].row, <, top_work_row[d[i].track]);
    }
  g_assert_cmpuint (annotations, >=, min_annotations);
  for (guint k = 0; k < n_tracks; k++)
    if (tracks[k].kind == WICK_TRACK_DEVICE)
      g_assert_true (has_work[k]); /* no track of annotations alone */
}

static void
test_gpu_annotation_track (void)
{
  for (int order = 0; order < 2; order++)
    {
      const char *annotation
        = "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"fwd\",\"pid\":0,\"tid\":7,"
          "\"ts\":10,\"dur\":30,\"args\":{\"External id\":4}}";
      const char *kernel
        = "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":12,"
          "\"dur\":5,\"args\":{\"device\":0,\"stream\":7,\"correlation\":3}}";
      const char *other
        = "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k2\",\"pid\":0,\"tid\":8,\"ts\":12,"
          "\"dur\":5,\"args\":{\"device\":0,\"stream\":8,\"correlation\":5}}";
      g_autofree char *json = g_strdup_printf ("{\"traceEvents\":[%s,%s,%s]}",
                                               order ? kernel : annotation,
                                               order ? annotation : kernel, other);
      g_autoptr (WickDocument) doc = wick_document_new ();
      g_autoptr (GError) error = NULL;
      g_assert_true (wick_chrome_import_data (doc, json, strlen (json), "a.json", &error));
      g_assert_no_error (error);
      WickTracks *t = wick_document_get_tracks (doc);
      guint n_tracks;
      wick_tracks_get_tracks (t, &n_tracks);
      g_assert_cmpuint (n_tracks, ==, 2); /* stream 7 with its annotation, stream 8 */
      const WickDeviceSlice *d = wick_tracks_get_device_slices (t, NULL);
      guint32 a = device_named (t, "fwd"), k = device_named (t, "k");
      g_assert_cmpuint (d[a].track, ==, d[k].track);
      g_assert_cmpuint (d[a].row, ==, 0);
      g_assert_cmpuint (d[k].row, ==, 1);
      const WickTrack *track = &wick_tracks_get_tracks (t, NULL)[d[k].track];
      g_assert_cmpstr (wick_document_str (doc, track->name), ==, "cuda:0 stream 7");
      check_annotations_share (doc, 1);
    }
  const char *files[] = { "torch-multistream.json.gz", "torch-cudagraph.json.gz",
                          "torch-compile.json.gz" };
  const char *dir = g_getenv ("WICK_TEST_DATA");
  for (guint f = 0; f < G_N_ELEMENTS (files); f++)
    {
      g_autofree char *path = g_build_filename (dir ? dir : "tests/data", "gpu", files[f], NULL);
      g_autoptr (WickDocument) doc = wick_document_new ();
      g_autoptr (GError) error = NULL;
      g_assert_true (wick_document_load_file_auto (doc, path, NULL, NULL, NULL, &error));
      g_assert_no_error (error);
      check_annotations_share (doc, 3);
    }
}

/* Without correlation ids or flows, a kernel, copy or fill is launched by a
 * call of its operator's External id: in order within (id, kind); a group
 * whose counts differ stays unlinked, counted. */
static void
test_gpu_external_id (void)
{
  static const char json[]
    = "{\"traceEvents\":["
      "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":50,"
      "\"args\":{\"External id\":5}},"
      "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
      "\"ts\":10,\"dur\":2,\"args\":{\"External id\":5}},"
      "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaMemcpyAsync\",\"pid\":1,\"tid\":1,"
      "\"ts\":14,\"dur\":2,\"args\":{\"External id\":5}},"
      "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaStreamIsCapturing\",\"pid\":1,"
      "\"tid\":1,\"ts\":17,\"dur\":1,\"args\":{\"External id\":5}},"
      "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
      "\"ts\":20,\"dur\":2,\"args\":{\"External id\":5}},"
      /* op 6: one launch, two kernels (a launch cut off): not linked */
      "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
      "\"ts\":30,\"dur\":2,\"args\":{\"External id\":6}},"
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k_second\",\"pid\":0,\"tid\":7,\"ts\":60,"
      "\"dur\":5,\"args\":{\"device\":0,\"stream\":7,\"External id\":5}},"
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k_first\",\"pid\":0,\"tid\":7,\"ts\":40,"
      "\"dur\":5,\"args\":{\"device\":0,\"stream\":7,\"External id\":5}},"
      "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD\",\"pid\":0,\"tid\":7,"
      "\"ts\":50,\"dur\":5,\"args\":{\"device\":0,\"stream\":7,\"External id\":5}},"
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k6a\",\"pid\":0,\"tid\":7,\"ts\":70,"
      "\"dur\":5,\"args\":{\"device\":0,\"stream\":7,\"External id\":6}},"
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k6b\",\"pid\":0,\"tid\":7,\"ts\":80,"
      "\"dur\":5,\"args\":{\"device\":0,\"stream\":7,\"External id\":6}}"
      "]}";
  g_autoptr (WickDocument) doc = wick_document_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (wick_chrome_import_data (doc, json, strlen (json), "ext.json", &error));
  g_assert_no_error (error);
  WickTracks *t = wick_document_get_tracks (doc);
  const WickDeviceSlice *d = wick_tracks_get_device_slices (t, NULL);
  const WickSpan *spans = wick_document_get_spans (doc, NULL);
  guint32 first = device_named (t, "k_first"), second = device_named (t, "k_second");
  guint32 copy = device_named (t, "Memcpy HtoD");
  g_assert_cmpuint (d[first].launcher, !=, G_MAXUINT32);
  g_assert_cmpuint (d[second].launcher, !=, G_MAXUINT32);
  g_assert_cmpuint (d[copy].launcher, !=, G_MAXUINT32);
  gint64 origin = wick_tracks_get_origin_ns (t);
  g_assert_cmpint ((gint64)spans[d[first].launcher].start_ns + origin, ==, 10000);
  g_assert_cmpint ((gint64)spans[d[second].launcher].start_ns + origin, ==, 20000);
  g_assert_cmpstr (wick_document_str (doc, spans[d[copy].launcher].name), ==, "cudaMemcpyAsync");
  g_assert_cmpuint (d[device_named (t, "k6a")].launcher, ==, G_MAXUINT32);
  g_assert_cmpuint (d[device_named (t, "k6b")].launcher, ==, G_MAXUINT32);
  guint64 count = 0;
  for (guint i = 0; i < wick_tracks_get_n_skipped (t); i++)
    {
      guint64 c;
      if (g_str_has_prefix (wick_tracks_get_skipped (t, i, &c), "External id with unequal"))
        count = c;
    }
  g_assert_cmpuint (count, ==, 2);
  /* ...and the arrows follow: one a linked interval */
  guint32 launched[4];
  g_assert_cmpuint (wick_tracks_span_launched (t, d[first].launcher, launched, 4), ==, 1);
  g_assert_cmpuint (launched[0], ==, first);
}

/* Replaces every @from in @text with @to (same length). */
static void
replace_same_length (char *text, const char *from, const char *to)
{
  gsize n = strlen (from);
  g_assert_cmpuint (n, ==, strlen (to));
  for (char *p = strstr (text, from); p != NULL; p = strstr (p + n, from))
    memcpy (p, to, n);
}

/* A real torch 2.11 trace with its correlation ids and ac2g flows taken out
 * links every kernel, copy and fill by External id to the very call its
 * correlation id names. */
static void
test_gpu_external_id_real (void)
{
  const char *dir = g_getenv ("WICK_TEST_DATA");
  const char *files[] = { "torch-compile.json.gz", "torch-multistream.json.gz" };
  for (guint f = 0; f < G_N_ELEMENTS (files); f++)
    {
      g_autofree char *path = g_build_filename (dir ? dir : "tests/data", "gpu", files[f], NULL);
      g_autoptr (WickDocument) with = wick_document_new ();
      g_autoptr (GError) error = NULL;
      g_assert_true (wick_document_load_file_auto (with, path, NULL, NULL, NULL, &error));
      g_assert_no_error (error);
      /* the same file's text, gunzipped, without its links */
      g_autofree char *gz = NULL;
      gsize gz_len;
      g_assert_true (g_file_get_contents (path, &gz, &gz_len, NULL));
      g_autoptr (GConverter) dec = G_CONVERTER (g_zlib_decompressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP));
      g_autoptr (GInputStream) raw = g_memory_input_stream_new_from_data (gz, gz_len, NULL);
      g_autoptr (GInputStream) in = g_converter_input_stream_new (raw, dec);
      g_autoptr (GOutputStream) out = g_memory_output_stream_new_resizable ();
      g_assert_cmpint (g_output_stream_splice (out, in, G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, NULL,
                                               &error),
                       >, 0);
      g_assert_no_error (error);
      gsize len = g_memory_output_stream_get_data_size (G_MEMORY_OUTPUT_STREAM (out));
      g_autofree char *text = g_malloc (len + 1);
      memcpy (text, g_memory_output_stream_get_data (G_MEMORY_OUTPUT_STREAM (out)), len);
      text[len] = '\0';
      replace_same_length (text, "\"correlation\"", "\"correlatiox\"");
      replace_same_length (text, "\"ph\": \"s\"", "\"ph\": \"i\"");
      replace_same_length (text, "\"ph\": \"f\"", "\"ph\": \"i\"");
      g_autoptr (WickDocument) without = wick_document_new ();
      g_assert_true (wick_chrome_import_data (without, text, len, files[f], &error));
      g_assert_no_error (error);
      WickTracks *a = wick_document_get_tracks (with), *b = wick_document_get_tracks (without);
      guint na, nb;
      const WickDeviceSlice *da = wick_tracks_get_device_slices (a, &na);
      const WickDeviceSlice *db = wick_tracks_get_device_slices (b, &nb);
      g_assert_cmpuint (na, ==, nb);
      guint linked = 0;
      for (guint i = 0; i < na; i++)
        {
          if (!WICK_DEVICE_KIND_IS_WORK (da[i].kind))
            continue;
          g_assert_cmpint (db[i].correlation, ==, 0);
          g_assert_cmpuint (da[i].launcher, !=, G_MAXUINT32);
          g_assert_cmpuint (db[i].launcher, ==, da[i].launcher);
          linked++;
        }
      g_assert_cmpuint (linked, >, 10);
    }
}

/* The CUDA graph of the torch 2.11 replay trace: 4 graph launches of one
 * graph of 23 kernels (the same names in the same order), each kernel its
 * replay's node by start. Counted independently by a json.load script:
 * 4 cudaGraphLaunch, each correlation reaching 23 kernels, one sequence. */
static void
test_gpu_graphs_real (void)
{
  const char *dir = g_getenv ("WICK_TEST_DATA");
  g_autofree char *path
    = g_build_filename (dir ? dir : "tests/data", "gpu", "torch-cudagraph.json.gz", NULL);
  g_autoptr (WickDocument) doc = wick_document_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (wick_document_load_file_auto (doc, path, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  g_autoptr (WickGpuGraphs) graphs = wick_gpu_graphs_new (doc);
  guint n;
  const WickGpuGraph *g = wick_gpu_graphs_get (graphs, &n);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpuint (g[0].n_nodes, ==, 23);
  g_assert_cmpuint (g[0].n_replays, ==, 4);
  g_assert_null (g[0].stage);
  g_assert_cmpint (g[0].graph_id, ==, -1);
  WickTracks *t = wick_document_get_tracks (doc);
  guint nd;
  const WickDeviceSlice *d = wick_tracks_get_device_slices (t, &nd);
  guint graph_kernels = 0;
  g_autofree guint *per_replay = g_new0 (guint, 4);
  guint64 gpu = 0;
  for (guint i = 0; i < nd; i++)
    {
      WickGpuGraphNode node;
      gboolean is = wick_gpu_graphs_node (graphs, i, &node);
      g_assert_cmpint (is, ==, (d[i].flags & WICK_DEVICE_FLAG_GRAPH) != 0);
      if (!is)
        continue;
      graph_kernels++;
      gpu += d[i].duration_ns;
      g_assert_cmpuint (node.graph, ==, 0);
      g_assert_cmpuint (node.replay, <, 4);
      g_assert_cmpuint (node.node, <, 23);
      per_replay[node.replay]++;
      /* the same node of every replay is the same kernel */
      for (guint j = 0; j < i; j++)
        {
          WickGpuGraphNode other;
          if (wick_gpu_graphs_node (graphs, j, &other) && other.node == node.node)
            {
              g_assert_cmpuint (d[j].name, ==, d[i].name);
              break;
            }
        }
    }
  g_assert_cmpuint (graph_kernels, ==, 4 * 23);
  for (guint r = 0; r < 4; r++)
    g_assert_cmpuint (per_replay[r], ==, 23);
  g_assert_cmpuint (g[0].gpu_ns, ==, gpu);
}

/* A Wick stage's replay (wick.torch runs it inside record_function("wick
 * stage: NAME") while the profiler records) gives its graph's kernels the
 * stage; a second graph (other kernels) is apart; a graph id names a graph. */
static void
test_gpu_graphs_stage (void)
{
  static const char json[]
    = "{\"traceEvents\":["
      "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"wick stage: denoise\",\"pid\":1,"
      "\"tid\":1,\"ts\":0,\"dur\":20},"
      "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaGraphLaunch\",\"pid\":1,\"tid\":1,"
      "\"ts\":2,\"dur\":5,\"args\":{\"correlation\":1}},"
      "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"wick stage: denoise\",\"pid\":1,"
      "\"tid\":1,\"ts\":30,\"dur\":20},"
      "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaGraphLaunch\",\"pid\":1,\"tid\":1,"
      "\"ts\":32,\"dur\":5,\"args\":{\"correlation\":2}},"
      "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaGraphLaunch\",\"pid\":1,\"tid\":1,"
      "\"ts\":60,\"dur\":5,\"args\":{\"correlation\":3}},"
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"a\",\"pid\":0,\"tid\":7,\"ts\":10,\"dur\":2,"
      "\"args\":{\"device\":0,\"stream\":7,\"correlation\":1}},"
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"b\",\"pid\":0,\"tid\":7,\"ts\":13,\"dur\":2,"
      "\"args\":{\"device\":0,\"stream\":7,\"correlation\":1}},"
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"a\",\"pid\":0,\"tid\":7,\"ts\":40,\"dur\":2,"
      "\"args\":{\"device\":0,\"stream\":7,\"correlation\":2}},"
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"b\",\"pid\":0,\"tid\":7,\"ts\":43,\"dur\":2,"
      "\"args\":{\"device\":0,\"stream\":7,\"correlation\":2}},"
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"c\",\"pid\":0,\"tid\":7,\"ts\":70,\"dur\":2,"
      "\"args\":{\"device\":0,\"stream\":7,\"correlation\":3,\"graph id\":12}}"
      "]}";
  g_autoptr (WickDocument) doc = wick_document_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (wick_chrome_import_data (doc, json, strlen (json), "stage.json", &error));
  g_assert_no_error (error);
  g_autoptr (WickGpuGraphs) graphs = wick_gpu_graphs_new (doc);
  guint n;
  const WickGpuGraph *g = wick_gpu_graphs_get (graphs, &n);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpstr (g[0].stage, ==, "denoise");
  g_assert_cmpuint (g[0].n_replays, ==, 2);
  g_assert_cmpuint (g[0].n_nodes, ==, 2);
  g_assert_null (g[1].stage);
  g_assert_cmpint (g[1].graph_id, ==, 12);
  WickTracks *t = wick_document_get_tracks (doc);
  WickGpuGraphNode node;
  g_assert_true (wick_gpu_graphs_node (graphs, device_named (t, "c"), &node));
  g_assert_cmpuint (node.graph, ==, 1);
  /* compiled regions and Triton kernels by name */
  g_assert_cmpint (wick_gpu_compiled_kind ("Torch-Compiled Region: 0/0"), ==, WICK_COMPILED_REGION);
  g_assert_cmpint (wick_gpu_compiled_kind ("CompiledFunctionBackward"), ==, WICK_COMPILED_FUNCTION);
  g_assert_cmpint (wick_gpu_compiled_kind ("autograd::engine::evaluate_function: "
                                           "CompiledFunctionBackward"),
                   ==, WICK_COMPILED_FUNCTION);
  g_assert_cmpint (wick_gpu_compiled_kind ("## Call CompiledFxGraph fmo5bn3x ##"), ==,
                   WICK_COMPILED_GRAPH_CALL);
  g_assert_cmpint (wick_gpu_compiled_kind ("aten::mm"), ==, WICK_COMPILED_NONE);
  g_assert_true (wick_gpu_is_triton_kernel ("triton_poi_fused__to_copy_6"));
  g_assert_false (wick_gpu_is_triton_kernel ("void at::native::vectorized_gather_kernel"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/gpu/links", test_gpu_links);
  g_test_add_func ("/gpu/classify", test_gpu_classify);
  g_test_add_func ("/gpu/analysis", test_gpu_analysis);
  g_test_add_func ("/gpu/real-cudagraph", test_gpu_real_cudagraph);
  g_test_add_func ("/gpu/annotation-track", test_gpu_annotation_track);
  g_test_add_func ("/gpu/external-id", test_gpu_external_id);
  g_test_add_func ("/gpu/external-id-real", test_gpu_external_id_real);
  g_test_add_func ("/gpu/graphs-real", test_gpu_graphs_real);
  g_test_add_func ("/gpu/graphs-stage", test_gpu_graphs_stage);
  return g_test_run ();
}
