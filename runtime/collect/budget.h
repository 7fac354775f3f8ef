/* budget.h — SPANPROF_BUDGET (budget.c): the runtime's own cost kept under a share of the
 * process's CPU time by switching off the spans a plugin option chose, shortest calls first.
 */
#ifndef SPANPROF_BUDGET_H
#define SPANPROF_BUDGET_H

#include "record/record.h"

#pragma GCC visibility push(hidden)

/* A span switched off: when (seconds since the process started), its calls by then (summed over
 * threads; its counts stop there), and its mean inclusive duration over the tick before (ns;
 * 0 when counting); when its calls stopped reaching the runtime at all (state OFF; 0 while
 * activations entered before are still open). */
struct spanprof__budget_off {
    const struct spanprof_site *site;
    double at_s;
    uint64_t calls;
    double mean_ns;
    double off_s;
};
#define SPANPROF__BUDGET_OFF_MAX 4096
struct spanprof__budget {
    double percent;    /* SPANPROF_BUDGET; 0: no budget */
    double call_ns;    /* what one span call costs, measured at start-up */
    double last_share; /* the runtime's estimated share of CPU time over the last tick */
    size_t noff;       /* entries of off (release store: readers take the count first) */
    struct spanprof__budget_off off[SPANPROF__BUDGET_OFF_MAX];
};
extern struct spanprof__budget spanprof__budget;

/* At start-up, after the collectors: measures a call's cost.  PERCENT 0: no budget. */
void spanprof__budget_start(double percent);
/* The writer thread's: runs a tick when one is due; returns the seconds until the next, or -1
 * with no budget. */
double spanprof__budget_serve(void);
void spanprof__budget_fork_child(void);
/* SITE's entry when it was switched off (by id: a copy of a site whose object was unloaded
 * finds it too), else NULL. */
const struct spanprof__budget_off *spanprof__budget_off_of(const struct spanprof_site *site);

#pragma GCC visibility pop

#endif /* SPANPROF_BUDGET_H */
