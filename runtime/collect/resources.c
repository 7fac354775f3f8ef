/* resources.c — CPU time and peak live bytes per span: the per-frame work at enter and exit of a
 * site in state SLOW (called from slowpath.c), and the per-thread array it keeps them in.
 *
 * The FAST path is unchanged, so a program that does not ask for them pays nothing.  Frames
 * popped by repair (longjmp, noreturn) get no CPU time or peak.
 */
#include <string.h>

#include "collect/collect.h"
#include "record/clock.h"

/* Reallocates RT's frame array to T's capacity (or creates RT): under the re-entry guard, so a
 * signal handler's spans that land meanwhile are not measured rather than resizing it again. */
static struct spanprof__res_thread *res_thread_grow(struct spanprof__thread *t,
                                                    struct spanprof__res_thread *rt)
{
    /* mmap, never malloc: the allocator hooks call into this file. */
    if (!rt) {
        rt = spanprof__map(sizeof *rt);
        if (!rt)
            return NULL;
    }
    struct spanprof__res_frame *nf = spanprof__map(t->capacity * sizeof *nf);
    if (!nf)
        return rt->frames ? rt : NULL;
    if (rt->frames) {
        memcpy(nf, rt->frames, rt->capacity * sizeof *nf);
        spanprof__unmap(rt->frames, rt->capacity * sizeof *nf);
    }
    rt->frames = nf;
    rt->capacity = t->capacity;
    t->res = rt;
    return rt;
}

struct spanprof__res_thread *spanprof__res_thread_get(struct spanprof__thread *t)
{
    struct spanprof__res_thread *rt = t->res;
    if (rt && rt->capacity >= t->capacity)
        return rt;
    /* First use, or the shadow stack grew. */
    struct spanprof__guard guard = spanprof__guard_enter();
    rt = res_thread_grow(t, rt);
    spanprof__guard_leave(guard);
    return rt;
}

/* Right after record_enter pushed SITE's frame (if it did). */
void spanprof__res_enter(const struct spanprof_site *site)
{
    if (spanprof__busy(0))
        return;
    struct spanprof__thread *t = spanprof__tls;
    struct spanprof__frame *f = t->top;
    if (t == &spanprof__sentinel_thread || t->park_depth || f == t->frames || f->node->site != site)
        return;
    struct spanprof__res_thread *rt = spanprof__res_thread_get(t);
    size_t d = (size_t)(f - t->frames);
    if (!rt || d >= rt->capacity)
        return;
    struct spanprof__res_frame *rf = &rt->frames[d];
    rf->net_enter = rf->net_max = rt->net;
    if (spanprof__collect.cpu) {
        rf->cpu_ns = spanprof__cputime_ns();
        /* Restart the wall clock so the span's time excludes the clock read above. */
        f->start = spanprof__clock_now();
    }
}

/* Right before record_exit pops SITE's frame: only a frame that matches exactly is measured. */
void spanprof__res_exit(const struct spanprof_site *site, uintptr_t cfa)
{
    if (spanprof__busy(cfa))
        return;
    struct spanprof__thread *t = spanprof__tls;
    struct spanprof__frame *f = t->top;
    if (t == &spanprof__sentinel_thread || t->park_depth || f == t->frames ||
        f->node->site != site || f->cfa != cfa)
        return;
    struct spanprof__res_thread *rt = t->res;
    size_t d = (size_t)(f - t->frames);
    if (!rt || d >= rt->capacity)
        return;
    struct spanprof__res_frame *rf = &rt->frames[d];
    struct spanprof__res_node *rn = spanprof__res_of(f->node);
    if (spanprof__collect.cpu) {
        uint64_t cpu = spanprof__cputime_ns();
        /* A signal-atomic add, read by the writers while this thread runs (counter.h). */
        spanprof__count_add(&rn->cpu_ns, cpu > rf->cpu_ns ? cpu - rf->cpu_ns : 0);
    }
    uint64_t peak = (uint64_t)(rf->net_max - rf->net_enter);
    spanprof__count_max(&rn->peak_bytes, peak);
    if (rf->net_max > rf[-1].net_max) /* the parent's activation saw this high-water mark too */
        rf[-1].net_max = rf->net_max;
}

