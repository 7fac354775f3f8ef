/* target.h — what recording does differently on each target: the CPU's tick counter, and where
 * an instrumented function's return address lies.  Everything else in the runtime is the same C
 * on every target (counter.h's signal-atomic adds have their own x86-64 instructions).
 *
 *   x86-64, i386  the TSC: rdtsc (≈10.5 ns on the reference VM), used with an invariant TSC
 *                 (CPUID 0x80000007 EDX bit 8), which runs at a constant rate on every core
 *                 regardless of frequency scaling and sleep states.
 *   aarch64       the generic timer's virtual counter, cntvct_el0: constant rate on every core
 *                 by the architecture, at cntfrq_el0 Hz (1 GHz from Armv8.6 on; 24–125 MHz on
 *                 older cores, i.e. 8–42 ns a tick, the resolution vDSO clock_gettime gets
 *                 from the same counter; 62.5 MHz under qemu).  Linux lets user space read it
 *                 (CNTKCTL_EL1.EL0VCTEN), and on cores whose errata make it trap the read it
 *                 emulates the instruction: a read never faults there.
 *   other         no counter: timestamps are CLOCK_MONOTONIC nanoseconds (clock.h).
 *
 * In every case the counter's rate is not taken on trust: clock.c calibrates ticks against
 * CLOCK_MONOTONIC over the run.
 */
#ifndef SPANPROF_TARGET_H
#define SPANPROF_TARGET_H

#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#define SPANPROF_HAVE_TSC 1
#define SPANPROF_TSC_NAME "tsc"
#elif defined(__aarch64__)
#define SPANPROF_HAVE_TSC 1
#define SPANPROF_TSC_NAME "cntvct"
#else
#define SPANPROF_HAVE_TSC 0
#endif

#if SPANPROF_HAVE_TSC
/* One read of the tick counter.  x86: rdtsc, ~10.5 ns, not ordered with the instructions around
 * it.  aarch64: isb then mrs: the isb makes the read wait for the instructions before it (an
 * unordered mrs may be taken early, before the bookkeeping a start is meant to follow); the
 * counter's own read is a few cycles, the isb a pipeline refill (~10–30 cycles). */
static inline __attribute__((always_inline)) uint64_t spanprof__tsc_read(void)
{
#if defined(__aarch64__)
    uint64_t ticks;
    __asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(ticks));
    return ticks;
#else
    return __rdtsc();
#endif
}

/* Whether the counter may time spans (start-up only).  x86: an invariant TSC.  aarch64: a
 * counter frequency is set (firmware that leaves cntfrq_el0 at 0 has not set the timer up). */
static inline int spanprof__tsc_usable(void)
{
#if defined(__aarch64__)
    uint64_t hz;
    __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(hz));
    return (hz & 0xffffffffu) != 0; /* bits 63:32 are reserved */
#else
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return 0;
    if (!__get_cpuid(0x80000007u, &a, &b, &c, &d))
        return 0;
    return (d >> 8) & 1;
#endif
}
#endif

/* The instrumented function's own return address, read from just below its canonical frame
 * address: one load from a line the call just wrote (x86, where the call pushes it there).
 * Where the return address is not kept on the stack at a fixed place (aarch64: in x30, saved
 * wherever the callee's frame layout puts it, if at all) it is not used (0), and equal frames are
 * then taken as alive. */
#if defined(__x86_64__) || defined(__i386__)
#define SPANPROF_FRAME_RETURN_ADDRESS(cfa) (((const uintptr_t *)(cfa))[-1])
#else
#define SPANPROF_FRAME_RETURN_ADDRESS(cfa) ((uintptr_t)0)
#endif

#endif /* SPANPROF_TARGET_H */
