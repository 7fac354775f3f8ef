/* process.c — process-wide recording state: the switches the recording paths test, the hooks
 * the collectors install, the thread registry's lock, the re-entry guard, and the trigger that
 * runs start-up once.
 *
 * Start-up belongs to the layers above (lifecycle/start.c reads the environment and sets up the
 * collectors and the writers); they hand their start functions to the linker with
 * SPANPROF_START_STAGE, which gathers them into the section "spanprof_start".  This file only
 * runs what it finds there, so recording starts whichever comes first: the runtime's own
 * constructor or a span run by an earlier constructor.  Stop stages (SPANPROF_STOP_STAGE, section
 * "spanprof_stop") are gathered the same way and run once, in reverse, by spanprof__stop.  (The
 * static library is one relocatable object, so linking any part of the runtime links its start
 * stages too: see Makefile.in.)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "record/clock.h"
#include "record/record.h"

struct spanprof__flags spanprof__flags = {
    .max_depth = SPANPROF_MAX_DEPTH_DEFAULT,
};
struct spanprof__hooks spanprof__hooks;
struct spanprof__process spanprof__g = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
};
SPANPROF_TLS uintptr_t spanprof__tls_busy;

/* Bounds of the start-stage section, from the linker (empty when nothing registered a stage).
 * Hidden: a second copy of the runtime in the process (static in the program, shared in a
 * library) runs its own stages, never this copy's. */
#define START_BOUND __attribute__((weak, visibility("hidden")))
extern const spanprof__start_fn __start_spanprof_start[] START_BOUND;
extern const spanprof__start_fn __stop_spanprof_start[] START_BOUND;

extern const spanprof__start_fn __start_spanprof_stop[] START_BOUND;
extern const spanprof__start_fn __stop_spanprof_stop[] START_BOUND;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int stopped;

static int started; /* the start stages have run (set last, with release) */

static void run_start_stages(void)
{
    for (const spanprof__start_fn *stage = __start_spanprof_start; stage < __stop_spanprof_start;
         stage++)
        (*stage)();
    __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
}

/* Start-up runs with every signal blocked, until pthread_once is done with it: a handler that
 * ran spans meanwhile on this thread would find the runtime busy and lose them, or, landing
 * before the busy flag is set, re-enter pthread_once and wait for itself forever.  A signal that
 * arrives meanwhile waits the few hundred microseconds start-up takes and is delivered when the
 * mask comes back, its spans recorded (run from a span's first sight, start-up is inside that
 * path's hold, record.h, which keeps the signal until the runtime is no longer busy).  (A
 * standard signal sent twice in that window is delivered once, as POSIX allows for any blocked
 * signal; real-time signals queue.  A fault while blocked still ends the process.)  Once
 * started, one load. */
void spanprof__start(void)
{
    if (__atomic_load_n(&started, __ATOMIC_ACQUIRE))
        return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_once(&once, run_start_stages);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void spanprof__stop(void)
{
    if (__atomic_exchange_n(&stopped, 1, __ATOMIC_ACQ_REL))
        return;
    for (const spanprof__start_fn *stage = __stop_spanprof_stop; stage > __start_spanprof_stop;)
        (*--stage)();
}

__attribute__((constructor)) static void start_at_load(void)
{
    spanprof__start();
}

void spanprof__lock(void)
{
    pthread_mutex_lock(&spanprof__g.lock);
}

void spanprof__unlock(void)
{
    pthread_mutex_unlock(&spanprof__g.lock);
}

void spanprof__mark_start(void)
{
    struct timespec ts;
    spanprof__g.start_mono_ns = spanprof__mono_ns();
    spanprof__g.start_tick = spanprof__clock_now();
    clock_gettime(CLOCK_REALTIME, &ts);
    spanprof__g.start_real_sec = ts.tv_sec;
    spanprof__g.start_real_nsec = ts.tv_nsec;
}

#ifdef SPANPROF_DEBUG
void spanprof__assert_fail(const char *cond, const char *file, int line)
{
    fprintf(stderr, "spanprof: internal error: %s:%d: %s\n", file, line, cond);
    abort();
}
#endif
