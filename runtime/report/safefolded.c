/* safefolded.c — the folded-stacks writer that a signal handler may call: the profile of a
 * process that is dying (a crash, or a terminating signal when no writer thread can do it).
 *
 * It prints what folded.c prints (same lines, merged and sorted the same way) but touches no
 * lock, no malloc and no stdio: the registry and the call trees are read as they are (the same
 * racy-but-benign reads as the normal writer, without the process lock, which the interrupted
 * thread may hold), memory comes from mmap, sorting is a heap sort, and the file is opened as
 * outfile.c says (a temporary file renamed over the path, as a rule) and written with write(2),
 * each write waiting a bounded time.  Bounded: at most SAFE_MAX_TEXT bytes of
 * stack strings, SAFE_MAX_PATH bytes per stack and SAFE_MAX_LINES lines (the rest is dropped), no
 * recursion.
 *
 * The one difference from the normal writer: a node whose pointers its thread is writing at
 * that very moment may be missed.  The "(outside spans)" lines of SPANPROF_IDLE=1 (idle.c) follow
 * the stacks as there.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "record/clock.h"
#include "report/report.h"

#define SAFE_MAX_TEXT ((size_t)256 << 20)
#define SAFE_MAX_PATH ((size_t)16 << 20) /* one stack string (1024 frames of up to 16 KiB) */
#define SAFE_MAX_LINES ((size_t)8 << 20)

struct line {
    size_t off, len;
    uint64_t value;
};

struct safe {
    const struct spanprof__view *v;
    char *text; /* the stack strings, one after the other */
    size_t text_len, text_cap;
    struct line *lines;
    size_t n, lines_cap;
    char *path; /* the current stack string */
    size_t lens[SPANPROF_FOLDED_MAX_DEPTH + 1];
    int full;
    uint64_t below; /* the value of a cut subtree, summed by sum_below */
};

/* Appends S, sanitised as folded.c does, to the current stack string at AT. */
static size_t put(struct safe *S, size_t at, const char *s)
{
    for (; *s && at < SAFE_MAX_PATH - 1; s++)
        S->path[at++] = (*s == ';' || *s == '\n' || *s == '\r') ? '_' : *s;
    return at;
}

static size_t put_frame(struct safe *S, size_t at, int sep, const struct spanprof_site *site)
{
    if (sep && at < SAFE_MAX_PATH - 1)
        S->path[at++] = ';';
    at = put(S, at, site->name ? site->name : "?");
    if (S->v->file_line) {
        char num[24];
        spanprof__format_u64(num, site->first_line);
        at = put(S, at, " (");
        at = put(S, at, site->file ? site->file : "?");
        at = put(S, at, ":");
        at = put(S, at, num);
        at = put(S, at, ")");
    }
    return at;
}

static void add_line(struct safe *S, size_t len, uint64_t ticks)
{
    if (S->full ||
        !spanprof__map_grow((void **)&S->lines, &S->lines_cap, S->n + 1, sizeof *S->lines,
                            SAFE_MAX_LINES) ||
        !spanprof__map_grow((void **)&S->text, &S->text_cap, S->text_len + len, 1,
                            SAFE_MAX_TEXT)) {
        S->full = 1;
        return;
    }
    memcpy(S->text + S->text_len, S->path, len);
    S->lines[S->n++] = (struct line){S->text_len, len, spanprof__ticks_to_ns(S->v, ticks)};
    S->text_len += len;
}

/* A cut subtree's value, as the exit's writer gives its "[truncated]" line: calls when counting,
 * else self time. */
static int sum_below(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)depth;
    struct safe *S = ctx;
    S->below += S->v->counting ? __atomic_load_n(&n->calls, __ATOMIC_RELAXED)
                               : spanprof__view_self(S->v, n);
    return 1;
}

