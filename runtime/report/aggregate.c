/* aggregate.c — turns call trees into the numbers the writers print: per-site totals
 * (recursion counted once), per-thread calls, anomaly counters, tick → ns conversion, and
 * compensation (SPANPROF_COMPENSATE): the span calls' measured cost, lowered where the recorded
 * times show the program's calls cost less, taken out of each node's self time (of an abandoned
 * call, only its enter's), a site's total then being the sum of those self times below its
 * outermost nodes.
 */
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

uint64_t spanprof__ticks_to_ns(const struct spanprof__view *v, uint64_t ticks)
{
    return (uint64_t)((double)ticks * v->ns_per_tick + 0.5);
}

/* CPU time of N's own activations (the per-node counters are inclusive) less its children's;
 * sampled, the sampler's self figure. */
uint64_t spanprof__view_cpu_self(struct spanprof__node *n)
{
    if (spanprof__collect.sample_hz)
        return __atomic_load_n(&spanprof__sample_of(n)->cpu_ns, __ATOMIC_RELAXED);
    const struct spanprof__res_node *r = spanprof__res_of(n);
    uint64_t own = __atomic_load_n(&r->cpu_ns, __ATOMIC_RELAXED);
    uint64_t children = 0;
    for (struct spanprof__node *c = __atomic_load_n(&n->first_child, __ATOMIC_ACQUIRE); c;
         c = c->next_sibling) {
        const struct spanprof__res_node *rc = spanprof__res_of(c);
        children += __atomic_load_n(&rc->cpu_ns, __ATOMIC_RELAXED);
    }
    return own > children ? own - children : 0;
}

/* N's calls, split into those whose exit ran and those abandoned (*ABANDONED). */
static uint64_t completed_calls(const struct spanprof__node *n, uint64_t *abandoned)
{
    uint64_t calls = __atomic_load_n(&n->calls, __ATOMIC_RELAXED);
    uint64_t lost = spanprof__abandoned_of(n);
    *abandoned = lost < calls ? lost : calls; /* read while the thread runs: never more */
    return calls - *abandoned;
}

uint64_t spanprof__compensated_self(const struct spanprof__view *v, const struct spanprof__node *n,
                                    uint64_t self)
{
    /* An abandoned call's exit never ran: its own window holds only the rest of its enter (and
     * the repair's clock read, not taken out), its parent's window only the enter's start. */
    uint64_t abandoned, done = completed_calls(n, &abandoned);
    double cost = (double)done * v->cost_in + (double)abandoned * v->enter_in;
    for (struct spanprof__node *c = __atomic_load_n(&n->first_child, __ATOMIC_ACQUIRE); c;
         c = c->next_sibling) {
        done = completed_calls(c, &abandoned);
        cost += (double)done * v->cost_out + (double)abandoned * v->enter_out;
    }
    return (double)self > cost ? self - (uint64_t)(cost + 0.5) : 0;
}

/* The costs a view's recorded times allow: no node's self time may hold less than its own calls'
 * inside parts and its children's calls' outside parts.  A leaf's bounds the inside part; then,
 * with that, a parent's bounds the outside part.  Noise only adds time, so only calls that cost
 * less in the program than in the measurement (a machine busier while it measured) lower them. */
struct fit {
    const struct spanprof__view *v;
    double in, out;
    int outside; /* the second walk: the outside part */
};

static int fit_node(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)depth;
    struct fit *f = ctx;
    uint64_t abandoned, done = completed_calls(n, &abandoned), child_done = 0;
    double room = (double)spanprof__node_self(n) - (double)abandoned * f->v->enter_in;
    for (struct spanprof__node *c = __atomic_load_n(&n->first_child, __ATOMIC_ACQUIRE); c;
         c = c->next_sibling) {
        uint64_t c_abandoned, c_done = completed_calls(c, &c_abandoned);
        child_done += c_done;
        room -= (double)c_abandoned * f->v->enter_out;
    }
    if (room < 0)
        room = 0;
    if (!f->outside && !__atomic_load_n(&n->first_child, __ATOMIC_ACQUIRE) && done &&
        room / (double)done < f->in)
        f->in = room / (double)done;
    if (f->outside && child_done) {
        room -= (double)done * f->in;
        double out = room > 0 ? room / (double)child_done : 0;
        if (out < f->out)
            f->out = out;
    }
    return 1;
}

