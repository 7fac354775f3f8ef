/* histogram.c — the cold side of the latency histograms: each thread's table of histograms by
 * site id (creation, growth, fork reset), bucket bounds, merging per site at write time,
 * quantiles.  The hot-path insert is inline in histogram.h. */
#include <string.h>

#include "collect/histogram.h"

#define TABLE_MIN ((size_t)64)

int spanprof__hist_on;

/* Only T's own thread calls this (from spanprof__tree_child), so nothing else writes T's table;
 * the writer reads it concurrently, hence the release stores. */
int spanprof__hist_attach(struct spanprof__thread *t, const struct spanprof_site *site)
{
    struct spanprof__hist_table *tab = t->hists;
    size_t id = site->id;
    if (!tab || id >= tab->cap) {
        size_t cap = tab ? tab->cap : TABLE_MIN;
        while (cap <= id)
            cap *= 2;
        struct spanprof__hist_table *nt = spanprof__map(sizeof *nt + cap * sizeof nt->v[0]);
        if (!nt)
            return 0;
        nt->cap = cap;
        if (tab)
            memcpy(nt->v, tab->v, tab->cap * sizeof tab->v[0]);
        /* The old table stays mapped: a writer may still be reading it.  Capacities double, so
         * all old tables together are smaller than the current one. */
        __atomic_store_n(&t->hists, nt, __ATOMIC_RELEASE);
        tab = nt;
    }
    if (tab->v[id])
        return 1;
    struct spanprof__hist *h = spanprof__arena_alloc(&t->arena, sizeof *h); /* zeroed (mmap) */
    if (!h)
        return 0;
    h->site = site;
    __atomic_store_n(&tab->v[id], h, __ATOMIC_RELEASE);
    return 1;
}

void spanprof__hist_reset(struct spanprof__thread *t)
{
    struct spanprof__hist_table *tab = t->hists;
    for (size_t i = 0; tab && i < tab->cap; i++)
        if (tab->v[i]) {
            tab->v[i]->max = 0;
            memset(tab->v[i]->count, 0, sizeof tab->v[i]->count);
        }
}

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
