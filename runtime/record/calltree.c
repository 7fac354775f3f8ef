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

/* Finds or creates PARENT's child for SITE.  Only T's own thread calls this for T's tree (or a
 * test building a tree by hand); other threads may be reading the list concurrently, so a new
 * node is fully built before it is published with a release store. */
struct spanprof__node *spanprof__tree_child(struct spanprof__thread *t,
                                            struct spanprof__node *parent,
                                            const struct spanprof_site *site, size_t ext)
{
    struct spanprof__node *c;
    for (c = parent->first_child; c; c = c->next_sibling)
        if (c->site == site)
            return c;
    /* Collectors' per-node data sits right behind the node, zeroed (fresh mmap). */
    c = spanprof__arena_alloc(&t->arena, sizeof *c + ext);
    if (!c)
        return NULL;
    spanprof__node_init(c, site, parent);
    c->next_sibling = parent->first_child;
    __atomic_store_n(&parent->first_child, c, __ATOMIC_RELEASE);
    return c;
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
            if (n == root) {
                n = NULL;
                break;
            }
        }
    }
}
