/* causal.c — `spanprof coz`: coz's causal profile summarised per span.
 *
 * coz reports experiments per source line ("selected=FILE:LINE"); a spanprof user thinks in
 * spans. We give each experiment to the span whose function holds its line (the JSON profile
 * has each span's file and first..last line; format/span_index.c finds it), pool the
 * experiments of a span per speedup bucket, and compute what coz's plot computes
 * (plasma-umass/coz viewer/ts/profile.ts):
 *
 *   throughput point:  period  = sum(duration) / sum(delta)
 *                      change  = (period_baseline - period) / period_baseline
 *   latency point:     latency = difference / (sum(arrivals) / sum(duration))   (Little's law;
 *                      "difference" pooled as a duration-weighted mean, as coz does)
 *                      change  = (latency - latency_baseline) / latency_baseline
 *
 * The baseline is the pooled speedup-0 experiments of the same span (coz compares per selected
 * line; per span is the same idea one level up); with none, all speedup-0 experiments. Like
 * coz's plot we drop changes outside -100%..+200% as noise. coz's plot shows the latency
 * change negated; we show the plain change, so a negative figure means shorter latency.
 *
 * A figure needs MIN_EXPERIMENTS experiments in its cell and in its baseline (coz's own target
 * for a point's visits per experiment, and what its plot needs before a line means anything):
 * a thinner cell shows its count only and does not rank its row.  The table ends with how many
 * experiments the leading span needs for every cell to have that many, from the shares coz
 * draws its speedups with (0.2.x: speedup 0 with weight 8 of 28, each of 0.05..1.00 with 1). */
#include "cmd/cmd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NBUCKETS = 5 };    /* 0 = baseline, then 10%, 25%, 50%, 100% */
static const double bucket_speedup[NBUCKETS] = { 0.0, 0.10, 0.25, 0.50, 1.00 };
static const char *const bucket_label[NBUCKETS] = { "base", "10%", "25%", "50%", "100%" };
/* The share of experiments coz gives each bucket: 0; 0.05-0.15; 0.20-0.35; 0.40-0.75; 0.80-1. */
static const double bucket_share[NBUCKETS] = { 8 / 28.0, 3 / 28.0, 4 / 28.0, 8 / 28.0, 5 / 28.0 };
enum { MIN_EXPERIMENTS = 5 };

/* coz draws speedups from {0, 0.05, ..., 1}. Only a real 0 is a baseline; anything else goes to
 * the nearest non-zero bucket, a tie (0.75) to the lower one so we never overstate a speedup. */
static int bucket_of(double s)
{
    if (s < 0.005)
        return 0;
    int best = 1;
    for (int b = 2; b < NBUCKETS; b++)
        if (fabs(s - bucket_speedup[b]) < fabs(s - bucket_speedup[best]))
            best = b;
    return best;
}

/* Pooled measurements of one point for one (span, bucket). */
struct acc {
    double delta;                              /* throughput */
    double arrivals, departures, difference;   /* latency */
    double duration;
    unsigned n;                                /* experiments pooled */
};

static void acc_add(struct acc *a, const struct coz_point *pt, double duration)
{
    if (pt->kind == COZ_THROUGHPUT) {
        a->delta += pt->delta;
    } else {
        a->arrivals += pt->arrivals;
        a->departures += pt->departures;
        /* Running duration-weighted mean of "difference" (items in flight), as coz pools it. */
        double total = a->duration + duration;
        a->difference = total > 0 ? (a->difference * a->duration + pt->difference * duration) / total
                                  : pt->difference;
    }
    a->duration += duration;
    a->n++;
}

/* coz's getDataPoint: the period between progress visits, or the mean latency. NAN if undefined. */
static double data_point(const struct acc *a, enum coz_point_kind kind)
{
    if (a->n == 0 || a->duration < 0)
        return NAN;
    if (kind == COZ_THROUGHPUT)
        return a->delta > 0 ? a->duration / a->delta : NAN;
    return a->arrivals > 0 ? a->difference / (a->arrivals / a->duration) : NAN;
}

/* One row of a result table. */
struct row {
    size_t group;
    struct acc cell[NBUCKETS];
    int baseline;            /* 0 none, 1 own speedup-0 experiments, 2 all speedup-0 experiments */
    unsigned base_n;
    double change[NBUCKETS]; /* NAN where not computable */
    double gain[NBUCKETS];   /* change, turned so that larger is better (negated for latency) */
};

static enum causal_sort row_sort;
static const struct sp_profile *row_prof;

static double max_gain(const struct row *r)
{
    double m = -INFINITY;
    for (int b = 1; b < NBUCKETS; b++)
        if (!isnan(r->gain[b]) && r->gain[b] > m)
            m = r->gain[b];
    return m;
}

