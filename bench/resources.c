/* resources.c — benchmark for the resource profile: prints ns per empty span call and ns per
 * malloc/free pair (in and out of a span).  Run it under the configurations to compare, e.g.
 *   SPANPROF_HISTOGRAM=0|1, SPANPROF_CPU=1, LD_PRELOAD=libspanprof-alloc.so [SPANPROF_ALLOC=1]
 * Build: gcc -O2 -fplugin=spanplugin.so bench/resources.c -Wl,--no-as-needed -lspanprof -o bench-resources
 */
#include <spanprof.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void *volatile sink;

__attribute__((span, noinline)) void empty(void)
{
    __asm__ volatile("");
}

__attribute__((span, noinline)) void allocs(int n)
{
    for (int i = 0; i < n; i++) {
        void *p = malloc(64);
        sink = p;
        free(p);
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long spans = argc > 1 ? atol(argv[1]) : 5000000, pairs = 5000000;
    double t0 = now();
    for (long i = 0; i < spans; i++)
        empty();
    double t1 = now();
    allocs((int)pairs);
    double t2 = now();
    printf("span %.2f ns  malloc+free %.2f ns\n", (t1 - t0) / spans, (t2 - t1) / pairs);
    return 0;
}
