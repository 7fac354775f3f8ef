/* work.c — the functions the benchmark measures.  Every function in this file is a span: the
 * harness compiles it plainly, with -finstrument-functions (the floor), with the spanprof plugin
 * in whole-program mode and with -pg (for uftrace), so all variants instrument the same set.
 * Bodies are tiny so the figures are the per-call overhead; the empty asm statements stop GCC
 * from folding calls away or turning the recursion into a loop in the uninstrumented build. */
#include "bench.h"

/* The worst case: a span around almost nothing. */
__attribute__((noinline)) int bench_leaf(int x)
{
    __asm__ volatile("" : "+r"(x));
    return x * 3 + 1;
}

/* Two nested spans per call, for the threaded workload. */
__attribute__((noinline)) int bench_mid(int x)
{
    return bench_leaf(x) + 1;
}

/* Deep stacks: DEPTH nested activations of one span. */
__attribute__((noinline)) int bench_rec(int depth)
{
    if (depth == 0)
        return 0;
    int r = bench_rec(depth - 1);
    __asm__ volatile("" : "+r"(r)); /* not a tail call, not an accumulator loop */
    return r + 1;
}

/* Many distinct stacks: ten span functions that call each other along the decimal digits of
 * PATH, so paths 0..10^STACK_DEPTH-1 give that many distinct leaf stacks. */
typedef void (*step_fn)(int depth, unsigned path);
static step_fn const steps[STACK_FANOUT];

#define STEP(k)                                                                                \
    __attribute__((noinline)) static void step##k(int depth, unsigned path)                   \
    {                                                                                          \
        if (depth > 1)                                                                         \
            steps[path % STACK_FANOUT](depth - 1, path / STACK_FANOUT);                        \
        __asm__ volatile("");                                                                  \
    }
STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5) STEP(6) STEP(7) STEP(8) STEP(9)

static step_fn const steps[STACK_FANOUT] = {step0, step1, step2, step3, step4,
                                            step5, step6, step7, step8, step9};

/* Entry into the "stacks" workload: not itself a span-worthy function, but it is in this file so
 * every variant instruments it too (one more frame at the bottom of every stack). */
void bench_step(int depth, unsigned path)
{
    steps[path % STACK_FANOUT](depth, path / STACK_FANOUT);
}
