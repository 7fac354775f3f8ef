/* test_calltree.c — call trees built by the real enter/exit: exact calls, nesting, recursion
 * totals, per-site aggregation, site registration (bad version, coz, recording off). */
#include <errno.h>
#include <string.h>

#include "unit.h"

UNIT_SITE(s_leaf, "leaf");
UNIT_SITE(s_mid, "mid");
UNIT_SITE(s_top, "top");
UNIT_SITE(s_rec, "rec");
UNIT_SITE(s_alt1, "alt1");
UNIT_SITE(s_alt2, "alt2");

UNIT_SPAN_FN(leaf, s_leaf, )
UNIT_SPAN_FN(mid, s_mid, leaf(); leaf())
UNIT_SPAN_FN(top, s_top, mid(); leaf())
UNIT_SPAN_FN(alt1, s_alt1, )
UNIT_SPAN_FN(alt2, s_alt2, )

static __attribute__((noinline)) void rec(int n)
{
    __spanprof_enter(&s_rec, __builtin_dwarf_cfa());
    if (n > 1)
        rec(n - 1);
    __asm__ volatile("" ::: "memory");
    __spanprof_exit(&s_rec, __builtin_dwarf_cfa());
}

START_TEST(nested_exact_calls)
{
    for (int i = 0; i < 3; i++)
        top();
    struct spanprof__thread *t = unit_self();
    ck_assert_uint_eq(unit_depth(), 0);
    struct spanprof__node *nt = unit_child(&t->root, &s_top);
    ck_assert_ptr_nonnull(nt);
    ck_assert_uint_eq(nt->calls, 3);
    struct spanprof__node *nm = unit_child(nt, &s_mid);
    ck_assert_uint_eq(nm->calls, 3);
    ck_assert_uint_eq(unit_child(nm, &s_leaf)->calls, 6);
    ck_assert_uint_eq(unit_child(nt, &s_leaf)->calls, 3);
    ck_assert_ptr_null(unit_child(&t->root, &s_leaf));
    /* inclusive >= children, self accounts the rest */
    ck_assert_uint_ge(nt->total, nt->child);
    ck_assert_uint_eq(nt->child, nm->total + unit_child(nt, &s_leaf)->total);
    ck_assert_uint_eq(t->abandoned + t->unmatched + t->overflow, 0);
    ck_assert_uint_eq(s_top.state, UNIT_TIMED_STATE);
    ck_assert_uint_ne(s_top.id, 0);
    ck_assert_uint_ne(s_top.id, s_mid.id);
}
END_TEST

START_TEST(recursion_total_outermost)
{
    rec(5);
    rec(3);
    struct spanprof__thread *t = unit_self();
    struct spanprof__node *n1 = unit_child(&t->root, &s_rec);
    ck_assert_uint_eq(n1->calls, 2);
    struct spanprof__node *n = n1;
    for (int d = 2; d <= 5; d++) {
        n = unit_child(n, &s_rec);
        ck_assert_ptr_nonnull(n);
        ck_assert_uint_eq(n->calls, d <= 3 ? 2 : 1);
    }
    ck_assert_ptr_null(unit_child(n, &s_rec));
    struct spanprof__view v = unit_view(&t, 1);
    size_t ns;
    struct spanprof__site_stats *st = spanprof__aggregate_sites(&v, &ns);
    ck_assert_uint_eq(ns, 1);
    ck_assert_ptr_eq(st[0].site, &s_rec);
    ck_assert_uint_eq(st[0].calls, 8);
    ck_assert_uint_eq(st[0].total, n1->total); /* not double counted */
    ck_assert_uint_eq(st[0].max_depth, 5);
    uint64_t self = 0;
    for (n = n1; n; n = unit_child(n, &s_rec))
        self += spanprof__node_self(n);
    ck_assert_uint_eq(st[0].self, self);
    ck_assert_uint_eq(st[0].self, n1->total); /* all time is rec's own */
    free(st);
}
END_TEST

START_TEST(alternating_children)
{
    /* alternating siblings miss the one-entry hint: cold lookup must still count exactly */
    for (int i = 0; i < 1000; i++) {
        alt1();
        alt2();
    }
    struct spanprof__thread *t = unit_self();
    ck_assert_uint_eq(unit_child(&t->root, &s_alt1)->calls, 1000);
    ck_assert_uint_eq(unit_child(&t->root, &s_alt2)->calls, 1000);
    int children = 0;
    for (struct spanprof__node *c = t->root.first_child; c; c = c->next_sibling)
        children++;
    ck_assert_int_eq(children, 2);
}
END_TEST

