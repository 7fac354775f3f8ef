/* clock.h — the runtime's timestamp source.
 *
 * Timestamps are "ticks": the CPU's tick counter's when it has a usable one (target.h: the
 * invariant TSC on x86, rdtsc ≈ 10.5 ns on the reference VM; cntvct_el0 on aarch64), else
 * CLOCK_MONOTONIC nanoseconds (vDSO clock_gettime ≈ 25 ns).  Ticks become
 * nanoseconds only when output is written, with a rate calibrated against CLOCK_MONOTONIC
 * between start-up and the write (see clock.c).
 */
#ifndef SPANPROF_CLOCK_H
#define SPANPROF_CLOCK_H

#include <stdint.h>
#include <time.h>

#include "record/record.h"
#include "record/target.h"

#pragma GCC visibility push(hidden)

static inline uint64_t spanprof__mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* vDSO: no syscall, errno untouched on success */
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Out of line so the hot path needs no stack frame for the timespec. */
uint64_t spanprof__mono_ns_call(void);

/* Hot path: one predictable branch on a read-mostly flag (spanprof__flags.tsc, set once by
 * spanprof__clock_init before any span is recorded), then rdtsc (≈10.5 ns). */
static inline uint64_t spanprof__clock_now(void)
{
#if SPANPROF_HAVE_TSC
    if (__builtin_expect(spanprof__flags.tsc, 1))
        return spanprof__tsc_read();
#endif
    return spanprof__mono_ns_call();
}

void spanprof__clock_init(void);
/* Recomputes spanprof__flags.hot_tsc from the clock and the trace switch (start-up only). */
void spanprof__clock_hot_update(void);
/* Counting mode: no clock at all (spanprof__clock_now returns 0 through its slow branch, so every
 * duration is 0; the hot path does not call it). */
void spanprof__clock_disable(void);
/* Nanoseconds per tick, calibrated now (spins up to 1 ms if the run was shorter than that). */
double spanprof__clock_ns_per_tick(void);
const char *spanprof__clock_name(void);

#pragma GCC visibility pop

#endif /* SPANPROF_CLOCK_H */
