/* threadretire.c — thread data's memory over a thread's life: fresh from mmap, and at the thread's
 * end merged into a retired group and recycled for the next thread (thread churn).
 *
 * At the thread's exit (thread.c's key destructor, under the process lock) its call tree and
 * counters are merged into a retired group: a struct spanprof__thread like any other (so every
 * writer reads it unchanged), marked exited, with no tid, one per thread name — the name is what
 * the per-thread outputs (SPANPROF_THREADS=1) print, so they stay the same.  The group keeps the
 * number of threads it holds (merged), the sum of their lifetimes (for SPANPROF_IDLE), the sums
 * of their anomaly counters and, through spanprof__hooks.thread_merge/node_merge, the
 * collectors' data.  At most SPANPROF_GROUPS_MAX names get a group of their own; threads of
 * further names go to one more group named "(other threads)".
 *
 * The thread's own data (the struct, its frame array, its arena's chunks, its histogram table,
 * the collectors' per-thread data) then goes, reset, to a free list, and the next thread that
 * enters its first span takes it from there (thread.c).  Nothing is unmapped: the crash writer
 * reads the registry without the lock from a signal handler, and memory that stays mapped keeps
 * that safe.  So memory grows with the groups' trees (distinct stacks) and with the peak number
 * of live threads, not with the number of threads ever created.
 *
 * A thread that runs spans after its data was retired (in another key destructor that runs
 * later) gets fresh data; the destructor then runs again for it (glibc repeats the destructors
 * while values are set, up to PTHREAD_DESTRUCTOR_ITERATIONS rounds).
 */
#include <stdio.h>
#include <string.h>

#include "record/histogram.h"
#include "record/record.h"

const char spanprof__other_threads[] = "(other threads)";

#define INITIAL_FRAMES ((size_t)1024)

/* Fresh thread data, mapped (zeroed) with its root and frame array set up. */
struct spanprof__thread *spanprof__thread_map(void)
{
    size_t cap = INITIAL_FRAMES;
    if (cap > spanprof__flags.max_depth + 1)
        cap = spanprof__flags.max_depth + 1;
    struct spanprof__thread *t = spanprof__map(sizeof *t);
    if (!t)
        return NULL;
    t->frames = spanprof__map(cap * sizeof *t->frames);
    if (!t->frames) {
        spanprof__unmap(t, sizeof *t);
        return NULL;
    }
    t->capacity = cap;
    spanprof__node_init(&t->root, NULL, NULL);
    t->frames[0].node = &t->root;
    t->frames[0].cfa = UINTPTR_MAX; /* the root frame is never dead */
    t->top = t->frames;
    t->limit = t->frames + cap - 1;
    t->park_frame.node = &spanprof__miss_node;
    t->park_frame.cfa = 0;
    return t;
}

/* Everything below but spanprof__thread_map is under the process lock. */
static struct spanprof__thread *groups[SPANPROF_GROUPS_MAX];
static size_t ngroups;
static struct spanprof__thread *other; /* the group past the cap */
static struct spanprof__thread *free_list;

/* T back to the state of a thread that has not run a span: its tree is emptied first, so a
 * reader that still walks it finds no children, then the arena is rewound (zeroed). */
static void reset(struct spanprof__thread *t, int keep_nodes)
{
    if (spanprof__hooks.thread_clear)
        spanprof__hooks.thread_clear(t);
    spanprof__node_init(&t->root, NULL, NULL);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    spanprof__hist_forget(t);
    if (keep_nodes)
        t->arena = (struct spanprof__arena){0}; /* its chunks stay, unused, for the pointers */
    else
        spanprof__arena_rewind(&t->arena);
    t->top = t->frames;
    t->parked_top = NULL;
    t->park_depth = 0;
    t->tid = 0;
    __atomic_store_n(&t->exited, 0, __ATOMIC_RELEASE);
    t->open_at_exit = t->abandoned = t->unmatched = t->overflow = 0;
    t->start_tick = t->end_tick = 0;
    memset(t->name, 0, sizeof t->name);
    t->merged = t->lifetimes = 0;
}

static void release(struct spanprof__thread *t, int keep_nodes)
{
    reset(t, keep_nodes);
    t->free_next = free_list;
    free_list = t;
}

void spanprof__thread_discard(struct spanprof__thread *t)
{
    spanprof__lock();
    release(t, 0);
    spanprof__unlock();
}

struct spanprof__thread *spanprof__thread_reuse(void)
{
    spanprof__lock();
    struct spanprof__thread *t = free_list;
    if (t)
        free_list = t->free_next;
    spanprof__unlock();
    if (t)
        t->free_next = NULL;
    return t;
}

/* A new group named NAME, registered (newest first, like a new thread); NULL when out of
 * memory. */
static struct spanprof__thread *group_new(const char *name)
{
    struct spanprof__thread *g = free_list;
    if (g) {
        free_list = g->free_next;
        g->free_next = NULL;
    } else if (!(g = spanprof__thread_map())) {
        return NULL;
    }
    g->tid = 0;
    snprintf(g->name, sizeof g->name, "%s", name);
    __atomic_store_n(&g->exited, 1, __ATOMIC_RELEASE);
    g->next = spanprof__g.threads;
    __atomic_store_n(&spanprof__g.threads, g, __ATOMIC_RELEASE);
    return g;
}

static struct spanprof__thread *group_for(const char *name)
{
    for (size_t i = 0; i < ngroups; i++)
        if (!strcmp(groups[i]->name, name))
            return groups[i];
    if (ngroups < SPANPROF_GROUPS_MAX) {
        struct spanprof__thread *g = group_new(name);
        if (g)
            groups[ngroups++] = g;
        return g;
    }
    if (!other)
        other = group_new(spanprof__other_threads);
    return other;
}

static void unlink_thread(struct spanprof__thread *t)
{
    for (struct spanprof__thread **p = &spanprof__g.threads; *p; p = &(*p)->next)
        if (*p == t) {
            /* t->next is left as it is: a lock-free reader standing on t goes on from there. */
            __atomic_store_n(p, t->next, __ATOMIC_RELEASE);
            return;
        }
}

void spanprof__thread_retire(struct spanprof__thread *t)
{
    struct spanprof__thread *g = group_for(t->name);
    if (!g)
        return; /* out of memory: T keeps its data, as before thread churn was handled */
    uint64_t lost = spanprof__tree_merge(g, t);
    g->merged++;
    g->lifetimes += t->end_tick > t->start_tick ? t->end_tick - t->start_tick : 0;
    __atomic_add_fetch(&g->open_at_exit, t->open_at_exit, __ATOMIC_RELAXED);
    __atomic_add_fetch(&g->abandoned, t->abandoned, __ATOMIC_RELAXED);
    __atomic_add_fetch(&g->unmatched, t->unmatched, __ATOMIC_RELAXED);
    __atomic_add_fetch(&g->overflow, t->overflow + lost, __ATOMIC_RELAXED);
    int keep_nodes = spanprof__hooks.thread_merge ? spanprof__hooks.thread_merge(g, t) : 0;
    unlink_thread(t);
    release(t, keep_nodes);
}

void spanprof__retire_fork_child(struct spanprof__thread *old_registry,
                                 struct spanprof__thread *keep)
{
    for (struct spanprof__thread *t = old_registry, *next; t; t = next) {
        next = t->next;
        if (t != keep)
            release(t, 0); /* no thread of the child points into them */
    }
    ngroups = 0;
    other = NULL;
}
