/* folded.c — writes folded stacks (flamegraph.pl / inferno / speedscope input):
 *
 *     [thread;]frame;frame;frame SELF_NS
 *
 * one line per distinct stack string, merged across nodes and threads, sorted by the stack
 * string (byte order) so the output is deterministic.  The value is self wall time in ns (with
 * SPANPROF=count: the number of calls that ended on that stack); a stack that ran but took 0 ns
 * still gets its line (value 0).  Frames are span names, or "name (file:line)" with
 * SPANPROF_FILE_LINE=1; ';' and line breaks in them become '_' since they would split the format.
 * SPANPROF_THREADS=1 adds a root frame per thread (its name, else thread-TID).
 *
 * The file is streamed, never built in memory: the writer walks the merged tree of all threads
 * (one node per distinct stack string) depth first, and at each level holds only the children
 * of the stack it is in, grouped by frame string and sorted.  Memory is the current path plus
 * those children along it; each call-tree node is formatted once and sorted once among its
 * siblings.  Depth-first order is byte order once each frame group is split in two items: its
 * own line "P;f" and the block of its descendants "P;f;..." — the block sorts as the string
 * "f;", which is not always next to "f" ("f1;g" comes after "f10").
 *
 * Limits (struct spanprof__folded_limits, from SPANPROF_FOLDED_*):
 *   - max_depth: below that many frames a subtree becomes one line "...;[truncated]" with the
 *     subtree's summed value;
 *   - max_bytes: once the next line would take the file past it, no further stack line is
 *     written; every value left out is added to one line "FIRST;[truncated]" per first frame
 *     (the thread with SPANPROF_THREADS=1), printed at the end of the file, out of sort order;
 *   - collapse: direct recursion folds into one frame (a;a;b;a → a;b;a).
 * Each cut prints one warning line on stderr naming the variable that raises the limit.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

static const struct spanprof__folded_limits default_limits = {
    .max_bytes = SPANPROF_FOLDED_MAX_BYTES,
    .max_depth = SPANPROF_FOLDED_MAX_DEPTH,
};

/* A call-tree node and its frame string (in its level's text). */
struct member {
    struct spanprof__node *node;
    size_t key, len;
};

/* What to print for one frame group: its own line, or its descendants. */
struct item {
    size_t first, count; /* the group's members */
    int block;
};

/* The children of the group the walk is in, at one depth. */
struct level {
    struct member *m;
    size_t nm, mcap;
    char *text;
    size_t tlen, tcap;
    struct item *it;
    size_t nit, icap, next;
    size_t path_len; /* length of the path above this level's frames */
};

struct folded {
    FILE *f;
    const struct spanprof__view *v;
    const struct spanprof__folded_limits *lim;
    struct level *lv;
    size_t nlv;
    char *path;
    size_t path_cap;
    int top;           /* level of the first frame: 0 (thread roots) or 1 */
    uint64_t written;  /* bytes of stack lines so far */
    int cut;           /* max_bytes reached */
    uint64_t *drop;    /* per member of the top level: value left out by the byte cap */
    char *dropped;     /* per member of the top level: some line was left out */
    uint64_t lines_dropped;
    int depth_cut;
    int oom;
};

static int grow(void *buf, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 1;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *b = realloc(*(void **)buf, c * size);
    if (!b)
        return 0;
    *(void **)buf = b;
    *cap = c;
    return 1;
}

/* Appends S sanitised (';' and line breaks become '_') to L's text. */
static void put(struct folded *F, struct level *L, const char *s)
{
    size_t len = strlen(s);
    if (!grow(&L->text, &L->tcap, L->tlen + len, 1)) {
        F->oom = 1;
        return;
    }
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        L->text[L->tlen++] = (c == ';' || c == '\n' || c == '\r') ? '_' : c;
    }
}

