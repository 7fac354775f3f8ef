/* live_metrics.c — the counters of running processes' spans in Prometheus's text exposition
 * format (what `spanprof serve` answers on /metrics).
 *
 * Per process (labels pid and exe, the executable's base name) and span name (label span; spans
 * that share a name are summed): calls, inclusive and self time, CPU time where the profile has
 * it, and the latency histogram where it has one (SPANPROF_HISTOGRAM=1).  The histogram's bounds
 * are fixed, 1-2.5-5 steps from 1 µs to 10 s, and a bucket of the runtime's (LE_NS, its largest
 * value) counts under the smallest bound >= LE_NS: the runtime's buckets are 6.25% wide, so a
 * count may sit one bound higher than the activation's exact duration would put it, by at most
 * that width.  A process's span names beyond max_spans (taken by total time) are summed into
 * span="(other)". */
#include "format/format.h"

#include <stdlib.h>
#include <string.h>

const int64_t live_hist_le_ns[] = {
    1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000,
    1000000, 2500000, 5000000, 10000000, 25000000, 50000000, 100000000, 250000000, 500000000,
    1000000000, 2500000000, 5000000000, 10000000000,
};
const size_t live_hist_nle = sizeof live_hist_le_ns / sizeof *live_hist_le_ns;
#define NLE (sizeof live_hist_le_ns / sizeof *live_hist_le_ns)

/* A span name's sums in one process. */
struct row {
    const char *name;
    uint64_t calls, total_ns, self_ns, cpu_total_ns, cpu_self_ns;
    int has_cpu_total, has_cpu_self, has_hist;
    uint64_t hist_sum_ns;
    uint64_t le[NLE + 1];        /* per bound, not cumulative; [NLE]: above the last (+Inf) */
};

static void add_span(struct row *r, const struct live_span *s)
{
    r->calls += s->calls;
    r->total_ns += s->total_ns;
    r->self_ns += s->self_ns;
    r->cpu_total_ns += s->cpu_total_ns;
    r->cpu_self_ns += s->cpu_self_ns;
    r->has_cpu_total |= s->has_cpu_total;
    r->has_cpu_self |= s->has_cpu_self;
    if (s->has_hist) {
        r->has_hist = 1;
        r->hist_sum_ns += s->hist_sum_ns;
        for (size_t b = 0; b < s->nbuckets; b++) {
            size_t k = 0;
            while (k < NLE && live_hist_le_ns[k] < s->buckets[b].le_ns)
                k++;
            r->le[k] += s->buckets[b].count;
        }
    }
}

static void add_row(struct row *r, const struct row *o)
{
    struct live_span s = {0};
    s.calls = o->calls, s.total_ns = o->total_ns, s.self_ns = o->self_ns;
    s.cpu_total_ns = o->cpu_total_ns, s.cpu_self_ns = o->cpu_self_ns;
    s.has_cpu_total = o->has_cpu_total, s.has_cpu_self = o->has_cpu_self;
    add_span(r, &s);
    if (o->has_hist) {
        r->has_hist = 1;
        r->hist_sum_ns += o->hist_sum_ns;
        for (size_t k = 0; k <= NLE; k++)
            r->le[k] += o->le[k];
    }
}

static int by_total_desc(const void *a, const void *b)
{
    const struct row *x = *(const struct row *const *)a, *y = *(const struct row *const *)b;
    if (x->total_ns != y->total_ns)
        return x->total_ns < y->total_ns ? 1 : -1;
    return strcmp(x->name, y->name);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct row *)a)->name, ((const struct row *)b)->name);
}

/* One process's rows: a row per named span (by name), then "(other)" if any span is not named. */
struct proc_rows {
    const struct live_snapshot *s;
    char pid[24];
    const char *exe;
    struct row *rows;
    size_t nrows;
};

