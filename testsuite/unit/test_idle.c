/* test_idle.c — SPANPROF_IDLE on hand-built threads (exact values: 1 ns per tick): each thread's
 * time outside spans is its wall time less the time in its outermost spans, in the folded lines
 * and the JSON; unknown for a running thread inside a span that is not the writer; nothing
 * without the switch or without a clock. */
#include <json-c/json.h>
#include <string.h>

#include "unit.h"

/* unit_tree1's thread, ended: wall END - START ticks, 100 of them in its outermost span (main). */
static struct spanprof__thread *ended(const char *name, long tid, uint64_t start, uint64_t end)
{
    struct spanprof__thread *t = unit_tree1(name, tid);
    t->root.child = 100;
    t->start_tick = start;
    t->end_tick = end;
    t->exited = 1;
    return t;
}

START_TEST(folded_lines)
{
    struct spanprof__thread *ts[3] = {ended("worker", 11, 1000, 1500), ended("worker", 12, 2000, 2300),
                                      ended("main", 10, 0, 5000)};
    struct spanprof__view v = unit_view(ts, 3);
    v.idle = 1;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(spanprof__idle_folded_write(f, &v), 0);
    fclose(f);
    /* 400 + 200 + 4900 */
    ck_assert_str_eq(buf, "(outside spans) 5500\n");
    free(buf);
    /* per thread: threads of one name share a line, as their stacks do */
    v.threads_root = 1;
    f = open_memstream(&buf, &len);
    ck_assert_int_eq(spanprof__idle_folded_write(f, &v), 0);
    fclose(f);
    ck_assert_str_eq(buf, "main;(outside spans) 4900\n"
                          "worker;(outside spans) 600\n");
    free(buf);
}
END_TEST

START_TEST(off_or_no_clock)
{
    struct spanprof__thread *t = ended("t", 1, 0, 1000);
    struct spanprof__view v = unit_view(&t, 1);
    uint64_t ns = 7;
    ck_assert_int_eq(spanprof__thread_idle_ns(&v, t, &ns), 0); /* SPANPROF_IDLE unset */
    ck_assert_uint_eq(ns, 0);
    v.idle = 1;
    v.counting = 1; /* SPANPROF=count: no clock */
    ck_assert_int_eq(spanprof__thread_idle_ns(&v, t, &ns), 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(spanprof__idle_folded_write(f, &v), 0);
    fclose(f);
    ck_assert_str_eq(buf, "");
    free(buf);
    v.counting = 0;
    ck_assert_int_eq(spanprof__thread_idle_ns(&v, t, &ns), 1);
    ck_assert_uint_eq(ns, 900);
}
END_TEST

START_TEST(running_threads)
{
    /* another thread, running: outside any span, its time runs to the write */
    struct spanprof__thread *t = unit_tree1("t", 1);
    t->root.child = 100;
    t->start_tick = 1000;
    struct spanprof__view v = unit_view(&t, 1);
    v.idle = 1;
    v.now = 1600;
    uint64_t ns;
    ck_assert_int_eq(spanprof__thread_idle_ns(&v, t, &ns), 1);
    ck_assert_uint_eq(ns, 500);
    /* inside a span: its outermost span's time so far is not known here */
    t->top = t->frames + 1;
    ck_assert_int_eq(spanprof__thread_idle_ns(&v, t, &ns), 0);
    t->top = t->frames;
    /* more time in spans than wall time (clamped, as every duration is) */
    t->root.child = 5000;
    ck_assert_int_eq(spanprof__thread_idle_ns(&v, t, &ns), 1);
    ck_assert_uint_eq(ns, 0);
}
END_TEST

START_TEST(json_field)
{
    struct spanprof__thread *ts[2] = {ended("a", 1, 10, 1010), unit_tree1("b", 2)};
    ts[1]->top = ts[1]->frames + 1; /* running, inside a span: no figure */
    struct spanprof__view v = unit_view(ts, 2);
    v.idle = 1;
    struct spanprof__json_meta m = {.pid = 1, .program = "p", .start_time = "", .clock = "tsc"};
    json_object *o = spanprof__json_build(&v, &m), *threads, *a, *b, *x;
    ck_assert(json_object_object_get_ex(o, "threads", &threads));
    a = json_object_array_get_idx(threads, 0);
    b = json_object_array_get_idx(threads, 1);
    ck_assert(json_object_object_get_ex(a, "outside_spans_ns", &x));
    ck_assert_int_eq(json_object_get_int64(x), 900);
    ck_assert(!json_object_object_get_ex(b, "outside_spans_ns", &x));
    json_object_put(o);
    /* without the switch, no field */
    v.idle = 0;
    o = spanprof__json_build(&v, &m);
    json_object_object_get_ex(o, "threads", &threads);
    ck_assert(!json_object_object_get_ex(json_object_array_get_idx(threads, 0), "outside_spans_ns", &x));
    json_object_put(o);
}
END_TEST

Suite *idle_suite(void)
{
    Suite *s = suite_create("idle");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, folded_lines);
    tcase_add_test(tc, off_or_no_clock);
    tcase_add_test(tc, running_threads);
    tcase_add_test(tc, json_field);
    suite_add_tcase(s, tc);
    return s;
}
