/* budgetlook.c — SPANPROF_BUDGET's looks, and the spans each window switches off (budget.c
 * says what the budget is).
 *
 * The spans that cost most are called from what runs, so every LOOK_S the writer thread
 * (lifecycle/writer.c) looks at the children of each thread's LOOK_FRAMES innermost open spans: the
 * calls (and, exact, ticks) a child gained since the look before counts for its site.  A walk of
 * every call tree would take milliseconds in a program of many functions (speedtest1: 1.2 ms),
 * too long to run every millisecond, and programs move through phases of a few dozen ms: a span
 * that waited for the next walk would run each new phase at full cost.
 *
 * Every DECIDE_LOOKS looks, among the spans a plugin option chose (whole-program
 * builds: all, functions=; never an attribute-marked span, a progress point, or a site a
 * collector watches) that do not lead (below), each is switched off whose calls cost more than
 * the budget's share of their own time (call_ns > mean × PERCENT / 100) and whose calls over
 * the window would take a hundredth of the budget: a long span is within the budget on its own,
 * and switching it off would lose it for nothing.  The mean: exact, the ticks its calls took;
 * SPANPROF=sample, the sampled time of the span's subtree since start over its calls (a subtree
 * of more than SUBTREE_LIMIT nodes: a long span); SPANPROF=count has no time, so a span goes when its calls
 * alone would take a quarter of the budget (its mean is then at most 4 / PERCENT calls' cost).
 */
#define _GNU_SOURCE
#include <stdint.h>

#include "collect/budgetparts.h"
#include "record/clock.h"

#define LOOK_FRAMES 4
#define DECIDE_LOOKS 2
#define SUBTREE_LIMIT 64

static uint32_t looks;
static uint64_t window_cpu_ns; /* the process's CPU time when the window began */
static double ns_per_tick;    /* the clock's, read once a window (each read takes two) */

/* Behind each node: what the looks saw of it last. */
struct budget_node {
    uint64_t calls, total;
    uint32_t look; /* the look that saw it (0: none) */
};
static size_t ext_offset;

static struct budget_node *budget_of(const struct spanprof__node *n)
{
    return (struct budget_node *)((char *)(n + 1) + ext_offset);
}

/* A retired thread's node merged into its group's: the group's node is seen anew. */
static void merge_nothing(void *dst, const void *src)
{
    (void)dst, (void)src;
}

void spanprof__budget_layout(void)
{
    ext_offset = spanprof__node_ext_add(sizeof(struct budget_node), merge_nothing);
    spanprof__flags.frames_shared = 1; /* the looks and scans read other threads' stacks */
}

/* SPANPROF=sample: the sampled wall time of N's subtree, -1 past *NODES nodes. */
/* Not seen by ThreadSanitizer, as look() below. */
__attribute__((no_sanitize_thread)) static double subtree_sampled(const struct spanprof__node *n,
                                                                  int *nodes)
{
    if (--*nodes < 0)
        return -1;
    double ns = spanprof__budget_sampled_self(n);
    for (const struct spanprof__node *c = __atomic_load_n(&n->first_child, __ATOMIC_ACQUIRE); c;
         c = c->next_sibling) {
        double below = subtree_sampled(c, nodes);
        if (below < 0)
            return -1;
        ns += below;
    }
    return ns;
}

/* Not seen by ThreadSanitizer, as look() below. */
/* Returns how many of N's children no look had seen. */
__attribute__((no_sanitize_thread)) static int look_children(const struct spanprof__node *n)
{
    int first_seen = 0;
    for (struct spanprof__node *c = __atomic_load_n(&n->first_child, __ATOMIC_ACQUIRE); c;
         c = c->next_sibling) {
        const struct spanprof_site *s = c->site;
        struct budget_node *b = budget_of(c);
        uint64_t calls = __atomic_load_n(&c->calls, __ATOMIC_RELAXED);
        uint64_t total = __atomic_load_n(&c->total, __ATOMIC_RELAXED);
        /* What it gained since a look in this window or the one before counts, and all of a
         * node no look saw yet: mostly one made since the look before, by a new phase of the
         * program, whose first millisecond of calls would otherwise wait for the next window
         * (speedtest1, every function a span: a third of the calls spans made before they
         * went off).  A node that was older only adds calls to the window; its mean holds. */
        if (s && s->id < spanprof__budget_nsums &&
            (!b->look || looks - b->look <= DECIDE_LOOKS) && calls > b->calls) {
            struct spanprof__site_sums *x = &spanprof__budget_sums[s->id];
            x->site = (struct spanprof_site *)s;
            x->look_calls += calls - b->calls;
            x->look_ticks += total - b->total;
            if (spanprof__collect.sample_hz) {
                int nodes = SUBTREE_LIMIT;
                double ns = subtree_sampled(c, &nodes);
                x->look_long |= ns < 0;
                x->look_sampled_ns += ns > 0 ? ns : 0;
                x->look_all_calls += calls;
            }
        }
        first_seen += !b->look;
        b->calls = calls;
        b->total = total;
        b->look = looks;
    }
    return first_seen;
}

