/* test_folded.c — the folded-stacks writer on hand-built trees (exact values: 1 ns per tick). */
#include <string.h>

#include "unit.h"

START_TEST(lines_exact)
{
    struct spanprof__thread *t = unit_tree1("t1", 11);
    struct spanprof__view v = unit_view(&t, 1);
    char *s = unit_folded(&v);
    ck_assert_str_eq(s, "main 30\n"
                        "main;work 30\n"
                        "main;work;io_read 20\n"
                        "main;zero 0\n");
    free(s);
}
END_TEST

START_TEST(merged_threads_and_thread_roots)
{
    struct spanprof__thread *ts[2] = {unit_tree1("worker", 11), unit_tree1("", 12)};
    struct spanprof__view v = unit_view(ts, 2);
    char *s = unit_folded(&v);
    ck_assert_str_eq(s, "main 60\n"
                        "main;work 60\n"
                        "main;work;io_read 40\n"
                        "main;zero 0\n");
    free(s);
    v.threads_root = 1;
    s = unit_folded(&v);
    ck_assert_str_eq(s, "thread-12;main 30\n"
                        "thread-12;main;work 30\n"
                        "thread-12;main;work;io_read 20\n"
                        "thread-12;main;zero 0\n"
                        "worker;main 30\n"
                        "worker;main;work 30\n"
                        "worker;main;work;io_read 20\n"
                        "worker;main;zero 0\n");
    free(s);
}
END_TEST

START_TEST(file_line_frames)
{
    struct spanprof__thread *t = unit_tree1("t", 1);
    struct spanprof__view v = unit_view(&t, 1);
    v.file_line = 1;
    char *s = unit_folded(&v);
    ck_assert_str_eq(s, "main (a.c:10) 30\n"
                        "main (a.c:10);work (b.c:30) 30\n"
                        "main (a.c:10);work (b.c:30);io_read (c.c:50) 20\n"
                        "main (a.c:10);zero (z.c:5) 0\n");
    free(s);
}
END_TEST

START_TEST(merge_same_stack_different_nodes_and_ns_conversion)
{
    /* same name from two sites (e.g. a static function in two files) merges into one line */
    static struct spanprof_site sb2 = {1, 0, "work", "other.c", 1, 2, 0, 0, NULL, NULL};
    struct spanprof__thread *t = spanprof__thread_new();
    unit_node(t, &t->root, &unit_sb, 1, 1000, 0);
    unit_node(t, &t->root, &sb2, 1, 3000, 0);
    unit_node(t, &t->root, &unit_sa, 0, 0, 0); /* never ran (e.g. inherited over fork): no line */
    struct spanprof__view v = unit_view(&t, 1);
    v.ns_per_tick = 0.5;
    char *s = unit_folded(&v);
    ck_assert_str_eq(s, "work 2000\n");
    free(s);
}
END_TEST

START_TEST(truncated_deep_stack)
{
    struct spanprof__thread *t = spanprof__thread_new();
    struct spanprof__node *n = &t->root;
    int depth = SPANPROF_FOLDED_MAX_DEPTH + 500;
    /* chain of "x" frames, each 1 tick of self time */
    static struct spanprof_site sx = {1, 0, "x", "x.c", 1, 2, 0, 0, NULL, NULL};
    for (int d = 0; d < depth; d++)
        n = unit_node(t, n, &sx, 1, (uint64_t)(depth - d), (uint64_t)(depth - d - 1));
    struct spanprof__view v = unit_view(&t, 1);
    char *s = unit_folded(&v);
    int lines = 0;
    for (char *p = s; *p; p++)
        lines += *p == '\n';
    ck_assert_int_eq(lines, SPANPROF_FOLDED_MAX_DEPTH + 1);
    char *last = strstr(s, ";[truncated] ");
    ck_assert_ptr_nonnull(last);
    ck_assert_str_eq(last, ";[truncated] 500\n");
    free(s);
}
END_TEST

Suite *folded_suite(void)
{
    Suite *s = suite_create("folded");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, lines_exact);
    tcase_add_test(tc, merged_threads_and_thread_roots);
    tcase_add_test(tc, file_line_frames);
    tcase_add_test(tc, merge_same_stack_different_nodes_and_ns_conversion);
    tcase_add_test(tc, truncated_deep_stack);
    suite_add_tcase(s, tc);
    return s;
}