/* Thread churn (merge.c): the figures of a retired node add to its group's node.  Live blocks
 * cannot be moved: they name the retired node as their owner and their frees will go on
 * coming to it, so a retired node that still owns some is chained to the group's node (and its
 * thread's arena is kept, see spanprof__res_thread_merge); readers add the chain's figures. */
void spanprof__res_node_merge(void *dst, const void *src)
{
    struct spanprof__res_node *d = dst;
    struct spanprof__res_node *s = (struct spanprof__res_node *)src;
    __atomic_add_fetch(&d->cpu_ns, s->cpu_ns, __ATOMIC_RELAXED);
    __atomic_add_fetch(&d->allocs, s->allocs, __ATOMIC_RELAXED);
    __atomic_add_fetch(&d->alloc_bytes, s->alloc_bytes, __ATOMIC_RELAXED);
    __atomic_add_fetch(&d->frees, s->frees, __ATOMIC_RELAXED);
    __atomic_add_fetch(&d->free_bytes, s->free_bytes, __ATOMIC_RELAXED);
    spanprof__count_max(&d->peak_bytes, s->peak_bytes);
    if (__atomic_load_n(&s->live_blocks, __ATOMIC_RELAXED)) {
        s->retired_live = d->retired_live;
        __atomic_store_n(&d->retired_live, s, __ATOMIC_RELEASE);
    }
}

void spanprof__res_live(const struct spanprof__res_node *rn, int64_t *blocks, int64_t *bytes)
{
    *blocks = __atomic_load_n(&rn->live_blocks, __ATOMIC_RELAXED);
    *bytes = __atomic_load_n(&rn->live_bytes, __ATOMIC_RELAXED);
    for (const struct spanprof__res_node *r = __atomic_load_n(&rn->retired_live, __ATOMIC_ACQUIRE);
         r; r = __atomic_load_n(&r->retired_live, __ATOMIC_ACQUIRE)) {
        *blocks += __atomic_load_n(&r->live_blocks, __ATOMIC_RELAXED);
        *bytes += __atomic_load_n(&r->live_bytes, __ATOMIC_RELAXED);
    }
}

static int live_pre(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)depth;
    if (__atomic_load_n(&spanprof__res_of(n)->live_blocks, __ATOMIC_RELAXED))
        *(int *)ctx = 1;
    return !*(int *)ctx;
}

int spanprof__res_thread_merge(struct spanprof__thread *group, struct spanprof__thread *t)
{
    struct spanprof__res_thread *rt = t->res;
    if (rt && rt->samples) {
        struct spanprof__res_thread *gt = group->res;
        if (!gt) /* no frames: a group runs no spans */
            gt = group->res = spanprof__map(sizeof *gt);
        /* Each sample is copied to the group's arena, naming the group's node (oldest last, so
         * the list keeps its order reversed as a thread's does: newest first). */
        for (struct spanprof__alloc_sample *s = rt->samples; gt && s; s = s->next) {
            struct spanprof__node *n = s->node->hint;
            size_t size = sizeof *s + s->n * sizeof s->names[0];
            struct spanprof__alloc_sample *c = n ? spanprof__arena_alloc(&group->arena, size) : NULL;
            if (!c)
                continue;
            memcpy(c, s, size);
            c->node = n;
            c->next = gt->samples;
            __atomic_store_n(&gt->samples, c, __ATOMIC_RELEASE);
        }
    }
    /* Blocks still allocated name T's nodes as their owner: those must stay (chained to the
     * group's nodes by spanprof__res_node_merge). */
    int live = 0;
    if (spanprof__collect.alloc)
        spanprof__tree_walk(&t->root, live_pre, NULL, &live);
    return live;
}