static void build_rows(const struct live_metrics_proc *p, size_t max_spans, struct proc_rows *out)
{
    const struct live_snapshot *s = p->s;
    struct strmap names;
    strmap_init(&names);
    struct row *all = xmalloc((s->nspans + 1) * sizeof *all);
    size_t n = 0;
    for (size_t i = 0; i < s->nspans; i++) {
        int added;
        size_t k = strmap_index(&names, s->spans[i].name, strlen(s->spans[i].name), &added);
        if (added) {
            memset(&all[n], 0, sizeof all[n]);
            all[n++].name = s->spans[i].name;
        }
        add_span(&all[k], &s->spans[i]);
    }
    /* names not yet named, largest total first, until max_spans are */
    struct row **order = xmalloc((n + 1) * sizeof *order);
    for (size_t i = 0; i < n; i++)
        order[i] = &all[i];
    qsort(order, n, sizeof *order, by_total_desc);
    for (size_t i = 0; i < n && p->named->n < max_spans; i++) {
        int added;
        strmap_index(p->named, order[i]->name, strlen(order[i]->name), &added);
    }
    free(order);
    out->s = s;
    snprintf(out->pid, sizeof out->pid, "%lld", s->pid);
    const char *slash = strrchr(s->exe, '/');
    out->exe = slash ? slash + 1 : s->exe;
    out->rows = xmalloc((n + 1) * sizeof *out->rows);
    out->nrows = 0;
    struct row other = {.name = "(other)"};
    int any_other = 0;
    for (size_t i = 0; i < n; i++) {
        if (strmap_find(p->named, all[i].name, strlen(all[i].name)) >= 0)
            out->rows[out->nrows++] = all[i];
        else
            add_row(&other, &all[i]), any_other = 1;
    }
    qsort(out->rows, out->nrows, sizeof *out->rows, by_name);
    if (any_other)
        out->rows[out->nrows++] = other;
    free(all);
    strmap_free(&names);
}

/* A label value, escaped as the format asks: backslash, double quote and line feed. */
static void put_escaped(FILE *f, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\')
            fputs("\\\\", f);
        else if (*v == '"')
            fputs("\\\"", f);
        else if (*v == '\n')
            fputs("\\n", f);
        else
            fputc(*v, f);
    }
}

static void put_labels(FILE *f, const struct proc_rows *p, const char *span, const char *le)
{
    fprintf(f, "{pid=\"%s\",exe=\"", p->pid);
    put_escaped(f, p->exe);
    fputc('"', f);
    if (span) {
        fputs(",span=\"", f);
        put_escaped(f, span);
        fputc('"', f);
    }
    if (le)
        fprintf(f, ",le=\"%s\"", le);
    fputc('}', f);
}

/* NS as seconds, exactly. */
static void put_seconds(FILE *f, uint64_t ns)
{
    fprintf(f, " %llu.%09llu\n", (unsigned long long)(ns / 1000000000u), (unsigned long long)(ns % 1000000000u));
}

