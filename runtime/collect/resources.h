/* resources.h — declarations for the resource profile: latency histograms, CPU time and
 * allocations per span (histogram.c, cputime.c, resources.c, resenv.c, allocstats.c,
 * allocfolded.c).  Never installed.
 *
 * Per-node data: when CPU or allocation tracking is on, every call-tree node is allocated with
 * struct spanprof__res_node right behind it (calltree.c asks for spanprof__node_ext_size more
 * bytes).  Latency histograms are not per node but per (thread, site): see histogram.h.
 * Per-frame data for CPU time and peak live bytes lives in a per-thread array parallel to the
 * shadow stack (struct spanprof__res_thread, reached through spanprof__thread.res).
 */
#ifndef SPANPROF_RESOURCES_H
#define SPANPROF_RESOURCES_H

#include <stdint.h>
#include <stdio.h>

#include "record/internal.h"

#pragma GCC visibility push(hidden)

/* ---- resenv.c ---- */
struct spanprof__res_config {
    int hist;               /* SPANPROF_HISTOGRAM */
    int cpu;                /* SPANPROF_CPU */
    int alloc;              /* SPANPROF_ALLOC */
    int alloc_stacks;       /* SPANPROF_ALLOC_STACKS */
    uint64_t alloc_sample;  /* SPANPROF_ALLOC_SAMPLE, bytes */
    const char *alloc_folded; /* SPANPROF_ALLOC_FOLDED pattern */
};
#define SPANPROF_HISTOGRAM_DEFAULT 0 /* +8-10 ns per span over exact timing: opt-in */
#define SPANPROF_ALLOC_SAMPLE_DEFAULT ((uint64_t)512 * 1024)
#define SPANPROF_ALLOC_FOLDED_DEFAULT "spanprof.alloc.folded"
void spanprof__res_config_load(struct spanprof__res_config *c, spanprof__getenv_fn get, FILE *err);

/* ---- resources.c ---- */
struct spanprof__res_node {
    uint64_t cpu_user_ns, cpu_sys_ns;  /* inclusive, completed activations (owning thread) */
    uint64_t allocs, alloc_bytes;      /* self: made while this node was the innermost span */
    uint64_t frees, free_bytes;        /* self: freed while this node was the innermost span */
    int64_t live_blocks, live_bytes;   /* allocated here, not freed yet (atomic: any thread frees) */
    uint64_t peak_bytes;               /* highest net growth of the heap during one activation */
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
    struct spanprof__alloc_sample *samples; /* newest first (allocfolded.c) */
};

extern struct spanprof__res_config spanprof__res_cfg;
extern size_t spanprof__node_ext_size; /* bytes behind each node */
extern size_t spanprof__res_offset;    /* where struct spanprof__res_node sits behind a node */
extern int spanprof__res_slow;         /* CPU or allocations: sites take the RES state */

static inline struct spanprof__res_node *spanprof__res_of(struct spanprof__node *n)
{
    return (struct spanprof__res_node *)((char *)n + spanprof__res_offset);
}

void spanprof__res_init(void);
void spanprof__res_enter(const struct spanprof_site *site);
void spanprof__res_exit(const struct spanprof_site *site, uintptr_t cfa);
void spanprof__res_node_reset(struct spanprof__node *n);
struct spanprof__res_thread *spanprof__res_thread_get(struct spanprof__thread *t);
/* Per-site resource numbers over all threads of V, added to each span's JSON object. */
struct spanprof__res_sites;
struct spanprof__res_sites *spanprof__res_collect(const struct spanprof__view *v);
void spanprof__res_json(const struct spanprof__res_sites *r, const struct spanprof_site *site,
                        struct json_object *js, const struct spanprof__view *v);
void spanprof__res_free(struct spanprof__res_sites *r);

/* ---- cputime.c ---- */
void spanprof__cputime(uint64_t *user_ns, uint64_t *sys_ns);

/* ---- allocstats.c ---- */
void spanprof__alloc_attach(void);

/* ---- allocfolded.c ---- */
void spanprof__alloc_sample_add(void *span, const char *const *names, size_t n, double weight);
int spanprof__alloc_folded_write(FILE *f, const struct spanprof__view *v);
int spanprof__alloc_folded_write_all(const struct spanprof__view *v);

#pragma GCC visibility pop

#endif /* SPANPROF_RESOURCES_H */
