/* test_compensate.c — compensation (SPANPROF_COMPENSATE): a failed measurement is said in the
 * JSON and on stderr; and the measurement itself. */
#include <json-c/json.h>
#include <string.h>

#include "unit.h"

UNIT_SITE(s_req, "request");

START_TEST(failed_measurement_is_said)
{
    struct spanprof__thread *t = spanprof__thread_new();
    unit_node(t, &t->root, &s_req, 2, 100, 0);
    struct spanprof__view v = unit_view(&t, 1);
    v.compensation_failed = "the calls measured no slower than the loop without them";
    struct spanprof__json_meta m = {.program = "p", .start_time = "", .clock = "tsc"};
    json_object *o = spanprof__json_build(&v, &m), *c, *f;
    ck_assert(json_object_object_get_ex(o, "compensation", &c));
    ck_assert(json_object_object_get_ex(c, "failed", &f));
    ck_assert_str_eq(json_object_get_string(f), v.compensation_failed);
    ck_assert(!json_object_object_get_ex(c, "call_ns", &f));
    json_object_put(o);
    /* The write says it once on stderr. */
    spanprof__g.fork_child = 0;
    char dir[] = "/tmp/spanprof-unit-XXXXXX", json[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(json, sizeof json, "%s/p.json", dir);
    spanprof__outputs.folded = NULL;
    spanprof__outputs.json = json;
    spanprof__g.call_cost[0] = (struct spanprof__call_cost){.failed = v.compensation_failed};
    spanprof__g.call_cost[1] = spanprof__g.call_cost[0];
    unit_stderr_begin();
    ck_assert_int_eq(spanprof_flush(), 0);
    ck_assert_int_eq(spanprof_flush(), 0);
    char *err = unit_stderr_end();
    ck_assert_str_eq(err, "spanprof: warning: exact times keep the profiler's own cost: it could "
                          "not be measured (the calls measured no slower than the loop without "
                          "them)\n");
    free(err);
    unlink(json);
    rmdir(dir);
    spanprof__outputs.json = NULL;
}
END_TEST

START_TEST(measurement_succeeds)
{
    spanprof__flags.histogram = 0; /* the suite runs with histograms: nothing would be measured */
    spanprof__g.call_kinds_seen = 0;
    spanprof__calibrate();
    struct spanprof__call_cost first[2] = {spanprof__g.call_cost[0], spanprof__g.call_cost[1]};
    for (int k = 0; k < 2; k++) {
        const struct spanprof__call_cost *c = &first[k];
        ck_assert_msg(!c->failed, "%s", c->failed);
        ck_assert(c->in > 0 && c->out > 0);
    }
    /* Measured again (at exit): the lower stands, only the kind the writers take out. */
    spanprof__g.call_kinds_seen = 2;
    spanprof__calibrate();
    ck_assert(spanprof__g.call_cost[1].in + spanprof__g.call_cost[1].out <=
              first[1].in + first[1].out);
    ck_assert(memcmp(&spanprof__g.call_cost[0], &first[0], sizeof first[0]) == 0);
}
END_TEST

Suite *compensate_suite(void)
{
    Suite *s = suite_create("compensate");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, failed_measurement_is_said);
    tcase_add_test(tc, measurement_succeeds);
    suite_add_tcase(s, tc);
    return s;
}