static int cmp_double_desc(double a, double b)
{
    if (isnan(a))
        a = -INFINITY;
    if (isnan(b))
        b = -INFINITY;
    return a > b ? -1 : a < b ? 1 : 0;
}

/* Best first; "(outside spans)" always last; ties by name then location for a stable order. */
static int cmp_row(const void *pa, const void *pb)
{
    const struct row *a = pa, *b = pb;
    size_t out = row_prof->nspans;
    if ((a->group == out) != (b->group == out))
        return a->group == out ? 1 : -1;
    int r = 0;
    if (row_sort == CSORT_AT100)
        r = cmp_double_desc(a->gain[NBUCKETS - 1], b->gain[NBUCKETS - 1]);
    if (!r && row_sort != CSORT_NAME)
        r = cmp_double_desc(max_gain(a), max_gain(b));
    if (!r && a->group != out && b->group != out) {
        const struct sp_span *x = &row_prof->spans[a->group], *y = &row_prof->spans[b->group];
        r = strcmp(x->name, y->name);
        if (!r)
            r = strcmp(x->file, y->file);
        if (!r)
            r = x->line < y->line ? -1 : x->line > y->line;
    }
    return r;
}

struct notes {
    int fallback, no_baseline, dropped, thin;
};

/* What the throughput table says about its leading span, for the closing line. */
struct lead {
    const char *name;          /* NULL: no span row */
    unsigned n[NBUCKETS];      /* its experiments per bucket */
};

/* Experiments a run needs (this one has TOTAL) for every bucket of L to hold MIN_EXPERIMENTS,
 * each bucket filling at the rate it did here, or (an empty one) at the span's rate times the
 * bucket's share. */
static double experiments_needed(const struct lead *l, size_t total)
{
    unsigned in_span = 0;
    for (int b = 0; b < NBUCKETS; b++)
        in_span += l->n[b];
    double need = 0;
    for (int b = 0; b < NBUCKETS && in_span; b++) {
        if (l->n[b] >= MIN_EXPERIMENTS)
            continue;
        double rate = l->n[b] ? (double)l->n[b] / (double)total
                              : (double)in_span / (double)total * bucket_share[b];
        if (MIN_EXPERIMENTS / rate > need)
            need = MIN_EXPERIMENTS / rate;
    }
    return need;
}

/* Pools, computes and prints the table for one point. */
static void point_table(const struct coz_profile *c, const struct sp_profile *p, const size_t *groups,
                        enum coz_point_kind kind, const char *name, enum causal_sort sort, struct notes *nt,
                        struct lead *lead)
{
    size_t ngroups = p->nspans + 1;
    struct row *rows = xmalloc(ngroups * sizeof *rows);
    memset(rows, 0, ngroups * sizeof *rows);
    struct acc all_base = { 0 };

    for (size_t e = 0; e < c->nexps; e++) {
        const struct coz_experiment *x = &c->exps[e];
        int b = bucket_of(x->speedup);
        for (size_t k = 0; k < x->npoints; k++) {
            const struct coz_point *pt = &c->points[x->first_point + k];
            if (pt->kind != kind || strcmp(pt->name, name))
                continue;
            acc_add(&rows[groups[e]].cell[b], pt, x->duration);
            if (b == 0)
                acc_add(&all_base, pt, x->duration);
        }
    }

    size_t nrows = 0;
    for (size_t g = 0; g < ngroups; g++) {
        struct row r = rows[g];
        unsigned n = 0;
        for (int b = 0; b < NBUCKETS; b++)
            n += r.cell[b].n;
        if (n == 0)
            continue;      /* no experiment of this span measured this point */
        r.group = g;
        const struct acc *base = NULL;
        if (r.cell[0].n) {
            base = &r.cell[0];
            r.baseline = 1;
        } else if (all_base.n) {
            base = &all_base;
            r.baseline = 2;
        }
        r.base_n = base ? base->n : 0;
        double base_dp = base ? data_point(base, kind) : NAN;
        r.change[0] = r.gain[0] = NAN;
        for (int b = 1; b < NBUCKETS; b++) {
            double dp = data_point(&r.cell[b], kind), ch = NAN;
            if (!isnan(base_dp) && base_dp > 0 && !isnan(dp)) {
                ch = kind == COZ_THROUGHPUT ? (base_dp - dp) / base_dp : (dp - base_dp) / base_dp;
                if (ch < -1 || ch > 2)
                    ch = NAN;
            }
            r.change[b] = ch;
            /* Too few experiments behind it: shown as a count, and no rank. */
            int thin = r.cell[b].n < MIN_EXPERIMENTS || r.base_n < MIN_EXPERIMENTS;
            r.gain[b] = thin ? NAN : kind == COZ_THROUGHPUT ? ch : -ch;
        }
        rows[nrows++] = r;
    }
    row_sort = sort;
    row_prof = p;
    qsort(rows, nrows, sizeof *rows, cmp_row);
    if (lead) {
        /* The first row; when no figure ranks the rows, the span with the most experiments. */
        size_t pick = 0, most = 0;
        for (size_t i = 0; i < nrows && isinf(max_gain(&rows[0])); i++) {
            unsigned n = 0;
            for (int b = 0; b < NBUCKETS; b++)
                n += rows[i].cell[b].n;
            if (rows[i].group < p->nspans && n > most) {
                most = n;
                pick = i;
            }
        }
        lead->name = nrows && rows[pick].group < p->nspans ? p->spans[rows[pick].group].name : NULL;
        for (int b = 0; b < NBUCKETS && lead->name; b++)
            lead->n[b] = rows[pick].cell[b].n;
    }

