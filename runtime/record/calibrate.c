/* calibrate.c — what one span call costs the program in exact mode, measured once at start-up,
 * so that the writers can take the profiler's own time out of the spans' times
 * (SPANPROF_COMPENSATE; report/aggregate.c subtracts it).
 *
 * A call's cost has two parts.  Inside its own timed window (from the enter's timestamp to the
 * exit's) lie the rest of the enter after its rdtsc and the exit up to its rdtsc: that part
 * inflates the span's own time.  Outside it lie the enter call up to its rdtsc, and the exit after
 * it: that part lands in the caller's window, as its self time.  Both are measured here by
 * running enter/exit pairs through the exported entry points on a private site, on data that
 * belongs to no thread: the call's window sum is the inside part, the loop's time less the same
 * loop without the calls is the whole.  The minimum of several rounds stands (interrupts and
 * preemption only add); a round is about 10 µs.  Start-up measures, and the exit write
 * measures again, keeping the lower: a start on a slow moment (one in twenty here measured 6 %
 * high) would otherwise take too much out of every span.
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

#define ROUNDS 8
#define PAIRS 512

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
 * function's body would be: the loop's ticks. */
__attribute__((noinline)) static uint64_t pairs(struct spanprof_site *site, enum pair_kind kind)
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
        if (kind == ENTRY_POINTS)
            __spanprof_exit(site, frame);
        else if (kind == INLINE_PATH &&
                 __atomic_load_n(&site->state, __ATOMIC_RELAXED) == SPANPROF__SITE_FAST)
            spanprof__record_exit(site, cfa, 1);
        __asm__ volatile("" ::: "memory");
    }
    __asm__ volatile("" :: "r"(x));
    return spanprof__clock_now() - t0;
}

/* Measures KIND's cost into *COST on the scratch data, whose first call on SITE creates the
 * node; keeps an earlier measurement that is lower (a slow moment only adds). */
static void measure(struct spanprof_site *site, enum pair_kind kind, struct spanprof__call_cost *cost)
{
    pairs(site, kind); /* first sight: the node; then warm caches */
    struct spanprof__node *n = __atomic_load_n(&spanprof__tls->root.first_child, __ATOMIC_ACQUIRE);
    double best_all = 0, best_in = 0;
    for (int r = 0; n && r < ROUNDS; r++) {
        uint64_t before = n->total;
        uint64_t with = pairs(site, kind);
        uint64_t inside = n->total - before;
        uint64_t without = pairs(site, NO_CALLS);
        double all = with > without ? (double)(with - without) / PAIRS : 0;
        double in = (double)inside / PAIRS;
        if (r == 0 || all < best_all)
            best_all = all;
        if (r == 0 || in < best_in)
            best_in = in;
    }
    double earlier = cost->in + cost->out;
    if (n && best_all > best_in && (earlier == 0 || best_all < earlier)) {
        cost->in = best_in;
        cost->out = best_all - best_in;
    }
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
    for (int kind = 0; kind < 2; kind++) {
        struct spanprof__thread *scratch = spanprof__thread_new();
        if (!scratch)
            break;
        spanprof__tls = scratch;
        measure(&calibration_site, kind ? INLINE_PATH : ENTRY_POINTS,
                &spanprof__g.call_cost[kind]);
        spanprof__tls = own;
        spanprof__thread_discard(scratch);
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
