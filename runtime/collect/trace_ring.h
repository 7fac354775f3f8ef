/* trace_ring.h — the per-thread trace ring buffer (SPANPROF_TRACE) and its per-call push.
 *
 * Each thread that enters a span gets, at attach (cold path), one mmap'd ring of fixed size.
 * Only its own thread (and signal handlers on it) writes it; the writer (report/trace_writer.c)
 * reads it under the global lock, possibly while the owner runs (see spanprof__trace_snapshot).  When the ring is full the
 * oldest events are overwritten: the file shows the most recent window (a flight recorder) and
 * says how many events were dropped.
 */
#ifndef SPANPROF_TRACE_H
#define SPANPROF_TRACE_H

#include "record/clock.h"
#include "record/counter.h"
#include "record/record.h"

#pragma GCC visibility push(hidden)

/* 16 bytes per event: the site pointer with the low bit set for an exit and the next bit set for
 * an event written in an odd lap of the ring (sites hold pointers, so they are at least 4-byte
 * aligned and both bits are free), and the tick. */
#define SPANPROF__TRACE_EXIT ((uintptr_t)1)
#define SPANPROF__TRACE_ODD_LAP ((uintptr_t)2)
struct spanprof__trace_event {
    uintptr_t tag; /* 0: never written */
    uint64_t tick;
};
_Static_assert(sizeof(struct spanprof__trace_event) == 16, "a trace event is 16 bytes");
_Static_assert(_Alignof(struct spanprof_site) > (SPANPROF__TRACE_EXIT | SPANPROF__TRACE_ODD_LAP),
               "a site pointer's two low bits are free to tag an event");

struct spanprof__trace_ring {
    struct spanprof__trace_event *events;
    size_t capacity; /* events: a power of two */
    uint64_t head;   /* events reserved since attach (slot head % capacity is the next) */
    uint64_t base;   /* events before this one belong to the parent process (fork) */
    uint64_t order;  /* rings in the order threads got them (their first span): the file's */
};

/* Append an event for SITE to this thread's ring.  Called from slowpath.c when tracing is on.
 *
 * Signal handlers may push events on this thread at any instruction, so the slot is reserved
 * first, with one instruction that reads and bumps head (an xadd without lock on x86): a handler
 * that runs after it takes the following slots.  The slot is then written, the tag last (with
 * the lap's parity, so the writer can tell a slot written in this lap from one left over from the
 * last: a push cut short by a siglongjmp, or one in progress while a dump reads).  The tick is
 * taken after the reservation, so a handler that ran in between wrote later ticks into later
 * slots but earlier than ours: the rare path then moves our tick back to theirs, which keeps the
 * ring's ticks in order.
 * Costs: TLS load + ring load, one predictable branch (no ring), xadd, rdtsc (~10.5 ns), two
 * stores, a load and a compare of head.  No locks, allocation or syscalls. */
void spanprof__trace_fix_tick(struct spanprof__trace_ring *r, uint64_t h);
static inline __attribute__((always_inline)) void spanprof__trace_push(const struct spanprof_site *site,
                                                                        uintptr_t kind)
{
    struct spanprof__trace_ring *r = spanprof__tls->trace;
    if (SPANPROF_UNLIKELY(!r))
        return;
    uint64_t h = spanprof__count_fetch_add(&r->head, 1);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    struct spanprof__trace_event *e = &r->events[h & (r->capacity - 1)];
    uintptr_t lap = h & r->capacity ? SPANPROF__TRACE_ODD_LAP : 0;
    __atomic_store_n(&e->tick, spanprof__clock_now(), __ATOMIC_RELAXED);
    __atomic_store_n(&e->tag, (uintptr_t)site | kind | lap, __ATOMIC_RELEASE);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (SPANPROF_UNLIKELY(__atomic_load_n(&r->head, __ATOMIC_RELAXED) != h + 1))
        spanprof__trace_fix_tick(r, h);
}

/* Cold paths (trace_ring.c). */
struct spanprof__trace_ring *spanprof__trace_ring_new(size_t bytes);
void spanprof__trace_ring_free(struct spanprof__trace_ring *r);
void spanprof__trace_attach(struct spanprof__thread *t);
void spanprof__trace_fork_child(struct spanprof__thread *t);
/* Copies the events still in T's ring, oldest first, into a malloc'd array (count in *n);
 * *dropped gets the number of events overwritten or lost to a concurrent writer.  Returns NULL
 * with *n == 0 when empty (or out of memory: then every event counts as dropped). */
struct spanprof__trace_event *spanprof__trace_snapshot(const struct spanprof__trace_ring *r, size_t *n,
                                                       uint64_t *dropped);

/* The rings of the threads that ended most recently (trace_retired.c), read by the trace writer
 * under the process lock: v[i] for i < n, oldest first from slot next when n is full. */
#define SPANPROF__TRACE_RETIRED 32
struct spanprof__trace_exited {
    struct spanprof__trace_ring *ring; /* NULL: slot unused */
    pid_t tid;
    uint64_t end_tick;
    uint64_t seq; /* order of the exits */
    char name[64];
};
struct spanprof__trace_retired {
    struct spanprof__trace_exited v[SPANPROF__TRACE_RETIRED];
    size_t n, next;
    uint64_t seq;
    uint64_t threads_dropped; /* ended threads whose ring was unmapped to make room */
    uint64_t events_dropped;  /* the events those rings held */
};
extern struct spanprof__trace_retired spanprof__trace_retired;
/* T's thread ended: its ring moves to the store (T->trace becomes NULL). */
void spanprof__trace_retire(struct spanprof__thread *t);
void spanprof__trace_retired_drop(void);

#pragma GCC visibility pop

#endif /* SPANPROF_TRACE_H */
