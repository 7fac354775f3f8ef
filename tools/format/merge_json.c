/* merge_json.c — merges JSON profiles of several processes into one (spanprof merge, and
 * spanprof report with several files or a directory), and writes a profile as JSON.
 *
 * A span is the same span in two processes when its name, file and first line agree. Its calls,
 * times and resource counts are summed, maxima (max_depth, max_ns, peak_live_bytes) take the
 * largest, and latency percentiles are left out: they cannot be computed from other
 * processes' percentiles. Progress hits and anomaly counts are summed. The run information
 * becomes a "processes" array with each process's own (pid, program, start time, wall time,
 * threads, clock, sampling rate); a merged input contributes the processes it lists. The whole is
 * a sampled profile ("mode": "sample") when every process was sampled (SPANPROF=sample), with
 * their rate when they share one. Sums are exact: one that would not fit in 64 bits is an error
 * rather than a wrong figure. */
#include "format/format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct json_merge {
    struct sp_profile out;
    struct strmap spans, progress;
    size_t cap_spans, cap_progress, cap_procs;
    size_t inputs;
    int overflow;
    int recorded_seen; /* an input span had recorded_total_ns (its process was compensated) */
};

struct json_merge *json_merge_new(void)
{
    struct json_merge *m = xmalloc(sizeof *m);
    memset(m, 0, sizeof *m);
    m->out.pid = m->out.thread_count = -1;
    m->out.merged = 1;
    strmap_init(&m->spans);
    strmap_init(&m->progress);
    return m;
}

static uint64_t add(struct json_merge *m, uint64_t a, uint64_t b)
{
    if (a > UINT64_MAX - b)
        m->overflow = 1;
    return a + b;
}

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

static void add_process(struct json_merge *m, const struct sp_process *r)
{
    if (m->out.nprocs == m->cap_procs)
        m->out.procs = xrealloc(m->out.procs, (m->cap_procs = m->cap_procs ? 2 * m->cap_procs : 16) *
                                                  sizeof *m->out.procs);
    struct sp_process *d = &m->out.procs[m->out.nprocs++];
    *d = *r;
    d->program = dup_or_null(r->program);
    d->start_time = dup_or_null(r->start_time);
    d->clock = dup_or_null(r->clock);
}

/* The key of a span or progress point: name, file and line, NUL-separated. */
static char *key_of(const char *name, const char *file, long line, size_t *len)
{
    char num[32];
    size_t ln = strlen(name), lf = file ? strlen(file) : 0;
    size_t lnum = (size_t)snprintf(num, sizeof num, "%ld", line);
    char *k = xmalloc(ln + lf + lnum + 3);
    memcpy(k, name, ln + 1);
    if (lf)
        memcpy(k + ln + 1, file, lf);
    k[ln + 1 + lf] = '\0';
    memcpy(k + ln + lf + 2, num, lnum + 1);
    *len = ln + lf + lnum + 2;
    return k;
}

