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
 */
#include <pthread.h>
#include <signal.h>

#include "record/clock.h"
#include "record/record.h"

#define ROUNDS 8
#define PAIRS 512

static struct spanprof_site calibration_site = {
    .version = SPANPROF_SITE_VERSION,
    .kind = SPANPROF_KIND_SPAN,
    .name = "(calibration)",
    .file = "",
};

/* PAIRS enter/exit pairs on SITE (or none, with CALLS 0) around a few cycles of dependent
 * work, as a small function's body would be: the loop's ticks. */
__attribute__((noinline)) static uint64_t pairs(struct spanprof_site *site, int calls)
{
    void *frame = __builtin_frame_address(0);
    uint64_t x = (uintptr_t)frame;
    uint64_t t0 = spanprof__clock_now();
    for (unsigned i = 0; i < PAIRS; i++) {
        if (calls)
            __spanprof_enter(site, frame);
        x = x * 2654435761u + 1;
        __asm__ volatile("" : "+r"(x) :: "memory");
        if (calls)
            __spanprof_exit(site, frame);
        __asm__ volatile("" ::: "memory");
    }
    __asm__ volatile("" :: "r"(x));
    return spanprof__clock_now() - t0;
}

void spanprof__calibrate(void)
{
#if SPANPROF_HAVE_TSC
    if (spanprof__flags.counting || !spanprof__flags.hot_tsc || spanprof__flags.histogram ||
        spanprof__flags.every_call)
        return;
    struct spanprof__thread *scratch = spanprof__thread_new(); /* the exit's: the start's again */
    if (!scratch)
        return;
    /* The pairs record into SCRATCH, not this thread's data; the caller's guard is lifted so that
     * the first call's cold path creates the node instead of taking it for the runtime's own.
     * Signals wait meanwhile: a handler's spans, or a write it makes, must find this thread's
     * own data. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    struct spanprof__thread *own = spanprof__tls;
    uintptr_t busy = spanprof__tls_busy;
    spanprof__tls = scratch;
    spanprof__tls_busy = 0;
    calibration_site.state = SPANPROF__SITE_FAST;
    pairs(&calibration_site, 1); /* first sight: the node; then warm caches */
    struct spanprof__node *n = __atomic_load_n(&scratch->root.first_child, __ATOMIC_ACQUIRE);
    double best_all = 0, best_in = 0;
    for (int r = 0; n && r < ROUNDS; r++) {
        uint64_t before = n->total;
        uint64_t with = pairs(&calibration_site, 1);
        uint64_t inside = n->total - before;
        uint64_t without = pairs(&calibration_site, 0);
        double all = with > without ? (double)(with - without) / PAIRS : 0;
        double in = (double)inside / PAIRS;
        if (r == 0 || all < best_all)
            best_all = all;
        if (r == 0 || in < best_in)
            best_in = in;
    }
    spanprof__tls = own;
    spanprof__tls_busy = busy;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    /* A second measurement (at exit) replaces the first only if lower: a slow moment only adds. */
    double earlier = spanprof__g.call_cost_in + spanprof__g.call_cost_out;
    if (n && best_all > best_in && (earlier == 0 || best_all < earlier)) {
        spanprof__g.call_cost_in = best_in;
        spanprof__g.call_cost_out = best_all - best_in;
    }
    spanprof__thread_discard(scratch);
#endif
}
