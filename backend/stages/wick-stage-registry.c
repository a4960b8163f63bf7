/* wick-stage-registry.c — the stages a session holds, in its WICK_SLOT_STAGES
 * slot: registered by name, listed and found by the control socket, freed
 * when the session closes. Registration and lookups take the registry's
 * mutex; a stage pointer stays valid until the session closes. */
#include "wick-stage-private.h"

#include "wick-session-private.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/wick-error-private.h"

typedef struct
{
  pthread_mutex_t mutex;
  WickStage **stages;
  size_t n_stages;
  size_t capacity;
} StageRegistry;

static void
registry_destroy (void *data)
{
  StageRegistry *registry = data;
  for (size_t i = registry->n_stages; i > 0; i--)
    wick_stage_free (registry->stages[i - 1]);
  free (registry->stages);
  pthread_mutex_destroy (&registry->mutex);
  free (registry);
}

static StageRegistry *
registry_get (WickSession *session, bool create)
{
  StageRegistry *registry = wick_session_get_slot (session, WICK_SLOT_STAGES);
  if (registry != NULL || !create)
    return registry;
  registry = calloc (1, sizeof *registry);
  if (registry == NULL)
    return NULL;
  pthread_mutex_init (&registry->mutex, NULL);
  wick_session_set_slot (session, WICK_SLOT_STAGES, registry, registry_destroy);
  return registry;
}

static WickStage *
registry_find_locked (StageRegistry *registry, const char *name)
{
  for (size_t i = 0; i < registry->n_stages; i++)
    if (strcmp (wick_stage_get_name (registry->stages[i]), name) == 0)
      return registry->stages[i];
  return NULL;
}

static bool
registry_add_locked (StageRegistry *registry, WickStage *stage)
{
  if (registry->n_stages == registry->capacity)
    {
      size_t capacity = registry->capacity > 0 ? 2 * registry->capacity : 8;
      WickStage **stages = realloc (registry->stages, capacity * sizeof *stages);
      if (stages == NULL)
        return false;
      registry->stages = stages;
      registry->capacity = capacity;
    }
  registry->stages[registry->n_stages++] = stage;
  return true;
}

static WickStage *
registry_register (WickSession *session, const WickStageInfo *info, bool host, WickError *error)
{
  if (session == NULL)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "wick_session_register_stage: no session");
      return NULL;
    }
  StageRegistry *registry = registry_get (session, true);
  if (registry == NULL)
    {
      wick_set_error (error, WICK_ERROR_NO_MEMORY, "wick_session_register_stage: out of memory");
      return NULL;
    }
  WickStage *stage
    = host ? wick_stage_new_host (session, info, error) : wick_stage_new (session, info, error);
  if (stage == NULL)
    return NULL;
  pthread_mutex_lock (&registry->mutex);
  bool duplicate = registry_find_locked (registry, info->name) != NULL;
  bool added = !duplicate && registry_add_locked (registry, stage);
  pthread_mutex_unlock (&registry->mutex);
  if (!added)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "stage '%s' %s", info->name,
                          duplicate ? "is already registered on this session"
                                    : "could not be added: out of memory");
      wick_stage_free (stage);
      return NULL;
    }
  return stage;
}

WickStage *
wick_session_register_stage (WickSession *session, const WickStageInfo *info, WickError *error)
{
  return registry_register (session, info, false, error);
}

WickStage *
wick_session_register_host_stage (WickSession *session, const WickStageInfo *info,
                                  WickError *error)
{
  return registry_register (session, info, true, error);
}

size_t
wick_session_get_n_stages (WickSession *session)
{
  StageRegistry *registry = session != NULL ? registry_get (session, false) : NULL;
  if (registry == NULL)
    return 0;
  pthread_mutex_lock (&registry->mutex);
  size_t n = registry->n_stages;
  pthread_mutex_unlock (&registry->mutex);
  return n;
}

WickStage *
wick_session_get_stage (WickSession *session, size_t index)
{
  StageRegistry *registry = session != NULL ? registry_get (session, false) : NULL;
  if (registry == NULL)
    return NULL;
  pthread_mutex_lock (&registry->mutex);
  WickStage *stage = index < registry->n_stages ? registry->stages[index] : NULL;
  pthread_mutex_unlock (&registry->mutex);
  return stage;
}

WickStage *
wick_session_find_stage (WickSession *session, const char *name)
{
  StageRegistry *registry = session != NULL && name != NULL ? registry_get (session, false) : NULL;
  if (registry == NULL)
    return NULL;
  pthread_mutex_lock (&registry->mutex);
  WickStage *stage = registry_find_locked (registry, name);
  pthread_mutex_unlock (&registry->mutex);
  return stage;
}
