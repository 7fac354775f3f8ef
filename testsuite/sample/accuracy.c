/* accuracy.c — two CPU-bound spans doing work in a 7:3 ratio and one sleeping span, in turns:
 * 5,000 rounds of work_a (140 µs), work_b (60 µs) and nap, which sleeps 2 ms every tenth round
 * and returns at once otherwise — about two seconds, half of it asleep.  The working spans are
 * shorter than the sampler's period (1 ms), so most samples that find nap asleep follow CPU time
 * the thread used in the working spans: charged to nap, it would make a sleeping span look busy.
 * The work is a busy loop for a stretch of wall time, so the shares stay the same on a loaded
 * machine, where a fixed number of iterations would take longer from one run to the next.  Each
 * span also measures its own wall time with the monotonic clock, and the program prints those
 * totals ("truth NAME NS") so the test can compare the profile's shares with what this run really
 * did; it also measures the CPU time each working span used ("cputruth NAME NS": on a loaded
 * machine a span busy for 140 µs of wall time gets what CPU the scheduler gives it, not 70 % of
 * the pair's) and the process used ("cpu process NS"), which the spans' CPU times must match. */
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

static volatile uint64_t sink;
static uint64_t truth[3], cpu_truth[2];

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Busy for US microseconds of wall time; returns the time it took. */
static uint64_t busy(uint64_t us)
{
    uint64_t t0 = now_ns(), t = t0;
    while (t - t0 < us * 1000u) {
        for (int i = 0; i < 100; i++)
            sink += (uint64_t)i ^ (sink >> 3);
        t = now_ns();
    }
    return t - t0;
}

__attribute__((span, noinline)) static void work_a(void)
{
    uint64_t c0 = thread_cpu_ns();
    truth[0] += busy(140);
    cpu_truth[0] += thread_cpu_ns() - c0;
}

__attribute__((span, noinline)) static void work_b(void)
{
    uint64_t c0 = thread_cpu_ns();
    truth[1] += busy(60);
    cpu_truth[1] += thread_cpu_ns() - c0;
}

__attribute__((span, noinline)) static void nap(int round)
{
    uint64_t t0 = now_ns();
    struct timespec ts = {0, 2000000}; /* 2 ms */
    if (round % 10 == 9)
        while (nanosleep(&ts, &ts) != 0)
            ;
    truth[2] += now_ns() - t0;
}

int main(void)
{
    for (int i = 0; i < 5000; i++) {
        work_a();
        work_b();
        nap(i);
    }
    printf("truth work_a %llu\ntruth work_b %llu\ntruth nap %llu\n", (unsigned long long)truth[0],
           (unsigned long long)truth[1], (unsigned long long)truth[2]);
    printf("cputruth work_a %llu\ncputruth work_b %llu\n", (unsigned long long)cpu_truth[0],
           (unsigned long long)cpu_truth[1]);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("cpu process %llu\n",
           (unsigned long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000u +
               (unsigned long long)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u);
    return 0;
}
