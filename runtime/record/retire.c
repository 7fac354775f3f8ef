/* retire.c — sites of objects that are going away: each is replaced, wherever the recording
 * layer keeps a pointer to it, by a copy the runtime owns.
 *
 * A site is the plugin's static descriptor in the instrumented object's .data; call-tree nodes,
 * histograms and progress points point to it.  When that object is unloaded (dlclose) those
 * pointers would dangle, and every later write of the profile would read unmapped memory.  So
 * every such pointer is turned to a copy: same name, file, lines and id, in state OFF (nothing
 * calls it any more), in mmap'd memory that is never unmapped once a copy is in use.  Two passes, because the object
 * must still be mapped while its sites are read but the pointers may only change once it is
 * really gone (dlclose only drops a reference when others hold the object):
 *   spanprof__retire_collect  — before: a copy of every site in the object that anything
 *                               points to, in a table keyed by the old address;
 *   spanprof__retire_apply    — after: every pointer into the object, by address alone (no
 *                               read of the old site), replaced by its copy.
 * The runtime's own unload (config/unload.c) retires every site, with both passes at once.
 *
 * There is no registry of sites: the trees are it.  A site nobody points to needs no copy.  The
 * hot path is untouched: no code calls a copy, and the nodes it compares with the site it was
 * given simply do not match one.  Both passes run with the process lock held; nodes of running
 * threads are rewritten with atomic stores (a running thread may read them when it looks for a
 * child of another site, but none compares them with a retired site: that code is gone).
 */
#include <string.h>

#include "record/histogram.h"
#include "record/record.h"

/* Stands in for a site of an unloaded object that got a pointer between the two passes (code of
 * the object still running while it was unloaded: the program's bug, but no crash for it). */
static struct spanprof_site unknown_site = {
    .version = SPANPROF_SITE_VERSION,
    .name = "(unloaded)",
    .file = "?",
    .state = SPANPROF__SITE_OFF,
};

static int in_ranges(const struct spanprof__retire *r, const struct spanprof_site *s)
{
    uintptr_t a = (uintptr_t)s;
    for (size_t i = 0; i < r->nranges; i++)
        if (a >= r->ranges[i].lo && a < r->ranges[i].hi)
            return 1;
    return 0;
}

static struct spanprof__retired_site *slot(struct spanprof__retire *r, const struct spanprof_site *s)
{
    size_t mask = r->cap - 1;
    size_t i = ((uintptr_t)s >> 4) * 0x9e3779b97f4a7c15u >> 20 & mask;
    while (r->table[i].old && r->table[i].old != s)
        i = (i + 1) & mask;
    return &r->table[i];
}

static size_t round64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

static size_t copy_size(const struct spanprof_site *s)
{
    return round64(sizeof *s) + round64(s->name ? strlen(s->name) + 1 : 0) +
           round64(s->file ? strlen(s->file) + 1 : 0);
}

static const char *copy_string(char **at, const char *s)
{
    if (!s)
        return NULL;
    size_t len = strlen(s) + 1;
    char *c = memcpy(*at, s, len);
    *at += round64(len);
    return c;
}

/* Pass 1, for one pointer: S noted if it is retired (its copy is made once all are known). */
static void collect(struct spanprof__retire *r, const struct spanprof_site *s)
{
    if (!s || s == &unknown_site || (r->all ? s->state == SPANPROF__SITE_OFF : !in_ranges(r, s)))
        return; /* a copy already (state OFF), or a site that stays */
    struct spanprof__retired_site *e = slot(r, s);
    if (e->old || (r->used + 1) * 2 > r->cap)
        return; /* known, or the table is full (sized for every site id: cannot happen) */
    e->old = s;
    r->used++;
    r->bytes += copy_size(s);
}

/* The copies, in one mapping: kept once any is used, unmapped otherwise. */
static void make_copies(struct spanprof__retire *r)
{
    r->block = r->bytes ? spanprof__map(r->bytes) : NULL;
    char *at = r->block;
    for (size_t i = 0; i < r->cap; i++) {
        struct spanprof__retired_site *e = &r->table[i];
        if (!e->old)
            continue;
        if (!at) {
            e->copy = &unknown_site; /* out of memory: a name lost, but nothing dangles */
            continue;
        }
        const struct spanprof_site *s = e->old;
        struct spanprof_site *c = (struct spanprof_site *)at;
        at += round64(sizeof *c);
        *c = *s;
        c->name = copy_string(&at, s->name);
        c->file = copy_string(&at, s->file);
        c->state = SPANPROF__SITE_OFF;
        c->coz_begin = NULL; /* coz's counters: nothing counts through a copy */
        if (c->kind != SPANPROF_KIND_PROGRESS)
            c->coz_end = NULL; /* a progress point's own hit counter stays */
        e->copy = c;
    }
}

const struct spanprof_site *spanprof__retired(struct spanprof__retire *r,
                                              const struct spanprof_site *s)
{
    if (!s || (!r->all && !in_ranges(r, s)))
        return s;
    struct spanprof__retired_site *e = slot(r, s);
    if (e->old)
        return e->copy;
    return r->all ? s : &unknown_site;
}

typedef void (*visit_fn)(struct spanprof__retire *r, const struct spanprof_site **p);

static void visit_collect(struct spanprof__retire *r, const struct spanprof_site **p)
{
    collect(r, *p);
}

static void visit_apply(struct spanprof__retire *r, const struct spanprof_site **p)
{
    const struct spanprof_site *s = *p, *c = spanprof__retired(r, s);
    if (c != s)
        __atomic_store_n(p, c, __ATOMIC_RELAXED);
}

struct walk {
    struct spanprof__retire *r;
    visit_fn fn;
};

static int visit_node(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)depth;
    struct walk *w = ctx;
    w->fn(w->r, &n->site);
    return 1;
}

static void visit_all(struct spanprof__retire *r, visit_fn fn)
{
    struct walk w = {r, fn};
    for (struct spanprof__thread *t = spanprof__g.threads; t; t = t->next) {
        spanprof__tree_walk(&t->root, visit_node, NULL, &w);
        struct spanprof__hist_table *h = __atomic_load_n(&t->hists, __ATOMIC_ACQUIRE);
        for (size_t i = 0; h && i < h->cap; i++)
            if (h->v[i])
                fn(r, &h->v[i]->site);
    }
    for (struct spanprof__progress_point *p = spanprof__progress_points; p; p = p->next)
        fn(r, &p->site);
}

int spanprof__retire_collect(struct spanprof__retire *r)
{
    size_t cap = 64;
    while (cap < 4 * ((size_t)spanprof__g.next_site_id + 1))
        cap *= 2;
    r->table = spanprof__map(cap * sizeof *r->table);
    if (!r->table)
        return -1;
    r->cap = cap;
    r->used = r->bytes = 0;
    r->applied = 0;
    visit_all(r, visit_collect);
    make_copies(r);
    return 0;
}

void spanprof__retire_apply(struct spanprof__retire *r)
{
    r->applied = 1; /* the copies are in use from now on (the trace rings' too) */
    visit_all(r, visit_apply);
}

void spanprof__retire_end(struct spanprof__retire *r)
{
    if (r->block && !r->applied) /* nothing went away after all: the copies are not needed */
        spanprof__unmap(r->block, r->bytes);
    r->block = NULL;
    if (r->table)
        spanprof__unmap(r->table, r->cap * sizeof *r->table);
    r->table = NULL;
}
