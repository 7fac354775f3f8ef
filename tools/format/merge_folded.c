/* merge_folded.c — merges folded-stack files ("outer;inner;leaf VALUE" lines, the runtime's
 * SPANPROF_FOLDED output and flamegraph.pl's input): the values of the same stack are summed.
 * The merged file lists stacks in byte order, so it does not depend on the order of its inputs.
 * A line that is not a stack and a number is an error naming the file and line. */
#include "format/format.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct folded_merge {
    struct strmap stacks;
    uint64_t *values;
    size_t cap;
};

struct folded_merge *folded_merge_new(void)
{
    struct folded_merge *m = xmalloc(sizeof *m);
    strmap_init(&m->stacks);
    m->values = NULL;
    m->cap = 0;
    return m;
}

struct merge_line {
    struct folded_merge *m;
    const char *path;
};

static int merge_line(void *ctx, char *stack, size_t len, unsigned long long v, size_t lineno)
{
    struct merge_line *ml = ctx;
    struct folded_merge *m = ml->m;
    int added;
    size_t at = strmap_index(&m->stacks, stack, len, &added);
    if (added) {
        if (at == m->cap)
            m->values = xrealloc(m->values, (m->cap = m->cap ? 2 * m->cap : 1024) * sizeof *m->values);
        m->values[at] = 0;
    }
    if (m->values[at] > UINT64_MAX - v) {
        fprintf(stderr, "spanprof: %s:%zu: the merged value of this stack would exceed 2^64-1\n", ml->path, lineno);
        return -1;
    }
    m->values[at] += v;
    return 0;
}

int folded_merge_add_file(struct folded_merge *m, const char *path)
{
    struct merge_line ml = {m, path};
    return folded_read(path, merge_line, &ml);
}

static const char **sort_keys;

static int cmp_key(const void *a, const void *b)
{
    return strcmp(sort_keys[*(const size_t *)a], sort_keys[*(const size_t *)b]);
}

int folded_merge_write(struct folded_merge *m, FILE *out)
{
    size_t n = m->stacks.n;
    const char **keys = xmalloc((n ? n : 1) * sizeof *keys);
    size_t *order = xmalloc((n ? n : 1) * sizeof *order);
    for (size_t i = 0; i < m->stacks.cap; i++)
        if (m->stacks.slots[i].key)
            keys[m->stacks.slots[i].index] = m->stacks.slots[i].key;
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    sort_keys = keys;
    qsort(order, n, sizeof *order, cmp_key);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s %llu\n", keys[order[i]], (unsigned long long)m->values[order[i]]);
    free(keys);
    free(order);
    return ferror(out) ? -1 : 0;
}

void folded_merge_free(struct folded_merge *m)
{
    strmap_free(&m->stacks);
    free(m->values);
    free(m);
}
