/* test_trace.c — SPANPROF_TRACE: buffer-size parsing, the ring (wrap, drop count, order), and
 * the Chrome trace writer's balancing, timestamps, names and metadata, with exact values. */
#include <json-c/json.h>
#include <pthread.h>
#include <string.h>

#include "collect/trace_ring.h"
#include "unit.h"

UNIT_SITE(sa, "a");
UNIT_SITE(sb, "b");
UNIT_SITE(sq, "say \"hi\"");
UNIT_SPAN_FN(fn_b, sb, )
UNIT_SPAN_FN(fn_a, sa, fn_b(); fn_b())

/* Parses SPANPROF_TRACE_BUFFER=VALUE; *warning gets what went to the error stream. */
static size_t parse(const char *value, char **warning)
{
    const char *env[] = {"SPANPROF_TRACE_BUFFER", value, NULL};
    char *buf = NULL;
    size_t len = 0;
    FILE *err = open_memstream(&buf, &len);
    unit_fake_env = value ? env : env + 2;
    struct spanprof__options o;
    spanprof__options_load(&o, unit_fake_getenv, err);
    size_t r = o.trace_buffer;
    fclose(err);
    *warning = buf;
    return r;
}

START_TEST(buffer_size)
{
    char *w;
    ck_assert_uint_eq(parse(NULL, &w), 8u << 20);
    ck_assert_str_eq(w, "");
    free(w);
    ck_assert_uint_eq(parse("0.5", &w), 1u << 19);
    ck_assert_str_eq(w, "");
    free(w);
    ck_assert_uint_eq(parse("1e-9", &w), 32); /* rounded up to two events */
    free(w);
    static const char *const bad[] = {"0", "-1", "8M", "", "nan", "inf", "70000"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_uint_eq(parse(bad[i], &w), 8u << 20);
        char expect[200];
        snprintf(expect, sizeof expect,
                 "spanprof: warning: SPANPROF_TRACE_BUFFER='%s' is not a size in MiB (a number > 0 "
                 "and <= 65536); using 8\n",
                 bad[i]);
        ck_assert_str_eq(w, expect);
        free(w);
    }
}
END_TEST

START_TEST(config_trace)
{
    static const char *const env[] = {"SPANPROF_TRACE", "t-%p.json", "SPANPROF_TRACE_BUFFER", "0.25", NULL};
    struct spanprof__options c;
    char *buf = UNIT_LOAD_CONFIG(spanprof__options_load, &c, env);
    ck_assert_str_eq(buf, "");
    ck_assert_str_eq(c.trace, "t-%p.json");
    ck_assert_uint_eq(c.trace_buffer, 1u << 18);
    free(buf);
    static const char *const env2[] = {"SPANPROF_TRACE", "t-%d.json", NULL};
    buf = UNIT_LOAD_CONFIG(spanprof__options_load, &c, env2);
    ck_assert_str_eq(buf, "spanprof: warning: SPANPROF_TRACE='t-%d.json' has a '%' not followed by 'p' or '%'; using none\n");
    ck_assert_ptr_null(c.trace);
    ck_assert_uint_eq(c.trace_buffer, 8u << 20);
    free(buf);
}
END_TEST

/* Real spans into a 4-event ring: the last 4 of 6 events are kept, in order. */
START_TEST(ring_keeps_most_recent)
{
    unit_tracing(4 * sizeof(struct spanprof__trace_event));
    fn_a(); /* B a, B b, E b, B b, E b, E a */
    struct spanprof__trace_ring *r = unit_self()->trace;
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->capacity, 4);
    ck_assert_uint_eq(r->head, 6);
    size_t n;
    uint64_t dropped;
    struct spanprof__trace_event *ev = spanprof__trace_snapshot(r, &n, &dropped);
    ck_assert_uint_eq(n, 4);
    ck_assert_uint_eq(dropped, 2);
    const uintptr_t X = SPANPROF__TRACE_EXIT;
    ck_assert_uint_eq(ev[0].tag, (uintptr_t)&sb | X);
    ck_assert_uint_eq(ev[1].tag, (uintptr_t)&sb);
    ck_assert_uint_eq(ev[2].tag, (uintptr_t)&sb | X);
    ck_assert_uint_eq(ev[3].tag, (uintptr_t)&sa | X);
    for (size_t i = 1; i < n; i++)
        ck_assert_uint_le(ev[i - 1].tick, ev[i].tick);
    free(ev);
    /* The profile is still recorded alongside. */
    ck_assert_uint_eq(unit_child(&unit_self()->root, &sa)->calls, 1);
}
END_TEST

