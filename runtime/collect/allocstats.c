/* allocstats.c — the runtime's side of allocation tracking: the callbacks libspanprof-alloc.so
 * calls on every malloc-family call, and the start-up handshake with it.
 *
 * They run inside the program's allocations, so: no locks, no allocation, errno untouched.  Only
 * the calling thread's own counters are written, except live bytes, which the freeing thread
 * (any thread) takes off the allocating node with an atomic add.  Allocations made by the runtime
 * itself (spanprof__tls_busy set, e.g. json-c while writing the profile) are not counted.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

#include "collect/alloc_hooks.h"
#include "collect/collect.h"

/* The innermost recording span of this thread, or NULL. */
static struct spanprof__frame *top_span(struct spanprof__thread *t)
{
    if (spanprof__busy(0) || t == &spanprof__sentinel_thread || t->park_depth ||
        t->top == t->frames)
        return NULL;
    return t->top;
}

static void *on_alloc(size_t size)
{
    struct spanprof__thread *t = spanprof__tls;
    struct spanprof__frame *f = top_span(t);
    struct spanprof__res_thread *rt = t->res;
    if (!f || !rt)
        return NULL;
    size_t d = (size_t)(f - t->frames);
    struct spanprof__res_node *rn = spanprof__res_of(f->node);
    spanprof__count_add(&rn->allocs, 1); /* read by the writers meanwhile (counter.h) */
    spanprof__count_add(&rn->alloc_bytes, size);
    __atomic_add_fetch(&rn->live_blocks, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&rn->live_bytes, (int64_t)size, __ATOMIC_RELAXED);
    rt->net += (int64_t)size;
    if (d < rt->capacity && rt->net > rt->frames[d].net_max)
        rt->frames[d].net_max = rt->net;
    return rn;
}

static void on_free(void *owner, size_t size)
{
    if (owner) { /* the block leaves its allocating span's live set, whoever frees it */
        struct spanprof__res_node *o = owner;
        __atomic_sub_fetch(&o->live_blocks, 1, __ATOMIC_RELAXED);
        __atomic_sub_fetch(&o->live_bytes, (int64_t)size, __ATOMIC_RELAXED);
    }
    struct spanprof__thread *t = spanprof__tls;
    struct spanprof__frame *f = top_span(t);
    struct spanprof__res_thread *rt = t->res;
    if (!f || !rt)
        return;
    struct spanprof__res_node *rn = spanprof__res_of(f->node);
    spanprof__count_add(&rn->frees, 1);
    spanprof__count_add(&rn->free_bytes, size);
    rt->net -= (int64_t)size;
}

static void *sample_span(uintptr_t *cfa)
{
    struct spanprof__frame *f = top_span(spanprof__tls);
    if (!f)
        return NULL;
    *cfa = f->cfa;
    return f->node;
}

static const struct spanprof_alloc_hooks hooks = {
    .version = SPANPROF_ALLOC_HOOKS_VERSION,
    .on_alloc = on_alloc,
    .on_free = on_free,
    .sample_span = sample_span,
    .sample_add = spanprof__alloc_sample_add,
};

/* At start-up, with SPANPROF_ALLOC=1: hand the callbacks to the interposer if it is loaded. */
int spanprof__alloc_attach(int stacks, uint64_t sample_mean)
{
    spanprof_alloc_attach_fn attach =
        (spanprof_alloc_attach_fn)dlsym(RTLD_DEFAULT, SPANPROF_ALLOC_ATTACH_SYMBOL);
    if (attach && attach(&hooks, stacks, sample_mean))
        return 1;
    fprintf(stderr, "spanprof: warning: SPANPROF_ALLOC=1 but libspanprof-alloc.so is not "
                    "loaded; run with LD_PRELOAD=libspanprof-alloc.so to count allocations\n");
    return 0;
}
