/* trace_writer.c — SPANPROF_TRACE's file: the Chrome Trace Event writer, replaying the per-thread
 * rings of enter/exit events (collect/trace_ring.c).
 *
 * File format (Perfetto UI, chrome://tracing and speedscope load it):
 *   {"traceEvents":[
 *     {"ph":"M","name":"process_name","pid":P,"tid":0,"args":{"name":"PROGRAM"}},
 *     {"ph":"M","name":"thread_name","pid":P,"tid":T,"args":{"name":"NAME"}},
 *     {"ph":"M","name":"thread_sort_index","pid":P,"tid":T,"args":{"sort_index":I}},
 *     {"ph":"B","pid":P,"tid":T,"ts":12.345,"name":"SPAN"},
 *     {"ph":"E","pid":P,"tid":T,"ts":13.000,"name":"SPAN"}, ...],
 *    "displayTimeUnit":"ns",
 *    "otherData":{ run information, "start_monotonic_ns" (ts 0 on CLOCK_MONOTONIC),
 *                  "dropped_events", "threads":[per-thread counts] }}
 * Threads that ended: their call trees are merged by name (record/threadretire.c) but their events
 * cannot be, so the rings of the SPANPROF__TRACE_RETIRED (32) threads that ended last are kept
 * and written among the running threads in the order they started (their entry in "threads"
 * says "ended": true); the rings of earlier ones are dropped, counted in
 * "retired_threads_dropped" and "retired_events_dropped" (present when not zero).
 * ts is in µs since process start (since the fork in a fork child), with ns resolution, from the
 * same clock on every thread; per thread the events are in the order they happened and ts never
 * decreases.
 *
 * Each thread's events are replayed from its ring by trace_replay.c, which says how they are
 * balanced: a begin at the window's first timestamp for an exit whose enter was dropped
 * ("begins_before_window"), exits that close the spans above them (longjmp), unmatched exits
 * left out ("unmatched_ends"), spans still open ending at the write time ("open_at_write").
 *
 * Flight-recorder captures (spanprof__trace_write_window): only the events of a window are
 * written, as if the ring held no more; spans open at the window's end close there.
 * otherData's "capture" says what set the capture off, and lists the slowest spans inside the
 * slow call ("slowest_descendants", the call itself left out).
 *
 * Writer.  Events are streamed with stdio (a trace of millions of events must not need a tree
 * of millions of json-c objects); json-c is used where its tree is small: escaping each span
 * name once (cached per site id) and thread names, and the otherData object.
 */
#define _GNU_SOURCE
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "report/trace_replay.h"

/* ---- writer ------------------------------------------------------------------------------- */

struct writer {
    FILE *f;
    const struct spanprof__view *v;
    char **names; /* escaped span names (with quotes) by site id */
    size_t nnames;
    char *scratch; /* the name of a site without an id (never registered): not cached */
    int failed;
};

/* JSON string literal for S, malloc'd. */
static char *escape(const char *s)
{
    json_object *o = json_object_new_string(s ? s : "");
    if (!o)
        return NULL;
    const char *j = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                          JSON_C_TO_STRING_NOSLASHESCAPE);
    char *r = j ? strdup(j) : NULL;
    json_object_put(o);
    return r;
}

/* The span's name as a JSON string, escaped once per site and write. */
static const char *cached_name(struct writer *w, const struct spanprof_site *s)
{
    char *text = NULL, *e;
    size_t id = s->id;
    if (id < w->nnames && w->names[id])
        return w->names[id];
    if (w->v->file_line && asprintf(&text, "%s (%s:%u)", s->name, s->file, s->first_line) < 0)
        text = NULL;
    e = escape(text ? text : s->name);
    free(text);
    if (!e) {
        w->failed = 1;
        return "\"?\"";
    }
    if (id == 0) {
        free(w->scratch);
        return w->scratch = e;
    }
    if (id >= w->nnames) {
        size_t n = id + 64;
        char **nn = realloc(w->names, n * sizeof *nn);
        if (!nn) {
            free(e);
            w->failed = 1;
            return "\"?\"";
        }
        memset(nn + w->nnames, 0, (n - w->nnames) * sizeof *nn);
        w->names = nn;
        w->nnames = n;
    }
    w->names[id] = e;
    return e;
}

