/* siteretire.c — sites of objects that are going away: each is replaced, wherever the recording
 * layer keeps a pointer to it, by a copy the runtime owns.
 *
 * A site is the plugin's static descriptor in the instrumented object's .data; call-tree nodes,
 * histograms and progress points point to it.  When that object is unloaded (dlclose) those
 * pointers would dangle, and every later write of the profile would read unmapped memory.  So
 * every such pointer is turned to a copy: same name, file, lines and id, in state OFF (nothing
 * calls it any more), in mmap'd memory that is never unmapped.  One copy per name, file and
 * lines (the first one's id): a library loaded and unloaded again and again costs no more.
 * Two passes, because the object must still be mapped while its sites are read but the
 * pointers may only change once it is really gone (dlclose only drops a reference when others
 * hold the object):
 *   spanprof__retire_collect  — before: the copy of every site in the object that anything
 *                               points to, in a table keyed by the old address;
 *   spanprof__retire_apply    — after: every pointer into the object, by address alone (no
 *                               read of the old site), replaced by its copy.
 * The runtime's own unload (lifecycle/unload.c) retires every site, with both passes at once.  When
 * the library is loaded again, its sites take their copies' place (spanprof__retire_revive).
 *
 * There is no registry of sites: the trees are it.  A site nobody points to needs no copy.  The
 * hot path is untouched: no code calls a copy, and the nodes it compares with the site it was
 * given simply do not match one.  Both passes run with the process lock held; nodes of running
 * threads are rewritten with atomic stores (a running thread may read them when it looks for a
 * child of another site, but none compares them with a retired site: that code is gone).
 */
#include <stdlib.h>
#include <string.h>

#include "record/histogram.h"
#include "record/record.h"
#include "record/siteretire.h"

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

static struct spanprof__retired_site *slot(struct spanprof__retire *r,
                                           const struct spanprof_site *s)
{
    size_t mask = r->cap - 1;
    size_t i = ((uintptr_t)s >> 4) * 0x9e3779b97f4a7c15u >> 20 & mask;
    while (r->table[i].old && r->table[i].old != s)
        i = (i + 1) & mask;
    return &r->table[i];
}

/* Every copy made so far, by name, file and lines: a library unloaded and loaded again a thousand
 * times gets one copy per site, not a thousand.  Open addressing, grown by doubling; under the
 * process lock, like the arena the copies live in. */
static struct spanprof__arena copies_arena;
static struct spanprof_site **known;
static size_t known_cap, known_n;

