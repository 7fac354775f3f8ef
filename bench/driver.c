/* driver.c — main program of the benchmark workloads; never instrumented.
 *
 *   work WORKLOAD DIVISOR
 * runs one workload at 1/DIVISOR of its normal size (slow tracers get smaller runs, the figures
 * are per call) and prints one line:
 *   calls=N stacks=S cpu_ns=C wall_ns=W
 * CALLS is the number of span calls made, STACKS the number of distinct stacks they form, CPU_NS
 * the process CPU time of the workload (all threads), WALL_NS its wall time.  The harness uses
 * CPU time: on a loaded machine it is far steadier than wall time.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

#define THREADS 8

static unsigned long long now_ns(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static volatile int sink;

/* One tiny span, N times in a loop. */
static unsigned long long tight(long n, unsigned long long *stacks)
{
    int s = 0;
    for (long i = 0; i < n; i++)
        s += bench_leaf((int)i);
    sink = s;
    *stacks = 1;
    return (unsigned long long)n;
}

/* N/DEPTH descents to depth DEPTH of one recursive span. */
static unsigned long long recursive(long n, unsigned long long *stacks)
{
    const int depth = 1000;
    long reps = n / depth;
    int s = 0;
    for (long i = 0; i < reps; i++)
        s += bench_rec(depth - 1);
    sink = s;
    *stacks = depth;
    return (unsigned long long)reps * depth;
}

static void *thread_body(void *arg)
{
    long n = *(long *)arg;
    int s = 0;
    for (long i = 0; i < n; i++)
        s += bench_mid((int)i);
    sink = s;
    return NULL;
}

/* THREADS threads, each calling a span that calls another one. */
static unsigned long long threads(long n, unsigned long long *stacks)
{
    pthread_t tid[THREADS];
    long per = n / 2 / THREADS;
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&tid[i], NULL, thread_body, &per) != 0) {
            perror("pthread_create");
            exit(1);
        }
    for (int i = 0; i < THREADS; i++)
        pthread_join(tid[i], NULL);
    *stacks = 2;
    return (unsigned long long)per * THREADS * 2;
}

/* Sweeps over all 10^STACK_DEPTH paths of the step functions: many distinct stacks, and the
 * call tree's one-entry child cache misses on most calls. */
static unsigned long long stacks(long n, unsigned long long *nstacks)
{
    unsigned paths = 1;
    unsigned long long nodes = 1, level = 1;
    for (int i = 0; i < STACK_DEPTH; i++) {
        paths *= STACK_FANOUT;
        level *= STACK_FANOUT;
        nodes += level;
    }
    long sweeps = n / ((long)paths * (STACK_DEPTH + 1));
    if (sweeps < 1 && n > 0)
        sweeps = 1;
    for (long s = 0; s < sweeps; s++)
        for (unsigned p = 0; p < paths; p++)
            bench_step(STACK_DEPTH, p);
    *nstacks = nodes;
    return (unsigned long long)sweeps * paths * (STACK_DEPTH + 1);
}

static const struct {
    const char *name;
    unsigned long long (*run)(long n, unsigned long long *stacks);
    long n; /* span calls at divisor 1 */
} workloads[] = {
    {"tight", tight, 20000000},
    {"recursive", recursive, 10000000},
    {"threads", threads, 16000000},
    {"stacks", stacks, 5000000},
};

int main(int argc, char **argv)
{
    long div = argc > 2 ? atol(argv[2]) : 1;
    for (size_t i = 0; argc > 1 && i < sizeof workloads / sizeof workloads[0]; i++) {
        if (strcmp(argv[1], workloads[i].name) != 0)
            continue;
        unsigned long long nstacks = 0;
        unsigned long long c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID), w0 = now_ns(CLOCK_MONOTONIC);
        unsigned long long calls = workloads[i].run(workloads[i].n / (div > 0 ? div : 1), &nstacks);
        unsigned long long c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID), w1 = now_ns(CLOCK_MONOTONIC);
        printf("calls=%llu stacks=%llu cpu_ns=%llu wall_ns=%llu\n", calls, nstacks, c1 - c0,
               w1 - w0);
        return 0;
    }
    fprintf(stderr, "usage: %s tight|recursive|threads|stacks [DIVISOR]\n", argv[0]);
    return 2;
}
