/* json_profile.c — reads the JSON profile the spanprof runtime writes (SPANPROF_JSON=PATH), and
 * the merged profiles `spanprof merge` writes (the same layout plus a "processes" array).
 *
 * Span entries must carry every field the runtime guarantees (a profile without them cannot be
 * reported honestly); the run information is shown when present. Fields we do not know are
 * ignored, so newer runtimes can add some; the optional "progress" array is read when there.
 * The file is read a span at a time (jsonstream.c), so memory stays proportional to the spans
 * kept, not to the text, and a syntax error stops the read where it is. */
#include "format/format.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct span_extra_field span_extras[NEXTRA] = {
    [X_MAX_DEPTH] = { "max_depth", MERGE_MAX },
    [X_P50] = { "p50_ns", MERGE_DROP },
    [X_P90] = { "p90_ns", MERGE_DROP },
    [X_P99] = { "p99_ns", MERGE_DROP },
    [X_MAX_NS] = { "max_ns", MERGE_MAX },
    [X_CPU_USER] = { "cpu_user_ns", MERGE_SUM },     /* SPANPROF_CPU=1 of earlier releases, */
    [X_CPU_SYSTEM] = { "cpu_system_ns", MERGE_SUM }, /* read and merged as they are */
    [X_ALLOCS] = { "allocs", MERGE_SUM },
    [X_ALLOC_BYTES] = { "alloc_bytes", MERGE_SUM },
    [X_FREES] = { "frees", MERGE_SUM },
    [X_FREE_BYTES] = { "free_bytes", MERGE_SUM },
    [X_ALLOCS_INCL] = { "allocs_incl", MERGE_SUM },
    [X_ALLOC_BYTES_INCL] = { "alloc_bytes_incl", MERGE_SUM },
    [X_FREES_INCL] = { "frees_incl", MERGE_SUM },
    [X_FREE_BYTES_INCL] = { "free_bytes_incl", MERGE_SUM },
    [X_LIVE_BLOCKS] = { "live_blocks", MERGE_SUM },
    [X_LIVE_BYTES] = { "live_bytes", MERGE_SUM },
    [X_PEAK_LIVE_BYTES] = { "peak_live_bytes", MERGE_MAX },
    [X_CPU_TOTAL] = { "cpu_total_ns", MERGE_SUM },   /* SPANPROF=sample */
    [X_CPU_SELF] = { "cpu_self_ns", MERGE_SUM },
    [X_SAMPLES] = { "samples", MERGE_SUM },
    [X_CPU] = { "cpu_ns", MERGE_SUM },                 /* SPANPROF_CPU=1: exact, inclusive */
    [X_RECORDED_TOTAL] = { "recorded_total_ns", MERGE_SUM }, /* compensated: as recorded */
    [X_RECORDED_SELF] = { "recorded_self_ns", MERGE_SUM },
};

static char *dup_string(json_object *o, const char *key)
{
    const char *s = js_member_string(o, key);
    return s ? xstrdup(s) : NULL;
}

/* Integer fields: json-c keeps values above INT64_MAX as uint64, hence get_uint64. */
static int get_uint(json_object *o, const char *key, uint64_t *out)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
        return -1;
    if (json_object_get_int64(v) < 0)
        return -1;
    *out = json_object_get_uint64(v);
    return 0;
}

/* A number, whole or not: 0, or -1 when absent. */
static int get_double(json_object *o, const char *key, double *out)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) ||
        !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
        return -1;
    *out = json_object_get_double(v);
    return 0;
}

static int bad(const char *path, const char *what, size_t idx, const char *field)
{
    fprintf(stderr, "spanprof: %s: %s %zu: missing or invalid field '%s'\n", path, what, idx, field);
    return -1;
}

