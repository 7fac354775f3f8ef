/* test_path.c — output path patterns: %p, %%, fork-child suffix, limits. */
#include <unistd.h>

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

/* The name of an output for this process: a descendant (exec'd by a profiled process) appends
 * .PID like a fork child; an image after one that wrote in the same process adds .N. */
START_TEST(descendants_and_images)
{
    char out[64], want[64];
    long pid = (long)getpid();
    int saved = spanprof__g.fork_child;
    spanprof__g.fork_child = 0;
    struct spanprof__outputs o = {0};
    ck_assert_int_eq(spanprof__output_path(&o, "p.folded", out, sizeof out), 0);
    ck_assert_str_eq(out, "p.folded");
    o.descendant = 1;
    ck_assert_int_eq(spanprof__output_path(&o, "p.folded", out, sizeof out), 0);
    snprintf(want, sizeof want, "p.folded.%ld", pid);
    ck_assert_str_eq(out, want);
    o.image = 2;
    ck_assert_int_eq(spanprof__output_path(&o, "p.folded", out, sizeof out), 0);
    snprintf(want, sizeof want, "p.folded.%ld.2", pid);
    ck_assert_str_eq(out, want);
    ck_assert_int_eq(spanprof__output_path(&o, "p-%p.json", out, sizeof out), 0);
    snprintf(want, sizeof want, "p-%ld.2.json", pid);
    ck_assert_str_eq(out, want);
    ck_assert_int_eq(spanprof__output_path(&o, "%%p-%p/%p", out, sizeof out), 0);
    snprintf(want, sizeof want, "%%p-%ld.2/%ld.2", pid, pid);
    ck_assert_str_eq(out, want);
    ck_assert_int_eq(spanprof__output_path(&o, "p.folded", out, 12), -1);
    char num[24];
    ck_assert_int_eq(spanprof__format_u64(num, 0), 1);
    ck_assert_str_eq(num, "0");
    ck_assert_int_eq(spanprof__format_u64(num, UINT64_MAX), 20);
    ck_assert_str_eq(num, "18446744073709551615");
    spanprof__g.fork_child = saved;
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
    tcase_add_test(tc, descendants_and_images);
    tcase_add_test(tc, invalid_and_too_long);
    suite_add_tcase(s, tc);
    return s;
}
