/* output.c — writes the profile files named by the caller (config/start.c: at process exit and on
 * spanprof_flush()).
 *
 * Everything happens under the global lock (threads registering meanwhile wait) with this
 * thread's re-entry flag set (spans run by the allocator or a signal handler during the write
 * are ignored).  The writing thread's open frames are charged up to now first (e.g. a span that
 * called exit()); other running threads' open frames are not — their stacks are theirs to touch.
 * errno, stdout and the exit status are never changed; problems go to stderr as
 *     spanprof: error: cannot write 'PATH': REASON
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "record/clock.h"
#include "report/report.h"

typedef int (*write_fn)(FILE *f, const struct spanprof__view *v, const struct spanprof__json_meta *m);

static int write_folded(FILE *f, const struct spanprof__view *v, const struct spanprof__json_meta *m)
{
    (void)m;
    return spanprof__folded_write(f, v);
}

static int write_alloc_folded(FILE *f, const struct spanprof__view *v,
                              const struct spanprof__json_meta *m)
{
    (void)m;
    return spanprof__alloc_folded_write(f, v);
}

static int write_one(const char *pattern, write_fn fn, const struct spanprof__view *v,
                     const struct spanprof__json_meta *m)
{
    char path[PATH_MAX];
    if (spanprof__path_expand(pattern, (long)getpid(), spanprof__g.fork_child, path, sizeof path)) {
        fprintf(stderr, "spanprof: error: cannot write '%s': %s\n", pattern, strerror(ENAMETOOLONG));
        return -1;
    }
    FILE *f = fopen(path, "we");
    if (!f) {
        fprintf(stderr, "spanprof: error: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    errno = 0;
    int rc = fn(f, v, m);
    int err = errno ? errno : EIO;
    if (fflush(f) != 0 || ferror(f)) {
        rc = -1;
        err = errno ? errno : EIO;
    }
    if (fclose(f) != 0 && rc == 0) {
        rc = -1;
        err = errno;
    }
    if (rc)
        fprintf(stderr, "spanprof: error: cannot write '%s': %s\n", path, strerror(err));
    return rc;
}

static void program_path(char *buf, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    if (n > 0) {
        buf[n] = 0;
        return;
    }
    snprintf(buf, size, "%s", program_invocation_name);
}

int spanprof__write_all(const struct spanprof__outputs *o)
{
    if (!spanprof__flags.recording ||
        (!o->folded && !o->json && !o->alloc_folded && !o->trace && !o->pprof))
        return 0;
    struct spanprof__guard guard = spanprof__guard_enter();
    int rc = 0;

    spanprof__lock();
    struct spanprof__thread *self = spanprof__tls;
    if (self != &spanprof__sentinel_thread)
        spanprof__thread_settle(self, spanprof__clock_now());
    size_t n = 0;
    for (struct spanprof__thread *t = spanprof__g.threads; t; t = t->next)
        n++;
    struct spanprof__thread **ts = calloc(n ? n : 1, sizeof *ts);
    if (!ts) {
        fprintf(stderr, "spanprof: error: out of memory writing the profile\n");
        rc = -1;
        goto out;
    }
    /* The registry is newest first: list threads in the order they started. */
    size_t i = n;
    for (struct spanprof__thread *t = spanprof__g.threads; t; t = t->next) {
        spanprof__thread_refresh_name(t);
        ts[--i] = t;
    }
    struct spanprof__view v = {
        .threads = ts,
        .nthreads = n,
        .ns_per_tick = spanprof__clock_ns_per_tick(),
        .counting = spanprof__flags.counting,
        .threads_root = o->threads_root,
        .file_line = o->file_line,
        .folded_limits = &o->folded_limits,
    };
    char program[PATH_MAX], start[64];
    program_path(program, sizeof program);
    struct tm tm;
    time_t sec = (time_t)spanprof__g.start_real_sec;
    gmtime_r(&sec, &tm);
    size_t len = strftime(start, sizeof start, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(start + len, sizeof start - len, ".%03ldZ", (long)(spanprof__g.start_real_nsec / 1000000));
    struct spanprof__json_meta m = {
        .pid = (long)getpid(),
        .program = program,
        .start_time = start,
        .wall_ns = spanprof__mono_ns() - spanprof__g.start_mono_ns,
        .clock = spanprof__clock_name(),
        .extra_unmatched = __atomic_load_n(&spanprof__g.unmatched_no_thread, __ATOMIC_RELAXED),
    };
    if (o->folded && write_one(o->folded, write_folded, &v, &m))
        rc = -1;
    if (o->json && write_one(o->json, spanprof__json_write, &v, &m))
        rc = -1;
    if (o->alloc_folded && write_one(o->alloc_folded, write_alloc_folded, &v, &m))
        rc = -1;
    if (o->trace && write_one(o->trace, spanprof__trace_write, &v, &m))
        rc = -1;
    if (o->pprof && write_one(o->pprof, spanprof__pprof_write_view, &v, &m))
        rc = -1;
    free(ts);
out:
    spanprof__unlock();
    spanprof__guard_leave(guard);
    return rc;
}