START_TEST(ring_without_tracing)
{
    unit_tracing(0);
    fn_a();
    ck_assert_ptr_null(unit_self()->trace);
    ck_assert_uint_eq(sa.state, UNIT_TIMED_STATE);
}
END_TEST

/* ---- writer ---- */

static void put(struct spanprof__trace_ring *r, const struct spanprof_site *s, int exit, uint64_t tick)
{
    uint64_t h = r->head++;
    r->events[h & (r->capacity - 1)].tag = (uintptr_t)s | (exit ? SPANPROF__TRACE_EXIT : 0) |
                                           (h & r->capacity ? SPANPROF__TRACE_ODD_LAP : 0);
    r->events[h & (r->capacity - 1)].tick = tick;
}

static struct spanprof__thread *fake_thread(pid_t tid, const char *name, size_t capacity)
{
    struct spanprof__thread *t = spanprof__thread_new();
    ck_assert_ptr_nonnull(t);
    t->tid = tid;
    snprintf(t->name, sizeof t->name, "%s", name);
    t->trace = spanprof__trace_ring_new(capacity * sizeof(struct spanprof__trace_event));
    ck_assert_ptr_nonnull(t->trace);
    return t;
}

/* Writes the trace of THREADS (origin tick 1000, 1 ns per tick; end tick 9000, or a capture of
 * WIN) and parses it. */
static json_object *write_trace_of(struct spanprof__thread **ts, size_t n,
                                   const struct spanprof__trace_window *win)
{
    struct spanprof__view v = unit_view(ts, n);
    struct spanprof__json_meta m = {.pid = 42, .program = "/bin/prog", .start_time = "T", .clock = "tsc"};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(win ? spanprof__trace_write_window(f, &v, &m, 1000, win)
                         : spanprof__trace_write_at(f, &v, &m, 1000, 9000),
                     0);
    fclose(f);
    json_object *o = json_tokener_parse(buf);
    ck_assert_msg(o != NULL, "not JSON: %s", buf);
    free(buf);
    return o;
}

static json_object *write_trace(struct spanprof__thread **ts, size_t n)
{
    return write_trace_of(ts, n, NULL);
}

/* The events of thread TID as "B a 1.000,E a 2.500,...". */
static char *events_of(json_object *o, long tid)
{
    json_object *evs = json_object_object_get(o, "traceEvents");
    char *out = calloc(1, 4096);
    for (size_t i = 0; i < json_object_array_length(evs); i++) {
        json_object *e = json_object_array_get_idx(evs, i);
        const char *ph = json_object_get_string(json_object_object_get(e, "ph"));
        if (strcmp(ph, "M") == 0 || json_object_get_int64(json_object_object_get(e, "tid")) != tid)
            continue;
        ck_assert_int_eq(json_object_get_int64(json_object_object_get(e, "pid")), 42);
        snprintf(out + strlen(out), 4096 - strlen(out), "%s%s %s %.3f", *out ? "," : "", ph,
                 json_object_get_string(json_object_object_get(e, "name")),
                 json_object_get_double(json_object_object_get(e, "ts")));
    }
    return out;
}

static long long other(json_object *o, const char *key)
{
    return json_object_get_int64(json_object_object_get(json_object_object_get(o, "otherData"), key));
}

