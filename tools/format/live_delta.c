/* live_delta.c — what a running process did between two of its snapshots: the difference of
 * their stacks (the profile of an interval), and the counters `spanprof serve` publishes, kept
 * from going backwards. */
#include "format/format.h"

#include <stdlib.h>
#include <string.h>

/* The index of AFTER's type I in BEFORE's types, or -1. */
static long type_in(const struct live_stacks *before, const struct spanprof__pprof_type *t)
{
    for (size_t k = 0; k < before->ntypes; k++)
        if (!strcmp(before->types[k].type, t->type) && !strcmp(before->types[k].unit, t->unit))
            return (long)k;
    return -1;
}

void live_stacks_delta(const struct live_stacks *after, const struct live_stacks *before,
                       struct live_stacks *out)
{
    live_stacks_init(out);
    out->ntypes = after->ntypes;
    long map[PPROF_MAX_TYPES];
    for (size_t i = 0; i < after->ntypes; i++) {
        out->types[i] = (struct spanprof__pprof_type){xstrdup(after->types[i].type), xstrdup(after->types[i].unit)};
        map[i] = before ? type_in(before, &after->types[i]) : -1;
    }
    out->period_type = (struct spanprof__pprof_type){xstrdup(after->period_type.type ? after->period_type.type : ""),
                                                     xstrdup(after->period_type.unit ? after->period_type.unit : "")};
    out->period = after->period;
    int64_t values[PPROF_MAX_TYPES];
    for (size_t i = 0; i < after->n; i++) {
        const struct live_stack *a = &after->v[i];
        int any = 0;
        const struct live_stack *bs = NULL;
        if (before) {
            size_t len;
            char *key = live_stack_key(a, &len);
            long j = strmap_find(&before->index, key, len);
            free(key);
            if (j >= 0)
                bs = &before->v[j];
        }
        for (size_t k = 0; k < after->ntypes; k++) {
            int64_t prev = bs && map[k] >= 0 ? bs->values[map[k]] : 0;
            values[k] = a->values[k] > prev ? a->values[k] - prev : 0;
            any |= values[k] != 0;
        }
        if (any)
            live_stacks_add(out, a->frames, a->depth, a->thread, values);
    }
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* F's histogram in the metrics' fixed bounds (live_hist_le_ns, then INT64_MAX for +Inf): each
 * bucket under the smallest bound >= its LE_NS.  Folding first makes the kept counts immune to a
 * runtime bucket's LE_NS written differently from one snapshot to the next (262143 and 262144
 * have been seen for one bucket), which kept bucket by bucket would count twice. */
static struct live_bucket *fold(const struct live_span *f)
{
    struct live_bucket *out = xmalloc((live_hist_nle + 1) * sizeof *out);
    for (size_t k = 0; k <= live_hist_nle; k++)
        out[k] = (struct live_bucket){k < live_hist_nle ? live_hist_le_ns[k] : INT64_MAX, 0};
    for (size_t b = 0; b < f->nbuckets; b++) {
        size_t k = 0;
        while (k < live_hist_nle && live_hist_le_ns[k] < f->buckets[b].le_ns)
            k++;
        out[k].count += f->buckets[b].count;
    }
    return out;
}

/* Keeps in K (folded) the largest of each of F's folded bucket counts. */
static void keep_buckets(struct live_span *k, const struct live_span *f)
{
    struct live_bucket *m = fold(f);
    if (k->nbuckets == live_hist_nle + 1)
        for (size_t i = 0; i <= live_hist_nle; i++)
            m[i].count = max_u64(m[i].count, k->buckets[i].count);
    free(k->buckets);
    k->buckets = m;
    k->nbuckets = live_hist_nle + 1;
}

static char *span_key(const struct live_span *s, size_t *len)
{
    char *k = xasprintf("%s%c%s%c%ld", s->name, 0, s->file, 0, s->line);
    *len = strlen(s->name) + strlen(s->file) + 2 + strlen(k + strlen(s->name) + strlen(s->file) + 2);
    return k;
}

void live_spans_keep_max(struct live_snapshot *kept, const struct live_snapshot *fresh)
{
    struct strmap at;
    strmap_init(&at);
    for (size_t i = 0; i < kept->nspans; i++) {
        size_t len;
        int added;
        char *key = span_key(&kept->spans[i], &len);
        strmap_index(&at, key, len, &added);
        free(key);
    }
    for (size_t i = 0; i < fresh->nspans; i++) {
        const struct live_span *f = &fresh->spans[i];
        size_t len;
        int added;
        char *key = span_key(f, &len);
        size_t idx = strmap_index(&at, key, len, &added);
        free(key);
        if (added) {
            kept->spans = xrealloc(kept->spans, (kept->nspans + 1) * sizeof *kept->spans);
            struct live_span *k = &kept->spans[kept->nspans++];
            *k = *f;
            k->name = xstrdup(f->name);
            k->file = xstrdup(f->file);
            k->buckets = fold(f);
            k->nbuckets = live_hist_nle + 1;
            continue;
        }
        struct live_span *k = &kept->spans[idx];
        k->calls = max_u64(k->calls, f->calls);
        k->total_ns = max_u64(k->total_ns, f->total_ns);
        k->self_ns = max_u64(k->self_ns, f->self_ns);
        k->cpu_total_ns = max_u64(k->cpu_total_ns, f->cpu_total_ns);
        k->cpu_self_ns = max_u64(k->cpu_self_ns, f->cpu_self_ns);
        k->has_cpu_total |= f->has_cpu_total;
        k->has_cpu_self |= f->has_cpu_self;
        k->hist_count = max_u64(k->hist_count, f->hist_count);
        k->hist_sum_ns = max_u64(k->hist_sum_ns, f->hist_sum_ns);
        k->has_hist |= f->has_hist;
        keep_buckets(k, f);
    }
    strmap_free(&at);
    kept->pid = fresh->pid;
    free(kept->exe);
    kept->exe = xstrdup(fresh->exe);
    free(kept->host);
    kept->host = fresh->host ? xstrdup(fresh->host) : NULL;
    kept->start_unix_ns = fresh->start_unix_ns;
    kept->seq = fresh->seq;
}