static int pre(struct spanprof__node *n, size_t depth, void *ctx)
{
    struct safe *S = ctx;
    if (S->full || depth > SPANPROF_FOLDED_MAX_DEPTH)
        return 0;
    if (!n->site) /* zeroed under us: an ended thread's memory being recycled (no lock here) */
        return 0;
    size_t len = put_frame(S, S->lens[depth - 1], depth > 1 || S->v->threads_root, n->site);
    S->lens[depth] = len;
    uint64_t calls = __atomic_load_n(&n->calls, __ATOMIC_RELAXED);
    if (calls || __atomic_load_n(&n->total, __ATOMIC_RELAXED))
        add_line(S, len, S->v->counting ? calls : spanprof__view_self(S->v, n));
    if (depth < SPANPROF_FOLDED_MAX_DEPTH)
        return 1;
    if (__atomic_load_n(&n->first_child, __ATOMIC_ACQUIRE)) {
        S->below = 0;
        spanprof__tree_walk(n, sum_below, NULL, S);
        if (len < SAFE_MAX_PATH - 1) {
            S->path[len] = ';';
            add_line(S, put(S, len + 1, "[truncated]"), S->below);
        }
    }
    return 0;
}

static int cmp(const struct safe *S, const struct line *x, const struct line *y)
{
    size_t m = x->len < y->len ? x->len : y->len;
    int c = memcmp(S->text + x->off, S->text + y->off, m);
    if (c)
        return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

static void sift(struct safe *S, size_t i, size_t n)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            return;
        if (c + 1 < n && cmp(S, &S->lines[c], &S->lines[c + 1]) < 0)
            c++;
        if (cmp(S, &S->lines[i], &S->lines[c]) >= 0)
            return;
        struct line t = S->lines[i];
        S->lines[i] = S->lines[c];
        S->lines[c] = t;
        i = c;
    }
}

static void heap_sort(struct safe *S)
{
    for (size_t i = S->n / 2; i-- > 0;)
        sift(S, i, S->n);
    for (size_t end = S->n; end > 1; end--) {
        struct line t = S->lines[0];
        S->lines[0] = S->lines[end - 1];
        S->lines[end - 1] = t;
        sift(S, 0, end - 1);
    }
}

/* The label of thread T as spanprof__thread_label gives it, with a running thread's name read
 * from /proc (into BUF, not into T: the normal writer may be using T->name). */
const char *spanprof__thread_label_safe(const struct spanprof__thread *t, char *buf, size_t size)
{
    if (!__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE)) {
        char path[64] = "/proc/self/task/";
        size_t at = strlen(path);
        at += spanprof__format_u64(path + at, (uint64_t)t->tid);
        memcpy(path + at, "/comm", sizeof "/comm");
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            ssize_t n = read(fd, buf, size - 1);
            close(fd);
            if (n > 0) {
                buf[n] = 0;
                buf[strcspn(buf, "\n")] = 0;
                return buf;
            }
        }
    }
    if (t->name[0])
        return t->name;
    memcpy(buf, "thread-", 7);
    spanprof__format_u64(buf + 7, (uint64_t)t->tid);
    return buf;
}

/* SPANPROF_IDLE's lines, after the stacks, as spanprof__idle_folded_write prints them. */
static void idle_lines(struct spanprof__safe_out *o, const struct spanprof__view *v)
{
    if (!v->idle || v->counting || !v->nthreads)
        return;
    size_t size = v->nthreads * sizeof(struct spanprof__idle_line);
    struct spanprof__idle_line *lines = spanprof__map(size);
    if (!lines)
        return;
    size_t n = spanprof__idle_lines(v, lines, spanprof__thread_label_safe);
    for (size_t i = 0; i < n; i++) {
        char num[24];
        spanprof__safe_put(o, lines[i].label, strlen(lines[i].label));
        if (v->threads_root)
            spanprof__safe_put(o, ";", 1);
        spanprof__safe_put(o, spanprof__idle_frame, strlen(spanprof__idle_frame));
        num[0] = ' ';
        size_t k = spanprof__format_u64(num + 1, lines[i].ns);
        num[k + 1] = '\n';
        spanprof__safe_put(o, num, k + 2);
    }
    spanprof__unmap(lines, size);
}

