/* calibrate.c — what one span call costs the program in exact mode, measured at start-up and
 * again at exit, so that the writers can take the profiler's own time out of the spans' times
 * (SPANPROF_COMPENSATE; report/aggregate.c subtracts it).
 *
 * A call's cost has two parts.  Inside its own timed window (from the enter's timestamp to the
 * exit's) lie the rest of the enter after its rdtsc and the exit up to its rdtsc: that part
 * inflates the span's own time.  Outside it lie the enter call up to its rdtsc, and the exit after
 * it: that part lands in the caller's window, as its self time.  Both are measured here by
 * running enter/exit pairs through the exported entry points on a private site, on data that
 * belongs to no thread: the call's window sum is the inside part, the loop's time less the same
 * loop without the calls is the whole.
 *
 * Interrupts, preemption and a busy neighbour only add time, so each of the three loops (with the
 * calls, their windows, without the calls) counts by its own minimum over rounds of 256 pairs
 * (about 6 µs each): taking the minimum of the differences instead let one disturbed round of the
 * short loop without calls pass for a cheap call, or make the whole measurement look impossible
 * and be dropped.  Rounds go on until three have come within 1/128 of the lowest loop time with
 * calls (a lowest value the rounds keep coming back to is the undisturbed one; on a quiet machine
 * the first four rounds, about 70 µs a kind), for at most 10 rounds or, after those four, 250 µs a
 * kind (on a busy one the lowest value moves little after that).  Start-up measures, and the exit
 * write measures again (only the kind the writers take out), keeping the lower: a start on a slow
 * moment would otherwise take too much out of every span.  A measurement that is still impossible
 * (a call no slower than the loop without it, an inside part above the whole, below 1 ns or above
 * 10 µs) is not used: its reason is kept, and the writers say that the times are as recorded.
 *
 * The first rounds also read the clock right before and right after each exit: from those reads
 * to the exit's own timestamp is at most the exit's share of each part, so what is left of a part
 * is at least the enter's share.  That is all a call whose exit never ran (abandoned by a longjmp,
 * record/abandoned.c) added, and all the writers take out for it.
 *
 * The calls surround a few cycles of dependent work, as a small function's body would: without
 * it the loop measured about 0.7 ns more per call than a call costs among real code, where part
 * of its latency overlaps with the work around it.  Caches are hot here; in a program a call
 * whose node or frame misses the cache costs more.  Only recording's plain path is measured:
 * with a trace, histograms or a per-call collector calls cost more, and nothing is measured.
 *
 * Two kinds of calls are measured: through the exported entry points (objects built with the
 * plugin's inline=0, and the small spans an option chose), and the plugin's inline path
 * (hotpath.h's recording inlined into the caller after the state test, which is the work the
 * plugin emits).  Which one the writers take out depends on the sites registered
 * (spanprof__calibrate_saw): the inline path's, the lower, as soon as any site records that
 * way, so that a program with both kinds is compensated too little rather than too much.
 */
#include <pthread.h>
#include <signal.h>

#include "record/clock.h"
#include "record/hotpath.h"
#include "record/record.h"

#define PAIRS 256          /* pairs per loop: about 6 µs with calls */
#define MIN_ROUNDS 4
#define SETTLED_HITS 3     /* rounds within 1/128 of the lowest: that is the undisturbed value */
#define MAX_ROUNDS 10
#define SPLIT_ROUNDS 4     /* rounds that also measure the exit's share */
#define BUDGET_NS 250000   /* per kind: a busy machine stops here, with the minima it has */
/* Plausible limits of one call's cost: two clock reads and a few stores take more than the
 * lower one on any machine; the upper one is a trapped rdtsc's order of magnitude. */
#define MIN_CALL_NS 1.0
#define MAX_CALL_NS 10000.0

static struct spanprof_site calibration_site = {
    .version = SPANPROF_SITE_VERSION,
    .kind = SPANPROF_KIND_SPAN,
    .name = "(calibration)",
    .file = "",
};

/* How the pairs below record. */
enum pair_kind {
    NO_CALLS,     /* the loop alone */
    ENTRY_POINTS, /* __spanprof_enter / __spanprof_exit */
    INLINE_PATH   /* the plugin's inline path: state test, then hotpath.h's recording inlined */
};

/* PAIRS enter/exit pairs of KIND on SITE around a few cycles of dependent work, as a small
 * function's body would be: the loop's ticks.  SPLIT (a constant) also reads the clock right
 * before and right after each exit and adds up, into SUMS, how far each read lies after the
 * frame's start: what separates the exit's share of a call from the enter's. */
