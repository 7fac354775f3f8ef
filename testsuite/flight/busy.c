/* busy.c — a thread busier than the trace ring: the main thread calls a tiny span in a loop (at
 * least 10 M span events per second of its CPU time) and, once every PERIOD seconds, makes one
 * request that sleeps 20 ms inside (request → nap).  A second thread does the same loop, never
 * slow, so a capture has another busy thread beside the slow one.
 *
 * usage: [BUSY_WORK=N] busy SECONDS
 * Prints "requests N" (the slow requests made) and, to stderr, nothing; with BUSY_RATE=FILE,
 * writes there the main thread's span events per CPU second, so a test can tell whether the
 * premise (≥ 10 M/s) held.  BUSY_WORK=N (default 0) gives each tick N steps of dependent
 * arithmetic, about a nanosecond each, so the benchmark can hold the event rate near a given
 * one (bench/flight.sh). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define PERIOD 1.0

static volatile uint64_t sink;
static volatile int done;
static unsigned work_steps; /* BUSY_WORK */

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((span, noinline)) static void tick(void)
{
    uint64_t x = sink;
    for (unsigned i = 0; i < work_steps; i++)
        x = x * 2654435761u + 1;
    sink = x + 1;
}

__attribute__((span, noinline)) static void nap(void)
{
    struct timespec t = {0, 20000000};
    while (nanosleep(&t, &t) != 0)
        ;
}

__attribute__((span, noinline)) static void request(void) { nap(); }

static void *other(void *arg)
{
    (void)arg;
    while (!done)
        for (int i = 0; i < 4096; i++)
            tick();
    return NULL;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 3;
    const char *work = getenv("BUSY_WORK");
    work_steps = work ? (unsigned)atoi(work) : 0;
    pthread_t t;
    pthread_create(&t, NULL, other, NULL);
    double start = clock_s(CLOCK_MONOTONIC), next = start + PERIOD / 2;
    double cpu0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    uint64_t ticks = 0, requests = 0;
    for (double now = start; now < start + seconds; now = clock_s(CLOCK_MONOTONIC)) {
        for (int i = 0; i < 4096; i++)
            tick();
        ticks += 4096;
        if (now >= next) {
            request();
            requests++;
            next = now + PERIOD;
        }
    }
    double cpu = clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    done = 1;
    pthread_join(t, NULL);
    const char *rate = getenv("BUSY_RATE");
    FILE *f = rate ? fopen(rate, "w") : NULL;
    if (f) {
        fprintf(f, "%.0f\n", cpu > 0 ? 2.0 * (double)ticks / cpu : 0);
        fclose(f);
    }
    printf("requests %llu\n", (unsigned long long)requests);
    return 0;
}