/* Under the process lock (a retired thread's nodes are rewound under it).  The frames are read
 * as they are, while their threads push and pop: the hot path publishes a frame's node with plain
 * stores (as the sampler reads them, collect/sample_data.c), and a slot written now may read as
 * its old frame or its new one.  Either is a node its thread built before storing its address,
 * and every read of it goes through that address, so the reads come after the node's fields
 * were written; ThreadSanitizer cannot see that order (no release and acquire pair), hence it
 * does not see these reads. */
__attribute__((no_sanitize_thread)) static int look(void)
{
    int first_seen = 0;
    SPANPROF_PUBLISH(spanprof__budget.looks, ++looks);
    for (struct spanprof__thread *t = spanprof__g.threads; t; t = t->next) {
        if (t->exited)
            continue;
        const struct spanprof__frame *top = __atomic_load_n(&t->top, __ATOMIC_ACQUIRE);
        const struct spanprof__frame *frames = __atomic_load_n(&t->frames, __ATOMIC_ACQUIRE);
        if (!frames || top < frames ||
            top >= frames + __atomic_load_n(&t->capacity, __ATOMIC_RELAXED))
            continue; /* the stack moved meanwhile: next time */
        for (int k = 0; k < LOOK_FRAMES; k++, top--) {
            const struct spanprof__node *n = __atomic_load_n(&top->node, __ATOMIC_RELAXED);
            if (n)
                first_seen += look_children(n);
            if (top == frames)
                break;
        }
    }
    return first_seen;
}

/* The mean ns of X's calls seen in the window (-1: not known, or a long span). */
static double window_mean_ns(const struct spanprof__site_sums *x)
{
    if (spanprof__collect.sample_hz)
        return x->look_long || !x->look_all_calls ? -1
                                                   : x->look_sampled_ns / (double)x->look_all_calls;
    if (spanprof__flags.counting || !x->look_ticks)
        return -1;
    return (double)x->look_ticks * ns_per_tick / (double)x->look_calls;
}

static void choose_window(void)
{
    const struct spanprof__budget *b = &spanprof__budget;
    uint64_t cpu = spanprof__budget_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    if (cpu - window_cpu_ns < SPANPROF__BUDGET_MIN_CPU_NS ||
        (!spanprof__budget_leads_known && !spanprof__collect.sample_hz))
        return; /* the program hardly ran (a busy machine), or the first tick, which tells which
                 * spans lead, has not come yet (SPANPROF=sample knows that only after
                 * LEAD_MIN_SAMPLES periods, too long to wait: its windows take every span as not
                 * leading until then): the window goes on */
    double limit = b->percent / 100 * (double)(cpu - window_cpu_ns);
    window_cpu_ns = cpu;
    ns_per_tick = spanprof__clock_ns_per_tick();
    for (size_t i = 0; i < spanprof__budget_nsums; i++) {
        struct spanprof__site_sums *x = &spanprof__budget_sums[i];
        uint64_t calls = x->look_calls;
        double mean = window_mean_ns(x);
        x->look_calls = x->look_ticks = x->look_all_calls = 0;
        x->look_sampled_ns = 0;
        x->look_long = 0;
        if (calls && mean > 0)
            spanprof__budget_note_mean(x, mean);
        if (!calls || !x->site || x->leading || !spanprof__budget_may_switch_off(x->site) ||
            b->percent >= 100)
            continue;
        double cost = (double)calls * b->call_ns;
        int costly = spanprof__budget_timed() ? mean >= 0 && cost >= limit / 100 &&
                                                    b->call_ns > mean * b->percent / 100
                                              : cost >= limit / 4;
        if (costly)
            spanprof__budget_switch_off(x, mean > 0 ? mean : 0);
    }
}

int spanprof__budget_look(void)
{
    int first_seen = look();
    if (looks % DECIDE_LOOKS == 0)
        choose_window();
    return first_seen;
}

void spanprof__budget_look_restart(uint64_t cpu_ns)
{
    window_cpu_ns = cpu_ns;
}
