/* site.c — first sight of a span site: validation, id, coz counters (progress points: see
 * progress.c).
 *
 * Runs once per site (cold path, under the global lock); the result is cached in the site's
 * runtime slots so the hot path needs no lookup: state FAST means "just record", COUNT means
 * "record without timestamps" (SPANPROF=count), SLOW means "record and do the extras too" (coz
 * counters, CPU/allocation tracking, tracing), OFF means "ignore" (wrong version/kind, or
 * SPANPROF=0).
 */
#include <errno.h>
#include <stdio.h>

#include "record/internal.h"
#include "collect/resources.h"

/* coz.h's counter types. */
#define COZ_COUNTER_TYPE_BEGIN 2
#define COZ_COUNTER_TYPE_END 3

static int warned_version;

uint32_t spanprof__site_register(struct spanprof_site *site)
{
    int saved_errno = errno;
    int busy = spanprof__tls_busy;
    spanprof__tls_busy = 1;
    spanprof__init();
    spanprof__lock();
    uint32_t st = site->state;
    if (st == SPANPROF__SITE_NEW) {
        if (!spanprof__g.recording) {
            st = SPANPROF__SITE_OFF;
        } else if (site->version != SPANPROF_SITE_VERSION ||
                   (site->kind != SPANPROF_KIND_SPAN && site->kind != SPANPROF_KIND_PROGRESS)) {
            /* Only version is read before deciding: the rest of a foreign layout is unknown.
             * One warning per process, not per site (a whole object is usually affected).
             * The state slot is still written so the site stops coming here; site layouts only
             * ever grow, so the slot exists. */
            if (!warned_version) {
                warned_version = 1;
                if (site->version != SPANPROF_SITE_VERSION)
                    fprintf(stderr,
                            "spanprof: warning: ignoring span sites of site version %u "
                            "(this runtime reads version %u); rebuild with matching plugin "
                            "and runtime\n",
                            site->version, SPANPROF_SITE_VERSION);
                else
                    fprintf(stderr, "spanprof: warning: ignoring span sites of unknown kind %u\n",
                            site->kind);
            }
            st = SPANPROF__SITE_OFF;
        } else if (site->kind == SPANPROF_KIND_PROGRESS) {
            st = spanprof__progress_register_locked(site); /* progress.c */
        } else {
            site->id = ++spanprof__g.next_site_id;
            st = spanprof__g.config.counting ? SPANPROF__SITE_COUNT : SPANPROF__SITE_FAST;
            if (spanprof__g.coz_get) {
                /* One begin/end pair per span name: coz's latency point for the span. */
                site->coz_begin = spanprof__g.coz_get(COZ_COUNTER_TYPE_BEGIN, site->name);
                site->coz_end = spanprof__g.coz_get(COZ_COUNTER_TYPE_END, site->name);
                if (site->coz_begin || site->coz_end)
                    st = SPANPROF__SITE_SLOW;
            }
            /* CPU/allocation tracking and tracing send every call through the slow paths. */
            if (spanprof__res_slow || spanprof__g.config.trace)
                st = SPANPROF__SITE_SLOW;
        }
        __atomic_store_n(&site->state, st, __ATOMIC_RELEASE);
    }
    spanprof__unlock();
    spanprof__tls_busy = busy;
    errno = saved_errno;
    return st;
}