/* The sink's callbacks: the file's own stream, unlocked (the file is the writer's own). */
static void put(void *ctx, const char *text, size_t len)
{
    fwrite_unlocked(text, 1, len, ((struct writer *)ctx)->f);
}

static const char *site_name(void *ctx, const struct spanprof_site *s, size_t *len)
{
    const char *name = cached_name(ctx, s);
    *len = strlen(name);
    return name;
}

/* One thread of the file: a running thread (or one that ended before thread churn could merge
 * it), or an ended thread's ring kept in the retired store (collect/trace_retired.c). */
struct trace_thread {
    const struct spanprof__trace_ring *ring;
    pid_t tid;
    const char *name;
    uint64_t order, end_tick; /* order: see spanprof__trace_ring */
    int ended;
    int kept; /* its events copied at the trigger, in place of its ring */
    size_t capacity; /* its ring's, in events (0: none) */
};

/* The oldest event number R still holds (its numbering: see spanprof__trace_keep). */
static uint64_t oldest_held(const struct spanprof__trace_ring *r)
{
    uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE), total = head - r->base;
    return head - (total < r->capacity ? total : r->capacity);
}

/* Whether a thread's part comes from KEPT, the copy taken at the trigger, rather than from
 * RING: unless the ring still holds all that was copied, with room to spare (its owner may push
 * on while it is read), which it does for a thread too idle to have overwritten anything. */
static int use_kept(const struct spanprof__trace_ring *ring, const struct spanprof__trace_ring *kept)
{
    if (!kept || kept->head == kept->base)
        return 0;
    return !ring || ring->base != kept->base ||
           oldest_held(ring) + ring->capacity / 4 > oldest_held(kept);
}

/* otherData's "capture": what set the capture off, whether the slow call is all there (SLOW_HELD),
 * and the slow call's slowest spans. */
static json_object *capture_json(const struct spanprof__trace_sink *w, const struct spanprof__view *v,
                                 int slow_held)
{
    const struct spanprof__trace_window *win = w->win;
    json_object *c = json_object_new_object();
    json_object_object_add(c, "reason", spanprof__json_str(win->site ? "slow" : "request"));
    json_object_object_add(c, "time", spanprof__json_str(win->time));
    json_object_object_add(c, "window_s", json_object_new_double(win->seconds));
    json_object_object_add(c, "from_us", spanprof__json_u64(spanprof__trace_ns(w, win->from) / 1000));
    json_object_object_add(c, "to_us", spanprof__json_u64(spanprof__trace_ns(w, win->to) / 1000));
    json_object_object_add(c, "triggers_left_out", spanprof__json_u64(win->suppressed));
    if (win->site) {
        json_object_object_add(c, "span", spanprof__json_str(win->site->name));
        json_object_object_add(c, "tid", json_object_new_int64(win->tid));
        json_object_object_add(c, "start_us", spanprof__json_u64(spanprof__trace_ns(w, win->start) / 1000));
        json_object_object_add(c, "duration_ns",
                               spanprof__json_u64(spanprof__ticks_to_ns(v, win->end - win->start)));
        /* false: its thread wrote more inside the call than the copy at the trigger holds, and
         * the call shows from that thread's first event kept */
        json_object_object_add(c, "slow_call_whole", json_object_new_boolean(slow_held));
        json_object *d = json_object_new_array();
        /* The longest is the slow call itself. */
        for (size_t i = 1; i < w->nslowest; i++) {
            json_object *x = json_object_new_object();
            json_object_object_add(x, "name", spanprof__json_str(w->slowest[i].site->name));
            json_object_object_add(x, "duration_ns", spanprof__json_u64(w->slowest[i].ns));
            json_object_array_add(d, x);
        }
        json_object_object_add(c, "slowest_descendants", d);
    }
    return c;
}

/* The view's threads (retired groups have no ring: left out) and the retired rings, in the
 * order the threads entered their first span (the view's order, which the rings' order
 * follows); with a slow call's window, the threads' events copied at the trigger where they
 * reach further (use_kept).  Returns a malloc'd array (count in *n) or NULL. */
