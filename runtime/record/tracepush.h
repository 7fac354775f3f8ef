/* tracepush.h — SPANPROF_TRACE's per-thread ring: its layout and the push of one event, inline in
 * the span paths (hotpath.h) and the collectors' per-call path.
 *
 * The push lives in the recording layer because tracing shares the timestamps of exact timing:
 * with tracing on, each enter and exit takes its one timestamp through the push (hotpath.h,
 * spanprof__span_tick), so a traced call costs a recorded one plus two ring writes, without a
 * detour through the SLOW state.  The plugin's inline path, which records the frames of sites in
 * state TRACE itself, calls the push for their events (tracepush.c, SPANPROF_ABI_TRACE_PUSH).
 * Creating, restarting and reading the rings is the collectors' side (collect/trace_ring.h,
 * trace_ring.c).
 *
 * Each thread that enters a span gets, at attach (cold path), one mmap'd ring of fixed size.  Only
 * its own thread (and signal handlers on it) writes it; the writer (report/trace_writer.c) reads
 * it under the global lock, possibly while the owner runs (see spanprof__trace_snapshot).  When
 * the ring is full the oldest events are overwritten: the file shows the most recent window (a
 * flight recorder) and says how many events were dropped.
 */
#ifndef SPANPROF_TRACEPUSH_H
#define SPANPROF_TRACEPUSH_H

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

/* Appends an event for SITE to this thread's ring and returns its tick (a fresh timestamp; also
 * when the thread has no ring).
 *
 * Signal handlers may push events on this thread at any instruction, so the slot is reserved
 * first, with one instruction that reads and bumps head (an xadd without lock on x86): a handler
 * that runs after it takes the following slots.  The slot is then written, the tag last (with
 * the lap's parity, so the writer can tell a slot written in this lap from one left over from the
 * last: a push cut short by a siglongjmp, or one in progress while a dump reads).  The tick is
 * taken after the reservation, so a handler that ran in between wrote later ticks into later
 * slots but earlier than ours: the rare path then moves our tick back to theirs, which keeps the
 * ring's ticks in order (the tick returned is the one taken: the caller's span starts or ends
 * there).
 * Costs: TLS load + ring load, one predictable branch (no ring), xadd, rdtsc (~10.5 ns), two
 * stores, a load and a compare of head.  No locks, allocation or syscalls. */
void spanprof__trace_fix_tick(struct spanprof__trace_ring *r, uint64_t h);
/* The push into ring R (not NULL) with its tick from rdtsc when TSC (a constant), else from
 * spanprof__clock_now. */
static inline __attribute__((always_inline)) uint64_t
spanprof__trace_push_to(struct spanprof__trace_ring *r, const struct spanprof_site *site,
                        uintptr_t kind, int tsc)
{
    uint64_t h = spanprof__count_fetch_add(&r->head, 1);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    struct spanprof__trace_event *e = &r->events[h & (r->capacity - 1)];
    uintptr_t lap = h & r->capacity ? SPANPROF__TRACE_ODD_LAP : 0;
#if SPANPROF_HAVE_TSC
    uint64_t tick = tsc ? spanprof__tsc_read() : spanprof__clock_now();
#else
    uint64_t tick = ((void)tsc, spanprof__clock_now());
#endif
    __atomic_store_n(&e->tick, tick, __ATOMIC_RELAXED);
    __atomic_store_n(&e->tag, (uintptr_t)site | kind | lap, __ATOMIC_RELEASE);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (SPANPROF_UNLIKELY(__atomic_load_n(&r->head, __ATOMIC_RELAXED) != h + 1))
        spanprof__trace_fix_tick(r, h);
    return tick;
}

static inline __attribute__((always_inline)) uint64_t
spanprof__trace_push(const struct spanprof_site *site, uintptr_t kind)
{
    struct spanprof__trace_ring *r = spanprof__tls->trace;
    if (SPANPROF_UNLIKELY(!r))
        return spanprof__clock_now();
    return spanprof__trace_push_to(r, site, kind, 0);
}

/* SPANPROF_FLIGHT_MIN: one kept call as two events pushed together at its exit, its enter (tick
 * START) then its exit (tick END), into ring R (not NULL).  Every push into such a ring is a pair
 * (head stays even, so a pair never straddles two laps); pairs follow one another in the order
 * the calls ended, so a caller comes after its callees: the trace writer sorts them.  A signal
 * handler that pushes between the reservation and the stores takes the next two slots, and
 * nothing needs reordering.  Costs: a reservation (xadd) and four stores; no clock read. */
static inline __attribute__((always_inline)) void
spanprof__trace_push_pair(struct spanprof__trace_ring *r, const struct spanprof_site *site,
                          uint64_t start, uint64_t end)
{
    uint64_t h = spanprof__count_fetch_add(&r->head, 2);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    uintptr_t lap = h & r->capacity ? SPANPROF__TRACE_ODD_LAP : 0;
    struct spanprof__trace_event *e = &r->events[h & (r->capacity - 1)];
    __atomic_store_n(&e[0].tick, start, __ATOMIC_RELAXED);
    __atomic_store_n(&e[0].tag, (uintptr_t)site | lap, __ATOMIC_RELEASE);
    __atomic_store_n(&e[1].tick, end, __ATOMIC_RELAXED);
    __atomic_store_n(&e[1].tag, (uintptr_t)site | SPANPROF__TRACE_EXIT | lap, __ATOMIC_RELEASE);
}

/* The span paths' timestamp when it is not a bare rdtsc (hotpath.h's spanprof__span_tick):
 * pushed as a trace event of KIND with tracing on, else spanprof__clock_now. */
uint64_t spanprof__span_tick_other(const struct spanprof_site *site, uintptr_t kind);

/* Start-up (collectors), before any site is registered: ON makes the span paths push every
 * enter and exit of a timed site into the ring with its timestamp (spanprof__flags.trace). */
void spanprof__trace_fast_path(int on);

#pragma GCC visibility pop

#endif /* SPANPROF_TRACEPUSH_H */
