/* init.c — process-wide state and start-up: reads the environment, picks the clock, finds coz,
 * and registers the thread-exit key, fork handlers and the process-exit write.
 *
 * Runs from a constructor, or earlier from the first span if another constructor runs spans
 * before ours (pthread_once makes both safe).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "record/clock.h"
#include "record/internal.h"
#include "collect/resources.h"

struct spanprof__global spanprof__g = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

static pthread_once_t once = PTHREAD_ONCE_INIT;

void spanprof__lock(void)
{
    pthread_mutex_lock(&spanprof__g.lock);
}

void spanprof__unlock(void)
{
    pthread_mutex_unlock(&spanprof__g.lock);
}

static const char *env_get(const char *name)
{
    return getenv(name);
}

static void at_exit(void)
{
    spanprof__write_all();
}

static void init_once(void)
{
    int saved_errno = errno;
    int busy = spanprof__tls_busy;
    spanprof__tls_busy = 1; /* spans run by anything we call (dlsym → malloc hooks) are ignored */
    spanprof__config_load(&spanprof__g.config, env_get, stderr);
    spanprof__config_warn_unknown(environ, stderr);
    spanprof__clock_init();
    if (spanprof__g.config.counting)
        spanprof__clock_disable();
    spanprof__g.start_mono_ns = spanprof__mono_ns();
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    spanprof__g.start_real_sec = ts.tv_sec;
    spanprof__g.start_real_nsec = ts.tv_nsec;
    if (spanprof__g.config.enabled) {
        /* Present only when the program runs under `coz run` (libcoz preloaded). */
        spanprof__g.coz_get = (spanprof__coz_get_fn)dlsym(RTLD_DEFAULT, "_coz_get_counter");
        if (spanprof__g.coz_get)
            spanprof__warn_debug_info_for_coz(stderr); /* debuginfo.c */
        spanprof__res_init(); /* before any node exists: fixes the per-node data layout */
        if (pthread_key_create(&spanprof__g.key, spanprof__thread_exit_hook) == 0) {
            pthread_atfork(spanprof__fork_prepare, spanprof__fork_parent, spanprof__fork_child);
            atexit(at_exit);
            __atomic_store_n(&spanprof__g.recording, 1, __ATOMIC_RELEASE);
        }
    }
    spanprof__tls_busy = busy;
    errno = saved_errno;
}

void spanprof__init(void)
{
    pthread_once(&once, init_once);
}

__attribute__((constructor)) static void spanprof__constructor(void)
{
    spanprof__init();
}
