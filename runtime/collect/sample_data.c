/* sample_data.c — SPANPROF=sample's figures: what one sample charges, and to which node.
 *
 * Calls per stack stay exact (the sites take count mode's inline path, no timestamps); time comes
 * from the sampler thread (sampler.c), which wakes SPANPROF_SAMPLE_HZ times a second and, for
 * every live registered thread, reads its top frame's node and charges it
 *  - the wall time since that thread's previous sample (measured, so a late wake-up or a pass
 *    held up by a write is still charged in full), and one sample;
 *  - if the thread is on a CPU at that moment, the same stretch as CPU time.  Samples are
 *    instants on the sampler's clock, which keeps no step with the program, so the stretches
 *    charged to a span add up, on average, to the time the thread spent on a CPU in it: a span
 *    asleep, blocked or waiting for a CPU behind other work gets none, one shorter than the
 *    period gets its share of the samples, and CPU time used before a wait never lands on the
 *    waiting span.  A sample that finds the thread off the CPU because the sampler itself took
 *    that CPU from it is lost, wherever the thread is; so the stretches are scaled by a write
 *    (spanprof__sample_sums): each thread's spans share the CPU time its CPU clock says it used,
 *    in the proportion of their stretches.
 *  - Timely and late samples apart.  The instants are the program's own only if the sampler runs
 *    when its tick is due: sampler.c asks for a real-time priority for that, where the process
 *    may have it.  As an ordinary thread on a loaded machine, the sampler often waits for a CPU,
 *    and what ends the wait is often the program itself blocking: those late samples find it
 *    asleep just after it worked.  Beside two busy loops in other scheduling groups (and one in
 *    its own per core), a 140 µs span using 69 % of the CPU got 45-57 % of it from all samples,
 *    63-75 % from the timely ones alone (few samples then find it on a CPU: the rest is their
 *    scatter, not a bias).  So a sample that runs more than an eighth of a period
 *    after its tick keeps its stretches apart (the *_late_ns figures); a write shares each
 *    thread's wall time and CPU time among its spans in the proportion of their timely
 *    stretches, and uses the late ones only for a thread that has no timely one.
 *  - Still stretches are exact.  When the thread's CPU clock has not moved since its previous
 *    sample, the thread ran no instruction in between: its top frame was the same the whole
 *    stretch, whenever the sampler got to look.  Such a stretch (wall_still_ns) is charged as it
 *    is, never scaled, timely or not; only the stretches the thread ran in are shared out as
 *    above.  Without the real-time priority the timely samples still lean to where the thread
 *    sleeps (the sampler gets a CPU more easily then).  Beside four busy loops in sessions of
 *    their own and one per core in the program's, at 4 kHz, paired runs: the sleeping span's
 *    wall share came out 5.4-8.4 points above the program's own clock when every stretch was
 *    shared out, 0.2-1.8 points with still stretches charged as they are (4.9 ms and 2.1 ms
 *    spans, and 140 µs and 60 µs ones).
 *  - One interval at a time.  Each write shares out only what was sampled since the write before
 *    it (the stretches and the CPU time of that interval), adding the result to what earlier
 *    writes settled: a span that ran before one write and not after it keeps the same times in
 *    every later one, so the difference of two snapshots (a live profile's window) holds only
 *    what the threads did between them, never a share that moved as other spans were sampled.
 * Whether a thread is on a CPU: its CPU clock (which Linux lets any thread of the process read:
 * the clock id is built from the tid, as glibc's pthread_getcpuclockid does) moved since its
 * previous sample and moves between two reads, one system call each (the second only when the
 * first found it moved).  Nothing is sent to the thread: no signal, no EINTR.
 * A thread outside every span is charged to its root (the time SPANPROF_IDLE shows), and so is
 * the main thread's time from the process's start to its first span.  The figures live behind
 * each node (struct spanprof__sample_node); the sampler is their only writer (relaxed atomic
 * adds), the writers read them under the process lock, which a pass holds too, so a write never
 * sees half a pass.
 *
 * Reading another thread's top frame: the owner publishes top with a relaxed store after writing
 * the frame (x86 keeps the order; the frame's node is a valid node pointer in any case: slots
 * only ever hold nodes, and nodes are never freed).  The frame array may move (stack.c's grow);
 * with frames_shared set it keeps the old array mapped, so a top loaded just before the move
 * still points to mapped memory holding a node of that thread.  The owner's stores to frames are
 * plain (the hot path's), hence the read below is not instrumented by ThreadSanitizer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect/collect.h"
#include "record/clock.h"

size_t spanprof__sample_ext_offset;

void spanprof__sample_layout(void)
{
    spanprof__sample_ext_offset =
        spanprof__node_ext_add(sizeof(struct spanprof__sample_node), spanprof__sample_node_merge);
    spanprof__flags.frames_shared = 1;
}

static uint64_t clock_ns(int clock, int *ok)
{
    struct timespec ts;
    *ok = clock_gettime((clockid_t)clock, &ts) == 0;
    return *ok ? (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec : 0;
}

/* The thread's own clocks, as the sampler's starting point. */
static void restart(struct spanprof__sample_thread *st, struct spanprof__thread *t, uint64_t wall)
{
    int saved_errno = errno, ok;
    st->cpu_clock = spanprof__thread_cpu_clock(t->tid);
    st->last_cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID, &ok);
    st->last_wall_ns = wall;
    st->cpu_used_ns = st->wall_timely_ns = st->wall_late_ns = 0;
    st->cpu_timely_ns = st->cpu_late_ns = st->wall_before_ns = st->cpu_before_ns = 0;
    st->cpu_used_at = st->wall_timely_at = st->wall_late_at = st->cpu_timely_at = st->cpu_late_at = 0;
    errno = saved_errno;
}

