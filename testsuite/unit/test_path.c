/* test_path.c — output path patterns: %p, %%, fork-child suffix, limits. */
#include "unit.h"

static const char *expand(const char *pattern, long pid, int child)
{
    static char out[64];
    if (spanprof__path_expand(pattern, pid, child, out, sizeof out))
        return NULL;
    return out;
}

START_TEST(expansion)
{
    ck_assert_str_eq(expand("spanprof.folded", 42, 0), "spanprof.folded");
    ck_assert_str_eq(expand("out-%p.json", 42, 0), "out-42.json");
    ck_assert_str_eq(expand("%p/%p", 7, 0), "7/7");
    ck_assert_str_eq(expand("100%%-%p", 42, 0), "100%-42");
    ck_assert_str_eq(expand("%%p", 42, 0), "%p");
    ck_assert_str_eq(expand("", 42, 0), "");
}
END_TEST

START_TEST(fork_child_suffix)
{
    ck_assert_str_eq(expand("spanprof.folded", 43, 1), "spanprof.folded.43");
    ck_assert_str_eq(expand("out-%p.json", 43, 1), "out-43.json");
    ck_assert_str_eq(expand("a%%p", 43, 1), "a%p.43"); /* %%p is not %p */
}
END_TEST

START_TEST(invalid_and_too_long)
{
    ck_assert_ptr_null(expand("a%d", 1, 0));
    ck_assert_ptr_null(expand("a%", 1, 0));
    ck_assert_int_eq(spanprof__path_valid("a%d"), 0);
    ck_assert_int_eq(spanprof__path_valid("a%p%%b"), 1);
    char small[8];
    ck_assert_int_eq(spanprof__path_expand("1234567", 1, 0, small, sizeof small), 0);
    ck_assert_str_eq(small, "1234567");
    ck_assert_int_eq(spanprof__path_expand("12345678", 1, 0, small, sizeof small), -1);
    ck_assert_int_eq(spanprof__path_expand("x%p", 123456789, 0, small, sizeof small), -1);
    ck_assert_int_eq(spanprof__path_expand("12345", 99, 1, small, sizeof small), -1);
}
END_TEST

Suite *path_suite(void)
{
    Suite *s = suite_create("path");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, expansion);
    tcase_add_test(tc, fork_child_suffix);
    tcase_add_test(tc, invalid_and_too_long);
    suite_add_tcase(s, tc);
    return s;
}
