/* hotpath.h — recording one call: push a frame at enter, pop and charge it at exit.
 *
 * Inline everywhere it is used: in the entry points (span.c) for the plain states, and in the
 * collectors' per-call path (collect/slowpath.c) for sites in state SLOW.  Nothing here locks,
 * allocates or makes a system call, and errno is untouched; everything rare is out of line in
 * stack.c (the cold paths) and hotpath.c (the exit with another clock).  Costs are for the 2-core EPYC reference VM (BENCHMARKS.md).
 */
#ifndef SPANPROF_HOTPATH_H
#define SPANPROF_HOTPATH_H

#include "record/childcache.h"
#include "record/clock.h"
#include "record/histogram.h"
#include "record/record.h"
#include "record/tracepush.h"

#pragma GCC visibility push(hidden)

/* Child-lookup outcomes, counted only in a build with -DSPANPROF_LOOKUP_STATS (printed at exit
 * by hotpath.c): how often the hint, the cache and the cold path find the child. */
#ifdef SPANPROF_LOOKUP_STATS
extern uint64_t spanprof__lookup_stats[3];
enum { SPANPROF__LOOKUP_hint, SPANPROF__LOOKUP_cache, SPANPROF__LOOKUP_cold };
#define SPANPROF_LOOKUP_STAT(what) (spanprof__lookup_stats[SPANPROF__LOOKUP_##what]++)
#else
#define SPANPROF_LOOKUP_STAT(what) ((void)0)
#endif

/* Where the enter call returns to (the entering code): one load from (%rsp).
 * Must be evaluated in the exported function itself. */
#define SPANPROF_CALLER_RA() ((uintptr_t)__builtin_return_address(0))

/* The timestamp of an enter (KIND 0) or exit (SPANPROF__TRACE_EXIT) of SITE: one predictable
 * branch on a read-mostly flag, then rdtsc (~10.5 ns), as clock.h's spanprof__clock_now.  The
 * flag is off with tracing on: the timestamp is then taken by the push of the trace event (a
 * call, two stores and a reservation more: tracepush.c), so a trace costs no clock read of its
 * own.  Out of line, as the push inline here would make the entry points save registers on
 * every call. */
static inline __attribute__((always_inline)) uint64_t
spanprof__span_tick(const struct spanprof_site *site, uintptr_t kind)
{
#if SPANPROF_HAVE_TSC
    if (SPANPROF_LIKELY(spanprof__flags.hot_tsc))
        return spanprof__tsc_read(); /* ~10.5 ns (rdtsc), or isb + mrs cntvct_el0 */
#endif
    return spanprof__span_tick_other(site, kind);
}

/* Push a frame for SITE.  ~1 cycle per line unless noted.  TIMED is a constant at every call:
 * 0 in counting mode (SPANPROF=count), which leaves out the timestamp and the duration sums. */
static inline __attribute__((always_inline)) void spanprof__record_enter(
    struct spanprof_site *site, uintptr_t cfa, uintptr_t ra, uintptr_t fra, int timed)
{
    struct spanprof__thread *t = spanprof__tls; /* IE TLS: %fs load (+GOT load in the .so) */
    struct spanprof__frame *f = t->top;
    /* One predictable branch for everything unusual about the stack:
     *  - f->cfa < cfa: the top frame's function has returned without its exit (longjmp, noreturn)
     *  - same frame address and same enter call site: that activation was abandoned and is
     *    re-entered (a live activation can't re-run its own enter)
     *  - same frame address but another function return address: a sibling called at the depth
     *    of a frame a longjmp abandoned (a callee inlined into its caller shares both the
     *    caller's frame address and its return address: alive)
     *  - f == limit: the frame array must grow
     *  - this thread has no data yet: the sentinel's frame has cfa 0, so the first test fires. */
    if (SPANPROF_UNLIKELY((f->cfa <= cfa && (f->cfa != cfa || f->ra == ra || f->fra != fra)) ||
                          f == t->limit)) {
        spanprof__enter_cold(site, cfa, ra, fra);
        return;
    }
    /* Child lookup through the parent's one-entry hint: 2 dependent loads.  A miss (alternating
     * children) tries the thread's (parent, site) cache inline (childcache.h: a hash, 3 loads);
     * only a child missing from both (first call on this path, a slot taken by another pair) goes
     * to the cold path, which walks the child list and fills both. */
    struct spanprof__node *n = f->node->hint;
    if (SPANPROF_UNLIKELY(n->site != site)) {
        n = spanprof__child_cache_find(t, f->node, site);
        if (SPANPROF_UNLIKELY(!n)) {
            SPANPROF_LOOKUP_STAT(cold);
            spanprof__enter_cold(site, cfa, ra, fra);
            return;
        }
        SPANPROF_LOOKUP_STAT(cache);
    } else
        SPANPROF_LOOKUP_STAT(hint);
    f = spanprof__push_frame(t, f, n, cfa, ra, fra); /* 6 stores */
    /* Timestamp last, so the bookkeeping above is not charged to the span: ~10.5 ns (rdtsc); with
     * tracing, also the trace's enter event.  (The cold path pushes its own, stack.c.) */
    f->start = timed ? spanprof__span_tick(site, 0) : 0;
}

