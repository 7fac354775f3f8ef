/* unit_main.c — runs every runtime suite with Check; exit status 0 only if all pass.
 *
 * Tests run in Check's default fork mode: each test starts in a fresh child of this process,
 * which has never entered a span, so tests don't see each other's threads or counters. */
#include <string.h>
#include <unistd.h>

#include "unit.h"

struct spanprof__node *unit_child(struct spanprof__node *parent, const struct spanprof_site *site)
{
    for (struct spanprof__node *c = parent->first_child; c; c = c->next_sibling)
        if (c->site == site)
            return c;
    return NULL;
}

struct spanprof__thread *unit_self(void)
{
    ck_assert_ptr_ne(spanprof__tls, &spanprof__sentinel_thread);
    return spanprof__tls;
}

size_t unit_depth(void)
{
    struct spanprof__thread *t = unit_self();
    return (size_t)(t->top - t->frames);
}

struct spanprof__view unit_view(struct spanprof__thread **ts, size_t n)
{
    struct spanprof__view v = {.threads = ts, .nthreads = n, .ns_per_tick = 1.0};
    return v;
}

char *unit_folded(const struct spanprof__view *v)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(spanprof__folded_write(f, v), 0);
    fclose(f);
    return buf;
}

static int saved_stderr = -1;
const char *const *unit_fake_env;

const char *unit_fake_getenv(const char *name)
{
    for (const char *const *e = unit_fake_env; *e; e += 2)
        if (strcmp(e[0], name) == 0)
            return e[1];
    return NULL;
}

static FILE *capture;

void unit_stderr_begin(void)
{
    fflush(stderr);
    capture = tmpfile();
    ck_assert_ptr_nonnull(capture);
    saved_stderr = dup(2);
    dup2(fileno(capture), 2);
}

char *unit_stderr_end(void)
{
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    long n = ftell(capture);
    char *s = calloc(1, (size_t)n + 1);
    rewind(capture);
    if (n > 0 && fread(s, 1, (size_t)n, capture) != (size_t)n)
        ck_abort_msg("short read of captured stderr");
    fclose(capture);
    return s;
}

void unit_tracing(size_t bytes)
{
    struct spanprof__collect_settings s = spanprof__collect;
    s.trace_buffer = bytes;
    spanprof__collectors_start(&s);
}

struct spanprof_site unit_sa = {1, 0, "main", "a.c", 10, 20, 0, 0, NULL, NULL};
struct spanprof_site unit_sb = {1, 0, "work", "b.c", 30, 40, 0, 0, NULL, NULL};
struct spanprof_site unit_sc = {1, 0, "io;read", "c.c", 50, 60, 0, 0, NULL, NULL};
struct spanprof_site unit_sz = {1, 0, "zero", "z.c", 5, 6, 0, 0, NULL, NULL};

struct spanprof__thread *unit_tree1(const char *name, long tid)
{
    struct spanprof__thread *t = spanprof__thread_new();
    ck_assert_ptr_nonnull(t);
    strcpy(t->name, name);
    t->tid = tid;
    struct spanprof__node *m = unit_node(t, &t->root, &unit_sa, 1, 100, 70);
    struct spanprof__node *w = unit_node(t, m, &unit_sb, 2, 50, 20);
    unit_node(t, w, &unit_sc, 4, 20, 0);
    unit_node(t, m, &unit_sz, 1, 20, 20); /* self 0: still a line */
    return t;
}

struct spanprof__node *unit_node(struct spanprof__thread *t, struct spanprof__node *parent,
                                 const struct spanprof_site *site, uint64_t calls, uint64_t total,
                                 uint64_t child)
{
    /* As the cold enter path does: the site's histogram first, then the node. */
    ck_assert(!spanprof__flags.histogram || spanprof__hist_attach(t, site));
    struct spanprof__node *n = spanprof__tree_child(t, parent, site, spanprof__flags.node_ext);
    ck_assert_ptr_nonnull(n);
    n->calls += calls;
    n->total += total;
    n->child += child;
    return n;
}

int main(void)
{
    /* The test processes write no profile files at exit. */
    spanprof__outputs.folded = NULL;
    spanprof__outputs.json = NULL;

    SRunner *sr = srunner_create(calltree_suite());
    srunner_add_suite(sr, childcache_suite());
    srunner_add_suite(sr, folded_suite());
    srunner_add_suite(sr, folded_stream_suite());
    srunner_add_suite(sr, json_suite());
    srunner_add_suite(sr, env_suite());
    srunner_add_suite(sr, path_suite());
    srunner_add_suite(sr, longjmp_suite());
    srunner_add_suite(sr, deep_suite());
    srunner_add_suite(sr, thread_suite());
    srunner_add_suite(sr, retire_suite());
    srunner_add_suite(sr, output_suite());
    srunner_add_suite(sr, progress_suite());
    srunner_add_suite(sr, elfsection_suite());
    srunner_add_suite(sr, coz_suite());
    srunner_add_suite(sr, histogram_suite());
    srunner_add_suite(sr, trace_suite());
    srunner_add_suite(sr, pprof_suite());
    srunner_add_suite(sr, setjmp_suite());
    srunner_add_suite(sr, idle_suite());
    srunner_add_suite(sr, sample_suite());
    srunner_add_suite(sr, compensate_suite());
    srunner_add_suite(sr, budget_suite());
    srunner_add_suite(sr, flight_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
