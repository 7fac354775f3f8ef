/* speedscope.c — turns folded stacks and spanprof's Chrome traces into speedscope's own file
 * format (https://www.speedscope.app/file-format-schema.json), the form `spanprof view` embeds.
 *
 * Why not hand speedscope the folded text or the trace as they are: its folded-stacks importer
 * has no unit (a flame graph of nanoseconds shows "100,000,000" with no unit), and its Chrome
 * trace importer always opens on the first thread, which in a typical program is the main thread
 * that only waits for its workers.  Its own format carries both: a "unit" per profile (so values
 * read as ms, µs or bytes) and "activeProfileIndex", the profile shown first.
 *
 * Folded stacks become one "sampled" profile: a sample per line, weighted by its value; a
 * differential file (`spanprof diff --folded`) three, the change first: every stack's growth
 * under a root frame "grew (after - before)" and its shrinkage under "shrank (before - after)",
 * side by side in one flame graph (speedscope has no differential view), then after and before.  A trace
 * becomes one "evented" profile per thread (open/close events in nanoseconds, all threads on the
 * same time axis, in the trace's thread order), and the profile shown first is the busiest thread:
 * the one with the most time inside its outermost spans.  Zoomed out on a whole run, a timeline
 * is slivers without names, so the page opens on a stretch of it (speedscope's format has no
 * viewport: view.c zooms there once the page is drawn): about 4 spans of the first level that
 * repeats (8 spans or more) wide, narrowed until the spans of the level below it are 1/24 of the
 * width or more (wide enough for a name), placed where most spans start.  A flight-recorder
 * capture opens instead on its slow call's thread, on the call (a tenth of its length either
 * side), which has a frame of its own so it stands out: "SPAN (slow call, the capture's
 * trigger)".  A trace
 * this file does not understand
 * (events other than begin, end and metadata, or begins and ends that do not pair up on a
 * thread) is left as it is, for speedscope's own importer: the page still works, it only opens
 * on the first thread. */
#include "format/format.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The frames of a profile: names, each given an index in order of first sight. */
struct frames {
    struct strmap map;
    char **names;
    size_t n, cap;
};

static size_t frame_index(struct frames *fr, const char *name, size_t len)
{
    int added;
    size_t i = strmap_index(&fr->map, name, len, &added);
    if (added) {
        if (fr->n == fr->cap)
            fr->names = xrealloc(fr->names, (fr->cap = fr->cap ? 2 * fr->cap : 64) * sizeof *fr->names);
        char *s = xmalloc(len + 1);
        memcpy(s, name, len);
        s[len] = 0;
        fr->names[fr->n++] = s;
    }
    return i;
}

static void frames_free(struct frames *fr)
{
    for (size_t i = 0; i < fr->n; i++)
        free(fr->names[i]);
    free(fr->names);
    strmap_free(&fr->map);
}

/* S as a JSON string literal. */
static void json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

static void write_head(FILE *out, const char *name, size_t active, const struct frames *fr)
{
    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":", out);
    json_str(out, "spanprof " SPANPROF_VERSION);
    fputs(",\"name\":", out);
    json_str(out, name);
    fprintf(out, ",\"activeProfileIndex\":%zu,\"shared\":{\"frames\":[", active);
    for (size_t i = 0; i < fr->n; i++) {
        fputs(i ? ",{\"name\":" : "{\"name\":", out);
        json_str(out, fr->names[i]);
        fputc('}', out);
    }
    fputs("]},\"profiles\":[", out);
}

/* The value that ends a folded line P..E ("stack value"): D gets its first digit; 0 when the
 * line does not end in a space and a number. */
static int trailing_number(const char *p, const char *e, const char **d)
{
    const char *q = e;
    while (q > p && q[-1] >= '0' && q[-1] <= '9')
        q--;
    *d = q;
    return q != e && q != p && q[-1] == ' ';
}