static int same_string(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static int same_site(const struct spanprof_site *a, const struct spanprof_site *b)
{
    return a->kind == b->kind && a->first_line == b->first_line &&
           a->last_line == b->last_line && same_string(a->name, b->name) &&
           same_string(a->file, b->file);
}

static size_t hash_site(const struct spanprof_site *s)
{
    size_t h = 1469598103934665603u ^ s->first_line ^ ((size_t)s->kind << 32);
    for (const char *p = s->name ? s->name : ""; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211u;
    for (const char *p = s->file ? s->file : ""; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211u;
    return h;
}

static struct spanprof_site **known_slot(struct spanprof_site **v, size_t cap,
                                         const struct spanprof_site *s)
{
    size_t i = hash_site(s) & (cap - 1);
    while (v[i] && !same_site(v[i], s))
        i = (i + 1) & (cap - 1);
    return &v[i];
}

static int known_grow(void)
{
    size_t cap = known_cap ? 2 * known_cap : 256;
    struct spanprof_site **v = spanprof__map(cap * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < known_cap; i++)
        if (known[i])
            *known_slot(v, cap, known[i]) = known[i];
    if (known)
        spanprof__unmap(known, known_cap * sizeof *known);
    known = v;
    known_cap = cap;
    return 0;
}

static const char *copy_string(const char *s)
{
    if (!s)
        return NULL;
    size_t len = strlen(s) + 1;
    char *c = spanprof__arena_alloc(&copies_arena, len);
    return c ? memcpy(c, s, len) : "?";
}

/* The runtime's copy of S: one made before for a site of the same name, file and lines, else a
 * new one (NULL when out of memory). */
static struct spanprof_site *copy_of(const struct spanprof_site *s)
{
    if (2 * (known_n + 1) > known_cap && known_grow() != 0)
        return NULL;
    struct spanprof_site **k = known_slot(known, known_cap, s);
    if (*k)
        return *k; /* made at an earlier unload (perhaps revived by S since: see below) */
    struct spanprof_site *c = spanprof__arena_alloc(&copies_arena, sizeof *c);
    if (!c)
        return NULL;
    *c = *s;
    c->name = copy_string(s->name);
    c->file = copy_string(s->file);
    c->state = SPANPROF__SITE_OFF;
    c->coz_begin = NULL; /* coz's counters: nothing counts through a copy */
    if (c->kind != SPANPROF_KIND_PROGRESS)
        c->coz_end = NULL; /* a progress point's own hit counter stays */
    *k = c;
    known_n++;
    return c;
}

/* Pass 1, for one pointer: S noted, with its copy, if it is retired. */
static void collect(struct spanprof__retire *r, const struct spanprof_site *s)
{
    if (!s || s == &unknown_site || (r->all ? s->state == SPANPROF__SITE_OFF : !in_ranges(r, s)))
        return; /* a copy already (state OFF), or a site that stays */
    struct spanprof__retired_site *e = slot(r, s);
    if (e->old || (r->used + 1) * 2 > r->cap)
        return; /* known, or the table is full (sized for every site id: cannot happen) */
    struct spanprof_site *c = copy_of(s);
    e->old = s;
    e->copy = c ? c : &unknown_site; /* out of memory: a name lost, but nothing dangles */
    r->used++;
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
    if (c != s) {
        __atomic_store_n(p, c, __ATOMIC_RELAXED);
        if (c->coz_begin == s) /* the site that revived the copy is gone: free to revive again */
            ((struct spanprof_site *)c)->coz_begin = NULL;
    }
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
    r->table = calloc(cap, sizeof *r->table); /* temporary: malloc is cheaper than a mapping */
    if (!r->table)
        return -1;
    r->cap = cap;
    r->used = 0;
    visit_all(r, visit_collect);
    return 0;
}

void spanprof__retire_apply(struct spanprof__retire *r)
{
    visit_all(r, visit_apply);
    size_t n;
    struct spanprof_site *const *registry = spanprof__site_registry(&n);
    for (size_t id = 1; id < n; id++) /* the addresses only: the objects are gone */
        if (registry[id] && (r->all || in_ranges(r, registry[id])))
            spanprof__site_registry_forget((uint32_t)id);
}

void spanprof__retire_end(struct spanprof__retire *r)
{
    free(r->table);
    r->table = NULL;
}

/* ---- a library loaded again ---- */

struct swap {
    const struct spanprof_site *from, *to;
};

static int swap_node(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)depth;
    struct swap *w = ctx;
    if (n->site == w->from)
        __atomic_store_n(&n->site, w->to, __ATOMIC_RELAXED);
    return 1;
}

/* SITE, seen for the first time (site.c, lock held, state still NEW so no call of it has been
 * recorded yet), may be a site of a library loaded again.  Then the copy made when it was unloaded
 * comes back as SITE: SITE takes the copy's id, and every node and histogram that pointed to the
 * copy points to SITE (a progress point: its hit counter), so the library's calls add to the nodes
 * they had and the trees do not grow with each load.  A copy is revived by one live site at a time
 * (its coz_begin, unused in a copy, names that site until the site goes again: visit_apply). */
int spanprof__retire_revive(struct spanprof_site *site)
{
    if (!known_n)
        return 0;
    struct spanprof_site *c = *known_slot(known, known_cap, site);
    if (!c || c->coz_begin)
        return 0;
    if (c->kind == SPANPROF_KIND_PROGRESS) {
        struct spanprof__progress_point *p = c->coz_end;
        if (!p)
            return 0;
        p->site = site; /* its hit counter goes on (site.c finds it in coz_end) */
        site->coz_end = p;
    }
    c->coz_begin = site;
    site->id = c->id;
    struct swap w = {c, site};
    for (struct spanprof__thread *t = spanprof__g.threads; t; t = t->next) {
        spanprof__tree_walk(&t->root, swap_node, NULL, &w);
        struct spanprof__hist_table *h = __atomic_load_n(&t->hists, __ATOMIC_ACQUIRE);
        for (size_t i = 0; h && i < h->cap; i++)
            if (h->v[i] && h->v[i]->site == c)
                __atomic_store_n(&h->v[i]->site, site, __ATOMIC_RELAXED);
    }
    return 1;
}

void spanprof__retire_copies(void ***table, size_t **cap, size_t **n)
{
    *table = (void **)&known;
    *cap = &known_cap;
    *n = &known_n;
}
