/* report.c — `spanprof report`: the JSON profile as a table of spans (calls, inclusive and self
 * time, mean, share of self time), plus run information, anomalies and progress points; several
 * profiles (or a directory of them) are merged first (load_inputs, format/merge.c). */
#include "cmd/cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static enum report_sort sort_key;
static int sort_cpu_field;   /* with SORT_CPU: the extra holding each span's CPU time */

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
    return a > b ? -1 : a < b ? 1 : 0;
}

/* Ties fall back to name, file, line so the output never depends on qsort's whims. */
static int cmp_span(const void *pa, const void *pb)
{
    const struct sp_span *a = *(const struct sp_span *const *)pa, *b = *(const struct sp_span *const *)pb;
    int r = 0;
    switch (sort_key) {
    case SORT_SELF:  r = cmp_u64_desc(a->self_ns, b->self_ns); break;
    case SORT_TOTAL: r = cmp_u64_desc(a->total_ns, b->total_ns); break;
    case SORT_CALLS: r = cmp_u64_desc(a->calls, b->calls); break;
    case SORT_CPU:   r = cmp_u64_desc(a->extra[sort_cpu_field], b->extra[sort_cpu_field]); break;
    case SORT_NAME:  break;
    }
    if (!r)
        r = strcmp(a->name, b->name);
    if (!r)
        r = strcmp(a->file, b->file);
    if (!r)
        r = a->line < b->line ? -1 : a->line > b->line;
    return r;
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

static void print_header(const struct sp_profile *p)
{
    if (p->no_calls) {
        printf("folded stacks: %s (no calls, files or lines; values taken as nanoseconds)\n", p->path);
        return;
    }
    printf("program: %s", p->program ? p->program : p->merged ? "(several)" : "(unknown)");
    if (p->pid >= 0)
        printf(" (pid %lld)", p->pid);
    if (p->merged)
        printf(" (%zu %s merged)", p->nprocs, plural(p->nprocs, "process", "processes"));
    putchar('\n');

    char *wall = p->has_wall ? fmt_duration((double)p->wall_ns) : xstrdup("?");
    /* A merged profile's wall time is the processes' added together. */
    printf("wall time%s: %s", p->merged ? " (sum)" : "", wall);
    free(wall);
    if (p->thread_count >= 0)
        printf(", threads: %lld", p->thread_count);
    /* A sampled run reads no clock per call ("clock": "none"), but its times are real. */
    if (p->sampled && p->sample_hz)
        printf(", times: sampled %llu times a second", (unsigned long long)p->sample_hz);
    else if (p->sampled)
        printf(", times: sampled");
    else if (p->clock)
        printf(", clock: %s", p->clock);
    if (p->call_ns > 0)
        printf(", times less %.1f ns per span call", p->call_ns);
    else if (p->compensation_failed)
        printf(", times not compensated (%s)", p->compensation_failed);
    if (p->start_time)
        printf(", started: %s", p->start_time);
    putchar('\n');

    /* Only worth a line when something went wrong: they qualify the figures below. */
    if (p->abandoned_frames || p->unmatched_exits || p->open_frames)
        printf("anomalies: %llu abandoned %s (longjmp), %llu unmatched %s, %llu open %s at exit\n",
               (unsigned long long)p->abandoned_frames, plural(p->abandoned_frames, "frame", "frames"),
               (unsigned long long)p->unmatched_exits, plural(p->unmatched_exits, "exit", "exits"),
               (unsigned long long)p->open_frames, plural(p->open_frames, "frame", "frames"));
}

/* The shown spans that mostly wait — CPU time under a tenth of their wall time, and at least a
 * millisecond of that — named after the table: a thread pool's loop or a flush that waits reads
 * as idle, not hot, whatever its share of wall time.  Sampled, a span's own (self) figures are
 * compared, so a loop that waits between its callees' work counts as waiting (SPANPROF_CPU=1's
 * too; an older release's has inclusive CPU time only, compared with the inclusive wall time). */
static void print_waiting(const struct sp_span *const *order, size_t shown, int cpu_field)
{
    if (cpu_field < 0)
        return;
    int self = 0; /* sampled runs, and SPANPROF_CPU=1's since it writes cpu_self_ns */
    for (size_t i = 0; i < shown && !self; i++)
        self = (order[i]->has_extra & (1u << X_CPU_SELF)) != 0;
    int field = self ? X_CPU_SELF : cpu_field;
    const char *sep = self ? "mostly waiting (own CPU time under 10 % of own wall time): "
                           : "mostly waiting (CPU time under 10 % of wall time): ";
    for (size_t i = 0; i < shown; i++) {
        const struct sp_span *s = order[i];
        uint64_t wall = self ? s->self_ns : s->total_ns;
        if (!(s->has_extra & (1u << field)) || wall < 1000000 || s->extra[field] * 10 >= wall)
            continue;
        printf("%s%s", sep, s->name);
        sep = ", ";
    }
    if (*sep == ',')
        putchar('\n');
}

/* SPANPROF_BUDGET's spans switched off (their ">=" calls): when, after how many calls, how short. */
static void print_switched_off(const struct sp_profile *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->nspans; i++)
        n += p->spans[i].switched_off;
    if (!p->budget && !n)
        return;
    if (p->budget)
        printf("cost budget %g%%: %zu %s switched off, calls (>=) a lower bound", p->budget_percent,
               n, plural(n, "span", "spans"));
    else
        printf("%zu %s switched off by a cost budget, calls (>=) a lower bound", n,
               plural(n, "span", "spans"));
    puts(n ? ":" : "");
    for (size_t i = 0; i < p->nspans; i++) {
        const struct sp_span *s = &p->spans[i];
        if (!s->switched_off)
            continue;
        char *mean = fmt_duration(s->off_mean_ns);
        printf("  %s at %.2f s, after %llu calls of %s\n", s->name, s->off_at_s,
               (unsigned long long)s->calls, mean);
        free(mean);
    }
}

