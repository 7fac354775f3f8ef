/* profdump.c — prints a spanprof profile (JSON and folded stacks) in a normalised, time-free
 * form, so tests can compare runs against expected files exactly.
 *
 *   profdump [--resources] PROFILE.json [PROFILE.folded]
 *   profdump --times PROFILE.json
 *   profdump --compensation PROFILE.json
 *   profdump --live SNAPSHOT.json
 *
 * Output, each section sorted:
 *   span NAME calls=N            one per span site in the JSON (sites with equal names summed)
 *   progress NAME hits=N         one per progress point in the JSON (equal names summed)
 *   anomaly KEY=N                the JSON "anomalies" counters that are non-zero
 *   threads=N                    the JSON "thread_count"
 *   stack A;B;C                  one per folded line, value dropped; "thread-1234" → "thread-N"
 * With --resources, also (see docs/manual.md, "Resource profile"):
 *   alloc NAME allocs=N bytes=N frees=N freed=N incl=A/B/F/G live=BLOCKS/BYTES peak=N
 *   latency NAME                 when p50_ns..max_ns are present (checked p50<=p90<=p99<=max)
 *   cpu NAME                     when cpu_ns is present (SPANPROF_CPU=1)
 * With --times, only the times, for a test that computes with them (shares of a run):
 *   NAME total_ns=N self_ns=N [cpu_total_ns=N cpu_self_ns=N samples=N] [cpu_ns=N]
 *   [recorded_total_ns=N recorded_self_ns=N]   in the JSON's order
 * With --live, a live snapshot's JSON part (live/protocol.h): what dump_json prints, then
 *   live pid=N seq=N exe=BASENAME host=set|empty start_unix_ns=set|missing
 *   histogram NAME count=N       per span with one (buckets ascending, their counts summing to N)
 * With --compensation, only the JSON's "compensation": "call_ns=X inside_ns=Y" (and
 *   " measured_call_ns=Z" when the run's times lowered it), "failed=REASON", or "none".
 * It also checks what is time-dependent but still has rules (self <= total, values are
 * non-negative integers, one line per stack) and exits 1 with a message when one is broken.
 * JSON is read with json-c, never grepped. */
#define _GNU_SOURCE /* asprintf, getline */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failed;
static int resources;

static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "profdump: %s: %s\n", what, detail);
    failed = 1;
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A growable list of output lines, sorted before printing. */
struct lines {
    char **items;
    size_t count, capacity;
};

static void lines_add(struct lines *lines, char *line)
{
    if (lines->count == lines->capacity) {
        lines->capacity = lines->capacity ? 2 * lines->capacity : 64;
        lines->items = realloc(lines->items, lines->capacity * sizeof *lines->items);
        if (!lines->items) {
            perror("profdump");
            exit(2);
        }
    }
    lines->items[lines->count++] = line;
}

static void lines_print_sorted(struct lines *lines)
{
    qsort(lines->items, lines->count, sizeof *lines->items, compare_strings);
    for (size_t i = 0; i < lines->count; i++)
        puts(lines->items[i]);
}

static int64_t get_int(json_object *object, const char *key, const char *where)
{
    json_object *value;
    if (!json_object_object_get_ex(object, key, &value) || !json_object_is_type(value, json_type_int)) {
        fail(where, key);
        return 0;
    }
    return json_object_get_int64(value);
}

static int has(json_object *object, const char *key)
{
    json_object *value;
    return json_object_object_get_ex(object, key, &value);
}

