/* sigstack.c — what the cold paths need to know about signal handlers: whether a frame address
 * lies on the thread's alternate signal stack (SA_ONSTACK handlers), and whether the runtime's
 * busy flag is still held by a live frame or was left set by a jump out of the runtime.
 *
 * Both questions are asked only on rare paths (a frame that looks abandoned, a span entered while
 * the runtime is busy), so one sigaltstack() query each time is cheap enough and always current:
 * the alternate stack is per thread and may be changed by the program at any time.
 */
#include <signal.h>

#include "record/record.h"

/* Bounds of this thread's alternate signal stack, or 0 when it has none. */
static int alt_stack(uintptr_t *lo, uintptr_t *hi)
{
    int saved_errno = errno;
    stack_t ss;
    int ok = sigaltstack(NULL, &ss) == 0 && !(ss.ss_flags & SS_DISABLE) && ss.ss_size;
    errno = saved_errno;
    if (!ok)
        return 0;
    *lo = (uintptr_t)ss.ss_sp;
    *hi = *lo + ss.ss_size;
    return 1;
}

/* A frame address is its caller's stack pointer before the call, so the outermost frame of a
 * handler may sit exactly at the top of the alternate stack: bounds are (lo, hi]. */
static int inside(uintptr_t a, uintptr_t lo, uintptr_t hi)
{
    return a > lo && a <= hi;
}

int spanprof__on_alt_stack(uintptr_t cfa)
{
    uintptr_t lo, hi;
    return alt_stack(&lo, &hi) && inside(cfa, lo, hi);
}

int spanprof__across_stacks(uintptr_t a, uintptr_t b)
{
    uintptr_t lo, hi;
    return alt_stack(&lo, &hi) && inside(a, lo, hi) != inside(b, lo, hi);
}

/* The flag holds the frame address of the runtime function that set it (record.h).  Stacks grow
 * down: a span whose function's frame address CFA is deeper than that frame on the same stack
 * runs inside it (a span run by the runtime, or by a handler that interrupted it); so does one on
 * the other side of the alternate stack's boundary (a handler on its own stack).  A span above
 * it on the same stack can only run there because the runtime's frame is gone: a longjmp out of
 * the runtime (typically a signal handler's siglongjmp while the runtime was busy).  Then the
 * flag is stale and cleared, so recording goes on for the rest of the thread's life. */
int spanprof__busy_confirm(uintptr_t cfa)
{
    uintptr_t busy = spanprof__tls_busy;
    if (!busy)
        return 0;
    if (cfa <= busy || spanprof__across_stacks(cfa, busy))
        return 1;
    spanprof__tls_busy = 0;
    return 0;
}