void spanprof__sample_thread_new(struct spanprof__thread *t)
{
    struct spanprof__sample_thread *st = spanprof__arena_alloc(&t->arena, sizeof *st);
    if (!st)
        return; /* out of memory: this thread is not sampled */
    uint64_t now = spanprof__mono_ns();
    restart(st, t, now);
    /* The main thread's time counts from the process's start, as SPANPROF_IDLE's does: what it
     * spent before its first span, asleep or not, is outside every span (the first sample would
     * otherwise charge it all to the span that thread is in by then). */
    if (t->tid == getpid()) {
        st->wall_before_ns = now > spanprof__g.start_mono_ns ? now - spanprof__g.start_mono_ns : 0;
        st->cpu_before_ns = st->last_cpu_ns;
    }
    t->sample = st;
}

static int reset_node(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)depth, (void)ctx;
    memset(spanprof__sample_of(n), 0, sizeof(struct spanprof__sample_node));
    return 1;
}

void spanprof__sample_fork_child(struct spanprof__thread *t)
{
    struct spanprof__sample_thread *st = t->sample;
    if (!st)
        return;
    spanprof__tree_walk(&t->root, reset_node, NULL, NULL);
    memset(&st->root, 0, sizeof st->root);
    restart(st, t, spanprof__g.start_mono_ns); /* the child's start: the fork */
}

/* How a write turns one thread's stretches of the interval since the last write into times:
 * each node's timely stretches of the interval (or its late ones, when the thread had no timely
 * one in it) times these. */
struct sample_scale {
    int wall_late, cpu_late; /* the thread has no timely stretch (on a CPU) in the interval */
    double wall, cpu;        /* its wall time over those stretches; its CPU clock over these */
};

static double ratio(uint64_t num, uint64_t den)
{
    return den ? (double)num / (double)den : 0;
}

/* *AT's part of the counter P not yet settled; *AT moves up to it. */
static uint64_t since(const uint64_t *p, uint64_t *at)
{
    uint64_t now = __atomic_load_n(p, __ATOMIC_RELAXED), d = now > *at ? now - *at : 0;
    *at = now;
    return d;
}

/* The thread's interval since the last write, and the scale for its nodes' stretches in it;
 * *UNSEEN_CPU: CPU time used in the interval that no sample found it using. */