/* Writes V's folded stacks to FD; 0 or an errno value. */
static int write_lines(int fd, const struct spanprof__view *v)
{
    static struct safe S; /* one writer at a time (the caller makes sure): not on the stack */
    memset(&S, 0, sizeof S);
    S.v = v;
    if (!spanprof__map_grow((void **)&S.path, &(size_t){0}, SAFE_MAX_PATH, 1, SAFE_MAX_PATH))
        return ENOMEM;
    for (size_t i = 0; i < v->nthreads && !S.full; i++) {
        const struct spanprof__thread *t = v->threads[i];
        S.lens[0] = 0;
        if (v->threads_root) {
            char label[64];
            S.lens[0] = put(&S, 0, spanprof__thread_label_safe(t, label, sizeof label));
        }
        spanprof__tree_walk((struct spanprof__node *)&t->root, pre, NULL, &S);
    }
    heap_sort(&S);
    static struct spanprof__safe_out o;
    o.fd = fd, o.err = 0, o.len = 0;
    for (size_t i = 0; i < S.n;) {
        uint64_t ns = S.lines[i].value;
        size_t j = i + 1;
        while (j < S.n && cmp(&S, &S.lines[i], &S.lines[j]) == 0)
            ns += S.lines[j++].value;
        char num[24];
        size_t k = spanprof__format_u64(num + 1, ns);
        num[0] = ' ';
        num[k + 1] = '\n';
        spanprof__safe_put(&o, S.text + S.lines[i].off, S.lines[i].len);
        spanprof__safe_put(&o, num, k + 2);
        i = j;
    }
    idle_lines(&o, v);
    spanprof__safe_flush(&o);
    spanprof__unmap(S.path, SAFE_MAX_PATH);
    if (S.text)
        spanprof__unmap(S.text, S.text_cap);
    if (S.lines)
        spanprof__unmap(S.lines, S.lines_cap * sizeof *S.lines);
    return o.err;
}

/* Prints "spanprof: error: cannot write 'PATH': REASON" with write(2). */
static void report(const char *path, int err)
{
    const char *parts[] = {"spanprof: error: cannot write '", path, "': ",
                           spanprof__outfile_reason(err), "\n"};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        if (write(2, parts[i], strlen(parts[i])) < 0)
            return;
}

/* One write at a time (its buffers are static): a second caller — a crash on another thread
 * while a terminating signal's write runs — leaves the file to the first. */
static int busy;

static int write_safe(const struct spanprof__outputs *o);

int spanprof__folded_write_safe(const struct spanprof__outputs *o)
{
    if (!o->folded || __atomic_exchange_n(&busy, 1, __ATOMIC_ACQ_REL))
        return 0;
    int rc = write_safe(o);
    __atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
    return rc;
}

static int write_safe(const struct spanprof__outputs *o)
{
    static struct spanprof__thread *ts[65536];
    size_t n = 0;
    /* Newest first in the registry: listed in the order they started, as the normal writer. */
    for (struct spanprof__thread *t = __atomic_load_n(&spanprof__g.threads, __ATOMIC_ACQUIRE);
         t && n < sizeof ts / sizeof *ts; t = t->next)
        n++;
    size_t i = n;
    for (struct spanprof__thread *t = __atomic_load_n(&spanprof__g.threads, __ATOMIC_ACQUIRE);
         t && i > 0; t = t->next)
        ts[--i] = t;
    struct spanprof__view v = spanprof__view_of(o);
    v.threads = ts + i;
    v.nthreads = n - i;
    spanprof__view_fit_costs(&v, NULL); /* nothing is settled: ended threads only */
    v.now = spanprof__clock_now();
    char path[PATH_MAX];
    if (spanprof__output_path(o, o->folded, path, sizeof path)) {
        report(o->folded, ENAMETOOLONG);
        return -1;
    }
    /* A temporary name of its own (".crash"): the writer thread may be writing the other. */
    static struct spanprof__outfile of;
    int err = spanprof__outfile_open(path, ".crash", &of);
    if (!err)
        err = spanprof__outfile_finish(&of, path, write_lines(of.fd, &v));
    if (err) {
        report(path, err);
        return -1;
    }
    return 0;
}
