/* cputime.c — this thread's CPU time, for SPANPROF_CPU: its CPU clock, CLOCK_THREAD_CPUTIME_ID;
 * and another thread's, read through its clock id, for the cost budget (budget.c, budgetoff.c).
 *
 * The clock is the scheduler's exact run time of the thread (plus what the running slice has
 * used so far), so the CPU time of a span is what the thread ran between its enter and its exit,
 * and the spans' figures add up to the thread's.  getrusage(RUSAGE_THREAD), used before, is not:
 * Linux splits that run time into user and system time in the ratio of tick samples and keeps
 * each part from going backwards, so at span granularity its deltas land on the wrong spans (a
 * span that slept 2 ms every tenth round was charged 13 % of its wall time as CPU, spans that
 * only computed 8-11 % of theirs).  No cheap clock gives an exact user/system split, so there
 * is none.  Cost: one system call (no vDSO path for a thread CPU clock); bench/cputime.c
 * measures the methods.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <time.h>

#include "collect/collect.h"

uint64_t spanprof__cputime_ns(void)
{
    struct timespec ts;
    int saved_errno = errno;
    uint64_t ns = 0;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
        ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    errno = saved_errno;
    return ns;
}

uint64_t spanprof__thread_cpu_ns(pid_t tid)
{
    struct timespec ts;
    if (clock_gettime((clockid_t)spanprof__thread_cpu_clock(tid), &ts) != 0)
        return UINT64_MAX; /* gone */
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