void spanprof__view_fit_costs(struct spanprof__view *v, const struct spanprof__thread *settled)
{
    if (!v->compensate)
        return;
    struct fit f = {v, v->cost_in, v->cost_out, 0};
    for (f.outside = 0; f.outside < 2; f.outside++)
        for (size_t i = 0; i < v->nthreads; i++) {
            struct spanprof__thread *t = v->threads[i];
            if (t == settled || __atomic_load_n(&t->exited, __ATOMIC_ACQUIRE))
                spanprof__tree_walk(&t->root, fit_node, NULL, &f);
        }
    v->cost_in = f.in;
    v->cost_out = f.out;
    if (v->enter_in > f.in)
        v->enter_in = f.in;
    if (v->enter_out > f.out)
        v->enter_out = f.out;
}

const char *spanprof__thread_label(const struct spanprof__thread *t, char *buf, size_t size)
{
    if (t->name[0])
        return t->name;
    snprintf(buf, size, "thread-%ld", (long)t->tid);
    return buf;
}

struct sites {
    const struct spanprof_site **v;
    size_t n, cap;
    int oom;
};

static int collect_site(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)depth;
    struct sites *s = ctx;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        const struct spanprof_site **v = realloc(s->v, cap * sizeof *v);
        if (!v) {
            s->oom = 1;
            return 0;
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = n->site;
    return 1;
}

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (const void *const *)a, y = (uintptr_t) * (const void *const *)b;
    return x < y ? -1 : x > y;
}

static int cmp_stats_ptr(const void *key, const void *elem)
{
    uintptr_t x = (uintptr_t)key, y = (uintptr_t)((const struct spanprof__site_stats *)elem)->site;
    return x < y ? -1 : x > y;
}

static int cmp_stats_name(const void *a, const void *b)
{
    return spanprof__site_compare(((const struct spanprof__site_stats *)a)->site,
                                  ((const struct spanprof__site_stats *)b)->site);
}

struct agg {
    struct spanprof__site_stats *st;
    size_t n;
    const struct spanprof__view *v;
    /* Compensation (v->compensate), per depth of the walk's current path: the compensated self
     * times of the node there and of its descendants walked so far, and whether the node is its
     * site's outermost on the path (its subtree is then the site's total there). */
    struct below {
        uint64_t self;
        int outermost;
    } *below;
    size_t cap;
    int oom;
};

static struct spanprof__site_stats *find(struct agg *a, const struct spanprof_site *site)
{
    return bsearch(site, a->st, a->n, sizeof *a->st, cmp_stats_ptr);
}

/* The walk reaches a node at DEPTH with compensated self time SELF. */
static int below_enter(struct agg *a, size_t depth, uint64_t self, int outermost)
{
    if (depth >= a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 64;
        while (cap <= depth)
            cap *= 2;
        struct below *b = realloc(a->below, cap * sizeof *b);
        if (!b) {
            a->oom = 1;
            return 0;
        }
        if (!a->cap)
            b[0] = (struct below){0, 0}; /* the roots' parent: collects, never read */
        a->below = b;
        a->cap = cap;
    }
    a->below[depth] = (struct below){self, outermost};
    return 1;
}

/* The walk leaves the node at DEPTH (of site S).  Compensated, a site's total is the sum of the
 * self times below its outermost nodes as the other outputs print them: the folded stacks under
 * it add up to it, and no span is left with less than the spans it called. */
static void below_leave(struct agg *a, struct spanprof__site_stats *s, size_t depth)
{
    const struct below *b = &a->below[depth];
    if (b->outermost)
        s->total += b->self;
    a->below[depth - 1].self += b->self;
}

static int agg_pre(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)depth;
    struct agg *a = ctx;
    struct spanprof__site_stats *s = find(a, n->site);
    if (!s)
        return 0; /* node created after the collection pass */
    s->calls += __atomic_load_n(&n->calls, __ATOMIC_RELAXED);
    uint64_t self = spanprof__view_self(a->v, n);
    s->self += self;
    if (a->v->compensate)
        s->recorded_self += spanprof__node_self(n);
    if (a->v->sample_hz)
        s->cpu_self += __atomic_load_n(&spanprof__sample_of(n)->cpu_ns, __ATOMIC_RELAXED);
    /* Only the outermost activation of a site on a stack adds to its inclusive total. */
    if (a->v->compensate && !below_enter(a, depth, self, s->active == 0))
        return 0;
    if (s->active == 0) {
        if (a->v->compensate)
            s->recorded_total += spanprof__view_total(a->v, n);
        else
            s->total += spanprof__view_total(a->v, n);
        if (a->v->sample_hz) {
            s->cpu_total += spanprof__sample_of(n)->cpu_incl;
            s->samples += spanprof__sample_of(n)->samples_incl;
        }
    }
    if (++s->active > s->max_depth)
        s->max_depth = s->active;
    return 1;
}

