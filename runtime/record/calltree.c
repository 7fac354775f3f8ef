/* calltree.c — per-thread call trees: nodes (from the thread's arena, see arena.c), child lookup,
 * iterative walks.
 */
#include "record/record.h"

/* Hint of every new node: its site (NULL) never equals a real site, so the first lookup below a
 * node misses without a NULL check on the hot path. */
struct spanprof__node spanprof__miss_node = {.hint = &spanprof__miss_node};

void spanprof__node_init(struct spanprof__node *n, const struct spanprof_site *site,
                         struct spanprof__node *parent)
{
    n->site = site;
    n->parent = parent;
    n->first_child = NULL;
    n->next_sibling = NULL;
    n->hint = &spanprof__miss_node;
    n->calls = n->total = n->child = 0;
}

void spanprof__child_cache_reset(struct spanprof__thread *t)
{
    for (size_t i = 0; i < SPANPROF__CHILD_CACHE_SLOTS; i++)
        t->child_cache[i] = &spanprof__miss_node;
}

uint32_t spanprof__new_path_wanted;
void (*spanprof__new_path_notify)(void);

/* Out of line: taken once per wish, by whichever thread makes the next node. */
static __attribute__((noinline, cold)) void new_path_made(void)
{
    if (!__atomic_exchange_n(&spanprof__new_path_wanted, 0, __ATOMIC_ACQ_REL))
        return; /* another thread's node took it */
    void (*notify)(void) = __atomic_load_n(&spanprof__new_path_notify, __ATOMIC_ACQUIRE);
    if (notify) {
        int saved = errno;
        notify();
        errno = saved;
    }
}

/* Finds or creates PARENT's child for SITE.  Only T's own thread calls this for T's tree (or a
 * test building a tree by hand), without signals held: a signal handler on the thread may run
 * between any two of its instructions, and create nodes of its own — under the same parent too —
 * before this goes on (the arena's allocation allows for it, arena.c).  So the new node is
 * linked in with a compare-and-swap; when the handler linked children meanwhile, those are
 * searched for SITE first (a node of the handler's is taken, and ours, never linked, is left
 * unused).  Other threads may be reading the list concurrently: a new node is fully built before
 * it is published with a release. */
struct spanprof__node *spanprof__tree_child(struct spanprof__thread *t,
                                            struct spanprof__node *parent,
                                            const struct spanprof_site *site, size_t ext)
{
    struct spanprof__node *head = __atomic_load_n(&parent->first_child, __ATOMIC_ACQUIRE), *c;
    for (c = head; c; c = c->next_sibling)
        if (c->site == site)
            return c;
    /* Collectors' per-node data sits right behind the node, zeroed (fresh mmap). */
    struct spanprof__node *n = spanprof__arena_alloc(&t->arena, sizeof *n + ext);
    if (!n)
        return NULL;
    spanprof__node_init(n, site, parent);
    for (;;) {
        n->next_sibling = head;
        if (__atomic_compare_exchange_n(&parent->first_child, &head, n, 0, __ATOMIC_RELEASE,
                                        __ATOMIC_ACQUIRE)) {
            if (__atomic_load_n(&spanprof__new_path_wanted, __ATOMIC_RELAXED)) /* one load */
                new_path_made();
            return n;
        }
        for (c = head; c != n->next_sibling; c = c->next_sibling)
            if (c->site == site)
                return c;
    }
}

void spanprof__tree_walk(struct spanprof__node *root, spanprof__pre_fn pre,
                         spanprof__post_fn post, void *ctx)
{
    struct spanprof__node *n = __atomic_load_n(&root->first_child, __ATOMIC_ACQUIRE);
    size_t depth = 1;
    while (n) {
        struct spanprof__node *c = NULL;
        if (pre(n, depth, ctx))
            c = __atomic_load_n(&n->first_child, __ATOMIC_ACQUIRE);
        if (c) {
            n = c;
            depth++;
            continue;
        }
        /* Leaf (or not descended): finish it and its finished ancestors, then go to the next
         * sibling up the chain. */
        for (;;) {
            if (post)
                post(n, depth, ctx);
            if (n->next_sibling) {
                n = n->next_sibling;
                break;
            }
            n = n->parent;
            depth--;
            /* No parent: the tree was reset under a reader that takes no lock (the crash writer
             * while an ended thread's memory is recycled, see threadretire.c): stop there. */
            if (n == root || !n) {
                n = NULL;
                break;
            }
        }
    }
}

struct merge {
    struct spanprof__thread *dst;
    const struct spanprof__node *src_root;
    uint64_t lost;
};

static int merge_pre(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)depth;
    struct merge *m = ctx;
    /* Pre-order: the parent's counterpart is already in its hint (the root's is DST's root). */
    struct spanprof__node *p = n->parent == m->src_root ? &m->dst->root : n->parent->hint;
    struct spanprof__node *d =
        spanprof__tree_child(m->dst, p, n->site, spanprof__flags.node_ext);
    n->hint = d;
    if (!d) {
        m->lost += n->calls;
        spanprof__abandoned_forget_tree(n); /* its memory is reused all the same */
        return 0;
    }
    spanprof__abandoned_move(d, n);
    /* Relaxed atomic adds: a group is only written under the process lock, but the crash writer
     * reads it without. */
    __atomic_add_fetch(&d->calls, n->calls, __ATOMIC_RELAXED);
    __atomic_add_fetch(&d->total, n->total, __ATOMIC_RELAXED);
    __atomic_add_fetch(&d->child, n->child, __ATOMIC_RELAXED);
    if (spanprof__hooks.node_merge)
        spanprof__hooks.node_merge(d, n);
    return 1;
}

/* Path-wise merge of SRC's tree into DST's (threadretire.c, under the process lock; SRC's thread has
 * ended): each node of SRC adds its counts to the node of DST with the same path, created if
 * missing.  Afterwards each node of SRC has its counterpart in its hint (SRC's tree is about to
 * be reset, nothing reads its hints again).  Returns the calls of subtrees left out for want of
 * memory. */
uint64_t spanprof__tree_merge(struct spanprof__thread *dst, struct spanprof__thread *src)
{
    struct merge m = {dst, &src->root, 0};
    src->root.hint = &dst->root;
    spanprof__tree_walk(&src->root, merge_pre, NULL, &m);
    __atomic_add_fetch(&dst->root.calls, src->root.calls, __ATOMIC_RELAXED);
    __atomic_add_fetch(&dst->root.total, src->root.total, __ATOMIC_RELAXED);
    __atomic_add_fetch(&dst->root.child, src->root.child, __ATOMIC_RELAXED);
    return m.lost;
}
