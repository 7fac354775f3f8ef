/* test_retire.c — thread churn: an ended thread's tree merged path by path into its name's
 * group, its memory reused by the next thread, the cap on groups, and a fork child. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"

UNIT_SITE(rw, "work");
UNIT_SITE(ro, "outer");
UNIT_SPAN_FN(rfw, rw, )
UNIT_SPAN_FN(rfo, ro, rfw())

static struct spanprof__thread *registry_find(const char *name)
{
    for (struct spanprof__thread *t = spanprof__g.threads; t; t = t->next)
        if (!strcmp(t->name, name))
            return t;
    return NULL;
}

static size_t registry_size(void)
{
    size_t n = 0;
    for (struct spanprof__thread *t = spanprof__g.threads; t; t = t->next)
        n++;
    return n;
}

struct job {
    const char *name;
    int outer, work;                /* calls of rfo and of rfw */
    struct spanprof__thread *data; /* the data it ran with */
    uint64_t work_calls;            /* its own work node's calls when it ended */
};

static void *run_job(void *arg)
{
    struct job *j = arg;
    pthread_setname_np(pthread_self(), j->name);
    for (int i = 0; i < j->outer; i++)
        rfo();
    for (int i = 0; i < j->work; i++)
        rfw();
    j->data = spanprof__tls;
    struct spanprof__node *w = unit_child(&j->data->root, &rw);
    j->work_calls = w ? w->calls : 0;
    return NULL;
}

static void run_thread(struct job *j)
{
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, run_job, j), 0);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
}

START_TEST(paths_merge_by_name)
{
    struct job a = {"same", 3, 0, NULL, 0}, b = {"same", 0, 2, NULL, 0}, c = {"other", 0, 5, NULL, 0};
    run_thread(&a);
    run_thread(&b);
    run_thread(&c);
    ck_assert_uint_eq(registry_size(), 2); /* the main thread ran no span: two groups */
    struct spanprof__thread *g = registry_find("same");
    ck_assert_ptr_nonnull(g);
    ck_assert_uint_eq(g->merged, 2);
    ck_assert_int_eq(g->exited, 1);
    ck_assert_int_eq(g->tid, 0);
    ck_assert_uint_eq(unit_child(&g->root, &ro)->calls, 3);
    ck_assert_uint_eq(unit_child(unit_child(&g->root, &ro), &rw)->calls, 3);
    ck_assert_uint_eq(unit_child(&g->root, &rw)->calls, 2);
    ck_assert_uint_eq(registry_find("other")->merged, 1);
    struct spanprof__thread *ts[2] = {spanprof__g.threads, spanprof__g.threads->next};
    struct spanprof__view v = unit_view(ts, 2);
    ck_assert_uint_eq(spanprof__thread_count(&v), 3);
    v.threads_root = 1;
    v.counting = 1; /* calls, not times */
    char *s = unit_folded(&v);
    ck_assert_str_eq(s, "other;work 5\nsame;outer 3\nsame;outer;work 3\nsame;work 2\n");
    free(s);
}
END_TEST

START_TEST(memory_is_reused)
{
    struct job a = {"first", 0, 7, NULL, 0}, b = {"second", 0, 1, NULL, 0};
    run_thread(&a);
    run_thread(&b);
    ck_assert_ptr_eq(b.data, a.data); /* the second thread got the first one's memory... */
    ck_assert_uint_eq(b.work_calls, 1); /* ...empty */
    ck_assert_uint_eq(registry_find("first")->merged, 1);
    ck_assert_uint_eq(unit_child(&registry_find("first")->root, &rw)->calls, 7);
    ck_assert_uint_eq(unit_child(&registry_find("second")->root, &rw)->calls, 1);
}
END_TEST

/* A thread that longjmps out of two spans N times (the loop's next enter repairs the last
 * iteration's frames: N - 1 abandoned activations each), then calls outer;work once. */
static __thread jmp_buf rjb;
UNIT_SITE(rl, "leaf");
UNIT_SITE(rj, "jumper");
UNIT_SPAN_FN(rfl, rl, longjmp(rjb, 1))
UNIT_SPAN_FN(rfj, rj, rfl())

static struct spanprof__node *jumper_node; /* run_jumps' node of rfj */

static void *run_jumps(void *arg)
{
    struct job *j = arg;
    pthread_setname_np(pthread_self(), j->name);
    for (volatile int i = 0; i < j->work; i++)
        if (setjmp(rjb) == 0)
            rfj();
    j->data = spanprof__tls;
    jumper_node = unit_child(&j->data->root, &rj);
    return NULL;
}