static int read_span(const char *path, json_object *e, size_t i, struct sp_span *sp)
{
    uint64_t line, last;
    memset(sp, 0, sizeof *sp);
    if (!json_object_is_type(e, json_type_object)) {
        fprintf(stderr, "spanprof: %s: span %zu is not an object\n", path, i);
        return -1;
    }
    const char *name = js_member_string(e, "name"), *file = js_member_string(e, "file");
    const char *missing = !name ? "name" : !file ? "file"
                        : get_uint(e, "line", &line) ? "line"
                        : get_uint(e, "last_line", &last) ? "last_line"
                        : get_uint(e, "calls", &sp->calls) ? "calls"
                        : get_uint(e, "total_ns", &sp->total_ns) ? "total_ns"
                        : get_uint(e, "self_ns", &sp->self_ns) ? "self_ns" : NULL;
    if (missing)
        return bad(path, "span", i, missing);
    /* Self time is a part of the total (recursion counts the total once, self every time, and
     * still self <= total): a profile that says otherwise was not written by spanprof. */
    if (sp->self_ns > sp->total_ns) {
        fprintf(stderr, "spanprof: %s: span %zu ('%s'): self_ns %llu is more than total_ns %llu\n",
                path, i, name, (unsigned long long)sp->self_ns, (unsigned long long)sp->total_ns);
        return -1;
    }
    sp->name = xstrdup(name);
    sp->file = xstrdup(file);
    sp->line = (long)line;
    /* A site whose last line is unknown (0) or before its first still covers its first. */
    sp->last_line = (long)last < sp->line ? sp->line : (long)last;
    for (int x = 0; x < NEXTRA; x++)
        if (get_uint(e, span_extras[x].key, &sp->extra[x]) == 0)
            sp->has_extra |= 1u << x;
    json_object *v;
    sp->by_option = json_object_object_get_ex(e, "by_option", &v) && json_object_get_boolean(v);
    if (json_object_object_get_ex(e, "switched_off", &v) &&
        json_object_is_type(v, json_type_object)) {
        sp->switched_off = 1;
        get_double(v, "at_s", &sp->off_at_s);
        get_double(v, "mean_ns", &sp->off_mean_ns);
    }
    return 0;
}

/* Whether T is a start time as the runtime writes it: YYYY-MM-DDTHH:MM:SS, then .digits and a
 * Z, each optional (older profiles). */
static int is_start_time(const char *t)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:dd";
    for (size_t i = 0; shape[i]; i++)
        if (shape[i] == 'd' ? !isdigit((unsigned char)t[i]) : t[i] != shape[i])
            return 0;
    t += sizeof shape - 1;
    if (*t == '.' && isdigit((unsigned char)t[1]))
        for (t++; isdigit((unsigned char)*t); t++)
            ;
    return !strcmp(t, "Z") || !*t;
}

/* START, a profile's or a process's start time (NULL: none): -1, said, when it is no time. */
static int check_start_time(const char *path, const char *start)
{
    if (!start || is_start_time(start))
        return 0;
    fprintf(stderr, "spanprof: %s: start_time '%s' is not a time (YYYY-MM-DDTHH:MM:SS.mmmZ)\n",
            path, start);
    return -1;
}

static int read_process(const char *path, json_object *o, struct sp_process *r)
{
    uint64_t u;
    r->program = dup_string(o, "program");
    r->start_time = dup_string(o, "start_time");
    if (check_start_time(path, r->start_time))
        return -1;
    r->clock = dup_string(o, "clock");
    r->pid = get_uint(o, "pid", &u) == 0 ? (long long)u : -1;
    r->thread_count = get_uint(o, "thread_count", &u) == 0 ? (long long)u : -1;
    r->has_wall = get_uint(o, "wall_ns", &r->wall_ns) == 0;
    if (get_uint(o, "sample_hz", &r->sample_hz))
        r->sample_hz = 0;
    const char *mode = js_member_string(o, "mode");
    r->sampled = mode && !strcmp(mode, "sample");
    return 0;
}

