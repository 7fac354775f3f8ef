/* flight.h — the flight recorder (SPANPROF_FLIGHT), the collectors' side: which sites are watched
 * for slow calls (SPANPROF_SLOW), noting a trigger from the slow thread itself, and the queue of
 * captures the writer thread (lifecycle/flight.c) turns into files.
 *
 * The per-thread rings are the trace's (trace_ring.h), kept without a trace file and overwritten
 * as they fill.  A trigger is noted with async-signal-safe work only — atomic operations on a
 * fixed queue and the writer's wake-up (a futex) — so it can be noted from any exit, also one in
 * a signal handler; the capture is written by the writer thread, never by the slow thread.
 */
#ifndef SPANPROF_FLIGHT_H
#define SPANPROF_FLIGHT_H

#include <stdint.h>
#include <sys/types.h>

#include "collect/trace_ring.h"
#include "record/record.h"

#pragma GCC visibility push(hidden)

#define SPANPROF__FLIGHT_RULES 16
struct spanprof__flight_rule {
    const char *glob; /* matched against a site's name, once per site */
    uint64_t ns;      /* a call of at least this long triggers a capture */
};

/* Fixed at start-up (lifecycle/flight.c), before any site is registered. */
struct spanprof__flight_settings {
    int on;              /* SPANPROF_FLIGHT set (and recording timed) */
    double seconds;      /* the window a capture covers */
    double interval;     /* seconds between two captures of one site (SPANPROF_SLOW_INTERVAL) */
    uint64_t min_ns;     /* SPANPROF_FLIGHT_MIN, 0: every call */
    size_t nrules;
    struct spanprof__flight_rule rules[SPANPROF__FLIGHT_RULES];
};
extern struct spanprof__flight_settings spanprof__flight;

/* The events copied at a trigger, at most (16 bytes each; no more than a thread's ring holds):
 * 65,536 cover 6.5 ms of a thread writing 10 M events a second, 20 ms of redis's main thread.
 * With the others' below, the copies cost the slow thread 0.25-0.5 ms once per capture (0.9 ms
 * while a slot's pages are first touched).  Mapped for every queue slot at start-up; pages are
 * touched as captures use them. */
#define SPANPROF__FLIGHT_KEEP_EVENTS 65536u
/* Other threads whose events are copied at a trigger, each a quarter as many as the slow
 * thread's: another 1 MiB at most. */
#define SPANPROF__FLIGHT_OTHERS 4
/* A capture waiting for the writer.  state: 0 free, 1 being filled, 2 ready, 3 being written (the
 * slot, and its kept events, stay the writer's until the file is written). */
struct spanprof__flight_trigger {
    uint32_t state;
    const struct spanprof_site *site; /* NULL: asked for (spanprof dump --flight) */
    pid_t tid;                        /* the slow call's thread */
    uint64_t start, end;              /* the slow call's ticks (end: the trigger) */
    uint64_t noted_ns;                /* CLOCK_MONOTONIC when it was queued */
    struct spanprof__trace_outer outer; /* the slow call's callers, read at the trigger */
    /* Threads' newest events, copied at the trigger (spanprof__trace_keep): what the capture
     * shows of a thread when its own ring no longer holds them.  kept[0] is the slow thread's;
     * the others', the busiest (their rings last the shortest), only when the process lock was
     * free at the trigger.  nkept: those filled; rings NULL when there was no memory. */
    struct spanprof__trace_kept kept[1 + SPANPROF__FLIGHT_OTHERS];
    size_t nkept;
};
#define SPANPROF__FLIGHT_PENDING 8
/* The window of SPANPROF_SLOW without SPANPROF_FLIGHT, in seconds. */
#define SPANPROF__FLIGHT_DEFAULT_SECONDS 1.0
/* How long a slow call's trigger waits for a slower call of the same site (flight.c). */
#define SPANPROF__FLIGHT_SETTLE_NS 100000000u
/* How soon the writer looks again at a trigger it found being filled or replaced (state 1): the
 * thread holding it wakes no one when it lets go (a storm of slow calls must not each make a
 * system call), and it may have been preempted while holding it. */
#define SPANPROF__FLIGHT_RETRY_NS 1000000u
/* How long the last write (exit, exec, a terminating signal) waits for triggers still being
 * noted: their threads copy their events first (flight.c), which a busy machine can stretch. */
#define SPANPROF__FLIGHT_END_WAIT_NS 500000000u
extern struct spanprof__flight_trigger spanprof__flight_pending[SPANPROF__FLIGHT_PENDING];
/* Triggers left out: rate-limited, or the queue full (atomic). */
extern uint64_t spanprof__flight_suppressed;
/* Set by the lifecycle layer: wakes the writer thread (async-signal-safe). */
extern void (*spanprof__flight_notify)(void);

/* Start-up (collectors.c): ticks of the thresholds, the site table, the hooks. */
void spanprof__flight_start(void);
/* spanprof__hooks.site_watch: non-zero when a rule names SITE (its calls then go through the
 * SLOW state, and each exit is checked here). */
int spanprof__flight_site_watch(const struct spanprof_site *site);
/* The exit of a watched SITE's call that started at START and ended at END (ticks). */
void spanprof__flight_exit(const struct spanprof_site *site, uint64_t start, uint64_t end);
/* Async-signal-safe: a capture of every thread's last window, ending now. 0, or -1 when the
 * queue is full or flight recording is off. */
int spanprof__flight_request(void);
/* Fork child: the parent's queue and rate limits are not the child's. */
void spanprof__flight_fork_child(void);

#pragma GCC visibility pop

#endif /* SPANPROF_FLIGHT_H */
