/* merge.c — thread churn, the collectors' side: when a thread ends, its collector data joins
 * its retired group (record/threadretire.c) and its own is made ready for the next thread that gets
 * its memory.  Per-node data is merged by nodeext.c as the tree is merged; this file handles
 * per-thread data: histograms, allocation samples, SPANPROF=sample's time outside spans, the
 * trace ring and the cost budget's reading of the thread's CPU time.
 */
#include <string.h>

#include "collect/budget.h"
#include "collect/collect.h"
#include "collect/trace_ring.h"

/* spanprof__hooks.thread_merge: under the process lock; each node of T has its GROUP
 * counterpart in its hint. */
int spanprof__collect_thread_merge(struct spanprof__thread *group, struct spanprof__thread *t)
{
    int keep_nodes = 0;
    if (spanprof__collect.histogram)
        spanprof__hist_merge_thread(group, t);
    if (spanprof__res_on())
        keep_nodes = spanprof__res_thread_merge(group, t);
    if (spanprof__collect.sample_hz)
        spanprof__sample_thread_merge(group, t); /* its samples outside every span */
    spanprof__trace_retire(t);
    if (spanprof__budget.percent > 0)
        spanprof__budget_thread_ended(t);
    return keep_nodes;
}

/* spanprof__hooks.thread_clear: T's memory is about to be reused by a new thread (or dropped in
 * a fork child).  The per-frame resource array is kept (a new thread overwrites a frame's entry
 * at each enter); the samples lived in T's arena, now rewound; a ring still here belongs to a
 * thread of the parent (fork child) or a group never has one. */
void spanprof__collect_thread_clear(struct spanprof__thread *t)
{
    struct spanprof__res_thread *rt = t->res;
    if (rt) {
        rt->net = 0;
        __atomic_store_n(&rt->samples, NULL, __ATOMIC_RELEASE);
    }
    t->sample = NULL; /* it lived in T's arena; a new thread gets its own */
    if (t->trace) {
        spanprof__trace_ring_free(t->trace);
        t->trace = NULL;
    }
}
