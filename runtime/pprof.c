/* pprof.c — SPANPROF_PPROF: writes the call trees as a pprof profile (gzip-compressed
 * profile.proto, for `go tool pprof`, Pyroscope, Parca, Grafana) through the shared encoder in
 * pprof/ (pprof.h).
 *
 * One sample per distinct stack, outermost span first in the model (the encoder puts the leaf
 * first, as pprof wants), with the values
 *     calls/count          calls that entered the stack's innermost span there
 *     wall/nanoseconds     self wall time (not with SPANPROF=count, which reads no clock)
 *     cpu/nanoseconds      self user + system CPU time, with SPANPROF_CPU=1
 *     alloc_objects/count, alloc_space/bytes   self, with SPANPROF_ALLOC=1
 * so that pprof's flat and cumulative figures are the folded file's and the JSON's.  Stacks of
 * all threads are summed, except with SPANPROF_THREADS=1, where each thread's stacks stay apart
 * and carry a "thread" label with the thread's name.  Like the folded stacks, stacks deeper than
 * SPANPROF_FOLDED_MAX_DEPTH end in a "[truncated]" frame that holds everything below.  Every
 * value is exact (period 1); the duration is the run's wall time so far, the start its start.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "pprof.h"
#include "resources.h"

enum { NVALUES_MAX = 5 };

struct sample {
    size_t first, depth;  /* in the frame pool */
    int64_t values[NVALUES_MAX];
    size_t thread;        /* index into the view's threads */
};

struct walk {
    const struct spanprof__view *v;
    int timed, cpu, allocs;
    size_t thread;
    struct spanprof__pprof_frame *path; /* current stack, [0, depth) */
    struct spanprof__pprof_frame *pool; /* every sample's stack, one after the other */
    size_t npool, pool_cap;
    struct sample *samples;
    size_t nsamples, samples_cap;
    int oom;
};

static int64_t clamp(uint64_t v)
{
    return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

static void frame_of(struct spanprof__pprof_frame *f, const struct spanprof_site *site)
{
    f->name = site && site->name ? site->name : "?";
    f->file = site ? site->file : NULL;
    f->line = site ? site->first_line : 0;
}

/* The values of N alone, or of N's whole subtree (BELOW: the part of a stack that is cut). */
struct sums {
    uint64_t calls, self, cpu, allocs, alloc_bytes;
};

/* CPU time of N's own activations (the per-node counters are inclusive) less its children's. */
static uint64_t cpu_self(struct spanprof__node *n)
{
    const struct spanprof__res_node *r = spanprof__res_of(n);
    uint64_t own = __atomic_load_n(&r->cpu_user_ns, __ATOMIC_RELAXED) +
                   __atomic_load_n(&r->cpu_sys_ns, __ATOMIC_RELAXED);
    uint64_t children = 0;
    for (struct spanprof__node *c = __atomic_load_n(&n->first_child, __ATOMIC_ACQUIRE); c;
         c = c->next_sibling) {
        const struct spanprof__res_node *rc = spanprof__res_of(c);
        children += __atomic_load_n(&rc->cpu_user_ns, __ATOMIC_RELAXED) +
                    __atomic_load_n(&rc->cpu_sys_ns, __ATOMIC_RELAXED);
    }
    return own > children ? own - children : 0;
}

static int add_node(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)depth;
    struct sums *s = ctx;
    s->calls += __atomic_load_n(&n->calls, __ATOMIC_RELAXED);
    s->self += spanprof__node_self(n);
    if (spanprof__res_cfg.cpu)
        s->cpu += cpu_self(n);
    if (spanprof__res_cfg.alloc) {
        const struct spanprof__res_node *r = spanprof__res_of(n);
        s->allocs += __atomic_load_n(&r->allocs, __ATOMIC_RELAXED);
        s->alloc_bytes += __atomic_load_n(&r->alloc_bytes, __ATOMIC_RELAXED);
    }
    return 1;
}