static struct sample_scale scale_of(struct spanprof__sample_thread *st, uint64_t *unseen_cpu)
{
    uint64_t wall_timely = since(&st->wall_timely_ns, &st->wall_timely_at);
    uint64_t wall_late = since(&st->wall_late_ns, &st->wall_late_at);
    uint64_t cpu_timely = since(&st->cpu_timely_ns, &st->cpu_timely_at);
    uint64_t cpu_late = since(&st->cpu_late_ns, &st->cpu_late_at);
    uint64_t cpu_used = since(&st->cpu_used_ns, &st->cpu_used_at);
    struct sample_scale sc = {.wall_late = wall_timely == 0, .cpu_late = cpu_timely == 0};
    sc.wall = sc.wall_late ? 1 : ratio(wall_timely + wall_late, wall_timely);
    sc.cpu = ratio(cpu_used, sc.cpu_late ? cpu_late : cpu_timely);
    *unseen_cpu = sc.cpu == 0 ? cpu_used : 0;
    return sc;
}

/* Node S's self times: what the interval adds to what earlier writes settled. */
static void settle(struct spanprof__sample_node *s, const struct sample_scale *sc)
{
    uint64_t wall_timely = since(&s->wall_timely_ns, &s->wall_timely_at);
    uint64_t wall_late = since(&s->wall_late_ns, &s->wall_late_at);
    uint64_t wall_still = since(&s->wall_still_ns, &s->wall_still_at);
    uint64_t cpu_timely = since(&s->cpu_timely_ns, &s->cpu_timely_at);
    uint64_t cpu_late = since(&s->cpu_late_ns, &s->cpu_late_at);
    double wall_shared = (double)(sc->wall_late ? wall_late : wall_timely) * sc->wall;
    s->wall_settled += (double)wall_still + wall_shared;
    s->cpu_settled += (double)(sc->cpu_late ? cpu_late : cpu_timely) * sc->cpu;
    s->wall_ns = (uint64_t)(s->wall_settled + 0.5);
    s->cpu_ns = (uint64_t)(s->cpu_settled + 0.5);
}

/* Pre-order: a node's subtree starts with its own figures; post-order: it adds into its
 * parent's (the root's are its own, in struct spanprof__sample_thread). */
static int sums_pre(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)depth;
    struct spanprof__sample_node *s = spanprof__sample_of(n);
    settle(s, ctx);
    s->wall_incl = s->wall_ns;
    s->cpu_incl = s->cpu_ns;
    s->samples_incl = __atomic_load_n(&s->samples, __ATOMIC_RELAXED);
    return 1;
}

static void sums_post(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)ctx;
    if (depth == 1)
        return;
    const struct spanprof__sample_node *s = spanprof__sample_of(n);
    struct spanprof__sample_node *p = spanprof__sample_of(n->parent);
    p->wall_incl += s->wall_incl;
    p->cpu_incl += s->cpu_incl;
    p->samples_incl += s->samples_incl;
}

void spanprof__sample_sums(struct spanprof__thread *t)
{
    struct spanprof__sample_thread *st = t->sample;
    uint64_t unseen_cpu = 0;
    struct sample_scale sc = st ? scale_of(st, &unseen_cpu) : (struct sample_scale){0};
    spanprof__tree_walk(&t->root, sums_pre, sums_post, &sc);
    if (!st)
        return;
    /* CPU time that no sample of the interval found the thread using (a thread too short-lived
     * to be seen on a CPU) is outside every span: nowhere else to put it. */
    st->root.cpu_settled += (double)unseen_cpu;
    settle(&st->root, &sc);
    st->root.wall_ns += st->wall_before_ns;
    st->root.cpu_ns += st->cpu_before_ns;
}

static void add(uint64_t *p, uint64_t v)
{
    __atomic_add_fetch(p, v, __ATOMIC_RELAXED);
}

