/* flightcheck.c — checks a flight-recorder capture (SPANPROF_FLIGHT, SPANPROF_SLOW) and prints a
 * time-free summary that tests compare:
 *   - otherData.capture: its reason and span;
 *   - every event lies within the capture's window (from_us .. to_us), and the window is no
 *     longer than SPANPROF_FLIGHT seconds, or the slow call when that is longer;
 *   - the slow call: a span of that name on the capture's thread ending at the window's end and
 *     lasting at least --min-ms, and whether a span named --inner lies inside it (printed apart,
 *     on the last line, "inner: yes|no"); with --stalls FILE (the program's own "TID START END"
 *     of each call of the inner function, ns on CLOCK_MONOTONIC), only for a slow call that held
 *     one by the program's clock: "inner: not called" otherwise;
 *   - a crash capture: its signal, and whether the crashing thread has events in the window;
 *   - the outermost span of the slow call's (or the crashing) thread;
 *   - whether another thread has events in the window;
 *   - with --min-us: every span in the file lasts at least that long.
 * The file's nesting and timestamps are tracecheck's to check.
 *
 * usage: flightcheck [--min-ms MS] [--inner NAME [--stalls FILE]] [--min-us US] CAPTURE.trace.json */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 4096
#define MAX_THREADS 256

struct open_span {
    const char *name;
    double ts;
};

struct track {
    long tid;
    struct open_span stack[MAX_DEPTH];
    int depth;
    long events;
    const char *outermost; /* the name of its first begin */
};

static struct track tracks[MAX_THREADS];
static int ntracks;

static struct track *track(long tid)
{
    for (int i = 0; i < ntracks; i++)
        if (tracks[i].tid == tid)
            return &tracks[i];
    if (ntracks == MAX_THREADS) {
        fprintf(stderr, "flightcheck: too many threads\n");
        exit(1);
    }
    tracks[ntracks].tid = tid;
    return &tracks[ntracks++];
}

static double num(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) ? json_object_get_double(v) : -1;
}

static const char *str(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "";
}

/* Whether the program's FILE of "TID START END" (ns on CLOCK_MONOTONIC) holds a call on thread
 * TID whose middle lies in FROM_US..TO_US of the trace (µs since ORIGIN_NS). */
static int called_inside(const char *file, long tid, double origin_ns, double from_us, double to_us)
{
    FILE *f = fopen(file, "r");
    if (!f) {
        perror(file);
        exit(2);
    }
    double a, b;
    long t;
    int inside = 0;
    while (!inside && fscanf(f, "%ld %lf %lf", &t, &a, &b) == 3) {
        double mid_us = ((a + b) / 2 - origin_ns) / 1000;
        inside = t == tid && mid_us >= from_us && mid_us <= to_us;
    }
    fclose(f);
    return inside;
}