START_TEST(abandoned_counts_move_to_the_group)
{
    struct job a = {"jumps", 0, 5, NULL, 0}, b = {"calls", 1, 0, NULL, 0};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, run_jumps, &a), 0);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    ck_assert_ptr_null(unit_child(&a.data->root, &rj)); /* a's tree was emptied once merged */
    /* Its nodes' memory is for the next thread's nodes: their counts went with them. */
    ck_assert_uint_eq(spanprof__abandoned_of(jumper_node), 0);
    struct spanprof__thread *g = registry_find("jumps");
    struct spanprof__node *j = unit_child(&g->root, &rj);
    ck_assert_uint_eq(j->calls, 5);
    ck_assert_uint_eq(spanprof__abandoned_of(j), 4);
    ck_assert_uint_eq(spanprof__abandoned_of(unit_child(j, &rl)), 4);
    /* The next thread's nodes, in the same memory, start with no abandoned activations. */
    run_thread(&b);
    ck_assert_ptr_eq(b.data, a.data);
    struct spanprof__node *o = unit_child(&registry_find("calls")->root, &ro);
    ck_assert_uint_eq(o->calls, 1);
    ck_assert_uint_eq(spanprof__abandoned_of(o), 0);
    ck_assert_uint_eq(spanprof__abandoned_of(unit_child(o, &rw)), 0);
}
END_TEST

START_TEST(group_idle_time_is_its_threads_lifetimes)
{
    struct job a = {"idle", 0, 3, NULL, 0}, b = {"idle", 0, 4, NULL, 0};
    run_thread(&a);
    run_thread(&b);
    struct spanprof__thread *g = registry_find("idle");
    ck_assert_uint_eq(g->merged, 2);
    ck_assert_uint_gt(g->lifetimes, 0);
    ck_assert_uint_ge(g->lifetimes, g->root.child); /* outermost spans within the lifetimes */
    struct spanprof__view v = unit_view(&g, 1);
    v.idle = 1;
    uint64_t ns;
    ck_assert_int_eq(spanprof__thread_idle_ns(&v, g, &ns), 1);
    ck_assert_uint_eq(ns, g->lifetimes - g->root.child); /* 1 ns per tick in unit_view */
}
END_TEST

START_TEST(groups_are_capped)
{
    enum { N = SPANPROF_GROUPS_MAX + 44 };
    static char names[N][16];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "n%03d", i);
        struct job j = {names[i], 0, 1, NULL, 0};
        run_thread(&j);
    }
    ck_assert_uint_eq(registry_size(), SPANPROF_GROUPS_MAX + 1);
    struct spanprof__thread *other = registry_find(spanprof__other_threads);
    ck_assert_ptr_nonnull(other);
    ck_assert_uint_eq(other->merged, 44);
    ck_assert_uint_eq(unit_child(&other->root, &rw)->calls, 44);
    ck_assert_uint_eq(registry_find("n255")->merged, 1);
    ck_assert_ptr_null(registry_find("n256"));
}
END_TEST

START_TEST(fork_child_drops_groups)
{
    struct job a = {"gone", 0, 3, NULL, 0};
    run_thread(&a);
    rfw(); /* the forking thread has data */
    for (volatile int i = 0; i < 3; i++)
        if (setjmp(rjb) == 0)
            rfj(); /* and abandoned activations */
    struct spanprof__node *jumper = unit_child(&spanprof__tls->root, &rj);
    ck_assert_uint_eq(spanprof__abandoned_of(jumper), 2);
    pid_t pid = fork();
    if (pid == 0) {
        struct spanprof__thread *self = spanprof__tls;
        int ok = spanprof__g.threads == self && self->next == NULL;
        ok = ok && jumper->calls == 0 && spanprof__abandoned_of(jumper) == 0; /* the parent's */
        struct job b = {"child", 0, 2, NULL, 0};
        run_thread(&b);
        /* the parent's group went to the free list, and a child thread reuses memory */
        ok = ok && b.work_calls == 2 && registry_find("child") &&
             registry_find("child")->merged == 1 && !registry_find("gone");
        _exit(ok ? 0 : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_uint_eq(registry_find("gone")->merged, 1);
}
END_TEST

Suite *retire_suite(void)
{
    Suite *s = suite_create("retire");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, paths_merge_by_name);
    tcase_add_test(tc, memory_is_reused);
    tcase_add_test(tc, abandoned_counts_move_to_the_group);
    tcase_add_test(tc, group_idle_time_is_its_threads_lifetimes);
    tcase_add_test(tc, groups_are_capped);
    tcase_add_test(tc, fork_child_drops_groups);
    suite_add_tcase(s, tc);
    return s;
}
