/* nodeext.c — the collectors' data behind each call-tree node: who owns which bytes, and merging
 * them when an ended thread's tree is added to its retired group (record/threadretire.c).
 *
 * Each collector that keeps data per node registers its size and a merge function at start-up
 * (from spanprof__collectors_start, before any site is registered) and gets the offset of its
 * bytes behind the node; spanprof__flags.node_ext is the sum.  The recording layer zeroes the
 * bytes of a new node and calls spanprof__hooks.node_merge, which lands here, for each node of a
 * retired thread: every registered merge runs on its own bytes.
 */
#include <stdio.h>

#include "collect/collect.h"

#define NODE_EXT_MAX 8

static struct {
    size_t offset;
    spanprof__node_merge_fn merge;
} users[NODE_EXT_MAX];
static size_t nusers;

size_t spanprof__node_ext_add(size_t size, spanprof__node_merge_fn merge)
{
    size_t offset = spanprof__flags.node_ext;
    if (nusers == NODE_EXT_MAX) {
        /* A build-time limit: more collectors than slots is a bug in collectors.c. */
        fprintf(stderr, "spanprof: internal error: more than %d users of per-node data\n",
                NODE_EXT_MAX);
        return offset;
    }
    users[nusers].offset = offset;
    users[nusers++].merge = merge;
    spanprof__flags.node_ext = offset + ((size + 7) & ~(size_t)7);
    return offset;
}

void spanprof__node_ext_merge(struct spanprof__node *dst, const struct spanprof__node *src)
{
    for (size_t i = 0; i < nusers; i++)
        users[i].merge((char *)(dst + 1) + users[i].offset,
                       (const char *)(src + 1) + users[i].offset);
}