static long long thread_stat(json_object *o, size_t i, const char *key)
{
    json_object *t = json_object_array_get_idx(
        json_object_object_get(json_object_object_get(o, "otherData"), "threads"), i);
    return json_object_get_int64(json_object_object_get(t, key));
}

START_TEST(writer_balanced_and_metadata)
{
    sa.id = 1, sb.id = 2, sq.id = 3;
    struct spanprof__thread *t1 = fake_thread(7, "main", 16), *t2 = fake_thread(8, "", 16);
    put(t1->trace, &sa, 0, 2000);
    put(t1->trace, &sq, 0, 2500);
    put(t1->trace, &sq, 1, 3000);
    put(t1->trace, &sa, 1, 4000);
    put(t2->trace, &sb, 0, 1500);
    put(t2->trace, &sb, 1, 1400); /* another core's clock a little behind: clamped */
    struct spanprof__thread *ts[] = {t1, t2};
    json_object *o = write_trace(ts, 2);
    char *e = events_of(o, 7);
    ck_assert_str_eq(e, "B a 1.000,B say \"hi\" 1.500,E say \"hi\" 2.000,E a 3.000");
    free(e);
    e = events_of(o, 8);
    ck_assert_str_eq(e, "B b 0.500,E b 0.500");
    free(e);
    /* Metadata: process name, thread names (a nameless thread gets thread-TID), order. */
    json_object *evs = json_object_object_get(o, "traceEvents");
    const char *expect[] = {
        "{ \"ph\": \"M\", \"name\": \"process_name\", \"pid\": 42, \"tid\": 0, \"args\": { \"name\": \"\\/bin\\/prog\" } }",
        "{ \"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 42, \"tid\": 7, \"args\": { \"name\": \"main\" } }",
        "{ \"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": 42, \"tid\": 7, \"args\": { \"sort_index\": 0 } }",
        "{ \"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 42, \"tid\": 8, \"args\": { \"name\": \"thread-8\" } }",
    };
    for (size_t i = 0; i < 4; i++)
        ck_assert_str_eq(json_object_to_json_string(json_object_array_get_idx(evs, i)), expect[i]);
    ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "displayTimeUnit")), "ns");
    ck_assert_int_eq(other(o, "dropped_events"), 0);
    ck_assert_int_eq(other(o, "buffer_events_per_thread"), 16);
    ck_assert_int_eq(other(o, "pid"), 42);
    ck_assert_int_eq(thread_stat(o, 0, "tid"), 7);
    ck_assert_int_eq(thread_stat(o, 0, "events"), 4);
    ck_assert_int_eq(thread_stat(o, 1, "events"), 2);
    json_object_put(o);
}
END_TEST

/* A 4-event ring that overflowed: begins lost before the window are restored at its start. */
START_TEST(writer_dropped_begins)
{
    sa.id = 1, sb.id = 2;
    struct spanprof__thread *t = fake_thread(7, "main", 4);
    put(t->trace, &sa, 0, 1100); /* dropped */
    put(t->trace, &sb, 0, 1200); /* dropped */
    put(t->trace, &sb, 1, 1300); /* dropped */
    put(t->trace, &sb, 0, 1400); /* dropped */
    put(t->trace, &sb, 0, 1500); /* kept: a b b (b b open) */
    put(t->trace, &sb, 1, 1600);
    put(t->trace, &sb, 1, 1700); /* closes the b begun before the window */
    put(t->trace, &sa, 1, 1800); /* closes a, begun before the window */
    struct spanprof__thread *ts[] = {t};
    json_object *o = write_trace(ts, 1);
    char *e = events_of(o, 7);
    ck_assert_str_eq(e, "B a 0.500,B b 0.500,B b 0.500,E b 0.600,E b 0.700,E a 0.800");
    free(e);
    ck_assert_int_eq(other(o, "dropped_events"), 4);
    ck_assert_int_eq(thread_stat(o, 0, "dropped_events"), 4);
    ck_assert_int_eq(thread_stat(o, 0, "begins_before_window"), 2);
    ck_assert_int_eq(thread_stat(o, 0, "events"), 6);
    json_object_put(o);
}
END_TEST

