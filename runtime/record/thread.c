/* thread.c — per-thread data: TLS pointer and sentinel, creation and registration, capture at
 * thread exit, settling of open frames, and fork.
 *
 * A thread gets data (mmap'd, or recycled from a thread that ended, registered in
 * spanprof__g.threads under the lock) at its first span.  A pthread key destructor records the
 * thread's name, charges its open frames up to the moment it ended, and merges the data into its
 * name's retired group (threadretire.c), which the process-exit write sees.
 *
 * fork: the child (see spanprof__fork_child) keeps only the forking thread's data, with every
 * counter reset to zero — the child's profile covers the child only.  The forking thread's open
 * frames are kept (restarted at the fork) because the child will run their exits.  Other
 * threads do not exist in the child; their data and the retired groups are dropped (their memory
 * goes to the free list).  The child writes its own files:
 * %p in a path expands to the child's pid, and a path without %p gets ".PID" appended (see
 * path.c), so the parent's files are never clobbered.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "record/clock.h"
#include "record/histogram.h"
#include "record/record.h"

/* A thread without data points here.  Its frame has cfa 0 (every enter sees a "dead" frame) and a
 * site-less node (every exit sees a mismatch), so the hot path sends it to the cold path without
 * testing for NULL; the cold path recognises the sentinel.  Never written. */
static struct spanprof__frame sentinel_frame = {.node = &spanprof__miss_node};
struct spanprof__thread spanprof__sentinel_thread = {
    .top = &sentinel_frame,
    .limit = &sentinel_frame,
    .frames = &sentinel_frame,
    /* Never read (its frame sends every enter to the cold path first), but valid all the same. */
    .child_cache = {[0 ... SPANPROF__CHILD_CACHE_SLOTS - 1] = &spanprof__miss_node},
};

SPANPROF_TLS struct spanprof__thread *spanprof__tls = &spanprof__sentinel_thread;

/* The data of a thread that ended, reset (threadretire.c), else fresh. */
struct spanprof__thread *spanprof__thread_new(void)
{
    struct spanprof__thread *t = spanprof__thread_reuse();
    if (!t)
        t = spanprof__thread_map();
    if (t) {
        spanprof__child_cache_reset(t); /* its slots point into the old tree */
        t->tid = gettid();
        t->budget_cpu_ns = 0;
    }
    return t;
}

/* Signals are held (record.h) from before start-up, which may run from here (the process's first
 * span), to the publication of the data: a signal that comes meanwhile — or that the runtime's
 * own masks keep back, as start-up's, calibration's and the writer thread's creation do — is
 * delivered once the data is this thread's and the runtime no longer busy, and its handler's
 * spans are recorded there (delivered any sooner, they would find the sentinel and the busy
 * flag, and be ignored).  A handler that landed after the caller saw the sentinel but before
 * the hold has given the thread its data already: that data is the one returned, not a second. */
struct spanprof__thread *spanprof__thread_attach(void)
{
    struct spanprof__hold hold;
    spanprof__hold_enter(&hold);
    struct spanprof__thread *t = spanprof__tls;
    if (t == &spanprof__sentinel_thread) {
        spanprof__start();
        t = spanprof__flags.recording ? spanprof__thread_new() : NULL;
        if (t) {
            t->start_tick = t->tid == getpid() ? spanprof__g.start_tick : spanprof__clock_now();
            if (spanprof__hooks.thread_new)
                spanprof__hooks.thread_new(t);
            spanprof__lock();
            t->next = spanprof__g.threads;
            spanprof__g.threads = t;
            spanprof__unlock();
            /* Keys below PTHREAD_KEY_2NDLEVEL_SIZE (32) need no allocation here. */
            pthread_setspecific(spanprof__g.key, t);
            spanprof__tls = t;
        }
    }
    spanprof__hold_leave(&hold);
    return t;
}

/* Charge every open frame of T (T's own thread only) up to NOW and restart it there: the output
 * then includes time so far, and the frames' later exits add only the rest. */
void spanprof__thread_settle(struct spanprof__thread *t, uint64_t now)
{
    struct spanprof__frame *f = t->park_depth ? t->parked_top : t->top;
    for (; f > t->frames; f--) {
        spanprof__charge(f, now);
        f->start = now;
    }
}