/* Adds node N with its frame string to L; a thread root gets its thread's label. */
static struct member *add(struct folded *F, struct level *L, struct spanprof__node *n,
                          const struct spanprof__thread *t)
{
    if (!grow(&L->m, &L->mcap, L->nm + 1, sizeof *L->m)) {
        F->oom = 1;
        return NULL;
    }
    size_t key = L->tlen;
    if (t) {
        char buf[32];
        put(F, L, spanprof__thread_label(t, buf, sizeof buf));
    } else {
        const struct spanprof_site *site = n->site;
        put(F, L, site->name ? site->name : "?");
        if (F->v->file_line) {
            char buf[32];
            put(F, L, " (");
            put(F, L, site->file ? site->file : "?");
            snprintf(buf, sizeof buf, ":%u)", site->first_line);
            put(F, L, buf);
        }
    }
    if (F->oom)
        return NULL;
    struct member *m = &L->m[L->nm++];
    *m = (struct member){n, key, L->tlen - key};
    return m;
}

static struct spanprof__node *first_child(const struct spanprof__node *n)
{
    return __atomic_load_n(&n->first_child, __ATOMIC_ACQUIRE);
}

/* Is child C's frame the group's frame, text KEY/LEN of level KL (direct recursion, with
 * collapse on)?  C's frame is formatted at the end of L's text and dropped again. */
static int same_frame(struct folded *F, struct level *L, struct spanprof__node *c,
                      const struct level *KL, size_t key, size_t len)
{
    if (!F->lim->collapse)
        return 0;
    size_t nm = L->nm, tlen = L->tlen;
    struct member *m = add(F, L, c, NULL);
    int same = m && m->len == len && memcmp(L->text + m->key, KL->text + key, len) == 0;
    L->nm = nm;
    L->tlen = tlen;
    return same;
}

static int cmp_member(const void *a, const void *b, void *text)
{
    const struct member *x = a, *y = b;
    int c = memcmp((char *)text + x->key, (char *)text + y->key, x->len < y->len ? x->len : y->len);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Items in byte order of their lines: a group's own line sorts as its key "f", its block of
 * descendant lines as "f;" (';' never occurs inside a frame). */
static int cmp_item(const void *a, const void *b, void *lp)
{
    const struct level *L = lp;
    const struct item *x = a, *y = b;
    const struct member *mx = &L->m[x->first], *my = &L->m[y->first];
    size_t n = mx->len < my->len ? mx->len : my->len;
    int c = memcmp(L->text + mx->key, L->text + my->key, n);
    if (c)
        return c;
    if (mx->len == my->len)
        return x->block - y->block;
    if (mx->len < my->len)
        return x->block ? (';' < L->text[my->key + n] ? -1 : 1) : -1;
    return y->block ? (L->text[mx->key + n] < ';' ? -1 : 1) : 1;
}

/* Fills level K with the children of the group FIRST, COUNT of level K-1 (of the threads' roots
 * for the top level: COUNT 0), grouped and sorted into items. */
static void expand(struct folded *F, size_t k, size_t first, size_t count)
{
    if (k >= F->nlv) {
        size_t n = F->nlv;
        if (!grow(&F->lv, &F->nlv, k + 1, sizeof *F->lv)) {
            F->oom = 1;
            return;
        }
        memset(F->lv + n, 0, (F->nlv - n) * sizeof *F->lv);
    }
    struct level *L = &F->lv[k];
    L->nm = L->tlen = L->nit = L->next = 0;
    if (k == 0) { /* thread roots, by label */
        for (size_t i = 0; i < F->v->nthreads && !F->oom; i++) {
            const struct spanprof__thread *t = F->v->threads[i];
            add(F, L, (struct spanprof__node *)&t->root, t);
        }
    } else if (!count) { /* the threads' outermost spans, merged */
        for (size_t i = 0; i < F->v->nthreads && !F->oom; i++)
            for (struct spanprof__node *c = first_child(&F->v->threads[i]->root); c && !F->oom;
                 c = c->next_sibling)
                add(F, L, c, NULL);
    } else {
        const struct level *P = &F->lv[k - 1];
        size_t key = P->m[first].key, len = P->m[first].len;
        for (size_t i = first; i < first + count && !F->oom; i++)
            for (struct spanprof__node *c = first_child(P->m[i].node); c && !F->oom;
                 c = c->next_sibling)
                /* k == 1 here: P holds thread roots, whose label is no frame to collapse into */
                if (k == 1 || !same_frame(F, L, c, P, key, len))
                    add(F, L, c, NULL);
    }
    /* Collapsed recursion: a child with its parent's frame joins the parent's group. */
    for (size_t i = 0; k > 0 && F->lim->collapse && i < L->nm && !F->oom; i++)
        for (struct spanprof__node *c = first_child(L->m[i].node); c && !F->oom; c = c->next_sibling)
            if (same_frame(F, L, c, L, L->m[i].key, L->m[i].len))
                add(F, L, c, NULL);
    if (F->oom || L->nm == 0) /* qsort_r wants an array, even of nothing */
        return;
    qsort_r(L->m, L->nm, sizeof *L->m, cmp_member, L->text);
    for (size_t i = 0; i < L->nm;) {
        size_t j = i;
        int line = 0, block = 0;
        for (; j < L->nm && cmp_member(&L->m[i], &L->m[j], L->text) == 0; j++) {
            const struct spanprof__node *n = L->m[j].node;
            line |= k > 0 && (__atomic_load_n(&n->calls, __ATOMIC_RELAXED) ||
                              __atomic_load_n(&n->total, __ATOMIC_RELAXED));
            for (struct spanprof__node *c = first_child(n); c && !block; c = c->next_sibling)
                block = k == 0 || !same_frame(F, L, c, L, L->m[i].key, L->m[i].len);
        }
        if (!grow(&L->it, &L->icap, L->nit + 2, sizeof *L->it)) {
            F->oom = 1;
            return;
        }
        if (line)
            L->it[L->nit++] = (struct item){i, j - i, 0};
        if (block)
            L->it[L->nit++] = (struct item){i, j - i, 1};
        i = j;
    }
    qsort_r(L->it, L->nit, sizeof *L->it, cmp_item, L);
}

/* A node's value on its own line: calls when counting, self CPU ns for SPANPROF_FOLDED_VALUE=cpu,
 * else self wall ns. */
static uint64_t value(const struct folded *F, struct spanprof__node *n)
{
    if (F->v->counting)
        return __atomic_load_n(&n->calls, __ATOMIC_RELAXED);
    if (F->v->cpu_values)
        return spanprof__view_cpu_self(n);
    return spanprof__ticks_to_ns(F->v, spanprof__view_self(F->v, n));
}

struct below {
    const struct spanprof__view *v;
    uint64_t ticks, calls, cpu_ns;
};

static int sum_below(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)depth;
    struct below *s = ctx;
    s->ticks += spanprof__view_self(s->v, n);
    s->calls += __atomic_load_n(&n->calls, __ATOMIC_RELAXED);
    if (s->v->cpu_values)
        s->cpu_ns += spanprof__view_cpu_self(n);
    return 1;
}

