/* coz_unmarked.c — a program with no spanprof markup at all, for coz.sh: two threads serve
 * requests in a loop, each request decoded (cheap), transformed (the bottleneck, nine times
 * decode's work) and emitted (the progress point, chosen by name at build or run time).  Runs
 * for the seconds given, however much coz slows it down. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double seconds;
static volatile uint64_t sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) uint64_t decode(uint64_t x)
{
    for (int i = 0; i < 20000; i++)
        x = x * 6364136223846793005u + 1442695040888963407u;
    return x;
}

__attribute__((noinline)) uint64_t transform(uint64_t x)
{
    for (int i = 0; i < 180000; i++)
        x = (x ^ (x >> 7)) * 6364136223846793005u + 1442695040888963407u;
    return x;
}

__attribute__((noinline)) void emit(uint64_t result)
{
    sink += result;
}

static void *serve(void *arg)
{
    uint64_t request = (uintptr_t)arg;
    double end = now() + seconds;
    while (now() < end)
        emit(transform(decode(request++)));
    return NULL;
}

int main(int argc, char **argv)
{
    seconds = argc > 1 ? atof(argv[1]) : 1;
    pthread_t other;
    if (pthread_create(&other, NULL, serve, (void *)1) != 0)
        return 1;
    serve((void *)2);
    pthread_join(other, NULL);
    puts("served");
    return 0;
}
