/* histogram.c — reading the latency histograms: bucket bounds, merging per site at write time,
 * quantiles.  Their layout and insert are the recording layer's (record/histogram.h). */
#include "collect/collect.h"

void spanprof__hist_bucket(unsigned i, uint64_t *low, uint64_t *width)
{
    unsigned sub = 1u << SPANPROF_HIST_SUB_BITS;
    if (i < 2 * sub) { /* one value per bucket */
        *low = i;
        *width = 1;
        return;
    }
    unsigned shift = i / sub - 1;
    *low = (uint64_t)(i - shift * sub) << shift;
    *width = (uint64_t)1 << shift;
}

void spanprof__hist_merge(struct spanprof__hist *dst, const struct spanprof__hist *src)
{
    for (unsigned i = 0; i < SPANPROF_HIST_BUCKETS; i++)
        dst->count[i] += __atomic_load_n(&src->count[i], __ATOMIC_RELAXED);
    uint64_t m = __atomic_load_n(&src->max, __ATOMIC_RELAXED);
    if (m > dst->max)
        dst->max = m;
    dst->sum += __atomic_load_n(&src->sum, __ATOMIC_RELAXED);
}

uint64_t spanprof__hist_quantile(const struct spanprof__hist *h, double q)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < SPANPROF_HIST_BUCKETS; i++)
        n += h->count[i];
    if (n == 0)
        return 0;
    double want = q * (double)n;
    uint64_t rank = (uint64_t)want; /* ceil without libm */
    if ((double)rank < want)
        rank++;
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (unsigned i = 0; i < SPANPROF_HIST_BUCKETS; i++) {
        seen += h->count[i];
        if (seen >= rank) {
            uint64_t low, width;
            spanprof__hist_bucket(i, &low, &width);
            uint64_t mid = low + width / 2;
            return mid > h->max ? h->max : mid;
        }
    }
    return h->max;
}

void spanprof__hist_merge_thread(struct spanprof__thread *group, const struct spanprof__thread *t)
{
    const struct spanprof__hist_table *tab = t->hists;
    for (size_t i = 0; tab && i < tab->cap; i++) {
        const struct spanprof__hist *h = tab->v[i];
        /* The group's table is grown and filled like a thread's, from its own arena. */
        if (h && spanprof__hist_attach(group, h->site))
            spanprof__hist_merge(group->hists->v[i], h);
    }
}
