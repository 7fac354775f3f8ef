/* compensate.c — a chatty function (400 calls of a small leaf per call) and a quiet one (the
 * same arithmetic inline), called in turns.  Built three ways by compensate.sh: plainly, with
 * only chatty and quiet marked (-DMARK='__attribute__((span))'), and with every function a span
 * (all, min-size=0), where the leaf's 8 M span calls would otherwise make chatty look about
 * twice as slow as it is.  Prints the wall time of its loop ("loop NS"), which main's span must
 * match in the plain build's terms. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef MARK
#define MARK
#endif

static volatile uint64_t sink;

/* A few dozen ns of dependent arithmetic: enough that the calibration's error from one run to
 * the next on a shared machine (call_ns 14 to 42 ns in runs of one binary) stays well inside the
 * test's bounds, little enough that the span calls still double the leaf's time. */
#define STEPS 32
static inline uint64_t step(uint64_t x)
{
    for (int k = 0; k < STEPS; k++)
        x = x * 2654435761u + 1;
    return x;
}

__attribute__((noinline)) static uint64_t leaf(uint64_t x) { return step(x); }

MARK __attribute__((noinline)) static void chatty(void)
{
    uint64_t s = sink;
    for (int i = 0; i < 400; i++)
        s = leaf(s);
    sink = s;
}

MARK __attribute__((noinline)) static void quiet(void)
{
    uint64_t s = sink;
    for (int i = 0; i < 400; i++)
        s = step(s);
    sink = s;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 20000;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < rounds; i++) {
        chatty();
        quiet();
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("loop %lld\n", (long long)(b.tv_sec - a.tv_sec) * 1000000000 + (b.tv_nsec - a.tv_nsec));
    return 0;
}