int main(int argc, char **argv)
{
    double min_ms = 0, min_us = 0;
    const char *inner = NULL, *stalls = NULL;
    int i = 1;
    for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
        if (!strcmp(argv[i], "--min-ms"))
            min_ms = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--min-us"))
            min_us = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--inner"))
            inner = argv[i + 1];
        else if (!strcmp(argv[i], "--stalls"))
            stalls = argv[i + 1];
    }
    if (i != argc - 1) {
        fprintf(stderr, "usage: flightcheck [--min-ms MS] [--inner NAME [--stalls FILE]] "
                        "[--min-us US] FILE\n");
        return 2;
    }
    json_object *root = json_object_from_file(argv[i]), *events, *other, *cap, *threads;
    if (!root || !json_object_object_get_ex(root, "traceEvents", &events) ||
        !json_object_object_get_ex(root, "otherData", &other) ||
        !json_object_object_get_ex(other, "capture", &cap)) {
        printf("not a capture\n");
        return 1;
    }
    const char *reason = str(cap, "reason"), *span = str(cap, "span");
    int slow = !strcmp(reason, "slow"), crash = !strcmp(reason, "crash");
    double from = num(cap, "from_us"), to = num(cap, "to_us"), window = num(cap, "window_s");
    double start = num(cap, "start_us");
    long slow_tid = slow || crash ? (long)num(cap, "tid") : -1;
    printf("capture: reason %s%s%s\n", reason, slow ? ", span " : crash ? ", signal " : "",
           slow ? span : crash ? str(cap, "signal") : "");
    double longest = window * 1e6;
    if (slow && to - start > longest)
        longest = to - start;
    printf("window no longer than SPANPROF_FLIGHT (or the slow call): %s\n",
           to - from <= longest + 2 ? "yes" : "no");

    long outside = 0, short_spans = 0;
    int found_slow = 0, has_inner = 0;
    double slow_begin = -1;
    size_t n = json_object_array_length(events);
    /* Spans inside the slow call, by begin: whether --inner is one of them. */
    for (size_t k = 0; k < n; k++) {
        json_object *e = json_object_array_get_idx(events, k);
        const char *ph = str(e, "ph");
        if (strcmp(ph, "B") && strcmp(ph, "E"))
            continue;
        double ts = num(e, "ts");
        long tid = (long)num(e, "tid");
        const char *name = str(e, "name");
        struct track *t = track(tid);
        t->events++;
        if (ts < from - 1 || ts > to + 1)
            outside++;
        if (ph[0] == 'B') {
            if (!t->outermost)
                t->outermost = name;
            if (t->depth < MAX_DEPTH)
                t->stack[t->depth] = (struct open_span){name, ts};
            t->depth++;
            continue;
        }
        if (t->depth == 0)
            continue;
        t->depth--;
        if (t->depth >= MAX_DEPTH)
            continue;
        struct open_span *o = &t->stack[t->depth];
        if (min_us > 0 && ts - o->ts < min_us - 0.01)
            short_spans++;
        if (tid == slow_tid && !strcmp(o->name, span) && ts >= to - 1 &&
            (ts - o->ts) >= min_ms * 1000 - 1) {
            found_slow = 1;
            slow_begin = o->ts;
        }
    }
    /* A second pass for the spans inside the slow call on its thread. */
    if (found_slow && inner)
        for (size_t k = 0; k < n && !has_inner; k++) {
            json_object *e = json_object_array_get_idx(events, k);
            if (strcmp(str(e, "ph"), "B") || (long)num(e, "tid") != slow_tid)
                continue;
            double ts = num(e, "ts");
            has_inner = !strcmp(str(e, "name"), inner) && ts >= slow_begin && ts <= to;
        }
    const char *inner_seen = has_inner ? "yes" : "no";
    if (found_slow && inner && stalls && !called_inside(stalls, slow_tid,
                                                        num(other, "start_monotonic_ns"),
                                                        slow_begin, to))
        inner_seen = "not called";
    int others = 0, own = 0;
    const char *outermost = "none";
    for (int k = 0; k < ntracks; k++) {
        others += tracks[k].tid != slow_tid && tracks[k].events > 0;
        own += tracks[k].tid == slow_tid && tracks[k].events > 0;
        if (tracks[k].tid == slow_tid && tracks[k].outermost)
            outermost = tracks[k].outermost;
    }
    printf("events outside the window: %ld\n", outside);
    if (slow)
        printf("slow call: a '%s' of at least %g ms ending the window on its thread: %s\n", span,
               min_ms, found_slow ? "yes" : "no");
    printf("another thread has events in the window: %s\n", others ? "yes" : "no");
    if (min_us > 0)
        printf("spans shorter than %g us: %ld\n", min_us, short_spans);
    if (json_object_object_get_ex(other, "threads", &threads))
        printf("threads: %zu\n", json_object_array_length(threads));
    if (crash)
        printf("the crashing thread has events in the window: %s\n", own ? "yes" : "no");
    if (slow || crash)
        printf("outermost span on the %s thread: %s\n", slow ? "slow call's" : "crashing",
               outermost);
    if (inner)
        printf("inner: %s\n", inner_seen);
    json_object_put(root);
    return 0;
}
