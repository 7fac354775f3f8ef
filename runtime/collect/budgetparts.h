/* budgetparts.h — what the parts of SPANPROF_BUDGET share, all of them run by the writer thread
 * (never installed): the sums per site id and the helpers of budget.c, the cost of one call
 * (budgetcost.c), the looks and their windows (budgetlook.c), the ticks (budgettick.c).  What the
 * rest of the runtime calls is in budget.h.
 */
#ifndef SPANPROF_BUDGETPARTS_H
#define SPANPROF_BUDGETPARTS_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "collect/budget.h"
#include "collect/collect.h"

#pragma GCC visibility push(hidden)

/* A window or tick decides only after the process used this much CPU time: over a sliver of
 * it, any call weighs too much. */
#define SPANPROF__BUDGET_MIN_CPU_NS 1000000
/* Ticks come this often at the most, and choose only this long after start. */
#define SPANPROF__BUDGET_MIN_TICK_S 0.01

/* What the looks and the ticks gathered of one site, by site id. */
struct spanprof__site_sums {
    struct spanprof_site *site;
    uint64_t calls, last_calls;  /* the ticks': summed over every tree, and at the tick before, */
    uint64_t ticks, last_ticks;  /* ... the same for their ticks (exact) */
    uint64_t look_calls;         /* the looks': gained in the window, */
    uint64_t look_ticks;         /* ... their ticks (exact), */
    double look_sampled_ns;      /* ... SPANPROF=sample: the subtrees' sampled time since start */
    uint64_t look_all_calls;     /*     and their calls since start, */
    int look_long;               /* ... a subtree too big to add up: a long span */
    double mean_ns;              /* the lower of the last two means measured (0: none) */
    double measured_ns;          /* the last mean measured: the tick's (exact), a window's */
    double incl_ns, last_incl_ns; /* the ticks': its calls' time since start (their subtrees) */
    int leading;                  /* LEAD_SHARE of the program's time, since start or lately */
};

/* ---- budget.c ---- */
extern struct spanprof__site_sums *spanprof__budget_sums; /* by site id, ... */
extern struct spanprof__site_sums **spanprof__budget_order; /* a tick's scratch, as many */
extern size_t spanprof__budget_nsums;                       /* ... entries of each */
/* A tick has told which spans lead: windows and ticks may choose (budgettick.c sets it). */
extern int spanprof__budget_leads_known;
/* CLOCK's time in ns: the process's CPU time, or the writer thread's own. */
uint64_t spanprof__budget_clock_ns(clockid_t clock);
double spanprof__budget_since_start_s(void);
/* Whether spans have a time: exact or SPANPROF=sample, not SPANPROF=count. */
int spanprof__budget_timed(void);
/* Whether SITE is one the budget may switch off, and still recording. */
int spanprof__budget_may_switch_off(const struct spanprof_site *site);
/* MEAN (ns, > 0) measured for X's calls now: X's mean becomes the lower of it and the one
 * measured before. */
void spanprof__budget_note_mean(struct spanprof__site_sums *x, double mean);
/* X's span goes MUTED now, its mean call MEAN_NS.  Under the process lock. */
void spanprof__budget_switch_off(struct spanprof__site_sums *x, double mean_ns);
/* SPANPROF=sample: the sampled wall time charged to N itself. */
double spanprof__budget_sampled_self(const struct spanprof__node *n);

/* ---- budgetcost.c ---- */
/* What one span call of the process's recording mode costs, ns (0: not measured). */
double spanprof__budget_measure_call_ns(void);

/* ---- budgetlook.c ---- */
/* Under the process lock: a look, and every DECIDE_LOOKS looks the window's choice.  Returns
 * how many call paths it saw first. */
int spanprof__budget_look(void);
/* From now on (start-up, a fork child): the window starts at CPU_NS of the process's time. */
void spanprof__budget_look_restart(uint64_t cpu_ns);

/* ---- budgettick.c ---- */
/* A walk of every call tree, switching spans off while the calls cost too much (takes the
 * process lock). */
void spanprof__budget_tick(void);
/* From now on (start-up, a fork child): the program's time is counted from CPU_NS of the
 * process's time, the runtime's threads' from the writer's OWN_NS, the first tick's wall time
 * from MONO_NS, and thread START_TID's (0: none) from its CPU time now. */
void spanprof__budget_tick_restart(uint64_t cpu_ns, uint64_t own_ns, uint64_t mono_ns,
                                   pid_t start_tid);

#pragma GCC visibility pop

#endif /* SPANPROF_BUDGETPARTS_H */
