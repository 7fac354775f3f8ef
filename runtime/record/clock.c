/* clock.c — chooses the tick source and converts ticks to nanoseconds.
 *
 * rdtsc is used only with an invariant TSC (CPUID 0x80000007 EDX bit 8): it then runs at a
 * constant rate on every core regardless of frequency scaling and sleep states.  Its rate is not
 * read from anywhere (unreliable on VMs); instead a (tsc, monotonic) pair is taken at start-up and
 * another when output is written, and the ratio is the rate over the whole run.
 */
#include "record/clock.h"

#if SPANPROF_HAVE_TSC
#include <cpuid.h>
#endif

static int clock_off; /* counting mode: every timestamp is 0 */

__attribute__((noinline)) uint64_t spanprof__mono_ns_call(void)
{
    return clock_off ? 0 : spanprof__mono_ns();
}

static uint64_t cal_tick0, cal_ns0;

#if SPANPROF_HAVE_TSC
static int invariant_tsc(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return 0;
    if (!__get_cpuid(0x80000007u, &a, &b, &c, &d))
        return 0;
    return (d >> 8) & 1;
}

/* A (tsc, ns) pair with the TSC read on both sides of clock_gettime, to halve the skew. */
static void pair(uint64_t *tick, uint64_t *ns)
{
    uint64_t t0 = __rdtsc();
    *ns = spanprof__mono_ns();
    uint64_t t1 = __rdtsc();
    *tick = t0 + (t1 - t0) / 2;
}
#endif

void spanprof__clock_init(void)
{
#if SPANPROF_HAVE_TSC
    spanprof__flags.tsc = invariant_tsc();
    if (spanprof__flags.tsc)
        pair(&cal_tick0, &cal_ns0);
#endif
    spanprof__clock_hot_update();
}

void spanprof__clock_hot_update(void)
{
    spanprof__flags.hot_tsc =
        spanprof__flags.tsc && !spanprof__flags.trace && !spanprof__flags.flight_min;
}

void spanprof__clock_disable(void)
{
    spanprof__flags.tsc = 0;
    spanprof__flags.hot_tsc = 0;
    clock_off = 1;
}

double spanprof__clock_ns_per_tick(void)
{
#if SPANPROF_HAVE_TSC
    if (spanprof__flags.tsc) {
        uint64_t tick, ns;
        /* Under 1 ms the clock_gettime granularity and skew would show; wait for 1 ms. */
        do
            pair(&tick, &ns);
        while (ns - cal_ns0 < 1000000u);
        if (tick <= cal_tick0)
            return 1.0;
        return (double)(ns - cal_ns0) / (double)(tick - cal_tick0);
    }
#endif
    return 1.0;
}

const char *spanprof__clock_name(void)
{
    return clock_off ? "none" : spanprof__flags.tsc ? "tsc" : "monotonic";
}