int json_merge_add(struct json_merge *m, const struct sp_profile *p)
{
    m->inputs++;
    if (p->merged) {
        for (size_t i = 0; i < p->nprocs; i++)
            add_process(m, &p->procs[i]);
    } else {
        struct sp_process r = { .program = p->program, .start_time = p->start_time, .clock = p->clock,
                                .pid = p->pid, .thread_count = p->thread_count, .wall_ns = p->wall_ns,
                                .has_wall = p->has_wall, .sampled = p->sampled,
                                .sample_hz = p->sampled ? p->sample_hz : 0 };
        add_process(m, &r);
    }

    struct sp_profile *o = &m->out;
    for (size_t i = 0; i < p->nspans; i++) {
        const struct sp_span *s = &p->spans[i];
        size_t len;
        int added;
        char *k = key_of(s->name, s->file, s->line, &len);
        size_t at = strmap_index(&m->spans, k, len, &added);
        free(k);
        if (added) {
            if (o->nspans == m->cap_spans)
                o->spans = xrealloc(o->spans, (m->cap_spans = m->cap_spans ? 2 * m->cap_spans : 256) *
                                                  sizeof *o->spans);
            struct sp_span *d = &o->spans[o->nspans++];
            *d = *s;
            d->name = xstrdup(s->name);
            d->file = xstrdup(s->file);
            d->has_extra = 0;
            memset(d->extra, 0, sizeof d->extra);
        } else {
            struct sp_span *d = &o->spans[at];
            d->calls = add(m, d->calls, s->calls);
            d->total_ns = add(m, d->total_ns, s->total_ns);
            d->self_ns = add(m, d->self_ns, s->self_ns);
            if (s->last_line > d->last_line)
                d->last_line = s->last_line;
            d->by_option |= s->by_option;
            /* Switched off in any process: calls a lower bound; the first switch kept. */
            if (s->switched_off) {
                if (!d->switched_off || s->off_at_s < d->off_at_s) {
                    d->off_at_s = s->off_at_s;
                    d->off_mean_ns = s->off_mean_ns;
                }
                d->switched_off = 1;
            }
        }
        struct sp_span *d = &o->spans[at];
        /* The times as recorded: a span without them (its process was not compensated, or the
         * cost could not be measured there) recorded the times it gives, so a merge of
         * compensated and uncompensated processes sums those in; json_merge_finish drops the
         * fields again when no process had them. */
        unsigned has = s->has_extra | (1u << X_RECORDED_TOTAL) | (1u << X_RECORDED_SELF);
        uint64_t extra[NEXTRA];
        memcpy(extra, s->extra, sizeof extra);
        if (s->has_extra & (1u << X_RECORDED_TOTAL))
            m->recorded_seen = 1;
        else
            extra[X_RECORDED_TOTAL] = s->total_ns;
        if (!(s->has_extra & (1u << X_RECORDED_SELF)))
            extra[X_RECORDED_SELF] = s->self_ns;
        for (int x = 0; x < NEXTRA; x++) {
            if (!(has & (1u << x)) || span_extras[x].rule == MERGE_DROP)
                continue;
            if (!(d->has_extra & (1u << x)))
                d->extra[x] = extra[x];
            else if (span_extras[x].rule == MERGE_SUM)
                d->extra[x] = add(m, d->extra[x], extra[x]);
            else if (extra[x] > d->extra[x])
                d->extra[x] = extra[x];
            d->has_extra |= 1u << x;
        }
    }

    /* A cost budget's figures: the first process's budget and call cost, CPU times summed. */
    if (p->budget) {
        if (!o->budget) {
            o->budget_percent = p->budget_percent;
            o->budget_call_ns = p->budget_call_ns;
        }
        o->budget = 1;
        o->process_cpu_ns = add(m, o->process_cpu_ns, p->process_cpu_ns);
    }
    if (p->has_progress)
        o->has_progress = 1;
    for (size_t i = 0; i < p->nprogress; i++) {
        const struct sp_progress *s = &p->progress[i];
        size_t len;
        int added;
        char *k = key_of(s->name, s->file, s->line, &len);
        size_t at = strmap_index(&m->progress, k, len, &added);
        free(k);
        if (added) {
            if (o->nprogress == m->cap_progress)
                o->progress = xrealloc(o->progress, (m->cap_progress = m->cap_progress ? 2 * m->cap_progress : 16) *
                                                        sizeof *o->progress);
            struct sp_progress *d = &o->progress[o->nprogress++];
            *d = *s;
            d->name = xstrdup(s->name);
            d->file = dup_or_null(s->file);
        } else {
            o->progress[at].hits = add(m, o->progress[at].hits, s->hits);
        }
    }
    o->abandoned_frames = add(m, o->abandoned_frames, p->abandoned_frames);
    o->unmatched_exits = add(m, o->unmatched_exits, p->unmatched_exits);
    o->open_frames = add(m, o->open_frames, p->open_frames);
    o->overflow_calls = add(m, o->overflow_calls, p->overflow_calls);
    if (m->overflow) {
        fprintf(stderr, "spanprof: %s: a merged count or time would exceed 2^64-1; not merged\n", p->path);
        return -1;
    }
    return 0;
}

int json_merge_add_file(struct json_merge *m, const char *path)
{
    struct sp_profile p;
    if (sp_profile_load(path, &p))
        return -1;
    int rc = json_merge_add(m, &p);
    sp_profile_free(&p);
    return rc;
}

static int cmp_span(const void *pa, const void *pb)
{
    const struct sp_span *a = pa, *b = pb;
    int r = strcmp(a->name, b->name);
    if (!r)
        r = strcmp(a->file, b->file);
    return r ? r : (a->line < b->line ? -1 : a->line > b->line);
}

