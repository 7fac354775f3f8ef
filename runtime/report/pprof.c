/* pprof.c — SPANPROF_PPROF: writes the call trees as a pprof profile (gzip-compressed
 * profile.proto, for `go tool pprof`, Pyroscope, Parca, Grafana) through the shared encoder in
 * pprof/ (pprof.h).
 *
 * One sample per distinct stack, outermost span first in the model (the encoder puts the leaf
 * first, as pprof wants), with the values
 *     calls/count          calls that entered the stack's innermost span there
 *     wall/nanoseconds     self wall time (not with SPANPROF=count, which reads no clock)
 *     cpu/nanoseconds      self user + system CPU time, with SPANPROF_CPU=1; with
 *                          SPANPROF=sample the sampled CPU time instead (wall is sampled too)
 *     alloc_objects/count, alloc_space/bytes   self, with SPANPROF_ALLOC=1
 * so that pprof's flat and cumulative figures are the folded file's and the JSON's.  Stacks of
 * all threads are summed, except with SPANPROF_THREADS=1, where each thread's stacks stay apart
 * and carry a "thread" label with the thread's name.  Like the folded stacks, stacks deeper than
 * SPANPROF_FOLDED_MAX_DEPTH end in a "[truncated]" frame that holds everything below.  Every
 * value is exact (period 1); the duration is the run's wall time so far, the start its start.
 * With SPANPROF_IDLE=1, each thread's time outside spans is one more sample (idle.c).
 */
#include <stdlib.h>

#include "collect/budget.h"
#include "collect/collect.h"
#include "pprof.h"
#include "report/report.h"

enum { NVALUES_MAX = 5 };

/* The walk hands each stack to the encoder as it meets it: nothing but the current path is kept
 * here (the encoder keeps a stack as location ids, 8 bytes a frame). */
struct walk {
    const struct spanprof__view *v;
    int timed, cpu, allocs;
    const char *thread;                 /* the label of the thread being walked, or NULL */
    struct spanprof__pprof_frame *path; /* current stack, [0, depth) */
    struct spanprof__pprof_builder *b;
    int failed;
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
    const struct spanprof__view *v;
    uint64_t calls, self, cpu, allocs, alloc_bytes;
};

static int add_node(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)depth;
    struct sums *s = ctx;
    s->calls += __atomic_load_n(&n->calls, __ATOMIC_RELAXED);
    s->self += spanprof__view_self(s->v, n);
    if (spanprof__collect.cpu || spanprof__collect.sample_hz)
        s->cpu += spanprof__view_cpu_self(n);
    if (spanprof__collect.alloc) {
        const struct spanprof__res_node *r = spanprof__res_of(n);
        s->allocs += __atomic_load_n(&r->allocs, __ATOMIC_RELAXED);
        s->alloc_bytes += __atomic_load_n(&r->alloc_bytes, __ATOMIC_RELAXED);
    }
    return 1;
}

static void add_sample(struct walk *w, size_t depth, const struct sums *s)
{
    int64_t values[NVALUES_MAX];
    int k = 0;
    values[k++] = clamp(s->calls);
    if (w->timed)
        values[k++] = clamp(spanprof__ticks_to_ns(w->v, s->self));
    if (w->cpu)
        values[k++] = clamp(s->cpu);
    if (w->allocs) {
        values[k++] = clamp(s->allocs);
        values[k++] = clamp(s->alloc_bytes);
    }
    struct spanprof__pprof_sample smp = {w->path, depth, values, w->thread};
    if (spanprof__pprof_add(w->b, &smp))
        w->failed = 1;
}

/* SPANPROF_IDLE: the thread's time outside spans as a stack of its own, one frame, with wall
 * time only (no calls: it is no span); sampled, its CPU time too. */
static void add_idle(struct walk *w, const struct spanprof__thread *t, uint64_t ns)
{
    int64_t values[NVALUES_MAX] = {0};
    values[1] = clamp(ns); /* wall: after calls */
    if (w->v->sample_hz && w->cpu && t->sample)
        values[2] = clamp(__atomic_load_n(&t->sample->root.cpu_ns, __ATOMIC_RELAXED));
    w->path[0] = (struct spanprof__pprof_frame){spanprof__idle_frame, NULL, 0};
    struct spanprof__pprof_sample smp = {w->path, 1, values, w->thread};
    if (spanprof__pprof_add(w->b, &smp))
        w->failed = 1;
}

static int pre(struct spanprof__node *n, size_t depth, void *ctx)
{
    struct walk *w = ctx;
    if (w->failed)
        return 0;
    frame_of(&w->path[depth - 1], n->site);
    struct sums own = {.v = w->v};
    add_node(n, depth, &own);
    /* A stack that ran but took 0 ns keeps its sample, as in the folded file. */
    if (__atomic_load_n(&n->calls, __ATOMIC_RELAXED) || __atomic_load_n(&n->total, __ATOMIC_RELAXED))
        add_sample(w, depth, &own);
    if (depth < SPANPROF_FOLDED_MAX_DEPTH)
        return 1;
    if (__atomic_load_n(&n->first_child, __ATOMIC_ACQUIRE)) {
        struct sums below = {.v = w->v};
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
    struct walk w = {.v = v, .timed = !v->counting,
                     .cpu = spanprof__collect.cpu || v->sample_hz != 0,
                     .allocs = spanprof__collect.alloc};
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
    /* A cost budget's spans switched off: their calls are lower bounds (go tool pprof -comments). */
    char comment[512] = "";
    size_t noff = __atomic_load_n(&spanprof__budget.noff, __ATOMIC_ACQUIRE);
    if (noff) {
        int k = snprintf(comment, sizeof comment, "spanprof: cost budget %g%%: %zu span%s switched "
                         "off, calls a lower bound:", spanprof__budget.percent, noff,
                         noff == 1 ? "" : "s");
        for (size_t i = 0; i < noff && k > 0 && (size_t)k < sizeof comment - 1; i++)
            k += snprintf(comment + k, sizeof comment - (size_t)k, "%s %s", i ? "," : "",
                          spanprof__budget.off[i].site->name);
    }
    struct spanprof__pprof_model model = {
        .types = types,
        .ntypes = ntypes,
        .period_type = types[0],
        .period = 1,
        .duration_ns = clamp(m->wall_ns),
        .time_ns = spanprof__g.start_real_sec * 1000000000 + spanprof__g.start_real_nsec,
        .program = m->program,
        .comment = noff ? comment : NULL,
        .stored = m->live != NULL, /* a live snapshot: to a collector on this machine */
    };
    w.path = calloc(SPANPROF_FOLDED_MAX_DEPTH + 1, sizeof *w.path);
    if (!w.path || !(w.b = spanprof__pprof_begin(&model))) {
        free(w.path);
        return -1;
    }
    for (size_t i = 0; i < v->nthreads && !w.failed; i++) {
        char label[32];
        w.thread = v->threads_root ? spanprof__thread_label(v->threads[i], label, sizeof label) : NULL;
        spanprof__tree_walk((struct spanprof__node *)&v->threads[i]->root, pre, NULL, &w);
        uint64_t idle;
        if (w.timed && !w.failed && spanprof__thread_idle_ns(v, v->threads[i], &idle))
            add_idle(&w, v->threads[i], idle);
    }
    int rc = spanprof__pprof_finish(w.b, f); /* reports a failed add too */
    free(w.path);
    return rc;
}
