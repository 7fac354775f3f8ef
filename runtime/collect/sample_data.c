/* sample_data.c — SPANPROF=sample's figures: what one sample charges, and to which node.
 *
 * Calls per stack stay exact (the sites take count mode's inline path, no timestamps); time comes
 * from the sampler thread (sampler.c), which wakes SPANPROF_SAMPLE_HZ times a second and, for
 * every live registered thread, reads its top frame's node and charges it
 *  - the wall time since that thread's previous sample (measured, so a late wake-up or a pass
 *    held up by a write is still charged in full),
 *  - the thread's CPU time since then (its per-thread CPU clock, which Linux lets any thread of
 *    the process read: the clock id is built from the tid, as glibc's pthread_getcpuclockid
 *    does; one system call per thread and sample) — but only if the thread is running (or
 *    runnable) at the sample, and then at most the interval since the previous one: CPU time
 *    used before a span started to wait (a sleep, a lock, I/O) is not that span's, so it is kept
 *    for the next samples that find the thread running (charge_cpu_now, sample_thread),
 *  - one sample.
 * A thread outside every span is charged to its root (the time SPANPROF_IDLE shows), and so is
 * the main thread's time from the process's start to its first span.  The
 * figures live behind each node (struct spanprof__sample_node); the sampler is their only writer
 * (relaxed atomic adds), the writers read them under the process lock, which a pass holds too,
 * so a write never sees half a pass.
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
#include <stdio.h>
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

/* Linux's clock id for thread TID's CPU time (CPUCLOCK_SCHED | CPUCLOCK_PERTHREAD_MASK). */
static int thread_cpu_clock(pid_t tid)
{
    return (int)(~(unsigned)tid << 3) | 6;
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
    st->cpu_clock = thread_cpu_clock(t->tid);
    st->last_cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID, &ok);
    st->last_wall_ns = wall;
    st->pending_cpu_ns = 0;
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
        st->root.wall_ns = now > spanprof__g.start_mono_ns ? now - spanprof__g.start_mono_ns : 0;
        st->root.cpu_ns = st->last_cpu_ns;
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

/* Pre-order: a node's subtree starts with its own figures; post-order: it adds into its
 * parent's (the root's are its own, in struct spanprof__sample_thread). */
static int sums_pre(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)depth, (void)ctx;
    struct spanprof__sample_node *s = spanprof__sample_of(n);
    s->wall_incl = __atomic_load_n(&s->wall_ns, __ATOMIC_RELAXED);
    s->cpu_incl = __atomic_load_n(&s->cpu_ns, __ATOMIC_RELAXED);
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
    spanprof__tree_walk(&t->root, sums_pre, sums_post, NULL);
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
    add(&d->wall_ns, __atomic_load_n(&s->wall_ns, __ATOMIC_RELAXED));
    add(&d->cpu_ns, __atomic_load_n(&s->cpu_ns, __ATOMIC_RELAXED));
    add(&d->samples, __atomic_load_n(&s->samples, __ATOMIC_RELAXED));
}

void spanprof__sample_thread_merge(struct spanprof__thread *dst, const struct spanprof__thread *src)
{
    if (!src->sample)
        return;
    if (!dst->sample) /* a retired group's first thread: its figures start at zero */
        dst->sample = spanprof__arena_alloc(&dst->arena, sizeof *dst->sample);
    if (!dst->sample)
        return;
    struct spanprof__sample_node *d = &dst->sample->root;
    const struct spanprof__sample_node *s = &src->sample->root;
    add(&d->wall_ns, __atomic_load_n(&s->wall_ns, __ATOMIC_RELAXED));
    add(&d->cpu_ns, __atomic_load_n(&s->cpu_ns, __ATOMIC_RELAXED));
    add(&d->samples, __atomic_load_n(&s->samples, __ATOMIC_RELAXED));
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

/* Whether thread TID is running or waiting for a CPU now (state R in /proc: 1), or not (asleep,
 * blocked, stopped: 0); -1 when /proc cannot tell.  ~7 µs: open, read, close — no descriptor is
 * kept, as a program may close descriptors it did not open and reuse their numbers. */
static int thread_running(pid_t tid)
{
    char path[48], buf[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    /* "tid (comm) S ...": the name may hold spaces and parentheses, the state follows the last
     * ") " (a name longer than the buffer leaves no state to read: unknown). */
    const char *close_paren = strrchr(buf, ')');
    if (!close_paren || close_paren[1] != ' ' || !close_paren[2])
        return -1;
    return close_paren[2] == 'R';
}

/* At most this many /proc reads per pass (~60 µs): with many threads that work in short bursts
 * and wait in between, the rest of a pass charges them as if they were running. */
#define STATE_READS_PER_PASS 8
static unsigned state_reads; /* this pass's (sampler only) */

/* Whether the DCPU of CPU time a thread used over the DWALL since its previous sample goes to the
 * span it is in now.  Nothing to charge without CPU time; a thread busy almost all that time is
 * running (at most a 64th of the interval, spent before a wait that began just now, lands on
 * the waiting span); otherwise /proc says whether it runs now. */
static int charge_cpu_now(pid_t tid, uint64_t dcpu, uint64_t dwall)
{
    if (dcpu == 0)
        return 0;
    if (dcpu >= dwall - dwall / 64 || state_reads >= STATE_READS_PER_PASS)
        return 1;
    state_reads++;
    return thread_running(tid) != 0; /* unknown (the thread just ended, no /proc): running */
}

void spanprof__sample_check_proc(void)
{
    pid_t self = gettid();
    if (thread_running(self) < 0)
        fprintf(stderr, "spanprof: warning: SPANPROF=sample cannot read /proc/self/task/%d/stat "
                        "(%s): CPU time goes to the span a thread is in at each sample, "
                        "even one that waits\n", (int)self, strerror(errno ? errno : EIO));
}

static void sample_thread(struct spanprof__thread *t, struct spanprof__sample_thread *st)
{
    uint64_t wall = spanprof__mono_ns();
    int ok;
    uint64_t cpu = clock_ns(st->cpu_clock, &ok); /* fails only once the thread is gone */
    uint64_t dwall = wall > st->last_wall_ns ? wall - st->last_wall_ns : 0;
    uint64_t dcpu = ok && cpu > st->last_cpu_ns ? cpu - st->last_cpu_ns : 0;
    st->last_wall_ns = wall;
    if (ok)
        st->last_cpu_ns = cpu;
    struct spanprof__node *n = top_node(t);
    struct spanprof__sample_node *s = n ? spanprof__sample_of(n) : &st->root;
    sampler_add(&s->wall_ns, dwall);
    /* A sample that finds the thread running charges at most the interval's length: a constant
     * share per such sample, whatever part of the interval the thread ran in, and so no more CPU
     * to a span for coming right after a wait (which the whole delta would give it). */
    st->pending_cpu_ns += dcpu;
    if (charge_cpu_now(t->tid, dcpu, dwall)) {
        uint64_t c = st->pending_cpu_ns < dwall ? st->pending_cpu_ns : dwall;
        sampler_add(&s->cpu_ns, c);
        st->pending_cpu_ns -= c;
    }
    sampler_add(&s->samples, 1);
}

void spanprof__sample_pass(void)
{
    int saved_errno = errno;
    spanprof__lock();
    state_reads = 0;
    for (struct spanprof__thread *t = spanprof__g.threads; t; t = t->next) {
        struct spanprof__sample_thread *st = t->sample;
        if (st && !__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE))
            sample_thread(t, st);
    }
    spanprof__unlock();
    errno = saved_errno;
}
