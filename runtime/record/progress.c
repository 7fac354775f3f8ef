/* progress.c — __spanprof_progress, the hot path of progress points.
 *
 * A progress point is a site of kind SPANPROF_KIND_PROGRESS (emitted by the plugin for a function
 * marked `progress`, or by SPANPROF_PROGRESS).  On first sight site.c gives it a hit counter of
 * its own and — under coz — coz's throughput counter for its name, both cached in the site, so a
 * hit needs no lookup.  Hits are counted with relaxed atomic adds on that counter: exact under
 * threads, without locks or allocation.
 */
#include "record/record.h"

/* First hit of a site (or recording off, or a site of another kind passed here by mistake). */
static __attribute__((noinline)) void progress_slow(struct spanprof_site *site)
{
    uint32_t st = __atomic_load_n(&site->state, __ATOMIC_ACQUIRE);
    if (st == SPANPROF__SITE_NEW) {
        if (spanprof__busy(0)) /* hit from inside the runtime itself */
            return;
        st = spanprof__site_register(site, 0);
    }
    if ((st != SPANPROF__SITE_FAST && st != SPANPROF__SITE_SLOW) || site->kind != SPANPROF_KIND_PROGRESS)
        return;
    __atomic_add_fetch(&((struct spanprof__progress_point *)site->coz_end)->hits, 1, __ATOMIC_RELAXED);
    if (st == SPANPROF__SITE_SLOW)
        __atomic_add_fetch(&((struct spanprof__coz_counter *)site->coz_begin)->count, 1,
                           __ATOMIC_RELAXED);
}

/* The hot path: one load and a predictable branch, then one atomic add (~5 ns uncontended on the
 * reference VM, more when threads hit the same point at once: they share its cache line).
 * Under coz a second atomic add, on coz's counter, goes through the out-of-line path. */
SPANPROF_API void __spanprof_progress(struct spanprof_site *site)
{
    if (SPANPROF_UNLIKELY(__atomic_load_n(&site->state, __ATOMIC_RELAXED) != SPANPROF__SITE_FAST)) {
        progress_slow(site);
        return;
    }
    __atomic_add_fetch(&((struct spanprof__progress_point *)site->coz_end)->hits, 1, __ATOMIC_RELAXED);
}
