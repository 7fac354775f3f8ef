/* writer.c — who writes the profile, and when: one write at a time (process exit,
 * spanprof_flush, dumps), and the writer thread that writes on behalf of signal handlers and on
 * the SPANPROF_DUMP_INTERVAL timer.
 *
 * A signal handler may not write (json-c, malloc and stdio are not async-signal-safe, and the
 * interrupted thread may hold their locks or the runtime's): it only bumps a request counter and
 * wakes the writer thread with a futex, and may wait, with a deadline, for the "done" counter to
 * catch up — both with async-signal-safe calls only.
 *
 * The writer also writes the flight recorder's captures (flight.c): a trigger wakes it without a
 * request (spanprof__writer_kick), and it serves their queue at every wake-up, before any write.
 * All wake-ups go through one futex word, "wake", bumped by every request and kick.  It also
 * runs SPANPROF_BUDGET's looks and ticks (collect/budget.c), waking when one is due.
 *
 * The writer thread exists only in processes that may need it (see start.c): created lazily,
 * never from a signal handler, with every signal blocked (so no handler ever runs on it and
 * waits for itself).  fork does not copy it: the child starts its own if the parent had one.
 * When the library holding the runtime is unloaded, a stop stage ends and joins it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "collect/budget.h"
#include "lifecycle/lifecycle.h"

static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;
static int final_written; /* after the exit write, nothing more is written */
int spanprof__image_wrote;

static pthread_mutex_t create_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t writer_pid; /* the process whose writer thread runs; 0: none */
static double interval;  /* SPANPROF_DUMP_INTERVAL seconds, 0: no timer */
static uint32_t requests, done; /* futex words */
static uint32_t wake;           /* futex word the writer waits on: bumped by requests and kicks */
static uint32_t started;        /* futex word: the writer thread is in its loop */
static int last_requested;      /* the process dies once this write is done (a signal) */
static int stopping;            /* the runtime is being unloaded: the thread returns */
static pthread_t writer;        /* joined when the runtime is unloaded */

static long futex(uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
    return syscall(SYS_futex, word, op, val, timeout, NULL, 0);
}

int spanprof__write_serial(void)
{
    pthread_mutex_lock(&write_lock);
    int rc = 0;
    if (!final_written) {
        spanprof__image_wrote = 1;
        rc = spanprof__write_all(&spanprof__outputs, 0);
    }
    pthread_mutex_unlock(&write_lock);
    return rc;
}

void spanprof__write_final(void)
{
    spanprof__flight_serve(1); /* captures noted but not written yet */
    pthread_mutex_lock(&write_lock);
    if (!final_written) {
        spanprof__image_wrote = 1;
        spanprof__write_all(&spanprof__outputs, 1);
        spanprof__live_final(1);
        final_written = 1;
    }
    pthread_mutex_unlock(&write_lock);
}

static struct timespec ts_of(double sec)
{
    return (struct timespec){(time_t)sec, (long)((sec - floor(sec)) * 1e9)};
}