/* A capture's window (1500 to 3000): the spans open at its start whose begin the ring holds
 * begin at its start, also on a thread idle all through it; they end at its end. */
START_TEST(window_keeps_spans_open_at_its_start)
{
    sa.id = 1, sb.id = 2, sq.id = 3;
    struct spanprof__thread *t1 = fake_thread(7, "main", 16), *t2 = fake_thread(8, "idle", 16);
    put(t1->trace, &sa, 0, 1100); /* open all through the window */
    put(t1->trace, &sb, 0, 1200);
    put(t1->trace, &sb, 1, 1300); /* over before it */
    put(t1->trace, &sb, 0, 2000);
    put(t1->trace, &sb, 1, 2100);
    put(t1->trace, &sa, 1, 5000); /* after it */
    put(t2->trace, &sq, 0, 1150);
    struct spanprof__thread *ts[] = {t1, t2};
    struct spanprof__trace_window win = {.from = 1500, .to = 3000, .seconds = 1, .time = "T"};
    json_object *o = write_trace_of(ts, 2, &win);
    char *e = events_of(o, 7);
    ck_assert_str_eq(e, "B a 0.500,B b 1.000,E b 1.100,E a 2.000");
    free(e);
    e = events_of(o, 8);
    ck_assert_str_eq(e, "B say \"hi\" 0.500,E say \"hi\" 2.000");
    free(e);
    ck_assert_int_eq(thread_stat(o, 0, "begins_before_window"), 1);
    ck_assert_int_eq(thread_stat(o, 1, "begins_before_window"), 1);
    ck_assert_int_eq(thread_stat(o, 1, "open_at_write"), 1);
    json_object_put(o);
}
END_TEST

/* The slow call's thread: its outermost spans from its shadow stack lead its events when they
 * began before the ring's oldest event (a); one the ring holds the begin of (b) is not repeated.
 * Another thread's events are its own. */
START_TEST(window_outer_spans_of_the_slow_thread)
{
    sa.id = 1, sb.id = 2, sq.id = 3;
    struct spanprof__thread *t1 = fake_thread(7, "main", 16), *t2 = fake_thread(8, "other", 16);
    put(t1->trace, &sb, 0, 2000);
    put(t1->trace, &sq, 0, 2200);
    put(t1->trace, &sq, 1, 2500);
    put(t2->trace, &sq, 0, 2300);
    put(t2->trace, &sq, 1, 2400);
    struct spanprof__trace_outer outer = {2, 2, {{&sa, 1000}, {&sb, 2000}}};
    struct spanprof__thread *ts[] = {t1, t2};
    struct spanprof__trace_window win = {.from = 1500, .to = 3000, .site = &sq, .tid = 7,
                                         .start = 2200, .end = 2500, .seconds = 1, .time = "T",
                                         .outer = &outer};
    json_object *o = write_trace_of(ts, 2, &win);
    char *e = events_of(o, 7);
    ck_assert_str_eq(e, "B a 1.000,B b 1.000,B say \"hi\" 1.200,E say \"hi\" 1.500,"
                        "E b 2.000,E a 2.000");
    free(e);
    e = events_of(o, 8);
    ck_assert_str_eq(e, "B say \"hi\" 1.300,E say \"hi\" 1.400");
    free(e);
    ck_assert_int_eq(thread_stat(o, 0, "begins_before_window"), 1);
    json_object_put(o);
}
END_TEST

/* Early in a thread's life its ring holds the begins of its whole stack: none is repeated from
 * the shadow stack, though the first begin's tick may be later than the frame's start. */
