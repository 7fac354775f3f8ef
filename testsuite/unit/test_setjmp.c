/* test_setjmp.c — the repair at a setjmp's return (setjmp.c), driven the way the plugin's code
 * drives it: depth before the call, return hook after each return.  Covers what makes a pointer
 * useless there: a thread that gets its data between the two calls, a frame array that grows
 * between them, and entries parked past the depth cap; plus the busy guard, errno and the
 * trace's end events. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>

#include "collect/trace_ring.h"
#include "unit.h"

static jmp_buf jb;

UNIT_SITE(sr, "r");
UNIT_SITE(sq, "q");
UNIT_SPAN_FN(fq, sq, )

/* What the repair left, seen from the setjmp's second return. */
static size_t seen_top, seen_park;
static int seen_errno;

/* A recursive span: at LEVEL == AT it does setjmp (as the plugin's code would), at
 * LEVEL == BOTTOM it longjmps back. */
static __attribute__((noinline)) void rec(int level, int at, int bottom)
{
    __spanprof_enter(&sr, __builtin_dwarf_cfa());
    if (level == at) {
        size_t depth = __spanprof_setjmp_depth();
        if (setjmp(jb) == 0) {
            __spanprof_setjmp_return(depth);
            rec(level + 1, 0, bottom);
        } else {
            errno = 1234;
            __spanprof_setjmp_return(depth);
            seen_errno = errno;
            struct spanprof__thread *t = spanprof__tls;
            seen_park = t->park_depth;
            seen_top = (size_t)((t->park_depth ? t->parked_top : t->top) - t->frames);
        }
    } else if (level == bottom) {
        longjmp(jb, 1);
    } else {
        rec(level + 1, at, bottom);
    }
    __asm__ volatile("" ::: "memory");
    __spanprof_exit(&sr, __builtin_dwarf_cfa());
}

/* setjmp in a function that is no span, in a thread without data yet (depth 0 then). */
static void *no_data_yet(void *arg)
{
    (void)arg;
    size_t depth = __spanprof_setjmp_depth();
    if (setjmp(jb) == 0) {
        __spanprof_setjmp_return(depth);
        ck_assert_ptr_eq(spanprof__tls, &spanprof__sentinel_thread);
        rec(1, 0, 3);
    } else {
        __spanprof_setjmp_return(depth);
    }
    fq();
    return NULL;
}

/* The node of r's activation at LEVEL (1: the outermost) in T's tree. */
static struct spanprof__node *r_at(struct spanprof__thread *t, int level)
{
    struct spanprof__node *n = &t->root;
    for (int i = 0; i < level && n; i++)
        n = unit_child(n, &sr);
    ck_assert_ptr_nonnull(n);
    return n;
}

START_TEST(thread_gets_data_between_the_calls)
{
    pthread_t th;
    pthread_create(&th, NULL, no_data_yet, NULL);
    pthread_join(th, NULL);
    struct spanprof__thread *t = spanprof__g.threads;
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_eq(t->abandoned, 3);
    ck_assert_uint_eq(t->unmatched + t->open_at_exit, 0);
    ck_assert_uint_eq(unit_child(&t->root, &sq)->calls, 1); /* at the root, not under r */
}
END_TEST

START_TEST(array_grows_between_the_calls)
{
    rec(1, 2, 5000); /* the frame array starts with 1024 entries */
    struct spanprof__thread *t = unit_self();
    ck_assert_uint_ge(t->capacity, 5001);
    ck_assert_uint_eq(seen_top, 2);
    ck_assert_uint_eq(seen_errno, 1234);
    ck_assert_uint_eq(t->abandoned, 4998);
    ck_assert_uint_eq(t->unmatched, 0);
    ck_assert_uint_eq(unit_depth(), 0);
    /* the levels above the setjmp lost their one activation each, the others none */
    ck_assert_uint_eq(spanprof__abandoned_of(r_at(t, 2)), 0);
    ck_assert_uint_eq(spanprof__abandoned_of(r_at(t, 3)), 1);
    ck_assert_uint_eq(spanprof__abandoned_of(r_at(t, 5000)), 1);
    fq(); /* the next span is at the root */
    ck_assert_uint_eq(unit_child(&t->root, &sq)->calls, 1);
}
END_TEST

