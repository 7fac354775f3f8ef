/* json.c — the JSON report (json-c), built from a view so it can be tested without files.
 *
 * {
 *   "version": 1, "pid": N, "program": "/path/exe", "start_time": "2025-01-02T03:04:05.678Z",
 *   "wall_ns": N, "thread_count": N, "clock": "tsc" | "monotonic" | "none",
 *   "mode": "sample", "sample_hz": N,      only with SPANPROF=sample
 *   "compensation": { "call_ns": X, "inside_ns": Y },   exact times with SPANPROF_COMPENSATE on:
 *              what one span call costs (calibrate.c) and the part of it inside the call's own
 *              window; total_ns and self_ns have it taken out (of an abandoned call, only what
 *              its enter cost), each span's recorded_total_ns and recorded_self_ns are the
 *              two as recorded
 *                "measured_call_ns": Z   also, when the recorded times showed that the program's
 *              calls cost less than measured: X and Y were lowered to what they allow (aggregate.c)
 *   "compensation": { "failed": "REASON" },   instead, when that cost could not be measured:
 *              total_ns and self_ns are as recorded
 *   "threads": [ { "tid": N, "name": "...", "calls": N } ],   running threads, and for threads
 *              that ended, one entry per name: { "name", "threads": N, "calls" } (no tid)
 *   "budget": { "percent", "call_ns", "process_cpu_ns", "looks", "looks_woken",
 *               "budget_cpu_ns", ["sampler_cpu_ns",] "ticks", "ticks_ns", "last_share_percent",
 *               "switched_off": N },   with SPANPROF_BUDGET
 *              (collect/budget.c): the budget, one call's measured cost, the process's CPU time
 *              so far, the looks, the times a new call path woke them once they had slowed
 *              down, and the writer thread's CPU time in them and the ticks, with
 *              SPANPROF=sample the sampler thread's CPU time (both count towards the budget), the
 *              ticks' walks and their time, the runtime's estimated share over its last tick,
 *              the spans switched off; each span a plugin option
 *              chose then says "by_option": true (only those may be switched off)
 *   "spans": [ { "name", "file", "line", "last_line", "calls", "total_ns", "self_ns",
 *                "max_depth", "recorded_total_ns", "recorded_self_ns",
 *                "cpu_total_ns", "cpu_self_ns", "samples",
 *                "switched_off": { "at_s", "mean_ns", "off_s" } } ],   sorted by name,
 *              file, line; cpu_*_ns and samples only with SPANPROF=sample; switched_off for a
 *              span the budget switched off: when (s since start; its calls stop there, a lower
 *              bound), its mean inclusive ns per call before (0 when not known), and off_s,
 *              when its calls stopped reaching the runtime at all.
 *              "switches": [ { "at_s", "on" } ]   for a span switched by request (`spanprof
 *              spans PID on|off`, collect/spanswitch.c): each switch, oldest first, when (s since
 *              start) and which way; its calls are those entered while it was on.  The first
 *              65,536 switches of a process are kept; "switches_unlogged": N at the top level
 *              counts those past them.
 *   "anomalies": { "abandoned_frames", "unmatched_exits", "open_frames", "overflow_calls" },
 *   "progress": [ { "name", "file", "line", "hits" } ]   progress points, sorted by name, file, line
 * }
 * thread_count counts every thread that ran a span (those that ended included).
 * total_ns is inclusive, counting only the outermost activation of a site on each stack (so
 * recursion is not double counted); self_ns excludes time in child spans; max_depth is the
 * deepest recursion of the site on one stack.  With SPANPROF=sample, calls are exact and the
 * times are the sampled estimates: total_ns and self_ns wall time, cpu_total_ns and cpu_self_ns
 * the thread's CPU time over the same samples (total as total_ns is), samples how many samples
 * total_ns rests on.
 */
#include <stdlib.h>
#include <time.h>

#include <json-c/json.h>

#include "collect/budget.h"
#include "collect/spanswitch.h"
#include "report/report.h"

/* SITE's switches by request, oldest first, into JS ("switches"), if it had any. */
static void add_switches(json_object *js, const struct spanprof_site *site)
{
    size_t n = 0;
    for (const struct spanprof__switch_event *e = spanprof__switch_latest(site); e;
         e = spanprof__switch_before(e))
        n++;
    const struct spanprof__switch_event **order = n ? malloc(n * sizeof *order) : NULL;
    if (!order)
        return;
    size_t i = n;
    for (const struct spanprof__switch_event *e = spanprof__switch_latest(site); e;
         e = spanprof__switch_before(e))
        order[--i] = e; /* the chain runs newest first */
    json_object *list = json_object_new_array();
    for (i = 0; i < n; i++) {
        json_object *je = json_object_new_object();
        json_object_object_add(je, "at_s", json_object_new_double(order[i]->at_s));
        json_object_object_add(je, "on", json_object_new_boolean(order[i]->on));
        json_object_array_add(list, je);
    }
    free(order);
    json_object_object_add(js, "switches", list);
}