static int cmp_progress(const void *pa, const void *pb)
{
    const struct sp_progress *a = pa, *b = pb;
    int r = strcmp(a->name, b->name);
    if (!r)
        r = strcmp(a->file ? a->file : "", b->file ? b->file : "");
    return r ? r : (a->line < b->line ? -1 : a->line > b->line);
}

/* The run information of the whole: what the processes share, sums of wall time and threads,
 * the earliest start. */
static void summarise(struct sp_profile *o)
{
    int same_program = 1, same_clock = 1, all_wall = 1, all_threads = 1, all_sampled = 1, same_hz = 1;
    uint64_t wall = 0;
    long long threads = 0;
    const char *start = NULL;
    for (size_t i = 0; i < o->nprocs; i++) {
        const struct sp_process *r = &o->procs[i], *r0 = &o->procs[0];
        if (!r->program || !r0->program || strcmp(r->program, r0->program))
            same_program = 0;
        if (!r->clock || !r0->clock || strcmp(r->clock, r0->clock))
            same_clock = 0;
        all_sampled &= r->sampled;
        same_hz &= r->sample_hz == r0->sample_hz;
        if (r->has_wall && wall <= UINT64_MAX - r->wall_ns)
            wall += r->wall_ns;
        else
            all_wall = 0;
        if (r->thread_count >= 0)
            threads += r->thread_count;
        else
            all_threads = 0;
        if (r->start_time && (!start || strcmp(r->start_time, start) < 0))
            start = r->start_time;
    }
    if (o->nprocs) {
        o->program = same_program ? xstrdup(o->procs[0].program) : NULL;
        o->clock = same_clock ? xstrdup(o->procs[0].clock) : NULL;
    }
    o->start_time = dup_or_null(start);
    o->has_wall = o->nprocs && all_wall;
    o->wall_ns = o->has_wall ? wall : 0;
    o->thread_count = o->nprocs && all_threads ? threads : -1;
    o->sampled = o->nprocs && all_sampled;
    o->sample_hz = o->sampled && same_hz ? o->procs[0].sample_hz : 0;
}

void json_merge_finish(struct json_merge *m, struct sp_profile *out)
{
    struct sp_profile *o = &m->out;
    if (!m->recorded_seen)
        for (size_t i = 0; i < o->nspans; i++)
            o->spans[i].has_extra &= ~((1u << X_RECORDED_TOTAL) | (1u << X_RECORDED_SELF));
    /* qsort's array may not be NULL, even empty (none without progress points). */
    if (o->nspans)
        qsort(o->spans, o->nspans, sizeof *o->spans, cmp_span);
    if (o->nprogress)
        qsort(o->progress, o->nprogress, sizeof *o->progress, cmp_progress);
    summarise(o);
    *out = *o;
    strmap_free(&m->spans);
    strmap_free(&m->progress);
    free(m);
}

/* ---- writing a profile ---- */

/* A JSON string literal, escaped by json-c. */
static void put_string(FILE *f, const char *s)
{
    json_object *o = json_object_new_string(s);
    fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_NOSLASHESCAPE), f);
    json_object_put(o);
}

static void put_member_string(FILE *f, const char *indent, const char *key, const char *v)
{
    if (!v)
        return;
    fprintf(f, "%s\"%s\": ", indent, key);
    put_string(f, v);
    fputs(",\n", f);
}