void spanprof__sample_node_merge(void *dst_ext, const void *src_ext)
{
    struct spanprof__sample_node *d = dst_ext;
    const struct spanprof__sample_node *s = src_ext;
    /* Relaxed atomic adds: a writer may read DST meanwhile.  The *_incl figures are recomputed
     * by the next write. */
    add(&d->wall_timely_ns, __atomic_load_n(&s->wall_timely_ns, __ATOMIC_RELAXED));
    add(&d->wall_late_ns, __atomic_load_n(&s->wall_late_ns, __ATOMIC_RELAXED));
    add(&d->wall_still_ns, __atomic_load_n(&s->wall_still_ns, __ATOMIC_RELAXED));
    add(&d->cpu_timely_ns, __atomic_load_n(&s->cpu_timely_ns, __ATOMIC_RELAXED));
    add(&d->cpu_late_ns, __atomic_load_n(&s->cpu_late_ns, __ATOMIC_RELAXED));
    add(&d->samples, __atomic_load_n(&s->samples, __ATOMIC_RELAXED));
    /* what the ended thread's writes settled stays settled (the process lock is held) */
    d->wall_timely_at += s->wall_timely_at;
    d->wall_late_at += s->wall_late_at;
    d->wall_still_at += s->wall_still_at;
    d->cpu_timely_at += s->cpu_timely_at;
    d->cpu_late_at += s->cpu_late_at;
    d->wall_settled += s->wall_settled;
    d->cpu_settled += s->cpu_settled;
}

void spanprof__sample_thread_merge(struct spanprof__thread *dst, const struct spanprof__thread *src)
{
    if (!src->sample)
        return;
    if (!dst->sample) /* a retired group's first thread: its figures start at zero */
        dst->sample = spanprof__arena_alloc(&dst->arena, sizeof *dst->sample);
    if (!dst->sample)
        return;
    /* A group's spans share its threads' CPU time in the proportion of all their stretches. */
    struct spanprof__sample_thread *d = dst->sample;
    const struct spanprof__sample_thread *s = src->sample;
    add(&d->cpu_used_ns, __atomic_load_n(&s->cpu_used_ns, __ATOMIC_RELAXED));
    add(&d->wall_timely_ns, __atomic_load_n(&s->wall_timely_ns, __ATOMIC_RELAXED));
    add(&d->wall_late_ns, __atomic_load_n(&s->wall_late_ns, __ATOMIC_RELAXED));
    add(&d->cpu_timely_ns, __atomic_load_n(&s->cpu_timely_ns, __ATOMIC_RELAXED));
    add(&d->cpu_late_ns, __atomic_load_n(&s->cpu_late_ns, __ATOMIC_RELAXED));
    add(&d->wall_before_ns, __atomic_load_n(&s->wall_before_ns, __ATOMIC_RELAXED));
    add(&d->cpu_before_ns, __atomic_load_n(&s->cpu_before_ns, __ATOMIC_RELAXED));
    d->cpu_used_at += s->cpu_used_at;
    d->wall_timely_at += s->wall_timely_at;
    d->wall_late_at += s->wall_late_at;
    d->cpu_timely_at += s->cpu_timely_at;
    d->cpu_late_at += s->cpu_late_at;
    spanprof__sample_node_merge(&d->root, &s->root);
}

/* T's current innermost span's node, or NULL outside every span.  A parked thread (past the depth
 * cap) is charged to its deepest recorded frame. */
__attribute__((no_sanitize_thread)) static struct spanprof__node *
top_node(const struct spanprof__thread *t)
{
    const struct spanprof__frame *f = SPANPROF_PEEK(t->top);
    struct spanprof__node *n = *(struct spanprof__node *const volatile *)&f->node;
    if (n == &spanprof__miss_node) {
        f = *(struct spanprof__frame *const volatile *)&t->parked_top;
        n = f ? *(struct spanprof__node *const volatile *)&f->node : NULL;
    }
    return n && n->site ? n : NULL;
}

/* The sampler's add to a node's counters.  Not seen by ThreadSanitizer: the node may sit in an
 * arena chunk its thread mapped a moment ago, and the only earlier "write" there is the kernel
 * zero-filling the pages before mmap returned, which a race detector cannot order with the
 * frame's node pointer (published by the hot path with a plain store, read by top_node).  These
 * counters have no other writer outside the global lock the sampler holds. */
__attribute__((no_sanitize_thread)) static void sampler_add(uint64_t *p, uint64_t v)
{
    __atomic_add_fetch(p, v, __ATOMIC_RELAXED);
}

/* Adds V to the sampler-only total *P, which a writer may read meanwhile. */
static void sampler_store_add(uint64_t *p, uint64_t v)
{
    __atomic_store_n(p, *p + v, __ATOMIC_RELAXED);
}

