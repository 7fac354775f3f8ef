/* flight.c — SPANPROF_FLIGHT, the configuration side: the settings from the options, and the
 * captures, written by the writer thread (writer.c) for the triggers the collectors queued
 * (collect/flight.c) — a slow call (SPANPROF_SLOW) or a request (`spanprof dump --flight`).
 *
 * A capture is a Chrome trace (report/trace_writer.c) of every thread's events from SPANPROF_FLIGHT
 * seconds before the trigger up to it (and the whole slow call when it is longer), in
 * SPANPROF_SLOW_DIR as SPAN.PID.TIME.trace.json, written through a temporary file and renamed
 * (common/outfile.c).  None is written while the directory holds SPANPROF_SLOW_MAX of them, or
 * SPANPROF_SLOW_MAX_BYTES of them in all; the
 * first capture that cannot be written says why in one line, later ones say nothing.  The
 * process exit, a terminating signal's last write and every wake-up of the writer serve the queue
 * first.
 *
 * A crash (lifecycle/signals.c) writes one more capture from its signal handler, the last
 * SPANPROF_FLIGHT seconds up to the fault, named by the signal (SIGSEGV.PID.TIME.trace.json;
 * report/safetrace.c): the path, the time stamp and the count of files kept are found here with
 * async-signal-safe calls only.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "collect/collect.h"
#include "collect/flight.h"
#include "lifecycle/lifecycle.h"
#include "common/duration.h"
#include "lifecycle/options.h"
#include "record/clock.h"
#include "common/outfile.h"

static const char *dir;
static uint64_t max_files, max_bytes;
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
    /* SPANPROF_SLOW alone keeps the default window (as `spanprof record --slow` does). */
    double seconds = o->flight > 0 ? o->flight : o->slow ? SPANPROF__FLIGHT_DEFAULT_SECONDS : 0;
    if (seconds <= 0) {
        if (o->flight_min)
            fprintf(stderr, "spanprof: warning: SPANPROF_FLIGHT_MIN needs SPANPROF_FLIGHT=SECONDS "
                            "or SPANPROF_SLOW; ignored\n");
        return 0;
    }
    if (counting) {
        fprintf(stderr, "spanprof: warning: SPANPROF_FLIGHT needs timed recording (not "
                        "SPANPROF=count or sample); no flight recorder\n");
        return 0;
    }
    f->on = 1;
    f->seconds = seconds;
    f->interval = o->slow_interval;
    f->min_ns = o->trace ? 0 : o->flight_min;
    if (o->trace && o->flight_min)
        fprintf(stderr, "spanprof: warning: SPANPROF_FLIGHT_MIN does not apply with "
                        "SPANPROF_TRACE (the trace keeps every call)\n");
    if (o->slow)
        spanprof__slow_rules(o->slow, add_rule, NULL);
    dir = o->slow_dir ? o->slow_dir : "spanprof.slow";
    max_files = o->slow_max;
    max_bytes = o->slow_max_bytes;
    spanprof__flight_notify = spanprof__writer_kick;
    pthread_atfork(NULL, NULL, fork_child);
    return 1;
}

static void say_error(const char *path, const char *reason)
{
    if (__atomic_exchange_n(&error_said, 1, __ATOMIC_RELAXED))
        return;
    fprintf(stderr, "spanprof: error: cannot write capture '%s': %s (no more capture errors "
                    "are reported)\n", path, reason);
}

/* The tick of ts 0 (process start, or the fork) for a capture written now, from the ticks since
 * start at NS_PER_TICK; NOW gets the tick it was found at.  Async-signal-safe. */
static uint64_t origin_tick(double ns_per_tick, uint64_t *now)
{
    *now = spanprof__clock_now();
    uint64_t now_ns = spanprof__mono_ns();
    double since = (double)(now_ns - spanprof__g.start_mono_ns) / ns_per_tick;
    return since < (double)*now ? *now - (uint64_t)since : 0;
}

/* Puts the N digits of V at P. */
static char *digits(char *p, unsigned v, int n)
{
    for (int i = n - 1; i >= 0; i--, v /= 10)
        p[i] = (char)('0' + v % 10);
    return p + n;
}

/* The wall-clock time AGO_NS before now as the file name's stamp (20260301T140203.042Z) and as
 * ISO 8601 (2026-03-01T14:02:03.042Z), computed by hand: gmtime_r may take a lock, and a crash
 * handler calls this.  Async-signal-safe. */
