/* trace_ring.c — SPANPROF_TRACE's per-thread rings, cold side: mapping one at a thread's first
 * span, restarting it in a fork child, and the snapshot the trace writer reads (report/).
 * The push is the recording layer's (record/tracepush.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/collect.h"
#include "collect/flight.h"
#include "collect/trace_ring.h"
#include "record/siteretire.h"

/* One mapping: the header, then the events.  Pages are touched only as the ring fills. */
struct spanprof__trace_ring *spanprof__trace_ring_new(size_t bytes)
{
    /* A power of two (rounded down), so the push finds its slot with a mask. */
    size_t want = bytes / sizeof(struct spanprof__trace_event), cap = 2;
    while (cap <= want / 2)
        cap *= 2;
    size_t head = (sizeof(struct spanprof__trace_ring) + 63) & ~(size_t)63;
    char *p = spanprof__map(head + cap * sizeof(struct spanprof__trace_event));
    if (!p)
        return NULL;
    struct spanprof__trace_ring *r = (struct spanprof__trace_ring *)p;
    r->events = (struct spanprof__trace_event *)(p + head);
    r->capacity = cap;
    return r;
}

static size_t ring_bytes(size_t capacity)
{
    size_t head = (sizeof(struct spanprof__trace_ring) + 63) & ~(size_t)63;
    return head + capacity * sizeof(struct spanprof__trace_event);
}

/* Only rings no thread pushes to any more (their thread ended), under the process lock. */
void spanprof__trace_ring_free(struct spanprof__trace_ring *r)
{
    spanprof__unmap(r, ring_bytes(r->capacity));
}

/* At a thread's first span (cold, before it is registered). */
void spanprof__trace_attach(struct spanprof__thread *t)
{
    static int warned;
    if (!spanprof__collect.trace_buffer)
        return;
    static uint64_t order;
    t->trace = spanprof__trace_ring_new(spanprof__collect.trace_buffer);
    if (t->trace)
        t->trace->order = __atomic_add_fetch(&order, 1, __ATOMIC_RELAXED);
    if (!t->trace && !__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
        fprintf(stderr, "spanprof: warning: no memory for a %zu-byte trace buffer; a thread's "
                        "spans are left out of the trace\n",
                spanprof__collect.trace_buffer);
}

/* The child's trace covers the child only, like its profile. */
void spanprof__trace_fork_child(struct spanprof__thread *t)
{
    if (t->trace)
        t->trace->base = t->trace->head;
}

static void retire_ring_sites(struct spanprof__trace_ring *ring, struct spanprof__retire *r)
{
    uintptr_t bits = SPANPROF__TRACE_EXIT | SPANPROF__TRACE_ODD_LAP;
    for (size_t i = 0; ring && i < ring->capacity; i++) {
        struct spanprof__trace_event *e = &ring->events[i];
        uintptr_t tag = __atomic_load_n(&e->tag, __ATOMIC_ACQUIRE);
        const struct spanprof_site *s = (const void *)(tag & ~bits);
        const struct spanprof_site *c = s ? spanprof__retired(r, s) : s;
        if (c != s)
            __atomic_compare_exchange_n(&e->tag, &tag, (uintptr_t)c | (tag & bits), 0,
                                        __ATOMIC_RELEASE, __ATOMIC_RELAXED);
    }
}

static void retire_site(const struct spanprof_site **p, struct spanprof__retire *r)
{
    const struct spanprof_site *s = __atomic_load_n(p, __ATOMIC_RELAXED);
    const struct spanprof_site *c = spanprof__retired(r, s);
    if (c != s)
        __atomic_store_n(p, c, __ATOMIC_RELAXED);
}

/* Objects going away (record/siteretire.c): every event's site pointer into them becomes the
 * copy's, in the rings of running threads, in those kept of threads that ended
 * (trace_retired.c), and in what a flight capture still waits for (flight.h): its copies of
 * events, its slow call's span and that call's callers.  With the process lock held; a
 * compare-and-swap, so an event a running owner writes meanwhile into the same slot is never
 * overwritten. */
void spanprof__trace_retire_sites(struct spanprof__retire *r)
{
    for (struct spanprof__thread *t = spanprof__g.threads; t; t = t->next)
        retire_ring_sites(t->trace, r);
    for (size_t i = 0; i < SPANPROF__TRACE_RETIRED; i++)
        retire_ring_sites(spanprof__trace_retired.v[i].ring, r);
    for (size_t i = 0; i < SPANPROF__FLIGHT_PENDING; i++) {
        struct spanprof__flight_trigger *t = &spanprof__flight_pending[i];
        for (size_t k = 0; k < 1 + SPANPROF__FLIGHT_OTHERS; k++)
            retire_ring_sites(t->kept[k].ring, r);
        retire_site(&t->site, r);
        for (size_t k = 0; k < t->outer.n && k < SPANPROF__TRACE_OUTER; k++)
            retire_site(&t->outer.v[k].site, r);
    }
}

void spanprof__trace_outer_of_self(struct spanprof__trace_outer *out)
{
    const struct spanprof__thread *t = spanprof__tls;
    out->n = out->depth = 0;
    if (t == &spanprof__sentinel_thread)
        return;
    const struct spanprof__frame *top = t->park_depth ? t->parked_top : t->top;
    out->depth = (size_t)(top - t->frames);
    for (const struct spanprof__frame *f = t->frames + 1;
         f <= top && out->n < SPANPROF__TRACE_OUTER && f->node && f->node->site; f++, out->n++) {
        out->v[out->n].site = f->node->site;
        out->v[out->n].start = f->start;
    }
}

uint64_t spanprof__trace_pending(const struct spanprof__trace_ring *r)
{
    return __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) - __atomic_load_n(&r->base, __ATOMIC_RELAXED);
}

