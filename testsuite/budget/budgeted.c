/* budgeted.c — a program a cost budget must act on, built whole-program with every function a
 * span (-fplugin-arg-spanplugin-all, min-size=0): tiny() is a few instructions called 100,000
 * times a round, so recording it costs several times its own time; marked() is as small but
 * marked with the attribute (never switched off); work() and medium() are long.  chain0() to
 * chain15() wrap one another around leaf(), about 1 us: each costs little against its own time,
 * but CHAIN_CALLS calls of all seventeen cost several times the budget.  Rounds run until
 * SECONDS have passed; THREADS workers (default 1) run them side by side.
 *
 * usage: budgeted SECONDS [THREADS]
 * Prints the calls the program made itself: "rounds N", "tiny N", "marked N". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define PER_ROUND 100000

static volatile long sink;
static double deadline;
static long rounds_done;

__attribute__((noinline)) static long tiny(long x)
{
    return x * 3 + 1;
}

__attribute__((span, noinline)) static long marked(long x)
{
    return x ^ 5;
}

__attribute__((noinline)) static long work(long n)
{
    long s = 0;
    for (long i = 0; i < n; i++) {
        s += tiny(i);
        if (i % 64 == 0)
            s += marked(i);
    }
    return s;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* About US microseconds of clock reads. */
static void spin(double us)
{
    double end = now() + us * 1e-6;
    while (now() < end)
        sink++;
}

__attribute__((noinline)) static void medium(void)
{
    spin(50);
}

#define CHAIN_CALLS 400
__attribute__((noinline)) static void leaf(void)
{
    spin(1);
}
#define CHAIN(n, inner)                                                                          \
    __attribute__((noinline)) static void chain##n(void)                                         \
    {                                                                                            \
        inner();                                                                                 \
        sink++;                                                                                  \
    }
CHAIN(15, leaf)
CHAIN(14, chain15)
CHAIN(13, chain14)
CHAIN(12, chain13)
CHAIN(11, chain12)
CHAIN(10, chain11)
CHAIN(9, chain10)
CHAIN(8, chain9)
CHAIN(7, chain8)
CHAIN(6, chain7)
CHAIN(5, chain6)
CHAIN(4, chain5)
CHAIN(3, chain4)
CHAIN(2, chain3)
CHAIN(1, chain2)
CHAIN(0, chain1)

static void *worker(void *arg)
{
    (void)arg;
    long rounds = 0;
    while (now() < deadline) {
        sink += work(PER_ROUND);
        medium();
        for (int i = 0; i < CHAIN_CALLS; i++)
            chain0();
        rounds++;
    }
    __atomic_add_fetch(&rounds_done, rounds, __ATOMIC_RELAXED);
    return NULL;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 2;
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    deadline = now() + seconds;
    pthread_t t[16];
    for (int i = 1; i < threads && i < 16; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    worker(NULL);
    for (int i = 1; i < threads && i < 16; i++)
        pthread_join(t[i], NULL);
    printf("rounds %ld\ntiny %ld\nmarked %ld\n", rounds_done, rounds_done * PER_ROUND,
           rounds_done * ((PER_ROUND + 63) / 64));
    return 0;
}
