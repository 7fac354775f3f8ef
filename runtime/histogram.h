/* histogram.h — fixed-size log-linear latency histogram, one per call-tree node.
 *
 * A duration d (ticks) goes to bucket (e-4)*16 + (d >> (e-4)) where e is the index of d's top bit
 * (at least 4): values below 32 get a bucket each, above that every power of two is split into 16
 * equal sub-buckets, so a bucket is at most 1/16 = 6.25% of its values wide and its midpoint is
 * within 3.125% of any value in it.  Durations of 2^48 ticks (a day at 3 GHz) and more share the
 * last bucket.  The exact maximum is kept alongside.
 *
 * When histograms are on, every node is allocated with its histogram right behind it (see
 * calltree.c), so the exit path finds it at n + 1 without a pointer load.
 */
#ifndef SPANPROF_HISTOGRAM_H
#define SPANPROF_HISTOGRAM_H

#include <stdint.h>

#include "internal.h"

#pragma GCC visibility push(hidden)

#define SPANPROF_HIST_SUB_BITS 4
#define SPANPROF_HIST_TOP_BIT 47 /* values up to 2^48 - 1 are bucketed exactly */
#define SPANPROF_HIST_BUCKETS ((SPANPROF_HIST_TOP_BIT - 2) << SPANPROF_HIST_SUB_BITS) /* 720 */

struct spanprof__hist {
    uint64_t max;                              /* exact largest duration (ticks) */
    uint64_t count[SPANPROF_HIST_BUCKETS];
};

/* 1 when SPANPROF_HISTOGRAM is on; read-mostly, set before any thread records. */
extern int spanprof__hist_on;

static inline __attribute__((always_inline)) unsigned spanprof__hist_index(uint64_t d)
{
    const uint64_t clamp = ((uint64_t)1 << (SPANPROF_HIST_TOP_BIT + 1)) - 1;
    d = d < clamp ? d : clamp;                          /* cmov */
    unsigned shift = (unsigned)(59 - __builtin_clzll(d | 16)); /* e - 4, 0 below 32 */
    return (shift << SPANPROF_HIST_SUB_BITS) + (unsigned)(d >> shift);
}

static inline __attribute__((always_inline)) struct spanprof__hist *spanprof__hist_of(
    struct spanprof__node *n)
{
    return (struct spanprof__hist *)(n + 1);
}

/* Exit fast path: lzcnt, shift, add, one increment in a line usually cached, a compare-and-move
 * for the maximum.  Only the node's own thread writes it. */
static inline __attribute__((always_inline)) void spanprof__hist_add(struct spanprof__node *n,
                                                                     uint64_t d)
{
    struct spanprof__hist *h = spanprof__hist_of(n);
    h->count[spanprof__hist_index(d)]++;
    h->max = d > h->max ? d : h->max;
}

/* Smallest value and width (ticks) of bucket I. */
void spanprof__hist_bucket(unsigned i, uint64_t *low, uint64_t *width);
/* Adds SRC into DST (at write time; racy reads of a running thread are benign). */
void spanprof__hist_merge(struct spanprof__hist *dst, const struct spanprof__hist *src);
/* The Q-quantile (0 < Q <= 1) in ticks: the midpoint of the bucket holding the ceil(Q*N)-th
 * smallest value, never above the maximum; 0 when empty. */
uint64_t spanprof__hist_quantile(const struct spanprof__hist *h, double q);

#pragma GCC visibility pop

#endif /* SPANPROF_HISTOGRAM_H */
