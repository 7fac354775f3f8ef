/* test_deep.c — 100k-deep recursion, and the depth cap. */
#include "unit.h"

UNIT_SITE(sr, "r");
UNIT_SITE(sq, "q");
UNIT_SPAN_FN(fq, sq, )

static __attribute__((noinline)) void r(int n)
{
    __spanprof_enter(&sr, __builtin_dwarf_cfa());
    if (n > 1)
        r(n - 1);
    __asm__ volatile("" ::: "memory");
    __spanprof_exit(&sr, __builtin_dwarf_cfa());
}

START_TEST(recursion_100k)
{
    r(100000);
    struct spanprof__thread *t = unit_self();
    ck_assert_uint_eq(unit_depth(), 0);
    ck_assert_uint_ge(t->capacity, 100001);
    ck_assert_uint_eq(t->abandoned + t->unmatched + t->overflow, 0);
    struct spanprof__view v = unit_view(&t, 1);
    size_t n;
    struct spanprof__site_stats *st = spanprof__aggregate_sites(&v, &n);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(st[0].calls, 100000);
    ck_assert_uint_eq(st[0].max_depth, 100000);
    ck_assert_uint_eq(st[0].total, unit_child(&t->root, &sr)->total);
    free(st);
    r(100000); /* second time: all nodes exist, pure hot path */
    ck_assert_uint_eq(unit_child(&t->root, &sr)->calls, 2);
    ck_assert_uint_eq(spanprof__thread_calls(t), 200000);
}
END_TEST

static void *capped(void *arg)
{
    (void)arg;
    r(150);
    fq();
    return NULL;
}

START_TEST(depth_cap_counts_without_recording)
{
    spanprof__flags.max_depth = 100; /* before the thread's first span */
    pthread_t th;
    pthread_create(&th, NULL, capped, NULL);
    pthread_join(th, NULL);
    struct spanprof__thread *t = spanprof__g.threads;
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_eq(t->overflow, 50);
    ck_assert_uint_eq(t->park_depth, 0);
    ck_assert_uint_eq(t->abandoned + t->unmatched, 0);
    ck_assert_uint_eq(t->open_at_exit, 0);
    ck_assert_uint_eq(spanprof__thread_calls(t), 101);
    ck_assert_uint_eq(unit_child(&t->root, &sq)->calls, 1); /* recording resumed */
}
END_TEST

Suite *deep_suite(void)
{
    Suite *s = suite_create("deep");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, recursion_100k);
    tcase_add_test(tc, depth_cap_counts_without_recording);
    suite_add_tcase(s, tc);
    return s;
}
