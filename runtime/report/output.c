/* output.c — writes the profile files named by the caller (lifecycle/start.c: at process exit and on
 * spanprof_flush()).
 *
 * Everything happens under the global lock (threads registering meanwhile wait) with this
 * thread's re-entry flag set (spans run by the allocator or a signal handler during the write
 * are ignored).  The writing thread's open frames are charged up to now first (e.g. a span that
 * called exit()); other running threads' open frames are not — their stacks are theirs to touch.
 * errno, stdout and the exit status are never changed; problems go to stderr as
 *     spanprof: error: cannot write 'PATH': REASON
 * Each file is opened as outfile.c's rules say: normally a temporary file in its directory,
 * renamed over PATH, so a reader (or a dump that a SIGKILL interrupts) never sees half a file;
 * symbolic links of other users and files that are not regular are refused; the program's own
 * stdout or stderr is appended to, after its own buffered output (flush_program_streams).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect/budget.h"
#include "record/clock.h"
#include "report/report.h"

typedef int (*write_fn)(FILE *f, const struct spanprof__view *v, const struct spanprof__json_meta *m);

static int write_folded(FILE *f, const struct spanprof__view *v, const struct spanprof__json_meta *m)
{
    (void)m;
    if (spanprof__folded_write(f, v))
        return -1;
    return spanprof__idle_folded_write(f, v);
}

static int write_alloc_folded(FILE *f, const struct spanprof__view *v,
                              const struct spanprof__json_meta *m)
{
    (void)m;
    return spanprof__alloc_folded_write(f, v);
}

/* Async-signal-safe: the crash writer (safefolded.c) names its file with it too. */
int spanprof__output_path(const struct spanprof__outputs *o, const char *pattern, char *out,
                          size_t size)
{
    long pid = (long)getpid();
    int descendant = spanprof__g.fork_child || o->descendant;
    if (o->image == 0)
        return spanprof__path_expand(pattern, pid, descendant, out, size);
    /* An earlier image of this same process wrote the name of image 0: this one's pid becomes
     * "PID.N" — in place of each %p (the extension stays last), else after NAME. */
    char with_image[PATH_MAX], num[24];
    size_t n = spanprof__format_u64(num, o->image), at = 0;
    for (const char *p = pattern; *p; p++) {
        int pid_here = p[0] == '%' && p[1] == 'p';
        if (at + 3 + n >= sizeof with_image)
            return -1;
        with_image[at++] = *p;
        if (p[0] == '%' && (p[1] == 'p' || p[1] == '%'))
            with_image[at++] = *++p;
        if (pid_here) {
            with_image[at++] = '.';
            memcpy(with_image + at, num, n);
            at += n;
        }
    }
    with_image[at] = 0;
    if (spanprof__path_expand(with_image, pid, descendant, out, size))
        return -1;
    if (strcmp(with_image, pattern) != 0) /* it had %p */
        return 0;
    size_t len = strlen(out);
    if (len + 1 + n >= size)
        return -1;
    out[len] = '.';
    memcpy(out + len + 1, num, n + 1);
    return 0;
}

/* A view's settings from O and the recording mode, without threads.  Async-signal-safe: the
 * crash writer (safefolded.c) takes its view from here too. */
struct spanprof__view spanprof__view_of(const struct spanprof__outputs *o)
{
    struct spanprof__call_cost cost = spanprof__call_cost();
    if (spanprof__flags.counting)
        cost = (struct spanprof__call_cost){0};
    double in = cost.in, out = cost.out;
    /* Abandoned calls that no node's count holds (out of memory): any call may be one. */
    if (__atomic_load_n(&spanprof__g.abandoned_unplaced, __ATOMIC_RELAXED)) {
        in = cost.enter_in;
        out = cost.enter_out;
    }
    return (struct spanprof__view){
            .ns_per_tick = spanprof__collect.sample_hz ? 1.0 : spanprof__clock_ns_per_tick(),
            .counting = spanprof__flags.counting && !spanprof__collect.sample_hz,
            .sample_hz = spanprof__collect.sample_hz,
            .threads_root = o->threads_root,
            .file_line = o->file_line,
            .idle = o->idle,
            .cpu_values = o->folded_cpu,
            .compensate = cost.in > 0,
            .cost_in = in,
            .cost_out = out,
            .measured_in = cost.in,
            .measured_out = cost.out,
            .enter_in = cost.enter_in,
            .enter_out = cost.enter_out,
            .compensation_failed = cost.failed,
    };
}

