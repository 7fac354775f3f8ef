/* live_series.c — which of a running process's span names get series of their own in
 * `spanprof serve`'s /metrics, and the sums published for them and for the rest ("(other)").
 *
 * The rule (docs/manual.md, "Which spans get series"): at most max_spans names a process; a
 * name's heat is its time in spans over the recent past — each update adds what the span's
 * total time grew by since the last one, and what was there before decays with a half-life of
 * HALF_LIFE_S seconds (calls, weighed the same way, decide between names of equal time, as in
 * count mode, where there is none).  Free places go to the hottest names.  A name without a
 * series takes the place of the coldest named one once it is more than SWAP_FACTOR times as
 * hot: a span that becomes hot after start-up gets its series at the first update that sees it
 * (the start-up spans it displaces have cooled), and two spans of about the same heat do not
 * trade places back and forth (no churn of series from scrape to scrape).
 *
 * "(other)" counts what spans did while they had no series of their own: each update adds the
 * growth of the names without one.  So it never goes backwards, whatever moves in or out; a
 * name that gets a series shows its whole count since the process started (a new series, from
 * which rate() starts). */
#define _GNU_SOURCE   /* qsort_r */
#include "format/format.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HALF_LIFE_S 30.0
#define SWAP_FACTOR 2.0

_Static_assert(LIVE_HIST_NLE == 22, "live_row's buckets follow live_hist_le_ns");

void live_series_init(struct live_series *ser)
{
    memset(ser, 0, sizeof *ser);
    strmap_init(&ser->index);
    ser->other.name = "(other)";
}

void live_series_free(struct live_series *ser)
{
    for (size_t i = 0; i < ser->n; i++)
        free(ser->v[i].name);
    free(ser->v);
    strmap_free(&ser->index);
}

static void add_counts(struct live_row *r, const struct live_span *s)
{
    r->calls += s->calls;
    r->total_ns += s->total_ns;
    r->self_ns += s->self_ns;
    r->cpu_total_ns += s->cpu_total_ns;
    r->cpu_self_ns += s->cpu_self_ns;
    r->has_cpu_total |= s->has_cpu_total;
    r->has_cpu_self |= s->has_cpu_self;
    if (!s->has_hist)
        return;
    r->has_hist = 1;
    r->hist_sum_ns += s->hist_sum_ns;
    for (size_t b = 0; b < s->nbuckets; b++) {
        size_t k = 0;
        while (k < LIVE_HIST_NLE && live_hist_le_ns[k] < s->buckets[b].le_ns)
            k++;
        r->le[k] += s->buckets[b].count;
    }
}

static uint64_t grown(uint64_t now, uint64_t before)
{
    return now > before ? now - before : 0;
}

/* OUT += NOW - BEFORE, field by field (counters kept by live_spans_keep_max never shrink). */
static void add_growth(struct live_row *out, const struct live_row *now, const struct live_row *before)
{
    out->calls += grown(now->calls, before->calls);
    out->total_ns += grown(now->total_ns, before->total_ns);
    out->self_ns += grown(now->self_ns, before->self_ns);
    out->cpu_total_ns += grown(now->cpu_total_ns, before->cpu_total_ns);
    out->cpu_self_ns += grown(now->cpu_self_ns, before->cpu_self_ns);
    out->has_cpu_total |= now->has_cpu_total;
    out->has_cpu_self |= now->has_cpu_self;
    if (now->has_hist) {
        out->has_hist = 1;
        out->hist_sum_ns += grown(now->hist_sum_ns, before->hist_sum_ns);
        for (size_t k = 0; k <= LIVE_HIST_NLE; k++)
            out->le[k] += grown(now->le[k], before->le[k]);
    }
}

/* Whether A is more than FACTOR times as hot as B. */
static int hotter(const struct live_series_name *a, const struct live_series_name *b, double factor)
{
    if (a->heat_ns > 0 || b->heat_ns > 0)
        return a->heat_ns > factor * b->heat_ns;
    return a->heat_calls > factor * b->heat_calls;
}

