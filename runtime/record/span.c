/* span.c — the hot path: __spanprof_enter and __spanprof_exit.
 *
 * Every instrumented call runs these two functions, so they do only the common case inline:
 * no locks, no allocation, no syscalls, errno untouched.  Everything rare (first sight of a site
 * or thread, coz, repair of stacks left unbalanced by longjmp/noreturn, growth of the frame
 * array, child nodes not in the one-entry cache) is out of line in stack.c / site.c.
 *
 * Costs below are for the 2-core EPYC reference VM (ENGINEERING.md §3).
 */
#include <errno.h>

#include "record/clock.h"
#include "collect/histogram.h"
#include "record/internal.h"
#include "collect/resources.h"
#include "collect/trace.h"

/* Where the enter call returns to (the entering code): one load from (%rsp).
 * Must be evaluated in the exported function itself. */
#define CALLER_RA() ((uintptr_t)__builtin_return_address(0))

/* The instrumented function's own return address, read from just below its canonical frame
 * address: one load from a line the call just wrote.  Where the return address is not kept on
 * the stack at a fixed place it is not used (0), and equal frames are then taken as alive. */
#if defined(__x86_64__) || defined(__i386__)
#define FRAME_RETURN_ADDRESS(cfa) (((const uintptr_t *)(cfa))[-1])
#else
#define FRAME_RETURN_ADDRESS(cfa) ((uintptr_t)0)
#endif

/* Push a frame for SITE.  ~1 cycle per line unless noted.  TIMED is a constant at every call:
 * 0 in counting mode (SPANPROF=count), which leaves out the timestamp and the duration sums. */
static inline __attribute__((always_inline)) void record_enter(struct spanprof_site *site,
                                                               uintptr_t cfa, uintptr_t ra,
                                                               uintptr_t fra, int timed)
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
    if (SPANPROF_UNLIKELY(f->cfa < cfa || (f->cfa == cfa && (f->ra == ra || f->fra != fra)) ||
                          f == t->limit)) {
        spanprof__enter_cold(site, cfa, ra, fra);
        return;
    }
    /* Child lookup through the parent's one-entry hint: 2 dependent loads.  A miss (first call on
     * this path, or alternating children) goes to the cold path, which walks the child list. */
    struct spanprof__node *n = f->node->hint;
    if (SPANPROF_UNLIKELY(n->site != site)) {
        spanprof__enter_cold(site, cfa, ra, fra);
        return;
    }
    f = spanprof__push_frame(t, f, n, cfa, ra, fra); /* 6 stores */
    /* Timestamp last, so the bookkeeping above is not charged to the span: ~10.5 ns (rdtsc). */
    f->start = timed ? spanprof__clock_now() : 0;
}

/* Pop the frame of SITE.  Timestamp first, so our own bookkeeping is not charged to the span. */
static inline __attribute__((always_inline)) void record_exit(struct spanprof_site *site,
                                                              uintptr_t cfa, int timed)
{
    uint64_t now = timed ? spanprof__clock_now() : 0; /* ~10.5 ns */
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
        struct spanprof__node *n = f->node;
        uint64_t d = now - f->start;
        d = (int64_t)d < 0 ? 0 : d; /* cmov: never a negative duration */
        n->total += d;
        f[-1].node->child += d; /* f > frames[0] here: the root frame's node has no site */
        /* Latency histogram (SPANPROF_HISTOGRAM, see histogram.h): one predictable branch on a
         * read-mostly global when off; when on, the thread's histogram for the site (two loads
         * from hot lines, one table load), lzcnt + shift + one increment + max. */
        if (spanprof__hist_on)
            spanprof__hist_add(spanprof__hist_get(t, site), d);
    }
    __atomic_signal_fence(__ATOMIC_RELEASE);
    t->top = f - 1;
}

/* Site neither FAST nor COUNT: new, with extras (coz counters, resources, tracing), or ignored.
 * Not marked cold: with coz running or tracing on, every call comes here.  The extras are
 * independent and each costs only its own test when off.  Counting mode with extras also comes
 * here, so TIMED is read from the config. */
