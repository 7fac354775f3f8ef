/* test_folded_stream.c — the streaming folded writer: byte order where a frame is a prefix of
 * its sibling, the byte and depth limits with their '[truncated]' lines and warnings, collapsed
 * recursion, random trees against a reference that builds every line in memory and sorts, and
 * the SPANPROF_FOLDED_* variables. */
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#define SITE(var, name) static struct spanprof_site var = {1, 0, name, "s.c", 1, 2, 0, 0, NULL, NULL}
SITE(s_f, "f");
SITE(s_f1, "f1");
SITE(s_f10, "f10");
SITE(s_g, "g");
SITE(s_h, "h");
SITE(s_a, "a");
SITE(s_b, "b");
SITE(s_c, "c");

static char *folded_with(struct spanprof__view *v, const struct spanprof__folded_limits *lim,
                         char **err)
{
    v->folded_limits = lim;
    unit_stderr_begin();
    char *s = unit_folded(v);
    *err = unit_stderr_end();
    return s;
}

/* "f1;g" sorts after "f10" ('0' < ';'), and "f;h" after both ('1' < ';'): the writer must not
 * print a frame's descendants right after its own line. */
START_TEST(prefix_frames_in_byte_order)
{
    struct spanprof__thread *t = spanprof__thread_new();
    struct spanprof__node *f = unit_node(t, &t->root, &s_f, 1, 3, 1);
    unit_node(t, f, &s_h, 1, 1, 0);
    struct spanprof__node *f1 = unit_node(t, &t->root, &s_f1, 1, 10, 4);
    unit_node(t, f1, &s_g, 1, 4, 0);
    unit_node(t, &t->root, &s_f10, 1, 5, 0);
    struct spanprof__view v = unit_view(&t, 1);
    char *s = unit_folded(&v);
    ck_assert_str_eq(s, "f 2\n"
                        "f1 6\n"
                        "f10 5\n"
                        "f1;g 4\n"
                        "f;h 1\n");
    free(s);
}
END_TEST

/* a(30) -> b(30) -> c(20), a -> g(0): with a 12-byte cap "a 30" and "a;b 30" fit, the rest goes
 * to "a;[truncated]". */
static struct spanprof__thread *small_tree(const char *name, long tid)
{
    struct spanprof__thread *t = spanprof__thread_new();
    strcpy(t->name, name);
    t->tid = tid;
    struct spanprof__node *m = unit_node(t, &t->root, &s_a, 1, 100, 70);
    struct spanprof__node *w = unit_node(t, m, &s_b, 2, 50, 20);
    unit_node(t, w, &s_c, 4, 20, 0);
    unit_node(t, m, &s_g, 1, 20, 20);
    return t;
}

START_TEST(byte_cap)
{
    struct spanprof__thread *ts[2] = {small_tree("one", 1), small_tree("two", 2)};
    struct spanprof__view v = unit_view(ts, 1);
    struct spanprof__folded_limits lim = {.max_bytes = 12, .max_depth = 1024};
    char *err, *s = folded_with(&v, &lim, &err);
    ck_assert_str_eq(s, "a 30\n"
                        "a;b 30\n"
                        "a;[truncated] 20\n");
    ck_assert_str_eq(err, "spanprof: warning: folded stacks cut at 12 bytes: 2 more lines went into "
                          "'[truncated]' lines; SPANPROF_FOLDED_MAX_BYTES raises the limit\n");
    free(s);
    free(err);
    /* per thread with SPANPROF_THREADS=1: the second thread is left out whole */
    v.nthreads = 2;
    v.threads_root = 1;
    lim.max_bytes = 30;
    s = folded_with(&v, &lim, &err);
    ck_assert_str_eq(s, "one;a 30\n"
                        "one;a;b 30\n"
                        "one;[truncated] 20\n"
                        "two;[truncated] 80\n");
    ck_assert_str_eq(err, ""); /* the warning is given once per process: the first write said it */
    free(s);
    free(err);
    /* under the cap: no cut, no warning */
    lim.max_bytes = 1000;
    s = folded_with(&v, &lim, &err);
    ck_assert_ptr_null(strstr(s, "[truncated]"));
    ck_assert_str_eq(err, "");
    free(s);
    free(err);
}
END_TEST

