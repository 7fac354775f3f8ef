/* site.c — first sight of a site, of either kind: validation, id, coz counters, and for a progress
 * point its hit counter.
 *
 * Runs once per site (cold path, under the process lock); the result is cached in the site's
 * runtime slots so the entry points need no lookup: state FAST means "just record", COUNT means
 * "record without timestamps" (SPANPROF=count), SLOW means "record and run the extras" (coz
 * counters, per-call collectors), OFF means "ignore" (wrong version/kind, or SPANPROF=0).  A
 * progress point (kind PROGRESS, hit through progress.c) is FAST, or SLOW when coz counts it too.
 *
 * Under coz a span is one of three things, chosen here once per site:
 *  - a throughput point of its name, when SPANPROF_COZ_PROGRESS names it: each exit is a visit
 *    (coz_end holds the counter, coz_begin stays NULL);
 *  - a latency point of its name (begin at entry, end at exit: coz_begin and coz_end), when
 *    SPANPROF_COZ_LATENCY names it or, unset, when it carries the span attribute — never when
 *    its function returns into the C or C++ library (main, a thread's start routine, a
 *    callback): such a span is left once at the end if ever, and coz, which lengthens its
 *    experiments until every point has visits, would stall waiting for it;
 *  - nothing for coz otherwise (whole-program spans: coz would stall on them likewise).
 * Begin and end are counted only for activations that have a frame (collect/slowpath.c), so a
 * point's counts stay balanced.
 *
 * After fork the child's hit counters restart at zero, as its spans do (see thread.c).
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/namematch.h"
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
        (site->kind == SPANPROF_KIND_SPAN || site->kind == SPANPROF_KIND_PROGRESS ||
         site->kind == SPANPROF_KIND_SPAN_BY_OPTION))
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

/* The file (shared object) holding address A, or NULL. */
static const char *object_of(const void *a)
{
    Dl_info info;
    return a && dladdr(a, &info) && info.dli_fname ? info.dli_fname : NULL;
}

/* Whether code returning to FRA is the C or C++ library's: main's and threads' start code,
 * qsort, atexit and the like.  A statically linked C library is not told apart: then main alone
 * is recognised, by name. */
static int returns_into_c_runtime(uintptr_t fra)
{
    const char *object = object_of((const void *)fra);
    const char *base = object ? strrchr(object, '/') : NULL;
    base = base ? base + 1 : object;
    return base && (strncmp(base, "libc.so", 7) == 0 || strncmp(base, "libstdc++.so", 12) == 0);
}

static int wants_latency_point(const struct spanprof_site *site, uintptr_t fra)
{
    const char *latency = spanprof__g.coz_latency;
    if (latency ? !spanprof__name_matches(latency, site->name) : site->kind != SPANPROF_KIND_SPAN)
        return 0;
    /* An exit seen first (fra unknown) is no latency point: its entry counted no begin. */
    return fra && strcmp(site->name, "main") != 0 && !returns_into_c_runtime(fra);
}

/* coz 0.2.2 (Debian 12) leaves a new point's counters uninitialised, so its "difference"
 * (begin - end) starts as garbage; the first time a point is seen here its end count is set to
 * its begin count.  The points already seen, so that a second site of the same name (a library
 * loaded again, an overload) does not undo the counts in flight. */
