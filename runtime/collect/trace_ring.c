/* trace_ring.c — SPANPROF_TRACE's per-thread rings, cold side: mapping one at a thread's first
 * span, restarting it in a fork child, and the snapshot the trace writer reads (report/).
 * The push is inline in trace_ring.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/collect.h"
#include "collect/trace_ring.h"

/* One mapping: the header, then the events.  Pages are touched only as the ring fills. */
struct spanprof__trace_ring *spanprof__trace_ring_new(size_t bytes)
{
    size_t cap = bytes / sizeof(struct spanprof__trace_event);
    if (cap < 2)
        cap = 2;
    size_t head = (sizeof(struct spanprof__trace_ring) + 63) & ~(size_t)63;
    char *p = spanprof__map(head + cap * sizeof(struct spanprof__trace_event));
    if (!p)
        return NULL;
    struct spanprof__trace_ring *r = (struct spanprof__trace_ring *)p;
    r->events = (struct spanprof__trace_event *)(p + head);
    r->capacity = cap;
    return r;
}

/* At a thread's first span (cold, before it is registered). */
void spanprof__trace_attach(struct spanprof__thread *t)
{
    static int warned;
    if (!spanprof__collect.trace_buffer)
        return;
    t->trace = spanprof__trace_ring_new(spanprof__collect.trace_buffer);
    if (!t->trace && !__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
        fprintf(stderr, "spanprof: warning: no memory for a %zu-byte trace buffer; a thread's "
                        "spans are left out of the trace\n",
                spanprof__collect.trace_buffer);
}

/* The child's trace covers the child only, like its profile. */
void spanprof__trace_fork_child(struct spanprof__thread *t)
{
    if (t->trace) {
        t->trace->pos = 0;
        t->trace->head = 0;
    }
}

struct spanprof__trace_event *spanprof__trace_snapshot(const struct spanprof__trace_ring *r, size_t *n,
                                                       uint64_t *dropped)
{
    *n = 0;
    *dropped = 0;
    if (!r)
        return NULL;
    uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
    size_t keep = head < r->capacity ? (size_t)head : r->capacity;
    *dropped = head - keep;
    if (!keep)
        return NULL;
    struct spanprof__trace_event *ev = malloc(keep * sizeof *ev);
    if (!ev) {
        *dropped = head;
        return NULL;
    }
    size_t first = (size_t)((head - keep) % r->capacity);
    size_t part = r->capacity - first < keep ? r->capacity - first : keep;
    memcpy(ev, r->events + first, part * sizeof *ev);
    memcpy(ev + part, r->events, (keep - part) * sizeof *ev);
    /* A running owner may have overwritten the oldest slots while we copied: drop as many as it
     * wrote meanwhile (the owner's own thread and ended threads never race). */
    uint64_t moved = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) - head;
    if (moved) {
        size_t lost = moved < keep ? (size_t)moved : keep;
        memmove(ev, ev + lost, (keep - lost) * sizeof *ev);
        keep -= lost;
        *dropped += lost;
    }
    *n = keep;
    return ev;
}
