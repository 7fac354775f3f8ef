/* trace_bench.c — cost of one span call (enter + exit around an empty function), printed in ns
 * per call; run it with and without SPANPROF_TRACE to see what tracing adds (make bench-trace).
 * usage: trace_bench [CALLS] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <spanprof.h>

__attribute__((span, noinline)) static void empty(void) { __asm__ volatile(""); }

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long calls = argc > 1 ? atol(argv[1]) : 20000000;
    empty(); /* registers the site and the thread */
    double best = 1e30;
    for (int round = 0; round < 5; round++) {
        double t0 = now_ns();
        for (long i = 0; i < calls; i++)
            empty();
        double per = (now_ns() - t0) / (double)calls;
        best = per < best ? per : best;
    }
    printf("%.1f ns per span call (best of 5 rounds of %ld calls)\n", best, calls);
    return 0;
}