static int compare_points(const void *a, const void *b)
{
    return spanprof__site_compare((*(struct spanprof__progress_point *const *)a)->site,
                                  (*(struct spanprof__progress_point *const *)b)->site);
}

json_object *spanprof__progress_json(void)
{
    json_object *array = json_object_new_array();
    size_t n = 0;
    for (struct spanprof__progress_point *p = spanprof__progress_points; p; p = p->next)
        n++;
    struct spanprof__progress_point **sorted = calloc(n ? n : 1, sizeof *sorted);
    if (!array || !sorted) {
        free(sorted);
        return array;
    }
    n = 0;
    for (struct spanprof__progress_point *p = spanprof__progress_points; p; p = p->next)
        sorted[n++] = p;
    qsort(sorted, n, sizeof *sorted, compare_points);
    for (size_t i = 0; i < n; i++) {
        const struct spanprof_site *s = sorted[i]->site;
        json_object *j = json_object_new_object();
        json_object_object_add(j, "name", spanprof__json_str(s->name));
        json_object_object_add(j, "file", spanprof__json_str(s->file));
        json_object_object_add(j, "line", json_object_new_int64(s->first_line));
        json_object_object_add(j, "hits", spanprof__json_u64(__atomic_load_n(&sorted[i]->hits, __ATOMIC_RELAXED)));
        json_object_array_add(array, j);
    }
    free(sorted);
    return array;
}