/* Pop the frame of SITE, the exit having happened at NOW (ticks; 0 when not TIMED). */
static inline __attribute__((always_inline)) void
spanprof__record_exit_at(struct spanprof_site *site, uintptr_t cfa, uint64_t now, int timed)
{
    struct spanprof__thread *t = spanprof__tls;
    struct spanprof__frame *f = t->top;
    /* One predictable branch: the top frame must be this activation's (same site, same frame
     * address).  It fails for exits skipped by longjmp/noreturn further up (including a
     * recursive activation of the same site that a longjmp abandoned), for threads without data
     * (the sentinel frame's node has no site) and for an empty stack (the root has no site). */
    if (SPANPROF_UNLIKELY(f->node->site != site || f->cfa != cfa)) {
        spanprof__exit_cold(site, cfa, now);
        return;
    }
    if (timed) {
        uint64_t d = spanprof__charge(f, now); /* 2 adds; f > frames[0] here */
        /* Latency histogram (SPANPROF_HISTOGRAM, see histogram.h): one predictable branch on a
         * read-mostly flag when off; when on, the thread's histogram for the site (two loads
         * from hot lines, one table load), lzcnt + shift + one increment + max. */
        if (spanprof__flags.histogram)
            spanprof__hist_add(spanprof__hist_get(t, site), d);
    }
    /* The pop is the commit: a signal handler that runs before it nests under this frame (its
     * time then counts as this span's child time); one that runs after it nests under the
     * parent. */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    SPANPROF_PUBLISH(t->top, f - 1);
}

/* The whole exit when the timestamp is not a bare rdtsc (tracing, or no TSC): out of line and
 * reached by a tail jump, so the common exit keeps no register across a call (hotpath.c). */
void spanprof__record_exit_other(struct spanprof_site *site, uintptr_t cfa);
/* The same, returning the exit's timestamp (the flight recorder's check of a watched site, which
 * must see the tick the trace event got). */
uint64_t spanprof__record_exit_ticked(struct spanprof_site *site, uintptr_t cfa);

/* Pop the frame of SITE.  Timestamp first, so our own bookkeeping is not charged to the span:
 * one predictable branch on a read-mostly flag, then rdtsc (~10.5 ns).  With tracing on, the
 * timestamp is the trace's exit event (pushed whatever follows, as the cold path still pops or
 * counts the exit). */
static inline __attribute__((always_inline)) void spanprof__record_exit(struct spanprof_site *site,
                                                                        uintptr_t cfa, int timed)
{
    uint64_t now = 0;
    if (timed) {
#if SPANPROF_HAVE_TSC
        if (SPANPROF_UNLIKELY(!spanprof__flags.hot_tsc)) {
            spanprof__record_exit_other(site, cfa);
            return;
        }
        now = spanprof__tsc_read(); /* ~10.5 ns (rdtsc), or isb + mrs cntvct_el0 */
#else
        spanprof__record_exit_other(site, cfa);
        return;
#endif
    }
    spanprof__record_exit_at(site, cfa, now, timed);
}

#pragma GCC visibility pop

#endif /* SPANPROF_HOTPATH_H */