START_TEST(window_outer_spans_held_by_the_ring)
{
    sa.id = 1, sb.id = 2, sq.id = 3;
    struct spanprof__thread *t = fake_thread(7, "main", 16);
    put(t->trace, &sa, 0, 1100);
    put(t->trace, &sb, 0, 1200);
    put(t->trace, &sq, 0, 2200);
    put(t->trace, &sq, 1, 2500);
    struct spanprof__trace_outer outer = {2, 2, {{&sa, 1050}, {&sb, 1200}}};
    struct spanprof__thread *ts[] = {t};
    struct spanprof__trace_window win = {.from = 1000, .to = 2500, .site = &sq, .tid = 7,
                                         .start = 2200, .end = 2500, .seconds = 1, .time = "T",
                                         .outer = &outer};
    json_object *o = write_trace_of(ts, 1, &win);
    char *e = events_of(o, 7);
    ck_assert_str_eq(e, "B a 0.100,B b 0.200,B say \"hi\" 1.200,E say \"hi\" 1.500,"
                        "E b 1.500,E a 1.500");
    free(e);
    ck_assert_int_eq(thread_stat(o, 0, "begins_before_window"), 0);
    json_object_put(o);
}
END_TEST

/* Slots reserved but never written in their lap (a push cut short by a siglongjmp out of a signal
 * handler, or one in progress while a dump reads) are left out and counted as dropped: here the
 * third slot of the second lap still holds the first lap's event, the fourth was never written. */
START_TEST(snapshot_skips_unwritten_slots)
{
    struct spanprof__thread *t = fake_thread(7, "main", 4);
    struct spanprof__trace_ring *r = t->trace;
    put(r, &sa, 0, 1100);
    put(r, &sb, 0, 1200);
    put(r, &sb, 1, 1300); /* lap 0, slot 2: left over in lap 1 */
    r->head++;            /* lap 0, slot 3: never written */
    put(r, &sb, 0, 1500); /* lap 1, slot 0 */
    put(r, &sb, 1, 1600); /* lap 1, slot 1 */
    r->head++;            /* lap 1, slot 2: reserved, not written */
    size_t n;
    uint64_t dropped;
    struct spanprof__trace_event *ev = spanprof__trace_snapshot(r, &n, &dropped);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(dropped, 5); /* 3 overwritten, 2 never written */
    ck_assert_uint_eq(ev[0].tag, (uintptr_t)&sb);
    ck_assert_uint_eq(ev[0].tick, 1500);
    ck_assert_uint_eq(ev[1].tag, (uintptr_t)&sb | SPANPROF__TRACE_EXIT);
    free(ev);
}
END_TEST

/* The owner pushing while another thread copies a ring that has room for it all: every copy
 * starts at the ring's first event; the one slot the owner may be filling is all it drops. */
struct pusher {
    struct spanprof__trace_ring *r;
    volatile int started, done;
};

static void *push_half_the_ring(void *arg)
{
    struct pusher *p = arg;
    struct spanprof__trace_ring *r = p->r;
    p->started = 1;
    for (uint64_t tick = 2000; tick < 2000 + r->capacity / 2; tick++) {
        /* As the owner's push does: reserve, then fill (the ring has not wrapped: lap 0). */
        uint64_t h = __atomic_fetch_add(&r->head, 1, __ATOMIC_RELAXED);
        struct spanprof__trace_event *e = &r->events[h & (r->capacity - 1)];
        __atomic_store_n(&e->tick, tick, __ATOMIC_RELAXED);
        __atomic_store_n(&e->tag, (uintptr_t)&sb | (tick & 1 ? SPANPROF__TRACE_EXIT : 0),
                         __ATOMIC_RELEASE);
    }
    p->done = 1;
    return NULL;
}

