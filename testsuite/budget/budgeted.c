/* budgeted.c — a program a cost budget must act on, built whole-program with every function a
 * span (-fplugin-arg-spanplugin-all, min-size=0): tiny() is a few instructions called 100,000
 * times a round, so recording it costs several times its own time; marked() is as small but
 * marked with the attribute (never switched off); work() and medium() are long.  chain0() to
 * chain15() wrap one another around leaf(), about half a microsecond: each costs little against
 * its own time, but CHAIN_CALLS calls of all seventeen cost more than the budget even where a
 * span call is cheap (5 ns; with 1 us and 400 calls they fitted in it there).  Rounds run until
 * SECONDS have passed; THREADS workers (default 1) run them side by side.
 *
 * With "lead", a round is instead LOOKUPS calls of lookup(), about 160 ns each, each followed by
 * about 650 ns of work in the worker itself, then PER_LEAD_ROUND calls of tiny() and medium():
 * a fifth of the time (twice the tenth that makes a span lead, as the budget's first tick judges
 * from about a millisecond of the program) in calls that each cost more than a 10 % budget's
 * share of their own time, but that together fit in it once tiny() is off — a span a profile of
 * the run is read by.
 *
 * With "rest", the program sleeps 0.2 s once its other threads have ended: the budget's last tick
 * then comes after they ended, and has to count the time they spent since the tick before.
 *
 * With "phase", work() calls tiny2() in place of tiny() in the rounds of the second half of the
 * run: a call path new to a budget whose looks have slowed down by then, the program having
 * changed nothing for half the run.
 *
 * usage: budgeted SECONDS [THREADS [lead|rest|phase]]
 * Prints the calls the program made itself: "rounds N", "tiny N", "marked N" (and with lead,
 * "lookup N"; with phase, "tiny2 N"). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PER_ROUND 100000
#define PER_LEAD_ROUND 2000
#define LOOKUPS 1000

static volatile long sink;
static double deadline;
static long rounds_done, rounds_later; /* all, and those of phase's second half */
static int lead, phase;
static double halfway;

__attribute__((noinline)) static long tiny(long x)
{
    return x * 3 + 1;
}

__attribute__((span, noinline)) static long marked(long x)
{
    return x ^ 5;
}

__attribute__((noinline)) static long tiny2(long x)
{
    return x * 5 + 3;
}

/* LATER: phase's second half, which calls tiny2() in place of tiny(). */
__attribute__((noinline)) static long work(long n, int later)
{
    long s = 0;
    for (long i = 0; i < n; i++) {
        s += later ? tiny2(i) : tiny(i);
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

#define CHAIN_CALLS 1000
__attribute__((noinline)) static void leaf(void)
{
    spin(0.5);
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

/* N steps of dependent arithmetic (about 1.2 ns each here), and no call. */
#define CHURN(x, n)                                                                              \
    for (long k_ = 0; k_ < (n); k_++) {                                                          \
        x = x * 31 + 7;                                                                          \
        __asm__ volatile("" : "+r"(x));                                                          \
    }

__attribute__((noinline)) static long lookup(long x)
{
    CHURN(x, 170)
    return x;
}

static void *worker(void *arg)
{
    (void)arg;
    long rounds = 0, later = 0;
    while (now() < deadline) {
        if (lead) {
            long x = sink;
            for (int i = 0; i < LOOKUPS; i++) {
                x = lookup(x);
                CHURN(x, 560)
            }
            sink += x + work(PER_LEAD_ROUND, 0);
            medium();
        } else {
            int second_half = phase && now() >= halfway;
            sink += work(PER_ROUND, second_half);
            later += second_half;
            medium();
            for (int i = 0; i < CHAIN_CALLS; i++)
                chain0();
        }
        rounds++;
    }
    __atomic_add_fetch(&rounds_done, rounds, __ATOMIC_RELAXED);
    __atomic_add_fetch(&rounds_later, later, __ATOMIC_RELAXED);
    return NULL;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 2;
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    lead = argc > 3 && !strcmp(argv[3], "lead");
    phase = argc > 3 && !strcmp(argv[3], "phase");
    long per_round = lead ? PER_LEAD_ROUND : PER_ROUND;
    deadline = now() + seconds;
    halfway = deadline - seconds / 2;
    pthread_t t[16];
    for (int i = 1; i < threads && i < 16; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    worker(NULL);
    for (int i = 1; i < threads && i < 16; i++)
        pthread_join(t[i], NULL);
    if (argc > 3 && !strcmp(argv[3], "rest"))
        nanosleep(&(struct timespec){0, 200000000}, NULL);
    printf("rounds %ld\ntiny %ld\nmarked %ld\n", rounds_done,
           (rounds_done - rounds_later) * per_round, rounds_done * ((per_round + 63) / 64));
    if (phase)
        printf("tiny2 %ld\n", rounds_later * per_round);
    if (lead)
        printf("lookup %ld\n", rounds_done * LOOKUPS);
    return 0;
}