int cmd_report(const struct sp_profile *p, enum report_sort sort, long limit)
{
    uint64_t self_sum = 0;
    int sampled = 0; /* SPANPROF=sample: times are estimates, and CPU time is known */
    int exact_cpu = 0; /* SPANPROF_CPU=1: each span's CPU time, measured */
    const struct sp_span **order = xmalloc(p->nspans * sizeof *order);
    for (size_t i = 0; i < p->nspans; i++) {
        order[i] = &p->spans[i];
        self_sum += p->spans[i].self_ns;
        if (p->spans[i].has_extra & (1u << X_CPU_TOTAL))
            sampled = 1;
        if (p->spans[i].has_extra & (1u << X_CPU))
            exact_cpu = 1;
    }
    /* The CPU column: sampled inclusive CPU time, else SPANPROF_CPU's. */
    int cpu_field = sampled ? X_CPU_TOTAL : exact_cpu ? X_CPU : -1;
    if (sort == SORT_CPU && cpu_field < 0) {
        fprintf(stderr, "spanprof: '%s' has no CPU time to sort by: record it with SPANPROF=sample "
                        "or SPANPROF_CPU=1\n", p->path);
        free(order);
        return EXIT_BAD_INPUT;
    }
    print_header(p);
    putchar('\n');
    sort_key = sort;
    sort_cpu_field = cpu_field;
    qsort(order, p->nspans, sizeof *order, cmp_span);

    size_t shown = p->nspans;
    if (limit > 0 && (size_t)limit < shown)
        shown = (size_t)limit;

    if (p->nspans == 0) {
        puts("no spans recorded");
    } else {
        /* Tail figures (SPANPROF_HISTOGRAM) when a span shown has them: a mean alone hides a
         * p50 of 1 µs under a max of 20 ms. */
        int tails = 0;
        for (size_t i = 0; i < shown; i++)
            tails |= (order[i]->has_extra >> X_P50) & 1;
        struct table t;
        char *cells[11];
        size_t n = 0;
        cells[n++] = xstrdup("span"), cells[n++] = xstrdup("location");
        cells[n++] = xstrdup("calls"), cells[n++] = xstrdup("total");
        cells[n++] = xstrdup("self"), cells[n++] = xstrdup("mean");
        if (tails)
            cells[n++] = xstrdup("p50"), cells[n++] = xstrdup("p99"), cells[n++] = xstrdup("max");
        cells[n++] = xstrdup("self%");
        if (cpu_field >= 0)
            cells[n++] = xstrdup("cpu");
        table_init(&t, n, "llrrrrrrrrr");
        table_row_of(&t, cells);
        for (size_t i = 0; i < shown; i++) {
            const struct sp_span *s = order[i];
            n = 0;
            cells[n++] = xstrdup(s->name);
            /* file:line always: two spans may share a name (static functions in two files). */
            cells[n++] = *s->file ? xasprintf("%s:%ld", s->file, s->line) : xstrdup("-");
            cells[n++] = p->no_calls ? xstrdup("-")
                                     : xasprintf("%s%llu", s->switched_off ? ">=" : "",
                                                 (unsigned long long)s->calls);
            cells[n++] = fmt_duration((double)s->total_ns);
            cells[n++] = fmt_duration((double)s->self_ns);
            cells[n++] = s->calls ? fmt_duration((double)s->total_ns / (double)s->calls) : xstrdup("-");
            static const int tail_fields[] = {X_P50, X_P99, X_MAX_NS};
            for (size_t k = 0; tails && k < sizeof tail_fields / sizeof *tail_fields; k++) {
                int x = tail_fields[k];
                cells[n++] = s->has_extra & (1u << x) ? fmt_duration((double)s->extra[x])
                                                      : xstrdup("-");
            }
            cells[n++] = self_sum ? xasprintf("%.1f%%", 100.0 * (double)s->self_ns / (double)self_sum)
                                  : xstrdup("-");
            if (cpu_field >= 0)
                cells[n++] = s->has_extra & (1u << cpu_field) ? fmt_duration((double)s->extra[cpu_field])
                                                              : xstrdup("-");
            table_row_of(&t, cells);
        }
        table_print(&t, "");
        table_free(&t);
        print_waiting(order, shown, cpu_field);
        if (sampled && p->sample_hz)
            printf("times sampled %llu times a second (SPANPROF=sample): wall and CPU time are "
                   "estimates, calls exact\n", (unsigned long long)p->sample_hz);
        else if (sampled)
            puts("times sampled (SPANPROF=sample): wall and CPU time are estimates, calls exact");
        if (shown < p->nspans)
            printf("(%zu more %s not shown)\n", p->nspans - shown, plural(p->nspans - shown, "span", "spans"));
        print_switched_off(p);
    }

    if (p->has_progress) {
        putchar('\n');
        if (p->nprogress == 0) {
            puts("progress points: none");
        } else {
            puts("progress points:");
            struct table t;
            table_init(&t, 3, "lrr");
            table_row(&t, xstrdup("name"), xstrdup("hits"), xstrdup("rate"));
            for (size_t i = 0; i < p->nprogress; i++) {
                const struct sp_progress *pp = &p->progress[i];
                table_row(&t, xstrdup(pp->name), xasprintf("%llu", (unsigned long long)pp->hits),
                          p->has_wall && p->wall_ns && !p->merged
                              ? xasprintf("%.1f/s", (double)pp->hits / ((double)p->wall_ns / 1e9))
                              : xstrdup("-"));
            }
            table_print(&t, "  ");
            table_free(&t);
        }
    }
    free(order);
    return 0;
}

int report_files(char *const *args, size_t nargs, enum report_sort sort, long limit)
{
    struct sp_profile p;
    if (load_inputs(args, nargs, &p))
        return EXIT_BAD_INPUT;
    int rc = cmd_report(&p, sort, limit);
    sp_profile_free(&p);
    return rc;
}
