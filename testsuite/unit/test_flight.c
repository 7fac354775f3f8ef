/* test_flight.c — the flight recorder's queue of captures, as the writer thread serves it. */
#include "collect/flight.h"
#include "record/clock.h"
#include "unit.h"

UNIT_SITE(unit_slow, "slow");

/* A slow call's trigger that a thread holds (state 1: a slower call replacing it, that thread
 * preempted meanwhile) when the writer looks, long after it was due.  The holder wakes no one
 * when it lets go, so the writer must come back soon by itself, not sleep until the next
 * trigger (a second or more later, when the rings no longer hold the window). */
START_TEST(held_trigger_looked_at_again_soon)
{
    spanprof__flight.on = 1;
    struct spanprof__flight_trigger *t = &spanprof__flight_pending[3];
    *t = (struct spanprof__flight_trigger){.state = 1, .site = &unit_slow, .tid = 7,
                                           .noted_ns = spanprof__mono_ns() - 1000000000u};
    double wait = spanprof__flight_serve(0);
    ck_assert_msg(wait > 0 && wait <= SPANPROF__FLIGHT_RETRY_NS / 1e9, "wait %g s", wait);
    ck_assert_uint_eq(t->state, 1); /* not taken from its holder */
}
END_TEST

/* Nothing queued: the writer may sleep until it is woken. */
START_TEST(empty_queue_sleeps)
{
    spanprof__flight.on = 1;
    ck_assert(spanprof__flight_serve(0) < 0);
}
END_TEST

Suite *flight_suite(void)
{
    Suite *s = suite_create("flight");
    TCase *tc = tcase_create("flight");
    tcase_add_test(tc, held_trigger_looked_at_again_soon);
    tcase_add_test(tc, empty_queue_sleeps);
    suite_add_tcase(s, tc);
    return s;
}