static void dump_resources(json_object *span, struct lines *out)
{
    json_object *jn;
    if (!json_object_object_get_ex(span, "name", &jn))
        return;
    const char *name = json_object_get_string(jn);
    char *line;
    if (has(span, "allocs")) {
        if (asprintf(&line,
                     "alloc %s allocs=%" PRId64 " bytes=%" PRId64 " frees=%" PRId64 " freed=%" PRId64
                     " incl=%" PRId64 "/%" PRId64 "/%" PRId64 "/%" PRId64 " live=%" PRId64 "/%" PRId64
                     " peak=%" PRId64,
                     name, get_int(span, "allocs", name), get_int(span, "alloc_bytes", name),
                     get_int(span, "frees", name), get_int(span, "free_bytes", name),
                     get_int(span, "allocs_incl", name), get_int(span, "alloc_bytes_incl", name),
                     get_int(span, "frees_incl", name), get_int(span, "free_bytes_incl", name),
                     get_int(span, "live_blocks", name), get_int(span, "live_bytes", name),
                     get_int(span, "peak_live_bytes", name)) < 0)
            exit(2);
        lines_add(out, line);
    }
    if (has(span, "p50_ns")) {
        int64_t p50 = get_int(span, "p50_ns", name), p90 = get_int(span, "p90_ns", name);
        int64_t p99 = get_int(span, "p99_ns", name), max = get_int(span, "max_ns", name);
        if (!(0 <= p50 && p50 <= p90 && p90 <= p99 && p99 <= max))
            fail(name, "needs 0 <= p50_ns <= p90_ns <= p99_ns <= max_ns");
        if (asprintf(&line, "latency %s", name) < 0)
            exit(2);
        lines_add(out, line);
    }
    if (has(span, "cpu_ns")) {
        if (get_int(span, "cpu_ns", name) < 0)
            fail(name, "negative CPU time");
        if (asprintf(&line, "cpu %s", name) < 0)
            exit(2);
        lines_add(out, line);
    }
}

static void dump_json(const char *path)
{
    json_object *root = json_object_from_file(path);
    if (!root) {
        fprintf(stderr, "profdump: %s: %s\n", path, json_util_get_last_err());
        exit(1);
    }
    json_object *spans;
    if (!json_object_object_get_ex(root, "spans", &spans) || !json_object_is_type(spans, json_type_array)) {
        fail(path, "no \"spans\" array");
        exit(1);
    }

    /* Sum calls per name: two static functions of the same name are one line. */
    size_t n = json_object_array_length(spans);
    const char **names = calloc(n + 1, sizeof *names);
    int64_t *calls = calloc(n + 1, sizeof *calls);
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++) {
        json_object *span = json_object_array_get_idx(spans, i), *name;
        if (!json_object_object_get_ex(span, "name", &name)) {
            fail(path, "span without a name");
            continue;
        }
        int64_t span_calls = get_int(span, "calls", "span field");
        int64_t total = get_int(span, "total_ns", "span field");
        int64_t self = get_int(span, "self_ns", "span field");
        if (self < 0 || total < 0 || self > total)
            fail(json_object_get_string(name), "needs 0 <= self_ns <= total_ns");
        size_t j = 0;
        while (j < distinct && strcmp(names[j], json_object_get_string(name)) != 0)
            j++;
        if (j == distinct)
            names[distinct++] = json_object_get_string(name);
        calls[j] += span_calls;
    }
    struct lines out = { 0 };
    for (size_t i = 0; resources && i < n; i++)
        dump_resources(json_object_array_get_idx(spans, i), &out);
    for (size_t j = 0; j < distinct; j++) {
        char *line;
        if (asprintf(&line, "span %s calls=%" PRId64, names[j], calls[j]) < 0)
            exit(2);
        lines_add(&out, line);
    }

    /* Progress points, hits summed per name like spans' calls. */
    json_object *progress;
    if (json_object_object_get_ex(root, "progress", &progress) && json_object_is_type(progress, json_type_array)) {
        size_t np = json_object_array_length(progress), pdistinct = 0;
        const char **pnames = calloc(np + 1, sizeof *pnames);
        int64_t *hits = calloc(np + 1, sizeof *hits);
        for (size_t i = 0; i < np; i++) {
            json_object *point = json_object_array_get_idx(progress, i), *name;
            if (!json_object_object_get_ex(point, "name", &name)) {
                fail(path, "progress point without a name");
                continue;
            }
            int64_t point_hits = get_int(point, "hits", "progress field");
            get_int(point, "line", "progress field");
            size_t j = 0;
            while (j < pdistinct && strcmp(pnames[j], json_object_get_string(name)) != 0)
                j++;
            if (j == pdistinct)
                pnames[pdistinct++] = json_object_get_string(name);
            hits[j] += point_hits;
        }
        for (size_t j = 0; j < pdistinct; j++) {
            char *line;
            if (asprintf(&line, "progress %s hits=%" PRId64, pnames[j], hits[j]) < 0)
                exit(2);
            lines_add(&out, line);
        }
    }

    json_object *anomalies;
    if (json_object_object_get_ex(root, "anomalies", &anomalies)) {
        json_object_object_foreach(anomalies, key, value) {
            char *line;
            if (json_object_get_int64(value) != 0 &&
                asprintf(&line, "anomaly %s=%" PRId64, key, json_object_get_int64(value)) >= 0)
                lines_add(&out, line);
        }
    }
    char *line;
    if (asprintf(&line, "threads=%" PRId64, get_int(root, "thread_count", "top-level field")) >= 0)
        lines_add(&out, line);
    lines_print_sorted(&out);
}