static void header(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

enum field { F_CALLS, F_TOTAL, F_SELF, F_CPU_TOTAL, F_CPU_SELF };

static void counter_family(FILE *f, const struct proc_rows *ps, size_t n, const char *name,
                           const char *help, enum field field)
{
    int any = 0;
    for (size_t i = 0; i < n && !any; i++)
        for (size_t r = 0; r < ps[i].nrows && !any; r++)
            any = field == F_CPU_TOTAL ? ps[i].rows[r].has_cpu_total
                  : field == F_CPU_SELF ? ps[i].rows[r].has_cpu_self : 1;
    if (!any)
        return;
    header(f, name, "counter", help);
    for (size_t i = 0; i < n; i++)
        for (size_t r = 0; r < ps[i].nrows; r++) {
            const struct row *w = &ps[i].rows[r];
            if ((field == F_CPU_TOTAL && !w->has_cpu_total) || (field == F_CPU_SELF && !w->has_cpu_self))
                continue;
            fputs(name, f);
            put_labels(f, &ps[i], w->name, NULL);
            switch (field) {
            case F_CALLS: fprintf(f, " %llu\n", (unsigned long long)w->calls); break;
            case F_TOTAL: put_seconds(f, w->total_ns); break;
            case F_SELF: put_seconds(f, w->self_ns); break;
            case F_CPU_TOTAL: put_seconds(f, w->cpu_total_ns); break;
            case F_CPU_SELF: put_seconds(f, w->cpu_self_ns); break;
            }
        }
}

static void le_text(char *buf, size_t len, int64_t ns)
{
    snprintf(buf, len, "%g", (double)ns / 1e9);
}

void live_metrics_write(FILE *f, const struct live_metrics_proc *procs, size_t nprocs,
                        size_t max_spans, const struct live_metrics_totals *t)
{
    struct proc_rows *ps = xmalloc((nprocs + 1) * sizeof *ps);
    for (size_t i = 0; i < nprocs; i++)
        build_rows(&procs[i], max_spans, &ps[i]);

    header(f, "spanprof_processes", "gauge", "Processes answering on their socket in the live directory.");
    fprintf(f, "spanprof_processes %zu\n", t->processes);
    header(f, "spanprof_processes_ended_total", "counter", "Processes whose final snapshot was read.");
    fprintf(f, "spanprof_processes_ended_total %llu\n", (unsigned long long)t->ended);
    header(f, "spanprof_scrape_errors_total", "counter",
           "Snapshots of running processes that could not be read.");
    fprintf(f, "spanprof_scrape_errors_total %llu\n", (unsigned long long)t->scrape_errors);
    if (nprocs) {
        header(f, "spanprof_process_start_time_seconds", "gauge",
               "When the process (its executable image) started, seconds since the Unix epoch.");
        for (size_t i = 0; i < nprocs; i++) {
            fputs("spanprof_process_start_time_seconds", f);
            put_labels(f, &ps[i], NULL, NULL);
            int64_t ns = ps[i].s->start_unix_ns > 0 ? ps[i].s->start_unix_ns : 0;
            put_seconds(f, (uint64_t)ns);
        }
    }
    counter_family(f, ps, nprocs, "spanprof_span_calls_total", "Activations of the span.", F_CALLS);
    counter_family(f, ps, nprocs, "spanprof_span_seconds_total",
                   "Time inside the span, its callees included (wall clock).", F_TOTAL);
    counter_family(f, ps, nprocs, "spanprof_span_self_seconds_total",
                   "Time inside the span, less the spans it called (wall clock).", F_SELF);
    counter_family(f, ps, nprocs, "spanprof_span_cpu_seconds_total",
                   "CPU time inside the span, its callees included.", F_CPU_TOTAL);
    counter_family(f, ps, nprocs, "spanprof_span_cpu_self_seconds_total",
                   "CPU time inside the span, less the spans it called.", F_CPU_SELF);

    int any = 0;
    for (size_t i = 0; i < nprocs && !any; i++)
        for (size_t r = 0; r < ps[i].nrows && !any; r++)
            any = ps[i].rows[r].has_hist;
    if (any) {
        header(f, "spanprof_span_duration_seconds", "histogram",
               "Durations of the span's activations (SPANPROF_HISTOGRAM=1; exact to the runtime's "
               "6.25% bucket width).");
        for (size_t i = 0; i < nprocs; i++)
            for (size_t r = 0; r < ps[i].nrows; r++) {
                const struct row *w = &ps[i].rows[r];
                if (!w->has_hist)
                    continue;
                uint64_t cum = 0;
                char le[32];
                for (size_t k = 0; k <= NLE; k++) {
                    cum += w->le[k];
                    if (k < NLE)
                        le_text(le, sizeof le, live_hist_le_ns[k]);
                    else
                        strcpy(le, "+Inf");
                    fputs("spanprof_span_duration_seconds_bucket", f);
                    put_labels(f, &ps[i], w->name, le);
                    fprintf(f, " %llu\n", (unsigned long long)cum);
                }
                fputs("spanprof_span_duration_seconds_sum", f);
                put_labels(f, &ps[i], w->name, NULL);
                put_seconds(f, w->hist_sum_ns);
                fputs("spanprof_span_duration_seconds_count", f);
                put_labels(f, &ps[i], w->name, NULL);
                fprintf(f, " %llu\n", (unsigned long long)cum);
            }
    }
    for (size_t i = 0; i < nprocs; i++)
        free(ps[i].rows);
    free(ps);
}