static struct spanprof_site s_badver = {99, SPANPROF_KIND_SPAN, "bad", "bad.c", 1, 2, 0, 0, NULL, NULL};
static struct spanprof_site s_badver2 = {98, SPANPROF_KIND_SPAN, "bad2", "bad.c", 3, 4, 0, 0, NULL, NULL};

START_TEST(bad_version_ignored_one_warning)
{
    unit_stderr_begin();
    for (int i = 0; i < 3; i++) {
        __spanprof_enter(&s_badver, __builtin_dwarf_cfa());
        __spanprof_exit(&s_badver, __builtin_dwarf_cfa());
        __spanprof_enter(&s_badver2, __builtin_dwarf_cfa());
        __spanprof_exit(&s_badver2, __builtin_dwarf_cfa());
    }
    char *err = unit_stderr_end();
    ck_assert_str_eq(err, "spanprof: warning: ignoring span sites of site version 99 (this runtime "
                          "reads version 1); rebuild with matching plugin and runtime\n");
    free(err);
    ck_assert_uint_eq(s_badver.state, SPANPROF__SITE_OFF);
    ck_assert_uint_eq(s_badver2.state, SPANPROF__SITE_OFF);
    ck_assert_ptr_eq(spanprof__tls, &spanprof__sentinel_thread); /* nothing recorded */
}
END_TEST

static struct spanprof__coz_counter coz_counters[2];
static const char *coz_names[2];
static struct spanprof__coz_counter *fake_coz_get(int type, const char *name)
{
    ck_assert(type == 2 || type == 3);
    if (strcmp(name, "coz-span") != 0)
        return NULL; /* other sites stay FAST */
    coz_names[type - 2] = name;
    return &coz_counters[type - 2];
}
UNIT_SITE(s_coz, "coz-span");
UNIT_SPAN_FN(cozfn, s_coz, leaf())

START_TEST(coz_counters_bumped)
{
    spanprof__g.coz_get = fake_coz_get;
    for (int i = 0; i < 7; i++)
        cozfn();
    ck_assert_uint_eq(s_coz.state, SPANPROF__SITE_SLOW);
    ck_assert_str_eq(coz_names[0], "coz-span");
    ck_assert_str_eq(coz_names[1], "coz-span");
    ck_assert_uint_eq(coz_counters[0].count, 7);
    ck_assert_uint_eq(coz_counters[1].count, 7);
    struct spanprof__node *n = unit_child(&unit_self()->root, &s_coz);
    ck_assert_uint_eq(n->calls, 7);
    ck_assert_uint_eq(unit_child(n, &s_leaf)->calls, 7);
    ck_assert_uint_eq(s_leaf.state, UNIT_TIMED_STATE);
    ck_assert_uint_eq(unit_depth(), 0);
}
END_TEST

UNIT_SITE(s_off, "off");
UNIT_SPAN_FN(offfn, s_off, )

START_TEST(recording_off)
{
    spanprof__flags.recording = 0; /* as after SPANPROF=0 */
    offfn();
    ck_assert_uint_eq(s_off.state, SPANPROF__SITE_OFF);
    ck_assert_ptr_eq(spanprof__tls, &spanprof__sentinel_thread);
    ck_assert_int_eq(spanprof_flush(), 0);
}
END_TEST

START_TEST(errno_preserved)
{
    errno = 4242;
    top(); /* first sight: site registration, thread creation, node allocation */
    ck_assert_int_eq(errno, 4242);
    __spanprof_exit(&s_mid, __builtin_dwarf_cfa()); /* unmatched */
    ck_assert_int_eq(errno, 4242);
    ck_assert_uint_eq(unit_self()->unmatched, 1);
}
END_TEST

Suite *calltree_suite(void)
{
    Suite *s = suite_create("calltree");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, nested_exact_calls);
    tcase_add_test(tc, recursion_total_outermost);
    tcase_add_test(tc, alternating_children);
    tcase_add_test(tc, bad_version_ignored_one_warning);
    tcase_add_test(tc, coz_counters_bumped);
    tcase_add_test(tc, recording_off);
    tcase_add_test(tc, errno_preserved);
    suite_add_tcase(s, tc);
    return s;
}
