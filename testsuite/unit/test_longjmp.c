/* test_longjmp.c — stacks left unbalanced by longjmp (and noreturn) are repaired. */
#include <setjmp.h>
#include <string.h>

#include "unit.h"

static jmp_buf jb;

UNIT_SITE(sa, "a");
UNIT_SITE(sb, "b");
UNIT_SITE(sc, "c");
UNIT_SITE(sd, "d");

UNIT_SPAN_FN(fc, sc, longjmp(jb, 1))
UNIT_SPAN_FN(fb, sb, fc())
UNIT_SPAN_FN(fa, sa, fb())
UNIT_SPAN_FN(fd, sd, )

/* An extra (non-span) frame so a..c are entered deeper than the test body's own calls. */
static __attribute__((noinline)) void helper(void)
{
    volatile char pad[64];
    pad[0] = 0;
    fa();
    __asm__ volatile("" ::"r"(pad) : "memory");
}

START_TEST(longjmp_out_of_nested_then_more_spans)
{
    if (setjmp(jb) == 0)
        helper();
    ck_assert_uint_eq(unit_depth(), 3); /* a, b, c still on the shadow stack */
    fd();
    struct spanprof__thread *t = unit_self();
    ck_assert_uint_eq(unit_depth(), 0);
    ck_assert_uint_eq(t->abandoned, 3);
    ck_assert_uint_eq(t->unmatched, 0);
    struct spanprof__node *d = unit_child(&t->root, &sd); /* at the root, not under a;b;c */
    ck_assert_ptr_nonnull(d);
    ck_assert_uint_eq(d->calls, 1);
    struct spanprof__node *a = unit_child(&t->root, &sa);
    ck_assert_uint_eq(a->calls, 1);
    ck_assert_uint_eq(unit_child(unit_child(a, &sb), &sc)->calls, 1);
    ck_assert_ptr_null(unit_child(unit_child(unit_child(a, &sb), &sc), &sd));
    /* each node counts its abandoned activations, for compensation */
    ck_assert_uint_eq(spanprof__abandoned_of(a), 1);
    ck_assert_uint_eq(spanprof__abandoned_of(unit_child(a, &sb)), 1);
    ck_assert_uint_eq(spanprof__abandoned_of(unit_child(unit_child(a, &sb), &sc)), 1);
    ck_assert_uint_eq(spanprof__abandoned_of(d), 0);
    /* abandoned frames' time is charged up to the repair */
    ck_assert_uint_ge(a->total, a->child);
    ck_assert_uint_gt(a->total, 0);
    struct spanprof__view v = unit_view(&t, 1);
    char *s = unit_folded(&v);
    ck_assert_ptr_nonnull(strstr(s, "a;b;c "));
    ck_assert_ptr_nonnull(strstr(s, "\nd ") ? strstr(s, "\nd ") : (strncmp(s, "d ", 2) == 0 ? s : NULL));
    free(s);
}
END_TEST

UNIT_SITE(sl1, "l1");
UNIT_SITE(sl2, "l2");
UNIT_SPAN_FN(fl2, sl2, longjmp(jb, 1))
UNIT_SPAN_FN(fl1, sl1, fl2())

START_TEST(longjmp_loop_does_not_grow)
{
    volatile int i;
    for (i = 0; i < 1000; i++)
        if (setjmp(jb) == 0)
            fl1(); /* same call site, same sp: the previous l1 is recognised as abandoned */
    struct spanprof__thread *t = unit_self();
    ck_assert_uint_eq(unit_depth(), 2);
    ck_assert_uint_eq(t->abandoned, 2 * 999);
    struct spanprof__node *l1 = unit_child(&t->root, &sl1);
    ck_assert_uint_eq(l1->calls, 1000);
    ck_assert_ptr_null(l1->first_child->next_sibling);
    ck_assert_uint_eq(unit_child(l1, &sl2)->calls, 1000);
    ck_assert_uint_eq(spanprof__abandoned_of(l1), 999);
    ck_assert_uint_eq(spanprof__abandoned_of(unit_child(l1, &sl2)), 999);
    ck_assert_ptr_null(unit_child(l1, &sl1));
    ck_assert_uint_eq(t->capacity, 1024); /* never grew */
}
END_TEST

UNIT_SITE(sx, "x");
UNIT_SITE(sy, "y");
static jmp_buf jx;
UNIT_SPAN_FN(fy, sy, longjmp(jx, 1))

static __attribute__((noinline)) void fx(void)
{
    __spanprof_enter(&sx, __builtin_dwarf_cfa());
    if (setjmp(jx) == 0)
        fy(); /* y never exits: x's exit must pop it */
    __asm__ volatile("" ::: "memory");
    __spanprof_exit(&sx, __builtin_dwarf_cfa());
}

START_TEST(exit_repairs_skipped_frames)
{
    for (int i = 0; i < 3; i++)
        fx();
    struct spanprof__thread *t = unit_self();
    ck_assert_uint_eq(unit_depth(), 0);
    ck_assert_uint_eq(t->abandoned, 3);
    ck_assert_uint_eq(t->unmatched, 0);
    struct spanprof__node *x = unit_child(&t->root, &sx);
    ck_assert_uint_eq(x->calls, 3);
    ck_assert_uint_eq(unit_child(x, &sy)->calls, 3);
    ck_assert_uint_eq(spanprof__abandoned_of(x), 0); /* its exit ran */
    ck_assert_uint_eq(spanprof__abandoned_of(unit_child(x, &sy)), 3);
    ck_assert_uint_ge(x->total, unit_child(x, &sy)->total);
}
END_TEST

UNIT_SITE(su, "u");
START_TEST(unmatched_exits_counted)
{
    fd();
    __spanprof_exit(&su, __builtin_dwarf_cfa());
    __spanprof_exit(&sd, __builtin_dwarf_cfa());
    struct spanprof__thread *t = unit_self();
    ck_assert_uint_eq(t->unmatched, 2);
    ck_assert_uint_eq(unit_depth(), 0);
    ck_assert_uint_eq(unit_child(&t->root, &sd)->calls, 1);
}
END_TEST

static void *no_data_thread(void *arg)
{
    (void)arg;
    __spanprof_exit(&sd, __builtin_dwarf_cfa()); /* this thread never entered a span */
    return spanprof__tls;
}

START_TEST(unmatched_exit_without_thread_data)
{
    fd(); /* registers sd */
    pthread_t th;
    void *r;
    pthread_create(&th, NULL, no_data_thread, NULL);
    pthread_join(th, &r);
    ck_assert_ptr_eq(r, &spanprof__sentinel_thread);
    ck_assert_uint_eq(spanprof__g.unmatched_no_thread, 1);
}
END_TEST

Suite *longjmp_suite(void)
{
    Suite *s = suite_create("longjmp");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, longjmp_out_of_nested_then_more_spans);
    tcase_add_test(tc, longjmp_loop_does_not_grow);
    tcase_add_test(tc, exit_repairs_skipped_frames);
    tcase_add_test(tc, unmatched_exits_counted);
    tcase_add_test(tc, unmatched_exit_without_thread_data);
    suite_add_tcase(s, tc);
    return s;
}
