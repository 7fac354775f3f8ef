/* hotpath.c — the out-of-line pieces of the recording paths in hotpath.h: the exit whose
 * timestamp is not a bare rdtsc (the monotonic clock, or a trace event to store), and the child
 * lookup's statistics in builds with -DSPANPROF_LOOKUP_STATS (printed at exit).
 */
#include "record/hotpath.h"

#ifdef SPANPROF_LOOKUP_STATS
#include <stdio.h>
uint64_t spanprof__lookup_stats[3];
__attribute__((destructor)) static void print_lookup_stats(void)
{
    uint64_t *s = spanprof__lookup_stats, all = s[0] + s[1] + s[2];
    fprintf(stderr, "spanprof: child lookups %llu: hint %.2f%%, cache %.2f%%, cold %.2f%%\n",
            (unsigned long long)all, all ? 100.0 * s[0] / all : 0.0,
            all ? 100.0 * s[1] / all : 0.0, all ? 100.0 * s[2] / all : 0.0);
}
#endif

/* SPANPROF_FLIGHT_MIN: the call of SITE ending at NOW goes into the thread's ring when it lasted
 * at least the threshold (one subtraction and a compare for the calls left out). */
static inline __attribute__((always_inline)) void flight_keep(struct spanprof_site *site,
                                                              uintptr_t cfa, uint64_t now)
{
    struct spanprof__thread *t = spanprof__tls;
    const struct spanprof__frame *f = t->top;
    if (f->node->site == site && f->cfa == cfa && now - f->start >= spanprof__flags.flight_min &&
        t->trace && now >= f->start)
        spanprof__trace_push_pair(t->trace, site, f->start, now);
}

static inline __attribute__((always_inline)) uint64_t exit_other(struct spanprof_site *site,
                                                                 uintptr_t cfa)
{
    uint64_t now = spanprof__span_tick_other(site, SPANPROF__TRACE_EXIT);
    if (spanprof__flags.flight_min)
        flight_keep(site, cfa, now);
    spanprof__record_exit_at(site, cfa, now, 1);
    return now;
}

/* The exit with any timestamp other than a bare rdtsc: out of line as a whole, so the common
 * exit keeps no register across a call.  With SPANPROF_FLIGHT_MIN the timestamp is a bare rdtsc
 * (no event at enter or exit) and the kept call's pair is pushed here, before the pop. */
__attribute__((noinline)) void spanprof__record_exit_other(struct spanprof_site *site,
                                                           uintptr_t cfa)
{
    exit_other(site, cfa);
}

__attribute__((noinline)) uint64_t spanprof__record_exit_ticked(struct spanprof_site *site,
                                                                uintptr_t cfa)
{
    return exit_other(site, cfa);
}
