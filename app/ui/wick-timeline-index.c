/* wick-timeline-index.c — see wick-timeline-index.h for the contract. */
#include "wick-timeline-index.h"

struct _WickTimelineIndex
{
  const WickSpan *spans;
  guint n_spans;
  guint64 doc_end;
  guint64 start_ns, end_ns;
  guint64 base_ns;
  guint base_shift;
  guint n_depths;
  WickTimelineDepth *depths;
};

guint64
wick_timeline_index_span_end (WickTimelineIndex *self, guint span)
{
  const WickSpan *s = &self->spans[span];
  if (s->flags & WICK_SPAN_FLAG_CLOSED)
    return s->duration_ns > G_MAXUINT64 - s->start_ns ? G_MAXUINT64 : s->start_ns + s->duration_ns;
  return MAX (s->start_ns, self->doc_end);
}

static int
compare_by_start (gconstpointer a, gconstpointer b, gpointer user_data)
{
  const WickSpan *spans = user_data;
  guint64 sa = spans[*(const guint32 *)a].start_ns;
  guint64 sb = spans[*(const guint32 *)b].start_ns;
  if (sa != sb)
    return sa < sb ? -1 : 1;
  /* Longer first, so a parent drawn at equal start sits under its child. */
  guint64 da = spans[*(const guint32 *)a].duration_ns;
  guint64 db = spans[*(const guint32 *)b].duration_ns;
  return da > db ? -1 : da < db ? 1 : 0;
}

static void
build_levels (WickTimelineIndex *self, WickTimelineDepth *depth)
{
  GPtrArray *levels = g_ptr_array_new ();
  GArray *counts = g_array_new (FALSE, FALSE, sizeof (guint));
  WickMipEntry *prev = NULL;
  guint prev_count = 0;

  for (guint level = 0; level < 64; level++)
    {
      guint shift = self->base_shift + level;
      WickMipEntry *entries;
      guint count = 0;

      if (level == 0)
        {
          entries = g_new (WickMipEntry, MAX (depth->n_spans, 1));
          for (guint i = 0; i < depth->n_spans; i++)
            {
              guint32 span = depth->spans[i];
              guint32 bucket = (guint32)((self->spans[span].start_ns - self->start_ns) >> shift);
              if (count > 0 && entries[count - 1].bucket == bucket)
                {
                  guint32 held = entries[count - 1].span;
                  if (self->spans[span].duration_ns > self->spans[held].duration_ns)
                    entries[count - 1].span = span;
                  continue;
                }
              entries[count++] = (WickMipEntry){ bucket, span };
            }
        }
      else
        {
          entries = g_new (WickMipEntry, MAX (prev_count, 1));
          for (guint i = 0; i < prev_count; i++)
            {
              guint32 bucket = prev[i].bucket >> 1;
              guint32 span = prev[i].span;
              if (count > 0 && entries[count - 1].bucket == bucket)
                {
                  guint32 held = entries[count - 1].span;
                  if (self->spans[span].duration_ns > self->spans[held].duration_ns)
                    entries[count - 1].span = span;
                  continue;
                }
              entries[count++] = (WickMipEntry){ bucket, span };
            }
        }
      g_ptr_array_add (levels, entries);
      g_array_append_val (counts, count);
      prev = entries;
      prev_count = count;
      if (count <= 1 || ((self->end_ns - self->start_ns) >> shift) == 0)
        break;
    }
  depth->n_levels = levels->len;
  depth->levels = (WickMipEntry **)g_ptr_array_free (levels, FALSE);
  depth->level_counts = (guint *)g_array_free (counts, FALSE);
}

static void
choose_base (WickTimelineIndex *self)
{
  /* About four spans per level-0 bucket on average at the widest depth, so
   * raw drawing below level 0 stays near a few spans per pixel. */
  guint widest = 1;
  for (guint d = 0; d < self->n_depths; d++)
    widest = MAX (widest, self->depths[d].n_spans);
  guint64 span_ns = MAX (self->end_ns - self->start_ns, 1);
  guint64 target = MAX (span_ns / MAX (widest / 4, 1), 1);
  self->base_shift = 0;
  while ((G_GUINT64_CONSTANT (1) << (self->base_shift + 1)) <= target && self->base_shift < 62)
    self->base_shift++;
  /* Buckets are 32-bit: never more than 2^31 of them. */
  while ((span_ns >> self->base_shift) > G_MAXINT32)
    self->base_shift++;
  self->base_ns = G_GUINT64_CONSTANT (1) << self->base_shift;
}

