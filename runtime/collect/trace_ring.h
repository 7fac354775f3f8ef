/* trace_ring.h — the per-thread trace ring buffer (SPANPROF_TRACE) and its per-call push.
 *
 * Each thread that enters a span gets, at attach (cold path), one mmap'd ring of fixed size.
 * Only its own thread writes it; the writer (report/trace_writer.c) reads it under the global lock, racing
 * benignly with a running owner (see spanprof__trace_snapshot).  When the ring is full the
 * oldest events are overwritten: the file shows the most recent window (a flight recorder) and
 * says how many events were dropped.
 */
#ifndef SPANPROF_TRACE_H
#define SPANPROF_TRACE_H

#include "record/clock.h"
#include "record/record.h"

#pragma GCC visibility push(hidden)

/* 16 bytes per event: the site pointer with the low bit set for an exit (sites hold pointers, so
 * they are at least 8-byte aligned and the bit is free), and the tick. */
#define SPANPROF__TRACE_EXIT ((uintptr_t)1)
struct spanprof__trace_event {
    uintptr_t tag;
    uint64_t tick;
};
_Static_assert(sizeof(struct spanprof__trace_event) == 16, "a trace event is 16 bytes");
_Static_assert(_Alignof(struct spanprof_site) > SPANPROF__TRACE_EXIT,
               "a site pointer's low bit is free to tag an exit");

struct spanprof__trace_ring {
    struct spanprof__trace_event *events;
    size_t capacity; /* events */
    size_t pos;      /* next slot to write (== head % capacity), owner only */
    uint64_t head;   /* events written since attach; release-stored, read by the writer */
};

/* Append an event for SITE to this thread's ring.  Called from slowpath.c when tracing is on.
 * Costs: TLS load + ring load, one predictable branch (no ring: a thread with no
 * data, or its ring could not be mapped), rdtsc (~10.5 ns), two stores into the ring, a
 * compare-and-wrap and a plain store of head (release is free on x86).  No locks, allocation or
 * syscalls. */
static inline __attribute__((always_inline)) void spanprof__trace_push(const struct spanprof_site *site,
                                                                        uintptr_t kind)
{
    struct spanprof__trace_ring *r = spanprof__tls->trace;
    if (SPANPROF_UNLIKELY(!r))
        return;
    size_t i = r->pos;
    r->events[i].tag = (uintptr_t)site | kind;
    r->events[i].tick = spanprof__clock_now();
    r->pos = i + 1 == r->capacity ? 0 : i + 1;
    __atomic_store_n(&r->head, r->head + 1, __ATOMIC_RELEASE);
}

/* Cold paths (trace_ring.c). */
struct spanprof__trace_ring *spanprof__trace_ring_new(size_t bytes);
void spanprof__trace_attach(struct spanprof__thread *t);
void spanprof__trace_fork_child(struct spanprof__thread *t);
/* Copies the events still in T's ring, oldest first, into a malloc'd array (count in *n);
 * *dropped gets the number of events overwritten or lost to a concurrent writer.  Returns NULL
 * with *n == 0 when empty (or out of memory: then every event counts as dropped). */
struct spanprof__trace_event *spanprof__trace_snapshot(const struct spanprof__trace_ring *r, size_t *n,
                                                       uint64_t *dropped);

#pragma GCC visibility pop

#endif /* SPANPROF_TRACE_H */