static void add_sample(struct walk *w, size_t depth, const struct sums *s)
{
    if (w->nsamples == w->samples_cap) {
        size_t cap = w->samples_cap ? w->samples_cap * 2 : 256;
        struct sample *p = realloc(w->samples, cap * sizeof *p);
        if (!p) {
            w->oom = 1;
            return;
        }
        w->samples = p;
        w->samples_cap = cap;
    }
    if (w->npool + depth > w->pool_cap) {
        size_t cap = w->pool_cap ? w->pool_cap : 1024;
        while (cap < w->npool + depth)
            cap *= 2;
        struct spanprof__pprof_frame *p = realloc(w->pool, cap * sizeof *p);
        if (!p) {
            w->oom = 1;
            return;
        }
        w->pool = p;
        w->pool_cap = cap;
    }
    memcpy(w->pool + w->npool, w->path, depth * sizeof *w->path);
    struct sample *smp = &w->samples[w->nsamples++];
    smp->first = w->npool;
    smp->depth = depth;
    smp->thread = w->thread;
    int k = 0;
    smp->values[k++] = clamp(s->calls);
    if (w->timed)
        smp->values[k++] = clamp(spanprof__ticks_to_ns(w->v, s->self));
    if (w->cpu)
        smp->values[k++] = clamp(s->cpu);
    if (w->allocs) {
        smp->values[k++] = clamp(s->allocs);
        smp->values[k++] = clamp(s->alloc_bytes);
    }
    w->npool += depth;
}

static int pre(struct spanprof__node *n, size_t depth, void *ctx)
{
    struct walk *w = ctx;
    if (w->oom)
        return 0;
    frame_of(&w->path[depth - 1], n->site);
    struct sums own = {0};
    add_node(n, depth, &own);
    /* A stack that ran but took 0 ns keeps its sample, as in the folded file. */
    if (__atomic_load_n(&n->calls, __ATOMIC_RELAXED) || __atomic_load_n(&n->total, __ATOMIC_RELAXED))
        add_sample(w, depth, &own);
    if (depth < SPANPROF_FOLDED_MAX_DEPTH)
        return 1;
    if (__atomic_load_n(&n->first_child, __ATOMIC_ACQUIRE)) {
        struct sums below = {0};
        spanprof__tree_walk(n, add_node, NULL, &below);
        w->path[depth].name = "[truncated]";
        w->path[depth].file = NULL;
        w->path[depth].line = 0;
        add_sample(w, depth + 1, &below);
    }
    return 0;
}

int spanprof__pprof_write_view(FILE *f, const struct spanprof__view *v,
                               const struct spanprof__json_meta *m)
{
    struct walk w = {.v = v, .timed = !v->counting, .cpu = spanprof__res_cfg.cpu,
                     .allocs = spanprof__res_cfg.alloc};
    struct spanprof__pprof_type types[NVALUES_MAX];
    size_t ntypes = 0;
    types[ntypes++] = (struct spanprof__pprof_type){"calls", "count"};
    if (w.timed)
        types[ntypes++] = (struct spanprof__pprof_type){"wall", "nanoseconds"};
    if (w.cpu)
        types[ntypes++] = (struct spanprof__pprof_type){"cpu", "nanoseconds"};
    if (w.allocs) {
        types[ntypes++] = (struct spanprof__pprof_type){"alloc_objects", "count"};
        types[ntypes++] = (struct spanprof__pprof_type){"alloc_space", "bytes"};
    }
    w.path = calloc(SPANPROF_FOLDED_MAX_DEPTH + 1, sizeof *w.path);
    if (!w.path)
        return -1;
    for (size_t i = 0; i < v->nthreads && !w.oom; i++) {
        w.thread = i;
        spanprof__tree_walk((struct spanprof__node *)&v->threads[i]->root, pre, NULL, &w);
    }
    struct spanprof__pprof_sample *s = NULL;
    char (*labels)[32] = NULL;
    int rc = -1;
    if (!w.oom) {
        s = calloc(w.nsamples ? w.nsamples : 1, sizeof *s);
        labels = calloc(v->nthreads ? v->nthreads : 1, sizeof *labels);
    }
    if (s && labels) {
        for (size_t i = 0; i < w.nsamples; i++) {
            const struct sample *x = &w.samples[i];
            s[i].stack = w.pool + x->first;
            s[i].depth = x->depth;
            s[i].values = x->values;
            s[i].thread = v->threads_root ? spanprof__thread_label(v->threads[x->thread],
                                                                   labels[x->thread], sizeof *labels)
                                          : NULL;
        }
        struct spanprof__pprof_model model = {
            .types = types,
            .ntypes = ntypes,
            .samples = s,
            .nsamples = w.nsamples,
            .period_type = types[0],
            .period = 1,
            .duration_ns = clamp(m->wall_ns),
            .time_ns = spanprof__g.start_real_sec * 1000000000 + spanprof__g.start_real_nsec,
            .program = m->program,
        };
        rc = spanprof__pprof_write(f, &model);
    }
    free(s);
    free(labels);
    free(w.path);
    free(w.pool);
    free(w.samples);
    return rc;
}
