/* test_compensate.c — compensation (SPANPROF_COMPENSATE) on hand-built trees with exact costs:
 * abandoned activations lose only their enter's cost, a site's total is the sum of the self
 * times printed below its outermost nodes, the costs are lowered to what the recorded times
 * allow, a failed measurement is said in the JSON and on stderr; and the measurement itself. */
#include <json-c/json.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"

UNIT_SITE(s_req, "request");
UNIT_SITE(s_parse, "parse");
UNIT_SITE(s_x, "x");

/* A compensated view of T with 1 ns per tick: a call costs 10 ticks inside its window and 8
 * outside; of an abandoned one, the enter's part, 2 inside and 1 outside. */
static struct spanprof__view view_of(struct spanprof__thread **t)
{
    struct spanprof__view v = unit_view(t, 1);
    v.compensate = 1;
    v.cost_in = v.measured_in = 10;
    v.cost_out = v.measured_out = 8;
    v.enter_in = 2;
    v.enter_out = 1;
    return v;
}

static void abandon(struct spanprof__node *n, int times)
{
    for (int i = 0; i < times; i++)
        spanprof__abandoned_count(n);
}

static struct spanprof__site_stats *stats_of(struct spanprof__site_stats *st, size_t n,
                                             const struct spanprof_site *site)
{
    for (size_t i = 0; i < n; i++)
        if (st[i].site == site)
            return &st[i];
    ck_abort_msg("no stats for %s", site->name);
    return NULL;
}

START_TEST(abandoned_calls_lose_only_their_enter)
{
    /* request (10 calls; self 300) -> parse (10, all abandoned; self 550) -> parse (10, all
     * abandoned; self 50); request -> x (4, one abandoned; self 100). */
    struct spanprof__thread *t = spanprof__thread_new();
    struct spanprof__node *r = unit_node(t, &t->root, &s_req, 10, 1000, 700);
    struct spanprof__node *p1 = unit_node(t, r, &s_parse, 10, 600, 50);
    struct spanprof__node *p2 = unit_node(t, p1, &s_parse, 10, 50, 0);
    struct spanprof__node *x = unit_node(t, r, &s_x, 4, 100, 0);
    abandon(p1, 10);
    abandon(p2, 10);
    abandon(x, 1);
    struct spanprof__view v = view_of(&t);
    /* request: 300 - 10 x 10 - parse's 10 x 1 - x's 3 x 8 + 1 x 1; parse: 550 - 10 x 2 - the
     * deeper parse's 10 x 1; the deeper parse: 50 - 10 x 2; x: 100 - 3 x 10 - 1 x 2.  Whole
     * calls' costs would take 100 out of the deeper parse's 50, and 180 out of parse's 550. */
    ck_assert_uint_eq(spanprof__view_self(&v, r), 165);
    ck_assert_uint_eq(spanprof__view_self(&v, p1), 520);
    ck_assert_uint_eq(spanprof__view_self(&v, p2), 30);
    ck_assert_uint_eq(spanprof__view_self(&v, x), 68);
    char *s = unit_folded(&v);
    ck_assert_str_eq(s, "request 165\nrequest;parse 520\nrequest;parse;parse 30\nrequest;x 68\n");
    free(s);
    size_t n;
    struct spanprof__site_stats *st = spanprof__aggregate_sites(&v, &n);
    ck_assert_uint_eq(n, 3);
    /* Totals: the sums of the folded values below each site's outermost nodes. */
    struct spanprof__site_stats *sp = stats_of(st, n, &s_parse), *sr = stats_of(st, n, &s_req);
    ck_assert_uint_eq(sp->calls, 20);
    ck_assert_uint_eq(sp->total, 550);
    ck_assert_uint_eq(sp->self, 550);
    ck_assert_uint_eq(sr->total, 783);
    ck_assert_uint_eq(sr->self, 165);
    ck_assert_uint_eq(stats_of(st, n, &s_x)->total, 68);
    /* And as recorded: the outermost parse's total, both parses' self times. */
    ck_assert_uint_eq(sp->recorded_total, 600);
    ck_assert_uint_eq(sp->recorded_self, 600);
    ck_assert_uint_eq(sr->recorded_total, 1000);
    ck_assert_uint_eq(sr->recorded_self, 300);
    ck_assert_uint_eq(stats_of(st, n, &s_x)->recorded_self, 100);
    free(st);
}
END_TEST

