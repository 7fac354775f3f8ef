/* budget.c — SPANPROF_BUDGET: recording that keeps its own cost under a share of the process's
 * CPU time, by switching off the spans that cost most for the time they measure.
 *
 * The cost.  At start-up one span call of the process's recording mode is measured on a private
 * site, on a scratch thread's data (the exported entry points' enter and exit, the loop without
 * them taken off; the minimum over rounds, as calibrate.c does).  Every BUDGET_TICK_S (after
 * first ticks of FIRST_TICK_S, doubling) the writer thread (config/writer.c) walks every thread's call tree under the process lock, sums each
 * site's calls (and, timed, their inclusive ticks), and takes the calls made since the last tick
 * times that cost as the runtime's cost over the tick, against the process's CPU time over it.
 *
 * Switching off.  While that share is over SPANPROF_BUDGET, the spans chosen by a plugin option
 * (whole-program builds: -fplugin-arg-spanplugin-all, functions=; never an attribute-marked
 * span, never a progress point, never a site a collector watches) are switched off, the one whose
 * calls were shortest on average over the tick first (with counting only, the one called most
 * first), until what is left is under nine tenths of the budget.  Only spans whose calls cost
 * more than the budget's share of their own time qualify: a long span is within the budget on
 * its own, and switching it off would lose it for nothing.  A switched-off span stays off.
 *
 * How.  The plugin skips a site's calls once its state is OFF, on the enter and on the exit side
 * (spanprof.h); an activation entered before would lose its exit and leave its frame on the
 * shadow stack.  So a site goes MUTED first: its calls still come, out of line (span.c): an enter
 * records nothing, an exit pops the frame on top only if it is that site's activation.  From then
 * on frames of the site only go away; once two scans of every thread's shadow stack, SCAN_S apart,
 * find none, the site goes OFF and costs what recording off costs (the off copy of its body).
 * A thread that read the state before MUTED and is preempted before its push through both scans
 * would still push one frame; its caller's exit then repairs it, as after a longjmp.
 *
 * What it leaves: the site's node calls stop where the site was muted (lower bounds, and the
 * profile says so: spanprof__budget_info), its time from then on belongs to its caller.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect/budget.h"
#include "record/clock.h"
#include "record/hotpath.h"

#define BUDGET_TICK_S 0.5
#define FIRST_TICK_S 0.05 /* then doubled up to BUDGET_TICK_S: a program pays for its costliest
                           * spans for a twentieth of a second, not half of one */
#define SCAN_S 0.05 /* between two scans of the shadow stacks while a site is MUTED */
#define ROUNDS 8
#define PAIRS 512

struct spanprof__budget spanprof__budget;

/* Per site id, what the ticks need. */
struct site_sums {
    struct spanprof_site *site;
    uint64_t calls, total;           /* summed over every thread's tree this tick */
    uint64_t last_calls, last_total; /* ... at the previous tick */
    int clean_scans;                 /* MUTED: scans in a row that found no frame of the site */
};
static struct site_sums *sums;
static size_t nsums;
/* Per site id: the index + 1 of its entry in spanprof__budget.off (0: not switched off); mapped
 * at start, pages touched only for the ids used. */
#define SITE_IDS (1u << 18)
static uint32_t *off_by_id;
static uint64_t last_cpu_ns;
static double next_tick, next_scan, tick_s;
static size_t muting; /* sites MUTED, waiting for their frames to go */

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double mono_s(void)
{
    return (double)spanprof__mono_ns() / 1e9;
}

static double seconds_since_start(void)
{
    return (double)(spanprof__mono_ns() - spanprof__g.start_mono_ns) / 1e9;
}

/* ---- the cost of one call ------------------------------------------------------------------ */

static struct spanprof_site probe_site = {
    .version = SPANPROF_SITE_VERSION, .kind = SPANPROF_KIND_SPAN, .name = "(budget probe)",
    .file = "", .first_line = 0, .last_line = 0,
};

static volatile uint64_t probe_sink;

/* PAIRS enter/exit pairs through the exported entry points (or none, WITH 0) around a little
 * dependent work; ns. */
static __attribute__((noinline)) uint64_t probe_loop(int with)
{
    char frame[1];
    uint64_t t0 = spanprof__mono_ns(), x = probe_sink;
    for (int i = 0; i < PAIRS; i++) {
        if (with)
            __spanprof_enter(&probe_site, frame);
        x = x * 3 + 1;
        __asm__ volatile("" : "+r"(x));
        if (with)
            __spanprof_exit(&probe_site, frame);
    }
    probe_sink = x;
    return spanprof__mono_ns() - t0;
}

