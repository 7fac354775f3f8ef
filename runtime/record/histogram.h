/* histogram.h — fixed-size log-linear latency histograms, one per (thread, site): the layout,
 * the exit fast path's insert and the thread's table (histogram.c).  Reading them (bucket bounds,
 * merging, quantiles) is the collectors' part: collect/histogram.c.
 *
 * A duration d (ticks) goes to bucket (e-4)*16 + (d >> (e-4)) where e is the index of d's top bit
 * (at least 4): values below 32 get a bucket each, above that every power of two is split into 16
 * equal sub-buckets, so a bucket is at most 1/16 = 6.25% of its values wide and its midpoint is
 * within 3.125% of any value in it.  Durations of 2^48 ticks (a day at 3 GHz) and more share the
 * last bucket.  The exact maximum and the exact sum are kept alongside: the sum is the live
 * profile's histogram sum (Prometheus's _sum), which then agrees with the span's own total time
 * instead of being the buckets' midpoints (up to 3.125% off).
 *
 * Layout: each thread has a table indexed by the site's dense id (spanprof_site.id) pointing to
 * that thread's histogram for the site.  The entry is created in the cold path, when the thread
 * creates its first call-tree node for the site (stack.c, before spanprof__tree_child), so the exit fast path
 * finds it without a test: every frame it pops belongs to a node of its own thread.  All nodes of
 * a site on a thread share the histogram; the JSON only reports percentiles per site, so keeping
 * one per node would cost memory and cache lines for nothing.
 *
 * What is recorded: every completed activation adds its inclusive duration, recursive ones
 * included (a recursion of depth 3 adds 3 values: the innermost call's and the two enclosing
 * ones').  Activations popped by repair (longjmp, noreturn) or still open at exit add nothing.
 *
 * Counters are 64-bit: a 30 ns span would fill a 32-bit counter within about two minutes on one
 * thread, and with one histogram per site only the few lines of its busy buckets are ever hot,
 * so halving them would save little.
 */
#ifndef SPANPROF_HISTOGRAM_H
#define SPANPROF_HISTOGRAM_H

#include <stdint.h>

#include "record/record.h"

#pragma GCC visibility push(hidden)

#define SPANPROF_HIST_SUB_BITS 4
#define SPANPROF_HIST_TOP_BIT 47 /* values up to 2^48 - 1 are bucketed exactly */
#define SPANPROF_HIST_BUCKETS ((SPANPROF_HIST_TOP_BIT - 2) << SPANPROF_HIST_SUB_BITS) /* 720 */

struct spanprof__hist {
    const struct spanprof_site *site;          /* whose activations (for the merge per site) */
    uint64_t max;                              /* exact largest duration (ticks) */
    uint64_t sum;                              /* exact sum of the durations (ticks) */
    uint64_t count[SPANPROF_HIST_BUCKETS];
};

/* A thread's histograms by site id.  Grown (to a new mapping) in the cold path; the old mapping
 * is kept because the writer may be reading it from another thread. */
struct spanprof__hist_table {
    size_t cap;                     /* entries in v */
    struct spanprof__hist *v[];     /* NULL: the thread has no node of that site */
};

static inline __attribute__((always_inline)) unsigned spanprof__hist_index(uint64_t d)
{
    const uint64_t clamp = ((uint64_t)1 << (SPANPROF_HIST_TOP_BIT + 1)) - 1;
    d = d < clamp ? d : clamp;                          /* cmov */
    unsigned shift = (unsigned)(59 - __builtin_clzll(d | 16)); /* e - 4, 0 below 32 */
    return (shift << SPANPROF_HIST_SUB_BITS) + (unsigned)(d >> shift);
}

/* T's histogram for SITE: two dependent loads from lines the exit path already touches (T's hot
 * fields, the site's state/id) plus the table entry.  Valid for any site T has a node of. */
static inline __attribute__((always_inline)) struct spanprof__hist *spanprof__hist_get(
    const struct spanprof__thread *t, const struct spanprof_site *site)
{
    return t->hists->v[site->id];
}

/* Exit fast path: lzcnt, shift, add, one increment in a line usually cached, a compare for the
 * maximum (a compare-and-swap only when it grows) and an add to the sum, in the maximum's line.
 * Only the owning thread writes it, and signal handlers on it: the updates are atomic with
 * respect to them (counter.h). */
static inline __attribute__((always_inline)) void spanprof__hist_add(struct spanprof__hist *h,
                                                                     uint64_t d)
{
    spanprof__count_add(&h->count[spanprof__hist_index(d)], 1);
    spanprof__count_max(&h->max, d);
    spanprof__count_add(&h->sum, d);
}

/* Cold: makes sure T has a histogram for SITE (called before T's first node for SITE is
 * published).  mmap only, no malloc, no lock.  0 when out of memory. */
int spanprof__hist_attach(struct spanprof__thread *t, const struct spanprof_site *site);
/* Fork child: T's counts back to zero. */
void spanprof__hist_reset(struct spanprof__thread *t);
/* T's data is reused (threadretire.c): no histograms any more, the table is kept. */
void spanprof__hist_forget(struct spanprof__thread *t);

#pragma GCC visibility pop

#endif /* SPANPROF_HISTOGRAM_H */
