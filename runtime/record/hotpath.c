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

/* The exit with any timestamp other than a bare rdtsc: out of line as a whole, so the common
 * exit keeps no register across a call. */
__attribute__((noinline)) void spanprof__record_exit_other(struct spanprof_site *site,
                                                           uintptr_t cfa)
{
    spanprof__record_exit_at(site, cfa, spanprof__span_tick_other(site, SPANPROF__TRACE_EXIT), 1);
}
