/* resources.c — the resource profile's runtime side: start-up (which per-node data exists), the
 * per-span enter/exit work for CPU time and peak live bytes, fork reset, and the per-site totals
 * added to the JSON profile.
 *
 * CPU time and allocation tracking make every site take the RES state (see span.c): its calls go
 * through enter_slow/exit_slow, which run the usual record_enter/record_exit plus
 * spanprof__res_enter/spanprof__res_exit.  The FAST path is unchanged, so a program that does not
 * ask for them pays nothing.  Histograms are the exception: cheap enough for the exit fast path.
 *
 * Totals per site follow the rules of total_ns: inclusive values (CPU time, *_incl allocation
 * counters) count only the outermost activation of a site on a stack, so recursion is not counted
 * twice; self values and live bytes add up over all nodes; peak_live_bytes is the largest over
 * all activations.  Frames popped by repair (longjmp, noreturn) get no CPU time or peak.
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "record/clock.h"
#include "collect/histogram.h"
#include "collect/resources.h"

struct spanprof__res_config spanprof__res_cfg;
size_t spanprof__node_ext_size;
size_t spanprof__res_offset;
int spanprof__res_slow;

void spanprof__res_init(void)
{
    spanprof__res_config_load(&spanprof__res_cfg, (spanprof__getenv_fn)getenv, stderr);
    if (!spanprof__g.config.enabled)
        return;
    struct spanprof__res_config *c = &spanprof__res_cfg;
    if (c->alloc_stacks && !c->alloc) {
        fprintf(stderr, "spanprof: warning: SPANPROF_ALLOC_STACKS=1 needs SPANPROF_ALLOC=1; "
                        "no allocation stacks\n");
        c->alloc_stacks = 0;
    }
    if (c->alloc)
        spanprof__alloc_attach(); /* clears c->alloc when the interposer is not loaded */
    size_t ext = 0;
    if (c->hist) /* per (thread, site), not per node: see histogram.h */
        spanprof__hist_on = 1;
    if (c->cpu || c->alloc) {
        spanprof__res_offset = sizeof(struct spanprof__node) + ext;
        ext += sizeof(struct spanprof__res_node);
        spanprof__res_slow = 1;
    }
    spanprof__node_ext_size = ext;
}