static void format_time(double ago_ns, char stamp[32], char iso[32])
{
    struct timespec real;
    clock_gettime(CLOCK_REALTIME, &real);
    double at = (double)real.tv_sec + real.tv_nsec / 1e9 - ago_ns / 1e9;
    int64_t sec = at > 0 ? (int64_t)at : 0;
    unsigned ms = (unsigned)((at - (double)sec) * 1000);
    int64_t days = sec / 86400, rest = sec % 86400;
    /* Days since 1970-01-01 to a civil date, by 400-year eras of 146097 days from 0000-03-01. */
    int64_t z = days + 719468, era = z / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153, day = doy - (153 * mp + 2) / 5 + 1;
    unsigned month = mp < 10 ? mp + 3 : mp - 9;
    unsigned year = (unsigned)(yoe + era * 400 + (month <= 2));
    unsigned f[6] = {year, month, day, (unsigned)(rest / 3600), (unsigned)(rest / 60 % 60),
                     (unsigned)(rest % 60)};
    static const int width[6] = {4, 2, 2, 2, 2, 2};
    static const char stamp_sep[6] = {0, 0, 'T', 0, 0, '.'}, iso_sep[6] = {'-', '-', 'T', ':', ':', '.'};
    char *a = stamp, *b = iso;
    for (int i = 0; i < 6; i++) {
        a = digits(a, f[i], width[i]);
        b = digits(b, f[i], width[i]);
        if (stamp_sep[i])
            *a++ = stamp_sep[i];
        *b++ = iso_sep[i];
    }
    a = digits(a, ms, 3);
    b = digits(b, ms, 3);
    memcpy(a, "Z", 2);
    memcpy(b, "Z", 2);
}

/* DIR/NAME.PID.STAMP.trace.json into PATH, NAME made a file name: letters, digits, '_', '-' and
 * '.' kept, the rest '_'.  Async-signal-safe. */
static void capture_path(char path[PATH_MAX], const char *name, const char *stamp)
{
    size_t at = 0, len = strlen(dir);
    char pid[24];
    spanprof__format_u64(pid, (uint64_t)getpid());
    const char *parts[] = {"/", name, ".", pid, ".", stamp, ".trace.json"};
    if (len > PATH_MAX - 256)
        len = PATH_MAX - 256;
    memcpy(path, dir, len);
    at = len;
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        for (size_t k = 0; parts[i][k] && at < PATH_MAX - 1 && (i != 1 || k < 64); k++) {
            char ch = parts[i][k];
            int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                     (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || (ch == '.' && k > 0);
            path[at++] = i != 1 || ok ? ch : '_';
        }
    path[at] = 0;
}

/* Whether the directory has room for another capture: fewer than SPANPROF_SLOW_MAX of them,
 * taking less than SPANPROF_SLOW_MAX_BYTES in all (counted with getdents64 and fstatat: opendir
 * allocates).  Async-signal-safe. */
static int room_for_capture(void)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return 1;
    static char buf[16384];
    uint64_t n = 0, bytes = 0;
    for (long got; (got = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0;)
        for (long at = 0; at < got;) {
            struct linux_dirent64 {
                uint64_t ino;
                int64_t off;
                unsigned short reclen;
                unsigned char type;
                char name[];
            } *e = (void *)(buf + at);
            size_t len = strlen(e->name);
            struct stat st;
            if (len > 11 && strcmp(e->name + len - 11, ".trace.json") == 0) {
                n++;
                if (fstatat(fd, e->name, &st, AT_SYMLINK_NOFOLLOW) == 0)
                    bytes += (uint64_t)st.st_size;
            }
            at += e->reclen;
        }
    close(fd);
    return n < max_files && bytes < max_bytes;
}

static void write_capture(const struct spanprof__flight_trigger *t, uint64_t suppressed)
{
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        say_error(dir, strerror(errno));
        return;
    }
    if (!room_for_capture())
        return;
    struct spanprof__capture c;
    if (spanprof__capture_begin(&c, &spanprof__outputs)) {
        say_error(dir, strerror(ENOMEM));
        return;
    }
    const struct spanprof__view *v = &c.view;
    double ns_per_tick = v->ns_per_tick > 0 ? v->ns_per_tick : 1;
    uint64_t now;
    uint64_t origin = origin_tick(ns_per_tick, &now);
    uint64_t span_ticks = (uint64_t)(spanprof__flight.seconds * 1e9 / ns_per_tick);
    uint64_t from = t->end > span_ticks ? t->end - span_ticks : 0;
    if (t->site && t->start < from)
        from = t->start;
    char stamp[32], iso[32], path[PATH_MAX];
    format_time(now > t->end ? (double)(now - t->end) * ns_per_tick : 0, stamp, iso);
    capture_path(path, t->site ? t->site->name : "request", stamp);

    struct spanprof__trace_window win = {
        .from = from, .to = t->end, .site = t->site, .tid = t->tid, .start = t->start,
        .end = t->end, .seconds = spanprof__flight.seconds, .time = iso,
        .suppressed = suppressed, .outer = &t->outer, .kept = t->kept, .nkept = t->nkept,
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
    if (err && err != SPANPROF__OUTFILE_ABANDONED) /* dying of a crash: the crash's capture counts */
        say_error(path, spanprof__outfile_reason(err));
}

void spanprof__flight_crash(const char *signal)
{
    if (!spanprof__flight.on)
        return;
    const char *parts[] = {"spanprof: error: cannot write capture '", dir, "': ", "", "\n"};
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        parts[3] = spanprof__outfile_reason(errno);
    } else if (room_for_capture()) {
        struct spanprof__view v = spanprof__view_of(&spanprof__outputs);
        double ns_per_tick = v.ns_per_tick > 0 ? v.ns_per_tick : 1;
        uint64_t now;
        uint64_t origin = origin_tick(ns_per_tick, &now);
        uint64_t span_ticks = (uint64_t)(spanprof__flight.seconds * 1e9 / ns_per_tick);
        static char stamp[32], iso[32], path[PATH_MAX];
        format_time(0, stamp, iso);
        capture_path(path, signal, stamp);
        static struct spanprof__trace_outer outer;
        spanprof__trace_outer_of_self(&outer);
        struct spanprof__trace_window win = {
            .from = now > span_ticks ? now - span_ticks : 0, .to = now,
            .tid = spanprof__tls != &spanprof__sentinel_thread ? spanprof__tls->tid : gettid(),
            .seconds = spanprof__flight.seconds, .time = iso, .outer = &outer,
        };
        static struct spanprof__outfile of;
        int err = spanprof__outfile_open(path, ".crash", &of);
        if (!err)
            err = spanprof__outfile_finish(
                &of, path, spanprof__trace_write_crash(of.fd, &v, origin, &win, signal));
        if (!err)
            return;
        parts[1] = path;
        parts[3] = spanprof__outfile_reason(err);
    } else {
        return;
    }
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        if (write(2, parts[i], strlen(parts[i])) < 0)
            return;
}

