/* flight.c — SPANPROF_FLIGHT's triggers: sites watched by SPANPROF_SLOW, the check at a watched
 * call's exit, the rate limit per site and the queue of captures for the writer thread.
 *
 * Matching is done once per site, at its first sight (record/site.c asks through
 * spanprof__hooks.site_watch): a watched site takes the SLOW state, so its exits come through
 * slowpath.c, which reads the call's start before the pop and calls spanprof__flight_exit.
 * Other sites pay nothing for the triggers.  The site's rule and the end of its last capture
 * live in a table indexed by site id (mapped once, pages touched only for the ids used).
 *
 * Noting a trigger is async-signal-safe: a compare-and-swap on the site's last capture (at most
 * one per SPANPROF_SLOW_INTERVAL per site), a free slot of a fixed queue claimed with another,
 * and the writer's wake-up.  A storm of slow calls costs each one a compare.  The writer waits
 * SPANPROF__FLIGHT_SETTLE_NS after a trigger before it writes it: a slower call of the same site
 * meanwhile takes the queued trigger's place (the worst call of a burst is captured, not the
 * first; on a busy machine the first is often a call that was merely preempted).
 *
 * The wait is longer than a busy thread's ring lasts (a thread writing 10 M events a second fills
 * the default 4 MiB in 26 ms), so the slow thread's newest events are copied into the trigger's
 * slot as the call ends (spanprof__trace_keep): the capture always holds the slow call's end and
 * what ran up to it, as far as the copy reaches.  So are the busiest other threads' (keep_events);
 * the rest are read from their rings when the capture is written.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "collect/collect.h"
#include "collect/flight.h"
#include "collect/trace_ring.h"
#include "record/clock.h"
#include "common/namematch.h"

struct spanprof__flight_settings spanprof__flight;
struct spanprof__flight_trigger spanprof__flight_pending[SPANPROF__FLIGHT_PENDING];
uint64_t spanprof__flight_suppressed;
void (*spanprof__flight_notify)(void);

/* Per site id: its rule (index + 1; 0: not watched) and the end of its last capture. */
struct watched {
    uint32_t rule;
    uint32_t epoch; /* last_end counts only in the process that set it (fork) */
    uint64_t last_end;
};
static struct watched *table;
static uint64_t rule_ticks[SPANPROF__FLIGHT_RULES];
static uint64_t interval_ticks;
static uint32_t epoch = 1;

/* A (tick, ns) pair whose two reads were close together: the tick read on both sides of the
 * clock_gettime, retried until they are within 2 us (a preemption in between would skew it). */
static void tight_pair(uint64_t *tick, uint64_t *ns)
{
    for (int i = 0; i < 100; i++) {
        uint64_t a = spanprof__clock_now();
        uint64_t n = spanprof__mono_ns();
        uint64_t b = spanprof__clock_now();
        *tick = a + (b - a) / 2;
        *ns = n;
        if (b - a < 5000)
            return;
    }
}

/* ns per tick for the thresholds, measured over 5 ms between two tight pairs: the early
 * calibration (clock.c, 1 ms) can be far off on a busy machine, and a threshold in ticks
 * would be off as much. */
static double measure_ns_per_tick(void)
{
    if (!spanprof__flags.tsc)
        return 1;
    uint64_t t0, n0, t1, n1;
    tight_pair(&t0, &n0);
    struct timespec five = {0, 5000000};
    while (nanosleep(&five, &five) != 0)
        ;
    tight_pair(&t1, &n1);
    return t1 > t0 && n1 > n0 ? (double)(n1 - n0) / (double)(t1 - t0) : spanprof__clock_ns_per_tick();
}