int speedscope_is_differential(const char *text, size_t n)
{
    const char *p = text, *end = text + n;
    int lines = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end, *d;
        while (e > p && (e[-1] == '\r' || e[-1] == ' '))
            e--;
        if (e > p) {
            if (!trailing_number(p, e, &d) || !trailing_number(p, d - 1, &d))
                return 0;
            lines++;
        }
        p = nl ? nl + 1 : end;
    }
    return lines > 0;
}

/* One "sampled" profile: sample i weighs W[i]; SKIP_ZERO leaves out those that weigh nothing
 * (a differential file's stacks that one side lacks). */
static void write_sampled(FILE *out, const char *name, const char *unit, size_t nsamples,
                          const size_t *depth, const size_t *idx, const unsigned long long *w,
                          int skip_zero)
{
    unsigned long long sum = 0;
    for (size_t i = 0; i < nsamples; i++)
        sum += w[i];
    fputs("{\"type\":\"sampled\",\"name\":", out);
    json_str(out, name);
    fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%llu,\"samples\":[", unit, sum);
    int first = 1;
    for (size_t i = 0, k = 0; i < nsamples; k += depth[i], i++) {
        if (skip_zero && !w[i])
            continue;
        fputs(first ? "[" : ",[", out);
        for (size_t j = 0; j < depth[i]; j++)
            fprintf(out, j ? ",%zu" : "%zu", idx[k + j]);
        fputc(']', out);
        first = 0;
    }
    fputs("],\"weights\":[", out);
    first = 1;
    for (size_t i = 0; i < nsamples; i++)
        if (w[i] || !skip_zero) {
            fprintf(out, first ? "%llu" : ",%llu", w[i]);
            first = 0;
        }
    fputs("]}", out);
}

int speedscope_from_folded(const char *text, size_t n, const char *name, const char *unit, FILE *out)
{
    struct frames fr = {0};
    strmap_init(&fr.map);
    size_t *idx = NULL, nidx = 0, cap = 0;   /* every sample's frame indexes, one after another */
    size_t *depth = NULL, nsamples = 0, scap = 0;
    unsigned long long *weight[2] = {NULL, NULL};   /* the value; a differential file's two */
    const char *p = text, *end = text + n;
    int diff = speedscope_is_differential(text, n);
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end, *next = nl ? nl + 1 : end, *d, *d0 = NULL;
        while (e > p && (e[-1] == '\r' || e[-1] == ' '))
            e--;
        if (!trailing_number(p, e, &d) || (diff && !trailing_number(p, d - 1, &d0))) {
            p = next;  /* not "stack value": a blank or foreign line */
            continue;
        }
        unsigned long long v = strtoull(d, NULL, 10), v0 = d0 ? strtoull(d0, NULL, 10) : 0;
        const char *s = p, *se = (d0 ? d0 : d) - 1;
        while (se > s && se[-1] == ' ')
            se--;
        size_t dep = 0;
        while (s < se) {
            const char *semi = memchr(s, ';', (size_t)(se - s));
            const char *fe = semi ? semi : se;
            if (nidx == cap)
                idx = xrealloc(idx, (cap = cap ? 2 * cap : 1024) * sizeof *idx);
            idx[nidx++] = frame_index(&fr, s, (size_t)(fe - s));
            dep++;
            s = semi ? semi + 1 : se;
        }
        if (nsamples == scap) {
            scap = scap ? 2 * scap : 256;
            depth = xrealloc(depth, scap * sizeof *depth);
            weight[0] = xrealloc(weight[0], scap * sizeof **weight);
            weight[1] = xrealloc(weight[1], scap * sizeof **weight);
        }
        depth[nsamples] = dep;
        weight[0][nsamples] = v0;
        weight[1][nsamples++] = v;
        p = next;
    }
    if (!diff) {
        write_head(out, name, 0, &fr);
        write_sampled(out, name, unit, nsamples, depth, idx, weight[1], 0);
    } else {
        /* The change first, what the page opens on: each stack's growth, then its shrinkage,
         * each under a root frame of its own (two samples per stack, one of them 0 and left
         * out); then after (what the program does now) and before. */
        static const char *const roots[2] = {"grew (after - before)", "shrank (before - after)"};
        size_t root[2] = {frame_index(&fr, roots[0], strlen(roots[0])),
                          frame_index(&fr, roots[1], strlen(roots[1]))};
        size_t *cdepth = xmalloc((2 * nsamples + 1) * sizeof *cdepth);
        size_t *cidx = xmalloc((2 * (nidx + nsamples) + 1) * sizeof *cidx), m = 0;
        unsigned long long *change = xmalloc((2 * nsamples + 1) * sizeof *change);
        for (int side = 0; side < 2; side++)
            for (size_t i = 0, k = 0; i < nsamples; k += depth[i], i++) {
                unsigned long long a = weight[1][i], b = weight[0][i];
                change[side * nsamples + i] = side ? (b > a ? b - a : 0) : (a > b ? a - b : 0);
                cdepth[side * nsamples + i] = depth[i] + 1;
                cidx[m++] = root[side];
                memcpy(&cidx[m], &idx[k], depth[i] * sizeof *idx);
                m += depth[i];
            }
        write_head(out, name, 0, &fr);
        write_sampled(out, "change: grew and shrank", unit, 2 * nsamples, cdepth, cidx, change, 1);
        fputc(',', out);
        write_sampled(out, "after", unit, nsamples, depth, idx, weight[1], 1);
        fputc(',', out);
        write_sampled(out, "before", unit, nsamples, depth, idx, weight[0], 1);
        free(cdepth), free(cidx), free(change);
    }
    fputs("]}\n", out);
    free(idx), free(depth), free(weight[0]), free(weight[1]);
    frames_free(&fr);
    return ferror(out) ? -1 : 0;
}

