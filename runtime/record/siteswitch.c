/* siteswitch.c — a span switched on while the program runs (collect/spanswitch.c decides when):
 * from OFF to recording without a phantom frame or an exit counted as unmatched.
 *
 * While a span is OFF its calls reach nothing: no frame is pushed, and a function with the off
 * copy of its body never runs its exit at all.  Switching it on has two hazards:
 *  - a call entered while it was off exits after the switch.  Its exit finds no frame of its
 *    own: it is not an unmatched exit (the stack is right), so a site switched on is marked, and
 *    stack.c does not count such an exit;
 *  - its patch points come back one by one, enter and exit points in any order (the notes do
 *    not say which is which).  A call that passed a restored enter point and then an exit point
 *    still a no-op would leave its frame behind.  So the site is armed first: MUTED, in which
 *    enters record nothing and an exit pops only its own frame (span.c), while its points are
 *    restored; it records (spanprof__site_resume) only once every point is back, and every core
 *    runs the restored code.  The first frame is pushed after that, and its exit runs.
 * The mark is by site id, in a table mapped at the first switch and kept (a fork child inherits
 * it, as it inherits the sites' states).
 */
#include "record/record.h"

static uint8_t *switched_on; /* by site id: 1 once switched on; NULL until the first switch */

int spanprof__site_arm(struct spanprof_site *site)
{
    if (site->version != SPANPROF_SITE_VERSION ||
        (site->kind != SPANPROF_KIND_SPAN && site->kind != SPANPROF_KIND_SPAN_BY_OPTION) ||
        __atomic_load_n(&site->state, __ATOMIC_ACQUIRE) != SPANPROF__SITE_OFF ||
        !spanprof__flags.recording)
        return 0;
    if (!switched_on) { /* under the caller's lock; exits read it unlocked */
        uint8_t *table = spanprof__map(SPANPROF_SITE_IDS);
        if (!table)
            return 0;
        __atomic_store_n(&switched_on, table, __ATOMIC_RELEASE);
    }
    if (!site->id) /* OFF since start-up (SPANPROF_SPANS): never seen */
        spanprof__site_give_id(site);
    if (site->id >= SPANPROF_SITE_IDS)
        return 0;
    __atomic_store_n(&switched_on[site->id], 1, __ATOMIC_RELEASE);
    __atomic_store_n(&site->state, SPANPROF__SITE_MUTED, __ATOMIC_RELEASE);
    return 1;
}

void spanprof__site_resume(struct spanprof_site *site)
{
    if (__atomic_load_n(&site->state, __ATOMIC_ACQUIRE) == SPANPROF__SITE_MUTED)
        __atomic_store_n(&site->state, spanprof__site_span_state(site, 0), __ATOMIC_RELEASE);
}

int spanprof__site_switched_on(const struct spanprof_site *site)
{
    const uint8_t *table = __atomic_load_n(&switched_on, __ATOMIC_ACQUIRE);
    return table && site->id < SPANPROF_SITE_IDS && __atomic_load_n(&table[site->id], __ATOMIC_ACQUIRE);
}