/* A top-level member other than "spans". */
static int read_member(struct sp_profile *p, const char *key, json_object *v)
{
    if (!strcmp(key, "program") || !strcmp(key, "start_time") || !strcmp(key, "clock")) {
        char **slot = key[0] == 'p' ? &p->program : key[0] == 's' ? &p->start_time : &p->clock;
        if (json_object_is_type(v, json_type_string)) {
            free(*slot);
            *slot = xstrdup(json_object_get_string(v));
            if (slot == &p->start_time && check_start_time(p->path, *slot))
                return -1;
        }
    } else if (!strcmp(key, "pid") || !strcmp(key, "thread_count") || !strcmp(key, "wall_ns")) {
        if (json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0) {
            uint64_t u = json_object_get_uint64(v);
            if (key[0] == 'p')
                p->pid = (long long)u;
            else if (key[0] == 't')
                p->thread_count = (long long)u;
            else {
                p->wall_ns = u;
                p->has_wall = 1;
            }
        }
    } else if (!strcmp(key, "sample_hz")) {
        if (json_object_is_type(v, json_type_int) && json_object_get_int64(v) > 0)
            p->sample_hz = json_object_get_uint64(v);
    } else if (!strcmp(key, "mode")) {
        if (json_object_is_type(v, json_type_string))
            p->sampled = !strcmp(json_object_get_string(v), "sample");
    } else if (!strcmp(key, "compensation") && json_object_is_type(v, json_type_object)) {
        json_object *c;
        if (json_object_object_get_ex(v, "call_ns", &c) &&
            (json_object_is_type(c, json_type_double) || json_object_is_type(c, json_type_int)))
            p->call_ns = json_object_get_double(c);
        free(p->compensation_failed);
        p->compensation_failed = dup_string(v, "failed");
    } else if (!strcmp(key, "budget") && json_object_is_type(v, json_type_object)) {
        p->budget = 1;
        get_double(v, "percent", &p->budget_percent);
        get_double(v, "call_ns", &p->budget_call_ns);
        get_uint(v, "process_cpu_ns", &p->process_cpu_ns);
    } else if (!strcmp(key, "anomalies") && json_object_is_type(v, json_type_object)) {
        get_uint(v, "abandoned_frames", &p->abandoned_frames);
        get_uint(v, "unmatched_exits", &p->unmatched_exits);
        get_uint(v, "open_frames", &p->open_frames);
        get_uint(v, "overflow_calls", &p->overflow_calls);
    } else if (!strcmp(key, "progress") && json_object_is_type(v, json_type_array)) {
        p->has_progress = 1;
        size_t n = json_object_array_length(v);
        p->progress = xrealloc(p->progress, n * sizeof *p->progress);
        p->nprogress = 0;
        for (size_t i = 0; i < n; i++) {
            json_object *e = json_object_array_get_idx(v, i);
            struct sp_progress *pp = &p->progress[i];
            const char *name = json_object_is_type(e, json_type_object) ? js_member_string(e, "name") : NULL;
            if (!name)
                return bad(p->path, "progress point", i, "name");
            if (get_uint(e, "hits", &pp->hits))
                return bad(p->path, "progress point", i, "hits");
            uint64_t line = 0;
            get_uint(e, "line", &line);
            pp->name = xstrdup(name);
            pp->file = dup_string(e, "file");
            pp->line = (long)line;
            p->nprogress = i + 1;
        }
    } else if (!strcmp(key, "processes") && json_object_is_type(v, json_type_array)) {
        p->merged = 1;
        size_t n = json_object_array_length(v);
        p->procs = xmalloc(n * sizeof *p->procs);
        for (size_t i = 0; i < n; i++) {
            json_object *e = json_object_array_get_idx(v, i);
            if (!json_object_is_type(e, json_type_object)) {
                fprintf(stderr, "spanprof: %s: process %zu is not an object\n", p->path, i);
                return -1;
            }
            int rc = read_process(p->path, e, &p->procs[i]);
            p->nprocs = i + 1; /* freed with the profile, good or not */
            if (rc)
                return -1;
        }
    }
    return 0;
}