/* ---- traces ---- */

struct event {
    size_t frame;
    long long at;   /* ns */
    int open;
};

struct thread {
    long long pid, tid;
    char *name;
    long long sort_index;  /* from thread_sort_index metadata; LLONG_MAX when none */
    size_t first_seen;
    struct event *ev;
    size_t nev, cap;
    size_t *stack;         /* open frames while reading */
    size_t depth, stack_cap;
    long long root_at;     /* when the outermost open span began */
    long long busy;        /* ns inside outermost spans */
};

struct trace {
    const char *path; /* for messages */
    struct thread *t;
    size_t n, cap;
    char *process;
};

static struct thread *thread_of(struct trace *tr, long long pid, long long tid)
{
    for (size_t i = tr->n; i-- > 0;)   /* the last one is the likeliest */
        if (tr->t[i].pid == pid && tr->t[i].tid == tid)
            return &tr->t[i];
    if (tr->n == tr->cap)
        tr->t = xrealloc(tr->t, (tr->cap = tr->cap ? 2 * tr->cap : 8) * sizeof *tr->t);
    struct thread *t = &tr->t[tr->n];
    memset(t, 0, sizeof *t);
    t->pid = pid, t->tid = tid, t->sort_index = 0x7fffffffffffffffLL, t->first_seen = tr->n++;
    return t;
}

static void trace_free(struct trace *tr)
{
    for (size_t i = 0; i < tr->n; i++)
        free(tr->t[i].name), free(tr->t[i].ev), free(tr->t[i].stack);
    free(tr->t);
    free(tr->process);
}

static int by_sort_index(const void *a, const void *b)
{
    const struct thread *x = a, *y = b;
    if (x->sort_index != y->sort_index)
        return x->sort_index < y->sort_index ? -1 : 1;
    return x->first_seen < y->first_seen ? -1 : x->first_seen > y->first_seen;
}

static int num_field(json_object *o, const char *key, double *out)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) ||
        !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
        return -1;
    *out = json_object_get_double(v);
    return 0;
}