static inline __attribute__((always_inline)) uint64_t
pairs_of(struct spanprof_site *site, enum pair_kind kind, int split, uint64_t sums[2])
{
    void *frame = __builtin_frame_address(0);
    uintptr_t cfa = (uintptr_t)frame;
    uint64_t x = (uintptr_t)frame;
    uint64_t t0 = spanprof__clock_now();
    for (unsigned i = 0; i < PAIRS; i++) {
        if (kind == ENTRY_POINTS)
            __spanprof_enter(site, frame);
        else if (kind == INLINE_PATH &&
                 __atomic_load_n(&site->state, __ATOMIC_RELAXED) == SPANPROF__SITE_FAST)
            spanprof__record_enter(site, cfa, (uintptr_t)site, SPANPROF_FRAME_RETURN_ADDRESS(cfa), 1);
        x = x * 2654435761u + 1;
        __asm__ volatile("" : "+r"(x) :: "memory");
        uint64_t before_exit = split ? spanprof__tsc_read() : 0;
        if (kind == ENTRY_POINTS)
            __spanprof_exit(site, frame);
        else if (kind == INLINE_PATH &&
                 __atomic_load_n(&site->state, __ATOMIC_RELAXED) == SPANPROF__SITE_FAST)
            spanprof__record_exit(site, cfa, 1);
        __asm__ volatile("" ::: "memory");
        if (split) {
            uint64_t after_exit = spanprof__tsc_read();
            uint64_t start = spanprof__tls->frames[1].start; /* the popped frame's */
            sums[0] += before_exit - start;
            sums[1] += after_exit - start;
        }
    }
    __asm__ volatile("" :: "r"(x));
    return spanprof__clock_now() - t0;
}

__attribute__((noinline)) static uint64_t pairs(struct spanprof_site *site, enum pair_kind kind)
{
    return pairs_of(site, kind, 0, NULL);
}

__attribute__((noinline)) static uint64_t split_pairs(struct spanprof_site *site,
                                                      enum pair_kind kind, uint64_t sums[2])
{
    return pairs_of(site, kind, 1, sums);
}

/* A moment on both clocks, for the ticks' rate: the best of three readings of CLOCK_MONOTONIC
 * between two of the span clock's, so that a preemption between two reads cannot pass for a
 * clock that runs a thousand times faster. */
static void moment(uint64_t *ns, uint64_t *tick)
{
    uint64_t gap = UINT64_MAX;
    for (int i = 0; i < 3; i++) {
        uint64_t t0 = spanprof__clock_now(), n = spanprof__mono_ns(), t1 = spanprof__clock_now();
        if (t1 - t0 < gap) {
            gap = t1 - t0;
            *ns = n;
            *tick = t0 + (t1 - t0) / 2;
        }
    }
}

static void lower(uint64_t *min, uint64_t v)
{
    if (v < *min)
        *min = v;
}

/* How many rounds came within 1/128 of the lowest loop time so far (*LOWEST), V the latest:
 * noise only adds, so a lowest value that rounds keep coming back to is the undisturbed one,
 * while one that keeps falling is still disturbed. */
static int settle(uint64_t *lowest, int hits, uint64_t v)
{
    if (v < *lowest - *lowest / 128) {
        *lowest = v;
        return 1;
    }
    lower(lowest, v);
    return v <= *lowest + *lowest / 128 ? hits + 1 : hits;
}

/* Measures KIND's cost on the scratch data (whose first call on SITE creates the node) into
 * *COST, or says in COST->failed why it could not.  Each figure is the minimum over rounds of
 * its own loop: with the calls, without them, the calls' windows, the exit's share. */