/* At most this many /proc reads per pass (preempted_here): what a pass costs stays bounded
 * however many threads stopped on the sampler's CPU; a thread past it loses that sample, which
 * the write's scaling to its CPU clock stands for. */
#define SAMPLE_PROC_READS_PER_PASS 8

const char *spanprof__task_stat(pid_t tid, char *buf, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n <= 0)
        return NULL;
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* the name may hold anything, ')' included */
    return p && p[1] == ' ' && p[2] ? p + 2 : NULL;
}

/* Whether thread TID is runnable on the CPU the sampler runs on, by its /proc stat (state,
 * field 3, and the CPU it last ran on, field 39): when a timely sampler finds it so, the
 * sampler took that CPU from it at the tick (or it queued there behind what the sampler took
 * the CPU from).  On one CPU — a program pinned with taskset, a one-CPU container — that is the
 * only way the sampler ever finds the thread: the two reads of its CPU clock never see it move,
 * since the sampler itself holds the CPU between them (every sample found it off a CPU, and
 * every span had 0 CPU time).  About 4 µs: three system calls. */
static int preempted_here(pid_t tid, unsigned *reads_left)
{
    if (!*reads_left)
        return 0;
    (*reads_left)--;
    char buf[1024];
    const char *p = spanprof__task_stat(tid, buf, sizeof buf);
    if (!p || *p != 'R')
        return 0;
    for (int field = 3; field < 39 && p; field++)
        p = strchr(p + 1, ' ');
    int here = sched_getcpu();
    return p && here >= 0 && atoi(p + 1) == here;
}

/* Whether the thread of ST (T's) is on a CPU now: its CPU clock moved since its previous
 * sample, and moves again between two reads; or, for a TIMELY sample, it stopped because the
 * sampler took its CPU (preempted_here).  The CPU time it used since then is counted into ST.
 * *STILL: the clock has not moved, so the thread ran nothing since its previous sample. */
static int on_cpu(struct spanprof__sample_thread *st, const struct spanprof__thread *t,
                  int timely, unsigned *reads_left, int *still)
{
    int ok;
    uint64_t cpu = clock_ns(st->cpu_clock, &ok); /* fails only once the thread is gone */
    *still = ok && cpu <= st->last_cpu_ns;
    if (!ok || *still)
        return 0;
    uint64_t again = clock_ns(st->cpu_clock, &ok);
    int moving = ok && again > cpu;
    uint64_t now = moving ? again : cpu;
    sampler_store_add(&st->cpu_used_ns, now - st->last_cpu_ns);
    st->last_cpu_ns = now;
    return moving || (timely && preempted_here(t->tid, reads_left));
}

static void sample_thread(struct spanprof__thread *t, struct spanprof__sample_thread *st,
                          int timely, unsigned *reads_left)
{
    uint64_t wall = spanprof__mono_ns();
    uint64_t dwall = wall > st->last_wall_ns ? wall - st->last_wall_ns : 0;
    st->last_wall_ns = wall;
    struct spanprof__node *n = top_node(t);
    struct spanprof__sample_node *s = n ? spanprof__sample_of(n) : &st->root;
    int still;
    int running = on_cpu(st, t, timely, reads_left, &still);
    if (still) {
        sampler_add(&s->wall_still_ns, dwall);
    } else {
        sampler_add(timely ? &s->wall_timely_ns : &s->wall_late_ns, dwall);
        sampler_store_add(timely ? &st->wall_timely_ns : &st->wall_late_ns, dwall);
    }
    if (running) {
        sampler_add(timely ? &s->cpu_timely_ns : &s->cpu_late_ns, dwall);
        sampler_store_add(timely ? &st->cpu_timely_ns : &st->cpu_late_ns, dwall);
    }
    sampler_add(&s->samples, 1);
}

void spanprof__sample_pass(int timely)
{
    int saved_errno = errno;
    unsigned reads_left = SAMPLE_PROC_READS_PER_PASS;
    spanprof__lock();
    for (struct spanprof__thread *t = spanprof__g.threads; t; t = t->next) {
        struct spanprof__sample_thread *st = t->sample;
        if (st && !__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE))
            sample_thread(t, st, timely, &reads_left);
    }
    spanprof__unlock();
    errno = saved_errno;
}
