/* json_profile.c — reads the JSON profile the spanprof runtime writes (SPANPROF_JSON=PATH).
 *
 * Span entries must carry every field the runtime guarantees (a profile without them cannot be
 * reported honestly); the run information is shown when present. Fields we do not know are
 * ignored, so newer runtimes can add some; the optional "progress" array is read when there. */
#include "spanprof.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads a whole file; on failure prints "cannot open" with the reason, as every command does. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "spanprof: cannot open '%s': %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 65536, n = 0;
    char *buf = xmalloc(cap + 1);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap)
            buf = xrealloc(buf, (cap *= 2) + 1);
    }
    int err = ferror(f) ? errno : 0;
    fclose(f);
    if (err) {
        fprintf(stderr, "spanprof: cannot read '%s': %s\n", path, strerror(err));
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

static const char *opt_string(json_object *o, const char *key)
{
    json_object *v;
    if (json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string))
        return json_object_get_string(v);
    return NULL;
}

/* Integer fields: json-c keeps values above INT64_MAX as uint64, hence get_uint64. */
static int get_uint(json_object *o, const char *key, uint64_t *out)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
        return -1;
    if (json_object_get_int64(v) < 0)
        return -1;
    *out = json_object_get_uint64(v);
    return 0;
}

static int bad(const char *path, const char *what, size_t idx, const char *field)
{
    fprintf(stderr, "spanprof: %s: %s %zu: missing or invalid field '%s'\n", path, what, idx, field);
    return -1;
}

int sp_profile_load(const char *path, struct sp_profile *p)
{
    memset(p, 0, sizeof *p);
    p->path = path;
    p->pid = p->thread_count = -1;

    size_t len;
    char *text = slurp(path, &len);
    if (!text)
        return -1;

    /* The tokener, not json_object_from_file, so we can say what is wrong and where. */
    json_tokener *tok = json_tokener_new();
    json_object *root = json_tokener_parse_ex(tok, text, (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    if (!root || jerr != json_tokener_success) {
        if (jerr == json_tokener_continue)
            fprintf(stderr, "spanprof: %s: not a JSON profile: unexpected end of file\n", path);
        else
            fprintf(stderr, "spanprof: %s: not a JSON profile: %s at byte %zu\n", path,
                    json_tokener_error_desc(jerr), json_tokener_get_parse_end(tok));
        json_tokener_free(tok);
        json_object_put(root);
        free(text);
        return -1;
    }
    json_tokener_free(tok);
    free(text);

    int rc = -1;
    json_object *spans, *v;
    if (!json_object_is_type(root, json_type_object) ||
        !json_object_object_get_ex(root, "spans", &spans) ||
        !json_object_is_type(spans, json_type_array)) {
        fprintf(stderr, "spanprof: %s: not a spanprof JSON profile (no \"spans\" array)\n", path);
        goto out;
    }

    const char *s;
    if ((s = opt_string(root, "program")))
        p->program = xstrdup(s);
    if ((s = opt_string(root, "start_time")))
        p->start_time = xstrdup(s);
    if ((s = opt_string(root, "clock")))
        p->clock = xstrdup(s);
    uint64_t u;
    if (get_uint(root, "pid", &u) == 0)
        p->pid = (long long)u;
    if (get_uint(root, "thread_count", &u) == 0)
        p->thread_count = (long long)u;
    if (get_uint(root, "wall_ns", &p->wall_ns) == 0)
        p->has_wall = 1;
    if (json_object_object_get_ex(root, "anomalies", &v) && json_object_is_type(v, json_type_object)) {
        get_uint(v, "abandoned_frames", &p->abandoned_frames);
        get_uint(v, "unmatched_exits", &p->unmatched_exits);
        get_uint(v, "open_frames", &p->open_frames);
    }

    p->nspans = json_object_array_length(spans);
    p->spans = xmalloc(p->nspans * sizeof *p->spans);
    for (size_t i = 0; i < p->nspans; i++) {
        json_object *e = json_object_array_get_idx(spans, i);
        struct sp_span *sp = &p->spans[i];
        uint64_t line, last;
        if (!json_object_is_type(e, json_type_object)) {
            fprintf(stderr, "spanprof: %s: span %zu is not an object\n", path, i);
            p->nspans = i;
            goto out;
        }
        const char *name = opt_string(e, "name"), *file = opt_string(e, "file");
        const char *missing = !name ? "name" : !file ? "file"
                            : get_uint(e, "line", &line) ? "line"
                            : get_uint(e, "last_line", &last) ? "last_line"
                            : get_uint(e, "calls", &sp->calls) ? "calls"
                            : get_uint(e, "total_ns", &sp->total_ns) ? "total_ns"
                            : get_uint(e, "self_ns", &sp->self_ns) ? "self_ns" : NULL;
        if (missing) {
            p->nspans = i;
            bad(path, "span", i, missing);
            goto out;
        }
        sp->name = xstrdup(name);
        sp->file = xstrdup(file);
        sp->line = (long)line;
        /* A site whose last line is unknown (0) or before its first still covers its first. */
        sp->last_line = (long)last < sp->line ? sp->line : (long)last;
    }

    if (json_object_object_get_ex(root, "progress", &v) && json_object_is_type(v, json_type_array)) {
        p->has_progress = 1;
        size_t n = json_object_array_length(v);
        p->progress = xmalloc(n * sizeof *p->progress);
        for (size_t i = 0; i < n; i++) {
            json_object *e = json_object_array_get_idx(v, i);
            const char *name = json_object_is_type(e, json_type_object) ? opt_string(e, "name") : NULL;
            if (!name) {
                bad(path, "progress point", i, "name");
                goto out;
            }
            if (get_uint(e, "hits", &p->progress[i].hits)) {
                bad(path, "progress point", i, "hits");
                goto out;
            }
            p->progress[i].name = xstrdup(name);
            p->nprogress = i + 1;
        }
    }
    rc = 0;
out:
    json_object_put(root);
    return rc;
}