/* a -> a -> a -> b, a -> c, a -> a -> c, a -> b -> a (indirect: kept) */
START_TEST(collapse_direct_recursion)
{
    struct spanprof__thread *t = spanprof__thread_new();
    struct spanprof__node *a1 = unit_node(t, &t->root, &s_a, 1, 100, 90);
    struct spanprof__node *a2 = unit_node(t, a1, &s_a, 1, 60, 50);
    struct spanprof__node *a3 = unit_node(t, a2, &s_a, 1, 30, 20);
    unit_node(t, a3, &s_b, 1, 20, 0);
    unit_node(t, a2, &s_c, 1, 20, 0);
    unit_node(t, a1, &s_c, 1, 10, 0);
    struct spanprof__node *b = unit_node(t, a1, &s_b, 1, 20, 5);
    unit_node(t, b, &s_a, 1, 5, 0);
    struct spanprof__view v = unit_view(&t, 1);
    struct spanprof__folded_limits lim = {.max_bytes = 1000, .max_depth = 1024};
    char *err, *s = folded_with(&v, &lim, &err);
    ck_assert_str_eq(s, "a 10\n"
                        "a;a 10\n"
                        "a;a;a 10\n"
                        "a;a;a;b 20\n"
                        "a;a;c 20\n"
                        "a;b 15\n"
                        "a;b;a 5\n"
                        "a;c 10\n");
    free(s);
    free(err);
    lim.collapse = 1;
    s = folded_with(&v, &lim, &err);
    ck_assert_str_eq(s, "a 30\n"
                        "a;b 35\n"
                        "a;b;a 5\n"
                        "a;c 30\n");
    free(s);
    free(err);
    /* collapsed frames do not count towards the depth limit; what is cut is summed once */
    lim.max_depth = 1;
    s = folded_with(&v, &lim, &err);
    ck_assert_str_eq(s, "a 30\n"
                        "a;[truncated] 70\n");
    ck_assert_str_eq(err, "spanprof: warning: folded stacks deeper than 1 frames were cut into "
                          "'[truncated]' lines; SPANPROF_FOLDED_MAX_DEPTH raises the limit\n");
    free(s);
    free(err);
    /* a group whose only children were collapsed into it has nothing below to cut */
    struct spanprof__thread *t2 = spanprof__thread_new();
    struct spanprof__node *x = unit_node(t2, &t2->root, &s_c, 1, 10, 4);
    unit_node(t2, x, &s_c, 1, 4, 0);
    struct spanprof__view v2 = unit_view(&t2, 1);
    s = folded_with(&v2, &lim, &err);
    ck_assert_str_eq(s, "c 10\n");
    ck_assert_str_eq(err, "");
    free(s);
    free(err);
    /* counting: the cut subtree's calls */
    v.counting = 1;
    s = folded_with(&v, &lim, &err);
    ck_assert_str_eq(s, "a 3\n"
                        "a;[truncated] 5\n");
    free(s);
    free(err);
}
END_TEST

/* ---- random trees against the reference --------------------------------------------------- */

static const char *const names[] = {"f", "f1", "f10", "f ", "a b", "a", "a;b", "a_b", "Z", "[x",
                                    "f-1"};
#define NNAMES (sizeof names / sizeof names[0])
static struct spanprof_site rsites[NNAMES * 2];

struct ref {
    char **line;
    uint64_t *val;
    size_t n, cap;
};

static void ref_add(struct ref *r, const char *s, uint64_t v)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 64;
        r->line = realloc(r->line, r->cap * sizeof *r->line);
        r->val = realloc(r->val, r->cap * sizeof *r->val);
    }
    r->line[r->n] = strdup(s);
    r->val[r->n++] = v;
}

/* Appends each child's lines; PATH[0..LEN) is N's stack, its last frame starting at LAST (for
 * collapsed recursion: a child with the same frame keeps N's path). */
