/* histogram.c — each thread's table of latency histograms by site id: creation and growth (cold
 * path, before the thread's first node of a site is published) and the reset of a fork child.
 * The insert is inline in histogram.h; reading histograms is collect/histogram.c's job. */
#include <string.h>

#include "record/histogram.h"

#define TABLE_MIN ((size_t)64)

/* Only T's own thread calls this (from the cold enter path), so nothing else writes T's table;
 * the writer reads it concurrently, hence the release stores.  A creation runs with signals held
 * (record.h): a handler's spans on this thread may need a histogram too, and their table growth
 * must not interleave with this one (the table one of them left would be lost). */
static int attach(struct spanprof__thread *t, size_t id, const struct spanprof_site *site)
{
    struct spanprof__hist_table *tab = t->hists;
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

int spanprof__hist_attach(struct spanprof__thread *t, const struct spanprof_site *site)
{
    /* The id was written (by whichever thread registered the site) before the state was published
     * with a release store (site.c); the entry points read the state relaxed, so acquire it here
     * before reading the id. */
    (void)__atomic_load_n(&site->state, __ATOMIC_ACQUIRE);
    size_t id = site->id;
    const struct spanprof__hist_table *tab = t->hists;
    if (tab && id < tab->cap && tab->v[id]) /* a later node of the site: no system call */
        return 1;
    struct spanprof__hold hold;
    spanprof__hold_enter(&hold);
    int ok = attach(t, id, site);
    spanprof__hold_leave(&hold);
    return ok;
}

void spanprof__hist_reset(struct spanprof__thread *t)
{
    struct spanprof__hist_table *tab = t->hists;
    for (size_t i = 0; tab && i < tab->cap; i++)
        if (tab->v[i]) {
            tab->v[i]->max = 0;
            tab->v[i]->sum = 0;
            memset(tab->v[i]->count, 0, sizeof tab->v[i]->count);
        }
}

/* The histograms live in T's arena, which is being rewound: the table (kept for the next thread
 * that gets T's data) forgets them. */
void spanprof__hist_forget(struct spanprof__thread *t)
{
    struct spanprof__hist_table *tab = t->hists;
    if (tab)
        memset(tab->v, 0, tab->cap * sizeof tab->v[0]);
}
