/* trace_retired.c — SPANPROF_TRACE and thread churn: the rings of threads that ended.
 *
 * A thread's ring cannot be merged into its retired group the way its call tree is (events are
 * a timeline of one thread), so when a thread ends its ring moves here, with the thread's tid,
 * name and end, and the next thread maps a ring of its own.  Only the SPANPROF__TRACE_RETIRED
 * most recently ended threads' rings are kept: the oldest one is unmapped to make room (under
 * the process lock, which the trace writer holds while it reads them), and the trace file counts
 * what was dropped so ("retired_threads_dropped", "retired_events_dropped").  Memory stays bounded
 * by live threads + SPANPROF__TRACE_RETIRED rings.
 */
#include <string.h>

#include "collect/collect.h"
#include "collect/trace_ring.h"

struct spanprof__trace_retired spanprof__trace_retired;

/* Under the process lock, T's thread having ended. */
void spanprof__trace_retire(struct spanprof__thread *t)
{
    struct spanprof__trace_retired *r = &spanprof__trace_retired;
    if (!t->trace)
        return;
    struct spanprof__trace_exited *e = &r->v[r->next];
    if (e->ring) {
        r->threads_dropped++;
        r->events_dropped += e->ring->head - e->ring->base;
        spanprof__trace_ring_free(e->ring);
    } else {
        r->n++;
    }
    e->ring = t->trace;
    e->tid = t->tid;
    e->end_tick = t->end_tick;
    e->seq = r->seq++;
    memcpy(e->name, t->name, sizeof e->name);
    r->next = (r->next + 1) % SPANPROF__TRACE_RETIRED;
    t->trace = NULL;
}

/* Fork child: the parent's threads are not the child's. */
void spanprof__trace_retired_drop(void)
{
    struct spanprof__trace_retired *r = &spanprof__trace_retired;
    for (size_t i = 0; i < SPANPROF__TRACE_RETIRED; i++)
        if (r->v[i].ring)
            spanprof__trace_ring_free(r->v[i].ring);
    memset(r, 0, sizeof *r);
}