static void ref_walk(struct ref *r, const struct spanprof__view *v, int collapse,
                     struct spanprof__node *n, char *path, size_t len, size_t last)
{
    for (struct spanprof__node *c = n->first_child; c; c = c->next_sibling) {
        size_t l = len, start;
        if (l)
            path[l++] = ';';
        start = l;
        for (const char *p = c->site->name; *p; p++)
            path[l++] = *p == ';' ? '_' : *p;
        if (v->file_line)
            l += (size_t)sprintf(path + l, " (%s:%u)", c->site->file, c->site->first_line);
        path[l] = 0;
        if (collapse && n->site && l - start == len - last && memcmp(path + start, path + last, len - last) == 0) {
            l = len; /* same frame as the parent: stays on the parent's line */
            start = last;
            path[l] = 0;
        }
        if (c->calls || c->total)
            ref_add(r, path, v->counting ? c->calls : spanprof__ticks_to_ns(v, spanprof__node_self(c)));
        ref_walk(r, v, collapse, c, path, l, start);
        path[len] = 0;
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(**(char *const *const *)a, **(char *const *const *)b);
}

static char *reference(const struct spanprof__view *v, int collapse)
{
    struct ref r = {0};
    char path[4096];
    for (size_t i = 0; i < v->nthreads; i++) {
        size_t len = 0;
        if (v->threads_root) {
            char buf[32];
            len = (size_t)sprintf(path, "%s", spanprof__thread_label(v->threads[i], buf, sizeof buf));
        }
        ref_walk(&r, v, collapse, &v->threads[i]->root, path, len, 0);
    }
    char ***idx = malloc((r.n + 1) * sizeof *idx);
    for (size_t i = 0; i < r.n; i++)
        idx[i] = &r.line[i];
    qsort(idx, r.n, sizeof *idx, cmp_str);
    char *out = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&out, &size);
    for (size_t i = 0; i < r.n;) {
        uint64_t sum = 0;
        size_t j = i;
        for (; j < r.n && strcmp(*idx[i], *idx[j]) == 0; j++)
            sum += r.val[idx[j] - r.line];
        fprintf(f, "%s %llu\n", *idx[i], (unsigned long long)sum);
        i = j;
    }
    fclose(f);
    for (size_t i = 0; i < r.n; i++)
        free(r.line[i]);
    free(r.line);
    free(r.val);
    free(idx);
    return out;
}

static void random_subtree(struct spanprof__thread *t, struct spanprof__node *n, int depth,
                           unsigned *seed)
{
    int kids = depth >= 6 ? 0 : rand_r(seed) % 5;
    for (int i = 0; i < kids; i++) {
        struct spanprof_site *site = &rsites[(size_t)rand_r(seed) % (NNAMES * 2)];
        struct spanprof__node *c = spanprof__tree_child(t, n, site, 0);
        uint64_t calls = (uint64_t)(rand_r(seed) % 4), self = (uint64_t)(rand_r(seed) % 1000);
        c->calls += calls;
        c->total += self;
        random_subtree(t, c, depth + 1, seed);
        if (calls == 0 && c->first_child == NULL)
            c->total = 0; /* a node that never ran: no line */
    }
    /* totals cover the children's time */
    for (struct spanprof__node *c = n->first_child; n->site && c; c = c->next_sibling) {
        n->total += c->total;
        n->child += c->total;
    }
}

