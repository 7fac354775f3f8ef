/* flight.c — SPANPROF_FLIGHT, the configuration side: the settings from the options, and the
 * captures, written by the writer thread (writer.c) for the triggers the collectors queued
 * (collect/flight.c) — a slow call (SPANPROF_SLOW) or a request (`spanprof dump --flight`).
 *
 * A capture is a Chrome trace (report/trace_writer.c) of every thread's events from SPANPROF_FLIGHT
 * seconds before the trigger up to it (and the whole slow call when it is longer), in
 * SPANPROF_SLOW_DIR as SPAN.PID.TIME.trace.json, written through a temporary file and renamed
 * (report/outfile.c).  None is written while the directory holds SPANPROF_SLOW_MAX of them; the
 * first capture that cannot be written says why in one line, later ones say nothing.  The
 * process exit, a terminating signal's last write and every wake-up of the writer serve the queue
 * first.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect/collect.h"
#include "collect/flight.h"
#include "config/config.h"
#include "config/duration.h"
#include "config/options.h"
#include "record/clock.h"
#include "report/outfile.h"

static const char *dir;
static uint64_t max_files;
static char globs[SPANPROF__FLIGHT_RULES][256];
static int error_said;
static pthread_mutex_t serve_lock = PTHREAD_MUTEX_INITIALIZER;

static void add_rule(const char *glob, size_t len, uint64_t ns, void *arg)
{
    (void)arg;
    struct spanprof__flight_settings *f = &spanprof__flight;
    if (f->nrules == SPANPROF__FLIGHT_RULES || len >= sizeof globs[0])
        return;
    memcpy(globs[f->nrules], glob, len);
    globs[f->nrules][len] = 0;
    f->rules[f->nrules] = (struct spanprof__flight_rule){globs[f->nrules], ns};
    f->nrules++;
}

static void fork_child(void)
{
    pthread_mutex_init(&serve_lock, NULL);
}

int spanprof__flight_setup(const struct spanprof__options *o, int counting)
{
    struct spanprof__flight_settings *f = &spanprof__flight;
    if (o->flight <= 0) {
        if (o->slow || o->flight_min)
            fprintf(stderr, "spanprof: warning: %s needs SPANPROF_FLIGHT=SECONDS; ignored\n",
                    o->slow ? "SPANPROF_SLOW" : "SPANPROF_FLIGHT_MIN");
        return 0;
    }
    if (counting) {
        fprintf(stderr, "spanprof: warning: SPANPROF_FLIGHT needs timed recording (not "
                        "SPANPROF=count or sample); no flight recorder\n");
        return 0;
    }
    f->on = 1;
    f->seconds = o->flight;
    f->interval = o->slow_interval;
    f->min_ns = o->trace ? 0 : o->flight_min;
    if (o->trace && o->flight_min)
        fprintf(stderr, "spanprof: warning: SPANPROF_FLIGHT_MIN does not apply with "
                        "SPANPROF_TRACE (the trace keeps every call)\n");
    if (o->slow)
        spanprof__slow_rules(o->slow, add_rule, NULL);
    dir = o->slow_dir ? o->slow_dir : "spanprof.slow";
    max_files = o->slow_max;
    spanprof__flight_notify = spanprof__writer_kick;
    pthread_atfork(NULL, NULL, fork_child);
    return 1;
}

/* Capture files in the directory now. */
static uint64_t captures_kept(void)
{
    DIR *d = opendir(dir);
    uint64_t n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        n += len > 11 && strcmp(e->d_name + len - 11, ".trace.json") == 0;
    }
    if (d)
        closedir(d);
    return n;
}

static void say_error(const char *path, const char *reason)
{
    if (__atomic_exchange_n(&error_said, 1, __ATOMIC_RELAXED))
        return;
    fprintf(stderr, "spanprof: error: cannot write capture '%s': %s (no more capture errors "
                    "are reported)\n", path, reason);
}