/* Hottest first; then by name, so that equal heats choose the same way every time. */
static int by_heat(const void *x, const void *y, void *names)
{
    const struct live_series_name *v = names, *a = &v[*(const size_t *)x], *b = &v[*(const size_t *)y];
    if (hotter(a, b, 1.0))
        return -1;
    if (hotter(b, a, 1.0))
        return 1;
    return strcmp(a->name, b->name);
}

/* The named set: free places to the hottest, then the hottest unnamed displace the coldest
 * named while they are more than SWAP_FACTOR times as hot. */
static void choose(struct live_series *ser, size_t max_spans)
{
    size_t *order = xmalloc((ser->n + 1) * sizeof *order);
    for (size_t i = 0; i < ser->n; i++)
        order[i] = i;
    qsort_r(order, ser->n, sizeof *order, by_heat, ser->v);
    for (size_t i = 0; i < ser->n && ser->nnamed < max_spans; i++)
        if (!ser->v[order[i]].named) {
            ser->v[order[i]].named = 1;
            ser->nnamed++;
        }
    size_t hot = 0, cold = ser->n;   /* unnamed from the hottest, named from the coldest */
    for (;;) {
        while (hot < ser->n && ser->v[order[hot]].named)
            hot++;
        while (cold > 0 && !ser->v[order[cold - 1]].named)
            cold--;
        if (hot >= ser->n || cold == 0 || hot > cold - 1 ||
            !hotter(&ser->v[order[hot]], &ser->v[order[cold - 1]], SWAP_FACTOR))
            break;
        ser->v[order[hot]].named = 1;
        ser->v[order[cold - 1]].named = 0;
    }
    free(order);
}

void live_series_update(struct live_series *ser, const struct live_snapshot *kept, double now_s,
                        size_t max_spans)
{
    double decay = ser->updated_s > 0 && now_s > ser->updated_s
                       ? exp2(-(now_s - ser->updated_s) / HALF_LIFE_S) : 1.0;
    ser->updated_s = now_s;
    /* every name of this snapshot known, then its sums of this update in FRESH */
    for (size_t i = 0; i < kept->nspans; i++) {
        const char *name = kept->spans[i].name;
        int added;
        size_t k = strmap_index(&ser->index, name, strlen(name), &added);
        if (added) {
            if (ser->n == ser->cap)
                ser->v = xrealloc(ser->v, (ser->cap = ser->cap ? 2 * ser->cap : 64) * sizeof *ser->v);
            memset(&ser->v[k], 0, sizeof ser->v[k]);
            ser->v[k].name = xstrdup(name);
            ser->n++;
        }
    }
    struct live_row *fresh = xmalloc((ser->n + 1) * sizeof *fresh);
    for (size_t k = 0; k < ser->n; k++) {
        memset(&fresh[k], 0, sizeof fresh[k]);
        fresh[k].name = ser->v[k].name;
    }
    for (size_t i = 0; i < kept->nspans; i++) {
        const struct live_span *s = &kept->spans[i];
        add_counts(&fresh[strmap_find(&ser->index, s->name, strlen(s->name))], s);
    }
    for (size_t k = 0; k < ser->n; k++) {
        struct live_series_name *e = &ser->v[k];
        e->heat_ns = e->heat_ns * decay + (double)grown(fresh[k].total_ns, e->row.total_ns);
        e->heat_calls = e->heat_calls * decay + (double)grown(fresh[k].calls, e->row.calls);
    }
    choose(ser, max_spans);
    for (size_t k = 0; k < ser->n; k++) {
        struct live_series_name *e = &ser->v[k];
        if (!e->named) {
            add_growth(&ser->other, &fresh[k], &e->row);
            ser->any_other = 1;
        }
        e->row = fresh[k];
    }
    free(fresh);
}