/* The names of the files an exit write wrote, for its closing line: "PATH, PATH". */
struct written {
    char text[1024];
    size_t len;
    int cut; /* some did not fit */
};

static void note_written(struct written *w, const char *path)
{
    size_t n = strlen(path), sep = w->len ? 2 : 0;
    if (w->len + sep + n >= sizeof w->text) {
        w->cut = 1;
        return;
    }
    memcpy(w->text + w->len, ", ", sep);
    memcpy(w->text + w->len + sep, path, n + 1);
    w->len += sep + n;
}

/* Before the exit write appends to the program's own stdout or stderr: what the program printed
 * and its stdio still holds.  exit() runs the atexit handlers, this write among them, before it
 * flushes the streams, so without this the profile would come first, or in the middle of a line
 * (4,096 bytes of a long one already written, the rest after the profile).  Flushing a moment
 * before exit() does changes nothing the program can see.  Only here, on the exiting thread:
 * the writer thread and signal handlers may not touch stdio (a dump or SIGTERM write on the
 * program's stdout then follows what the program flushed so far).  A stream another thread
 * holds locked is left alone rather than waited for. */
static void flush_program_streams(void)
{
    int saved_errno = errno; /* a failed flush leaves its error to the stream (ferror) */
    FILE *streams[] = {stdout, stderr};
    for (size_t i = 0; i < sizeof streams / sizeof *streams; i++)
        if (ftrylockfile(streams[i]) == 0) {
            fflush_unlocked(streams[i]);
            funlockfile(streams[i]);
        }
    errno = saved_errno;
}