static struct trace_thread *trace_threads(const struct spanprof__view *v, uint64_t end_tick,
                                          const struct spanprof__trace_window *win, size_t *n,
                                          char (*labels)[32])
{
    const struct spanprof__trace_retired *r = &spanprof__trace_retired;
    struct trace_thread *tt = calloc(2 * (v->nthreads + r->n) + 1, sizeof *tt);
    *n = 0;
    if (!tt)
        return NULL;
    struct trace_thread *live = tt + v->nthreads + r->n, *ended = live + v->nthreads;
    size_t nl = 0, ne = 0;
    uint64_t order = 0;
    for (size_t i = 0; i < v->nthreads; i++) {
        const struct spanprof__thread *t = v->threads[i];
        if (t->merged)
            continue;
        if (t->trace) /* else (no memory for a ring) it keeps its place after the previous one */
            order = t->trace->order;
        live[nl++] = (struct trace_thread){t->trace, t->tid,
                                           spanprof__thread_label(t, labels[i], sizeof labels[i]),
                                           order, end_tick, 0, 0,
                                           t->trace ? t->trace->capacity : 0};
    }
    /* Insertion by order (a few dozen entries). */
    size_t first = r->n == SPANPROF__TRACE_RETIRED ? r->next : 0;
    for (size_t k = 0; k < r->n; k++) {
        const struct spanprof__trace_exited *e = &r->v[(first + k) % SPANPROF__TRACE_RETIRED];
        struct trace_thread x = {e->ring, e->tid, e->name, e->ring->order, e->end_tick, 1, 0,
                              e->ring->capacity};
        size_t j = ne++;
        for (; j > 0 && ended[j - 1].order > x.order; j--)
            ended[j] = ended[j - 1];
        ended[j] = x;
    }
    size_t i = 0, j = 0;
    while (i < nl || j < ne)
        tt[(*n)++] = j == ne || (i < nl && live[i].order <= ended[j].order) ? live[i++]
                                                                                      : ended[j++];
    for (i = 0; win && i < *n; i++)
        for (size_t k = 0; k < win->nkept; k++)
            if (tt[i].tid == win->kept[k].tid && use_kept(tt[i].ring, win->kept[k].ring)) {
                tt[i].ring = win->kept[k].ring;
                tt[i].kept = 1;
            }
    return tt;
}