void spanprof__flight_start(void)
{
    struct spanprof__flight_settings *f = &spanprof__flight;
    if (!f->on)
        return;
    double ns_per_tick = measure_ns_per_tick();
    if (!(ns_per_tick > 0))
        ns_per_tick = 1;
    for (size_t i = 0; i < f->nrules; i++)
        rule_ticks[i] = (uint64_t)((double)f->rules[i].ns / ns_per_tick);
    interval_ticks = (uint64_t)(f->interval * 1e9 / ns_per_tick);
    if (f->min_ns) {
        uint64_t t = (uint64_t)((double)f->min_ns / ns_per_tick);
        spanprof__flags.flight_min = t ? t : 1;
        spanprof__clock_hot_update();
    }
    if (f->nrules)
        table = spanprof__map(SPANPROF_SITE_IDS * sizeof *table);
    /* A slot's copies hold no more than the rings they copy (the same size rounding). */
    size_t keep = SPANPROF__FLIGHT_KEEP_EVENTS * sizeof(struct spanprof__trace_event);
    if (keep > spanprof__collect.trace_buffer)
        keep = spanprof__collect.trace_buffer;
    for (size_t i = 0; f->nrules && i < SPANPROF__FLIGHT_PENDING; i++)
        for (size_t k = 0; k < 1 + SPANPROF__FLIGHT_OTHERS; k++)
            spanprof__flight_pending[i].kept[k].ring = spanprof__trace_ring_new(k ? keep / 4 : keep);
}

/* Where thread T's ring stands: the tick of its oldest event when it has gone round (the later,
 * the sooner what it holds now is overwritten), 0 when it has not. */
static uint64_t ring_reach(const struct spanprof__thread *t)
{
    const struct spanprof__trace_ring *r = t->trace;
    if (!r || t->merged)
        return 0;
    uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
    if (head - __atomic_load_n(&r->base, __ATOMIC_RELAXED) <= r->capacity)
        return 0;
    return __atomic_load_n(&r->events[head & (r->capacity - 1)].tick, __ATOMIC_RELAXED);
}

/* Secures in trigger T the newest events of the SPANPROF__FLIGHT_OTHERS other threads whose rings
 * have gone round most recently (a ring that has not gone round is still whole when the capture
 * is written), if the process lock is free (a trylock: never a wait, nor a deadlock in a signal
 * handler on a thread holding it), then the calling thread's own.  The others first: they push
 * on meanwhile, and what they did as the call ended is what counts; the calling thread's ring
 * stands still while it copies. */
static void keep_events(struct spanprof__flight_trigger *t)
{
    struct spanprof__thread *self = spanprof__tls;
    t->nkept = 0;
    if (!t->kept[0].ring || !self->trace)
        return;
    t->kept[0].tid = self->tid;
    t->nkept = 1;
    if (pthread_mutex_trylock(&spanprof__g.lock) == 0) {
        struct spanprof__thread *pick[SPANPROF__FLIGHT_OTHERS];
        uint64_t reach[SPANPROF__FLIGHT_OTHERS];
        size_t n = 0;
        for (struct spanprof__thread *o = spanprof__g.threads; o; o = o->next) {
            uint64_t r = o == self ? 0 : ring_reach(o);
            if (!r || (n == SPANPROF__FLIGHT_OTHERS && r <= reach[n - 1]))
                continue;
            size_t i = n < SPANPROF__FLIGHT_OTHERS ? n++ : n - 1; /* latest reach first */
            for (; i > 0 && reach[i - 1] < r; i--)
                pick[i] = pick[i - 1], reach[i] = reach[i - 1];
            pick[i] = o, reach[i] = r;
        }
        for (size_t i = 0; i < n && t->kept[t->nkept].ring; i++) {
            struct spanprof__trace_kept *k = &t->kept[t->nkept++];
            k->tid = pick[i]->tid;
            spanprof__trace_keep(pick[i]->trace, k->ring);
        }
        pthread_mutex_unlock(&spanprof__g.lock);
    }
    spanprof__trace_keep(self->trace, t->kept[0].ring);
}

int spanprof__flight_site_watch(const struct spanprof_site *site)
{
    if (!table || site->id >= SPANPROF_SITE_IDS || !site->name)
        return 0;
    /* The first rule naming the site holds. */
    for (size_t i = 0; i < spanprof__flight.nrules; i++)
        if (spanprof__name_matches(spanprof__flight.rules[i].glob, site->name)) {
            table[site->id].rule = (uint32_t)i + 1;
            return 1;
        }
    return 0;
}