WickTimelineIndex *
wick_timeline_index_new (WickDocument *document)
{
  WickTimelineIndex *self = g_new0 (WickTimelineIndex, 1);
  self->spans = wick_document_get_spans (document, &self->n_spans);
  self->doc_end = wick_document_get_end_ns (document);

  guint n_depths = 0;
  guint64 start = G_MAXUINT64, end = 0;
  for (guint i = 0; i < self->n_spans; i++)
    {
      n_depths = MAX (n_depths, (guint)self->spans[i].depth + 1);
      start = MIN (start, self->spans[i].start_ns);
      end = MAX (end, wick_timeline_index_span_end (self, i));
    }
  self->start_ns = self->n_spans ? start : 0;
  self->end_ns = MAX (end, self->start_ns == G_MAXUINT64 ? G_MAXUINT64 : self->start_ns + 1);
  self->n_depths = n_depths;
  self->depths = g_new0 (WickTimelineDepth, MAX (n_depths, 1));

  for (guint i = 0; i < self->n_spans; i++)
    self->depths[self->spans[i].depth].n_spans++;
  for (guint d = 0; d < n_depths; d++)
    {
      self->depths[d].spans = g_new (guint32, MAX (self->depths[d].n_spans, 1));
      self->depths[d].max_end = g_new (guint64, MAX (self->depths[d].n_spans, 1));
      self->depths[d].n_spans = 0;
    }
  for (guint i = 0; i < self->n_spans; i++)
    {
      WickTimelineDepth *depth = &self->depths[self->spans[i].depth];
      depth->spans[depth->n_spans++] = i;
    }
  choose_base (self);
  for (guint d = 0; d < n_depths; d++)
    {
      WickTimelineDepth *depth = &self->depths[d];
      g_qsort_with_data (depth->spans, depth->n_spans, sizeof (guint32), compare_by_start,
                         (gpointer)self->spans);
      guint64 running = 0;
      for (guint i = 0; i < depth->n_spans; i++)
        {
          running = MAX (running, wick_timeline_index_span_end (self, depth->spans[i]));
          depth->max_end[i] = running;
        }
      build_levels (self, depth);
    }
  return self;
}

void
wick_timeline_index_free (WickTimelineIndex *self)
{
  if (self == NULL)
    return;
  for (guint d = 0; d < self->n_depths; d++)
    {
      for (guint l = 0; l < self->depths[d].n_levels; l++)
        g_free (self->depths[d].levels[l]);
      g_free (self->depths[d].levels);
      g_free (self->depths[d].level_counts);
      g_free (self->depths[d].spans);
      g_free (self->depths[d].max_end);
    }
  g_free (self->depths);
  g_free (self);
}

guint
wick_timeline_index_get_n_depths (WickTimelineIndex *self)
{
  return self->n_depths;
}

const WickTimelineDepth *
wick_timeline_index_get_depth (WickTimelineIndex *self, guint depth)
{
  g_return_val_if_fail (depth < self->n_depths, NULL);
  return &self->depths[depth];
}

guint64
wick_timeline_index_get_base_ns (WickTimelineIndex *self)
{
  return self->base_ns;
}

guint64
wick_timeline_index_get_start_ns (WickTimelineIndex *self)
{
  return self->start_ns;
}

guint64
wick_timeline_index_get_end_ns (WickTimelineIndex *self)
{
  return self->end_ns;
}

guint
wick_timeline_index_get_n_spans (WickTimelineIndex *self)
{
  return self->n_spans;
}

guint
wick_timeline_depth_first_overlapping (const WickTimelineDepth *depth, guint64 t)
{
  guint lo = 0, hi = depth->n_spans;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (depth->max_end[mid] > t)
        hi = mid;
      else
        lo = mid + 1;
    }
  return lo;
}

int
wick_timeline_index_pick_level (WickTimelineIndex *self, double ns_per_px)
{
  if (ns_per_px < (double)self->base_ns)
    return -1;
  int level = 0;
  while (level < 62 && (double)(self->base_ns << (level + 1)) <= ns_per_px)
    level++;
  return level;
}

gint64
wick_timeline_index_span_at (WickTimelineIndex *self, guint depth_index, guint64 t, guint64 slop_ns)
{
  if (depth_index >= self->n_depths)
    return -1;
  const WickTimelineDepth *depth = &self->depths[depth_index];
  guint64 lo_t = t > slop_ns ? t - slop_ns : 0;
  gint64 best = -1;
  guint64 best_distance = G_MAXUINT64;
  for (guint i = wick_timeline_depth_first_overlapping (depth, lo_t); i < depth->n_spans; i++)
    {
      guint32 span = depth->spans[i];
      guint64 start = self->spans[span].start_ns;
      if (start - MIN (start, slop_ns) > t)
        break;
      guint64 end = wick_timeline_index_span_end (self, span);
      if (end < lo_t)
        continue;
      guint64 distance = (t >= start && t <= end) ? 0 : (t < start ? start - t : t - end);
      if (distance < best_distance)
        {
          best = span;
          best_distance = distance;
        }
    }
  return best;
}