START_TEST(snapshot_racing_owner_with_room)
{
    struct spanprof__thread *t = fake_thread(7, "main", 1u << 22);
    struct spanprof__trace_ring *r = t->trace;
    put(r, &sa, 0, 1000);
    struct pusher p = {r, 0, 0};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, push_half_the_ring, &p), 0);
    while (!p.started)
        ;
    int copies = 0;
    for (; !p.done || copies == 0; copies++) {
        size_t n;
        uint64_t dropped;
        struct spanprof__trace_event *ev = spanprof__trace_snapshot(r, &n, &dropped);
        ck_assert_uint_le(dropped, 1);
        ck_assert_uint_eq(ev[0].tag, (uintptr_t)&sa);
        ck_assert_uint_eq(ev[0].tick, 1000);
        free(ev);
    }
    pthread_join(th, NULL);
}
END_TEST

/* longjmp (exit of an outer span closes the inner ones), an unmatched exit without drops (left
 * out), and spans open at write time (closed at the end tick). */
START_TEST(writer_repairs)
{
    sa.id = 1, sb.id = 2, sq.id = 3;
    struct spanprof__thread *t = fake_thread(7, "main", 16);
    put(t->trace, &sq, 1, 1100); /* unmatched */
    put(t->trace, &sa, 0, 2000);
    put(t->trace, &sb, 0, 2100);
    put(t->trace, &sb, 0, 2200);
    put(t->trace, &sa, 1, 2300); /* longjmp'd over both b */
    put(t->trace, &sa, 0, 3000);
    put(t->trace, &sb, 0, 3500); /* open at write */
    struct spanprof__thread *ts[] = {t};
    json_object *o = write_trace(ts, 1);
    char *e = events_of(o, 7);
    ck_assert_str_eq(e, "B a 1.000,B b 1.100,B b 1.200,E b 1.300,E b 1.300,E a 1.300,"
                        "B a 2.000,B b 2.500,E b 8.000,E a 8.000");
    free(e);
    ck_assert_int_eq(thread_stat(o, 0, "unmatched_ends"), 1);
    ck_assert_int_eq(thread_stat(o, 0, "open_at_write"), 2);
    ck_assert_int_eq(thread_stat(o, 0, "begins_before_window"), 0);
    json_object_put(o);
}
END_TEST

/* SPANPROF_FILE_LINE names events like the folded frames. */
START_TEST(writer_file_line)
{
    sa.id = 1;
    struct spanprof__thread *t = fake_thread(7, "main", 4);
    put(t->trace, &sa, 0, 2000);
    put(t->trace, &sa, 1, 2001);
    struct spanprof__thread *ts[] = {t};
    struct spanprof__view v = unit_view(ts, 1);
    v.file_line = 1;
    struct spanprof__json_meta m = {.pid = 42, .program = "p"};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(spanprof__trace_write_at(f, &v, &m, 1000, 9000), 0);
    fclose(f);
    char expect[128];
    snprintf(expect, sizeof expect, "{\"ph\":\"E\",\"pid\":42,\"tid\":7,\"ts\":1.001,\"name\":\"a (unit.c:%u)\"}",
             sa.first_line);
    ck_assert_msg(strstr(buf, expect) != NULL, "%s", buf);
    free(buf);
}
END_TEST

Suite *trace_suite(void)
{
    Suite *s = suite_create("trace");
    TCase *tc = tcase_create("trace");
    tcase_add_test(tc, buffer_size);
    tcase_add_test(tc, config_trace);
    tcase_add_test(tc, ring_keeps_most_recent);
    tcase_add_test(tc, ring_without_tracing);
    tcase_add_test(tc, writer_balanced_and_metadata);
    tcase_add_test(tc, writer_dropped_begins);
    tcase_add_test(tc, window_keeps_spans_open_at_its_start);
    tcase_add_test(tc, window_outer_spans_of_the_slow_thread);
    tcase_add_test(tc, window_outer_spans_held_by_the_ring);
    tcase_add_test(tc, writer_repairs);
    tcase_add_test(tc, snapshot_skips_unwritten_slots);
    tcase_add_test(tc, snapshot_racing_owner_with_room);
    tcase_add_test(tc, writer_file_line);
    suite_add_tcase(s, tc);
    return s;
}