static void write_capture(const struct spanprof__flight_trigger *t, uint64_t suppressed)
{
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        say_error(dir, strerror(errno));
        return;
    }
    if (captures_kept() >= max_files)
        return;
    struct spanprof__capture c;
    if (spanprof__capture_begin(&c, &spanprof__outputs)) {
        say_error(dir, strerror(ENOMEM));
        return;
    }
    const struct spanprof__view *v = &c.view;
    double ns_per_tick = v->ns_per_tick > 0 ? v->ns_per_tick : 1;
    uint64_t now = spanprof__clock_now();
    uint64_t now_ns = spanprof__mono_ns();
    double since = (double)(now_ns - spanprof__g.start_mono_ns) / ns_per_tick;
    uint64_t origin = since < (double)now ? now - (uint64_t)since : 0;
    uint64_t span_ticks = (uint64_t)(spanprof__flight.seconds * 1e9 / ns_per_tick);
    uint64_t from = t->end > span_ticks ? t->end - span_ticks : 0;
    if (t->site && t->start < from)
        from = t->start;

    /* When: the trigger's wall-clock time, from now and the ticks since. */
    struct timespec real;
    clock_gettime(CLOCK_REALTIME, &real);
    double ago = now > t->end ? (double)(now - t->end) * ns_per_tick : 0;
    double at = (double)real.tv_sec + real.tv_nsec / 1e9 - ago / 1e9;
    time_t sec = (time_t)at;
    struct tm tm;
    gmtime_r(&sec, &tm);
    char stamp[32], iso[48];
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%S", &tm);
    int ms = (int)((at - (double)sec) * 1000);
    snprintf(stamp + strlen(stamp), sizeof stamp - strlen(stamp), ".%03dZ", ms);
    strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(iso + strlen(iso), sizeof iso - strlen(iso), ".%03dZ", ms);

    /* The span's name as a file name: letters, digits, '_', '-' and '.' kept, the rest '_'. */
    char name[65];
    const char *src = t->site ? t->site->name : "request";
    size_t n = 0;
    for (; src[n] && n < sizeof name - 1; n++) {
        char ch = src[n];
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                 ch == '_' || ch == '-' || (ch == '.' && n > 0);
        name[n] = ok ? ch : '_';
    }
    name[n] = 0;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s.%ld.%s.trace.json", dir, name, (long)getpid(), stamp);

    struct spanprof__trace_window win = {
        .from = from, .to = t->end, .site = t->site, .tid = t->tid, .start = t->start,
        .end = t->end, .seconds = spanprof__flight.seconds, .time = iso,
        .suppressed = suppressed,
    };
    struct spanprof__outfile of;
    int err = spanprof__outfile_open(path, "", &of);
    if (!err) {
        FILE *f = spanprof__outfile_stream(&of);
        if (!f) {
            err = errno ? errno : ENOMEM;
        } else {
            errno = 0;
            if (spanprof__trace_write_window(f, v, &c.meta, origin, &win))
                err = errno ? errno : EIO;
            if ((fflush(f) != 0 || ferror(f)) && !err)
                err = errno ? errno : EIO;
            fclose(f);
        }
        err = spanprof__outfile_finish(&of, path, err);
    }
    spanprof__capture_end(&c);
    if (err)
        say_error(path, spanprof__outfile_reason(err));
}

double spanprof__flight_serve(int force)
{
    if (!spanprof__flight.on)
        return -1;
    pthread_mutex_lock(&serve_lock);
    double wait = -1;
    for (int again = 1; again;) {
        again = 0;
        wait = -1;
        uint64_t now = spanprof__mono_ns();
        /* The oldest trigger that is due: asked for, or settled (no slower call can replace it
         * any more), or any at the end. */
        struct spanprof__flight_trigger *next = NULL;
        for (size_t i = 0; i < SPANPROF__FLIGHT_PENDING; i++) {
            struct spanprof__flight_trigger *t = &spanprof__flight_pending[i];
            if (__atomic_load_n(&t->state, __ATOMIC_ACQUIRE) != 2)
                continue;
            uint64_t due = t->noted_ns + (t->site ? SPANPROF__FLIGHT_SETTLE_NS : 0);
            if (!force && due > now) {
                double left = (double)(due - now) / 1e9;
                if (wait < 0 || left < wait)
                    wait = left;
                continue;
            }
            if (!next || t->end < next->end)
                next = t;
        }
        uint32_t ready = 2;
        if (next && __atomic_compare_exchange_n(&next->state, &ready, 3, 0, __ATOMIC_ACQUIRE,
                                                __ATOMIC_RELAXED)) {
            struct spanprof__flight_trigger copy = *next;
            __atomic_store_n(&next->state, 0, __ATOMIC_RELEASE);
            write_capture(&copy, __atomic_load_n(&spanprof__flight_suppressed, __ATOMIC_RELAXED));
        }
        again = next != NULL;
    }
    pthread_mutex_unlock(&serve_lock);
    return wait;
}
