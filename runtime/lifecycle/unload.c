/* unload.c — the runtime's own unload: when the library holding it (libspanprof.so, or a library
 * with libspanprof.a linked in) is unloaded by dlclose, nothing of it may run afterwards, and its
 * profile must not be lost.
 *
 * The destructor below runs in two situations: at process exit and when the object is unloaded.
 * At exit, exit() has already run the atexit handlers, the runtime's write among them
 * (start.c sets spanprof__exit_ran), and nothing is left to do.  At dlclose the object's
 * destructors run before its atexit handlers (those run from crtstuff's __cxa_finalize call, the
 * object's first destructor, so run last), so the flag is not set yet: that is an unload.  Then:
 *  1. the stop stages (SPANPROF_STOP_STAGE): signal handlers put back (signals.c), the writer
 *     thread ended and joined (writer.c), and whatever other parts registered;
 *  2. the profile written, as at exit;
 *  3. the thread-exit key deleted, so no thread that ends later calls into unmapped code
 *     (the fork handlers go by themselves: glibc drops those an object registered at its unload);
 *  4. every thread's open spans charged up to now and its data marked ended, every site pointer
 *     turned to a copy the runtime owns (record/siteretire.c), and the whole handed over to a copy
 *     of the runtime loaded later (handover.c).
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "collect/collect.h"
#include "lifecycle/lifecycle.h"
#include "record/clock.h"
#include "record/siteretire.h"

int spanprof__exit_ran;

/* Threads that are still running become ended ones: their open frames charged up to NOW.  None of
 * them runs the runtime's code any more (it is being unmapped). */
static void end_threads(uint64_t now)
{
    for (struct spanprof__thread *t = spanprof__g.threads; t; t = t->next) {
        if (__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE))
            continue;
        spanprof__thread_refresh_name(t);
        if (!spanprof__flags.counting)
            spanprof__thread_settle(t, now);
        t->end_tick = now;
        t->open_at_exit = spanprof__thread_open_frames(t);
        __atomic_store_n(&t->exited, 1, __ATOMIC_RELEASE);
    }
}

__attribute__((destructor)) static void unload(void)
{
    if (!__atomic_load_n(&spanprof__flags.recording, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&spanprof__exit_ran, __ATOMIC_ACQUIRE))
        return;
    struct spanprof__guard guard = spanprof__guard_enter();
    spanprof__stop();
    spanprof__write_final();
    pthread_key_delete(spanprof__g.key);
    uint64_t now = spanprof__clock_now();
    spanprof__lock();
    end_threads(now);
    struct spanprof__retire r = {.all = 1};
    if (spanprof__retire_collect(&r) == 0) {
        spanprof__retire_apply(&r);
        spanprof__trace_retire_sites(&r);
        spanprof__retire_end(&r);
        spanprof__handover_leave(&spanprof__outputs);
    }
    spanprof__unlock();
    spanprof__guard_leave(guard);
}