/* Depth cap 100: levels 101.. are parked (counted, not recorded). */
static void *parked(void *arg)
{
    int at = *(int *)arg;
    rec(1, at, 150);
    return NULL;
}

static struct spanprof__thread *run_parked(int at)
{
    spanprof__flags.max_depth = 100; /* before the thread's first span */
    pthread_t th;
    pthread_create(&th, NULL, parked, &at);
    pthread_join(th, NULL);
    struct spanprof__thread *t = spanprof__g.threads;
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_eq(t->overflow, 50);
    ck_assert_uint_eq(t->unmatched + t->open_at_exit + t->park_depth, 0);
    return t;
}

START_TEST(setjmp_below_the_parked_entries)
{
    struct spanprof__thread *t = run_parked(50);
    ck_assert_uint_eq(seen_top, 50);
    ck_assert_uint_eq(seen_park, 0);
    ck_assert_uint_eq(t->abandoned, 100); /* 50 recorded, 50 parked */
    /* the thread's group has its nodes' counts: only the recorded ones have a node */
    ck_assert_uint_eq(spanprof__abandoned_of(r_at(t, 50)), 0);
    ck_assert_uint_eq(spanprof__abandoned_of(r_at(t, 51)), 1);
    ck_assert_uint_eq(spanprof__abandoned_of(r_at(t, 100)), 1);
    ck_assert_ptr_null(unit_child(r_at(t, 100), &sr));
}
END_TEST

START_TEST(setjmp_among_the_parked_entries)
{
    struct spanprof__thread *t = run_parked(120);
    ck_assert_uint_eq(seen_top, 100);
    ck_assert_uint_eq(seen_park, 20); /* levels 101..120 are still running */
    ck_assert_uint_eq(t->abandoned, 30);
}
END_TEST

START_TEST(busy_runtime_is_left_alone)
{
    fq(); /* the thread has data */
    spanprof__tls_busy = UINTPTR_MAX; /* as if a runtime frame enclosed this one (record.h) */
    size_t depth = __spanprof_setjmp_depth();
    spanprof__tls_busy = 0;
    ck_assert_uint_eq(depth, (size_t)-1);
    __spanprof_enter(&sr, __builtin_dwarf_cfa());
    __spanprof_setjmp_return(depth);
    ck_assert_uint_eq(unit_depth(), 1);
    __spanprof_setjmp_return(1); /* first return: the depth is unchanged */
    ck_assert_uint_eq(unit_depth(), 1);
    __spanprof_setjmp_return(0);
    ck_assert_uint_eq(unit_depth(), 0);
    ck_assert_uint_eq(unit_self()->abandoned, 1);
}
END_TEST

/* With tracing on, the abandoned frames' end events are written by the repair, in stack order,
 * before the holder's own end. */
START_TEST(trace_ends_abandoned_spans_at_the_return)
{
    unit_tracing(64 * sizeof(struct spanprof__trace_event));
    rec(1, 1, 3); /* B r, B r, B r, longjmp: E r, E r (repair), E r (level 1 returns) */
    struct spanprof__thread *t = unit_self();
    ck_assert_uint_eq(t->abandoned, 2);
    size_t n;
    uint64_t dropped;
    struct spanprof__trace_event *ev = spanprof__trace_snapshot(t->trace, &n, &dropped);
    ck_assert_uint_eq(n, 6);
    ck_assert_uint_eq(dropped, 0);
    for (size_t i = 0; i < n; i++) {
        ck_assert_uint_eq(ev[i].tag, (uintptr_t)&sr | (i < 3 ? 0 : SPANPROF__TRACE_EXIT));
        if (i)
            ck_assert_uint_le(ev[i - 1].tick, ev[i].tick);
    }
    free(ev);
}
END_TEST

Suite *setjmp_suite(void)
{
    Suite *s = suite_create("setjmp");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, thread_gets_data_between_the_calls);
    tcase_add_test(tc, array_grows_between_the_calls);
    tcase_add_test(tc, setjmp_below_the_parked_entries);
    tcase_add_test(tc, setjmp_among_the_parked_entries);
    tcase_add_test(tc, busy_runtime_is_left_alone);
    tcase_add_test(tc, trace_ends_abandoned_spans_at_the_return);
    suite_add_tcase(s, tc);
    return s;
}
