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
void spanprof__trace_attach(struct spanprof__thread *t);
void spanprof__trace_fork_child(struct spanprof__thread *t);
/* Copies the events still in T's ring, oldest first, into a malloc'd array (count in *n);
 * *dropped gets the number of events overwritten or lost to a concurrent writer.  Returns NULL
 * with *n == 0 when empty (or out of memory: then every event counts as dropped). */
struct spanprof__trace_event *spanprof__trace_snapshot(const struct spanprof__trace_ring *r, size_t *n,
                                                       uint64_t *dropped);

#pragma GCC visibility pop

#endif /* SPANPROF_TRACE_H */
