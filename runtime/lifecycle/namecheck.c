/* namecheck.c — at start-up, the span names given at run time (SPANPROF_SLOW's rules,
 * SPANPROF_SPANS, SPANPROF_COZ_PROGRESS, SPANPROF_COZ_LATENCY) checked against the spans of the
 * program and of the libraries loaded with it (the names the plugin puts in each module's section,
 * common/elfsection.h).  A glob that names no span gets one warning line: it would otherwise do
 * nothing, silently — a typo, or a function the plugin's size rule left without a span in a
 * whole-program build.  For the latter the line says how to give it one, found by the module's
 * symbol table.
 *
 * Modules without the section (not built with the plugin, unreadable, the vDSO) say nothing
 * either way, and a program none of whose modules has one is not checked; libraries opened later
 * (dlopen) are not seen, which the warning says.  The sections are read only when one of the
 * variables is set.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lifecycle/lifecycle.h"
#include "common/duration.h"
#include "common/elfsection.h"
#include "lifecycle/options.h"

/* The modules loaded now, by path (the executable as /proc/self/exe). */
struct modules {
    char **paths;
    size_t n, cap;
};

static int add_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct modules *m = data;
    const char *path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 16;
        char **p = realloc(m->paths, cap * sizeof *p);
        if (!p)
            return 1;
        m->paths = p;
        m->cap = cap;
    }
    if ((m->paths[m->n] = strdup(path)))
        m->n++;
    return 0;
}

/* What a glob that names no span costs, and how a function gets what the variable needs. */
struct use {
    const char *variable;
    const char *consequence;
    const char *remedy; /* a format, given the glob */
};

static const struct use slow_use = {
    "SPANPROF_SLOW", "no call of it is ever captured",
    "mark it __attribute__((span)), or name it in a file given to "
    "-fplugin-arg-spanplugin-functions=FILE (a span for a function of any size; "
    "-fplugin-arg-spanplugin-min-size=0 gives every function one)",
};
static const struct use spans_use = {
    "SPANPROF_SPANS", "it chooses nothing",
    "mark it __attribute__((span)), or name it in a file given to "
    "-fplugin-arg-spanplugin-functions=FILE (a span for a function of any size; "
    "-fplugin-arg-spanplugin-min-size=0 gives every function one)",
};
static const struct use progress_use = {
    "SPANPROF_COZ_PROGRESS", "coz sees no progress point for it",
    "rebuild with -fplugin-arg-spanplugin-progress=%s (a progress point of a function of any "
    "size) or mark it __attribute__((progress))",
};
static const struct use latency_use = {
    "SPANPROF_COZ_LATENCY", "coz sees no latency point for it",
    "mark it __attribute__((span)), or name it in a file given to "
    "-fplugin-arg-spanplugin-functions=FILE",
};

struct check {
    const struct modules *mods;
    const struct use *use;
    FILE *err;
};

/* One glob (LEN bytes at GLOB) of C's variable: a warning when no module's spans match it. */
static void check_glob(const struct check *c, const char *glob, size_t len)
{
    char one[256];
    if (len == 0 || len >= sizeof one)
        return;
    memcpy(one, glob, len);
    one[len] = 0;
    int seen = 0;
    for (size_t i = 0; i < c->mods->n; i++) {
        int found = spanprof__elf_names_match(c->mods->paths[i], one);
        if (found == 1)
            return;
        seen |= found == 0;
    }
    if (!seen)
        return; /* no module built with the plugin: nothing to tell */
    const char *where = NULL;
    for (size_t i = 0; i < c->mods->n && !where; i++)
        if (spanprof__elf_function_match(c->mods->paths[i], one) == 1)
            where = c->mods->paths[i];
    if (!where) {
        fprintf(c->err, "spanprof: warning: %s: '%s' names no span and no function of the "
                        "program or of the libraries loaded at start, so %s unless a library "
                        "loaded later has it\n",
                c->use->variable, one, c->use->consequence);
        return;
    }
    if (strcmp(where, "/proc/self/exe") == 0)
        where = "the program";
    fprintf(c->err, "spanprof: warning: %s: '%s' names no span, so %s: %s has the function but "
                    "no span for it (the plugin's size rule leaves small functions out): ",
            c->use->variable, one, c->use->consequence, where);
    fprintf(c->err, c->use->remedy, one);
    fputc('\n', c->err);
}

static void check_rule(const char *glob, size_t len, uint64_t ns, void *arg)
{
    (void)ns;
    check_glob(arg, glob, len);
}

/* Each glob of the comma-separated LIST. */
static void check_globs(const struct check *c, const char *list)
{
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        check_glob(c, p, len);
        p += len + (p[len] == ',');
    }
}

void spanprof__check_names(const struct spanprof__options *o, FILE *err)
{
    if (!o->slow && !(o->spans && *o->spans) && !o->coz_progress &&
        !(o->coz_latency && *o->coz_latency))
        return;
    struct modules mods = {0};
    dl_iterate_phdr(add_module, &mods);
    if (o->slow)
        spanprof__slow_rules(o->slow, check_rule, &(struct check){&mods, &slow_use, err});
    if (o->spans)
        check_globs(&(struct check){&mods, &spans_use, err}, o->spans);
    if (o->coz_progress)
        check_globs(&(struct check){&mods, &progress_use, err}, o->coz_progress);
    if (o->coz_latency)
        check_globs(&(struct check){&mods, &latency_use, err}, o->coz_latency);
    for (size_t i = 0; i < mods.n; i++)
        free(mods.paths[i]);
    free(mods.paths);
}