/* The "spans" array, an entry at a time. */
static int read_spans(struct jstream *s, struct sp_profile *p)
{
    size_t cap = p->nspans;
    if (js_peek(s) != '[') {
        if (js_peek(s) != EOF)
            fprintf(stderr, "spanprof: %s: not a spanprof JSON profile (\"spans\" is not an array)\n", p->path);
        else
            js_take(s, '[', "'['");
        return -1;
    }
    js_take(s, '[', "'['");
    if (js_peek(s) == ']')
        return js_take(s, ']', "']'");
    for (;;) {
        json_object *e = js_value(s);
        if (!e)
            return -1;
        if (p->nspans == cap)
            p->spans = xrealloc(p->spans, (cap = cap ? 2 * cap : 256) * sizeof *p->spans);
        int rc = read_span(p->path, e, p->nspans, &p->spans[p->nspans]);
        json_object_put(e);
        if (rc)
            return -1;
        p->nspans++;
        int c = js_peek(s);
        if (c == ']')
            return js_take(s, ']', "']'");
        if (js_take(s, ',', "',' or ']' after a span"))
            return -1;
    }
}

int sp_profile_load(const char *path, struct sp_profile *p)
{
    memset(p, 0, sizeof *p);
    p->path = path;
    p->pid = p->thread_count = -1;

    struct jstream s;
    if (js_open(&s, path))
        return -1;
    int rc = -1, saw_spans = 0;
    if (js_take(&s, '{', "'{' (a JSON object)"))
        goto out;
    if (js_peek(&s) == '}') {
        js_take(&s, '}', "'}'");
    } else {
        for (;;) {
            json_object *k = js_value(&s);
            if (!k)
                goto out;
            if (!json_object_is_type(k, json_type_string)) {
                json_object_put(k);
                js_error(&s, "not a JSON profile: expected a quoted member name");
                goto out;
            }
            char *key = xstrdup(json_object_get_string(k));
            json_object_put(k);
            int bad_member = js_take(&s, ':', "':' after a member name");
            if (!bad_member && !strcmp(key, "spans")) {
                saw_spans = 1;
                bad_member = read_spans(&s, p);
            } else if (!bad_member) {
                json_object *v = js_value(&s);
                bad_member = !v || read_member(p, key, v);
                json_object_put(v);
            }
            free(key);
            if (bad_member)
                goto out;
            if (js_peek(&s) == '}') {
                js_take(&s, '}', "'}'");
                break;
            }
            if (js_take(&s, ',', "',' or '}' after a member"))
                goto out;
        }
    }
    if (js_end(&s))
        goto out;
    if (!saw_spans) {
        fprintf(stderr, "spanprof: %s: not a spanprof JSON profile (no \"spans\" array)\n", path);
        goto out;
    }
    rc = 0;
out:
    js_close(&s);
    if (rc)
        sp_profile_free(p);
    return rc;
}

void sp_profile_free(struct sp_profile *p)
{
    for (size_t i = 0; i < p->nspans; i++) {
        free(p->spans[i].name);
        free(p->spans[i].file);
    }
    for (size_t i = 0; i < p->nprogress; i++) {
        free(p->progress[i].name);
        free(p->progress[i].file);
    }
    for (size_t i = 0; i < p->nprocs; i++) {
        free(p->procs[i].program);
        free(p->procs[i].start_time);
        free(p->procs[i].clock);
    }
    free(p->spans);
    free(p->progress);
    free(p->procs);
    free(p->program);
    free(p->start_time);
    free(p->clock);
    free(p->compensation_failed);
    const char *path = p->path;
    memset(p, 0, sizeof *p);
    p->path = path;
}