struct spanprof__res_thread *spanprof__res_thread_get(struct spanprof__thread *t)
{
    struct spanprof__res_thread *rt = t->res;
    if (rt && rt->capacity >= t->capacity)
        return rt;
    /* First use, or the shadow stack grew: (re)allocate the parallel array (mmap, never malloc:
     * the allocator hooks call into this file). */
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

/* Right after record_enter pushed SITE's frame (if it did). */
void spanprof__res_enter(const struct spanprof_site *site)
{
    if (spanprof__tls_busy)
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
    if (spanprof__res_cfg.cpu) {
        spanprof__cputime(&rf->cpu_user_ns, &rf->cpu_sys_ns);
        /* Restart the wall clock so the span's time excludes the getrusage above. */
        f->start = spanprof__clock_now();
    }
}

/* Right before record_exit pops SITE's frame: only a frame that matches exactly is measured. */
void spanprof__res_exit(const struct spanprof_site *site, uintptr_t cfa)
{
    if (spanprof__tls_busy)
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
    if (spanprof__res_cfg.cpu) {
        uint64_t u, s;
        spanprof__cputime(&u, &s);
        rn->cpu_user_ns += u > rf->cpu_user_ns ? u - rf->cpu_user_ns : 0;
        rn->cpu_sys_ns += s > rf->cpu_sys_ns ? s - rf->cpu_sys_ns : 0;
    }
    uint64_t peak = (uint64_t)(rf->net_max - rf->net_enter);
    if (peak > rn->peak_bytes)
        rn->peak_bytes = peak;
    if (rf->net_max > rf[-1].net_max) /* the parent's activation saw this high-water mark too */
        rf[-1].net_max = rf->net_max;
}

void spanprof__res_node_reset(struct spanprof__node *n)
{
    if (spanprof__node_ext_size)
        memset(n + 1, 0, spanprof__node_ext_size);
}

/* ---- per-site totals at write time ---- */

struct counts {
    uint64_t allocs, alloc_bytes, frees, free_bytes;
};

struct res_site {
    const struct spanprof_site *site;
    struct spanprof__hist *hist;
    uint64_t cpu_user_ns, cpu_sys_ns, peak;
    int64_t live_blocks, live_bytes;
    struct counts self, incl;
    uint64_t active; /* walk state */
};

struct spanprof__res_sites {
    struct res_site *v; /* open addressing on the site pointer */
    size_t cap, n;
    struct counts *acc; /* per-depth subtree sums during the walk */
    size_t acc_cap;
    int oom;
};

static size_t slot(const struct spanprof__res_sites *r, const struct spanprof_site *site)
{
    size_t h = ((uintptr_t)site >> 4) * 0x9e3779b97f4a7c15u;
    size_t i = h & (r->cap - 1);
    while (r->v[i].site && r->v[i].site != site)
        i = (i + 1) & (r->cap - 1);
    return i;
}

static struct res_site *lookup(struct spanprof__res_sites *r, const struct spanprof_site *site)
{
    if (2 * (r->n + 1) > r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        struct res_site *old = r->v;
        size_t oldcap = r->cap;
        r->v = calloc(cap, sizeof *r->v);
        if (!r->v) {
            r->v = old;
            r->oom = 1;
            return NULL;
        }
        r->cap = cap;
        for (size_t i = 0; i < oldcap; i++)
            if (old[i].site)
                r->v[slot(r, old[i].site)] = old[i];
        free(old);
    }
    size_t i = slot(r, site);
    if (!r->v[i].site) {
        r->v[i].site = site;
        r->n++;
        if (spanprof__hist_on && !(r->v[i].hist = calloc(1, sizeof *r->v[i].hist)))
            r->oom = 1;
    }
    return &r->v[i];
}

static void add(struct counts *a, const struct counts *b)
{
    a->allocs += b->allocs;
    a->alloc_bytes += b->alloc_bytes;
    a->frees += b->frees;
    a->free_bytes += b->free_bytes;
}

static void node_self(struct spanprof__node *n, struct counts *c)
{
    struct spanprof__res_node *rn = spanprof__res_of(n);
    c->allocs = __atomic_load_n(&rn->allocs, __ATOMIC_RELAXED);
    c->alloc_bytes = __atomic_load_n(&rn->alloc_bytes, __ATOMIC_RELAXED);
    c->frees = __atomic_load_n(&rn->frees, __ATOMIC_RELAXED);
    c->free_bytes = __atomic_load_n(&rn->free_bytes, __ATOMIC_RELAXED);
}

static int collect_pre(struct spanprof__node *n, size_t depth, void *ctx)
{
    struct spanprof__res_sites *r = ctx;
    struct res_site *s = lookup(r, n->site);
    if (!s)
        return 0;
    if (depth >= r->acc_cap) {
        size_t cap = r->acc_cap ? 2 * r->acc_cap : 64;
        struct counts *a = realloc(r->acc, cap * sizeof *a);
        if (!a) {
            r->oom = 1;
            return 0;
        }
        r->acc = a;
        r->acc_cap = cap;
    }
    memset(&r->acc[depth], 0, sizeof r->acc[depth]);
    if (spanprof__res_slow) {
        struct spanprof__res_node *rn = spanprof__res_of(n);
        struct counts c;
        node_self(n, &c);
        add(&s->self, &c);
        s->live_blocks += __atomic_load_n(&rn->live_blocks, __ATOMIC_RELAXED);
        s->live_bytes += __atomic_load_n(&rn->live_bytes, __ATOMIC_RELAXED);
        uint64_t peak = __atomic_load_n(&rn->peak_bytes, __ATOMIC_RELAXED);
        if (peak > s->peak)
            s->peak = peak;
        if (s->active == 0) {
            s->cpu_user_ns += __atomic_load_n(&rn->cpu_user_ns, __ATOMIC_RELAXED);
            s->cpu_sys_ns += __atomic_load_n(&rn->cpu_sys_ns, __ATOMIC_RELAXED);
        }
    }
    s->active++;
    return 1;
}

static void collect_post(struct spanprof__node *n, size_t depth, void *ctx)
{
    struct spanprof__res_sites *r = ctx;
    struct res_site *s = lookup(r, n->site);
    if (!s || depth >= r->acc_cap)
        return;
    s->active--;
    if (!spanprof__res_slow)
        return;
    struct counts sub = r->acc[depth], self;
    node_self(n, &self);
    add(&sub, &self);
    if (s->active == 0)
        add(&s->incl, &sub);
    add(&r->acc[depth - 1], &sub);
}

/* Adds each of T's histograms into its site's (a running thread's table is read racily: entries
 * and tables are published with release stores and never freed). */
static void collect_hists(struct spanprof__res_sites *r, const struct spanprof__thread *t)
{
    const struct spanprof__hist_table *tab = __atomic_load_n(&t->hists, __ATOMIC_ACQUIRE);
    for (size_t i = 0; tab && i < tab->cap && !r->oom; i++) {
        const struct spanprof__hist *h = __atomic_load_n(&tab->v[i], __ATOMIC_ACQUIRE);
        struct res_site *s = h ? lookup(r, h->site) : NULL;
        if (s && s->hist)
            spanprof__hist_merge(s->hist, h);
    }
}

struct spanprof__res_sites *spanprof__res_collect(const struct spanprof__view *v)
{
    if (!spanprof__hist_on && !spanprof__res_slow)
        return NULL;
    struct spanprof__res_sites *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    for (size_t i = 0; i < v->nthreads && !r->oom; i++) {
        /* The tree walk is only for the per-node counters; histograms are per thread already. */
        if (spanprof__res_slow)
            spanprof__tree_walk(&v->threads[i]->root, collect_pre, collect_post, r);
        if (spanprof__hist_on)
            collect_hists(r, v->threads[i]);
    }
    if (r->oom) {
        fprintf(stderr, "spanprof: error: out of memory writing the resource profile\n");
        spanprof__res_free(r);
        return NULL;
    }
    return r;
}

static void put(struct json_object *js, const char *key, uint64_t v)
{
    json_object_object_add(js, key, json_object_new_int64(v > INT64_MAX ? INT64_MAX : (int64_t)v));
}

void spanprof__res_json(const struct spanprof__res_sites *r, const struct spanprof_site *site,
                        struct json_object *js, const struct spanprof__view *v)
{
    if (!r || !r->cap)
        return;
    const struct res_site *s = &r->v[slot(r, site)];
    if (s->site != site)
        return;
    if (s->hist) {
        put(js, "p50_ns", spanprof__ticks_to_ns(v, spanprof__hist_quantile(s->hist, 0.50)));
        put(js, "p90_ns", spanprof__ticks_to_ns(v, spanprof__hist_quantile(s->hist, 0.90)));
        put(js, "p99_ns", spanprof__ticks_to_ns(v, spanprof__hist_quantile(s->hist, 0.99)));
        put(js, "max_ns", spanprof__ticks_to_ns(v, s->hist->max));
    }
    if (spanprof__res_cfg.cpu) {
        put(js, "cpu_user_ns", s->cpu_user_ns);
        put(js, "cpu_system_ns", s->cpu_sys_ns);
    }
    if (spanprof__res_cfg.alloc) {
        put(js, "allocs", s->self.allocs);
        put(js, "alloc_bytes", s->self.alloc_bytes);
        put(js, "frees", s->self.frees);
        put(js, "free_bytes", s->self.free_bytes);
        put(js, "allocs_incl", s->incl.allocs);
        put(js, "alloc_bytes_incl", s->incl.alloc_bytes);
        put(js, "frees_incl", s->incl.frees);
        put(js, "free_bytes_incl", s->incl.free_bytes);
        put(js, "live_blocks", s->live_blocks > 0 ? (uint64_t)s->live_blocks : 0);
        put(js, "live_bytes", s->live_bytes > 0 ? (uint64_t)s->live_bytes : 0);
        put(js, "peak_live_bytes", s->peak);
    }
}

void spanprof__res_free(struct spanprof__res_sites *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->cap; i++)
        free(r->v[i].hist);
    free(r->v);
    free(r->acc);
    free(r);
}
