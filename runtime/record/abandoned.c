/* abandoned.c — how many activations of each call-tree node were abandoned (popped by repair
 * after a longjmp or a noreturn call: their exit never ran), so that compensation
 * (report/aggregate.c) can take out of them only what their enter cost, never an exit that did
 * not happen.
 *
 * The node is one cache line with a published layout (spanprof.h), and the count is needed only
 * for the few nodes that ever lose a frame that way, so it lives in a side table: one for the
 * process, keyed by node address, open addressing with linear probing, never shrunk.  A table
 * half full gets a successor twice its size, linked in front of it; older tables stay (their
 * entries are still found and counted), so nothing is ever moved or unmapped while a reader
 * without the lock (the crash writer, a dump on another thread) walks them.
 *
 * Writers of the table: the node's own thread, on the repair path (not under the re-entry guard:
 * a signal handler's spans may interrupt it and abandon frames of their own), and the process
 * lock's holder merging a retired thread into its group.  A slot is claimed by a compare-and-swap
 * of its key, so claims from several threads and from a handler interrupting a claim never take
 * the same slot twice; a count is only ever added to by the node's owner (a handler on its
 * thread abandons other nodes: its frames nest under the interrupted top), so a signal-atomic add
 * (counter.h) is enough.  A new table comes from mmap, the one system call here, once per
 * doubling; an out-of-memory that leaves a count nowhere is counted in
 * spanprof__g.abandoned_unplaced, so that the writers can assume any call may have been
 * abandoned.
 *
 * A count stays with its node's address: a node whose memory is reused (a retired thread's arena
 * rewound, threadretire.c) must not pass its count to the next node there.  The retire merge
 * moves each count to the group's node (spanprof__abandoned_move) and the fork child drops the
 * table with the parent's trees (spanprof__abandoned_fork_child).
 */
#include "record/record.h"

#define FIRST_SLOTS 256 /* 4 KiB: one page */

struct slot {
    struct spanprof__node *node; /* claimed once (compare-and-swap), never changed afterwards */
    uint64_t count;              /* written by the node's owner only */
};

struct spanprof__abandoned {
    struct spanprof__abandoned *older; /* the table this one succeeded, or NULL */
    size_t mask;         /* slots - 1 */
    uint64_t used;       /* slots claimed (atomic) */
    struct slot slot[];
};

static struct spanprof__abandoned *newest(void)
{
    return __atomic_load_n(&spanprof__g.abandoned, __ATOMIC_ACQUIRE);
}

static size_t bytes_of(size_t slots)
{
    return sizeof(struct spanprof__abandoned) + slots * sizeof(struct slot);
}

static size_t hash(const struct spanprof__node *n, size_t mask)
{
    /* Nodes are 64-byte aligned: the low bits say nothing. */
    return (size_t)((((uintptr_t)n >> 6) * 0x9e3779b97f4a7c15ull) >> 17) & mask;
}

/* N's slot in T, or NULL. */
static inline __attribute__((always_inline)) struct slot *find_in(struct spanprof__abandoned *t,
                                                                  const struct spanprof__node *n)
{
    for (size_t i = hash(n, t->mask), k = 0; k <= t->mask; i = (i + 1) & t->mask, k++) {
        struct spanprof__node *key = __atomic_load_n(&t->slot[i].node, __ATOMIC_ACQUIRE);
        if (key == n)
            return &t->slot[i];
        if (!key)
            return NULL;
    }
    return NULL;
}

static struct slot *find(const struct spanprof__node *n)
{
    for (struct spanprof__abandoned *t = newest(); t; t = t->older) {
        struct slot *s = find_in(t, n);
        if (s)
            return s;
    }
    return NULL;
}

/* A table to claim slots in: the newest, or its successor when it is half full.  NULL when out
 * of memory. */
static struct spanprof__abandoned *table_for_claim(void)
{
    struct spanprof__abandoned *t = newest();
    if (t && 2 * __atomic_load_n(&t->used, __ATOMIC_RELAXED) < t->mask + 1)
        return t;
    size_t slots = t ? 2 * (t->mask + 1) : FIRST_SLOTS;
    struct spanprof__abandoned *next = spanprof__map(bytes_of(slots)); /* zeroed */
    if (!next)
        return NULL;
    next->older = t;
    next->mask = slots - 1;
    if (__atomic_compare_exchange_n(&spanprof__g.abandoned, &t, next, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        return next;
    /* Another thread (or a handler) linked one first: use that. */
    spanprof__unmap(next, bytes_of(slots));
    return t;
}

/* N's slot, claimed if it has none (NULL when out of memory). */
static struct slot *slot_of(struct spanprof__node *n)
{
    struct slot *s = find(n);
    while (!s) {
        struct spanprof__abandoned *t = table_for_claim();
        if (!t)
            return NULL;
        for (size_t i = hash(n, t->mask), k = 0; k <= t->mask; i = (i + 1) & t->mask, k++) {
            struct spanprof__node *key = NULL;
            if (__atomic_compare_exchange_n(&t->slot[i].node, &key, n, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                __atomic_add_fetch(&t->used, 1, __ATOMIC_RELAXED);
                return &t->slot[i];
            }
            if (key == n)
                return &t->slot[i];
        }
        /* Full (claims raced past the half-full mark): the next round links a successor. */
        __atomic_store_n(&t->used, t->mask + 1, __ATOMIC_RELAXED);
    }
    return s;
}

static SPANPROF_COLD void add(struct spanprof__node *n, uint64_t count)
{
    struct slot *s = slot_of(n);
    if (s)
        spanprof__count_add(&s->count, count);
    else
        __atomic_add_fetch(&spanprof__g.abandoned_unplaced, count, __ATOMIC_RELAXED);
}

/* The usual case first: a node that lost a frame before, in the newest table (a hash and a
 * probe or two, about a nanosecond and a half); a new node or an older table goes out of line. */
void spanprof__abandoned_count(struct spanprof__node *n)
{
    struct spanprof__abandoned *t = newest();
    struct slot *s = t ? find_in(t, n) : NULL;
    if (SPANPROF_LIKELY(s != NULL))
        spanprof__count_add(&s->count, 1);
    else
        add(n, 1);
}

uint64_t spanprof__abandoned_of(const struct spanprof__node *n)
{
    if (!newest())
        return 0; /* the usual case: nothing ever abandoned */
    struct slot *s = find(n);
    return s ? __atomic_load_n(&s->count, __ATOMIC_RELAXED) : 0;
}

void spanprof__abandoned_move(struct spanprof__node *dst, struct spanprof__node *src)
{
    if (!newest())
        return;
    struct slot *s = find(src);
    uint64_t count = s ? __atomic_load_n(&s->count, __ATOMIC_RELAXED) : 0;
    if (!count)
        return;
    __atomic_store_n(&s->count, 0, __ATOMIC_RELAXED);
    if (dst)
        add(dst, count);
}

static int forget_node(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)depth, (void)ctx;
    spanprof__abandoned_move(NULL, n);
    return 1;
}

void spanprof__abandoned_forget_tree(struct spanprof__node *n)
{
    if (!newest())
        return;
    forget_node(n, 0, NULL);
    spanprof__tree_walk(n, forget_node, NULL, NULL);
}

void spanprof__abandoned_fork_child(void)
{
    /* The parent's tables stay mapped in the child, unused: no thread of the child reads them. */
    spanprof__g.abandoned = NULL;
    spanprof__g.abandoned_unplaced = 0;
}
