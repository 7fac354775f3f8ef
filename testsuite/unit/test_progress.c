/* test_progress.c — progress points: exact hits (also from several threads at once), coz
 * throughput counters looked up once per site by name, the JSON "progress" array, sites the
 * runtime must ignore, and the debug-info check's "can't tell" cases. */
#include <json-c/json.h>
#include <pthread.h>
#include <string.h>

#include "common/debuginfo.h"
#include "unit.h"

#define PROGRESS_SITE(var, nm, ln)                                                               \
    static struct spanprof_site var = {SPANPROF_SITE_VERSION, SPANPROF_KIND_PROGRESS, nm, "p.c", \
                                       ln, ln, 0, 0, NULL, NULL}

static json_object *get(json_object *o, const char *key)
{
    json_object *v = NULL;
    ck_assert_msg(json_object_object_get_ex(o, key, &v), "missing key %s", key);
    return v;
}
#define I(o, k) json_object_get_int64(get(o, k))

/* The JSON array, built as the writer does (under the lock). */
static json_object *progress_json(void)
{
    spanprof__lock();
    json_object *a = spanprof__progress_json();
    spanprof__unlock();
    ck_assert_ptr_nonnull(a);
    return a;
}

PROGRESS_SITE(item, "item", 7);

START_TEST(hits_are_counted)
{
    for (int i = 0; i < 5; i++)
        __spanprof_progress(&item);
    ck_assert_uint_eq(item.state, SPANPROF__SITE_FAST);
    json_object *a = progress_json();
    ck_assert_int_eq(json_object_array_length(a), 1);
    json_object *p = json_object_array_get_idx(a, 0);
    ck_assert_str_eq(json_object_get_string(get(p, "name")), "item");
    ck_assert_str_eq(json_object_get_string(get(p, "file")), "p.c");
    ck_assert_int_eq(I(p, "line"), 7);
    ck_assert_int_eq(I(p, "hits"), 5);
    json_object_put(a);
}
END_TEST

PROGRESS_SITE(shared_point, "shared", 3);
enum { THREADS = 4, HITS = 100000 };

static void *hit_many(void *unused)
{
    (void)unused;
    for (int i = 0; i < HITS; i++)
        __spanprof_progress(&shared_point);
    return NULL;
}

START_TEST(exact_under_threads)
{
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, hit_many, NULL), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    json_object *a = progress_json();
    ck_assert_int_eq(json_object_array_length(a), 1);
    ck_assert_int_eq(I(json_object_array_get_idx(a, 0), "hits"), THREADS * HITS);
    json_object_put(a);
}
END_TEST

PROGRESS_SITE(b_late, "b", 20);
PROGRESS_SITE(b_early, "b", 10);
PROGRESS_SITE(a_point, "a", 30);

START_TEST(sorted_by_name_file_line)
{
    __spanprof_progress(&b_late);
    __spanprof_progress(&b_early);
    __spanprof_progress(&b_early);
    __spanprof_progress(&a_point);
    json_object *a = progress_json();
    ck_assert_int_eq(json_object_array_length(a), 3);
    ck_assert_str_eq(json_object_get_string(get(json_object_array_get_idx(a, 0), "name")), "a");
    ck_assert_int_eq(I(json_object_array_get_idx(a, 1), "line"), 10);
    ck_assert_int_eq(I(json_object_array_get_idx(a, 1), "hits"), 2);
    ck_assert_int_eq(I(json_object_array_get_idx(a, 2), "line"), 20);
    ck_assert_int_eq(I(json_object_array_get_idx(a, 2), "hits"), 1);
    json_object_put(a);
}
END_TEST

/* A stand-in for libcoz's _coz_get_counter: records what was asked. */
static struct spanprof__coz_counter fake_counter;
static int asked_type, asked_count;
static char asked_name[32];

static struct spanprof__coz_counter *fake_coz_get(int type, const char *name)
{
    asked_type = type;
    asked_count++;
    snprintf(asked_name, sizeof asked_name, "%s", name);
    return &fake_counter;
}

PROGRESS_SITE(under_coz, "requests", 5);

START_TEST(coz_throughput_counter)
{
    spanprof__g.coz_get = fake_coz_get;
    for (int i = 0; i < 3; i++)
        __spanprof_progress(&under_coz);
    ck_assert_int_eq(asked_count, 1); /* looked up once, then cached in the site */
    ck_assert_int_eq(asked_type, 1);  /* coz's throughput counter */
    ck_assert_str_eq(asked_name, "requests");
    ck_assert_uint_eq(under_coz.state, SPANPROF__SITE_SLOW);
    ck_assert_uint_eq(fake_counter.count, 3);
    json_object *a = progress_json();
    ck_assert_int_eq(I(json_object_array_get_idx(a, 0), "hits"), 3);
    json_object_put(a);
}
END_TEST

static struct spanprof_site foreign = {SPANPROF_SITE_VERSION + 1, SPANPROF_KIND_PROGRESS, "x", "p.c",
                                       1, 1, 0, 0, NULL, NULL};

START_TEST(foreign_version_ignored)
{
    unit_stderr_begin();
    __spanprof_progress(&foreign);
    __spanprof_progress(&foreign);
    char *err = unit_stderr_end();
    ck_assert_uint_eq(foreign.state, SPANPROF__SITE_OFF);
    ck_assert_ptr_nonnull(strstr(err, "spanprof: warning: ignoring span sites of site version 2"));
    free(err);
    json_object *a = progress_json();
    ck_assert_int_eq(json_object_array_length(a), 0);
    json_object_put(a);
}
END_TEST

PROGRESS_SITE(json_point, "in.profile", 9);

START_TEST(in_the_json_profile)
{
    __spanprof_progress(&json_point);
    struct spanprof__view v = unit_view(NULL, 0);
    struct spanprof__json_meta m = {.pid = 1, .program = "p", .start_time = "t", .clock = "tsc"};
    spanprof__lock();
    json_object *o = spanprof__json_build(&v, &m);
    spanprof__unlock();
    json_object *a = get(o, "progress");
    ck_assert_int_eq(json_object_array_length(a), 1);
    ck_assert_str_eq(json_object_get_string(get(json_object_array_get_idx(a, 0), "name")), "in.profile");
    ck_assert_int_eq(I(json_object_array_get_idx(a, 0), "hits"), 1);
    json_object_put(o);
}
END_TEST

START_TEST(debug_info_cannot_tell)
{
    /* Not ELF, or no file: no verdict, hence no warning. */
    ck_assert_ptr_null(spanprof__debug_info_problem("/proc/self/status"));
    ck_assert_ptr_null(spanprof__debug_info_problem("/nonexistent/spanprof-test"));
}
END_TEST

Suite *progress_suite(void)
{
    Suite *s = suite_create("progress");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, hits_are_counted);
    tcase_add_test(tc, exact_under_threads);
    tcase_add_test(tc, sorted_by_name_file_line);
    tcase_add_test(tc, coz_throughput_counter);
    tcase_add_test(tc, foreign_version_ignored);
    tcase_add_test(tc, in_the_json_profile);
    tcase_add_test(tc, debug_info_cannot_tell);
    suite_add_tcase(s, tc);
    return s;
}
