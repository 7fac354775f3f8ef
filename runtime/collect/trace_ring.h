/* trace_ring.h — the per-thread trace ring buffer (SPANPROF_TRACE), the collectors' side: mapping
 * a ring, restarting it in a fork child, and reading it.  The ring's layout and the per-call push
 * are the recording layer's (record/tracepush.h), where the span paths use them.
 */
#ifndef SPANPROF_TRACE_H
#define SPANPROF_TRACE_H

#include "record/tracepush.h"

#pragma GCC visibility push(hidden)

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
/* Events pushed into R since it was made or restarted (a fork), some perhaps overwritten since:
 * atomic loads, the owner may be pushing.  Async-signal-safe. */
uint64_t spanprof__trace_pending(const struct spanprof__trace_ring *r);
/* The same into EV, which has room for R's capacity; returns the count.  Async-signal-safe. */
size_t spanprof__trace_snapshot_into(const struct spanprof__trace_ring *r,
                                     struct spanprof__trace_event *ev, uint64_t *dropped);

/* Copies the newest events of SRC (the calling thread's own ring) into DST, as many as DST holds,
 * keeping SRC's numbering (head, base, order), so that DST reads as SRC would have at this moment,
 * less what did not fit.  The flight recorder secures a slow call's events this way at its exit:
 * the ring of a busy thread is overwritten long before the capture is written.  Slots a signal
 * handler's push left unwritten stay so (read as lost).  Async-signal-safe; its cost is a copy of
 * DST's size (1 MiB: 0.2-0.4 ms measured, more while its pages are first touched). */
void spanprof__trace_keep(const struct spanprof__trace_ring *src, struct spanprof__trace_ring *dst);

/* A thread's events copied at a moment that mattered (spanprof__trace_keep): a flight-recorder
 * trigger secures the slow thread's and the busiest others' this way. */
struct spanprof__trace_kept {
    pid_t tid;
    struct spanprof__trace_ring *ring; /* its head 0: nothing copied */
};

/* A thread's outermost open spans, outermost first, with their start ticks (at entry, or later
 * after a settle), and how many it had open: what a capture shows of the spans its ring no
 * longer holds the begin of. */
#define SPANPROF__TRACE_OUTER 16
struct spanprof__trace_outer {
    size_t n, depth;
    struct {
        const struct spanprof_site *site;
        uint64_t start;
    } v[SPANPROF__TRACE_OUTER];
};
/* Fills OUT from the calling thread's shadow stack.  Async-signal-safe. */
void spanprof__trace_outer_of_self(struct spanprof__trace_outer *out);

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