/* A free slot, filled with the trigger, then the writer woken.  -1 when the queue is full. */
static int enqueue(const struct spanprof_site *site, pid_t tid, uint64_t start, uint64_t end)
{
    for (size_t i = 0; i < SPANPROF__FLIGHT_PENDING; i++) {
        struct spanprof__flight_trigger *t = &spanprof__flight_pending[i];
        uint32_t free_state = 0;
        if (!__atomic_compare_exchange_n(&t->state, &free_state, 1, 0, __ATOMIC_ACQUIRE,
                                         __ATOMIC_RELAXED))
            continue;
        t->site = site;
        t->tid = tid;
        t->start = start;
        t->end = end;
        t->noted_ns = spanprof__mono_ns();
        if (site) {
            spanprof__trace_outer_of_self(&t->outer); /* up to 16 frames: a rare path */
            keep_events(t);                          /* copies of up to 2 MiB: 0.25-0.5 ms */
        } else {
            t->outer.n = t->outer.depth = 0;
            t->nkept = 0;
        }
        __atomic_store_n(&t->state, 2, __ATOMIC_RELEASE);
        if (spanprof__flight_notify)
            spanprof__flight_notify();
        return 0;
    }
    __atomic_add_fetch(&spanprof__flight_suppressed, 1, __ATOMIC_RELAXED);
    return -1;
}

/* Rate-limited: a queued trigger of SITE not yet taken by the writer makes way for this slower
 * call (the slot is claimed from "ready" so the writer cannot take it meanwhile). */
static void replace_if_slower(const struct spanprof_site *site, uint64_t d, uint64_t start,
                              uint64_t end)
{
    for (size_t i = 0; i < SPANPROF__FLIGHT_PENDING; i++) {
        struct spanprof__flight_trigger *t = &spanprof__flight_pending[i];
        uint32_t ready = 2;
        if (__atomic_load_n(&t->site, __ATOMIC_RELAXED) != site ||
            !__atomic_compare_exchange_n(&t->state, &ready, 1, 0, __ATOMIC_ACQUIRE,
                                         __ATOMIC_RELAXED))
            continue;
        if (t->site == site && t->end - t->start < d) {
            t->tid = spanprof__tls->tid;
            t->start = start;
            t->end = end;
            spanprof__trace_outer_of_self(&t->outer);
            keep_events(t);
        }
        __atomic_store_n(&t->state, 2, __ATOMIC_RELEASE);
        break;
    }
    __atomic_add_fetch(&spanprof__flight_suppressed, 1, __ATOMIC_RELAXED);
}

void spanprof__flight_exit(const struct spanprof_site *site, uint64_t start, uint64_t end)
{
    if (!table || site->id >= SPANPROF_SITE_IDS || end < start)
        return;
    struct watched *w = &table[site->id];
    uint32_t rule = w->rule;
    if (!rule || end - start < rule_ticks[rule - 1])
        return;
    uint32_t ep = __atomic_load_n(&epoch, __ATOMIC_RELAXED);
    uint64_t last = __atomic_load_n(&w->last_end, __ATOMIC_RELAXED);
    if (__atomic_load_n(&w->epoch, __ATOMIC_RELAXED) != ep)
        last = 0;
    /* Signed: another thread's capture may have ended after this call did. */
    if (last && (int64_t)(end - last) < (int64_t)interval_ticks) {
        replace_if_slower(site, end - start, start, end);
        return;
    }
    uint64_t seen = __atomic_load_n(&w->last_end, __ATOMIC_RELAXED);
    if (!__atomic_compare_exchange_n(&w->last_end, &seen, end, 0, __ATOMIC_RELAXED,
                                     __ATOMIC_RELAXED))
        return; /* another thread's call of the site took this capture */
    __atomic_store_n(&w->epoch, ep, __ATOMIC_RELAXED);
    struct spanprof__thread *t = spanprof__tls;
    enqueue(site, t->tid, start, end);
}

int spanprof__flight_request(void)
{
    if (!spanprof__flight.on)
        return -1;
    uint64_t now = spanprof__clock_now();
    return enqueue(NULL, 0, now, now);
}

void spanprof__flight_fork_child(void)
{
    for (size_t i = 0; i < SPANPROF__FLIGHT_PENDING; i++) {
        struct spanprof__flight_trigger *t = &spanprof__flight_pending[i];
        struct spanprof__trace_ring *rings[1 + SPANPROF__FLIGHT_OTHERS];
        for (size_t k = 0; k < 1 + SPANPROF__FLIGHT_OTHERS; k++)
            rings[k] = t->kept[k].ring;
        memset(t, 0, sizeof *t);
        for (size_t k = 0; k < 1 + SPANPROF__FLIGHT_OTHERS; k++)
            t->kept[k].ring = rings[k];
    }
    spanprof__flight_suppressed = 0;
    epoch++;
}
