/* span.c — the entry points every instrumented call runs: __spanprof_enter and __spanprof_exit.
 *
 * Their first act is one load of the site's state and one compare (the caller has already skipped
 * the call for state OFF); the plain states (FAST, COUNT, TIMED, TRACE) are handled inline (the
 * recording itself is in hotpath.h), the rest out of line: first sight of a site (site.c) and
 * sites whose calls the collectors want to see (state SLOW: spanprof__hooks, set up by
 * collect/collectors.c).  Objects built with the plugin's inline path record FAST, COUNT and
 * TRACE sites themselves and enter through spanprof__enter_abi when that path misses.
 */
#include "record/hotpath.h"

/* Site neither FAST nor COUNT nor TIMED nor TRACE nor OFF: new, or SLOW.  Not marked cold: with coz
 * running or a per-call collector on, every call comes here.  INLINE_OBJECT: the call came from
 * the plugin's inline path (through enter_abi), told to calibrate.c at a site's first sight,
 * since the two ways of recording cost the program differently per call. */
static __attribute__((noinline)) void enter_slow(struct spanprof_site *site, uintptr_t cfa,
                                                 uintptr_t ra, uintptr_t fra, int inline_object)
{
    uint32_t st = __atomic_load_n(&site->state, __ATOMIC_ACQUIRE);
    if (st == SPANPROF__SITE_NEW) {
        if (spanprof__busy(cfa)) /* entered from inside the runtime (e.g. its own start-up) */
            return;
        st = spanprof__site_register(site, fra);
        spanprof__calibrate_saw(inline_object);
    }
    if (st == SPANPROF__SITE_SLOW) {
        SPANPROF_ASSERT(spanprof__hooks.enter); /* installed before any site can be SLOW */
        spanprof__hooks.enter(site, cfa, ra, fra);
    }
    else if (SPANPROF__SITE_IS_TIMED(st))
        spanprof__record_enter(site, cfa, ra, fra, 1);
    else if (st == SPANPROF__SITE_COUNT)
        spanprof__record_enter(site, cfa, ra, fra, 0);
}

/* MUTED (being switched off, collect/budget.c): only an activation entered before it has a frame
 * to pop; an exit of one entered since has none, and is not an unmatched exit either. */
static void exit_muted(struct spanprof_site *site, uintptr_t cfa)
{
    const struct spanprof__frame *f = spanprof__tls->top;
    if (f->node->site == site && f->cfa == cfa)
        spanprof__record_exit(site, cfa, !spanprof__flags.counting);
}

static __attribute__((noinline)) void exit_slow(struct spanprof_site *site, uintptr_t cfa)
{
    uint32_t st = __atomic_load_n(&site->state, __ATOMIC_ACQUIRE);
    if (st == SPANPROF__SITE_NEW && !spanprof__busy(cfa)) {
        /* An exit for a site never entered here (e.g. entered while the runtime was busy):
         * register it so the cold path counts the exit as unmatched. */
        st = spanprof__site_register(site, 0);
    }
    if (SPANPROF__SITE_IS_TIMED(st))
        spanprof__record_exit(site, cfa, 1);
    else if (st == SPANPROF__SITE_COUNT)
        spanprof__record_exit(site, cfa, 0);
    else if (st == SPANPROF__SITE_SLOW)
        spanprof__hooks.exit(site, cfa);
    else if (st == SPANPROF__SITE_MUTED)
        exit_muted(site, cfa);
}

/* The entry points, by site state:
 *  - FAST (default recording): record with timestamps, inlined here (objects with the plugin's
 *    inline path record it themselves and come here only when that path misses);
 *  - COUNT (SPANPROF=count, sample): record without timestamps, inlined here (the same);
 *  - TIMED (default recording with a histogram, or without a bare rdtsc) and TRACE (tracing,
 *    recorded inline by objects with the inline path): as FAST, in the same test (the three
 *    values differ in two bits: one masked compare), the timestamp then being a trace event's;
 *  - OFF (SPANPROF=0, or a site the runtime ignores): the plugin's inline test skips the call
 *    (spanprof.h, SPANPROF_STATE_OFF), so it is not tested here first; a call that comes anyway
 *    (an object from an older plugin) returns from the out-of-line path;
 *  - anything else (not registered yet; coz or a per-call collector on; MUTED, a span being
 *    switched off by SPANPROF_BUDGET) goes out of line.
 * Nothing is read before the state check (not even the frame's return address).  RA names the
 * entering code: the call's return address, or the inline path's own address (enter_abi). */
static inline __attribute__((always_inline)) void enter(struct spanprof_site *site, void *frame,
                                                        uintptr_t ra, int inline_object)
{
    uint32_t st = __atomic_load_n(&site->state, __ATOMIC_RELAXED);
    if (SPANPROF_LIKELY(SPANPROF__SITE_IS_TIMED(st)))
        spanprof__record_enter(site, (uintptr_t)frame, ra, SPANPROF_FRAME_RETURN_ADDRESS(frame), 1);
    else if (st == SPANPROF__SITE_COUNT)
        spanprof__record_enter(site, (uintptr_t)frame, ra, SPANPROF_FRAME_RETURN_ADDRESS(frame), 0);
    else
        enter_slow(site, (uintptr_t)frame, ra, SPANPROF_FRAME_RETURN_ADDRESS(frame), inline_object);
}

SPANPROF_API void __spanprof_enter(struct spanprof_site *site, void *frame)
{
    enter(site, frame, SPANPROF_CALLER_RA(), 0);
}

/* The enter of objects built with the inline path (spanprof.h, SPANPROF_ABI_ENTER): ENTRY, the
 * address of their inline code, stands for the return address, so a frame pushed here and one
 * pushed inline name the same entering code. */
SPANPROF_API void spanprof__enter_abi(struct spanprof_site *site, void *frame, uintptr_t entry)
    __asm__(SPANPROF_ABI_ENTER);
SPANPROF_API void spanprof__enter_abi(struct spanprof_site *site, void *frame, uintptr_t entry)
{
    enter(site, frame, entry, 1);
}

SPANPROF_API void __spanprof_exit(struct spanprof_site *site, void *frame)
{
    uint32_t st = __atomic_load_n(&site->state, __ATOMIC_RELAXED);
    if (SPANPROF_LIKELY(SPANPROF__SITE_IS_TIMED(st)))
        spanprof__record_exit(site, (uintptr_t)frame, 1);
    else if (st == SPANPROF__SITE_COUNT)
        spanprof__record_exit(site, (uintptr_t)frame, 0);
    else
        exit_slow(site, (uintptr_t)frame);
}
