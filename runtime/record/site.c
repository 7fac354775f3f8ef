/* site.c — first sight of a site, of either kind: validation, id, coz counters, and for a progress
 * point its hit counter.
 *
 * Runs once per site (cold path, under the process lock); the result is cached in the site's
 * runtime slots so the entry points need no lookup: state FAST means "just record", COUNT means
 * "record without timestamps" (SPANPROF=count), SLOW means "record and run the extras" (coz
 * counters, per-call collectors), OFF means "ignore" (wrong version/kind, or SPANPROF=0).  A
 * progress point (kind PROGRESS, hit through progress.c) is FAST, or SLOW when coz counts it too.
 *
 * After fork the child's hit counters restart at zero, as its spans do (see thread.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/record.h"
#include "record/siteretire.h"

/* coz.h's counter types. */
#define COZ_COUNTER_TYPE_THROUGHPUT 1
#define COZ_COUNTER_TYPE_BEGIN 2
#define COZ_COUNTER_TYPE_END 3

struct spanprof__progress_point *spanprof__progress_points;

static int warned_version;
static int hits_reset_registered; /* this copy's fork handler (the list may be a predecessor's) */

static void reset_hits_after_fork(void)
{
    for (struct spanprof__progress_point *p = spanprof__progress_points; p; p = p->next)
        p->hits = 0;
}

/* Only version is read before deciding: the rest of a foreign layout is unknown.  One warning
 * per process, not per site (a whole object is usually affected). */
static int valid(const struct spanprof_site *site)
{
    if (site->version == SPANPROF_SITE_VERSION &&
        (site->kind == SPANPROF_KIND_SPAN || site->kind == SPANPROF_KIND_PROGRESS))
        return 1;
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
    return 0;
}

/* A progress point's hit counter (kept in coz_end), and coz's throughput counter for its name
 * (in coz_begin).  Returns the state to store: FAST, SLOW (coz counts it too) or OFF (out of
 * memory). */
static uint32_t register_progress(struct spanprof_site *site)
{
    /* A point of a library loaded again has its counter back already (siteretire.c). */
    if (!site->coz_end) {
        struct spanprof__progress_point *p = calloc(1, sizeof *p);
        if (!p)
            return SPANPROF__SITE_OFF;
        if (!hits_reset_registered) {
            hits_reset_registered = 1;
            pthread_atfork(NULL, NULL, reset_hits_after_fork);
        }
        p->site = site;
        p->next = spanprof__progress_points;
        spanprof__progress_points = p;
        site->coz_end = p;
    }
    if (spanprof__g.coz_get) {
        site->coz_begin = spanprof__g.coz_get(COZ_COUNTER_TYPE_THROUGHPUT, site->name);
        if (site->coz_begin)
            return SPANPROF__SITE_SLOW;
    }
    return SPANPROF__SITE_FAST;
}

static uint32_t register_span(struct spanprof_site *site)
{
    uint32_t st = spanprof__flags.counting ? SPANPROF__SITE_COUNT : SPANPROF__SITE_FAST;
    if (spanprof__g.coz_get) {
        /* One begin/end pair per span name: coz's latency point for the span. */
        site->coz_begin = spanprof__g.coz_get(COZ_COUNTER_TYPE_BEGIN, site->name);
        site->coz_end = spanprof__g.coz_get(COZ_COUNTER_TYPE_END, site->name);
        if (site->coz_begin || site->coz_end)
            st = SPANPROF__SITE_SLOW;
    }
    if (spanprof__flags.every_call)
        st = SPANPROF__SITE_SLOW;
    return st;
}

uint32_t spanprof__site_register(struct spanprof_site *site)
{
    struct spanprof__guard guard = spanprof__guard_enter();
    spanprof__start();
    spanprof__lock();
    uint32_t st = site->state;
    if (st == SPANPROF__SITE_NEW) {
        if (!spanprof__flags.recording || !valid(site)) {
            /* The state slot is still written so the site stops coming here; site layouts only
             * ever grow, so the slot exists. */
            st = SPANPROF__SITE_OFF;
        } else {
            if (!spanprof__retire_revive(site)) /* a library loaded again: its old id */
                site->id = ++spanprof__g.next_site_id;
            st = site->kind == SPANPROF_KIND_PROGRESS ? register_progress(site) : register_span(site);
        }
        __atomic_store_n(&site->state, st, __ATOMIC_RELEASE);
    }
    spanprof__unlock();
    spanprof__guard_leave(guard);
    return st;
}

static int compare_strings(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

int spanprof__site_compare(const struct spanprof_site *a, const struct spanprof_site *b)
{
    int c = compare_strings(a->name, b->name);
    if (!c)
        c = compare_strings(a->file, b->file);
    if (!c)
        c = (a->first_line > b->first_line) - (a->first_line < b->first_line);
    return c;
}
