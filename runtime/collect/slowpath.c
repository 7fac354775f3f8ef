/* slowpath.c — calls of sites in state SLOW: the recording (hotpath.h) plus what the collectors do
 * on every call — coz's latency counters, CPU time and peak live bytes (resources.c), the trace
 * ring (trace_ring.h) in counting mode (timed, the recording pushes trace events itself:
 * spanprof__flags.trace).  The extras are independent and each costs only its own test when off.
 * Counting mode with extras also comes here, so whether to take timestamps is read from the
 * flags.
 *
 * coz's counters (record/site.c says which spans have which): a latency point counts a begin
 * for an entry that pushed a frame and an end for the exit (or the abandonment, collectors.c)
 * that pops it, so begin - end is always the activations in flight; a throughput point counts
 * every exit.
 *
 * A site a flight-recorder trigger watches (flight.c) comes here for its exits to be checked.
 */
#include "collect/collect.h"
#include "collect/flight.h"
#include "collect/trace_ring.h"
#include "record/hotpath.h"

void spanprof__slow_enter(struct spanprof_site *site, uintptr_t cfa, uintptr_t ra, uintptr_t fra)
{
    spanprof__record_enter(site, cfa, ra, fra, !spanprof__flags.counting);
    if (site->coz_begin && spanprof__has_open_frame(site, cfa))
        __atomic_add_fetch(&((struct spanprof__coz_counter *)site->coz_begin)->count, 1,
                           __ATOMIC_RELAXED);
    if (spanprof__res_on())
        spanprof__res_enter(site); /* CPU time, allocation peak */
    if (spanprof__collect.trace_buffer && !spanprof__flags.trace && !spanprof__flags.flight_min)
        spanprof__trace_push(site, 0); /* its rdtsc after our bookkeeping */
}

void spanprof__slow_exit(struct spanprof_site *site, uintptr_t cfa)
{
    if (site->coz_end && (!site->coz_begin || spanprof__has_open_frame(site, cfa)))
        __atomic_add_fetch(&((struct spanprof__coz_counter *)site->coz_end)->count, 1,
                           __ATOMIC_RELAXED);
    if (spanprof__collect.trace_buffer && !spanprof__flags.trace && !spanprof__flags.flight_min)
        spanprof__trace_push(site, SPANPROF__TRACE_EXIT); /* rdtsc before the bookkeeping */
    if (spanprof__res_on())
        spanprof__res_exit(site, cfa);
    /* A site a flight-recorder trigger watches: the call's start, read before the pop. */
    uint64_t start = 0;
    int watched = 0;
    if (spanprof__flight.nrules) {
        const struct spanprof__frame *f = spanprof__tls->top;
        if (f->node->site == site && f->cfa == cfa) {
            start = f->start;
            watched = 1;
        }
    }
    if (watched && !spanprof__flags.counting && !spanprof__flags.hot_tsc) {
        /* The exit's own tick: the capture's window ends at the slow call's exit event. */
        spanprof__flight_exit(site, start, spanprof__record_exit_ticked(site, cfa));
        return;
    }
    spanprof__record_exit(site, cfa, !spanprof__flags.counting);
    if (watched)
        spanprof__flight_exit(site, start, spanprof__clock_now());
}
