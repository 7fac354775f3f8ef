/* coz_workload.c — a small workload for the coz end-to-end test: two balanced spans called
 * often for a few seconds, so coz runs experiments and reports their latency points, and two
 * progress points (one by attribute, one by macro) for its throughput points. */
#include <spanprof.h>
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

SPAN_NAMED("cozwork.inner") __attribute__((noinline)) static void inner(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        sink += i * i;
}

SPAN_NAMED("cozwork.outer") PROGRESS_POINT_NAMED("cozwork.item") __attribute__((noinline))
static void outer(unsigned long n)
{
    inner(n);
    inner(n / 2);
}

int main(int argc, char **argv)
{
    unsigned long items = argc > 1 ? strtoul(argv[1], NULL, 10) : 40000;
    for (unsigned long i = 0; i < items; i++) {
        outer(2000);
        if (i % 2 == 0)
            SPANPROF_PROGRESS("cozwork.even");
    }
    printf("done %lu\n", items);
    return 0;
}
