/* wick-ranks.h — the ranks of one distributed job reduced to one picture:
 * clock alignment from the collectives, collective analysis, stragglers.
 *
 * Two stages, so that a job of many ranks never needs every rank's slices in
 * one process (docs/ranks.md):
 *
 * 1. Per rank, one streaming pass over its PyTorch profiler (kineto) trace
 *    (wick_rank_reduce_file): the NCCL kernels (legacy `ncclKernel_*` and
 *    modern `ncclDevKernel_*` names) with the args kineto copies onto them
 *    (Collective name, Process Group Name/Ranks, Seq, In/Out msg nelems,
 *    Group size, dtype), the ProfilerStep windows with each step's compute,
 *    communication, exposed communication and idle time, the rank (from
 *    distributedInfo.rank, else the file name) and baseTimeNanoseconds. Only
 *    one rank's GPU busy intervals are held while its file is read; what is
 *    kept is a WickRankPartial, small (a few dozen bytes a collective).
 *    Partials serialise to JSON (wick_rank_partial_to_json/_from_json), so
 *    the pass may run on another machine (wick.trace.ranks on Dask).
 *
 * 2. The merge (wick_ranks_merge): collectives matched across ranks by
 *    (Process Group Name, Process Group Ranks, Seq) — by order of appearance
 *    within the group only when a kernel has no Seq, and said so — each
 *    rank's clock offset estimated from the ends of its collectives, then
 *    arrival skew, last rank, latency and bus bandwidth per collective, and
 *    the stragglers ranked by the delay they caused.
 *
 * Times: a rank's raw clock is baseTimeNanoseconds + ts (ns); offset_ns is
 * what is added to it to put it on the reference rank's clock (the lowest
 * rank that shares a collective with others).
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct
{
  const char *group;       /* Process Group Name ("" when absent) */
  const char *group_key;   /* group + "@" + a hash of Process Group Ranks: one communicator */
  const char *name;        /* Collective name, else from the kernel's name ("allreduce") */
  gint64 seq;              /* Seq, or -1 when the kernel has none */
  gint64 start_ns, end_ns; /* the rank's raw clock */
  guint64 bytes;           /* 0 when unknown */
  guint group_size;        /* 0 when unknown */
} WickRankCollective;

typedef struct
{
  gint64 step;             /* N of ProfilerStep#N */
  gint64 start_ns, end_ns; /* raw clock */
  gint64 compute_ns;       /* GPU busy with anything but NCCL */
  gint64 comm_ns;          /* GPU busy with NCCL kernels */
  gint64 exposed_comm_ns;  /* NCCL time not overlapped by compute */
  gint64 idle_ns;          /* no GPU work at all */
} WickRankStep;

typedef struct
{
  char *file;
  int rank;          /* -1 until known */
  char *rank_source; /* "distributedInfo", "file name" or "order" */
  int world_size;    /* 0 when unknown */
  gint64 base_ns;    /* baseTimeNanoseconds, 0 when absent */
  gboolean has_base;
  gint64 first_ns, last_ns; /* raw clock: first and last timed event */
  GArray *collectives;      /* WickRankCollective, in the order of the file */
  GArray *steps;            /* WickRankStep, by start */
  guint64 events, gpu_events, nccl_kernels;
  guint64 nccl_without_group; /* NCCL kernels without Process Group Name */
  guint64 gloo_ops;           /* gloo collectives ("gloo:all_reduce" annotations) */
  guint64 unknown_dtype;      /* collectives whose bytes are unknown */
  GPtrArray *warnings;        /* char*: tolerated damage and what was not modelled */
} WickRankPartial;

void wick_rank_partial_free (WickRankPartial *partial);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickRankPartial, wick_rank_partial_free)

/* One streaming pass over @path (any file WickInput opens: plain, gzip,
 * zstd). NULL with @error naming the file (and line) when it is not a Chrome
 * trace. */
WickRankPartial *wick_rank_reduce_file (const char *path, GCancellable *cancellable,
                                        GError **error);

char *wick_rank_partial_to_json (const WickRankPartial *partial);
/* @name names the text in messages. Every count and length is bounded. */
WickRankPartial *wick_rank_partial_from_json (const char *json, gsize len, const char *name,
                                              GError **error);

typedef struct
{
  int rank;
  char *file;
  gint64 offset_ns;
  gint64 offset_spread_ns; /* median |residual| of its collective ends; -1: not estimated */
  gboolean aligned;        /* FALSE: kept on its own clock (no shared collectives) */
  guint collectives;
  gint64 wait_ns; /* time spent in collectives waiting for the last rank */
  const WickRankPartial *partial;
  /* where offset_ns came from: "collectives" (estimated), "reference" (the
   * lowest rank sharing a collective), "pinned" (the reference by hand),
   * "set" (typed by hand) or "wall clock" (kept on its own clock) */
  const char *offset_source;
  /* per collective of its partial (its order): the index into the job's
   * collectives of the collective it is part of, G_MAXUINT when none */
  guint *collective_index;
} WickJobRank;

typedef struct
{
  char *group;
  gint64 seq; /* Seq, or the order within the group when !by_seq */
  gboolean by_seq;
  char *name;
  GArray *ranks; /* int, ascending */
  guint group_size;
  guint64 bytes;
  gint64 first_start_ns, last_start_ns, end_ns; /* aligned, on the job's clock */
  gint64 arrival_skew_ns;
  int last_rank;
  gint64 straggle_ns; /* last arrival minus the one before it */
  gint64 latency_ns;  /* median end minus last arrival */
  double busbw_gbps;  /* < 0: unknown */
  gboolean warmup;    /* its last arrival was in the job's first step (see WickRanksAlignment) */
} WickJobCollective;

