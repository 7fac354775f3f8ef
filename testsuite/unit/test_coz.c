/* test_coz.c — which spans are coz points (record/site.c) and how they count
 * (collect/slowpath.c): SPANPROF_COZ_PROGRESS makes a span's exits throughput visits, latency
 * points are the spans marked by attribute (or those SPANPROF_COZ_LATENCY names) but never
 * main, a point's garbage initial counts are balanced, and the variables' parsing. */
#include <string.h>

#include "unit.h"

/* A stand-in for libcoz's _coz_get_counter: one counter per (type, name), each starting at the
 * garbage coz 0.2.2 can leave in a new point (begin 1000, end 7, throughput 50). */
enum { MAX_COUNTERS = 16 };
static struct spanprof__coz_counter counters[MAX_COUNTERS];
static int counter_type[MAX_COUNTERS];
static const char *counter_name[MAX_COUNTERS];
static int ncounters;

static struct spanprof__coz_counter *fake_coz_get(int type, const char *name)
{
    for (int i = 0; i < ncounters; i++)
        if (counter_type[i] == type && strcmp(counter_name[i], name) == 0)
            return &counters[i];
    ck_assert_int_lt(ncounters, MAX_COUNTERS);
    counter_type[ncounters] = type;
    counter_name[ncounters] = name;
    counters[ncounters].count = type == 2 ? 1000 : type == 3 ? 7 : 50;
    return &counters[ncounters++];
}

/* The count of NAME's counter of TYPE (1 throughput, 2 begin, 3 end); -1: never asked for. */
static long counter(int type, const char *name)
{
    for (int i = 0; i < ncounters; i++)
        if (counter_type[i] == type && strcmp(counter_name[i], name) == 0)
            return (long)counters[i].count;
    return -1;
}

#define SITE_OF_KIND(var, nm, kind)                                                             \
    static struct spanprof_site var = {SPANPROF_SITE_VERSION, kind, nm, "coz.c", __LINE__,      \
                                       __LINE__ + 1, 0, 0, NULL, NULL}

SITE_OF_KIND(s_marked, "handle", SPANPROF_KIND_SPAN);
SITE_OF_KIND(s_chosen, "helper", SPANPROF_KIND_SPAN_BY_OPTION);
SITE_OF_KIND(s_emit, "emit_reply", SPANPROF_KIND_SPAN_BY_OPTION);
SITE_OF_KIND(s_main, "main", SPANPROF_KIND_SPAN);
UNIT_SPAN_FN(chosen_fn, s_chosen, )
UNIT_SPAN_FN(marked_fn, s_marked, chosen_fn())
UNIT_SPAN_FN(emit_fn, s_emit, )
UNIT_SPAN_FN(main_fn, s_main, )

static void run_all(int times)
{
    for (int i = 0; i < times; i++) {
        marked_fn();
        emit_fn();
        main_fn();
    }
}

START_TEST(default_points)
{
    spanprof__g.coz_get = fake_coz_get;
    run_all(3);
    /* The marked span is a latency point, its end count set to its begin count when first seen,
     * so coz's difference is the calls in flight (0), not garbage. */
    ck_assert_int_eq(counter(2, "handle"), 1003);
    ck_assert_int_eq(counter(3, "handle"), 1003);
    ck_assert_uint_eq(s_marked.state, SPANPROF__SITE_SLOW);
    /* Spans chosen by an option, and main, are no coz points: plain recording. */
    ck_assert_int_eq(counter(2, "helper"), -1);
    ck_assert_int_eq(counter(2, "emit_reply"), -1);
    ck_assert_int_eq(counter(2, "main"), -1);
    ck_assert_uint_eq(s_chosen.state, UNIT_TIMED_STATE);
    ck_assert_uint_eq(s_main.state, UNIT_TIMED_STATE);
}
END_TEST

START_TEST(progress_by_name)
{
    spanprof__g.coz_get = fake_coz_get;
    spanprof__g.coz_progress = "nothing,emit_*";
    run_all(4);
    /* Each exit a visit of a throughput point of the span's name; no latency point for it. */
    ck_assert_int_eq(counter(1, "emit_reply"), 54);
    ck_assert_int_eq(counter(2, "emit_reply"), -1);
    ck_assert_int_eq(counter(3, "emit_reply"), -1);
    ck_assert_uint_eq(s_emit.state, SPANPROF__SITE_SLOW);
    struct spanprof__node *n = unit_child(&unit_self()->root, &s_emit);
    ck_assert_uint_eq(n->calls, 4); /* and still a span */
}
END_TEST

START_TEST(latency_by_name)
{
    spanprof__g.coz_get = fake_coz_get;
    spanprof__g.coz_latency = "help*,main";
    run_all(2);
    ck_assert_int_eq(counter(2, "helper"), 1002);
    ck_assert_int_eq(counter(3, "helper"), 1002);
    ck_assert_int_eq(counter(2, "handle"), -1); /* the list replaces the default */
    ck_assert_int_eq(counter(2, "main"), -1);   /* never main */
}
END_TEST

START_TEST(latency_none)
{
    spanprof__g.coz_get = fake_coz_get;
    spanprof__g.coz_latency = "";
    run_all(2);
    ck_assert_int_eq(ncounters, 0);
    ck_assert_uint_eq(s_marked.state, UNIT_TIMED_STATE);
}
END_TEST

START_TEST(variables_parsed)
{
    struct spanprof__options o;
    const char *const good[] = {"SPANPROF_COZ_PROGRESS", "emit,send_*", "SPANPROF_COZ_LATENCY", "",
                                NULL};
    char *err = UNIT_LOAD_CONFIG(spanprof__options_load, &o, good);
    ck_assert_str_eq(err, "");
    ck_assert_str_eq(o.coz_progress, "emit,send_*");
    ck_assert_str_eq(o.coz_latency, "");
    free(err);
    const char *const bad[] = {"SPANPROF_COZ_PROGRESS", "emit,", "SPANPROF_COZ_LATENCY", ",x", NULL};
    err = UNIT_LOAD_CONFIG(spanprof__options_load, &o, bad);
    ck_assert_str_eq(err, "spanprof: warning: SPANPROF_COZ_PROGRESS='emit,' has an empty pattern "
                          "(a comma at an end or two in a row); using none\n"
                          "spanprof: warning: SPANPROF_COZ_LATENCY=',x' has an empty pattern "
                          "(a comma at an end or two in a row); using none\n");
    ck_assert_ptr_null(o.coz_progress);
    ck_assert_ptr_null(o.coz_latency);
    free(err);
}
END_TEST

Suite *coz_suite(void)
{
    Suite *s = suite_create("coz");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, default_points);
    tcase_add_test(tc, progress_by_name);
    tcase_add_test(tc, latency_by_name);
    tcase_add_test(tc, latency_none);
    tcase_add_test(tc, variables_parsed);
    suite_add_tcase(s, tc);
    return s;
}