static void balance_new_point(struct spanprof__coz_counter *begin, struct spanprof__coz_counter *end)
{
    static struct spanprof__coz_counter **seen;
    static size_t nseen, cap;
    for (size_t i = 0; i < nseen; i++)
        if (seen[i] == begin)
            return;
    if (nseen == cap) {
        size_t ncap = cap ? 2 * cap : 16;
        void *p = realloc(seen, ncap * sizeof *seen);
        if (!p)
            return;
        seen = p;
        cap = ncap;
    }
    seen[nseen++] = begin;
    __atomic_store_n(&end->count, __atomic_load_n(&begin->count, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}

uint32_t spanprof__site_span_state(struct spanprof_site *site, uintptr_t fra)
{
    uint32_t st = spanprof__flags.counting    ? SPANPROF__SITE_COUNT
                  : spanprof__flags.histogram ? SPANPROF__SITE_TIMED
                  : spanprof__flags.hot_tsc   ? SPANPROF__SITE_FAST
                  : spanprof__flags.trace && spanprof__flags.tsc ? SPANPROF__SITE_TRACE
                                                                 : SPANPROF__SITE_TIMED;
    spanprof__coz_get_fn get = spanprof__g.coz_get;
    if (get && spanprof__name_matches(spanprof__g.coz_progress, site->name)) {
        site->coz_end = get(COZ_COUNTER_TYPE_THROUGHPUT, site->name);
        if (site->coz_end)
            st = SPANPROF__SITE_SLOW;
    } else if (get && wants_latency_point(site, fra)) {
        /* One begin/end pair per span name: coz's latency point for the span. */
        struct spanprof__coz_counter *begin = get(COZ_COUNTER_TYPE_BEGIN, site->name);
        struct spanprof__coz_counter *end = get(COZ_COUNTER_TYPE_END, site->name);
        if (begin && end) {
            balance_new_point(begin, end);
            site->coz_begin = begin;
            site->coz_end = end;
            st = SPANPROF__SITE_SLOW;
        }
    }
    if (spanprof__flags.every_call ||
        (spanprof__hooks.site_watch && st != SPANPROF__SITE_COUNT && spanprof__hooks.site_watch(site)))
        st = SPANPROF__SITE_SLOW;
    return st;
}

/* Under a hold (record.h): a handler that lands meanwhile, while this thread holds the lock or
 * runs start-up from here, waits for the state to be published and then records its spans. */
uint32_t spanprof__site_register(struct spanprof_site *site, uintptr_t fra)
{
    struct spanprof__hold hold;
    spanprof__hold_enter(&hold);
    spanprof__start();
    spanprof__lock();
    uint32_t st = site->state;
    if (st == SPANPROF__SITE_NEW) {
        if (!spanprof__flags.recording || !valid(site)) {
            /* The state slot is still written so the site stops coming here; site layouts only
             * ever grow, so the slot exists. */
            st = SPANPROF__SITE_OFF;
        } else if (site->kind != SPANPROF_KIND_PROGRESS && !spanprof__span_chosen(site)) {
            spanprof__site_give_id(site); /* a request may switch it on (record/siteswitch.c) */
            st = SPANPROF__SITE_OFF;
        } else {
            spanprof__site_give_id(site);
            st = site->kind == SPANPROF_KIND_PROGRESS ? register_progress(site)
                                                      : spanprof__site_span_state(site, fra);
        }
        __atomic_store_n(&site->state, st, __ATOMIC_RELEASE);
    }
    spanprof__unlock();
    spanprof__hold_leave(&hold);
    return st;
}

/* Every site given an id, by id (NULL: none, or its object was unloaded): what a request may
 * switch besides the spans with patch points.  Mapped at the first id; written under the lock. */
static struct spanprof_site **by_id;

void spanprof__site_give_id(struct spanprof_site *site)
{
    if (!spanprof__retire_revive(site)) { /* a library loaded again: its old id */
        /* Read unlocked by the cost budget (the room its sums need). */
        SPANPROF_PUBLISH(spanprof__g.next_site_id, spanprof__g.next_site_id + 1);
        site->id = spanprof__g.next_site_id;
    }
    if (!by_id)
        by_id = spanprof__map(SPANPROF_SITE_IDS * sizeof *by_id);
    if (by_id && site->id < SPANPROF_SITE_IDS)
        __atomic_store_n(&by_id[site->id], site, __ATOMIC_RELEASE);
}

struct spanprof_site *const *spanprof__site_registry(size_t *n)
{
    *n = by_id ? (spanprof__g.next_site_id < SPANPROF_SITE_IDS ? spanprof__g.next_site_id + 1
                                                          : SPANPROF_SITE_IDS)
               : 0;
    return by_id;
}

void spanprof__site_registry_forget(uint32_t id)
{
    if (by_id && id < SPANPROF_SITE_IDS)
        __atomic_store_n(&by_id[id], NULL, __ATOMIC_RELEASE);
}

int spanprof__span_chosen(const struct spanprof_site *site)
{
    return !spanprof__g.spans || spanprof__name_matches(spanprof__g.spans, site->name);
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
