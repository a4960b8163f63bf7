/* wick-trace-session.c — see wick-trace-session.h for the contract. */
#include "config.h"

#include "wick-trace-session.h"

#include "model/wick-span-costs.h"

struct _WickTraceSession
{
  GObject parent_instance;
  WickSelection *selection;
  WickDocument *document;
  guint64 generation;
  guint64 document_serial;
  /* handed over by a loading worker, taken once by the page drawing them */
  WickTimelineScene *scene;
  WickMemoryChart *chart;
  /* the span costs of costs_generation (0: none) */
  GArray *costs;
  guint64 costs_generation;
};

G_DEFINE_FINAL_TYPE (WickTraceSession, wick_trace_session, G_TYPE_OBJECT)

enum
{
  PROP_0,
  PROP_SELECTION,
  PROP_DOCUMENT,
  N_PROPS
};
static GParamSpec *properties[N_PROPS];

enum
{
  CHANGED,
  N_SIGNALS
};
static guint signals[N_SIGNALS];

static void
derived_clear (WickTraceSession *self)
{
  g_clear_pointer (&self->scene, wick_timeline_scene_free);
  g_clear_pointer (&self->chart, wick_memory_chart_free);
  g_clear_pointer (&self->costs, g_array_unref);
  self->costs_generation = 0;
}

static void
wick_trace_session_dispose (GObject *object)
{
  WickTraceSession *self = WICK_TRACE_SESSION (object);
  derived_clear (self);
  g_clear_object (&self->document);
  g_clear_object (&self->selection);
  G_OBJECT_CLASS (wick_trace_session_parent_class)->dispose (object);
}

