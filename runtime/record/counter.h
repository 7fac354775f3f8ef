/* counter.h — the stores recording makes to memory that others read: a signal handler on the
 * same thread (which may run between any two instructions of the owner) and the report writers
 * on other threads (a dump while threads record).
 *
 * Only the owning thread writes these fields, so an update never needs a locked instruction.  It
 * needs two things:
 *  - signal atomicity: one instruction, so a handler that updates the same counter between the
 *    owner's load and store is never lost.  On x86-64 an add or xadd to memory without the lock
 *    prefix is exactly that; it is the instruction GCC emits for `x += v` anyway, so the hot path
 *    keeps its instruction sequence;
 *  - no data race with a reader on another thread: a plain 64-bit aligned store is atomic on x86
 *    (readers load with __atomic relaxed loads).
 * Built with ThreadSanitizer (which cannot see inline assembly), and on other architectures, the
 * same updates are relaxed __atomic read-modify-writes, which give both properties.  A relaxed
 * load and a separate store would not: a handler's update between the two would be lost.  On
 * aarch64 GCC makes each a call to libgcc's __aarch64_ldadd8_relax (-moutline-atomics, its
 * default): one LSE `ldadd` on Armv8.1 and later, an ldxr/stxr loop on Armv8.0, where a signal
 * between the two clears the exclusive monitor, so the store fails and the loop retries.
 */
#ifndef SPANPROF_COUNTER_H
#define SPANPROF_COUNTER_H

#include <stdint.h>

#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
#define SPANPROF__ASM_COUNTERS 1
#endif

/* *P += V, by P's owning thread (or a signal handler on it). */
static inline __attribute__((always_inline)) void spanprof__count_add(uint64_t *p, uint64_t v)
{
#ifdef SPANPROF__ASM_COUNTERS
    __asm__("addq %1, %0" : "+m"(*p) : "er"(v));
#else
    __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

/* Returns *P and adds V to it, as one signal-atomic step (a reservation). */
static inline __attribute__((always_inline)) uint64_t spanprof__count_fetch_add(uint64_t *p,
                                                                              uint64_t v)
{
#ifdef SPANPROF__ASM_COUNTERS
    __asm__("xaddq %0, %1" : "+r"(v), "+m"(*p));
    return v;
#else
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

/* *P = max(*P, V).  A handler may raise *P between our load and our store: compare-and-swap (not
 * locked on x86: one instruction is atomic with respect to signals) until *P >= V. */
static inline __attribute__((always_inline)) void spanprof__count_max(uint64_t *p, uint64_t v)
{
    uint64_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v > old) {
#ifdef SPANPROF__ASM_COUNTERS
        uint64_t seen = old;
        __asm__("cmpxchgq %2, %1" : "+a"(seen), "+m"(*p) : "r"(v) : "cc");
        if (seen == old)
            return;
        old = seen;
#else
        if (__atomic_compare_exchange_n(p, &old, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return;
#endif
    }
}

/* A store of a field other threads read (a published pointer, a depth): plain on x86. */
#define SPANPROF_PUBLISH(lvalue, value) __atomic_store_n(&(lvalue), (value), __ATOMIC_RELAXED)
/* A load of such a field by another thread. */
#define SPANPROF_PEEK(lvalue) __atomic_load_n(&(lvalue), __ATOMIC_RELAXED)

#endif /* SPANPROF_COUNTER_H */
