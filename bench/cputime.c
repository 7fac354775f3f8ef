/* cputime.c — measures the candidate ways of reading a thread's CPU time, so the choice made in
 * runtime/collect/cputime.c can be re-checked on another machine.  Prints the median ns per read
 * of 9 rounds for each method.  Build: cc -O2 bench/cputime.c -o cputime
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int perf_fd = -1, stat_fd = -1;
static volatile uint64_t sink;

static void m_thread_cputime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    sink += (uint64_t)ts.tv_nsec;
}

static void m_rusage_thread(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    sink += (uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec;
}

static void m_perf_read(void)
{
    uint64_t v;
    if (read(perf_fd, &v, sizeof v) == sizeof v)
        sink += v;
}

static void m_proc_stat(void)
{
    char buf[512];
    ssize_t n = pread(stat_fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return;
    buf[n] = 0;
    /* utime and stime are fields 14 and 15, after the ")" that ends the command name. */
    char *p = strrchr(buf, ')');
    unsigned long ut = 0, st = 0;
    if (p)
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st);
    sink += ut + st;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void bench(const char *name, void (*fn)(void), int iters)
{
    double r[9];
    for (int k = 0; k < 9; k++) {
        uint64_t t0 = now_ns();
        for (int i = 0; i < iters; i++)
            fn();
        r[k] = (double)(now_ns() - t0) / iters;
    }
    qsort(r, 9, sizeof r[0], cmp);
    printf("%-34s %8.1f ns\n", name, r[4]);
}

int main(void)
{
    struct perf_event_attr a = {0};
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.exclude_kernel = 0;
    perf_fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    stat_fd = open("/proc/thread-self/stat", O_RDONLY);
    bench("clock_gettime(THREAD_CPUTIME_ID)", m_thread_cputime, 20000);
    bench("getrusage(RUSAGE_THREAD)", m_rusage_thread, 20000);
    if (perf_fd >= 0) {
        bench("perf task-clock read()", m_perf_read, 20000);
        struct perf_event_mmap_page *pg = mmap(NULL, 4096, PROT_READ, MAP_SHARED, perf_fd, 0);
        if (pg != MAP_FAILED)
            printf("perf mmap page: cap_user_time=%d cap_user_rdpmc=%d index=%u\n",
                   (int)pg->cap_user_time, (int)pg->cap_user_rdpmc, pg->index);
        else
            printf("perf mmap page: unavailable\n");
    } else {
        printf("perf task-clock: perf_event_open failed\n");
    }
    if (stat_fd >= 0)
        bench("/proc/thread-self/stat pread+parse", m_proc_stat, 5000);
    return 0;
}