    struct table t;
    table_init(&t, 2 + NBUCKETS, "lllllll");
    table_row(&t, xstrdup("span"), xstrdup("location"), xstrdup(bucket_label[0]), xstrdup(bucket_label[1]),
              xstrdup(bucket_label[2]), xstrdup(bucket_label[3]), xstrdup(bucket_label[4]));
    for (size_t i = 0; i < nrows; i++) {
        const struct row *r = &rows[i];
        char *cells[NBUCKETS];
        if (r->baseline == 1) {
            cells[0] = xasprintf("n=%u", r->base_n);
        } else if (r->baseline == 2) {
            cells[0] = xasprintf("all n=%u", r->base_n);
            nt->fallback = 1;
        } else {
            cells[0] = xstrdup("none");
            nt->no_baseline = 1;
        }
        for (int b = 1; b < NBUCKETS; b++) {
            unsigned n = r->cell[b].n;
            if (n == 0)
                cells[b] = xstrdup("-");
            else if (!r->baseline)
                cells[b] = xasprintf("? (n=%u)", n);
            else if (n < MIN_EXPERIMENTS || r->base_n < MIN_EXPERIMENTS) {
                cells[b] = xasprintf("n=%u", n);
                nt->thin = 1;
            } else if (isnan(r->change[b])) {
                cells[b] = xasprintf("n/a (n=%u)", n);
                nt->dropped = 1;
            } else {
                double pct = 100.0 * r->change[b];
                if (fabs(pct) < 0.05)
                    pct = 0.0;      /* no "-0.0%" */
                cells[b] = xasprintf("%+.1f%% (n=%u)", pct, n);
            }
        }
        const struct sp_span *s = r->group < p->nspans ? &p->spans[r->group] : NULL;
        table_row(&t, xstrdup(s ? s->name : "(outside spans)"),
                  s ? xasprintf("%s:%ld-%ld", s->file, s->line, s->last_line) : xstrdup("-"),
                  cells[0], cells[1], cells[2], cells[3], cells[4]);
    }
    table_print(&t, "  ");
    table_free(&t);
    free(rows);
}

/* Distinct point names of one kind, in order of first appearance: the default throughput point
 * is then the first one coz wrote, typically the one hit first or most. */
static size_t point_names(const struct coz_profile *c, enum coz_point_kind kind, const char ***out)
{
    const char **names = NULL;
    size_t n = 0;
    for (size_t i = 0; i < c->npoints; i++) {
        if (c->points[i].kind != kind)
            continue;
        size_t j;
        for (j = 0; j < n && strcmp(names[j], c->points[i].name); j++)
            ;
        if (j == n) {
            names = xrealloc(names, (n + 1) * sizeof *names);
            names[n++] = c->points[i].name;
        }
    }
    *out = names;
    return n;
}

static void print_names(const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("%s%s", i ? ", " : "", names[i]);
}