/* One trace event into TR; -1 when it is of a kind left to speedscope's importer. */
static int add_event(struct trace *tr, struct frames *fr, json_object *e)
{
    const char *ph = js_member_string(e, "ph"), *name = js_member_string(e, "name");
    double pid = 0, tid = 0, ts;
    if (!ph || !name || num_field(e, "pid", &pid) || num_field(e, "tid", &tid))
        return -1;
    if (!(fabs(pid) < 9e15 && fabs(tid) < 9e15))
        return -1; /* no process or thread id (and beyond what a long long holds) */
    if (!strcmp(ph, "M")) {
        json_object *args, *v;
        if (!json_object_object_get_ex(e, "args", &args))
            return 0;
        if (!strcmp(name, "process_name")) {
            const char *pn = js_member_string(args, "name");
            if (pn && !tr->process)
                tr->process = xstrdup(pn);
        } else if (!strcmp(name, "thread_name")) {
            const char *tn = js_member_string(args, "name");
            struct thread *t = thread_of(tr, (long long)pid, (long long)tid);
            if (tn) {
                free(t->name);
                t->name = xstrdup(tn);
            }
        } else if (!strcmp(name, "thread_sort_index") && json_object_object_get_ex(args, "sort_index", &v)) {
            thread_of(tr, (long long)pid, (long long)tid)->sort_index = json_object_get_int64(v);
        }
        return 0;
    }
    if ((strcmp(ph, "B") && strcmp(ph, "E")) || num_field(e, "ts", &ts))
        return -1;
    /* In ns, and with room for differences: a ts beyond ±2^62 ns (146 years) is no timestamp. */
    if (!(fabs(ts) < 4.6e15)) {
        fprintf(stderr, "spanprof: '%s': a trace event's ts (%g µs) is out of range\n", tr->path, ts);
        return SPEEDSCOPE_BAD_TRACE;
    }
    struct thread *t = thread_of(tr, (long long)pid, (long long)tid);
    long long at = llround(ts * 1000.0);  /* µs with ns decimals */
    if (t->nev && at < t->ev[t->nev - 1].at)
        return -1;                          /* out of order: not ours */
    struct event ev = {0, at, ph[0] == 'B'};
    if (ev.open) {
        ev.frame = frame_index(fr, name, strlen(name));
        if (t->depth == t->stack_cap)
            t->stack = xrealloc(t->stack, (t->stack_cap = t->stack_cap ? 2 * t->stack_cap : 64) * sizeof *t->stack);
        if (t->depth == 0)
            t->root_at = at;
        t->stack[t->depth++] = ev.frame;
    } else {
        if (t->depth == 0)
            return -1;                      /* an end without a begin */
        ev.frame = t->stack[--t->depth];
        if (t->depth == 0)
            t->busy += at - t->root_at;
    }
    if (t->nev == t->cap)
        t->ev = xrealloc(t->ev, (t->cap = t->cap ? 2 * t->cap : 1024) * sizeof *t->ev);
    t->ev[t->nev++] = ev;
    return 0;
}

struct reading {
    struct trace *tr;
    struct frames *fr;
};

static int read_event(json_object *e, void *ctx)
{
    struct reading *r = ctx;
    return !json_object_is_type(e, json_type_object) ? -1 : add_event(r->tr, r->fr, e);
}

/* Reads PATH's "traceEvents" a value at a time (traces run to hundreds of megabytes); a syntax
 * error is for speedscope's importer to report, on the page. */
static int read_trace(const char *path, struct trace *tr, struct frames *fr, json_object **other)
{
    struct reading r = {tr, fr};
    return js_trace_walk(path, 1, read_event, &r, other);
}

/* A flight-recorder capture's slow call (otherData's "capture", see the runtime's
 * trace_writer.c): its thread, span and time, ns on the trace's axis. */
struct trigger {
    long long tid, start, end;
    const char *span;
};

static int trigger_of(json_object *other, struct trigger *tg)
{
    json_object *c;
    double tid, start_us, dur_ns;
    if (!other || !json_object_object_get_ex(other, "capture", &c) ||
        num_field(c, "tid", &tid) || num_field(c, "start_us", &start_us) ||
        num_field(c, "duration_ns", &dur_ns) || !(tg->span = js_member_string(c, "span")) ||
        !(fabs(tid) < 9e15 && fabs(start_us) < 4.6e15 && dur_ns >= 0 && dur_ns < 4.6e18))
        return -1;
    tg->tid = (long long)tid;
    tg->start = llround(start_us * 1000.0);
    tg->end = tg->start + (long long)dur_ns;
    return 0;
}