static double measure_call_ns(void)
{
    struct spanprof__thread *own = spanprof__tls, *scratch = spanprof__thread_new();
    if (!scratch)
        return 0;
    uintptr_t busy = spanprof__tls_busy;
    spanprof__tls_busy = 0;
    spanprof__tls = scratch;
    __atomic_store_n(&probe_site.state,
                     spanprof__flags.counting ? SPANPROF__SITE_COUNT : SPANPROF__SITE_FAST,
                     __ATOMIC_RELEASE);
    uint64_t with = UINT64_MAX, without = UINT64_MAX;
    for (int r = 0; r < ROUNDS; r++) {
        uint64_t a = probe_loop(1), b = probe_loop(0);
        with = a < with ? a : with;
        without = b < without ? b : without;
    }
    spanprof__tls = own;
    spanprof__tls_busy = busy;
    spanprof__thread_discard(scratch);
    return with > without ? (double)(with - without) / PAIRS : 0;
}

/* ---- sums per site ------------------------------------------------------------------------- */

static int add_node(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)depth, (void)ctx;
    struct spanprof_site *s = (struct spanprof_site *)n->site;
    if (!s || s->id >= nsums)
        return 1;
    sums[s->id].site = s;
    sums[s->id].calls += __atomic_load_n(&n->calls, __ATOMIC_RELAXED);
    sums[s->id].total += __atomic_load_n(&n->total, __ATOMIC_RELAXED);
    return 1;
}

/* Whether a frame of SITE is on thread T's shadow stack now (read as it is: the owner pushes and
 * pops meanwhile, and under MUTED only pops frames of SITE). */
static int on_stack(const struct spanprof__thread *t, const struct spanprof_site *site)
{
    const struct spanprof__frame *top = __atomic_load_n(&t->top, __ATOMIC_ACQUIRE);
    if (!t->frames || top < t->frames || top >= t->frames + t->capacity)
        return 0;
    for (const struct spanprof__frame *f = top; f > t->frames; f--) {
        const struct spanprof__node *n = __atomic_load_n(&f->node, __ATOMIC_RELAXED);
        if (n && n->site == site)
            return 1;
    }
    return 0;
}

/* ---- choosing -------------------------------------------------------------------------------- */

static int may_switch_off(const struct spanprof_site *s)
{
    return s->kind == SPANPROF_KIND_SPAN_BY_OPTION && s->id < SITE_IDS &&
           (__atomic_load_n(&s->state, __ATOMIC_RELAXED) == SPANPROF__SITE_FAST ||
            __atomic_load_n(&s->state, __ATOMIC_RELAXED) == SPANPROF__SITE_TIMED ||
            __atomic_load_n(&s->state, __ATOMIC_RELAXED) == SPANPROF__SITE_COUNT);
}

/* Mean ticks per call over the tick (timed), or the calls' opposite (counting: the most called
 * first); the lower, the sooner switched off. */
static double rank(const struct site_sums *x)
{
    uint64_t calls = x->calls - x->last_calls;
    if (spanprof__flags.counting)
        return -(double)calls;
    return (double)(x->total - x->last_total) / (double)calls;
}

/* Whether switching X off is what the budget asks: timed, a span whose own calls cost more than
 * the budget's share of the time they measure (a long span within it stays, however far over
 * the others put the process); counting, a span whose calls made at least a hundredth of
 * LIMIT over the tick. */
static int worth_switching_off(const struct site_sums *x, double limit)
{
    uint64_t calls = x->calls - x->last_calls;
    if (spanprof__flags.counting)
        return (double)calls * spanprof__budget.call_ns >= limit / 100;
    if (x->total == x->last_total)
        return 0; /* no call ended in the tick: how long they take is not known */
    double mean_ns = rank(x) * spanprof__clock_ns_per_tick();
    return spanprof__budget.call_ns > mean_ns * spanprof__budget.percent / 100;
}

