/* collect.h — the collectors: optional data gathered alongside recording (never installed).
 *
 *  - latency histograms per (thread, site): recorded by the exit fast path (record/histogram.h),
 *    read here (histogram.c);
 *  - CPU time and peak live bytes per span (resources.c, cputime.c), allocation counts and
 *    sampled allocation stacks (allocstats.c, allocsamples.c, fed by libspanprof-alloc.so);
 *  - the per-thread trace ring (trace_ring.h, trace_ring.c);
 *  - coz's counters, bumped per call (slowpath.c).
 * collectors.c switches them on at start-up and hooks them into recording (spanprof__hooks):
 * the recording layer never names them.
 *
 * Per-node data: when CPU or allocation tracking is on, every call-tree node is allocated with
 * struct spanprof__res_node right behind it (spanprof__flags.node_ext more bytes).  Per-frame data
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
/* Which collectors run, decided at start-up (config/start.c) and fixed afterwards. */
struct spanprof__collect_settings {
    int histogram;         /* SPANPROF_HISTOGRAM */
    int cpu;               /* SPANPROF_CPU */
    int alloc;             /* SPANPROF_ALLOC (cleared when the interposer is not loaded) */
    int alloc_stacks;      /* SPANPROF_ALLOC_STACKS */
    uint64_t alloc_sample; /* SPANPROF_ALLOC_SAMPLE, bytes */
    size_t trace_buffer;   /* SPANPROF_TRACE ring bytes per thread, 0: no tracing */
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
    uint64_t cpu_user_ns, cpu_sys_ns;  /* inclusive, completed activations (owning thread) */
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
    uint64_t cpu_user_ns, cpu_sys_ns; /* thread CPU time at entry */
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

/* ---- cputime.c ---- */
void spanprof__cputime(uint64_t *user_ns, uint64_t *sys_ns);

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