int sp_profile_write(const struct sp_profile *p, FILE *f)
{
    fputs("{\n  \"version\": 1,\n", f);
    if (p->pid >= 0)
        fprintf(f, "  \"pid\": %lld,\n", p->pid);
    put_member_string(f, "  ", "program", p->program);
    put_member_string(f, "  ", "start_time", p->start_time);
    if (p->has_wall)
        fprintf(f, "  \"wall_ns\": %llu,\n", (unsigned long long)p->wall_ns);
    if (p->thread_count >= 0)
        fprintf(f, "  \"thread_count\": %lld,\n", p->thread_count);
    put_member_string(f, "  ", "clock", p->clock);
    if (p->sampled)
        put_member_string(f, "  ", "mode", "sample");
    if (p->sampled && p->sample_hz)
        fprintf(f, "  \"sample_hz\": %llu,\n", (unsigned long long)p->sample_hz);
    if (p->merged) {
        fputs("  \"processes\": [", f);
        for (size_t i = 0; i < p->nprocs; i++) {
            const struct sp_process *r = &p->procs[i];
            fputs(i ? ",\n    {" : "\n    {", f);
            const char *sep = " ";
            if (r->pid >= 0) {
                fprintf(f, "%s\"pid\": %lld", sep, r->pid);
                sep = ", ";
            }
            if (r->program) {
                fprintf(f, "%s\"program\": ", sep);
                put_string(f, r->program);
                sep = ", ";
            }
            if (r->start_time) {
                fprintf(f, "%s\"start_time\": ", sep);
                put_string(f, r->start_time);
                sep = ", ";
            }
            if (r->has_wall) {
                fprintf(f, "%s\"wall_ns\": %llu", sep, (unsigned long long)r->wall_ns);
                sep = ", ";
            }
            if (r->thread_count >= 0) {
                fprintf(f, "%s\"thread_count\": %lld", sep, r->thread_count);
                sep = ", ";
            }
            if (r->clock) {
                fprintf(f, "%s\"clock\": ", sep);
                put_string(f, r->clock);
                sep = ", ";
            }
            if (r->sampled)
                fprintf(f, "%s\"mode\": \"sample\"", sep);
            if (r->sampled && r->sample_hz)
                fprintf(f, ", \"sample_hz\": %llu", (unsigned long long)r->sample_hz);
            fputs(" }", f);
        }
        fputs(p->nprocs ? "\n  ],\n" : "],\n", f);
    }
    if (p->budget)
        fprintf(f, "  \"budget\": { \"percent\": %.9g, \"call_ns\": %.9g, \"process_cpu_ns\": %llu },\n",
                p->budget_percent, p->budget_call_ns, (unsigned long long)p->process_cpu_ns);
    fputs("  \"spans\": [", f);
    for (size_t i = 0; i < p->nspans; i++) {
        const struct sp_span *s = &p->spans[i];
        fputs(i ? ",\n    { \"name\": " : "\n    { \"name\": ", f);
        put_string(f, s->name);
        fputs(", \"file\": ", f);
        put_string(f, s->file);
        fprintf(f, ", \"line\": %ld, \"last_line\": %ld, \"calls\": %llu, \"total_ns\": %llu, \"self_ns\": %llu",
                s->line, s->last_line, (unsigned long long)s->calls, (unsigned long long)s->total_ns,
                (unsigned long long)s->self_ns);
        for (int x = 0; x < NEXTRA; x++)
            if (s->has_extra & (1u << x))
                fprintf(f, ", \"%s\": %llu", span_extras[x].key, (unsigned long long)s->extra[x]);
        if (s->by_option)
            fputs(", \"by_option\": true", f);
        if (s->switched_off)
            fprintf(f, ", \"switched_off\": { \"at_s\": %.9g, \"mean_ns\": %.9g }", s->off_at_s,
                    s->off_mean_ns);
        fputs(" }", f);
    }
    fputs(p->nspans ? "\n  ],\n" : "],\n", f);
    fprintf(f,
            "  \"anomalies\": { \"abandoned_frames\": %llu, \"unmatched_exits\": %llu, \"open_frames\": %llu, "
            "\"overflow_calls\": %llu }",
            (unsigned long long)p->abandoned_frames, (unsigned long long)p->unmatched_exits,
            (unsigned long long)p->open_frames, (unsigned long long)p->overflow_calls);
    if (p->has_progress) {
        fputs(",\n  \"progress\": [", f);
        for (size_t i = 0; i < p->nprogress; i++) {
            const struct sp_progress *s = &p->progress[i];
            fputs(i ? ",\n    { \"name\": " : "\n    { \"name\": ", f);
            put_string(f, s->name);
            if (s->file) {
                fputs(", \"file\": ", f);
                put_string(f, s->file);
                fprintf(f, ", \"line\": %ld", s->line);
            }
            fprintf(f, ", \"hits\": %llu }", (unsigned long long)s->hits);
        }
        fputs(p->nprogress ? "\n  ]" : "]", f);
    }
    fputs("\n}\n", f);
    return ferror(f) ? -1 : 0;
}