static void note_off(struct site_sums *x, double now_s)
{
    struct spanprof__budget *b = &spanprof__budget;
    uint64_t calls = x->calls - x->last_calls;
    if (b->noff < SPANPROF__BUDGET_OFF_MAX) {
        double mean = spanprof__flags.counting
                          ? 0
                          : (double)(x->total - x->last_total) / (double)calls *
                                spanprof__clock_ns_per_tick();
        b->off[b->noff] = (struct spanprof__budget_off){x->site, now_s, x->calls, mean, 0};
        if (x->site->id < SITE_IDS)
            __atomic_store_n(&off_by_id[x->site->id], (uint32_t)b->noff + 1, __ATOMIC_RELEASE);
        __atomic_store_n(&b->noff, b->noff + 1, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&x->site->state, SPANPROF__SITE_MUTED, __ATOMIC_RELEASE);
}

/* MUTED sites whose frames are all gone, in two scans in a row, go OFF.  Under the process
 * lock.  Returns how many are still MUTED. */
static size_t scan_muted(void)
{
    size_t muting = 0;
    for (size_t i = 0; i < nsums; i++) {
        struct site_sums *x = &sums[i];
        if (!x->site || __atomic_load_n(&x->site->state, __ATOMIC_ACQUIRE) != SPANPROF__SITE_MUTED)
            continue;
        int seen = 0;
        for (struct spanprof__thread *t = spanprof__g.threads; t && !seen; t = t->next)
            seen = !t->exited && on_stack(t, x->site);
        x->clean_scans = seen ? 0 : x->clean_scans + 1;
        if (x->clean_scans < 2) {
            muting++;
            continue;
        }
        __atomic_store_n(&x->site->state, SPANPROF__SITE_OFF, __ATOMIC_RELEASE);
        struct spanprof__budget_off *off =
            (struct spanprof__budget_off *)spanprof__budget_off_of(x->site);
        if (off)
            off->off_s = seconds_since_start();
    }
    return muting;
}

static void tick(void)
{
    struct spanprof__budget *b = &spanprof__budget;
    size_t want = spanprof__g.next_site_id + 64;
    if (want > nsums) {
        struct site_sums *n = realloc(sums, want * sizeof *n);
        if (!n)
            return;
        memset(n + nsums, 0, (want - nsums) * sizeof *n);
        sums = n;
        nsums = want;
    }
    for (size_t i = 0; i < nsums; i++)
        sums[i].calls = sums[i].total = 0;
    spanprof__lock();
    for (struct spanprof__thread *t = spanprof__g.threads; t; t = t->next)
        spanprof__tree_walk(&t->root, add_node, NULL, NULL);
    muting = scan_muted();
    spanprof__unlock();

    uint64_t cpu = cpu_ns(), spent = cpu - last_cpu_ns;
    last_cpu_ns = cpu;
    double cost = 0;
    for (size_t i = 0; i < nsums; i++)
        if (sums[i].site && sums[i].calls > sums[i].last_calls)
            cost += (double)(sums[i].calls - sums[i].last_calls) * b->call_ns;
    double limit = b->percent / 100 * (double)spent;
    b->last_share = spent ? cost / (double)spent : 0;
    if (cost > limit && b->percent < 100) { /* 100: measure only (for spanprof select) */
        double now_s = seconds_since_start();
        /* The cheapest to lose first, until under nine tenths of the budget: a few dozen sites
         * a tick at most in practice, so a selection by repeated scans is enough. */
        while (cost > 0.9 * limit) {
            struct site_sums *best = NULL;
            for (size_t i = 0; i < nsums; i++) {
                struct site_sums *x = &sums[i];
                if (!x->site || x->calls <= x->last_calls || !may_switch_off(x->site))
                    continue;
                if (!worth_switching_off(x, limit))
                    continue;
                if (!best || rank(x) < rank(best))
                    best = x;
            }
            if (!best)
                break;
            cost -= (double)(best->calls - best->last_calls) * b->call_ns;
            note_off(best, now_s);
            muting++;
        }
    }
    for (size_t i = 0; i < nsums; i++) {
        sums[i].last_calls = sums[i].calls;
        sums[i].last_total = sums[i].total;
    }
}

/* ---- the writer thread's side ---------------------------------------------------------------- */

void spanprof__budget_start(double percent)
{
    struct spanprof__budget *b = &spanprof__budget;
    if (!(percent > 0))
        return;
    off_by_id = spanprof__map(SITE_IDS * sizeof *off_by_id);
    if (!off_by_id) {
        fprintf(stderr, "spanprof: warning: SPANPROF_BUDGET: no memory for its table; no "
                        "budget\n");
        return;
    }
    b->percent = percent;
    b->call_ns = measure_call_ns();
    if (!(b->call_ns > 0)) {
        fprintf(stderr, "spanprof: warning: SPANPROF_BUDGET: the cost of a span call could not "
                        "be measured; no budget\n");
        b->percent = 0;
        return;
    }
    last_cpu_ns = cpu_ns();
    tick_s = FIRST_TICK_S;
    next_tick = mono_s() + tick_s;
}

double spanprof__budget_serve(void)
{
    if (!(spanprof__budget.percent > 0))
        return -1;
    double now = mono_s();
    if (now >= next_tick) {
        tick();
        next_tick = now + tick_s;
        if (tick_s < BUDGET_TICK_S)
            tick_s = tick_s * 2 < BUDGET_TICK_S ? tick_s * 2 : BUDGET_TICK_S;
        next_scan = now + SCAN_S;
    } else if (muting && now >= next_scan) {
        spanprof__lock();
        muting = scan_muted();
        spanprof__unlock();
        next_scan = now + SCAN_S;
    }
    double next = muting && next_scan < next_tick ? next_scan : next_tick;
    return next > now ? next - now : 0;
}

const struct spanprof__budget_off *spanprof__budget_off_of(const struct spanprof_site *site)
{
    if (!off_by_id || site->id >= SITE_IDS)
        return NULL;
    uint32_t i = __atomic_load_n(&off_by_id[site->id], __ATOMIC_ACQUIRE);
    return i ? &spanprof__budget.off[i - 1] : NULL;
}

void spanprof__budget_fork_child(void)
{
    last_cpu_ns = spanprof__budget.percent > 0 ? cpu_ns() : 0;
    for (size_t i = 0; i < nsums; i++)
        sums[i].last_calls = sums[i].last_total = 0;
}
