/* tracepush.c — the trace ring's push as the span paths call it (out of line: their timestamp
 * when it is not a bare rdtsc), its rare side (moving a tick back after a signal handler pushed
 * events in between), and the switch for it.
 */
#include "record/tracepush.h"

/* A signal handler pushed events between our reservation of slot H and our check: they sit in
 * the slots after ours with earlier ticks.  Ours happened before them (it is before them in the
 * ring, and a handler nests inside what it interrupted), so it takes the next event's tick. */
void spanprof__trace_fix_tick(struct spanprof__trace_ring *r, uint64_t h)
{
    const struct spanprof__trace_event *next = &r->events[(h + 1) & (r->capacity - 1)];
    uintptr_t lap = (h + 1) & r->capacity ? SPANPROF__TRACE_ODD_LAP : 0;
    uintptr_t tag = __atomic_load_n(&next->tag, __ATOMIC_ACQUIRE);
    if (!tag || (tag & SPANPROF__TRACE_ODD_LAP) != lap)
        return; /* the handler's push did not complete (it jumped out) */
    uint64_t tick = __atomic_load_n(&next->tick, __ATOMIC_RELAXED);
    struct spanprof__trace_event *e = &r->events[h & (r->capacity - 1)];
    if (tick < __atomic_load_n(&e->tick, __ATOMIC_RELAXED))
        __atomic_store_n(&e->tick, tick, __ATOMIC_RELAXED);
}

static __attribute__((noinline)) uint64_t tick_rare(const struct spanprof_site *site,
                                                     uintptr_t kind)
{
    if (spanprof__flags.trace)
        return spanprof__trace_push(site, kind);
    return spanprof__clock_now();
}

/* Tracing with the TSC, the usual case, has the push with rdtsc inline and every rare case out of
 * line, so that it saves no register: a TLS load, two flag tests and the push (tracepush.h). */
__attribute__((noinline)) uint64_t spanprof__span_tick_other(const struct spanprof_site *site,
                                                              uintptr_t kind)
{
    struct spanprof__trace_ring *r = spanprof__tls->trace;
    if (SPANPROF_UNLIKELY(!r || !spanprof__flags.trace || !spanprof__flags.tsc))
        return tick_rare(site, kind);
    return spanprof__trace_push_to(r, site, kind, 1);
}

/* The push the plugin's inline path calls for a site in state TRACE, whose frame it records
 * itself (spanprof.h, SPANPROF_ABI_TRACE_PUSH): such a site exists only with tracing on and the
 * TSC as the clock (site.c), so no flag is tested.  A TLS load, a test and the push with rdtsc. */
SPANPROF_API uint64_t spanprof__trace_push_abi(const struct spanprof_site *site, uintptr_t exit)
    __asm__(SPANPROF_ABI_TRACE_PUSH);
SPANPROF_API uint64_t spanprof__trace_push_abi(const struct spanprof_site *site, uintptr_t exit)
{
    struct spanprof__trace_ring *r = spanprof__tls->trace;
    if (SPANPROF_UNLIKELY(!r))
        return spanprof__clock_now();
    return spanprof__trace_push_to(r, site, exit & SPANPROF__TRACE_EXIT, 1); /* EXIT is 0 or 1 */
}
_Static_assert(SPANPROF__TRACE_EXIT == 1, "SPANPROF_ABI_TRACE_PUSH's EXIT is the tag's exit bit");

void spanprof__trace_fast_path(int on)
{
    spanprof__flags.trace = on;
    spanprof__clock_hot_update();
}