static void
wick_trace_session_get_property (GObject *object, guint prop_id, GValue *value,
                                 GParamSpec *pspec)
{
  WickTraceSession *self = WICK_TRACE_SESSION (object);
  switch (prop_id)
    {
    case PROP_SELECTION:
      g_value_set_object (value, self->selection);
      break;
    case PROP_DOCUMENT:
      g_value_set_object (value, self->document);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
wick_trace_session_set_property (GObject *object, guint prop_id, const GValue *value,
                                 GParamSpec *pspec)
{
  WickTraceSession *self = WICK_TRACE_SESSION (object);
  switch (prop_id)
    {
    case PROP_SELECTION:
      self->selection = g_value_dup_object (value);
      break;
    case PROP_DOCUMENT:
      wick_trace_session_set_document (self, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
wick_trace_session_constructed (GObject *object)
{
  WickTraceSession *self = WICK_TRACE_SESSION (object);
  G_OBJECT_CLASS (wick_trace_session_parent_class)->constructed (object);
  if (self->selection == NULL)
    self->selection = wick_selection_new ();
}

static void
wick_trace_session_class_init (WickTraceSessionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->dispose = wick_trace_session_dispose;
  object_class->get_property = wick_trace_session_get_property;
  object_class->set_property = wick_trace_session_set_property;
  object_class->constructed = wick_trace_session_constructed;
  /* the selection every page of the session shares, set at construction */
  properties[PROP_SELECTION]
    = g_param_spec_object ("selection", NULL, NULL, WICK_TYPE_SELECTION,
                           G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_DOCUMENT]
    = g_param_spec_object ("document", NULL, NULL, WICK_TYPE_DOCUMENT,
                           G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
  /* the document grew (not emitted when it is replaced: notify::document) */
  signals[CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                   NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
wick_trace_session_init (WickTraceSession *self)
{
  self->generation = 1;
}

WickTraceSession *
wick_trace_session_new (WickSelection *selection)
{
  g_return_val_if_fail (selection == NULL || WICK_IS_SELECTION (selection), NULL);
  return g_object_new (WICK_TYPE_TRACE_SESSION, "selection", selection, NULL);
}

WickSelection *
wick_trace_session_get_selection (WickTraceSession *self)
{
  g_return_val_if_fail (WICK_IS_TRACE_SESSION (self), NULL);
  return self->selection;
}

WickDocument *
wick_trace_session_get_document (WickTraceSession *self)
{
  g_return_val_if_fail (WICK_IS_TRACE_SESSION (self), NULL);
  return self->document;
}

void
wick_trace_session_set_document (WickTraceSession *self, WickDocument *document)
{
  wick_trace_session_set_document_derived (self, document, NULL, NULL, NULL);
}

void
wick_trace_session_set_document_derived (WickTraceSession *self, WickDocument *document,
                                         WickTimelineScene *scene, WickMemoryChart *chart,
                                         GArray *costs)
{
  g_return_if_fail (WICK_IS_TRACE_SESSION (self));
  derived_clear (self);
  g_set_object (&self->document, document);
  self->generation++;
  self->document_serial++;
  if (document != NULL)
    {
      self->scene = scene;
      self->chart = chart;
      self->costs = costs;
      self->costs_generation = costs ? self->generation : 0;
    }
  else
    {
      g_clear_pointer (&scene, wick_timeline_scene_free);
      g_clear_pointer (&chart, wick_memory_chart_free);
      g_clear_pointer (&costs, g_array_unref);
    }
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DOCUMENT]);
}

void
wick_trace_session_document_changed (WickTraceSession *self)
{
  g_return_if_fail (WICK_IS_TRACE_SESSION (self));
  if (self->document == NULL)
    return;
  self->generation++;
  /* a scene or chart not taken yet is of the document before this change */
  g_clear_pointer (&self->scene, wick_timeline_scene_free);
  g_clear_pointer (&self->chart, wick_memory_chart_free);
  g_signal_emit (self, signals[CHANGED], 0);
}

guint64
wick_trace_session_get_generation (WickTraceSession *self)
{
  return self->generation;
}

guint64
wick_trace_session_get_document_serial (WickTraceSession *self)
{
  return self->document_serial;
}

WickTimelineScene *
wick_trace_session_take_scene (WickTraceSession *self)
{
  return g_steal_pointer (&self->scene);
}

WickMemoryChart *
wick_trace_session_take_chart (WickTraceSession *self)
{
  return g_steal_pointer (&self->chart);
}

gboolean
wick_trace_session_document_has_gpu_work (WickDocument *document)
{
  if (document == NULL
      || wick_tracks_get_format (wick_document_get_tracks (document)) != WICK_TRACE_FORMAT_CHROME)
    return FALSE;
  return wick_gpu_analysis_get (document)->has_gpu;
}

const WickGpuAnalysis *
wick_trace_session_get_gpu_analysis (WickTraceSession *self)
{
  return wick_trace_session_document_has_gpu_work (self->document)
           ? wick_gpu_analysis_get (self->document)
           : NULL;
}

/* ---- span costs ---- */

GArray *
wick_trace_session_peek_costs (WickTraceSession *self)
{
  return self->costs_generation == self->generation ? self->costs : NULL;
}

static void
costs_keep (WickTraceSession *self, GArray *costs, guint64 generation)
{
  if (generation != self->generation)
    return;
  g_clear_pointer (&self->costs, g_array_unref);
  self->costs = g_array_ref (costs);
  self->costs_generation = generation;
}

GArray *
wick_trace_session_get_costs (WickTraceSession *self)
{
  g_return_val_if_fail (WICK_IS_TRACE_SESSION (self), NULL);
  if (self->document == NULL)
    return NULL;
  if (wick_trace_session_peek_costs (self) == NULL)
    {
      guint n;
      g_autofree WickSpanCostInput *spans = wick_span_costs_copy_spans (self->document, &n);
      g_autoptr (GArray) costs = wick_span_costs_from_copy (spans, n);
      wick_span_costs_sort (self->document, costs);
      costs_keep (self, costs, self->generation);
    }
  return self->costs;
}

typedef struct
{
  WickSpanCostInput *spans;
  guint n_spans;
  guint64 generation;
  WickDocument *document; /* read on the main thread only, for the names' order */
} CostsRequest;

static void
costs_request_free (CostsRequest *request)
{
  g_free (request->spans);
  g_clear_object (&request->document);
  g_free (request);
}

static void
costs_worker (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  CostsRequest *request = data;
  GArray *costs = wick_span_costs_from_copy (request->spans, request->n_spans);
  g_clear_pointer (&request->spans, g_free);
  g_task_return_pointer (task, costs, (GDestroyNotify)g_array_unref);
}

void
wick_trace_session_costs_async (WickTraceSession *self, GCancellable *cancellable,
                                GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (WICK_IS_TRACE_SESSION (self));
  g_autoptr (GTask) task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, wick_trace_session_costs_async);
  if (self->document == NULL)
    {
      g_task_return_pointer (task, NULL, NULL);
      return;
    }
  GArray *current = wick_trace_session_peek_costs (self);
  if (current != NULL)
    {
      g_task_return_pointer (task, g_array_ref (current), (GDestroyNotify)g_array_unref);
      return;
    }
  CostsRequest *request = g_new0 (CostsRequest, 1);
  request->spans = wick_span_costs_copy_spans (self->document, &request->n_spans);
  request->generation = self->generation;
  request->document = g_object_ref (self->document);
  g_task_set_task_data (task, request, (GDestroyNotify)costs_request_free);
  g_task_run_in_thread (task, costs_worker);
}

GArray *
wick_trace_session_costs_finish (WickTraceSession *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  GArray *costs = g_task_propagate_pointer (G_TASK (result), error);
  CostsRequest *request = g_task_get_task_data (G_TASK (result));
  if (costs != NULL && request != NULL)
    {
      /* back on the main thread: the names' order among equal totals, and
       * kept while the generation it was copied at is current */
      wick_span_costs_sort (request->document, costs);
      if (request->document == self->document)
        costs_keep (self, costs, request->generation);
    }
  return costs;
}
