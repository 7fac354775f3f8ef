/* span_index.c — finds the span holding a source line, for `spanprof coz`, in O(log S).
 *
 * coz names the line it sped up by path and number; spans have a file and a first..last line.
 * Scanning every span for every experiment is S × E work (minutes for 300,000 spans and 100,000
 * experiments). Instead the spans are grouped by file; each file's line axis is cut at every
 * span's first line and one past its last, and each piece remembers the narrowest span covering
 * it (computed once with a sweep and a heap). A query looks up the files with the experiment's
 * basename (every match rule needs the same basename), scores each file with file_match() and
 * finds the line's piece by binary search.
 *
 * The result is the same as the scan it replaces: best file match first, then the narrowest
 * span (a nested function inside its parent), then the span listed first in the profile. */
#include "format/format.h"

#include <stdlib.h>
#include <string.h>

struct file_ix {
    const char *file, *base;    /* the span's file as in the profile; its last component */
    size_t nseg;
    long *start;                /* piece k covers lines start[k] .. start[k+1]-1 */
    size_t *best;               /* its narrowest span, or NONE */
};

struct span_index {
    const struct sp_profile *p;
    struct file_ix *files;      /* sorted by base */
    size_t nfiles;
};

#define NONE ((size_t)-1)

static const char *base_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

int file_match(const char *coz, const char *json)
{
    while (json[0] == '.' && json[1] == '/')
        json += 2;
    if (!strcmp(coz, json))
        return 3;
    size_t lc = strlen(coz), lj = strlen(json);
    const char *longer = lc > lj ? coz : json, *shorter = lc > lj ? json : coz;
    size_t ll = lc > lj ? lc : lj, ls = lc > lj ? lj : lc;
    if (ls && !strcmp(longer + ll - ls, shorter) && longer[ll - ls - 1] == '/')
        return 2;
    return !strcmp(base_of(coz), base_of(json)) ? 1 : 0;
}

static const struct sp_profile *sort_p;

/* Spans by file, then first line (the sweep's order), then index. */
static int cmp_by_file(const void *a, const void *b)
{
    const struct sp_span *x = &sort_p->spans[*(const size_t *)a], *y = &sort_p->spans[*(const size_t *)b];
    int r = strcmp(x->file, y->file);
    if (!r)
        r = x->line < y->line ? -1 : x->line > y->line;
    if (!r)
        r = *(const size_t *)a < *(const size_t *)b ? -1 : 1;
    return r;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return x < y ? -1 : x > y;
}

static int cmp_file_base(const void *a, const void *b)
{
    const struct file_ix *x = a, *y = b;
    int r = strcmp(x->base, y->base);
    return r ? r : strcmp(x->file, y->file);
}

/* The heap orders candidate spans narrowest first, then by index. */
static int narrower(const struct sp_profile *p, size_t a, size_t b)
{
    long wa = p->spans[a].last_line - p->spans[a].line, wb = p->spans[b].last_line - p->spans[b].line;
    return wa != wb ? wa < wb : a < b;
}

static void heap_push(const struct sp_profile *p, size_t *h, size_t *n, size_t v)
{
    size_t i = (*n)++;
    while (i && narrower(p, v, h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = v;
}

static void heap_pop(const struct sp_profile *p, size_t *h, size_t *n)
{
    size_t v = h[--*n], i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && narrower(p, h[c + 1], h[c]))
            c++;
        if (!narrower(p, h[c], v))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = v;
}

/* Pieces of one file from its spans ids[0..n), which are sorted by first line. */
static void build_file(const struct sp_profile *p, const size_t *ids, size_t n, struct file_ix *f, size_t *heap)
{
    long *cuts = xmalloc(2 * n * sizeof *cuts);
    for (size_t i = 0; i < n; i++) {
        cuts[2 * i] = p->spans[ids[i]].line;
        cuts[2 * i + 1] = p->spans[ids[i]].last_line + 1;
    }
    qsort(cuts, 2 * n, sizeof *cuts, cmp_long);
    size_t k = 0;
    for (size_t i = 0; i < 2 * n; i++)
        if (k == 0 || cuts[i] != cuts[k - 1])
            cuts[k++] = cuts[i];
    f->nseg = k;
    f->start = cuts;
    f->best = xmalloc(k * sizeof *f->best);
    size_t next = 0, hn = 0;
    for (size_t s = 0; s < k; s++) {
        while (next < n && p->spans[ids[next]].line <= cuts[s])
            heap_push(p, heap, &hn, ids[next++]);
        while (hn && p->spans[heap[0]].last_line < cuts[s])
            heap_pop(p, heap, &hn);       /* ended before this piece: gone for good */
        f->best[s] = hn ? heap[0] : NONE;
    }
}

struct span_index *span_index_build(const struct sp_profile *p)
{
    struct span_index *ix = xmalloc(sizeof *ix);
    ix->p = p;
    ix->files = NULL;
    ix->nfiles = 0;
    size_t n = p->nspans;
    size_t *ids = xmalloc((n ? n : 1) * sizeof *ids), *heap = xmalloc((n ? n : 1) * sizeof *heap);
    for (size_t i = 0; i < n; i++)
        ids[i] = i;
    sort_p = p;
    qsort(ids, n, sizeof *ids, cmp_by_file);
    size_t cap = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && !strcmp(p->spans[ids[j]].file, p->spans[ids[i]].file))
            j++;
        if (ix->nfiles == cap)
            ix->files = xrealloc(ix->files, (cap = cap ? 2 * cap : 16) * sizeof *ix->files);
        struct file_ix *f = &ix->files[ix->nfiles++];
        f->file = p->spans[ids[i]].file;
        f->base = base_of(f->file);
        build_file(p, ids + i, j - i, f, heap);
        i = j;
    }
    if (ix->nfiles) /* a profile without spans has no file array: qsort's base may not be NULL */
        qsort(ix->files, ix->nfiles, sizeof *ix->files, cmp_file_base);
    free(ids);
    free(heap);
    return ix;
}

size_t span_index_find(const struct span_index *ix, const char *file, long line)
{
    const struct sp_profile *p = ix->p;
    const char *base = base_of(file);
    /* the first file with this basename */
    size_t lo = 0, hi = ix->nfiles;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(ix->files[mid].base, base) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t best = p->nspans;
    int best_match = 0;
    for (size_t i = lo; i < ix->nfiles && !strcmp(ix->files[i].base, base); i++) {
        const struct file_ix *f = &ix->files[i];
        int m = file_match(file, f->file);
        if (m == 0 || m < best_match)
            continue;
        /* the last piece starting at or before LINE */
        size_t a = 0, b = f->nseg;
        while (a < b) {
            size_t mid = a + (b - a) / 2;
            if (f->start[mid] <= line)
                a = mid + 1;
            else
                b = mid;
        }
        if (a == 0 || f->best[a - 1] == NONE)
            continue;
        size_t c = f->best[a - 1];
        if (m > best_match || narrower(p, c, best)) {
            best = c;
            best_match = m;
        }
    }
    return best;
}

void span_index_free(struct span_index *ix)
{
    if (!ix)
        return;
    for (size_t i = 0; i < ix->nfiles; i++) {
        free(ix->files[i].start);
        free(ix->files[i].best);
    }
    free(ix->files);
    free(ix);
}
