/* trace_replay.h — one thread's part of a Chrome trace, replayed from its ring: what the trace
 * writer (trace_writer.c) and the crash capture (safetrace.c) share.  See trace_replay.c.
 */
#ifndef SPANPROF_TRACE_REPLAY_H
#define SPANPROF_TRACE_REPLAY_H

#include "collect/trace_ring.h"
#include "report/report.h"

#pragma GCC visibility push(hidden)

/* Where the events go, and what they are written against. */
struct spanprof__trace_sink {
    /* Appends LEN bytes of text. */
    void (*put)(void *ctx, const char *text, size_t len);
    /* SITE's name as a JSON string, quotes included. */
    const char *(*name)(void *ctx, const struct spanprof_site *site, size_t *len);
    void *ctx;
    const struct spanprof__view *v;
    long pid;
    uint64_t origin;                          /* the tick of ts 0 */
    const struct spanprof__trace_window *win; /* NULL: everything kept */
    int failed;                               /* memory ran out: events are missing */
    /* Inside the slow call (win->tid's spans within win->start..end): the longest, ns. */
#define SPANPROF__TRACE_SLOWEST 6
    struct {
        const struct spanprof_site *site;
        uint64_t ns;
    } slowest[SPANPROF__TRACE_SLOWEST];
    size_t nslowest;
};

/* What a thread's replay wrote and repaired (otherData's "threads"). */
struct spanprof__trace_thread_stats {
    uint64_t events, dropped, before, open, unmatched;
    /* With a window: the tick of the first event kept when those before it, inside the window,
     * were overwritten (the thread's part starts late); 0 when it covers the window. */
    uint64_t late_from;
};

/* ns from the sink's origin to TICK (0 before it). */
uint64_t spanprof__trace_ns(const struct spanprof__trace_sink *w, uint64_t tick);

/* Writes RING's events of thread TID (those of the window, with one) as ",\n{...}" B and E
 * events, balanced as trace_replay.c says; spans still open close at END_TICK (the window's end
 * with one).  Async-signal-safe: memory comes from mmap. */
void spanprof__trace_replay(struct spanprof__trace_sink *w, const struct spanprof__trace_ring *ring,
                            pid_t tid, uint64_t end_tick, struct spanprof__trace_thread_stats *ts);

#pragma GCC visibility pop

#endif /* SPANPROF_TRACE_REPLAY_H */
