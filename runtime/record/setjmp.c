/* setjmp.c — repair of the shadow stack where a setjmp-like call returns: the exact way to drop
 * the frames a longjmp abandoned.
 *
 * The plugin brackets every call that may return twice (setjmp, sigsetjmp, vfork, getcontext…;
 * GCC's ECF_RETURNS_TWICE) in every function it compiles, span or not:
 *
 *     depth = __spanprof_setjmp_depth ();
 *     setjmp (env);
 *     __spanprof_setjmp_return (depth);
 *
 * Between the two calls the thread's stack does not change, so on the first return the depth is
 * the same and nothing happens.  On a later return (longjmp, siglongjmp, setcontext) every span
 * entered since setjmp returned has been jumped out of: the frames above DEPTH are popped here,
 * as abandoned, their time counted up to now (what the frame-address repair in stack.c does,
 * which stays for setjmp calls in code built without the plugin).  Like that repair, popped
 * frames add nothing to latency histograms, CPU time or allocation peaks; with tracing on, each
 * gets its end event now, so the trace shows the spans ending at the return from setjmp.
 *
 * DEPTH counts frames, not a pointer: the frame array may be reallocated (grown) between the two
 * calls, the thread may get its data between them (the sentinel thread has depth 0), and entries
 * past the depth cap are parked (counted, not recorded; see stack.c), which DEPTH includes.
 */
#include "record/clock.h"
#include "record/record.h"

/* Returned while the runtime is busy on this thread (a signal handler interrupting it): the
 * stack may be mid-change, so the matching return leaves it alone. */
#define NO_DEPTH ((size_t)-1)

/* Entries on T's stack, parked ones included; 0 for a thread without data. */
static inline size_t stack_depth(const struct spanprof__thread *t)
{
    if (SPANPROF_UNLIKELY(t->park_depth))
        return (size_t)(t->parked_top - t->frames) + t->park_depth;
    return (size_t)(t->top - t->frames);
}

/* Pops T's entries above DEPTH as abandoned.  Without the re-entry flag, like stack.c's repair:
 * each step leaves the stack consistent, so a signal handler's spans nest here too. */
static SPANPROF_COLD void unwind_to(struct spanprof__thread *t, size_t depth)
{
    int saved_errno = errno; /* e.g. vfork's, read right after the call returns */
    if (t->park_depth) {
        size_t recorded = (size_t)(t->parked_top - t->frames);
        if (depth > recorded) {
            /* Only parked entries are left: keep the deeper ones that are still alive. */
            uint64_t keep = depth - recorded;
            spanprof__count_add(&t->abandoned, t->park_depth - keep);
            SPANPROF_PUBLISH(t->park_depth, keep);
            goto out;
        }
        spanprof__count_add(&t->abandoned, t->park_depth);
        spanprof__unpark(t);
    }
    uint64_t now = spanprof__clock_now();
    struct spanprof__frame *keep_top = t->frames + depth;
    while (t->top > keep_top)
        spanprof__abandon_top(t, now);
out:
    errno = saved_errno;
}

SPANPROF_API size_t __spanprof_setjmp_depth(void)
{
    if (spanprof__busy((uintptr_t)__builtin_frame_address(0)))
        return NO_DEPTH;
    return stack_depth(spanprof__tls);
}

/* A TLS load, two loads, a compare: the first return costs no more. */
SPANPROF_API void __spanprof_setjmp_return(size_t depth)
{
    struct spanprof__thread *t = spanprof__tls;
    if (SPANPROF_LIKELY(depth >= stack_depth(t)) ||
        spanprof__busy((uintptr_t)__builtin_frame_address(0)))
        return;
    unwind_to(t, depth);
}
