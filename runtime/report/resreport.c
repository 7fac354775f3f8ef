/* resreport.c — the collectors' numbers per site, added to each span of the JSON profile:
 * latency percentiles (SPANPROF_HISTOGRAM), CPU time (SPANPROF_CPU: cpu_ns inclusive,
 * cpu_self_ns), allocation counts and peak live bytes (SPANPROF_ALLOC).
 *
 * Totals per site follow the rules of total_ns: inclusive values (CPU time, *_incl allocation
 * counters) count only the outermost activation of a site on a stack, so recursion is not counted
 * twice; self values and live bytes add up over all nodes; peak_live_bytes is the largest over
 * all activations.  A site of an unloaded library and the same site loaded again count as one.
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "collect/collect.h"
#include "report/report.h"

struct counts {
    uint64_t allocs, alloc_bytes, frees, free_bytes;
};

struct res_site {
    const struct spanprof_site *site;
    struct spanprof__hist *hist;
    uint64_t cpu_ns, cpu_self_ns, peak;
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
        if (spanprof__collect.histogram && !(r->v[i].hist = calloc(1, sizeof *r->v[i].hist)))
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
    if (spanprof__res_on()) {
        struct spanprof__res_node *rn = spanprof__res_of(n);
        struct counts c;
        node_self(n, &c);
        add(&s->self, &c);
        int64_t blocks, bytes;
        spanprof__res_live(rn, &blocks, &bytes); /* a retired group's too (collect.h) */
        s->live_blocks += blocks;
        s->live_bytes += bytes;
        uint64_t peak = __atomic_load_n(&rn->peak_bytes, __ATOMIC_RELAXED);
        if (peak > s->peak)
            s->peak = peak;
        if (s->active == 0) {
            s->cpu_ns += __atomic_load_n(&rn->cpu_ns, __ATOMIC_RELAXED);
        }
        if (spanprof__collect.cpu)
            s->cpu_self_ns += spanprof__view_cpu_self(n);
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
    if (!spanprof__res_on())
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

static int cmp_res_name(const void *a, const void *b)
{
    return spanprof__site_compare((*(struct res_site *const *)a)->site,
                                  (*(struct res_site *const *)b)->site);
}

static void add_res(struct res_site *d, const struct res_site *s)
{
    if (d->hist && s->hist)
        spanprof__hist_merge(d->hist, s->hist);
    d->cpu_ns += s->cpu_ns;
    d->cpu_self_ns += s->cpu_self_ns;
    d->peak = s->peak > d->peak ? s->peak : d->peak;
    d->live_blocks += s->live_blocks;
    d->live_bytes += s->live_bytes;
    add(&d->self, &s->self);
    add(&d->incl, &s->incl);
}

/* A site of an unloaded library (its copy, record/siteretire.c) and the same site loaded again are
 * one span (aggregate.c gives them one entry, named by either): each of them gets the sums of
 * both.  Nothing is done when no two sites share a name, file and line. */
static void merge_twins(struct spanprof__res_sites *r)
{
    struct res_site **v = malloc(r->n * sizeof *v);
    if (!v)
        return;
    size_t n = 0;
    for (size_t i = 0; i < r->cap; i++)
        if (r->v[i].site)
            v[n++] = &r->v[i];
    qsort(v, n, sizeof *v, cmp_res_name);
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && cmp_res_name(&v[i], &v[j]) == 0; j++)
            add_res(v[i], v[j]);
        for (size_t m = i + 1; m < j; m++) {
            struct spanprof__hist *h = v[m]->hist;
            const struct spanprof_site *site = v[m]->site;
            *v[m] = *v[i];
            v[m]->site = site;
            v[m]->hist = h;
            if (h && v[i]->hist)
                memcpy(h, v[i]->hist, sizeof *h);
        }
    }
    free(v);
}

struct spanprof__res_sites *spanprof__res_collect(const struct spanprof__view *v)
{
    if (!spanprof__collect.histogram && !spanprof__res_on())
        return NULL;
    struct spanprof__res_sites *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    for (size_t i = 0; i < v->nthreads && !r->oom; i++) {
        /* The tree walk is only for the per-node counters; histograms are per thread already. */
        if (spanprof__res_on())
            spanprof__tree_walk(&v->threads[i]->root, collect_pre, collect_post, r);
        if (spanprof__collect.histogram)
            collect_hists(r, v->threads[i]);
    }
    if (r->oom) {
        fprintf(stderr, "spanprof: error: out of memory writing the resource profile\n");
        spanprof__res_free(r);
        return NULL;
    }
    merge_twins(r);
    return r;
}

static void put(struct json_object *js, const char *key, uint64_t v)
{
    json_object_object_add(js, key, spanprof__json_u64(v));
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
    if (spanprof__collect.cpu) {
        put(js, "cpu_ns", s->cpu_ns);
        put(js, "cpu_self_ns", s->cpu_self_ns);
    }
    if (spanprof__collect.alloc) {
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

void spanprof__res_json_histogram(const struct spanprof__res_sites *r,
                                  const struct spanprof_site *site, struct json_object *js,
                                  const struct spanprof__view *v)
{
    if (!r || !r->cap)
        return;
    const struct res_site *s = &r->v[slot(r, site)];
    if (s->site != site || !s->hist)
        return;
    unsigned first = 0;
    while (first < SPANPROF_HIST_BUCKETS && !s->hist->count[first])
        first++;
    if (first == SPANPROF_HIST_BUCKETS)
        return; /* no activation timed (SPANPROF=count, or none completed yet) */
    struct json_object *h = json_object_new_object(), *buckets = json_object_new_array();
    uint64_t le = 0, pending = 0; /* buckets narrower than a ns share their bound: merged */
    uint64_t count = 0;           /* of the buckets as read (a running thread adds to them) */
    for (unsigned i = first; i <= SPANPROF_HIST_BUCKETS; i++) {
        uint64_t n = i < SPANPROF_HIST_BUCKETS ? s->hist->count[i] : 0, low = 0, width = 1;
        if (i < SPANPROF_HIST_BUCKETS) {
            if (!n)
                continue;
            spanprof__hist_bucket(i, &low, &width);
        }
        uint64_t bound = spanprof__ticks_to_ns(v, low + width - 1);
        if (pending && (bound != le || i == SPANPROF_HIST_BUCKETS)) {
            struct json_object *b = json_object_new_array();
            json_object_array_add(b, spanprof__json_u64(le));
            json_object_array_add(b, spanprof__json_u64(pending));
            json_object_array_add(buckets, b);
            pending = 0;
        }
        le = bound;
        pending += n;
        count += n;
    }
    put(h, "count", count);
    /* The exact sum of the durations the buckets count (read a moment apart from them while
     * threads run), not the buckets' midpoints: it agrees with the span's total time. */
    put(h, "sum_ns", spanprof__ticks_to_ns(v, s->hist->sum));
    json_object_object_add(h, "buckets", buckets);
    json_object_object_add(js, "histogram", h);
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
