/* clock.h — the runtime's timestamp source.
 *
 * Timestamps are "ticks": TSC cycles when the CPU has an invariant TSC (rdtsc ≈ 10.5 ns on the
 * reference VM), else CLOCK_MONOTONIC nanoseconds (vDSO clock_gettime ≈ 25 ns).  Ticks become
 * nanoseconds only when output is written, with a rate calibrated against CLOCK_MONOTONIC
 * between start-up and the write (see clock.c).
 */
#ifndef SPANPROF_CLOCK_H
#define SPANPROF_CLOCK_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define SPANPROF_HAVE_TSC 1
#else
#define SPANPROF_HAVE_TSC 0
#endif

#include "record/record.h"

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
        return __rdtsc();
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