START_TEST(total_never_below_what_it_called)
{
    /* a's self, 5, cannot hold its call's cost (10 + 8): 0.  Its total is what it called, 85,
     * not 100 - 10 - 18 = 72.  Uncompensated, both are as recorded, abandoned calls or not. */
    struct spanprof__thread *t = spanprof__thread_new();
    struct spanprof__node *a = unit_node(t, &t->root, &s_req, 1, 100, 95);
    struct spanprof__node *b = unit_node(t, a, &s_x, 1, 95, 0);
    struct spanprof__view v = view_of(&t), raw = unit_view(&t, 1);
    ck_assert_uint_eq(spanprof__view_self(&v, a), 0);
    ck_assert_uint_eq(spanprof__view_self(&v, b), 85);
    abandon(a, 1);
    size_t n;
    struct spanprof__site_stats *st = spanprof__aggregate_sites(&v, &n);
    ck_assert_uint_eq(stats_of(st, n, &s_req)->total, 85);
    ck_assert_uint_eq(stats_of(st, n, &s_req)->self, 0);
    ck_assert_uint_eq(stats_of(st, n, &s_x)->total, 85);
    free(st);
    st = spanprof__aggregate_sites(&raw, &n);
    ck_assert_uint_eq(stats_of(st, n, &s_req)->total, 100);
    ck_assert_uint_eq(stats_of(st, n, &s_req)->self, 5);
    free(st);
}
END_TEST

START_TEST(costs_fit_the_recorded_times)
{
    /* A leaf whose calls took 5 ticks each, less than the 10 measured inside a call: this run's
     * calls cost less than the measurement's, and no span goes below zero. */
    struct spanprof__thread *t = spanprof__thread_new();
    struct spanprof__node *p = unit_node(t, &t->root, &s_req, 10, 5000, 500);
    struct spanprof__node *l = unit_node(t, p, &s_x, 100, 500, 0);
    struct spanprof__view v = view_of(&t);
    spanprof__view_fit_costs(&v, NULL); /* a running thread's times: not read */
    ck_assert(v.cost_in == 10 && v.cost_out == 8);
    spanprof__view_fit_costs(&v, t);
    ck_assert(v.cost_in == 5 && v.cost_out == 8); /* p's self allows (4500 - 50) / 100 */
    ck_assert(v.enter_in == 2 && v.enter_out == 1);
    ck_assert_uint_eq(spanprof__view_self(&v, l), 0);
    ck_assert_uint_eq(spanprof__view_self(&v, p), 4500 - 50 - 800);
    /* A parent whose self time (700) cannot hold its children's outside parts at 8 either. */
    p->total = 1200;
    v = view_of(&t);
    __atomic_store_n(&t->exited, 1, __ATOMIC_RELEASE); /* an ended thread's times are final */
    spanprof__view_fit_costs(&v, NULL);
    ck_assert(v.cost_in == 5 && v.cost_out == 6.5 && v.enter_in == 2 && v.enter_out == 1);
    ck_assert_uint_eq(spanprof__view_self(&v, p), 0);
    /* The JSON says what was taken out, and what was measured. */
    struct spanprof__json_meta m = {.program = "p", .start_time = "", .clock = "tsc"};
    json_object *o = spanprof__json_build(&v, &m), *c, *f;
    ck_assert(json_object_object_get_ex(o, "compensation", &c));
    ck_assert(json_object_object_get_ex(c, "call_ns", &f) && json_object_get_double(f) == 11.5);
    ck_assert(json_object_object_get_ex(c, "inside_ns", &f) && json_object_get_double(f) == 5);
    ck_assert(json_object_object_get_ex(c, "measured_call_ns", &f) &&
              json_object_get_double(f) == 18);
    /* Each span's times as compensated, then as recorded (sorted by name: request, x). */
    static const char *const keys[] = {"total_ns", "self_ns", "recorded_total_ns",
                                       "recorded_self_ns"};
    static const int64_t want[2][4] = {{0, 0, 1200, 700}, {0, 0, 500, 500}};
    json_object *spans;
    ck_assert(json_object_object_get_ex(o, "spans", &spans));
    ck_assert_uint_eq(json_object_array_length(spans), 2);
    for (size_t i = 0; i < 2; i++)
        for (size_t k = 0; k < 4; k++) {
            ck_assert(json_object_object_get_ex(json_object_array_get_idx(spans, i), keys[k], &f));
            ck_assert_int_eq(json_object_get_int64(f), want[i][k]);
        }
    json_object_put(o);
}
END_TEST

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
    json_object *span = json_object_array_get_idx(json_object_object_get(o, "spans"), 0);
    ck_assert(json_object_object_get_ex(span, "total_ns", &f) && json_object_get_int64(f) == 100);
    ck_assert(!json_object_object_get_ex(span, "recorded_total_ns", &f)); /* nothing taken out */
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
        ck_assert(c->enter_in >= 0 && c->enter_in <= c->in);
        ck_assert(c->enter_out >= 0 && c->enter_out <= c->out);
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
    tcase_add_test(tc, abandoned_calls_lose_only_their_enter);
    tcase_add_test(tc, total_never_below_what_it_called);
    tcase_add_test(tc, costs_fit_the_recorded_times);
    tcase_add_test(tc, failed_measurement_is_said);
    tcase_add_test(tc, measurement_succeeds);
    suite_add_tcase(s, tc);
    return s;
}