/* Replaces every "thread-DIGITS" frame by "thread-N": tids differ from run to run. */
static void normalise_thread_ids(char *stack)
{
    char *p = stack;
    while ((p = strstr(p, "thread-")) != NULL) {
        char *digits = p + strlen("thread-"), *end = digits;
        while (isdigit((unsigned char)*end))
            end++;
        if (end > digits && (*end == ';' || *end == '\0')) {
            *digits = 'N';
            memmove(digits + 1, end, strlen(end) + 1);
        }
        p = digits;
    }
}

static void dump_folded(const char *path)
{
    FILE *file = fopen(path, "r");
    if (!file) {
        fprintf(stderr, "profdump: %s: %s\n", path, strerror(errno));
        exit(1);
    }
    struct lines out = { 0 };
    char *text = NULL;
    size_t size = 0;
    ssize_t length;
    while ((length = getline(&text, &size, file)) > 0) {
        if (text[length - 1] == '\n')
            text[--length] = '\0';
        char *space = strrchr(text, ' ');
        if (!space || space == text || space[1] == '\0' || strspn(space + 1, "0123456789") != strlen(space + 1)) {
            fail("folded line is not 'STACK VALUE'", text);
            continue;
        }
        *space = '\0';
        normalise_thread_ids(text);
        char *line;
        if (asprintf(&line, "stack %s", text) < 0)
            exit(2);
        lines_add(&out, line);
    }
    fclose(file);
    free(text);
    qsort(out.items, out.count, sizeof *out.items, compare_strings);
    /* Aggregation means one line per stack; thread ids were the only thing told apart. */
    for (size_t i = 1; i < out.count; i++)
        if (strcmp(out.items[i - 1], out.items[i]) == 0 && strstr(out.items[i], "thread-N") == NULL)
            fail("stack appears twice", out.items[i]);
    lines_print_sorted(&out);
}

static void dump_times(const char *path)
{
    json_object *root = json_object_from_file(path), *spans;
    if (!root || !json_object_object_get_ex(root, "spans", &spans) ||
        !json_object_is_type(spans, json_type_array)) {
        fprintf(stderr, "profdump: %s: not a profile with a \"spans\" array\n", path);
        exit(1);
    }
    static const char *const keys[] = {"total_ns", "self_ns", "cpu_total_ns", "cpu_self_ns",
                                       "samples", "cpu_ns", "recorded_total_ns",
                                       "recorded_self_ns"};
    for (size_t i = 0; i < json_object_array_length(spans); i++) {
        json_object *span = json_object_array_get_idx(spans, i), *name;
        if (!json_object_object_get_ex(span, "name", &name))
            continue;
        printf("%s", json_object_get_string(name));
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
            if (k < 2 || has(span, keys[k]))
                printf(" %s=%" PRId64, keys[k], get_int(span, keys[k], json_object_get_string(name)));
        putchar('\n');
    }
    json_object_put(root);
}

