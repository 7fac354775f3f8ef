/* folded_profile.c — a table of spans from folded stacks (SPANPROF_FOLDED, a merged file, or
 * any `frame;frame;... value` file), so that `report` and `diff` read what a run wrote by
 * default.  A frame's self value is the sum of the lines it ends; its total, of the lines it is
 * on (once per line, however often recursion repeats it).  Folded stacks carry no call counts,
 * files or lines: the profile says so (no_calls) and its spans have file "" and line 0. */
#include "format/format.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct folded_table {
    const char *path;
    struct strmap names;
    struct sp_span *spans;
    size_t cap;
    size_t *seen_on;   /* per span: the line it was last counted on (1-based), for totals */
};

static struct sp_span *span_of(struct folded_table *t, const char *name, size_t len)
{
    int added;
    size_t i = strmap_index(&t->names, name, len, &added);
    if (added) {
        if (i == t->cap) {
            t->cap = t->cap ? 2 * t->cap : 64;
            t->spans = xrealloc(t->spans, t->cap * sizeof *t->spans);
            t->seen_on = xrealloc(t->seen_on, t->cap * sizeof *t->seen_on);
        }
        t->spans[i] = (struct sp_span){.name = xasprintf("%.*s", (int)len, name), .file = xstrdup("")};
        t->seen_on[i] = 0;
    }
    return &t->spans[i];
}

/* *SUM += VALUE; -1, said (the file, line and span named), when that passes 2^64-1, as merge
 * refuses such a file. */
static int add_value(const struct folded_table *t, uint64_t *sum, unsigned long long value,
                     size_t lineno, const struct sp_span *s)
{
    if (value > UINT64_MAX - *sum) {
        fprintf(stderr, "spanprof: %s:%zu: the time of '%s' would exceed 2^64-1\n", t->path,
                lineno, s->name);
        return -1;
    }
    *sum += value;
    return 0;
}

/* One "a;b;c VALUE" line: each frame's total once, the last frame's self. */
static int add_line(void *ctx, char *stack, size_t len, unsigned long long value, size_t lineno)
{
    struct folded_table *t = ctx;
    struct sp_span *last = NULL;
    for (char *frame = stack, *end = stack + len;;) {
        size_t n = strcspn(frame, ";");
        last = span_of(t, frame, n);
        size_t i = (size_t)(last - t->spans);
        if (t->seen_on[i] != lineno) {
            t->seen_on[i] = lineno;
            if (add_value(t, &last->total_ns, value, lineno, last))
                return -1;
        }
        if (frame + n >= end)
            break;
        frame += n + 1;
    }
    return add_value(t, &last->self_ns, value, lineno, last);
}

int sp_profile_load_folded(const char *path, struct sp_profile *out)
{
    struct folded_table t = {.path = path};
    strmap_init(&t.names);
    int rc = folded_read(path, add_line, &t);
    free(t.seen_on);
    *out = (struct sp_profile){
        .path = path, .pid = -1, .thread_count = -1, .spans = t.spans, .nspans = t.names.n,
        .no_calls = 1,
    };
    strmap_free(&t.names);
    if (rc)
        sp_profile_free(out);
    return rc;
}

int sp_profile_load_any(const char *path, struct sp_profile *out)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "spanprof: cannot read '%s': %s\n", path, strerror(errno));
        return -1;
    }
    int c;
    while ((c = getc(f)) == ' ' || c == '\t' || c == '\n' || c == '\r')
        ;
    fclose(f);
    return c == '{' || c == EOF ? sp_profile_load(path, out) : sp_profile_load_folded(path, out);
}