static void measure(struct spanprof_site *site, enum pair_kind kind, struct spanprof__call_cost *cost)
{
    uint64_t sums[2] = {0, 0};
    pairs(site, kind); /* first sight: the node; then warm caches */
    pairs(site, NO_CALLS);
    split_pairs(site, kind, sums);
    struct spanprof__node *n = __atomic_load_n(&spanprof__tls->root.first_child, __ATOMIC_ACQUIRE);
    *cost = (struct spanprof__call_cost){0};
    if (!n) {
        cost->failed = "no memory for the measurement";
        return;
    }
    uint64_t with = UINT64_MAX, without = UINT64_MAX, inside = UINT64_MAX;
    uint64_t exit_in = UINT64_MAX, exit_out = UINT64_MAX;
    uint64_t ns0, tick0, ns, tick;
    moment(&ns0, &tick0);
    ns = ns0;
    int hits = 0;
    /* The first rounds whatever they take: a round that a preemption stretched past the budget
     * must not be the only one. */
    for (int r = 0;
         r < MIN_ROUNDS || (r < MAX_ROUNDS && ns - ns0 < BUDGET_NS && hits < SETTLED_HITS); r++) {
        uint64_t before = n->total;
        hits = settle(&with, hits, pairs(site, kind));
        lower(&inside, n->total - before);
        lower(&without, pairs(site, NO_CALLS));
        /* Per pair: from the clock read before the exit to the exit's own, and from the exit's
         * to the read after it (the exit's timestamp is the window's end). */
        if (r < SPLIT_ROUNDS) {
            sums[0] = sums[1] = 0;
            before = n->total;
            split_pairs(site, kind, sums);
            uint64_t windows = n->total - before;
            lower(&exit_in, windows > sums[0] ? windows - sums[0] : 0);
            lower(&exit_out, sums[1] > windows ? sums[1] - windows : 0);
        }
        ns = spanprof__mono_ns();
    }
    moment(&ns, &tick);
    double ticks_per_ns = ns > ns0 ? (double)(tick - tick0) / (double)(ns - ns0) : 1;
    double all = with > without ? (double)(with - without) / PAIRS : 0;
    double in = (double)inside / PAIRS;
    if (all <= 0) {
        cost->failed = "the calls measured no slower than the loop without them";
        return;
    }
    if (in >= all) {
        cost->failed = "a call's part inside its window measured above the whole call";
        return;
    }
    if (all < MIN_CALL_NS * ticks_per_ns || all > MAX_CALL_NS * ticks_per_ns) {
        cost->failed = "a call measured below 1 ns or above 10000 ns";
        return;
    }
    cost->in = in;
    cost->out = all - in;
    /* The enter's share, for a call whose exit never ran (abandoned): what remains of each part
     * once the exit's share is taken away, and the work too, which lies inside the window (the
     * loop without calls is the longest it can take).  The exit's shares as measured include
     * part of the extra clock reads' own cost, so these are lower bounds. */
    double work = (double)without / PAIRS;
    double enter_in = in - (double)exit_in / PAIRS - work;
    double enter_out = cost->out - (double)exit_out / PAIRS;
    cost->enter_in = enter_in > 0 ? enter_in : 0;
    cost->enter_out = enter_out > 0 ? enter_out : 0;
}

/* An earlier measurement in *KEPT stays unless NOW is lower (a slow moment only adds); a failed
 * one gives way to any that worked. */
static void keep_lower(struct spanprof__call_cost *kept, const struct spanprof__call_cost *now)
{
    int kept_ok = kept->in > 0, now_ok = now->in > 0;
    if (now_ok ? !kept_ok || now->in + now->out < kept->in + kept->out : !kept_ok)
        *kept = *now;
}

void spanprof__calibrate(void)
{
#if SPANPROF_HAVE_TSC
    if (spanprof__flags.counting || !spanprof__flags.hot_tsc || spanprof__flags.histogram ||
        spanprof__flags.every_call)
        return;
    /* The pairs record into scratch data, not this thread's; the caller's guard is lifted so that
     * the first call's cold path creates the node instead of taking it for the runtime's own.
     * Signals wait meanwhile: a handler's spans, or a write it makes, must find this thread's
     * own data.  Each kind gets fresh data (the exit's is the start's again, recycled). */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    struct spanprof__thread *own = spanprof__tls;
    uintptr_t busy = spanprof__tls_busy;
    spanprof__tls_busy = 0;
    calibration_site.state = SPANPROF__SITE_FAST;
    /* Once sites were seen (the exit's measurement), only the kind the writers take out. */
    int seen = __atomic_load_n(&spanprof__g.call_kinds_seen, __ATOMIC_RELAXED);
    for (int kind = 0; kind < 2; kind++) {
        if (seen && kind != (seen & 2 ? 1 : 0))
            continue;
        struct spanprof__call_cost now = {.failed = "no memory for the measurement"};
        struct spanprof__thread *scratch = spanprof__thread_new();
        if (scratch) {
            spanprof__tls = scratch;
            measure(&calibration_site, kind ? INLINE_PATH : ENTRY_POINTS, &now);
            spanprof__tls = own;
            spanprof__thread_discard(scratch);
        }
        keep_lower(&spanprof__g.call_cost[kind], &now);
    }
    spanprof__tls_busy = busy;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
#endif
}

void spanprof__calibrate_saw(int inline_object)
{
    __atomic_or_fetch(&spanprof__g.call_kinds_seen, inline_object ? 2 : 1, __ATOMIC_RELAXED);
}

struct spanprof__call_cost spanprof__call_cost(void)
{
    int seen = __atomic_load_n(&spanprof__g.call_kinds_seen, __ATOMIC_RELAXED);
    return spanprof__g.call_cost[seen & 2 ? 1 : 0];
}