json_object *spanprof__json_build(const struct spanprof__view *v, const struct spanprof__json_meta *m)
{
    json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    json_object_object_add(o, "version", json_object_new_int(SPANPROF_FORMAT_VERSION));
    json_object_object_add(o, "pid", json_object_new_int64(m->pid));
    json_object_object_add(o, "program", spanprof__json_str(m->program));
    json_object_object_add(o, "start_time", spanprof__json_str(m->start_time));
    json_object_object_add(o, "wall_ns", spanprof__json_u64(m->wall_ns));
    json_object_object_add(o, "thread_count", spanprof__json_u64(spanprof__thread_count(v)));
    json_object_object_add(o, "clock", spanprof__json_str(m->clock));
    if (m->live) {
        json_object_object_add(o, "host", spanprof__json_str(m->live->host));
        json_object_object_add(o, "exe", spanprof__json_str(m->program));
        json_object_object_add(o, "start_unix_ns", spanprof__json_u64(m->live->start_unix_ns));
        json_object_object_add(o, "live_seq", spanprof__json_u64(m->live->seq));
    }
    if (v->sample_hz) {
        json_object_object_add(o, "mode", json_object_new_string("sample"));
        json_object_object_add(o, "sample_hz", spanprof__json_u64(v->sample_hz));
    }
    if (v->compensate) {
        json_object *c = json_object_new_object();
        json_object_object_add(c, "call_ns", json_object_new_double(
                                                 (v->cost_in + v->cost_out) * v->ns_per_tick));
        json_object_object_add(c, "inside_ns", json_object_new_double(v->cost_in * v->ns_per_tick));
        if (v->cost_in < v->measured_in || v->cost_out < v->measured_out)
            json_object_object_add(c, "measured_call_ns",
                                   json_object_new_double((v->measured_in + v->measured_out) *
                                                          v->ns_per_tick));
        json_object_object_add(o, "compensation", c);
    } else if (v->compensation_failed) {
        json_object *c = json_object_new_object();
        json_object_object_add(c, "failed", json_object_new_string(v->compensation_failed));
        json_object_object_add(o, "compensation", c);
    }

    if (spanprof__g.spans)
        json_object_object_add(o, "spans_chosen", spanprof__json_str(spanprof__g.spans));
    uint64_t patched = __atomic_load_n(&spanprof__g.points_patched, __ATOMIC_RELAXED);
    if (patched)
        json_object_object_add(o, "patch_points_off", spanprof__json_u64(patched));
    uint64_t unlogged = spanprof__switch_unlogged();
    if (unlogged)
        json_object_object_add(o, "switches_unlogged", spanprof__json_u64(unlogged));

    json_object *threads = json_object_new_array();
    for (size_t i = 0; i < v->nthreads; i++) {
        const struct spanprof__thread *t = v->threads[i];
        json_object *jt = spanprof__json_thread(t);
        json_object_object_add(jt, "calls", spanprof__json_u64(spanprof__thread_calls(t)));
        uint64_t idle;
        if (spanprof__thread_idle_ns(v, t, &idle))
            json_object_object_add(jt, "outside_spans_ns", spanprof__json_u64(idle));
        json_object_array_add(threads, jt);
    }
    json_object_object_add(o, "threads", threads);
    const struct spanprof__budget *bg = &spanprof__budget;
    if (bg->percent > 0) {
        json_object *b = json_object_new_object();
        json_object_object_add(b, "percent", json_object_new_double(bg->percent));
        json_object_object_add(b, "call_ns", json_object_new_double(bg->call_ns));
        struct timespec cpu;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
        json_object_object_add(b, "process_cpu_ns",
                               spanprof__json_u64((uint64_t)cpu.tv_sec * 1000000000u +
                                                  (uint64_t)cpu.tv_nsec));
        json_object_object_add(b, "looks", spanprof__json_u64(SPANPROF_PEEK(bg->looks)));
        json_object_object_add(b, "looks_woken",
                               spanprof__json_u64(SPANPROF_PEEK(bg->looks_woken)));
        json_object_object_add(b, "budget_cpu_ns", spanprof__json_u64(SPANPROF_PEEK(bg->cpu_ns)));
        if (spanprof__collect.sample_hz)
            json_object_object_add(b, "sampler_cpu_ns",
                                   spanprof__json_u64(spanprof__sampler_cpu_ns()));
        json_object_object_add(b, "ticks", spanprof__json_u64(SPANPROF_PEEK(bg->ticks)));
        json_object_object_add(b, "ticks_ns", spanprof__json_u64(SPANPROF_PEEK(bg->tick_ns)));
        double share;
        __atomic_load(&bg->last_share, &share, __ATOMIC_RELAXED);
        json_object_object_add(b, "last_share_percent", json_object_new_double(100 * share));
        json_object_object_add(b, "switched_off", spanprof__json_u64(
                                   __atomic_load_n(&bg->noff, __ATOMIC_ACQUIRE)));
        json_object_object_add(o, "budget", b);
    }

    size_t n;
    struct spanprof__site_stats *st = spanprof__aggregate_sites(v, &n);
    json_object *spans = json_object_new_array();
    struct spanprof__res_sites *res = spanprof__res_collect(v); /* NULL when all off */
    for (size_t i = 0; i < n; i++) {
        const struct spanprof_site *s = st[i].site;
        json_object *js = json_object_new_object();
        json_object_object_add(js, "name", spanprof__json_str(s->name));
        json_object_object_add(js, "file", spanprof__json_str(s->file));
        json_object_object_add(js, "line", json_object_new_int64(s->first_line));
        json_object_object_add(js, "last_line", json_object_new_int64(s->last_line));
        json_object_object_add(js, "calls", spanprof__json_u64(st[i].calls));
        json_object_object_add(js, "total_ns", spanprof__json_u64(spanprof__ticks_to_ns(v, st[i].total)));
        json_object_object_add(js, "self_ns", spanprof__json_u64(spanprof__ticks_to_ns(v, st[i].self)));
        json_object_object_add(js, "max_depth", spanprof__json_u64(st[i].max_depth));
        if (v->compensate) {
            json_object_object_add(js, "recorded_total_ns",
                                   spanprof__json_u64(spanprof__ticks_to_ns(v, st[i].recorded_total)));
            json_object_object_add(js, "recorded_self_ns",
                                   spanprof__json_u64(spanprof__ticks_to_ns(v, st[i].recorded_self)));
        }
        if (v->sample_hz) {
            json_object_object_add(js, "cpu_total_ns", spanprof__json_u64(st[i].cpu_total));
            json_object_object_add(js, "cpu_self_ns", spanprof__json_u64(st[i].cpu_self));
            json_object_object_add(js, "samples", spanprof__json_u64(st[i].samples));
        }
        if (spanprof__budget.percent > 0 && s->kind == SPANPROF_KIND_SPAN_BY_OPTION)
            json_object_object_add(js, "by_option", json_object_new_boolean(1));
        const struct spanprof__budget_off *off = spanprof__budget_off_of(s);
        if (off) {
            json_object *jo = json_object_new_object();
            json_object_object_add(jo, "at_s", json_object_new_double(off->at_s));
            json_object_object_add(jo, "mean_ns", json_object_new_double(off->mean_ns));
            if (off->off_s > 0)
                json_object_object_add(jo, "off_s", json_object_new_double(off->off_s));
            json_object_object_add(js, "switched_off", jo);
        }
        add_switches(js, s);
        spanprof__res_json(res, s, js, v); /* p50_ns…, cpu_*_ns, allocs… when enabled */
        if (m->live)
            spanprof__res_json_histogram(res, s, js, v);
        json_object_array_add(spans, js);
    }
    free(st);
    spanprof__res_free(res);
    json_object_object_add(o, "spans", spans);

    struct spanprof__anomalies a;
    spanprof__anomalies(v, &a);
    json_object *ja = json_object_new_object();
    json_object_object_add(ja, "abandoned_frames", spanprof__json_u64(a.abandoned));
    json_object_object_add(ja, "unmatched_exits", spanprof__json_u64(a.unmatched + m->extra_unmatched));
    json_object_object_add(ja, "open_frames", spanprof__json_u64(a.open));
    json_object_object_add(ja, "overflow_calls", spanprof__json_u64(a.overflow));
    json_object_object_add(o, "anomalies", ja);
    json_object_object_add(o, "progress", spanprof__progress_json());
    return o;
}

int spanprof__json_write(FILE *f, const struct spanprof__view *v, const struct spanprof__json_meta *m)
{
    json_object *o = spanprof__json_build(v, m);
    if (!o)
        return -1;
    const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                          JSON_C_TO_STRING_NOSLASHESCAPE);
    int rc = s && fputs(s, f) >= 0 && fputc('\n', f) != EOF ? 0 : -1;
    json_object_put(o);
    return rc;
}
