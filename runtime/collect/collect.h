/* collect.h — the collectors: optional data gathered alongside recording (never installed).
 *
 *  - latency histograms per (thread, site): recorded by the exit fast path (record/histogram.h),
 *    read here (histogram.c);
 *  - CPU time and peak live bytes per span (resources.c, cputime.c), allocation counts and
 *    sampled allocation stacks (allocstats.c, allocsamples.c, fed by libspanprof-alloc.so);
 *  - the per-thread trace ring (trace_ring.h, trace_ring.c);
 *  - SPANPROF=sample's wall and CPU time per stack, from a sampler thread (sampler.c,
 *    sample_data.c);
 *  - coz's counters, bumped per call (slowpath.c).
 * collectors.c switches them on at start-up and hooks them into recording (spanprof__hooks):
 * the recording layer never names them.
 *
 * Per-node data: when CPU or allocation tracking is on, every call-tree node is allocated with
 * struct spanprof__res_node right behind it (spanprof__flags.node_ext more bytes), and with
 * SPANPROF=sample struct spanprof__sample_node after that (the sampler's figures).  Per-frame data
 * for CPU time and peak live bytes lives in a per-thread array parallel to the shadow stack
 * (struct spanprof__res_thread, reached through spanprof__thread.res).
 */
#ifndef SPANPROF_COLLECT_H
#define SPANPROF_COLLECT_H

#include <stdint.h>

#include "record/histogram.h"
#include "record/record.h"

#pragma GCC visibility push(hidden)

/* ---- collectors.c ---- */
/* Which collectors run, decided at start-up (lifecycle/start.c) and fixed afterwards. */
struct spanprof__collect_settings {
    int histogram;         /* SPANPROF_HISTOGRAM */
    int cpu;               /* SPANPROF_CPU */
    int alloc;             /* SPANPROF_ALLOC (cleared when the interposer is not loaded) */
    int alloc_stacks;      /* SPANPROF_ALLOC_STACKS */
    uint64_t alloc_sample; /* SPANPROF_ALLOC_SAMPLE, bytes */
    size_t trace_buffer;   /* SPANPROF_TRACE ring bytes per thread, 0: no tracing */
    uint32_t sample_hz;    /* SPANPROF=sample: SPANPROF_SAMPLE_HZ, 0: no sampling */
    double budget;         /* SPANPROF_BUDGET, percent; 0: none (budget.c) */
};
extern struct spanprof__collect_settings spanprof__collect;
/* Copies S, hands the allocation callbacks to the interposer, sets the recording flags the
 * collectors need and installs their hooks.  Before any site is registered. */
void spanprof__collectors_start(const struct spanprof__collect_settings *s);

/* ---- nodeext.c: collectors' data behind each call-tree node ---- */
/* Adds the data behind retired node SRC into the group's node DST (both SIZE bytes as
 * registered), under the process lock; the crash writer may read DST meanwhile. */
typedef void (*spanprof__node_merge_fn)(void *dst, const void *src);
/* Registers SIZE bytes behind every node (rounded up to 8), merged with MERGE when a thread's
 * tree goes to its retired group; returns their offset behind the node.  At start-up only,
 * before any site is registered. */
size_t spanprof__node_ext_add(size_t size, spanprof__node_merge_fn merge);
/* spanprof__hooks.node_merge: every registered merge on its own bytes. */
void spanprof__node_ext_merge(struct spanprof__node *dst, const struct spanprof__node *src);

/* ---- merge.c: thread churn, the collectors' side ---- */
int spanprof__collect_thread_merge(struct spanprof__thread *group, struct spanprof__thread *t);
void spanprof__collect_thread_clear(struct spanprof__thread *t);

/* ---- slowpath.c: calls of sites in state SLOW ---- */
void spanprof__slow_enter(struct spanprof_site *site, uintptr_t cfa, uintptr_t ra, uintptr_t fra);
void spanprof__slow_exit(struct spanprof_site *site, uintptr_t cfa);

/* ---- resources.c ---- */
struct spanprof__res_node {
    uint64_t cpu_ns;                   /* inclusive, completed activations (owning thread) */
    uint64_t allocs, alloc_bytes;      /* self: made while this node was the innermost span */
    uint64_t frees, free_bytes;        /* self: freed while this node was the innermost span */
    int64_t live_blocks, live_bytes;   /* allocated here, not freed yet (atomic: any thread frees) */
    uint64_t peak_bytes;               /* highest net growth of the heap during one activation */
    /* Thread churn: a retired group's node heads a chain of the retired nodes of its path that
     * still own live blocks (the blocks name them, and frees keep coming to them); in those
     * nodes it is the chain's link.  Their live figures add to the group node's (reslive). */
    struct spanprof__res_node *retired_live;
};
struct spanprof__res_frame {
    uint64_t cpu_ns;                  /* thread CPU time at entry */
    int64_t net_enter, net_max;       /* thread's net allocated bytes at entry, highest since */
};
struct spanprof__alloc_sample;
struct spanprof__res_thread {
    struct spanprof__res_frame *frames; /* indexed like spanprof__thread.frames */
    size_t capacity;
    int64_t net;                        /* bytes allocated minus bytes freed by this thread */
    struct spanprof__alloc_sample *samples; /* newest first (allocsamples.c) */
};

