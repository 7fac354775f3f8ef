/* allocfolded.c — the memory flame graph (SPANPROF_ALLOC_FOLDED), written from the sampled
 * allocation stacks (SPANPROF_ALLOC_STACKS=1) that collect/allocsamples.c keeps per thread.
 *
 * Each line is  span;span;…;native;native VALUE : the span path of the innermost open span, then
 * the native frames between that span's function and the allocating call (outermost first, as
 * named by libspanprof-alloc.so), VALUE the estimated bytes allocated there.  A sample of an
 * allocation of s bytes, taken with mean interval T bytes, has probability 1 - exp(-s/T), so it
 * stands for s / (1 - exp(-s/T)) bytes (computed by the interposer); summing those is an unbiased
 * estimate of the bytes allocated on each stack.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "collect/collect.h"
#include "report/report.h"

/* libstdc++'s demangler, present in C++ programs: native frames come from the symbol table
 * mangled (_ZN5store6Parser5parseEi), span names are already readable.  Looked up at write time,
 * off the hot path; without it (a C program) names stay as they are. */
typedef char *(*demangle_fn)(const char *mangled, char *out, size_t *len, int *status);

/* Length of NAME without the suffix GCC gives its clones of a function (make.isra.0,
 * parse.constprop.1, f.part.0, f.cold; demangled: "f() [clone .isra.0]"), so a function and its
 * clones are one frame, as they are one function to the reader. */
static size_t without_clone_suffix(const char *name)
{
    const char *bracket = strstr(name, " [clone .");
    if (bracket)
        return (size_t)(bracket - name);
    static const char *const suffixes[] = { ".isra.", ".constprop.", ".part.", ".cold", ".lto_priv." };
    size_t len = strlen(name);
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        const char *at = strstr(name, suffixes[i]);
        if (at && at > name && (size_t)(at - name) < len)
            len = (size_t)(at - name);
    }
    return len;
}

static void put_native_name(FILE *f, const char *sep, const char *name, demangle_fn demangle)
{
    int status = -1;
    char *readable = demangle && name[0] == '_' && name[1] == 'Z' ? demangle(name, NULL, NULL, &status)
                                                                  : NULL;
    const char *shown = status == 0 && readable ? readable : name;
    fprintf(f, "%s%.*s", sep, (int)without_clone_suffix(shown), shown);
    free(readable);
}

struct line {
    char *text;
    double weight;
};

static int cmp_line(const void *a, const void *b)
{
    return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

/* "span;span;native;…" for sample S of thread T, malloc'd. */
static char *stack_text(const struct spanprof__view *v, const struct spanprof__thread *t,
                        const struct spanprof__alloc_sample *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    const struct spanprof__node *path[SPANPROF_FOLDED_MAX_DEPTH];
    size_t depth = 0;
    for (const struct spanprof__node *n = s->node; n && n->site && depth < SPANPROF_FOLDED_MAX_DEPTH;
         n = n->parent)
        path[depth++] = n;
    const char *sep = "";
    if (v->threads_root) {
        char label[32];
        fputs(spanprof__thread_label(t, label, sizeof label), f);
        sep = ";";
    }
    while (depth--) {
        fprintf(f, "%s%s", sep, path[depth]->site->name);
        sep = ";";
    }
    demangle_fn demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    for (size_t i = 0; i < s->n; i++) {
        put_native_name(f, sep, s->names[i], demangle);
        sep = ";";
    }
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

int spanprof__alloc_folded_write(FILE *f, const struct spanprof__view *v)
{
    size_t count = 0, cap = 0;
    struct line *lines = NULL;
    int rc = 0;
    for (size_t i = 0; i < v->nthreads && rc == 0; i++) {
        const struct spanprof__thread *t = v->threads[i];
        const struct spanprof__res_thread *rt = t->res;
        if (!rt)
            continue;
        for (const struct spanprof__alloc_sample *s = __atomic_load_n(&rt->samples, __ATOMIC_ACQUIRE);
             s; s = s->next) {
            if (count == cap) {
                cap = cap ? 2 * cap : 256;
                struct line *l = realloc(lines, cap * sizeof *l);
                if (!l) {
                    rc = -1;
                    break;
                }
                lines = l;
            }
            char *text = stack_text(v, t, s);
            if (!text) {
                rc = -1;
                break;
            }
            lines[count].text = text;
            lines[count++].weight = s->weight;
        }
    }
    if (rc == 0) {
        qsort(lines, count, sizeof *lines, cmp_line);
        for (size_t i = 0; i < count;) {
            double w = 0;
            size_t j = i;
            for (; j < count && strcmp(lines[j].text, lines[i].text) == 0; j++)
                w += lines[j].weight;
            if (fprintf(f, "%s %llu\n", lines[i].text, (unsigned long long)(w + 0.5)) < 0)
                rc = -1;
            i = j;
        }
    }
    for (size_t i = 0; i < count; i++)
        free(lines[i].text);
    free(lines);
    return rc;
}
