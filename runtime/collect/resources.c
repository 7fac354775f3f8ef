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
        spanprof__cputime(&rf->cpu_user_ns, &rf->cpu_sys_ns);
        /* Restart the wall clock so the span's time excludes the getrusage above. */
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
        uint64_t u, s;
        spanprof__cputime(&u, &s);
        /* Signal-atomic adds, read by the writers while this thread runs (counter.h). */
        spanprof__count_add(&rn->cpu_user_ns, u > rf->cpu_user_ns ? u - rf->cpu_user_ns : 0);
        spanprof__count_add(&rn->cpu_sys_ns, s > rf->cpu_sys_ns ? s - rf->cpu_sys_ns : 0);
    }
    uint64_t peak = (uint64_t)(rf->net_max - rf->net_enter);
    spanprof__count_max(&rn->peak_bytes, peak);
    if (rf->net_max > rf[-1].net_max) /* the parent's activation saw this high-water mark too */
        rf[-1].net_max = rf->net_max;
}
