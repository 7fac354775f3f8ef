/* progress.c — progress points: __spanprof_progress, their registration and their part of the
 * JSON profile.
 *
 * A progress point is a site of kind SPANPROF_KIND_PROGRESS (emitted by the plugin for a function
 * marked `progress`, or by SPANPROF_PROGRESS).  On first sight (cold, under the global lock, via
 * spanprof__site_register) it gets a hit counter of its own, allocated once and kept for the life
 * of the process, and — under coz — coz's throughput counter for its name; both are cached in the
 * site so a hit needs no lookup.  Hits are counted with relaxed atomic adds on that counter:
 * exact under threads, without locks or allocation.
 *
 * After fork the child's counters restart at zero, as its spans do (see thread.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "record/internal.h"

/* coz.h's counter type for throughput (progress) points. */
#define COZ_COUNTER_TYPE_THROUGHPUT 1

/* One per registered progress site; never freed (the site keeps a pointer to it). */
struct progress_point {
    uint64_t hits; /* atomic, relaxed */
    const struct spanprof_site *site;
    struct progress_point *next; /* registry link, under the global lock */
};

static struct progress_point *points; /* newest first */

static void reset_after_fork(void)
{
    for (struct progress_point *p = points; p; p = p->next)
        p->hits = 0;
}

/* Called with the global lock held, recording on, for a valid site of kind PROGRESS.
 * Returns the state to store: FAST (count), COZ (count and bump coz) or OFF (out of memory). */
uint32_t spanprof__progress_register_locked(struct spanprof_site *site)
{
    struct progress_point *p = calloc(1, sizeof *p);
    if (!p)
        return SPANPROF__SITE_OFF;
    if (!points)
        pthread_atfork(NULL, NULL, reset_after_fork);
    p->site = site;
    p->next = points;
    points = p;
    site->coz_end = p;
    site->id = ++spanprof__g.next_site_id;
    if (spanprof__g.coz_get) {
        site->coz_begin = spanprof__g.coz_get(COZ_COUNTER_TYPE_THROUGHPUT, site->name);
        if (site->coz_begin)
            return SPANPROF__SITE_SLOW;
    }
    return SPANPROF__SITE_FAST;
}

/* First hit of a site (or recording off, or a site of another kind passed here by mistake). */
static __attribute__((noinline)) void progress_slow(struct spanprof_site *site)
{
    uint32_t st = __atomic_load_n(&site->state, __ATOMIC_ACQUIRE);
    if (st == SPANPROF__SITE_NEW) {
        if (spanprof__tls_busy) /* hit from inside the runtime itself */
            return;
        st = spanprof__site_register(site);
    }
    if ((st != SPANPROF__SITE_FAST && st != SPANPROF__SITE_SLOW) || site->kind != SPANPROF_KIND_PROGRESS)
        return;
    __atomic_add_fetch(&((struct progress_point *)site->coz_end)->hits, 1, __ATOMIC_RELAXED);
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
    __atomic_add_fetch(&((struct progress_point *)site->coz_end)->hits, 1, __ATOMIC_RELAXED);
}

static int compare_points(const void *a, const void *b)
{
    const struct spanprof_site *x = (*(struct progress_point *const *)a)->site;
    const struct spanprof_site *y = (*(struct progress_point *const *)b)->site;
    int c = strcmp(x->name, y->name);
    if (!c)
        c = strcmp(x->file, y->file);
    if (!c)
        c = (x->first_line > y->first_line) - (x->first_line < y->first_line);
    return c;
}

/* [ { "name", "file", "line", "hits" } ] for every progress point hit so far, sorted by name, file
 * and line.  Call with the global lock held (the registry may not change meanwhile). */
struct json_object *spanprof__progress_json(void)
{
    json_object *array = json_object_new_array();
    size_t n = 0;
    for (struct progress_point *p = points; p; p = p->next)
        n++;
    struct progress_point **sorted = calloc(n ? n : 1, sizeof *sorted);
    if (!array || !sorted) {
        free(sorted);
        return array;
    }
    n = 0;
    for (struct progress_point *p = points; p; p = p->next)
        sorted[n++] = p;
    qsort(sorted, n, sizeof *sorted, compare_points);
    for (size_t i = 0; i < n; i++) {
        const struct spanprof_site *s = sorted[i]->site;
        uint64_t hits = __atomic_load_n(&sorted[i]->hits, __ATOMIC_RELAXED);
        json_object *j = json_object_new_object();
        json_object_object_add(j, "name", json_object_new_string(s->name ? s->name : ""));
        json_object_object_add(j, "file", json_object_new_string(s->file ? s->file : ""));
        json_object_object_add(j, "line", json_object_new_int64(s->first_line));
        json_object_object_add(j, "hits", json_object_new_int64(hits > INT64_MAX ? INT64_MAX : (int64_t)hits));
        json_object_array_add(array, j);
    }
    free(sorted);
    return array;
}