/* Marks the slow call on T: the outermost activation of the trigger's span that covers its end
 * (the start_us is rounded down to a µs) gets a frame of its own, "SPAN (slow call, the
 * capture's trigger)", so it stands out on the timeline.  0, or -1 when T holds no such call. */
static int mark_trigger(struct thread *t, struct frames *fr, const struct trigger *tg)
{
    size_t span = frame_index(fr, tg->span, strlen(tg->span));
    size_t *open = xmalloc((t->nev + 1) * sizeof *open), depth = 0;
    int found = -1;
    for (size_t j = 0; j < t->nev && found; j++) {
        if (t->ev[j].open) {
            open[depth++] = j;
            continue;
        }
        size_t b = open[--depth];
        if (t->ev[b].frame != span || t->ev[b].at > tg->start + 1000 ||
            t->ev[j].at + 1000 < tg->end)
            continue;
        char *name = xasprintf("%s (slow call, the capture's trigger)", tg->span);
        t->ev[b].frame = t->ev[j].frame = frame_index(fr, name, strlen(name));
        free(name);
        found = 0;
    }
    free(open);
    return found;
}

/* A span of a thread's timeline: when it began, how long it ran, how deep it sat. */
struct span_at {
    long long start, dur;
    size_t depth;
};

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

/* The median duration of the N spans SP at DEPTH (at least 1 ns), sorted in V (room for N). */
static long long median_duration(const struct span_at *sp, size_t n, size_t depth, long long *v)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (sp[i].depth == depth)
            v[k++] = sp[i].dur;
    qsort(v, k, sizeof *v, cmp_ll);
    return k && v[k / 2] > 0 ? v[k / 2] : 1;
}

/* The stretch of T's timeline a page opens on (struct speedscope_opening), ns after LO; FROM
 * and TO 0 when the whole of LO to HI is readable as it is. */
static void busiest_stretch(const struct thread *t, long long lo, long long hi, long long *from,
                            long long *to)
{
    enum { REPEATS = 8, DEPTHS = 64, ON_SCREEN = 4, PER_WIDTH = 24 };
    struct span_at *sp = xmalloc((t->nev / 2 + 1) * sizeof *sp);
    long long *begun = xmalloc((t->nev + 1) * sizeof *begun), *v = xmalloc((t->nev / 2 + 1) * sizeof *v);
    size_t n = 0, depth = 0, per[DEPTHS] = {0};
    *from = *to = 0;
    for (size_t j = 0; j < t->nev; j++) {
        if (t->ev[j].open) {
            begun[depth++] = t->ev[j].at;
            continue;
        }
        depth--;
        sp[n++] = (struct span_at){begun[depth], t->ev[j].at - begun[depth], depth};
        if (depth < DEPTHS)
            per[depth]++;
    }
    size_t level = 0;   /* the first level that repeats, and the one below it */
    while (level < DEPTHS && per[level] < REPEATS)
        level++;
    if (level == DEPTHS)
        goto out;
    size_t below = level + 1 < DEPTHS && per[level + 1] >= REPEATS ? level + 1 : level, k;
    long long len = ON_SCREEN * median_duration(sp, n, level, v);
    if (below != level && len > PER_WIDTH * median_duration(sp, n, below, v))
        len = PER_WIDTH * median_duration(sp, n, below, v);
    if (len * 3 >= (hi - lo) * 2)
        goto out;       /* zoomed in by less than 1.5: the whole is as readable */
    /* The stretch of that length holding the most starts of spans down to that level. */
    k = 0;
    for (size_t i = 0; i < n; i++)
        if (sp[i].depth <= below)
            v[k++] = sp[i].start;
    qsort(v, k, sizeof *v, cmp_ll);
    size_t best = 0, most = 0;
    for (size_t i = 0, e = 0; i < k; i++) {
        while (e < k && v[e] < v[i] + len)
            e++;
        if (e - i > most)
            most = e - i, best = i;
    }
    long long a = v[best] - len / 64;  /* its first span not on the edge */
    a = a + len > hi ? hi - len : a;
    a = a < lo ? lo : a;
    *from = a - lo;
    *to = a - lo + len;
out:
    free(sp), free(begun), free(v);
}

