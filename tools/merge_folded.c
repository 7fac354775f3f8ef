/* merge_folded.c — merges folded-stack files ("outer;inner;leaf VALUE" lines, the runtime's
 * SPANPROF_FOLDED output and flamegraph.pl's input): the values of the same stack are summed.
 * The merged file lists stacks in byte order, so it does not depend on the order of its inputs.
 * A line that is not a stack and a number is an error naming the file and line. */
#include "tool.h"

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

int folded_merge_add_file(struct folded_merge *m, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "spanprof: cannot open '%s': %s\n", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t len;
    int rc = 0;
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (len == 0)
            continue;
        /* the value: the digits after the last space */
        char *sp = strrchr(line, ' ');
        char *end;
        errno = 0;
        unsigned long long v = sp && sp > line && sp[1] >= '0' && sp[1] <= '9' ? strtoull(sp + 1, &end, 10) : 0;
        if (!sp || sp == line || sp[1] < '0' || sp[1] > '9' || *end || errno == ERANGE) {
            fprintf(stderr, "spanprof: %s:%zu: not a folded stack line (\"outer;inner;leaf 123\")\n", path, lineno);
            rc = -1;
            break;
        }
        int added;
        size_t at = strmap_index(&m->stacks, line, (size_t)(sp - line), &added);
        if (added) {
            if (at == m->cap)
                m->values = xrealloc(m->values, (m->cap = m->cap ? 2 * m->cap : 1024) * sizeof *m->values);
            m->values[at] = 0;
        }
        if (m->values[at] > UINT64_MAX - v) {
            fprintf(stderr, "spanprof: %s:%zu: the merged value of this stack would exceed 2^64-1\n", path, lineno);
            rc = -1;
            break;
        }
        m->values[at] += v;
    }
    if (rc == 0 && ferror(f)) {
        fprintf(stderr, "spanprof: cannot read '%s': %s\n", path, strerror(errno));
        rc = -1;
    }
    free(line);
    fclose(f);
    return rc;
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