uint64_t spanprof__thread_open_frames(const struct spanprof__thread *t)
{
    if (__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE))
        return t->open_at_exit;
    /* A running thread's frame array may move meanwhile (each field is read atomically, not all
     * of them together): clamp to something sane. */
    const struct spanprof__frame *frames = __atomic_load_n(&t->frames, __ATOMIC_RELAXED);
    size_t capacity = __atomic_load_n(&t->capacity, __ATOMIC_RELAXED);
    uint64_t park = __atomic_load_n(&t->park_depth, __ATOMIC_RELAXED);
    const struct spanprof__frame *top =
        park ? __atomic_load_n(&t->parked_top, __ATOMIC_RELAXED) : __atomic_load_n(&t->top, __ATOMIC_RELAXED);
    if (top < frames || top >= frames + capacity)
        return park;
    return (uint64_t)(top - frames) + park;
}

/* Name of a live thread from /proc (works for any thread of this process, no pthread_t needed,
 * so a thread that is exiting concurrently is harmless). */
void spanprof__thread_refresh_name(struct spanprof__thread *t)
{
    if (t->exited)
        return;
    char path[64], buf[64];
    snprintf(path, sizeof path, "/proc/self/task/%ld/comm", (long)t->tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return;
    buf[n] = 0;
    buf[strcspn(buf, "\n")] = 0;
    memcpy(t->name, buf, (size_t)n + 1);
}

/* pthread key destructor: runs in the exiting thread.  The thread's data is merged into its
 * name's retired group and recycled (threadretire.c); spans this thread still runs later get fresh
 * data. */
void spanprof__thread_exit_hook(void *arg)
{
    struct spanprof__thread *t = arg;
    struct spanprof__guard guard = spanprof__guard_enter();
    char name[64] = "";
    pthread_getname_np(pthread_self(), name, sizeof name);
    uint64_t now = spanprof__clock_now();
    spanprof__thread_settle(t, now);
    if (spanprof__tls == t)
        spanprof__tls = &spanprof__sentinel_thread;
    spanprof__lock();
    t->end_tick = now;
    memcpy(t->name, name, sizeof name);
    t->open_at_exit = spanprof__thread_open_frames(t);
    __atomic_store_n(&t->exited, 1, __ATOMIC_RELEASE);
    spanprof__thread_retire(t);
    spanprof__unlock();
    spanprof__guard_leave(guard);
}

/* Hold the lock across fork so the child never inherits it half-taken. */
void spanprof__fork_prepare(void)
{
    spanprof__lock();
}

void spanprof__fork_parent(void)
{
    spanprof__unlock();
}

static int reset_node(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)depth, (void)ctx;
    n->calls = n->total = n->child = 0;
    return 1;
}

void spanprof__fork_child(void)
{
    int saved_errno = errno;
    pthread_mutex_init(&spanprof__g.lock, NULL);
    struct spanprof__thread *t = spanprof__tls;
    /* The other threads and the retired groups are the parent's: their memory is reused. */
    spanprof__abandoned_fork_child();
    spanprof__retire_fork_child(spanprof__g.threads, t);
    spanprof__g.threads = NULL;
    spanprof__g.fork_child = 1;
    spanprof__g.unmatched_no_thread = 0;
    spanprof__mark_start();
    if (t != &spanprof__sentinel_thread) {
        spanprof__tree_walk(&t->root, reset_node, NULL, NULL);
        t->root.child = 0; /* the root's own counter: time in outermost spans */
        spanprof__hist_reset(t);
        t->abandoned = t->unmatched = t->overflow = 0;
        uint64_t now = spanprof__clock_now();
        struct spanprof__frame *f = t->park_depth ? t->parked_top : t->top;
        for (; f > t->frames; f--)
            f->start = now;
        t->start_tick = spanprof__g.start_tick; /* the child's start: it is the main thread */
        t->tid = gettid();
        if (spanprof__hooks.fork_child)
            spanprof__hooks.fork_child(t);
        t->next = NULL;
        spanprof__g.threads = t;
        /* The key's value survives fork for the forking thread: its destructor still runs. */
    }
    errno = saved_errno;
}