double spanprof__flight_serve(int force)
{
    if (!spanprof__flight.on)
        return -1;
    pthread_mutex_lock(&serve_lock);
    double wait = -1;
    uint64_t started = spanprof__mono_ns();
    for (int again = 1; again;) {
        again = 0;
        wait = -1;
        uint64_t now = spanprof__mono_ns();
        int filling = 0;
        /* The oldest trigger that is due: asked for, or settled (no slower call can replace it
         * any more), or any at the end. */
        struct spanprof__flight_trigger *next = NULL;
        for (size_t i = 0; i < SPANPROF__FLIGHT_PENDING; i++) {
            struct spanprof__flight_trigger *t = &spanprof__flight_pending[i];
            uint32_t state = __atomic_load_n(&t->state, __ATOMIC_ACQUIRE);
            if (state == 1) {
                filling = 1;
                /* Not sleeping until the next wake-up: that may be a second away, and the
                 * rings would have moved past this trigger's window by then. */
                double retry = SPANPROF__FLIGHT_RETRY_NS / 1e9;
                if (wait < 0 || retry < wait)
                    wait = retry;
            }
            if (state != 2)
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
            /* the slot stays the writer's until its kept events are written */
            write_capture(next, __atomic_load_n(&spanprof__flight_suppressed, __ATOMIC_RELAXED));
            __atomic_store_n(&next->state, 0, __ATOMIC_RELEASE);
        }
        again = next != NULL;
        /* At the end, a trigger being noted (its thread copying its events, perhaps preempted
         * on a busy machine) is waited for, a while: the process is about to go. */
        if (force && !next && filling && now - started < SPANPROF__FLIGHT_END_WAIT_NS) {
            struct timespec retry = {0, SPANPROF__FLIGHT_RETRY_NS};
            nanosleep(&retry, NULL);
            again = 1;
        }
    }
    pthread_mutex_unlock(&serve_lock);
    return wait;
}