static int write_one(const char *pattern, write_fn fn, const struct spanprof__view *v,
                     const struct spanprof__json_meta *m, const struct spanprof__outputs *o,
                     int final, struct written *w)
{
    char path[PATH_MAX];
    if (spanprof__output_path(o, pattern, path, sizeof path)) {
        fprintf(stderr, "spanprof: error: cannot write '%s': %s\n", pattern, strerror(ENAMETOOLONG));
        return -1;
    }
    struct spanprof__outfile of;
    int err = spanprof__outfile_open(path, "", &of);
    if (!err && of.own && final)
        flush_program_streams();
    if (!err) {
        FILE *f = spanprof__outfile_stream(&of);
        if (!f) {
            err = errno ? errno : ENOMEM;
        } else {
            errno = 0;
            if (fn(f, v, m))
                err = errno ? errno : EIO;
            if ((fflush(f) != 0 || ferror(f)) && !err)
                err = errno ? errno : EIO;
            fclose(f); /* the descriptor stays open: the cookie has no close function */
        }
        err = spanprof__outfile_finish(&of, path, err);
    }
    if (err && err != SPANPROF__OUTFILE_ABANDONED) /* dying: the crash writer says what it wrote */
        fprintf(stderr, "spanprof: error: cannot write '%s': %s\n", path,
                spanprof__outfile_reason(err));
    else
        note_written(w, path);
    return err ? -1 : 0;
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

/* SPANPROF_BUDGET's part of the exit line: the spans switched off, the first few named. */
static void budget_line(FILE *f)
{
    const struct spanprof__budget *b = &spanprof__budget;
    size_t n = __atomic_load_n(&b->noff, __ATOMIC_ACQUIRE);
    if (!n)
        return;
    fprintf(f, "spanprof: budget %g%%: %zu span%s switched off (", b->percent, n, n == 1 ? "" : "s");
    for (size_t i = 0; i < n && i < 3; i++)
        fprintf(f, "%s%s at %.2f s", i ? ", " : "", b->off[i].site->name, b->off[i].at_s);
    fprintf(f, "%s); %s\n", n > 3 ? ", ..." : "",
            n == 1 ? "its count is a lower bound" : "their counts are lower bounds");
}

int spanprof__capture_begin(struct spanprof__capture *c, const struct spanprof__outputs *o)
{
    c->guard = spanprof__guard_enter();
    spanprof__lock();
    struct spanprof__thread *self = spanprof__tls;
    if (self != &spanprof__sentinel_thread)
        spanprof__thread_settle(self, spanprof__clock_now());
    size_t n = 0;
    for (struct spanprof__thread *t = spanprof__g.threads; t; t = t->next)
        n++;
    c->threads = calloc(n ? n : 1, sizeof *c->threads);
    if (!c->threads) {
        spanprof__unlock();
        spanprof__guard_leave(c->guard);
        return -1;
    }
    /* The registry is newest first: list threads in the order they started. */
    size_t i = n;
    for (struct spanprof__thread *t = spanprof__g.threads; t; t = t->next) {
        spanprof__thread_refresh_name(t);
        if (spanprof__collect.sample_hz)
            spanprof__sample_sums(t); /* the sampled inclusive figures, as of now */
        c->threads[--i] = t;
    }
    struct spanprof__view *v = &c->view;
    *v = spanprof__view_of(o);
    static int warned;
    if (v->compensation_failed && !__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
        fprintf(stderr, "spanprof: warning: exact times keep the profiler's own cost: it could "
                        "not be measured (%s)\n", v->compensation_failed);
    v->threads = c->threads;
    v->nthreads = n;
    spanprof__view_fit_costs(v, self);
    v->folded_limits = &o->folded_limits;
    program_path(c->program, sizeof c->program);
    struct tm tm;
    time_t sec = (time_t)spanprof__g.start_real_sec;
    gmtime_r(&sec, &tm);
    size_t len = strftime(c->start, sizeof c->start, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(c->start + len, sizeof c->start - len, ".%03ldZ",
             (long)(spanprof__g.start_real_nsec / 1000000));
    v->now = spanprof__clock_now(); /* next to wall_ns: the main thread's time adds up to it */
    c->meta = (struct spanprof__json_meta){
        .pid = (long)getpid(),
        .program = c->program,
        .start_time = c->start,
        .wall_ns = spanprof__mono_ns() - spanprof__g.start_mono_ns,
        .clock = spanprof__clock_name(),
        .extra_unmatched = __atomic_load_n(&spanprof__g.unmatched_no_thread, __ATOMIC_RELAXED),
    };
    return 0;
}

void spanprof__capture_end(struct spanprof__capture *c)
{
    free(c->threads);
    spanprof__unlock();
    spanprof__guard_leave(c->guard);
}

int spanprof__write_all(const struct spanprof__outputs *o, int final)
{
    if (!spanprof__flags.recording ||
        (!o->folded && !o->json && !o->alloc_folded && !o->trace && !o->pprof))
        return 0;
    struct spanprof__capture c;
    if (spanprof__capture_begin(&c, o)) {
        fprintf(stderr, "spanprof: error: out of memory writing the profile\n");
        return -1;
    }
    const struct spanprof__view *v = &c.view;
    const struct spanprof__json_meta *m = &c.meta;
    int rc = 0;
    struct written w = {.len = 0};
    if (o->folded && write_one(o->folded, write_folded, v, m, o, final, &w))
        rc = -1;
    if (o->json && write_one(o->json, spanprof__json_write, v, m, o, final, &w))
        rc = -1;
    if (o->alloc_folded && write_one(o->alloc_folded, write_alloc_folded, v, m, o, final, &w))
        rc = -1;
    if (o->trace && write_one(o->trace, spanprof__trace_write, v, m, o, final, &w))
        rc = -1;
    if (o->pprof && write_one(o->pprof, spanprof__pprof_write_view, v, m, o, final, &w))
        rc = -1;
    /* Only for a person watching: a log or a pipe gets nothing it did not ask for. */
    if (final && o->announce && w.len && isatty(STDERR_FILENO))
        fprintf(stderr, "spanprof: wrote %s%s\n", w.text, w.cut ? ", ..." : "");
    if (final && o->announce && isatty(STDERR_FILENO))
        budget_line(stderr);
    spanprof__capture_end(&c);
    return rc;
}