static void dump_compensation(const char *path)
{
    json_object *root = json_object_from_file(path), *c, *v;
    if (!root) {
        fprintf(stderr, "profdump: %s: not a JSON profile\n", path);
        exit(1);
    }
    if (!json_object_object_get_ex(root, "compensation", &c)) {
        puts("none");
    } else if (json_object_object_get_ex(c, "failed", &v)) {
        printf("failed=%s\n", json_object_get_string(v));
    } else {
        static const char *const keys[] = {"call_ns", "inside_ns", "measured_call_ns"};
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
            if (json_object_object_get_ex(c, keys[k], &v))
                printf("%s%s=%.6f", k ? " " : "", keys[k], json_object_get_double(v));
            else if (k < 2)
                fail("compensation without", keys[k]);
        putchar('\n');
    }
    json_object_put(root);
}

/* A live snapshot's own fields (see the header). */
static void dump_live(const char *path)
{
    json_object *root = json_object_from_file(path), *v, *spans;
    if (!root) {
        fprintf(stderr, "profdump: %s: %s\n", path, json_util_get_last_err());
        exit(1);
    }
    const char *exe = json_object_object_get_ex(root, "exe", &v) ? json_object_get_string(v) : "";
    const char *host = json_object_object_get_ex(root, "host", &v) ? json_object_get_string(v) : "";
    printf("live pid=%" PRId64 " seq=%" PRId64 " exe=%s host=%s start_unix_ns=%s\n",
           get_int(root, "pid", "top-level field"), get_int(root, "live_seq", "top-level field"),
           strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe, *host ? "set" : "empty",
           get_int(root, "start_unix_ns", "top-level field") > 0 ? "set" : "missing");
    if (!json_object_object_get_ex(root, "spans", &spans))
        return;
    for (size_t i = 0; i < json_object_array_length(spans); i++) {
        json_object *span = json_object_array_get_idx(spans, i), *h, *buckets, *name;
        if (!json_object_object_get_ex(span, "histogram", &h))
            continue;
        json_object_object_get_ex(span, "name", &name);
        int64_t count = get_int(h, "count", "histogram field"), sum = 0, last = -1;
        get_int(h, "sum_ns", "histogram field");
        if (!json_object_object_get_ex(h, "buckets", &buckets))
            fail(path, "histogram without buckets");
        for (size_t b = 0; buckets && b < json_object_array_length(buckets); b++) {
            json_object *pair = json_object_array_get_idx(buckets, b);
            int64_t le = json_object_get_int64(json_object_array_get_idx(pair, 0));
            int64_t n = json_object_get_int64(json_object_array_get_idx(pair, 1));
            if (le <= last || n <= 0)
                fail(json_object_get_string(name), "needs ascending buckets, none empty");
            last = le;
            sum += n;
        }
        if (sum != count)
            fail(json_object_get_string(name), "needs bucket counts that sum to count");
        printf("histogram %s count=%" PRId64 "\n", json_object_get_string(name), count);
    }
    json_object_put(root);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--live") == 0) {
        dump_json(argv[2]);
        dump_live(argv[2]);
        return failed;
    }
    if (argc == 3 && strcmp(argv[1], "--times") == 0) {
        dump_times(argv[2]);
        return failed;
    }
    if (argc == 3 && strcmp(argv[1], "--compensation") == 0) {
        dump_compensation(argv[2]);
        return failed;
    }
    if (argc > 1 && strcmp(argv[1], "--resources") == 0) {
        resources = 1;
        argv++;
        argc--;
    }
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: profdump [--resources] PROFILE.json [PROFILE.folded]\n"
                        "       profdump --times PROFILE.json\n"
                        "       profdump --compensation PROFILE.json\n"
                        "       profdump --live SNAPSHOT.json\n");
        return 2;
    }
    dump_json(argv[1]);
    if (argc == 3)
        dump_folded(argv[2]);
    return failed;
}
