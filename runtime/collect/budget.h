/* budget.h — SPANPROF_BUDGET: the runtime's own cost kept under a share of the process's CPU
 * time by switching off the spans a plugin option chose, those that cost most for their own
 * time first (budget.c and its parts in budgetparts.h decide; spanswitch.c switches off,
 * budgetoff.c keeps the record).
 */
#ifndef SPANPROF_BUDGET_H
#define SPANPROF_BUDGET_H

#include "record/record.h"

#pragma GCC visibility push(hidden)

/* A span switched off: when (seconds since the process started; its counts stop there), its mean
 * inclusive duration before (ns; 0 when not known), and when its calls stopped reaching the
 * runtime at all (state OFF; 0 while it is MUTED). */
struct spanprof__budget_off {
    const struct spanprof_site *site;
    double at_s;
    double mean_ns;
    double off_s;
};
#define SPANPROF__BUDGET_OFF_MAX 4096
/* The writer thread updates the counters below with relaxed stores (SPANPROF_PUBLISH), since the
 * report writers read them (SPANPROF_PEEK) on other threads, with or without the process lock. */
struct spanprof__budget {
    double percent;    /* SPANPROF_BUDGET; 0: no budget */
    double call_ns;    /* what one span call costs, measured at start-up */
    double last_share; /* the runtime's estimated share of CPU time over the last tick */
    uint64_t ticks;    /* walks of the call trees so far, and the writer thread's time in them */
    uint64_t tick_ns;
    uint64_t looks;    /* looks so far */
    uint64_t looks_woken; /* times a new call path woke the looks after they slowed down */
    uint64_t cpu_ns;   /* the writer thread's CPU time in looks and ticks */
    size_t noff;       /* entries of off (release store: readers take the count first) */
    struct spanprof__budget_off off[SPANPROF__BUDGET_OFF_MAX];
};
extern struct spanprof__budget spanprof__budget;

/* ---- budgetlook.c ---- */
/* From collectors_start, before any node exists: the per-node data of the looks. */
void spanprof__budget_layout(void);

/* ---- budget.c ---- */
/* At start-up, after the collectors: measures a call's cost.  PERCENT 0: no budget. */
void spanprof__budget_start(double percent);
/* The writer thread's: runs a look or a tick when one is due; returns the seconds until the
 * next, or -1 with no budget. */
double spanprof__budget_serve(void);
void spanprof__budget_fork_child(void);

/* ---- budgettick.c ---- */
/* Under the process lock, in thread T as it ends (merge.c): its CPU time since a tick read it last
 * counts at the next tick, as the calls it made meanwhile, merged into its group, do. */
void spanprof__budget_thread_ended(const struct spanprof__thread *t);

/* ---- budgetoff.c ---- */
/* Maps the table by site id; -1 when out of memory. */
int spanprof__budget_off_setup(void);
/* Whether SITE can be switched off and recorded (an id the table has, room in off). */
int spanprof__budget_may_track(const struct spanprof_site *site);
/* SITE goes MUTED (spanswitch.c), recorded with AT_S and MEAN_NS; nothing while a switch request
 * is answered.  The writer thread only, under the process lock. */
void spanprof__budget_mute(struct spanprof_site *site, double at_s, double mean_ns);
/* Under the process lock: MUTED sites that no thread can still be inside go OFF (spanswitch.c;
 * the budget's get their off_s NOW_S).  Returns how many of the budget's are still MUTED. */
size_t spanprof__budget_settle(double now_s);
/* SITE's entry when it was switched off (by id: a copy of a site whose object was unloaded
 * finds it too), else NULL. */
const struct spanprof__budget_off *spanprof__budget_off_of(const struct spanprof_site *site);

#pragma GCC visibility pop

#endif /* SPANPROF_BUDGET_H */