/* 1 when CPU or allocation tracking is on: nodes carry a struct spanprof__res_node. */
static inline int spanprof__res_on(void)
{
    return spanprof__collect.cpu || spanprof__collect.alloc;
}
/* The per-node data right behind node N (only when spanprof__res_on(); registered first, so at
 * offset 0). */
static inline struct spanprof__res_node *spanprof__res_of(struct spanprof__node *n)
{
    return (struct spanprof__res_node *)(n + 1);
}

void spanprof__res_enter(const struct spanprof_site *site);
void spanprof__res_exit(const struct spanprof_site *site, uintptr_t cfa);
struct spanprof__res_thread *spanprof__res_thread_get(struct spanprof__thread *t);
/* Thread churn: per-node merge (registered with spanprof__node_ext_add), and GROUP's share of
 * T's per-thread data (allocation samples, moved to GROUP's nodes); returns non-zero when some
 * node of T still owns live blocks (their owner tokens point into T's arena). */
void spanprof__res_node_merge(void *dst, const void *src);
/* Node RN's live blocks and bytes, with those of the retired nodes chained to it. */
void spanprof__res_live(const struct spanprof__res_node *rn, int64_t *blocks, int64_t *bytes);
int spanprof__res_thread_merge(struct spanprof__thread *group, struct spanprof__thread *t);

/* Linux's clock id for thread TID's CPU time (CPUCLOCK_SCHED | CPUCLOCK_PERTHREAD_MASK, as glibc's
 * pthread_getcpuclockid builds it): any thread of the process may read it. */
static inline int spanprof__thread_cpu_clock(pid_t tid)
{
    return (int)(~(unsigned)tid << 3) | 6;
}

/* Reads /proc/self/task/TID/stat into BUF (SIZE bytes) and returns its state field (field 3:
 * 'R' running or runnable, 'S' asleep in a system call...), past the name, which may hold
 * anything; NULL when it cannot be read (the thread is gone).  Three system calls, about 4 µs
 * (sample_data.c). */
const char *spanprof__task_stat(pid_t tid, char *buf, size_t size);

/* ---- sample_data.c: SPANPROF=sample's figures per node and per thread ---- */
/* Behind each node (after struct spanprof__res_node when that is there too). */
struct spanprof__sample_node {
    /* Self, written by the sampler only (relaxed atomic adds), read by the writers.  A sample is
     * timely when the sampler ran within an eighth of a period of its tick, late otherwise
     * (sample_data.c says why the two are kept apart); *_late_ns count only where a thread has
     * no timely sample at all. */
    uint64_t wall_timely_ns, wall_late_ns; /* the stretches charged here, the thread ran in */
    uint64_t wall_still_ns;                /* those it never ran in: exact, never scaled */
    uint64_t cpu_timely_ns, cpu_late_ns;   /* those that found the thread on a CPU */
    uint64_t samples;
    /* Kept by the writes, under the process lock (spanprof__sample_sums): the stretches already
     * turned into times, and those times. */
    uint64_t wall_timely_at, wall_late_at, wall_still_at, cpu_timely_at, cpu_late_at;
    double wall_settled, cpu_settled;
    /* Computed by a write, under the process lock (spanprof__sample_sums): */
    uint64_t wall_ns, cpu_ns;                   /* self wall and CPU time */
    uint64_t wall_incl, cpu_incl, samples_incl; /* the node's subtree */
};
/* The sampler's state for one thread (reached through spanprof__thread.sample; sampler only). */
struct spanprof__sample_thread {
    uint64_t last_wall_ns, last_cpu_ns; /* at its previous sample */
    uint64_t cpu_used_ns;                /* CPU time it used since sampling began */
    uint64_t wall_timely_ns, wall_late_ns; /* the sums of its nodes' (and root's) stretches */
    uint64_t cpu_timely_ns, cpu_late_ns;
    uint64_t wall_before_ns, cpu_before_ns; /* the main thread: before its first span */
    /* The sums above as of the last write (spanprof__sample_sums), under the process lock. */
    uint64_t cpu_used_at, wall_timely_at, wall_late_at, cpu_timely_at, cpu_late_at;
    int cpu_clock;                       /* the thread's CPU-time clock (a clockid_t) */
    struct spanprof__sample_node root;   /* samples outside every span */
};
/* Offset of struct spanprof__sample_node in the data behind a node. */
extern size_t spanprof__sample_ext_offset;
static inline struct spanprof__sample_node *spanprof__sample_of(const struct spanprof__node *n)
{
    return (struct spanprof__sample_node *)((char *)(n + 1) + spanprof__sample_ext_offset);
}
/* At start-up: registers the per-node data (nodeext.c) and sets spanprof__sample_ext_offset. */
void spanprof__sample_layout(void);
/* A thread got its data (its own thread, before registration): the sampler's state. */
void spanprof__sample_thread_new(struct spanprof__thread *t);
/* In a fork child: T's figures back to zero, its clocks read anew. */
void spanprof__sample_fork_child(struct spanprof__thread *t);
/* Fills every node's cpu_ns and *_incl figures of T from the self ones (under the process
 * lock). */