static void agg_post(struct spanprof__node *n, size_t depth, void *ctx)
{
    struct agg *a = ctx;
    struct spanprof__site_stats *s = find(a, n->site);
    if (!s || a->oom) /* out of memory: nothing is kept */
        return;
    s->active--;
    if (a->v->compensate)
        below_leave(a, s, depth);
}

/* A site of a library that was unloaded (its runtime-owned copy, record/siteretire.c) and the same
 * site after the library was loaded again are one span: one entry, sums of both (they never
 * nest, so the recursion rule holds).  ST is sorted by name, file and line. */
static size_t merge_twins(struct spanprof__site_stats *st, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        struct spanprof__site_stats *d = k ? &st[k - 1] : NULL;
        if (d && spanprof__site_compare(d->site, st[i].site) == 0) {
            d->calls += st[i].calls;
            d->total += st[i].total;
            d->self += st[i].self;
            d->recorded_total += st[i].recorded_total;
            d->recorded_self += st[i].recorded_self;
            if (st[i].max_depth > d->max_depth)
                d->max_depth = st[i].max_depth;
            continue;
        }
        st[k++] = st[i];
    }
    return k;
}

struct spanprof__site_stats *spanprof__aggregate_sites(const struct spanprof__view *v, size_t *n)
{
    struct sites s = {0};
    *n = 0;
    for (size_t i = 0; i < v->nthreads; i++)
        spanprof__tree_walk(&v->threads[i]->root, collect_site, NULL, &s);
    if (s.oom || s.n == 0) {
        free(s.v);
        return NULL;
    }
    qsort(s.v, s.n, sizeof *s.v, cmp_ptr);
    size_t u = 0;
    for (size_t i = 0; i < s.n; i++)
        if (u == 0 || s.v[u - 1] != s.v[i])
            s.v[u++] = s.v[i];
    struct agg a = {calloc(u, sizeof *a.st), u, v, NULL, 0, 0};
    if (!a.st) {
        free(s.v);
        return NULL;
    }
    for (size_t i = 0; i < u; i++)
        a.st[i].site = s.v[i];
    free(s.v);
    for (size_t i = 0; i < v->nthreads && !a.oom; i++)
        spanprof__tree_walk(&v->threads[i]->root, agg_pre, agg_post, &a);
    free(a.below);
    if (a.oom) {
        free(a.st);
        return NULL;
    }
    /* Keep sites that ran in this process (after fork, inherited nodes may be all zero). */
    size_t k = 0;
    for (size_t i = 0; i < u; i++) {
        if (a.st[i].calls || a.st[i].total)
            a.st[k++] = a.st[i];
    }
    qsort(a.st, k, sizeof *a.st, cmp_stats_name);
    k = merge_twins(a.st, k);
    *n = k;
    if (k == 0) {
        free(a.st);
        return NULL;
    }
    return a.st;
}

uint64_t spanprof__thread_count(const struct spanprof__view *v)
{
    uint64_t n = 0;
    for (size_t i = 0; i < v->nthreads; i++)
        n += v->threads[i]->merged ? v->threads[i]->merged : 1;
    return n;
}

static int sum_calls(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)depth;
    *(uint64_t *)ctx += __atomic_load_n(&n->calls, __ATOMIC_RELAXED);
    return 1;
}

uint64_t spanprof__thread_calls(const struct spanprof__thread *t)
{
    uint64_t calls = 0;
    spanprof__tree_walk((struct spanprof__node *)&t->root, sum_calls, NULL, &calls);
    return calls;
}

void spanprof__anomalies(const struct spanprof__view *v, struct spanprof__anomalies *a)
{
    memset(a, 0, sizeof *a);
    for (size_t i = 0; i < v->nthreads; i++) {
        const struct spanprof__thread *t = v->threads[i];
        a->abandoned += __atomic_load_n(&t->abandoned, __ATOMIC_RELAXED);
        a->unmatched += __atomic_load_n(&t->unmatched, __ATOMIC_RELAXED);
        a->overflow += __atomic_load_n(&t->overflow, __ATOMIC_RELAXED);
        a->open += spanprof__thread_open_frames(t);
    }
}
