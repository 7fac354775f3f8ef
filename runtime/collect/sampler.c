/* sampler.c — SPANPROF=sample's sampler thread: wakes SPANPROF_SAMPLE_HZ times a second and
 * samples every thread's shadow stack (sample_data.c says what a sample charges), at a real-time
 * priority where the process may have one (run_at_once).
 *
 * No signals: the sampler reads the stacks from its own thread, so the program's system calls
 * never see EINTR because of sampling.  It blocks every signal, so none meant for the program is
 * delivered to it, and it runs no spans.  Ticks are on an absolute CLOCK_MONOTONIC schedule; a
 * pass that ends after the next tick (the process lock held by a long write) skips the ticks it
 * missed rather than running them back to back: each sample charges the time actually elapsed.
 * The ticks are SPANPROF_SAMPLE_HZ a second on average, each a random 0.5 to 1.5 periods after
 * the one before (next_interval): at a fixed period, a program that repeats itself at a divisor
 * of it (a 200 µs loop under a 1 ms period, or 997 Hz's 1.003 ms) is seen at the same point of
 * its loop sample after sample, for as long as it is not interrupted.
 *
 * Lifetime: started at start-up when the mode is on (never in other modes), restarted in a fork
 * child (which has no copy of it; a fork child that execs at once pays one thread creation),
 * stopped and joined before the process-exit write and when the runtime is unloaded
 * (spanprof__sampler_stop).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "collect/budget.h"
#include "collect/collect.h"
#include "record/clock.h"

/* close_range's flag for a private copy of the table (linux/close_range.h). */
#define SAMPLER_CLOSE_RANGE_UNSHARE (1u << 1)

static struct {
    pthread_mutex_t mu; /* stop and the wake-up (never held across a pass) */
    pthread_cond_t cv;  /* on CLOCK_MONOTONIC: the stop request wakes the thread at once */
    int stop;
    int running;        /* a thread was created and not joined (only start and stop touch it) */
    pthread_t thread;
} S = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* The sampler's own, empty descriptor table.  While a second thread shares the process's table,
 * the kernel takes a reference on the file at every descriptor system call of the program (an
 * atomic get and put; a table used by one thread is read without them): about 19 ns more per
 * epoll_wait here, 0.165 s of system time against count mode's 0.130 s on libuv's loop_count
 * benchmark, at any sampling rate.  A table of its own, with nothing in it, keeps none of the
 * program's files open either (a pipe the program closes still ends).  Linux 5.9 and later;
 * before that the table stays shared. */
static void own_descriptor_table(void)
{
#ifdef SYS_close_range
    syscall(SYS_close_range, 0u, ~0u, SAMPLER_CLOSE_RANGE_UNSHARE);
#endif
}

/* The lowest real-time priority, where the process may take it (root, CAP_SYS_NICE or an
 * RLIMIT_RTPRIO): the sampler then runs the moment it wakes, taking a CPU from whatever runs
 * there.  As an ordinary thread on a loaded machine it waits for a CPU first, and runs when the
 * thread it samples blocks or is preempted: its samples then keep step with the program and see
 * it where it waits (sample_data.c sets such late samples apart).  A pass is short (tens of
 * µs) and sleeps on the process lock if a writer holds it; the kernel's real-time throttling
 * bounds it all the same. */
static void run_at_once(void)
{
    struct sched_param at = {.sched_priority = sched_get_priority_min(SCHED_FIFO)};
    pthread_setschedparam(pthread_self(), SCHED_FIFO, &at); /* refused: as an ordinary thread */
}

/* The next tick's distance: PERIOD × a uniform 0.5 to 1.5, from a xorshift64 generator (the
 * sampler's own state, seeded from the clock: nothing needs these to be unpredictable, only out
 * of step with the program). */
static uint64_t next_interval(uint64_t period, uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return period / 2 + x % (period | 1);
}

/* The thread's own CPU time, for SPANPROF_BUDGET (collect/budget.c), which counts it as the
 * runtime's: published after each pass (a system call, about half a microsecond) only while a
 * budget is on; 0 in a fork child until its new thread's first pass. */
static uint64_t own_cpu_ns;

uint64_t spanprof__sampler_cpu_ns(void)
{
    return __atomic_load_n(&own_cpu_ns, __ATOMIC_RELAXED);
}

static void *sampler_main(void *arg)
{
    (void)arg;
    run_at_once();
    own_descriptor_table();
    /* Wake on time, not up to 50 µs late (the default slack), which would shift samples. */
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    uint64_t period = 1000000000u / spanprof__collect.sample_hz;
    uint64_t next = spanprof__mono_ns();
    uint64_t random_state = next | 1; /* xorshift's state must not be 0 */
    pthread_mutex_lock(&S.mu);
    while (!S.stop) {
        uint64_t interval = next_interval(period, &random_state);
        next += interval;
        uint64_t now = spanprof__mono_ns();
        if (next <= now)
            next = now + interval; /* late: skip the missed ticks */
        struct timespec at = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
        while (!S.stop && pthread_cond_timedwait(&S.cv, &S.mu, &at) != ETIMEDOUT)
            ;
        if (S.stop)
            break;
        pthread_mutex_unlock(&S.mu);
        uint64_t woke = spanprof__mono_ns();
        spanprof__sample_pass(woke <= next || woke - next <= period / 8); /* timely */
        if (spanprof__budget.percent > 0)
            __atomic_store_n(&own_cpu_ns, spanprof__cputime_ns(), __ATOMIC_RELAXED);
        pthread_mutex_lock(&S.mu);
    }
    pthread_mutex_unlock(&S.mu);
    return NULL;
}

int spanprof__sampler_start(void)
{
    if (S.running || !spanprof__collect.sample_hz)
        return S.running;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&S.cv, &ca);
    pthread_condattr_destroy(&ca);
    S.stop = 0;
    /* The thread starts with every signal blocked (it inherits this thread's mask). */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&S.thread, NULL, sampler_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        fprintf(stderr, "spanprof: warning: cannot start the sampler thread: %s; "
                        "SPANPROF=sample records calls only\n", strerror(rc));
        return 0;
    }
    pthread_setname_np(S.thread, "spanprof-sample");
    S.running = 1;
    return 1;
}

void spanprof__sampler_stop(void)
{
    if (!S.running)
        return;
    pthread_mutex_lock(&S.mu);
    S.stop = 1;
    pthread_cond_signal(&S.cv);
    pthread_mutex_unlock(&S.mu);
    pthread_join(S.thread, NULL);
    S.running = 0;
}
/* Nothing of the runtime may run once its library is unloaded (lifecycle/unload.c). */
SPANPROF_STOP_STAGE(spanprof__sampler_stop);

/* The child has no sampler thread, and S.mu may have been held by it at the fork. */
static void fork_child(void)
{
    pthread_mutex_init(&S.mu, NULL);
    S.running = 0;
    own_cpu_ns = 0;
    spanprof__sampler_start();
}

/* Start-up's entry: the thread and the fork handler. */
int spanprof__sampler_setup(void)
{
    pthread_atfork(NULL, NULL, fork_child);
    return spanprof__sampler_start();
}