typedef struct
{
  int rank;
  gint64 delay_ns;
  guint collectives; /* collectives it was last to */
} WickJobStraggler;

typedef struct
{
  GPtrArray *partials;    /* WickRankPartial, owned, by rank */
  GArray *ranks;          /* WickJobRank, by rank */
  GPtrArray *collectives; /* WickJobCollective*, by first start */
  GArray *stragglers;     /* WickJobStraggler, most delay first */
  gint64 origin_ns;       /* the reference clock's earliest event of the job */
  int reference_rank;
  gboolean any_without_seq;
  GPtrArray *notes; /* char*: what the reader should know (wall-clock ranks, fallbacks) */
  int pinned_rank;  /* the rank pinned by hand as the reference, -1: none */
  gint64 warmup_end_ns;      /* job clock: the end of the first step on every rank, -1: none */
  guint warmup_collectives;  /* collectives left out of the stragglers as warm-up */
} WickRankJob;

/* How the clocks are aligned and what the stragglers count; all zero (with
 * pin_rank -1) is the default. */
typedef struct
{
  /* the reference, offset 0; -1: the lowest rank sharing a collective */
  int pin_rank;
  /* offsets typed by hand, on the reference's clock (added to the rank's
   * baseTimeNanoseconds + ts): not estimated, and the other ranks are aligned
   * through them too (a rank sharing no collective can be placed so) */
  guint n_set;
  const int *set_ranks;
  const gint64 *set_offsets_ns;
  /* FALSE (default): the stragglers leave out the warm-up, every collective
   * whose last arrival is before the first ProfilerStep has ended on every
   * rank (start-up lateness is not a straggler) — unless that leaves none */
  gboolean include_warmup;
} WickRanksAlignment;

#define WICK_RANKS_ALIGNMENT_INIT { -1, 0, NULL, NULL, FALSE }

void wick_rank_job_free (WickRankJob *job);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickRankJob, wick_rank_job_free)

/* Takes @partials (its free func must free them), also on failure: NULL with
 * @error when two partials claim the same rank. */
WickRankJob *wick_ranks_merge (GPtrArray *partials, GError **error);
/* The same, aligned as @alignment says (NULL: the default). NULL with @error
 * when it names a rank the job does not have, pins a rank and sets its
 * offset, or sets one rank twice. */
WickRankJob *wick_ranks_merge_aligned (GPtrArray *partials, const WickRanksAlignment *alignment,
                                       GError **error);
/* Re-aligns @job from its partials (no file is read again): what the Ranks
 * page does when the user pins or sets an offset. Returns the new job and
 * frees @job; NULL with @error, @job untouched, when @alignment does not fit
 * it (the merge itself cannot fail then: its ranks were merged once). */
WickRankJob *wick_rank_job_realign (WickRankJob *job, const WickRanksAlignment *alignment,
                                    GError **error);

/* Reduces @paths on a pool of @threads workers (0: every core), then merges.
 * NULL with the first failing file's error (in the order given). */
WickRankJob *wick_ranks_reduce_files (const char *const *paths, guint n_paths, guint threads,
                                      GCancellable *cancellable, GError **error);
WickRankJob *wick_ranks_reduce_files_aligned (const char *const *paths, guint n_paths,
                                              guint threads, const WickRanksAlignment *alignment,
                                              GCancellable *cancellable, GError **error);

/* The job as `wick-trace ranks --json` prints it (docs/ranks.md). */
char *wick_rank_job_to_json (const WickRankJob *job, gboolean pretty);

/* Writes one Chrome trace of the whole job to @path (through PATH.part,
 * renamed when complete): every rank's events re-read from its file and put
 * on the reference clock (baseTimeNanoseconds + ts + offset, from the job's
 * origin); each pid becomes "rank N/PID" and its process "rank N · NAME",
 * sorted by rank; flow and async ids are kept apart per rank; the job's
 * figures ride along as the top-level member "wickRanks". Every NCCL kernel
 * and gloo collective matched to one of the job's collectives carries, first
 * in its args, "wick_collective": its index in the job's collectives (so the
 * timeline can show one collective on every rank). Streams: memory is one
 * event, a 1 MiB output buffer and a rank's collectives. */
gboolean wick_rank_job_write_merged (const WickRankJob *job, const char *path,
                                     GCancellable *cancellable, GError **error);
/* The same with only the ranks @full[i] (by index in job->ranks; NULL: all)
 * read again in full; each other rank is one summary row, a process
 * "rank N · summary: …" holding one counter, "GPU" "busy %", its GPU busy share
 * in each step from the reduction (compute and communication together), and
 * its file is not opened: what the app shows of a job of many ranks until a
 * rank is loaded. */
gboolean wick_rank_job_write_merged_some (const WickRankJob *job, const char *path,
                                          const gboolean *full, GCancellable *cancellable,
                                          GError **error);

/* Parses an offset typed by hand: a decimal number (sign, fraction) and an
 * optional unit ns, us, µs, ms or s (spaces allowed around it); a bare
 * number is in @default_unit_ns (1 for ns, 1000 for µs, ...). FALSE with
 * @error saying what is wrong; more than 10⁶ s is refused. */
gboolean wick_ranks_parse_offset (const char *text, gint64 default_unit_ns, gint64 *ns,
                                  GError **error);

/* TRUE for an NCCL/RCCL kernel's name. */
gboolean wick_is_nccl_kernel (const char *name, gsize len);

G_END_DECLS
