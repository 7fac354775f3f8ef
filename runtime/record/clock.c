/* clock.c — chooses the tick source and converts ticks to nanoseconds.
 *
 * The CPU's tick counter (target.h: the TSC, or aarch64's cntvct_el0) is used only where it runs
 * at a constant rate on every core.  Its rate is not read from anywhere (unreliable on VMs, and
 * cntfrq_el0 is only what the firmware wrote); instead a (tick, monotonic) pair is taken at
 * start-up and another when output is written, and the ratio is the rate over the run so far,
 * until the run is RATE_FIXED_AFTER_NS long: from then on the rate is that one.  A rate measured
 * anew at every write converts all the ticks of the past anew too, so the difference of two live
 * snapshots (live/protocol.h) gave spans that had not run between them time of their own (0.8 µs
 * to a span with 0.5 s of calls, a second apart); over a second the pair's skew is well under a
 * part per million.
 */
#include "record/clock.h"

static int clock_off; /* counting mode: every timestamp is 0 */

__attribute__((noinline)) uint64_t spanprof__mono_ns_call(void)
{
    return clock_off ? 0 : spanprof__mono_ns();
}

static uint64_t cal_tick0, cal_ns0;

#define RATE_FIXED_AFTER_NS 1000000000u
static double fixed_ns_per_tick; /* 0 until the run is RATE_FIXED_AFTER_NS long */

#if SPANPROF_HAVE_TSC
/* A (tick, ns) pair with the counter read on both sides of clock_gettime, to halve the skew. */
static void pair(uint64_t *tick, uint64_t *ns)
{
    uint64_t t0 = spanprof__tsc_read();
    *ns = spanprof__mono_ns();
    uint64_t t1 = spanprof__tsc_read();
    *tick = t0 + (t1 - t0) / 2;
}
#endif

void spanprof__clock_init(void)
{
#if SPANPROF_HAVE_TSC
    spanprof__flags.tsc = spanprof__tsc_usable();
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
        double rate;
        __atomic_load(&fixed_ns_per_tick, &rate, __ATOMIC_RELAXED);
        if (rate > 0)
            return rate;
        uint64_t tick, ns;
        /* Under 1 ms the clock_gettime granularity and skew would show; wait for 1 ms. */
        do
            pair(&tick, &ns);
        while (ns - cal_ns0 < 1000000u);
        if (tick <= cal_tick0)
            return 1.0;
        rate = (double)(ns - cal_ns0) / (double)(tick - cal_tick0);
        if (ns - cal_ns0 >= RATE_FIXED_AFTER_NS)
            __atomic_store(&fixed_ns_per_tick, &rate, __ATOMIC_RELAXED);
        return rate;
    }
#endif
    return 1.0;
}

const char *spanprof__clock_name(void)
{
#if SPANPROF_HAVE_TSC
    return clock_off ? "none" : spanprof__flags.tsc ? SPANPROF_TSC_NAME : "monotonic";
#else
    return clock_off ? "none" : "monotonic";
#endif
}
