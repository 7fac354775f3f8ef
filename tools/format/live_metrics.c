/* live_metrics.c — the counters of running processes' spans in Prometheus's text exposition
 * format (what `spanprof serve` answers on /metrics).
 *
 * Per process (labels pid and exe, the executable's base name) and span name (label span; spans
 * that share a name are summed): calls, inclusive and self time, CPU time where the profile has
 * it, and the latency histogram where it has one (SPANPROF_HISTOGRAM=1).  The histogram's bounds
 * are fixed, 1-2.5-5 steps from 1 µs to 10 s, and a bucket of the runtime's (LE_NS, its largest
 * value) counts under the smallest bound >= LE_NS: the runtime's buckets are 6.25% wide, so a
 * count may sit one bound higher than the activation's exact duration would put it, by at most
 * that width.  Which span names have series of their own, and what "(other)" sums, is
 * live_series.c's. */
#include "format/format.h"

#include <stdlib.h>
#include <string.h>

const int64_t live_hist_le_ns[] = {
    1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000,
    1000000, 2500000, 5000000, 10000000, 25000000, 50000000, 100000000, 250000000, 500000000,
    1000000000, 2500000000, 5000000000, 10000000000,
};
const size_t live_hist_nle = sizeof live_hist_le_ns / sizeof *live_hist_le_ns;
#define NLE LIVE_HIST_NLE
_Static_assert(sizeof live_hist_le_ns / sizeof *live_hist_le_ns == LIVE_HIST_NLE, "the bounds' count");

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct live_row *)a)->name, ((const struct live_row *)b)->name);
}

/* One process's rows: its named spans' (by name), then "(other)" once any name has had none. */
struct proc_rows {
    const struct live_snapshot *s;
    char pid[24];
    const char *exe;
    int up;
    struct live_row *rows;
    size_t nrows;
};

static void build_rows(const struct live_metrics_proc *p, struct proc_rows *out)
{
    const struct live_series *ser = p->series;
    out->s = p->s;
    out->up = p->up;
    snprintf(out->pid, sizeof out->pid, "%lld", p->s->pid);
    const char *slash = strrchr(p->s->exe, '/');
    out->exe = slash ? slash + 1 : p->s->exe;
    out->rows = xmalloc((ser->nnamed + 2) * sizeof *out->rows);
    out->nrows = 0;
    for (size_t i = 0; i < ser->n; i++)
        if (ser->v[i].named)
            out->rows[out->nrows++] = ser->v[i].row;
    qsort(out->rows, out->nrows, sizeof *out->rows, by_name);
    if (ser->any_other)
        out->rows[out->nrows++] = ser->other;
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
            const struct live_row *w = &ps[i].rows[r];
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
                        const struct live_metrics_totals *t)
{
    struct proc_rows *ps = xmalloc((nprocs + 1) * sizeof *ps);
    for (size_t i = 0; i < nprocs; i++)
        build_rows(&procs[i], &ps[i]);

    header(f, "spanprof_processes", "gauge", "Processes answering on their socket in the live directory.");
    fprintf(f, "spanprof_processes %zu\n", t->processes);
    header(f, "spanprof_processes_ended_total", "counter", "Processes whose final snapshot was read.");
    fprintf(f, "spanprof_processes_ended_total %llu\n", (unsigned long long)t->ended);
    header(f, "spanprof_scrape_errors_total", "counter",
           "Snapshots of running processes that could not be read.");
    fprintf(f, "spanprof_scrape_errors_total %llu\n", (unsigned long long)t->scrape_errors);
    header(f, "spanprof_processes_forgotten_total", "counter",
           "Ended processes dropped before their time to keep serve within its bounds.");
    fprintf(f, "spanprof_processes_forgotten_total %llu\n", (unsigned long long)t->forgotten);
    header(f, "spanprof_sockets_silent", "gauge",
           "Sockets in the live directory that did not answer in time: not asked again until a "
           "retry every few seconds answers.");
    fprintf(f, "spanprof_sockets_silent %zu\n", t->silent);
    header(f, "spanprof_entries_refused", "gauge",
           "Entries in the live directory serve does not publish: links, files of other users, "
           "processes of other users.");
    fprintf(f, "spanprof_entries_refused %zu\n", t->refused);
    if (nprocs) {
        header(f, "spanprof_process_start_time_seconds", "gauge",
               "When the process (its executable image) started, seconds since the Unix epoch.");
        for (size_t i = 0; i < nprocs; i++) {
            fputs("spanprof_process_start_time_seconds", f);
            put_labels(f, &ps[i], NULL, NULL);
            int64_t ns = ps[i].s->start_unix_ns > 0 ? ps[i].s->start_unix_ns : 0;
            put_seconds(f, (uint64_t)ns);
        }
        header(f, "spanprof_process_up", "gauge",
               "1 while the process runs and answered its last request; 0 when it did not answer "
               "in time or has ended (its counters are then the last ones read).");
        for (size_t i = 0; i < nprocs; i++) {
            fputs("spanprof_process_up", f);
            put_labels(f, &ps[i], NULL, NULL);
            fprintf(f, " %d\n", ps[i].up);
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
                const struct live_row *w = &ps[i].rows[r];
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