static int write_trace(FILE *f, const struct spanprof__view *v,
                       const struct spanprof__json_meta *m, uint64_t origin_tick,
                       uint64_t end_tick, const struct spanprof__trace_window *win)
{
    struct writer w = {.f = f, .v = v};
    struct spanprof__trace_sink sink = {.put = put, .name = site_name, .ctx = &w, .v = v,
                                        .pid = m->pid, .origin = origin_tick, .win = win};
    size_t nt = 0;
    char (*labels)[32] = calloc(v->nthreads ? v->nthreads : 1, sizeof *labels);
    struct trace_thread *tt = labels ? trace_threads(v, end_tick, win, &nt, labels) : NULL;
    struct spanprof__trace_thread_stats *stats = calloc(nt ? nt : 1, sizeof *stats);
    char *program = escape(m->program);
    if (!labels || !tt || !stats || !program) {
        free(labels);
        free(tt);
        free(stats);
        free(program);
        return -1;
    }
    fprintf(f, "{\"traceEvents\":[\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%ld,\"tid\":0,"
               "\"args\":{\"name\":%s}}",
            sink.pid, program);
    free(program);
    for (size_t i = 0; i < nt; i++) {
        char *name = escape(tt[i].name);
        if (!name) {
            w.failed = 1;
            continue;
        }
        fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%ld,\"tid\":%ld,"
                   "\"args\":{\"name\":%s}}",
                sink.pid, (long)tt[i].tid, name);
        fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%ld,\"tid\":%ld,"
                   "\"args\":{\"sort_index\":%zu}}",
                sink.pid, (long)tt[i].tid, i);
        free(name);
    }
    for (size_t i = 0; i < nt; i++)
        spanprof__trace_replay(&sink, tt[i].ring, tt[i].tid, tt[i].end_tick, &stats[i]);

    /* Run information: a small tree, so json-c. */
    json_object *o = json_object_new_object();
    uint64_t dropped = 0, capacity = 0;
    int slow_held = 0; /* the slow call's thread holds its begin */
    json_object *threads = json_object_new_array();
    for (size_t i = 0; i < nt; i++) {
        json_object *jt = json_object_new_object();
        json_object_object_add(jt, "tid", json_object_new_int64(tt[i].tid));
        json_object_object_add(jt, "name", spanprof__json_str(tt[i].name));
        if (tt[i].ended)
            json_object_object_add(jt, "ended", json_object_new_boolean(1));
        if (tt[i].kept)
            json_object_object_add(jt, "kept_at_trigger", json_object_new_boolean(1));
        json_object_object_add(jt, "events", spanprof__json_u64(stats[i].events));
        json_object_object_add(jt, "dropped_events", spanprof__json_u64(stats[i].dropped));
        json_object_object_add(jt, "begins_before_window", spanprof__json_u64(stats[i].before));
        json_object_object_add(jt, "open_at_write", spanprof__json_u64(stats[i].open));
        json_object_object_add(jt, "unmatched_ends", spanprof__json_u64(stats[i].unmatched));
        if (stats[i].late_from)
            json_object_object_add(jt, "events_from_us",
                                   spanprof__json_u64(spanprof__trace_ns(&sink, stats[i].late_from) / 1000));
        if (win && win->site && tt[i].tid == win->tid) /* a thread with no event holds no call */
            slow_held = stats[i].events &&
                        (!stats[i].late_from || stats[i].late_from <= win->start);
        json_object_array_add(threads, jt);
        dropped += stats[i].dropped;
        if (tt[i].capacity)
            capacity = tt[i].capacity;
    }
    const struct spanprof__trace_retired *r = &spanprof__trace_retired;
    json_object_object_add(o, "version", json_object_new_int(SPANPROF_FORMAT_VERSION));
    json_object_object_add(o, "pid", json_object_new_int64(m->pid));
    json_object_object_add(o, "program", spanprof__json_str(m->program));
    json_object_object_add(o, "start_time", spanprof__json_str(m->start_time));
    json_object_object_add(o, "clock", spanprof__json_str(m->clock));
    /* ts 0 on the machine's monotonic clock: puts the traces of a run's processes on one time
     * line (`spanprof record --trace`). */
    json_object_object_add(o, "start_monotonic_ns", spanprof__json_u64(spanprof__g.start_mono_ns));
    json_object_object_add(o, "buffer_events_per_thread", spanprof__json_u64(capacity));
    json_object_object_add(o, "dropped_events", spanprof__json_u64(dropped));
    if (r->threads_dropped) {
        json_object_object_add(o, "retired_threads_dropped", spanprof__json_u64(r->threads_dropped));
        json_object_object_add(o, "retired_events_dropped", spanprof__json_u64(r->events_dropped));
    }
    json_object_object_add(o, "threads", threads);
    if (win)
        json_object_object_add(o, "capture", capture_json(&sink, v, slow_held));
    const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                          JSON_C_TO_STRING_NOSLASHESCAPE);
    if (!s)
        w.failed = 1;
    fprintf(f, "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":%s}\n", s ? s : "{}");
    json_object_put(o);
    for (size_t i = 0; i < w.nnames; i++)
        free(w.names[i]);
    free(w.names);
    free(w.scratch);
    free(stats);
    free(tt);
    free(labels);
    return w.failed || sink.failed ? -1 : 0;
}

int spanprof__trace_write_at(FILE *f, const struct spanprof__view *v,
                             const struct spanprof__json_meta *m, uint64_t origin_tick,
                             uint64_t end_tick)
{
    return write_trace(f, v, m, origin_tick, end_tick, NULL);
}

int spanprof__trace_write_window(FILE *f, const struct spanprof__view *v,
                                 const struct spanprof__json_meta *m, uint64_t origin_tick,
                                 const struct spanprof__trace_window *win)
{
    return write_trace(f, v, m, origin_tick, win->to, win);
}

int spanprof__trace_write(FILE *f, const struct spanprof__view *v, const struct spanprof__json_meta *m)
{
    /* The origin is process start (spanprof__g.start_mono_ns) expressed in ticks, found from a
     * (tick, ns) pair taken now, so every thread's events share one time base. */
    uint64_t end = spanprof__clock_now();
    uint64_t now_ns = spanprof__mono_ns();
    double since = (double)(now_ns - spanprof__g.start_mono_ns) / v->ns_per_tick;
    uint64_t origin = since < (double)end ? end - (uint64_t)since : 0;
    return spanprof__trace_write_at(f, v, m, origin, end);
}
