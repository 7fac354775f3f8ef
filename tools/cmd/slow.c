/* slow.c — the flight recorder's captures (SPANPROF_SLOW, `spanprof dump --flight`) listed: one
 * entry per SPAN.PID.TIME.trace.json of a directory, oldest first, with what otherData's
 * "capture" says — the span, the slow call's duration, when, and its slowest descendants.
 *
 * A capture is a Chrome trace of megabytes; its otherData comes last, so only the file's tail is
 * read and parsed (json-c, from the "otherData" key on).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/cmd.h"
#include "lib/lib.h"

#define TAIL (1 << 20)

static int is_capture(const char *name)
{
    size_t len = strlen(name);
    return name[0] != '.' && len > 11 && strcmp(name + len - 11, ".trace.json") == 0;
}

/* otherData of the trace at PATH (to be put), or NULL. */
static json_object *other_data(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    char *buf = xmalloc(TAIL + 1);
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    long from = size > TAIL ? size - TAIL : 0;
    size_t n = size >= 0 && fseek(f, from, SEEK_SET) == 0 ? fread(buf, 1, TAIL, f) : 0;
    fclose(f);
    buf[n] = 0;
    json_object *o = NULL;
    const char *key = memmem(buf, n, "\"otherData\":", 12);
    if (key) {
        json_tokener *tok = json_tokener_new();
        key += 12;
        o = json_tokener_parse_ex(tok, key, (int)(buf + n - key));
        json_tokener_free(tok);
    }
    free(buf);
    return o;
}

static const char *str(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : "?";
}

static uint64_t u64(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) ? (uint64_t)json_object_get_int64(v) : 0;
}

static void duration(char *buf, size_t size, uint64_t ns)
{
    if (ns >= 1000000000)
        snprintf(buf, size, "%.2f s", ns / 1e9);
    else if (ns >= 1000000)
        snprintf(buf, size, "%.2f ms", ns / 1e6);
    else if (ns >= 1000)
        snprintf(buf, size, "%.2f us", ns / 1e3);
    else
        snprintf(buf, size, "%" PRIu64 " ns", ns);
}

int slow_captures(const char *dir, char ***names, size_t *n)
{
    *names = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    size_t cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!is_capture(e->d_name))
            continue;
        if (*n == cap)
            *names = xrealloc(*names, (cap = cap ? 2 * cap : 16) * sizeof **names);
        (*names)[(*n)++] = xstrdup(e->d_name);
    }
    closedir(d);
    return 0;
}

/* Sort key: the capture's time, which its name carries after the pid. */
static const char *time_of(const char *name)
{
    size_t len = strlen(name) - 11;
    const char *p = name + len;
    int dots = 0;
    while (p > name && dots < 3)
        if (*--p == '.')
            dots++;
    return p;
}

static int by_time(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    int c = strcmp(time_of(x), time_of(y));
    return c ? c : strcmp(x, y);
}

int cmd_slow_list(const char *dir, int header_if_none)
{
    char **names;
    size_t n;
    if (slow_captures(dir, &names, &n)) {
        fprintf(stderr, "spanprof: cannot read '%s': %s\n", dir, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    qsort(names, n, sizeof *names, by_time);
    if (n || header_if_none)
        printf("%zu flight-recorder %s in %s/ (Chrome traces: spanprof view FILE, or Perfetto)\n",
               n, n == 1 ? "capture" : "captures", dir);
    if (n)
        printf("  %-24s  %-20s  %10s  %8s  %s\n", "when (UTC)", "span", "duration", "pid", "file");
    for (size_t i = 0; i < n; i++) {
        char *path = xasprintf("%s/%s", dir, names[i]);
        json_object *o = other_data(path), *c = NULL;
        if (!o || !json_object_object_get_ex(o, "capture", &c)) {
            printf("  %-24s  %-20s  %10s  %8s  %s (not a capture: no otherData.capture)\n", "?",
                   "?", "?", "?", names[i]);
        } else {
            int slow = strcmp(str(c, "reason"), "slow") == 0;
            char d[32] = "-", what[64];
            if (slow)
                duration(d, sizeof d, u64(c, "duration_ns"));
            if (strcmp(str(c, "reason"), "crash") == 0)
                snprintf(what, sizeof what, "(crash: %s)", str(c, "signal"));
            else
                snprintf(what, sizeof what, "%s", slow ? str(c, "span") : "(asked for)");
            printf("  %-24s  %-20s  %10s  %8" PRIu64 "  %s\n", str(c, "time"), what, d,
                   u64(o, "pid"), names[i]);
            json_object *desc = NULL;
            if (slow && json_object_object_get_ex(c, "slowest_descendants", &desc) &&
                !json_object_is_type(desc, json_type_array)) {
                fprintf(stderr, "spanprof: %s: 'slowest_descendants' is not an array; left out\n", path);
                desc = NULL;
            }
            if (slow && desc && json_object_array_length(desc) > 0) {
                printf("      slowest inside:");
                for (size_t k = 0; k < json_object_array_length(desc) && k < 5; k++) {
                    json_object *x = json_object_array_get_idx(desc, k);
                    duration(d, sizeof d, u64(x, "duration_ns"));
                    printf("%s %s %s", k ? "," : "", str(x, "name"), d);
                }
                putchar('\n');
            }
        }
        json_object_put(o);
        free(path);
        free(names[i]);
    }
    free(names);
    return 0;
}

int slow_is_capture_dir(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return 0;
    DIR *d = opendir(path);
    size_t captures = 0, others = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (is_capture(e->d_name))
            captures++;
        else if ((len > 5 && strcmp(e->d_name + len - 5, ".json") == 0) ||
                 (len > 7 && strcmp(e->d_name + len - 7, ".folded") == 0) ||
                 strcmp(e->d_name, "processes") == 0)
            others++;
    }
    if (d)
        closedir(d);
    return captures > 0 && others == 0;
}
