/* budgetoff.c — the record of the spans a cost budget switched off (SPANPROF_BUDGET; budget.c
 * decides which, spanswitch.c mutes them and makes them OFF without losing an exit).
 *
 * Per site id: the entry in spanprof__budget.off (when, the mean call before, when it went OFF),
 * which the writers read without a lock (a release store publishes each).
 */
#define _GNU_SOURCE
#include <string.h>
#include <time.h>

#include "collect/budget.h"
#include "collect/collect.h"
#include "collect/spanswitch.h"

/* Per site id: the index + 1 of its entry in spanprof__budget.off (0: never switched off); mapped
 * at start, pages touched only for the ids used. */
static uint32_t *off_by_id;

int spanprof__budget_off_setup(void)
{
    off_by_id = spanprof__map(SPANPROF_SITE_IDS * sizeof *off_by_id);
    return off_by_id ? 0 : -1;
}

int spanprof__budget_may_track(const struct spanprof_site *site)
{
    return off_by_id && site->id < SPANPROF_SITE_IDS &&
           __atomic_load_n(&spanprof__budget.noff, __ATOMIC_RELAXED) < SPANPROF__BUDGET_OFF_MAX;
}

const struct spanprof__budget_off *spanprof__budget_off_of(const struct spanprof_site *site)
{
    if (!off_by_id || site->id >= SPANPROF_SITE_IDS)
        return NULL;
    uint32_t i = __atomic_load_n(&off_by_id[site->id], __ATOMIC_ACQUIRE);
    return i ? &spanprof__budget.off[i - 1] : NULL;
}

void spanprof__budget_mute(struct spanprof_site *site, double at_s, double mean_ns)
{
    struct spanprof__budget *b = &spanprof__budget;
    if (!spanprof__budget_may_track(site))
        return;
    /* A request being answered decides alone: muted between its settling and its arming, a
     * span asked on was answered `stopping`.  A later look or tick may mute it. */
    if (spanprof__switch_try_hold())
        return;
    size_t i = b->noff;
    if (spanprof__switch_mute(site) == 0) {
        b->off[i] = (struct spanprof__budget_off){site, at_s, mean_ns, 0};
        __atomic_store_n(&off_by_id[site->id], (uint32_t)i + 1, __ATOMIC_RELEASE);
        __atomic_store_n(&b->noff, i + 1, __ATOMIC_RELEASE);
    }
    spanprof__switch_release();
}

size_t spanprof__budget_settle(double now_s)
{
    struct spanprof__budget *b = &spanprof__budget;
    spanprof__switch_settle();
    size_t n = __atomic_load_n(&b->noff, __ATOMIC_ACQUIRE), muting = 0;
    for (size_t i = 0; i < n; i++) {
        struct spanprof__budget_off *off = &b->off[i];
        if (off->off_s > 0)
            continue;
        /* OFF now, or since switched on again by request (only ever from OFF) */
        if (__atomic_load_n(&off->site->state, __ATOMIC_ACQUIRE) != SPANPROF__SITE_MUTED)
            off->off_s = now_s;
        else
            muting++;
    }
    return muting;
}