START_TEST(random_trees_match_sorted_reference)
{
    for (size_t i = 0; i < NNAMES * 2; i++)
        rsites[i] = (struct spanprof_site){1, 0, names[i % NNAMES], i < NNAMES ? "x.c" : "y.c",
                                           (unsigned)i, 0, 0, 0, NULL, NULL};
    for (unsigned seed0 = 1; seed0 <= 60; seed0++) {
        unsigned seed = seed0;
        struct spanprof__thread *ts[3];
        static const char *const tnames[3] = {"w", "", "w"};
        for (int i = 0; i < 3; i++) {
            ts[i] = spanprof__thread_new();
            strcpy(ts[i]->name, tnames[i]);
            ts[i]->tid = 100 + i;
            random_subtree(ts[i], &ts[i]->root, 0, &seed);
        }
        struct spanprof__view v = unit_view(ts, 3);
        v.threads_root = seed0 % 2;
        v.file_line = seed0 % 3 == 0;
        v.counting = seed0 % 5 == 0;
        v.ns_per_tick = seed0 % 4 == 0 ? 0.37 : 1.0;
        /* collapsed recursion on every third tree */
        struct spanprof__folded_limits lim = {.max_bytes = 1u << 30, .max_depth = 1024,
                                              .collapse = seed0 % 3 == 1};
        v.folded_limits = &lim;
        char *want = reference(&v, lim.collapse), *got = unit_folded(&v);
        ck_assert_msg(strcmp(want, got) == 0, "seed %u (collapse %d):\n--- reference\n%s--- writer\n%s", seed0, lim.collapse,
                      want, got);
        free(want);
        free(got);
    }
}
END_TEST

/* The three variables: defaults, values, and one warning line each for a bad value. */
START_TEST(limit_variables)
{
    static const char *const none[] = {NULL};
    struct spanprof__options c;
    char *w = UNIT_LOAD_CONFIG(spanprof__options_load, &c, none);
    ck_assert_str_eq(w, "");
    ck_assert_uint_eq(c.folded_max_bytes, SPANPROF_FOLDED_MAX_BYTES);
    ck_assert_uint_eq(c.folded_max_depth, SPANPROF_FOLDED_MAX_DEPTH);
    ck_assert_int_eq(c.folded_recursion, 0);
    free(w);
    static const char *const good[] = {"SPANPROF_FOLDED_MAX_BYTES", "1000", "SPANPROF_FOLDED_MAX_DEPTH",
                                       "5", "SPANPROF_FOLDED_RECURSION", "collapse", NULL};
    w = UNIT_LOAD_CONFIG(spanprof__options_load, &c, good);
    ck_assert_str_eq(w, "");
    ck_assert_uint_eq(c.folded_max_bytes, 1000);
    ck_assert_uint_eq(c.folded_max_depth, 5);
    ck_assert_int_eq(c.folded_recursion, 1);
    free(w);
    static const char *const bad[] = {"SPANPROF_FOLDED_MAX_BYTES", "64M", "SPANPROF_FOLDED_MAX_DEPTH",
                                      "0", "SPANPROF_FOLDED_RECURSION", "yes", NULL};
    w = UNIT_LOAD_CONFIG(spanprof__options_load, &c, bad);
    ck_assert_str_eq(w, "spanprof: warning: SPANPROF_FOLDED_MAX_BYTES='64M' is not a positive number "
                        "of bytes; using 67108864\n"
                        "spanprof: warning: SPANPROF_FOLDED_MAX_DEPTH='0' is not a whole number from "
                        "1 to 1000000; using 1024\n"
                        "spanprof: warning: SPANPROF_FOLDED_RECURSION='yes' is not keep or collapse; "
                        "using keep\n");
    ck_assert_uint_eq(c.folded_max_bytes, SPANPROF_FOLDED_MAX_BYTES);
    ck_assert_uint_eq(c.folded_max_depth, SPANPROF_FOLDED_MAX_DEPTH);
    ck_assert_int_eq(c.folded_recursion, 0);
    free(w);
    static const char *const big[] = {"SPANPROF_FOLDED_MAX_DEPTH", "1000001", NULL};
    w = UNIT_LOAD_CONFIG(spanprof__options_load, &c, big);
    ck_assert_str_eq(w, "spanprof: warning: SPANPROF_FOLDED_MAX_DEPTH='1000001' is not a whole number "
                        "from 1 to 1000000; using 1024\n");
    free(w);
}
END_TEST

Suite *folded_stream_suite(void)
{
    Suite *s = suite_create("folded_stream");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, prefix_frames_in_byte_order);
    tcase_add_test(tc, byte_cap);
    tcase_add_test(tc, collapse_direct_recursion);
    tcase_add_test(tc, random_trees_match_sorted_reference);
    tcase_add_test(tc, limit_variables);
    suite_add_tcase(s, tc);
    return s;
}
