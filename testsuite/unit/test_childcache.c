/* test_childcache.c — the enter path's (parent, site) cache behind the one-entry hint: it serves
 * children that alternate, and a slot holding another pair's node is never taken for the child
 * looked for. */
#include "unit.h"

#include "record/childcache.h"

UNIT_SITE(c_one, "one");
UNIT_SITE(c_two, "two");
UNIT_SITE(c_outer, "outer");
UNIT_SITE(c_inner, "inner");

UNIT_SPAN_FN(one, c_one, )
UNIT_SPAN_FN(two, c_two, )
UNIT_SPAN_FN(inner, c_inner, )
UNIT_SPAN_FN(outer, c_outer, inner())

static void fill_cache(struct spanprof__thread *t, struct spanprof__node *n)
{
    for (size_t i = 0; i < SPANPROF__CHILD_CACHE_SLOTS; i++)
        t->child_cache[i] = n;
}

START_TEST(alternating_children_from_the_cache)
{
    one();
    two(); /* both found by the cold path, which left the root's hint at two */
    struct spanprof__thread *t = unit_self();
    struct spanprof__node *n1 = unit_child(&t->root, &c_one), *n2 = unit_child(&t->root, &c_two);
    ck_assert_ptr_eq(t->root.hint, n2);
    /* Addresses vary from run to run: in the rare run where both pairs share a slot, they evict
     * each other and the cold path serves them (checked by the counts alone). */
    int shared = spanprof__child_slot(&t->root, &c_one) == spanprof__child_slot(&t->root, &c_two);
    for (int i = 0; i < 100; i++) {
        one();
        two();
    }
    one();
    /* The cold path would have moved the hint to one on each call of it, the last one included;
     * the cache found one without it, so the hint never moved. */
    if (!shared) {
        ck_assert_ptr_eq(t->root.hint, n2);
        ck_assert_ptr_eq(spanprof__child_cache_find(t, &t->root, &c_one), n1);
    }
    ck_assert_uint_eq(n1->calls, 102);
    ck_assert_uint_eq(n2->calls, 101);
}
END_TEST

START_TEST(foreign_slots_never_match)
{
    outer(); /* root -> outer -> inner */
    struct spanprof__thread *t = unit_self();
    struct spanprof__node *no = unit_child(&t->root, &c_outer);
    struct spanprof__node *ni = unit_child(no, &c_inner);
    ck_assert_ptr_nonnull(ni);
    /* Every slot holds outer -> inner: right site, wrong parent for inner called at the root. */
    fill_cache(t, ni);
    inner();
    struct spanprof__node *root_inner = unit_child(&t->root, &c_inner);
    ck_assert_ptr_nonnull(root_inner);
    ck_assert_ptr_ne(root_inner, ni);
    ck_assert_uint_eq(root_inner->calls, 1);
    ck_assert_uint_eq(ni->calls, 1);
    /* Every slot holds the root's outer: right parent, wrong site for one called at the root. */
    fill_cache(t, no);
    t->root.hint = no;
    one();
    ck_assert_uint_eq(unit_child(&t->root, &c_one)->calls, 1);
    ck_assert_uint_eq(no->calls, 1);
    ck_assert_uint_eq(t->abandoned + t->unmatched + t->overflow, 0);
}
END_TEST

START_TEST(reset_empties_every_slot)
{
    one();
    two();
    struct spanprof__thread *t = unit_self();
    ck_assert_ptr_nonnull(spanprof__child_cache_find(t, &t->root, &c_two));
    spanprof__child_cache_reset(t);
    for (size_t i = 0; i < SPANPROF__CHILD_CACHE_SLOTS; i++)
        ck_assert_ptr_eq(t->child_cache[i], &spanprof__miss_node);
    ck_assert_ptr_null(spanprof__child_cache_find(t, &t->root, &c_one));
    ck_assert_ptr_null(spanprof__child_cache_find(t, &t->root, &c_two));
    one(); /* found again through the cold path, which fills the slot back */
    ck_assert_ptr_eq(spanprof__child_cache_find(t, &t->root, &c_one), unit_child(&t->root, &c_one));
    ck_assert_uint_eq(unit_child(&t->root, &c_one)->calls, 2);
}
END_TEST

Suite *childcache_suite(void)
{
    Suite *s = suite_create("childcache");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, alternating_children_from_the_cache);
    tcase_add_test(tc, foreign_slots_never_match);
    tcase_add_test(tc, reset_empties_every_slot);
    suite_add_tcase(s, tc);
    return s;
}
