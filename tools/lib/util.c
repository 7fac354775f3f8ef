/* util.c — small helpers for the spanprof tool: allocation that never returns NULL, human
 * duration units, and a text-table printer that aligns UTF-8 text by characters. */
#define _GNU_SOURCE     /* vasprintf */
#include "lib/lib.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A command-line tool has nothing sensible to do when memory runs out: say so and stop. */
static void out_of_memory(void)
{
    fputs("spanprof: out of memory\n", stderr);
    exit(EXIT_BAD_INPUT);
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        out_of_memory();
    return p;
}

void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        out_of_memory();
    return p;
}

char *xstrdup(const char *s)
{
    char *d = strdup(s);
    if (!d)
        out_of_memory();
    return d;
}

char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    char *s;
    va_start(ap, fmt);
    int r = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (r < 0)
        out_of_memory();
    return s;
}

int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

int cmp_strp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char *fmt_duration(double ns)
{
    /* Switch unit at 1000 of the smaller one so a figure never has more than 3 integer digits,
     * and keep two decimals so columns have one shape. */
    if (ns < 1e3)
        return xasprintf("%.0f ns", ns);
    if (ns < 1e6)
        return xasprintf("%.2f µs", ns / 1e3);
    if (ns < 1e9)
        return xasprintf("%.2f ms", ns / 1e6);
    return xasprintf("%.2f s", ns / 1e9);
}

/* Characters, not bytes: UTF-8 continuation bytes (10xxxxxx) do not take a column. */
static size_t display_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            w++;
    return w;
}

void table_init(struct table *t, size_t ncols, const char *align)
{
    t->ncols = ncols;
    t->nrows = t->cap = 0;
    t->left = align;
    t->cells = NULL;
}

/* Room for one more row; returns its first cell. */
static char **next_row(struct table *t)
{
    if (t->nrows == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 16;
        t->cells = xrealloc(t->cells, t->cap * t->ncols * sizeof *t->cells);
    }
    return &t->cells[t->nrows++ * t->ncols];
}

void table_row(struct table *t, ...)
{
    char **row = next_row(t);
    va_list ap;
    va_start(ap, t);
    for (size_t c = 0; c < t->ncols; c++)
        row[c] = va_arg(ap, char *);
    va_end(ap);
}

void table_row_of(struct table *t, char **cells)
{
    memcpy(next_row(t), cells, t->ncols * sizeof *cells);
}

void table_print(struct table *t, const char *indent)
{
    size_t *w = xmalloc(t->ncols * sizeof *w);
    for (size_t c = 0; c < t->ncols; c++) {
        w[c] = 0;
        for (size_t r = 0; r < t->nrows; r++) {
            size_t cw = display_width(t->cells[r * t->ncols + c]);
            if (cw > w[c])
                w[c] = cw;
        }
    }
    for (size_t r = 0; r < t->nrows; r++) {
        /* Trailing blanks are left out so expected-output files stay clean. */
        fputs(indent, stdout);
        size_t pending = 0;
        for (size_t c = 0; c < t->ncols; c++) {
            const char *s = t->cells[r * t->ncols + c];
            size_t pad = w[c] - display_width(s);
            int left = t->left[c] == 'l';
            if (c > 0)
                pending += 2;
            if (!left)
                pending += pad;
            if (*s) {
                printf("%*s%s", (int)pending, "", s);
                pending = 0;
            }
            if (left)
                pending += pad;
        }
        putchar('\n');
    }
    free(w);
}

void table_free(struct table *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    t->cells = NULL;
    t->nrows = t->cap = 0;
}