/* Reads every field with atomic loads: the owner may be pushing meanwhile (a dump from another
 * thread).  Slots not written in the lap their position belongs to (a push in progress, or one
 * a siglongjmp cut short) are skipped and counted as dropped.  Async-signal-safe. */
size_t spanprof__trace_snapshot_into(const struct spanprof__trace_ring *r,
                                     struct spanprof__trace_event *ev, uint64_t *dropped)
{
    *dropped = 0;
    if (!r)
        return 0;
    uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
    uint64_t base = __atomic_load_n(&r->base, __ATOMIC_RELAXED);
    uint64_t total = head - base;
    size_t keep = total < r->capacity ? (size_t)total : r->capacity;
    *dropped = total - keep;
    uint64_t first = head - keep;
    for (size_t i = 0; i < keep; i++) {
        const struct spanprof__trace_event *e = &r->events[(first + i) & (r->capacity - 1)];
        ev[i].tag = __atomic_load_n(&e->tag, __ATOMIC_ACQUIRE);
        ev[i].tick = __atomic_load_n(&e->tick, __ATOMIC_RELAXED);
    }
    /* A running owner may have overwritten the oldest slots while we copied: those below its new
     * head less the capacity (the owner's own thread and ended threads never race).  A ring that
     * had room for what it reserved meanwhile lost nothing. */
    uint64_t moved = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) - head;
    uint64_t over = keep + moved > r->capacity ? keep + moved - r->capacity : 0;
    size_t lost = over < keep ? (size_t)over : keep;
    size_t out = 0;
    for (size_t i = lost; i < keep; i++) {
        uintptr_t lap = (first + i) & r->capacity ? SPANPROF__TRACE_ODD_LAP : 0;
        if (!ev[i].tag || (ev[i].tag & SPANPROF__TRACE_ODD_LAP) != lap) {
            lost++;
            continue;
        }
        ev[out].tag = ev[i].tag & ~SPANPROF__TRACE_ODD_LAP;
        ev[out++].tick = ev[i].tick;
    }
    *dropped += lost;
    return out;
}

void spanprof__trace_keep(const struct spanprof__trace_ring *src, struct spanprof__trace_ring *dst)
{
    uint64_t head = __atomic_load_n(&src->head, __ATOMIC_ACQUIRE);
    uint64_t base = __atomic_load_n(&src->base, __ATOMIC_RELAXED);
    uint64_t total = head - base, keep = total < src->capacity ? total : src->capacity;
    if (keep > dst->capacity)
        keep = dst->capacity;
    for (uint64_t h = head - keep; h != head; h++) {
        const struct spanprof__trace_event *e = &src->events[h & (src->capacity - 1)];
        uintptr_t tag = __atomic_load_n(&e->tag, __ATOMIC_ACQUIRE);
        uintptr_t src_lap = h & src->capacity ? SPANPROF__TRACE_ODD_LAP : 0;
        uintptr_t dst_lap = h & dst->capacity ? SPANPROF__TRACE_ODD_LAP : 0;
        struct spanprof__trace_event *d = &dst->events[h & (dst->capacity - 1)];
        __atomic_store_n(&d->tick, __atomic_load_n(&e->tick, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
        /* a slot not written in its lap (a push a signal cut short) is left unwritten: lost;
         * atomic, as a retirement of sites (under the lock) may rewrite the tag meanwhile */
        __atomic_store_n(&d->tag, tag && (tag & SPANPROF__TRACE_ODD_LAP) == src_lap
                                      ? (tag & ~SPANPROF__TRACE_ODD_LAP) | dst_lap : 0,
                         __ATOMIC_RELEASE);
    }
    dst->head = head;
    dst->base = base;
    dst->order = src->order;
}

struct spanprof__trace_event *spanprof__trace_snapshot(const struct spanprof__trace_ring *r, size_t *n,
                                                       uint64_t *dropped)
{
    *n = 0;
    *dropped = 0;
    if (!r || !spanprof__trace_pending(r))
        return NULL;
    struct spanprof__trace_event *ev = malloc(r->capacity * sizeof *ev);
    if (!ev) {
        *dropped = spanprof__trace_pending(r);
        return NULL;
    }
    *n = spanprof__trace_snapshot_into(r, ev, dropped);
    if (!*n) {
        free(ev);
        return NULL;
    }
    return ev;
}
