/* tracecheck.c — checks a Chrome trace written by SPANPROF_TRACE and prints a time-free summary
 * that tests compare: the process name, then per thread (by name: threads start in any order) its name,
 * number of events, whether its B/E events nest (each E names the innermost open B, nothing left
 * open), whether its timestamps never decrease, and the otherData counts.
 *
 * usage: tracecheck TRACE.json    exit status 1 when it is not a JSON trace. */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 64
#define MAX_DEPTH 4096

struct track {
    long tid;
    const char *name;
    long events, begins;
    int balanced, monotonic;
    double last;
    const char *stack[MAX_DEPTH];
    int depth;
};

static struct track tracks[MAX_THREADS];
static int ntracks;

static struct track *track(long tid)
{
    for (int i = 0; i < ntracks; i++)
        if (tracks[i].tid == tid)
            return &tracks[i];
    if (ntracks == MAX_THREADS) {
        fprintf(stderr, "tracecheck: too many threads\n");
        exit(1);
    }
    struct track *t = &tracks[ntracks++];
    t->tid = tid;
    t->name = "(no thread_name)";
    t->balanced = t->monotonic = 1;
    return t;
}

static json_object *get(json_object *o, const char *k)
{
    json_object *v = NULL;
    json_object_object_get_ex(o, k, &v);
    return v;
}

static int by_name(const void *a, const void *b)
{
    const struct track *x = a, *y = b;
    return strcmp(x->name, y->name);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: tracecheck TRACE.json\n");
        return 2;
    }
    json_object *o = json_object_from_file(argv[1]);
    json_object *evs = o ? get(o, "traceEvents") : NULL;
    if (!evs || !json_object_is_type(evs, json_type_array)) {
        printf("not a JSON trace: %s\n", argv[1]);
        return 1;
    }
    const char *process = "(no process_name)";
    for (size_t i = 0; i < json_object_array_length(evs); i++) {
        json_object *e = json_object_array_get_idx(evs, i);
        const char *ph = json_object_get_string(get(e, "ph"));
        const char *name = json_object_get_string(get(e, "name"));
        long tid = (long)json_object_get_int64(get(e, "tid"));
        if (!ph || !name) {
            printf("event %zu without ph or name\n", i);
            return 1;
        }
        if (!strcmp(ph, "M")) {
            json_object *args = get(e, "args");
            if (!strcmp(name, "process_name"))
                process = json_object_get_string(get(args, "name"));
            else if (!strcmp(name, "thread_name"))
                track(tid)->name = json_object_get_string(get(args, "name"));
            continue;
        }
        struct track *t = track(tid);
        double ts = json_object_get_double(get(e, "ts"));
        if (t->events && ts < t->last)
            t->monotonic = 0;
        t->last = ts;
        t->events++;
        if (!strcmp(ph, "B")) {
            t->begins++;
            if (t->depth == MAX_DEPTH)
                t->balanced = 0;
            else
                t->stack[t->depth++] = name;
        } else if (!strcmp(ph, "E")) {
            if (!t->depth || strcmp(t->stack[t->depth - 1], name))
                t->balanced = 0;
            else
                t->depth--;
        } else {
            printf("unexpected ph '%s'\n", ph);
        }
    }
    qsort(tracks, (size_t)ntracks, sizeof *tracks, by_name);
    printf("process %s\n", strrchr(process, '/') ? strrchr(process, '/') + 1 : process);
    json_object *other = get(o, "otherData");
    json_object *threads = get(other, "threads");
    for (int i = 0; i < ntracks; i++) {
        struct track *t = &tracks[i];
        json_object *info = NULL;
        for (size_t j = 0; j < json_object_array_length(threads); j++)
            if (json_object_get_int64(get(json_object_array_get_idx(threads, j), "tid")) == t->tid)
                info = json_object_array_get_idx(threads, j);
        printf("thread %s: %ld events, %ld spans, %s, %s, dropped %lld, begun before %lld, "
               "open at write %lld\n",
               t->name, t->events, t->begins, t->balanced && !t->depth ? "balanced" : "NOT BALANCED",
               t->monotonic ? "monotonic" : "NOT MONOTONIC",
               (long long)json_object_get_int64(get(info, "dropped_events")),
               (long long)json_object_get_int64(get(info, "begins_before_window")),
               (long long)json_object_get_int64(get(info, "open_at_write")));
    }
    printf("dropped_events %lld, buffer %lld events per thread\n",
           (long long)json_object_get_int64(get(other, "dropped_events")),
           (long long)json_object_get_int64(get(other, "buffer_events_per_thread")));
    json_object *retired = NULL;
    if (json_object_object_get_ex(other, "retired_threads_dropped", &retired))
        printf("ended threads dropped %lld, their events %lld\n",
               (long long)json_object_get_int64(retired),
               (long long)json_object_get_int64(get(other, "retired_events_dropped")));
    json_object_put(o);
    return 0;
}