/* The value of everything below group IT of level L (for its "[truncated]" line): each member's
 * descendants, except the children collapsed into the group itself. */
static uint64_t value_below(struct folded *F, struct level *L, const struct item *it)
{
    uint64_t v = 0;
    for (size_t i = it->first; i < it->first + it->count; i++) {
        struct below s = {F->v, 0, 0, 0};
        size_t key = L->m[i].key, len = L->m[i].len;
        for (struct spanprof__node *c = first_child(L->m[i].node); c; c = c->next_sibling) {
            if (same_frame(F, L, c, L, key, len))
                continue;
            sum_below(c, 0, &s);
            spanprof__tree_walk(c, sum_below, NULL, &s);
        }
        v += F->v->counting     ? s.calls
             : F->v->cpu_values ? s.cpu_ns
                                : spanprof__ticks_to_ns(F->v, s.ticks);
    }
    return v;
}

/* Writes the path's first LEN bytes as a line with value V, or leaves it out past the byte cap
 * (V then goes to the top-level group TOPM's "[truncated]" line). */
static void line(struct folded *F, size_t len, uint64_t v, size_t topm)
{
    char num[24];
    int n = snprintf(num, sizeof num, " %" PRIu64 "\n", v);
    if (!F->cut && F->written + len + (size_t)n > F->lim->max_bytes)
        F->cut = 1;
    if (F->cut) {
        F->drop[topm] += v;
        F->dropped[topm] = 1;
        F->lines_dropped++;
        return;
    }
    fwrite(F->path, 1, len, F->f);
    fwrite(num, 1, (size_t)n, F->f);
    F->written += len + (size_t)n;
}