static double now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *writer_main(void *arg)
{
    /* Requests made between pthread_create and now are served too. */
    uint32_t served = (uint32_t)(uintptr_t)arg;
    double next = interval > 0 ? now_sec() + interval : 0;
    __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
    futex(&started, FUTEX_WAKE_PRIVATE, 1, NULL);
    for (;;) {
        uint32_t k = __atomic_load_n(&wake, __ATOMIC_ACQUIRE);
        uint32_t r = __atomic_load_n(&requests, __ATOMIC_ACQUIRE);
        if (__atomic_load_n(&stopping, __ATOMIC_ACQUIRE))
            return NULL;
        /* A terminating signal's last write takes every capture first. */
        double due = spanprof__flight_serve(r != served &&
                                            __atomic_load_n(&last_requested, __ATOMIC_ACQUIRE));
        double budget = spanprof__budget_serve();
        if (budget >= 0 && (due < 0 || budget < due))
            due = budget; /* the sooner of the two: both are served at every wake-up */
        if (r == served) {
            double left = next > 0 ? next - now_sec() : 0;
            if (next == 0 || left > 0) {
                if (due >= 0 && (next == 0 || due < left))
                    left = due;
                struct timespec t = ts_of(left);
                futex(&wake, FUTEX_WAIT_PRIVATE, k, next > 0 || due >= 0 ? &t : NULL);
                continue;
            }
            next += interval;
            if (next < now_sec()) /* a write longer than the interval: no burst to catch up */
                next = now_sec() + interval;
            spanprof__write_serial();
            continue;
        }
        spanprof__write_serial();
        if (__atomic_load_n(&last_requested, __ATOMIC_ACQUIRE))
            spanprof__live_final(1);
        served = r;
        __atomic_store_n(&done, r, __ATOMIC_RELEASE);
        futex(&done, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
    }
    return NULL;
}

void spanprof__writer_ensure(void)
{
    pid_t pid = getpid();
    if (__atomic_load_n(&writer_pid, __ATOMIC_ACQUIRE) == pid)
        return;
    pthread_mutex_lock(&create_lock);
    if (writer_pid != pid) {
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old); /* the new thread inherits the mask */
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_t th; /* joinable: joined only when the runtime is unloaded (stop below) */
        void *served = (void *)(uintptr_t)__atomic_load_n(&requests, __ATOMIC_ACQUIRE);
        __atomic_store_n(&started, 0, __ATOMIC_RELAXED);
        if (pthread_create(&th, &attr, writer_main, served) == 0) {
            pthread_setname_np(th, "spanprof-write");
            writer = th;
            /* A new call path wakes it when the budget's looks have slowed down (budget.c). */
            __atomic_store_n(&spanprof__new_path_notify, spanprof__writer_kick, __ATOMIC_RELEASE);
            __atomic_store_n(&writer_pid, pid, __ATOMIC_RELEASE);
            /* The program goes on once the new thread is parked in its loop (at most 1 s): a
             * fork right after this span must not find it half started, holding some lock of
             * the allocator's that the child would inherit (glibc's malloc guards fork itself;
             * other allocators, ASan's among them, do not). */
            struct timespec limit = {1, 0};
            while (!__atomic_load_n(&started, __ATOMIC_ACQUIRE) &&
                   futex(&started, FUTEX_WAIT_PRIVATE, 0, &limit) == 0)
                ;
        }
        pthread_attr_destroy(&attr);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    pthread_mutex_unlock(&create_lock);
}

int spanprof__writer_request(uint32_t *ticket)
{
    if (__atomic_load_n(&writer_pid, __ATOMIC_ACQUIRE) != getpid())
        return -1;
    *ticket = __atomic_add_fetch(&requests, 1, __ATOMIC_ACQ_REL);
    __atomic_add_fetch(&wake, 1, __ATOMIC_ACQ_REL);
    futex(&wake, FUTEX_WAKE_PRIVATE, 1, NULL);
    return 0;
}

void spanprof__writer_kick(void)
{
    if (__atomic_load_n(&writer_pid, __ATOMIC_ACQUIRE) != getpid())
        return;
    __atomic_add_fetch(&wake, 1, __ATOMIC_ACQ_REL);
    futex(&wake, FUTEX_WAKE_PRIVATE, 1, NULL);
}

int spanprof__writer_request_last(uint32_t *ticket)
{
    __atomic_store_n(&last_requested, 1, __ATOMIC_RELEASE);
    return spanprof__writer_request(ticket);
}

int spanprof__writer_wait(uint32_t ticket, int ms)
{
    struct timespec now, end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += ms / 1000;
    end.tv_nsec += (long)(ms % 1000) * 1000000;
    if (end.tv_nsec >= 1000000000) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000;
    }
    for (;;) {
        uint32_t d = __atomic_load_n(&done, __ATOMIC_ACQUIRE);
        if ((int32_t)(d - ticket) >= 0)
            return 0;
        clock_gettime(CLOCK_MONOTONIC, &now);
        struct timespec left = {end.tv_sec - now.tv_sec, end.tv_nsec - now.tv_nsec};
        if (left.tv_nsec < 0) {
            left.tv_sec--;
            left.tv_nsec += 1000000000;
        }
        if (left.tv_sec < 0)
            return -1;
        futex(&done, FUTEX_WAIT_PRIVATE, d, &left);
    }
}

/* In a fork child: the locks may have been held by a thread that does not exist here, and the
 * writer thread is gone; start a new one if the parent had one. */
static void fork_child(void)
{
    int had_writer = writer_pid != 0;
    pthread_mutex_init(&write_lock, NULL);
    pthread_mutex_init(&create_lock, NULL);
    writer_pid = 0;
    requests = done = wake = 0;
    last_requested = 0;
    spanprof__image_wrote = 0;
    if (had_writer)
        spanprof__writer_ensure();
}

void spanprof__writer_setup(double seconds)
{
    interval = seconds;
    pthread_atfork(NULL, NULL, fork_child);
}

/* The runtime is being unloaded (a stop stage): the writer thread must not outlive its code.  It
 * finishes a write in progress, then returns; joined here. */
static void stop_writer(void)
{
    if (__atomic_load_n(&writer_pid, __ATOMIC_ACQUIRE) != getpid())
        return;
    __atomic_store_n(&stopping, 1, __ATOMIC_RELEASE);
    __atomic_add_fetch(&wake, 1, __ATOMIC_ACQ_REL); /* the word it waits on changes */
    futex(&wake, FUTEX_WAKE_PRIVATE, 1, NULL);
    pthread_join(writer, NULL);
    __atomic_store_n(&writer_pid, 0, __ATOMIC_RELEASE);
}
SPANPROF_STOP_STAGE(stop_writer);
