/* test_budget.c — the cost budget's bookkeeping (collect/budget*.c): a span's mean is the lower
 * of its last two measurements, so that one preempted call cannot make a short span look long
 * for a whole tick; and the first tick counts the calls and the threads' CPU time from the
 * budget's beginning, not from the process's start. */
#include "collect/budgetparts.h"
#include "unit.h"

UNIT_SITE(s_early, "early");
UNIT_SPAN_FN(early, s_early, )

START_TEST(mean_is_the_lower_of_the_last_two)
{
    struct spanprof__site_sums x = {0};
    spanprof__budget_note_mean(&x, 20);
    ck_assert_double_eq(x.mean_ns, 20);
    spanprof__budget_note_mean(&x, 4000); /* one call preempted for 4 ms ... */
    ck_assert_double_eq(x.mean_ns, 20);
    spanprof__budget_note_mean(&x, 3900); /* ... or longer calls: seen twice */
    ck_assert_double_eq(x.mean_ns, 3900);
    spanprof__budget_note_mean(&x, 15);
    ck_assert_double_eq(x.mean_ns, 15);
}
END_TEST

START_TEST(first_tick_counts_from_the_beginning)
{
    for (int i = 0; i < 7; i++)
        early();
    static struct spanprof__site_sums sums[64];
    spanprof__budget_sums = sums;
    spanprof__budget_nsums = 64;
    ck_assert_uint_lt(s_early.id, 64);
    ck_assert_uint_eq(unit_self()->budget_cpu_ns, 0);
    spanprof__budget_tick_restart(0, 0, 0, 0);
    ck_assert_ptr_eq(sums[s_early.id].site, &s_early);
    ck_assert_uint_eq(sums[s_early.id].last_calls, 7);
    ck_assert_uint_eq(sums[s_early.id].last_ticks, sums[s_early.id].ticks);
    ck_assert_uint_gt(unit_self()->budget_cpu_ns, 0);
    spanprof__budget_sums = NULL;
    spanprof__budget_nsums = 0;
}
END_TEST

Suite *budget_suite(void)
{
    Suite *s = suite_create("budget");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, mean_is_the_lower_of_the_last_two);
    tcase_add_test(tc, first_tick_counts_from_the_beginning);
    suite_add_tcase(s, tc);
    return s;
}