static __attribute__((noinline)) void enter_slow(struct spanprof_site *site, uintptr_t cfa,
                                                 uintptr_t ra, uintptr_t fra)
{
    uint32_t st = __atomic_load_n(&site->state, __ATOMIC_ACQUIRE);
    if (st == SPANPROF__SITE_NEW) {
        if (spanprof__tls_busy) /* entered from inside the runtime (e.g. its own init) */
            return;
        st = spanprof__site_register(site);
    }
    if (st == SPANPROF__SITE_SLOW) {
        if (site->coz_begin)
            __atomic_add_fetch(&((struct spanprof__coz_counter *)site->coz_begin)->count, 1,
                               __ATOMIC_RELAXED);
        record_enter(site, cfa, ra, fra, !spanprof__g.config.counting);
        if (spanprof__res_slow)
            spanprof__res_enter(site); /* CPU time, allocation peak (resources.c) */
        if (spanprof__g.config.trace)
            spanprof__trace_push(site, 0); /* its rdtsc after our bookkeeping */
    } else if (st == SPANPROF__SITE_FAST) {
        record_enter(site, cfa, ra, fra, 1);
    } else if (st == SPANPROF__SITE_COUNT) {
        record_enter(site, cfa, ra, fra, 0);
    }
}

static __attribute__((noinline)) void exit_slow(struct spanprof_site *site, uintptr_t cfa)
{
    uint32_t st = __atomic_load_n(&site->state, __ATOMIC_ACQUIRE);
    if (st == SPANPROF__SITE_NEW && !spanprof__tls_busy) {
        /* An exit for a site never entered here (e.g. entered while the runtime was busy):
         * register it so the cold path counts the exit as unmatched. */
        st = spanprof__site_register(site);
    }
    if (st == SPANPROF__SITE_FAST) {
        record_exit(site, cfa, 1);
    } else if (st == SPANPROF__SITE_COUNT) {
        record_exit(site, cfa, 0);
    } else if (st == SPANPROF__SITE_SLOW) {
        if (site->coz_end)
            __atomic_add_fetch(&((struct spanprof__coz_counter *)site->coz_end)->count, 1,
                               __ATOMIC_RELAXED);
        if (spanprof__g.config.trace)
            spanprof__trace_push(site, SPANPROF__TRACE_EXIT); /* rdtsc before the bookkeeping */
        if (spanprof__res_slow)
            spanprof__res_exit(site, cfa);
        record_exit(site, cfa, !spanprof__g.config.counting);
    }
}

/* The entry points.  Their first act is one load of the site's state and one compare:
 *  - FAST (default recording): record with timestamps, inlined here;
 *  - COUNT (SPANPROF=count): record without timestamps, inlined here;
 *  - OFF (SPANPROF=0, or a site the runtime ignores): return at once.  This path is the whole
 *    cost of a disabled build beyond the call itself: load, compare, return (measured within
 *    ~0.3 ns of empty -finstrument-functions hooks; see BENCHMARKS.md);
 *  - anything else (not registered yet; coz, resources or tracing on) goes out of line.
 * Nothing is read before the state check (not even the frame's return address), so the OFF path
 * needs no stack frame and no callee-saved registers. */
SPANPROF_API void __spanprof_enter(struct spanprof_site *site, void *frame)
{
    uint32_t st = __atomic_load_n(&site->state, __ATOMIC_RELAXED);
    if (st == SPANPROF__SITE_OFF)
        return;
    if (SPANPROF_LIKELY(st == SPANPROF__SITE_FAST)) {
        record_enter(site, (uintptr_t)frame, CALLER_RA(), FRAME_RETURN_ADDRESS(frame), 1);
        return;
    }
    if (st == SPANPROF__SITE_COUNT) {
        record_enter(site, (uintptr_t)frame, CALLER_RA(), FRAME_RETURN_ADDRESS(frame), 0);
        return;
    }
    enter_slow(site, (uintptr_t)frame, CALLER_RA(), FRAME_RETURN_ADDRESS(frame));
}

SPANPROF_API void __spanprof_exit(struct spanprof_site *site, void *frame)
{
    uint32_t st = __atomic_load_n(&site->state, __ATOMIC_RELAXED);
    if (st == SPANPROF__SITE_OFF)
        return;
    if (SPANPROF_LIKELY(st == SPANPROF__SITE_FAST)) {
        record_exit(site, (uintptr_t)frame, 1);
        return;
    }
    if (st == SPANPROF__SITE_COUNT) {
        record_exit(site, (uintptr_t)frame, 0);
        return;
    }
    exit_slow(site, (uintptr_t)frame);
}