int cmd_causal(const struct coz_profile *c, const struct sp_profile *p, const struct causal_opts *o)
{
    const char **tput, **lat;
    size_t ntput = point_names(c, COZ_THROUGHPUT, &tput), nlat = point_names(c, COZ_LATENCY, &lat);
    int rc = 0;

    /* A name the user typed that is not there is an error, not an empty table. */
    if (o->progress) {
        size_t i;
        for (i = 0; i < ntput && strcmp(tput[i], o->progress); i++)
            ;
        if (i == ntput) {
            fprintf(stderr, "spanprof: %s has no throughput point named '%s'", c->path, o->progress);
            if (ntput) {
                fputs(" (it has: ", stderr);
                for (size_t k = 0; k < ntput; k++)
                    fprintf(stderr, "%s%s", k ? ", " : "", tput[k]);
                fputc(')', stderr);
            }
            fputc('\n', stderr);
            rc = EXIT_BAD_INPUT;
            goto out;
        }
    }
    int all_latency = o->latency && strcmp(o->latency, "all") == 0;
    if (o->latency && !all_latency) {
        size_t i;
        for (i = 0; i < nlat && strcmp(lat[i], o->latency); i++)
            ;
        if (i == nlat) {
            fprintf(stderr, "spanprof: %s has no latency point named '%s'\n", c->path, o->latency);
            rc = EXIT_BAD_INPUT;
            goto out;
        }
    }

    size_t *groups = xmalloc((c->nexps ? c->nexps : 1) * sizeof *groups);
    size_t in_spans = 0, outside = 0, unmeasured = 0, base = 0;
    struct span_index *ix = span_index_build(p);
    for (size_t e = 0; e < c->nexps; e++) {
        groups[e] = span_index_find(ix, c->exps[e].file, c->exps[e].line);
        if (c->exps[e].npoints == 0)
            unmeasured++;        /* nothing to pool: skipped */
        else if (groups[e] < p->nspans)
            in_spans++;
        else
            outside++;
        if (c->exps[e].npoints && bucket_of(c->exps[e].speedup) == 0)
            base++;
    }

    printf("coz profile: %s: %zu experiments (%zu at speedup 0), %zu in spans, %zu outside spans",
           c->path, c->nexps, base, in_spans, outside);
    if (unmeasured)
        printf(", %zu without measurements (skipped)", unmeasured);
    printf("\nspans: %s: %zu\n", p->path, p->nspans);
    puts("speedup buckets: 0.05-0.15 -> 10%, 0.20-0.35 -> 25%, 0.40-0.75 -> 50%, 0.80-1.00 -> 100%; "
         "0 is the baseline");

    if (c->nexps == 0) {
        puts("\nno experiments: run the program longer under coz (about 10 s or more), built with\n"
             "-g -gdwarf-4 -gno-variable-location-views");
        goto done;
    }

    struct notes nt = { 0 };
    struct lead lead = { 0 };
    putchar('\n');
    if (ntput == 0) {
        puts("no throughput points: the program has no COZ_PROGRESS (throughput changes need one)");
    } else {
        const char *chosen = o->progress ? o->progress : tput[0];
        printf("throughput point '%s': predicted change in its rate if the span ran X%% faster\n", chosen);
        if (ntput > 1) {
            fputs("  (other throughput points: ", stdout);
            size_t k = 0;
            for (size_t i = 0; i < ntput; i++)
                if (strcmp(tput[i], chosen))
                    printf("%s%s", k++ ? ", " : "", tput[i]);
            puts("; choose with --progress NAME)");
        }
        point_table(c, p, groups, COZ_THROUGHPUT, chosen, o->sort, &nt, &lead);
        if (lead.name) {
            double need = experiments_needed(&lead, c->nexps);
            printf("confidence: a figure needs %d experiments in its cell and its baseline; ",
                   MIN_EXPERIMENTS);
            if (need <= 0)
                printf("every cell of '%s' has them (this run: %zu experiments)\n", lead.name, c->nexps);
            else
                printf("for every cell of '%s' to have them, coz needs about %.0f experiments (this run "
                       "has %zu): a run about %.1fx as long\n",
                       lead.name, ceil(need), c->nexps, need / (double)c->nexps);
        }
    }

    /* Latency tables only when asked for: a whole-program run can have one per span. */
    for (size_t i = 0; i < nlat && o->latency; i++) {
        if (!all_latency && strcmp(lat[i], o->latency))
            continue;
        printf("\nlatency point '%s': predicted change in its mean latency (negative: shorter)\n", lat[i]);
        point_table(c, p, groups, COZ_LATENCY, lat[i], o->sort, &nt, NULL);
    }
    if (nlat && !o->latency) {
        printf("\nlatency points (%zu): ", nlat);
        print_names(lat, nlat);
        puts("\n  (a table for one with --latency NAME, for all with --latency all)");
    }


    if (nt.fallback || nt.no_baseline || nt.dropped || nt.thin) {
        puts("\nnotes:");
        if (nt.thin)
            printf("  n=K: fewer than %d experiments in the cell or its baseline: too few for a figure\n",
                   MIN_EXPERIMENTS);
        if (nt.fallback)
            puts("  all n=K: no speedup-0 experiment in this span; baseline is all K speedup-0 experiments");
        if (nt.no_baseline)
            puts("  none / ?: no speedup-0 experiment at all, so there is no baseline and no change can "
                 "be computed");
        if (nt.dropped)
            puts("  n/a: no progress or arrivals in those experiments, or a change outside "
                 "-100%..+200% (coz's plot drops those too)");
    }
done:
    span_index_free(ix);
    free(groups);
out:
    free(tput);
    free(lat);
    return rc;
}
