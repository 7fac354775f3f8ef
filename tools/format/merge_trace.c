/* merge_trace.c — the traces of a run's processes (SPANPROF_TRACE: one Chrome trace each) as one
 * trace, for `spanprof record --trace`: every process a track of its own (its pid), on one time
 * line, so Perfetto, chrome://tracing and the timeline page show them side by side.
 *
 * Each process's ts counts from its own start; its "otherData" gives that start on the machine's
 * monotonic clock (start_monotonic_ns), so each file's events are shifted by how much later than
 * the earliest process it started.  A file without it (written by an older runtime) is left
 * unshifted.  Files are streamed one event at a time (js_trace_walk): a trace of millions of events
 * never becomes one json-c tree.  Each is read twice — first for its otherData, which the runtime
 * writes after the events — and what the merged file's otherData says per process (pid, program,
 * start, events kept and dropped) is what record reports.
 */
#include "format/format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One process's trace, from its otherData. */
struct trace_info {
    json_object *other;  /* its otherData (owned), or NULL */
    uint64_t start_ns;   /* start_monotonic_ns; 0: unknown */
    uint64_t events;     /* kept: the sum of its threads' "events" */
    uint64_t dropped;    /* dropped_events */
};

/* A process's start, drops and per-thread event counts from its otherData; -1 after a message
 * naming the file and the field of the wrong type. */
static int read_info(const char *path, struct trace_info *info)
{
    json_object *threads;
    int found;
    if (jf_u64(path, info->other, "start_monotonic_ns", &info->start_ns) < 0 ||
        jf_u64(path, info->other, "dropped_events", &info->dropped) < 0 ||
        (found = jf_array(path, info->other, "threads", &threads)) < 0)
        return -1;
    for (size_t k = 0; found && k < json_object_array_length(threads); k++) {
        json_object *t = json_object_array_get_idx(threads, k);
        uint64_t events = 0;
        if (!json_object_is_type(t, json_type_object))
            return jf_invalid(path, "threads", "an array of objects");
        if (jf_u64(path, t, "events", &events) < 0)
            return -1;
        info->events += events;
    }
    return 0;
}

struct writing {
    const char *path; /* of the trace being copied */
    FILE *out;
    double shift_us; /* added to every ts */
    int first;       /* no event written yet */
};

static int write_event(json_object *e, void *ctx)
{
    struct writing *w = ctx;
    double at;
    int found = w->shift_us != 0 ? jf_number(w->path, e, "ts", &at) : 0;
    if (found < 0)
        return -1;
    if (found) {
        char text[40];
        at += w->shift_us;
        snprintf(text, sizeof text, "%.3f", at); /* ns resolution, as the runtime writes it */
        json_object_object_add(e, "ts", json_object_new_double_s(at, text));
    }
    const char *s = json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN |
                                                          JSON_C_TO_STRING_NOSLASHESCAPE);
    fputs(w->first ? "\n" : ",\n", w->out);
    fputs(s, w->out);
    w->first = 0;
    return ferror(w->out) ? -1 : 0;
}

/* The merged file's otherData: each process's own (its threads left out: they are in its
 * file), and the totals. */
static json_object *merged_other(const struct trace_info *info, size_t n,
                                 const struct trace_totals *t)
{
    static const char *const kept[] = {"pid", "program", "start_time", "start_monotonic_ns",
                                       "buffer_events_per_thread", "dropped_events"};
    json_object *o = json_object_new_object(), *procs = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        json_object *p = json_object_new_object(), *v;
        for (size_t k = 0; k < sizeof kept / sizeof *kept; k++)
            if (info[i].other && json_object_object_get_ex(info[i].other, kept[k], &v))
                json_object_object_add(p, kept[k], json_object_get(v));
        json_object_object_add(p, "events", json_object_new_int64((int64_t)info[i].events));
        json_object_array_add(procs, p);
    }
    json_object_object_add(o, "processes", procs);
    json_object_object_add(o, "events", json_object_new_int64((int64_t)t->events));
    json_object_object_add(o, "dropped_events", json_object_new_int64((int64_t)t->dropped));
    return o;
}

int merge_traces(const char *out_path, char **files, size_t n, struct trace_totals *t)
{
    memset(t, 0, sizeof *t);
    struct trace_info *info = xrealloc(NULL, (n ? n : 1) * sizeof *info);
    memset(info, 0, (n ? n : 1) * sizeof *info);
    int rc = -1;
    uint64_t earliest = 0;
    for (size_t i = 0; i < n; i++) {
        if (js_trace_walk(files[i], 0, NULL, NULL, &info[i].other))
            goto out;
        if (read_info(files[i], &info[i]))
            goto out;
        t->events += info[i].events;
        t->dropped += info[i].dropped;
        if (info[i].start_ns && (!earliest || info[i].start_ns < earliest))
            earliest = info[i].start_ns;
    }
    t->processes = n;
    struct tool_output o;
    FILE *out = output_open(&o, out_path);
    if (!out)
        goto out;
    fputs("{\"traceEvents\":[", out);
    struct writing w = {NULL, out, 0, 1};
    int failed = 0;
    for (size_t i = 0; i < n && !failed; i++) {
        w.path = files[i];
        w.shift_us = info[i].start_ns ? (double)(info[i].start_ns - earliest) / 1000.0 : 0;
        failed = js_trace_walk(files[i], 0, write_event, &w, NULL) != 0;
    }
    json_object *other = merged_other(info, n, t);
    fprintf(out, "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":%s}\n",
            json_object_to_json_string_ext(other, JSON_C_TO_STRING_PLAIN |
                                                      JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(other);
    rc = output_close(&o, failed) || failed ? -1 : 0;
out:
    for (size_t i = 0; i < n; i++)
        json_object_put(info[i].other);
    free(info);
    return rc;
}
