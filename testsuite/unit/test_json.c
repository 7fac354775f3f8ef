/* test_json.c — the JSON writer on hand-built trees, parsed back with json-c. */
#include <json-c/json.h>
#include <string.h>

#include "unit.h"

static struct spanprof_site sf = {1, 0, "fib", "f.c", 3, 9, 0, 0, NULL, NULL};
static struct spanprof_site sg = {1, 0, "go", "g.c", 12, 14, 0, 0, NULL, NULL};

static json_object *get(json_object *o, const char *key)
{
    json_object *v = NULL;
    ck_assert_msg(json_object_object_get_ex(o, key, &v), "missing key %s", key);
    return v;
}
#define I(o, k) json_object_get_int64(get(o, k))

START_TEST(fields_and_counts)
{
    /* thread A: go(100; child 90) -> fib(90; 60) -> fib(60; 0) ; thread B: fib(10) */
    struct spanprof__thread *a = spanprof__thread_new(), *b = spanprof__thread_new();
    a->tid = 101;
    strcpy(a->name, "main");
    b->tid = 102;
    a->abandoned = 2;
    b->unmatched = 1;
    b->overflow = 5;
    struct spanprof__node *g = unit_node(a, &a->root, &sg, 1, 100, 90);
    struct spanprof__node *f1 = unit_node(a, g, &sf, 1, 90, 60);
    unit_node(a, f1, &sf, 3, 60, 0);
    unit_node(b, &b->root, &sf, 2, 10, 0);
    struct spanprof__thread *ts[2] = {a, b};
    struct spanprof__view v = unit_view(ts, 2);
    struct spanprof__json_meta m = {.pid = 77, .program = "/bin/prog", .start_time = "2025-01-02T03:04:05.006Z",
                                    .wall_ns = 12345, .clock = "tsc", .extra_unmatched = 3};
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    ck_assert_int_eq(spanprof__json_write(fp, &v, &m), 0);
    fclose(fp);
    json_object *o = json_tokener_parse(buf);
    ck_assert_ptr_nonnull(o);
    ck_assert_int_eq(I(o, "version"), 1);
    ck_assert_int_eq(I(o, "pid"), 77);
    ck_assert_str_eq(json_object_get_string(get(o, "program")), "/bin/prog");
    ck_assert_str_eq(json_object_get_string(get(o, "start_time")), "2025-01-02T03:04:05.006Z");
    ck_assert_int_eq(I(o, "wall_ns"), 12345);
    ck_assert_int_eq(I(o, "thread_count"), 2);
    ck_assert_str_eq(json_object_get_string(get(o, "clock")), "tsc");
    json_object *th = get(o, "threads");
    ck_assert_int_eq(json_object_array_length(th), 2);
    ck_assert_int_eq(I(json_object_array_get_idx(th, 0), "tid"), 101);
    ck_assert_str_eq(json_object_get_string(get(json_object_array_get_idx(th, 0), "name")), "main");
    ck_assert_int_eq(I(json_object_array_get_idx(th, 0), "calls"), 5);
    ck_assert_str_eq(json_object_get_string(get(json_object_array_get_idx(th, 1), "name")), "thread-102");
    ck_assert_int_eq(I(json_object_array_get_idx(th, 1), "calls"), 2);
    json_object *sp = get(o, "spans");
    ck_assert_int_eq(json_object_array_length(sp), 2);
    json_object *jf = json_object_array_get_idx(sp, 0), *jg = json_object_array_get_idx(sp, 1);
    ck_assert_str_eq(json_object_get_string(get(jf, "name")), "fib");
    ck_assert_str_eq(json_object_get_string(get(jf, "file")), "f.c");
    ck_assert_int_eq(I(jf, "line"), 3);
    ck_assert_int_eq(I(jf, "last_line"), 9);
    ck_assert_int_eq(I(jf, "calls"), 6);
    ck_assert_int_eq(I(jf, "total_ns"), 100); /* 90 (outermost in A) + 10 (B) */
    ck_assert_int_eq(I(jf, "self_ns"), 100);  /* 30 + 60 + 10 */
    ck_assert_int_eq(I(jf, "max_depth"), 2);
    ck_assert_str_eq(json_object_get_string(get(jg, "name")), "go");
    ck_assert_int_eq(I(jg, "calls"), 1);
    ck_assert_int_eq(I(jg, "total_ns"), 100);
    ck_assert_int_eq(I(jg, "self_ns"), 10);
    ck_assert_int_eq(I(jg, "max_depth"), 1);
    json_object *an = get(o, "anomalies");
    ck_assert_int_eq(I(an, "abandoned_frames"), 2);
    ck_assert_int_eq(I(an, "unmatched_exits"), 4);
    ck_assert_int_eq(I(an, "open_frames"), 0);
    ck_assert_int_eq(I(an, "overflow_calls"), 5);
    json_object_put(o);
    free(buf);
}
END_TEST

START_TEST(empty_view)
{
    struct spanprof__view v = unit_view(NULL, 0);
    struct spanprof__json_meta m = {.pid = 1, .program = "p", .start_time = "t", .clock = "monotonic"};
    json_object *o = spanprof__json_build(&v, &m);
    ck_assert_int_eq(json_object_array_length(get(o, "spans")), 0);
    ck_assert_int_eq(json_object_array_length(get(o, "threads")), 0);
    ck_assert_int_eq(I(o, "thread_count"), 0);
    json_object_put(o);
}
END_TEST

Suite *json_suite(void)
{
    Suite *s = suite_create("json");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, fields_and_counts);
    tcase_add_test(tc, empty_view);
    suite_add_tcase(s, tc);
    return s;
}
