/* profdump.c — prints a spanprof profile (JSON and folded stacks) in a normalised, time-free
 * form, so tests can compare runs against expected files exactly.
 *
 *   profdump PROFILE.json [PROFILE.folded]
 *
 * Output, each section sorted:
 *   span NAME calls=N            one per span site in the JSON (sites with equal names summed)
 *   progress NAME hits=N         one per progress point in the JSON (equal names summed)
 *   anomaly KEY=N                the JSON "anomalies" counters that are non-zero
 *   threads=N                    the JSON "thread_count"
 *   stack A;B;C                  one per folded line, value dropped; "thread-1234" → "thread-N"
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

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: profdump PROFILE.json [PROFILE.folded]\n");
        return 2;
    }
    dump_json(argv[1]);
    if (argc == 3)
        dump_folded(argv[2]);
    return failed;
}
