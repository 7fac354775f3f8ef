/* folded.c — writes folded stacks (flamegraph.pl / inferno / speedscope input):
 *
 *     [thread;]frame;frame;frame SELF_NS
 *
 * one line per distinct stack string, merged across nodes and threads, sorted by the stack
 * string (byte order) so the output is deterministic.  The value is self wall time in ns (with
 * SPANPROF=count: the number of calls that ended on that stack); a
 * stack that ran but took 0 ns still gets its line (value 0).  Frames are span names, or
 * "name (file:line)" with SPANPROF_FILE_LINE=1; ';' and line breaks in them become '_' since
 * they would split the format.  SPANPROF_THREADS=1 adds a root frame per thread (its name, else
 * thread-TID).  Stacks deeper than SPANPROF_FOLDED_MAX_DEPTH are cut: the deeper part's self
 * time goes to "...;[truncated]".
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

struct entry {
    size_t off, len;
    uint64_t ns;
};

struct folded {
    const struct spanprof__view *v;
    char *path;        /* current stack string */
    size_t path_cap;
    size_t *lens;      /* lens[d] = length of the path down to depth d */
    char *text;        /* all line strings */
    size_t text_len, text_cap;
    struct entry *e;
    size_t n, cap;
    int oom;
};

static int reserve(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 1;
    size_t c = *cap ? *cap : 4096;
    while (c < need)
        c *= 2;
    char *b = realloc(*buf, c);
    if (!b)
        return 0;
    *buf = b;
    *cap = c;
    return 1;
}

/* Appends S (sanitised) to the current path at offset AT; returns the new length or 0. */
static size_t put(struct folded *F, size_t at, const char *s)
{
    size_t len = strlen(s);
    if (!reserve(&F->path, &F->path_cap, at + len + 1)) {
        F->oom = 1;
        return 0;
    }
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        F->path[at + i] = (c == ';' || c == '\n' || c == '\r') ? '_' : c;
    }
    return at + len;
}

static size_t put_frame(struct folded *F, size_t at, int sep, const struct spanprof_site *site)
{
    if (sep) {
        if (!reserve(&F->path, &F->path_cap, at + 2)) {
            F->oom = 1;
            return 0;
        }
        F->path[at++] = ';';
    }
    at = put(F, at, site->name ? site->name : "?");
    if (F->v->file_line && !F->oom) {
        char buf[32];
        at = put(F, at, " (");
        at = put(F, at, site->file ? site->file : "?");
        snprintf(buf, sizeof buf, ":%u)", site->first_line);
        at = put(F, at, buf);
    }
    return at;
}

static void add_line(struct folded *F, size_t len, uint64_t ticks)
{
    if (F->n == F->cap) {
        size_t cap = F->cap ? F->cap * 2 : 256;
        struct entry *e = realloc(F->e, cap * sizeof *e);
        if (!e) {
            F->oom = 1;
            return;
        }
        F->e = e;
        F->cap = cap;
    }
    if (!reserve(&F->text, &F->text_cap, F->text_len + len + 1)) {
        F->oom = 1;
        return;
    }
    memcpy(F->text + F->text_len, F->path, len);
    F->e[F->n++] = (struct entry){F->text_len, len, spanprof__ticks_to_ns(F->v, ticks)};
    F->text_len += len;
}

static int sum_self(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)depth;
    *(uint64_t *)ctx += spanprof__node_self(n);
    return 1;
}

static int pre(struct spanprof__node *n, size_t depth, void *ctx)
{
    struct folded *F = ctx;
    if (F->oom)
        return 0;
    size_t len = put_frame(F, F->lens[depth - 1], depth > 1 || F->v->threads_root, n->site);
    if (F->oom)
        return 0;
    F->lens[depth] = len;
    if (__atomic_load_n(&n->calls, __ATOMIC_RELAXED) || __atomic_load_n(&n->total, __ATOMIC_RELAXED))
        add_line(F, len, F->v->counting ? __atomic_load_n(&n->calls, __ATOMIC_RELAXED)
                                        : spanprof__node_self(n));
    if (depth < SPANPROF_FOLDED_MAX_DEPTH)
        return 1;
    if (__atomic_load_n(&n->first_child, __ATOMIC_ACQUIRE)) {
        uint64_t below = 0;
        spanprof__tree_walk(n, sum_self, NULL, &below);
        if (!reserve(&F->path, &F->path_cap, len + 2)) {
            F->oom = 1;
            return 0;
        }
        F->path[len] = ';';
        len = put(F, len + 1, "[truncated]");
        if (!F->oom)
            add_line(F, len, below);
    }
    return 0;
}

static int cmp_entry(const void *a, const void *b, void *base)
{
    const struct entry *x = a, *y = b;
    size_t m = x->len < y->len ? x->len : y->len;
    int c = memcmp((const char *)base + x->off, (const char *)base + y->off, m);
    if (c)
        return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

int spanprof__folded_write(FILE *f, const struct spanprof__view *v)
{
    struct folded F = {.v = v};
    F.lens = calloc(SPANPROF_FOLDED_MAX_DEPTH + 1, sizeof *F.lens);
    if (!F.lens)
        return -1;
    for (size_t i = 0; i < v->nthreads && !F.oom; i++) {
        const struct spanprof__thread *t = v->threads[i];
        F.lens[0] = 0;
        if (v->threads_root) {
            char buf[32];
            F.lens[0] = put(&F, 0, spanprof__thread_label(t, buf, sizeof buf));
        }
        spanprof__tree_walk((struct spanprof__node *)&t->root, pre, NULL, &F);
    }
    int rc = F.oom ? -1 : 0;
    if (!F.oom) {
        qsort_r(F.e, F.n, sizeof *F.e, cmp_entry, F.text);
        for (size_t i = 0; i < F.n;) {
            uint64_t ns = F.e[i].ns;
            size_t j = i + 1;
            while (j < F.n && cmp_entry(&F.e[i], &F.e[j], F.text) == 0)
                ns += F.e[j++].ns;
            fprintf(f, "%.*s %" PRIu64 "\n", (int)F.e[i].len, F.text + F.e[i].off, ns);
            i = j;
        }
    }
    free(F.lens);
    free(F.path);
    free(F.text);
    free(F.e);
    return rc;
}