void spanprof__sample_sums(struct spanprof__thread *t);
/* Adds the self figures of SRC into DST: this collector's bytes behind two nodes of one stack,
 * when an ended thread's node is merged into its group's (a spanprof__node_merge_fn). */
void spanprof__sample_node_merge(void *dst_ext, const void *src_ext);
/* Adds SRC's samples outside every span into DST's (threads merged into one; nothing when
 * either has no sampler state). */
void spanprof__sample_thread_merge(struct spanprof__thread *dst, const struct spanprof__thread *src);
/* One sample of every live registered thread (takes the process lock); TIMELY: the sampler runs
 * within an eighth of a period of the tick it was due at. */
void spanprof__sample_pass(int timely);

/* ---- sampler.c: the sampler thread ---- */
/* Starts it, and restarts it in every fork child; 0 when it could not be created (after a
 * warning).  At start-up, once. */
int spanprof__sampler_setup(void);
/* Starts it if it is not running (after spanprof__sampler_stop); 0 when it could not be. */
int spanprof__sampler_start(void);
/* Stops it and waits for it to end; nothing when it is not running.  Before the process-exit
 * write (so that write is consistent) and before the runtime is unloaded. */
void spanprof__sampler_stop(void);
/* The sampler thread's CPU time so far, as it last published it (only while a cost budget is
 * on; 0 otherwise, and in a fork child until its thread's first pass). */
uint64_t spanprof__sampler_cpu_ns(void);
/* ---- trace_ring.c ---- */
/* Objects going away: the rings' site pointers into them turned to copies (record/siteretire.c).
 * With the process lock held. */
struct spanprof__retire;
void spanprof__trace_retire_sites(struct spanprof__retire *r);

/* ---- cputime.c ---- */
/* The calling thread's CPU time in ns (0 when it cannot be read); errno kept. */
uint64_t spanprof__cputime_ns(void);
/* Thread TID's CPU time in ns, read by any thread of the process; UINT64_MAX when it is gone. */
uint64_t spanprof__thread_cpu_ns(pid_t tid);

/* ---- allocstats.c ---- */
/* Hands the allocation callbacks to libspanprof-alloc.so; 0 (with a warning) when it is not
 * loaded. */
int spanprof__alloc_attach(int stacks, uint64_t sample_mean);

/* ---- allocsamples.c ---- */
struct spanprof__alloc_sample {
    struct spanprof__alloc_sample *next;
    struct spanprof__node *node; /* the innermost span when it was taken */
    double weight;               /* estimated bytes it stands for */
    size_t n;
    const char *names[];         /* native frames, outermost first */
};
void spanprof__alloc_sample_add(void *span, const char *const *names, size_t n, double weight);

/* ---- histogram.c ---- */
/* Smallest value and width (ticks) of bucket I. */
void spanprof__hist_bucket(unsigned i, uint64_t *low, uint64_t *width);
/* Adds SRC's counts and maximum into DST (at write time; racy reads of a running thread are
 * benign). */
void spanprof__hist_merge(struct spanprof__hist *dst, const struct spanprof__hist *src);
/* The Q-quantile (0 < Q <= 1) in ticks: the midpoint of the bucket holding the ceil(Q*N)-th
 * smallest value, never above the maximum; 0 when empty. */
uint64_t spanprof__hist_quantile(const struct spanprof__hist *h, double q);
/* Thread churn: adds each of T's histograms into GROUP's for the same site (under the lock). */
void spanprof__hist_merge_thread(struct spanprof__thread *group, const struct spanprof__thread *t);

#pragma GCC visibility pop

#endif /* SPANPROF_COLLECT_H */