/* Appends frame M of level L to the path at L->path_len; returns the new length. */
static size_t push(struct folded *F, size_t k, const struct level *L, const struct member *m)
{
    size_t at = L->path_len, sep = (int)k > F->top;
    if (!grow(&F->path, &F->path_cap, at + sep + m->len + sizeof ";[truncated]", 1)) {
        F->oom = 1;
        return 0;
    }
    if (sep)
        F->path[at] = ';';
    memcpy(F->path + at + sep, L->text + m->key, m->len);
    return at + sep + m->len;
}

/* Each limit's warning is given once per process, at the first write it cuts: a program dumping
 * every few seconds would otherwise repeat it at every dump. */
static int warned_bytes, warned_depth;

int spanprof__folded_write(FILE *f, const struct spanprof__view *v)
{
    struct folded F = {.f = f, .v = v, .lim = v->folded_limits ? v->folded_limits : &default_limits};
    F.top = v->threads_root ? 0 : 1;
    expand(&F, F.top, 0, 0);
    if (!F.oom) {
        size_t n = F.lv[F.top].nm ? F.lv[F.top].nm : 1;
        F.drop = calloc(n, sizeof *F.drop);
        F.dropped = calloc(n, 1);
        F.oom = !F.drop || !F.dropped;
    }
    size_t topm = 0; /* the top-level group the walk is in */
    for (size_t k = F.top; !F.oom && k >= (size_t)F.top && k != (size_t)-1;) {
        struct level *L = &F.lv[k];
        if (L->next == L->nit) {
            k--;
            continue;
        }
        const struct item *it = &L->it[L->next++];
        const struct member *m = &L->m[it->first];
        if ((int)k == F.top)
            topm = it->first;
        size_t len = push(&F, k, L, m);
        if (F.oom)
            break;
        if (!it->block) {
            uint64_t sum = 0;
            for (size_t i = it->first; i < it->first + it->count; i++)
                sum += value(&F, L->m[i].node);
            line(&F, len, sum, topm);
        } else if (k > 0 && k >= F.lim->max_depth) {
            memcpy(F.path + len, ";[truncated]", sizeof ";[truncated]" - 1);
            F.depth_cut = 1;
            line(&F, len + sizeof ";[truncated]" - 1, value_below(&F, L, it), topm);
        } else {
            expand(&F, k + 1, it->first, it->count);
            /* expand may move the levels */
            if (!F.oom)
                F.lv[k + 1].path_len = len;
            k++;
        }
    }
    if (!F.oom && F.lines_dropped) {
        /* One line per first frame whose lines were left out, in the first frames' order. */
        struct level *L = &F.lv[F.top];
        for (size_t i = 0; i < L->nm; i++) {
            if (!F.dropped[i])
                continue;
            fprintf(f, "%.*s;[truncated] %" PRIu64 "\n", (int)L->m[i].len, L->text + L->m[i].key,
                    F.drop[i]);
        }
        if (!__atomic_exchange_n(&warned_bytes, 1, __ATOMIC_RELAXED))
            fprintf(stderr,
                "spanprof: warning: folded stacks cut at %" PRIu64 " bytes: %" PRIu64
                " more lines went into '[truncated]' lines; SPANPROF_FOLDED_MAX_BYTES raises the "
                "limit\n",
                F.lim->max_bytes, F.lines_dropped);
    }
    if (!F.oom && F.depth_cut && !__atomic_exchange_n(&warned_depth, 1, __ATOMIC_RELAXED))
        fprintf(stderr,
                "spanprof: warning: folded stacks deeper than %" PRIu64 " frames were cut into "
                "'[truncated]' lines; SPANPROF_FOLDED_MAX_DEPTH raises the limit\n",
                (uint64_t)F.lim->max_depth);
    for (size_t i = 0; i < F.nlv; i++) {
        free(F.lv[i].m);
        free(F.lv[i].text);
        free(F.lv[i].it);
    }
    free(F.lv);
    free(F.path);
    free(F.drop);
    free(F.dropped);
    return F.oom ? -1 : 0;
}