int speedscope_from_trace(const char *path, const char *name, FILE *out, struct speedscope_opening *opening)
{
    struct trace tr = {0};
    struct frames fr = {0};
    strmap_init(&fr.map);
    tr.path = path;
    json_object *other = NULL;
    struct trigger tg = {0, 0, 0, NULL};
    int rc = read_trace(path, &tr, &fr, &other);
    if (rc)
        goto out;
    int capture = trigger_of(other, &tg) == 0;
    rc = -1;
    size_t nthreads = 0;
    long long lo = 0, hi = 0;
    int any = 0;
    for (size_t i = 0; i < tr.n; i++) {
        struct thread *t = &tr.t[i];
        if (t->depth)
            goto out;                 /* begins without ends: not a balanced trace */
        if (!t->nev)
            continue;
        nthreads++;
        if (!any || t->ev[0].at < lo)
            lo = t->ev[0].at;
        if (!any || t->ev[t->nev - 1].at > hi)
            hi = t->ev[t->nev - 1].at;
        any = 1;
    }
    if (!nthreads)
        goto out;
    qsort(tr.t, tr.n, sizeof *tr.t, by_sort_index);
    size_t active = 0, k = 0;
    long long most = -1;
    int pids = 0;
    const struct thread *busiest = NULL;
    for (size_t i = 0; i < tr.n; i++)
        if (tr.t[i].nev) {
            pids |= tr.t[i].pid != tr.t[0].pid;
            if (tr.t[i].busy > most)
                most = tr.t[i].busy, active = k, busiest = &tr.t[i];
            k++;
        }
    /* A capture opens on its slow call, marked, with a tenth of its length on either side. */
    const struct thread *slow = NULL;
    k = 0;
    for (size_t i = 0; capture && i < tr.n && !slow; i++) {
        if (!tr.t[i].nev)
            continue;
        if (tr.t[i].tid == tg.tid && mark_trigger(&tr.t[i], &fr, &tg) == 0)
            slow = &tr.t[i], active = k;
        k++;
    }
    if (!name) {
        const char *slash = tr.process ? strrchr(tr.process, '/') : NULL;
        name = slash ? slash + 1 : tr.process && *tr.process ? tr.process : "trace";
    }
    opening->name = xstrdup(name);
    opening->length = hi - lo;
    if (slow) {
        long long margin = (tg.end - tg.start) / 10;
        opening->from = tg.start - margin > lo ? tg.start - margin - lo : 0;
        opening->to = tg.end + margin < hi ? tg.end + margin - lo : hi - lo;
    } else {
        busiest_stretch(busiest, lo, hi, &opening->from, &opening->to);
    }
    write_head(out, name, active, &fr);
    k = 0;
    for (size_t i = 0; i < tr.n; i++) {
        struct thread *t = &tr.t[i];
        if (!t->nev)
            continue;
        char *pname = pids ? xasprintf("%s (tid %lld, pid %lld)", t->name ? t->name : "thread", t->tid, t->pid)
                           : xasprintf("%s (tid %lld)", t->name ? t->name : "thread", t->tid);
        fputs(k++ ? ",{\"type\":\"evented\",\"name\":" : "{\"type\":\"evented\",\"name\":", out);
        json_str(out, pname);
        free(pname);
        fprintf(out, ",\"unit\":\"nanoseconds\",\"startValue\":%lld,\"endValue\":%lld,\"events\":[", lo, hi);
        for (size_t j = 0; j < t->nev; j++)
            fprintf(out, "%s{\"type\":\"%c\",\"frame\":%zu,\"at\":%lld}", j ? "," : "",
                    t->ev[j].open ? 'O' : 'C', t->ev[j].frame, t->ev[j].at);
        fputs("]}", out);
    }
    fputs("]}\n", out);
    rc = ferror(out) ? -1 : 0;
out:
    json_object_put(other);
    trace_free(&tr);
    frames_free(&fr);
    return rc;
}
