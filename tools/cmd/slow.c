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
#include "format/format.h"
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

/* The fields of a capture's otherData, each checked for its type: one of another type is said on
 * stderr, naming the file and the field (jsonfield.c), and listed as "?". */
static const char *str(const char *path, json_object *o, const char *key)
{
    const char *s = "?";
    jf_string(path, o, key, &s);
    return s;
}

static void duration(char *buf, size_t size, const char *path, json_object *o, const char *key)
{
    uint64_t ns;
    if (jf_u64(path, o, key, &ns) != 1)
        snprintf(buf, size, "?");
    else if (ns >= 1000000000)
        snprintf(buf, size, "%.2f s", ns / 1e9);
    else if (ns >= 1000000)
        snprintf(buf, size, "%.2f ms", ns / 1e6);
    else if (ns >= 1000)
        snprintf(buf, size, "%.2f us", ns / 1e3);
    else
        snprintf(buf, size, "%" PRIu64 " ns", ns);
}

/* "slowest inside: NAME DURATION, ..." for the first five of the capture's slowest descendants. */
static void print_descendants(const char *path, json_object *capture)
{
    json_object *desc;
    if (jf_array(path, capture, "slowest_descendants", &desc) != 1 ||
        json_object_array_length(desc) == 0)
        return;
    printf("      slowest inside:");
    for (size_t k = 0; k < json_object_array_length(desc) && k < 5; k++) {
        json_object *x = json_object_array_get_idx(desc, k);
        if (!json_object_is_type(x, json_type_object)) {
            jf_invalid(path, "slowest_descendants", "an array of objects");
            break;
        }
        char d[32];
        duration(d, sizeof d, path, x, "duration_ns");
        printf("%s %s %s", k ? "," : "", str(path, x, "name"), d);
    }
    putchar('\n');
}

/* What a slow call's capture lacks, and why: the call's start when its thread wrote more inside
 * it than a capture keeps (capture.slow_call_whole), and the threads whose events start inside
 * the window, older ones overwritten before they could be kept (threads[].events_from_us). */
static void print_missing(const char *path, json_object *o, json_object *capture)
{
    int whole;
    if (jf_bool(path, capture, "slow_call_whole", &whole) == 1 && !whole)
        printf("      missing: the call's start (its thread wrote more inside it than a capture "
               "keeps)\n");
    json_object *threads;
    uint64_t from_us;
    if (jf_array(path, o, "threads", &threads) != 1 || jf_u64(path, capture, "from_us", &from_us) != 1)
        return;
    int said = 0;
    for (size_t k = 0; k < json_object_array_length(threads); k++) {
        json_object *t = json_object_array_get_idx(threads, k);
        uint64_t at, tid;
        if (jf_u64(path, t, "events_from_us", &at) != 1 || at <= from_us)
            continue;
        char tid_text[24] = "?";
        if (jf_u64(path, t, "tid", &tid) == 1)
            snprintf(tid_text, sizeof tid_text, "%" PRIu64, tid);
        printf("%s %s (tid %s) from +%.1f ms", said++ ? "," : "      events start late, their "
               "thread writing faster than its ring keeps:", str(path, t, "name"), tid_text,
               (double)(at - from_us) / 1e3);
    }
    if (said)
        putchar('\n');
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
        int found = jf_object(path, o, "capture", &c);
        if (found != 1) {
            printf("  %-24s  %-20s  %10s  %8s  %s (%s)\n", "?", "?", "?", "?", names[i],
                   found ? "damaged: otherData.capture is not an object"
                         : "not a capture: no otherData.capture");
        } else {
            const char *reason = str(path, c, "reason");
            int slow = strcmp(reason, "slow") == 0;
            char d[32] = "-", what[64], pid[24] = "?";
            uint64_t pid_value;
            if (slow) {
                duration(d, sizeof d, path, c, "duration_ns");
                snprintf(what, sizeof what, "%s", str(path, c, "span"));
            } else if (strcmp(reason, "crash") == 0)
                snprintf(what, sizeof what, "(crash: %s)", str(path, c, "signal"));
            else if (strcmp(reason, "request") == 0)
                snprintf(what, sizeof what, "(asked for)");
            else
                snprintf(what, sizeof what, "(%s)", reason);
            if (jf_u64(path, o, "pid", &pid_value) == 1)
                snprintf(pid, sizeof pid, "%" PRIu64, pid_value);
            printf("  %-24s  %-20s  %10s  %8s  %s\n", str(path, c, "time"), what, d, pid, names[i]);
            if (slow) {
                print_descendants(path, c);
                print_missing(path, o, c);
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
