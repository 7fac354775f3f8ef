/* childcache.h — the second level of the enter path's child lookup: a per-thread direct-mapped
 * cache from (parent node, site) to the child node, consulted inline when the parent's one-entry
 * hint misses.
 *
 * Why: a parent that calls several spans in turn (an interpreter loop, a dispatcher: the norm in
 * real programs) misses its hint on almost every call.  Without this cache each such call went
 * out of line to the cold path and walked the parent's child list.  The cache holds node
 * pointers only: an entry is usable when the node's site and parent (set before the node is
 * published, never changed) are the ones looked for, so a slot that another (parent, site) pair
 * took over, or that a signal handler rewrote meanwhile, can cost a miss but never yields a wrong
 * node.  Slots start at spanprof__miss_node, whose site (NULL) matches nothing, so the lookup
 * needs no NULL test.  Filled by the cold path (stack.c) whenever it pushes a node.
 *
 * Memory: SPANPROF__CHILD_CACHE_SLOTS pointers in each thread's data (8 KiB).
 */
#ifndef SPANPROF_CHILDCACHE_H
#define SPANPROF_CHILDCACHE_H

#include "record/record.h"

#pragma GCC visibility push(hidden)

/* The slot of (PARENT, SITE), as the plugin's inline path computes it too (spanprof.h): a
 * multiplicative hash of the two addresses (xor, imul, shift: ~5 cycles, no memory access).  Nodes are 64-byte aligned and sites 48 bytes apart, so plain low
 * address bits would crowd a parent's children into a few slots; the multiply spreads them. */
static inline __attribute__((always_inline)) size_t
spanprof__child_slot(const struct spanprof__node *parent, const struct spanprof_site *site)
{
    uint64_t h = ((uint64_t)(uintptr_t)parent ^ ((uint64_t)(uintptr_t)site << 16)) *
                 SPANPROF_ABI_CHILD_HASH;
    return (size_t)(h >> (64 - SPANPROF__CHILD_CACHE_BITS));
}

/* PARENT's child for SITE if the cache has it, else NULL.  One load from the thread's table,
 * two from the node (one line), two compares. */
static inline __attribute__((always_inline)) struct spanprof__node *
spanprof__child_cache_find(struct spanprof__thread *t, const struct spanprof__node *parent,
                           const struct spanprof_site *site)
{
    struct spanprof__node *n = t->child_cache[spanprof__child_slot(parent, site)];
    return n->site == site && n->parent == parent ? n : NULL;
}

/* Cold path: remember N (a published node) as its parent's child for its site. */
static inline void spanprof__child_cache_put(struct spanprof__thread *t, struct spanprof__node *n)
{
    t->child_cache[spanprof__child_slot(n->parent, n->site)] = n;
}

#pragma GCC visibility pop

#endif /* SPANPROF_CHILDCACHE_H */
