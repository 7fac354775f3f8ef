/* budgettick.c — SPANPROF_BUDGET's ticks: every call tree walked, the runtime's share of the
 * CPU time reckoned, spans switched off while the calls cost too much, and which spans lead
 * (budget.c says what the budget is).
 *
 * Every tick (budget.c times them: the first 2 ms after start, then 10 ms apart or more, as
 * a walk may take half a percent of one CPU) every thread's call tree is walked under the
 * process lock: the calls since the last tick times a call's cost, plus the runtime's threads' own time (the
 * writer thread's in looks and ticks, the sampler's), against the CPU time of the threads that
 * run spans (each read by its own clock, see thread_cpu_spent) and of the runtime's threads,
 * are the share the profile reports (last_share).  The rule of the windows bounds each span's
 * cost against its own time, not their sum: spans nested in one another, each within its
 * share, add up (a chain of ten wrappers around a 2 us call, each 16 ns, costs 8 %).  So while
 * the calls of the spans still recording cost more than nine tenths of the budget, spans go:
 * those that do not lead first, and within each group the shortest mean first (exact: over the
 * tick; SPANPROF=sample: the last window that knew it; either way the lower of that and the one
 * before, spanprof__budget_note_mean), then, without a mean (SPANPROF=count,
 * or a span no look saw), the most called.  The threads' time is not weighed there: no span
 * switched off makes it smaller (the sampler alone took 3.3 % of speedtest1's CPU time), and a
 * budget it uses up would switch off the longest spans of the program for nothing.
 * SPANPROF_BUDGET=100 measures only.
 *
 * Leading spans.  A span leads whose calls took a tenth (LEAD_SHARE) of the program's time since
 * start, or over the last tick: its subtrees' time less the cost of the calls in them (as the
 * profile's compensation takes it out, so that a tiny span does not lead by its own recording),
 * against the CPU time less the calls' estimated cost and the runtime's threads'.  The spans
 * that lead are those a profile of the run is read by (speedtest1's ten of most total time
 * were each 14 % of it or more, the eleventh 8 %).  The windows leave them, and a tick takes
 * them only after every span that does not lead: they go only when the budget cannot be kept
 * otherwise.  The first tick tells which spans lead, and the windows wait for it.
 * SPANPROF=sample knows a subtree's time only after LEAD_MIN_SAMPLES sampler periods: its
 * ticks choose only from then, and its windows from the start, every span taken as not leading
 * until then (its windows switch off only spans of a few hundred ns: a call costs less).
 * SPANPROF=count has no time, and none leads.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>

#include "collect/budgetparts.h"
#include "record/clock.h"

#define LEAD_SHARE 0.1     /* a span whose calls took this share of the program's time leads */
#define LEAD_MIN_SAMPLES 20 /* SPANPROF=sample: which spans lead is known after this many periods */

static uint64_t start_cpu_ns, start_own_ns; /* the process's CPU time, the writer's in the budget */
static uint64_t tick_cpu_ns, tick_mono_ns, tick_own_ns, tick_sampler_ns; /* at the tick before */
static double ns_per_tick; /* the clock's, read once a tick (each read takes two) */
static unsigned ticks_walked; /* since the budget began (again, in a fork child) */
static pid_t start_tid;      /* the thread that started the runtime, */
static uint64_t start_tid_ns; /* ... and its CPU time when the budget began */

/* Which spans lead: a node's subtree time, less what the calls in the subtree cost (as the
 * profile's compensation takes it out, so that a tiny span is not made to lead by its own
 * recording), summed per site.  The walk finishes a node's children before it, and below[D]
 * gathers those of the open node at depth D - 1: their calls, and SPANPROF=sample their sampled
 * time (exact: a node's ticks are its subtree's already). */
struct subtree {
    double ns;
    uint64_t calls;
};
static struct subtree *below;
static size_t below_cap;

static int below_fit(size_t want)
{
    if (want <= below_cap)
        return 1;
    size_t cap = want < 64 ? 64 : 2 * want;
    struct subtree *n = realloc(below, cap * sizeof *n);
    if (!n)
        return 0;
    below = n;
    below_cap = cap;
    return 1;
}

/* Thread T's CPU time NOW back to the tick that read it last; read by none, since the budget
 * began (the thread that started the runtime spent milliseconds before: loading, start-up). */
static uint64_t cpu_since_read(const struct spanprof__thread *t, uint64_t now)
{
    if (t->budget_cpu_ns)
        return now > t->budget_cpu_ns ? now - t->budget_cpu_ns
                                      : 0; /* a fork child's clock started again */
    return t->tid == start_tid && now > start_tid_ns ? now - start_tid_ns : now;
}

/* The CPU time thread T used since the tick before, by its own clock, read just before its
 * tree is.  The process's clock counts a thread running on another CPU only up to the kernel's
 * last scheduler tick (4 ms apart at HZ=250: a thread that ran all of 3 ms read as 0.05 to 4.07
 * ms), and a writer thread that waits for a CPU within a walk would part the calls it reads
 * from the clock it read (a 10 ms tick then saw twice the cost there was).  A thread read for
 * the first time counts at most the tick's WALL time.  Threads that run no span are not
 * counted: the share errs high. */
static uint64_t thread_cpu_spent(struct spanprof__thread *t, uint64_t wall)
{
    uint64_t now = t->exited || !t->tid ? UINT64_MAX : spanprof__thread_cpu_ns(t->tid);
    if (now == UINT64_MAX)
        return 0; /* gone: what it spent came with its end (spanprof__budget_thread_ended) */
    uint64_t spent = cpu_since_read(t, now);
    if (!t->budget_cpu_ns)
        spent = spent < wall ? spent : wall;
    t->budget_cpu_ns = now;
    return spent;
}

/* A thread's calls since the tick before are merged into its group as it ends: its time goes
 * with them (without it, the tick after 4 threads ended saw the runtime take 481 % of the CPU
 * time, and switched off the spans that lead). */
static uint64_t ended_ns; /* under the process lock */

void spanprof__budget_thread_ended(const struct spanprof__thread *t)
{
    ended_ns += cpu_since_read(t, spanprof__budget_clock_ns(CLOCK_THREAD_CPUTIME_ID));
}

static int add_calls(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)ctx;
    struct spanprof__site_sums *sums = spanprof__budget_sums;
    size_t nsums = spanprof__budget_nsums;
    struct spanprof_site *s = (struct spanprof_site *)n->site;
    if (s && s->id < nsums) {
        sums[s->id].site = s;
        sums[s->id].calls += __atomic_load_n(&n->calls, __ATOMIC_RELAXED);
        sums[s->id].ticks += __atomic_load_n(&n->total, __ATOMIC_RELAXED);
    }
    if (!spanprof__budget_timed())
        return 1; /* no subtree times to gather */
    if (!below_fit(depth + 2))
        return 0; /* no memory: its subtree is itself */
    below[depth + 1] = (struct subtree){0, 0};
    return 1;
}

static void add_subtree(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)ctx;
    struct spanprof__site_sums *sums = spanprof__budget_sums;
    size_t nsums = spanprof__budget_nsums;
    struct subtree sub = depth + 1 < below_cap ? below[depth + 1] : (struct subtree){0, 0};
    sub.calls += __atomic_load_n(&n->calls, __ATOMIC_RELAXED);
    sub.ns = spanprof__collect.sample_hz
                 ? sub.ns + spanprof__budget_sampled_self(n)
                 : (double)__atomic_load_n(&n->total, __ATOMIC_RELAXED) * ns_per_tick;
    if (depth < below_cap) {
        below[depth].ns += sub.ns;
        below[depth].calls += sub.calls;
    }
    const struct spanprof_site *s = n->site;
    double ns = sub.ns - (double)sub.calls * spanprof__budget.call_ns;
    if (s && s->id < nsums && ns > 0)
        sums[s->id].incl_ns += ns;
}

/* Whether X goes before Y while a tick is over the budget: a span that does not lead before one
 * that does, then the shorter mean first, a span with a mean before one without, the more
 * called among those without. */
static int goes_before(const struct spanprof__site_sums *x, const struct spanprof__site_sums *y)
{
    if (x->leading != y->leading)
        return !x->leading;
    if (x->mean_ns > 0 || y->mean_ns > 0)
        return x->mean_ns > 0 && (!(y->mean_ns > 0) || x->mean_ns < y->mean_ns);
    return x->calls - x->last_calls > y->calls - y->last_calls;
}

static int by_going_order(const void *a, const void *b)
{
    const struct spanprof__site_sums *x = *(const struct spanprof__site_sums *const *)a;
    const struct spanprof__site_sums *y = *(const struct spanprof__site_sums *const *)b;
    return goes_before(x, y) ? -1 : goes_before(y, x) ? 1 : 0;
}

void spanprof__budget_tick(void)
{
    struct spanprof__budget *b = &spanprof__budget;
    struct spanprof__site_sums *sums = spanprof__budget_sums;
    size_t nsums = spanprof__budget_nsums;
    struct spanprof__site_sums **order = spanprof__budget_order;
    uint64_t cpu = spanprof__budget_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    if (cpu - tick_cpu_ns < SPANPROF__BUDGET_MIN_CPU_NS)
        return; /* the program hardly ran: no walk, the next tick covers this one too */
    tick_cpu_ns = cpu;
    ns_per_tick = spanprof__clock_ns_per_tick();
    uint64_t mono = spanprof__mono_ns(), wall = mono - tick_mono_ns;
    tick_mono_ns = mono;
    for (size_t i = 0; i < nsums; i++) {
        sums[i].calls = sums[i].ticks = 0;
        sums[i].incl_ns = 0;
    }
    spanprof__lock();
    uint64_t threads_ns = ended_ns;
    ended_ns = 0;
    for (struct spanprof__thread *t = spanprof__g.threads; t; t = t->next) {
        threads_ns += thread_cpu_spent(t, wall);
        spanprof__tree_walk(&t->root, add_calls, spanprof__budget_timed() ? add_subtree : NULL,
                            NULL);
    }
    spanprof__unlock();
    /* The runtime's threads: the writer's looks and ticks before this walk, and the sampler
     * (whose clock starts again in a fork child). */
    uint64_t sampler = spanprof__sampler_cpu_ns();
    double own = (double)(b->cpu_ns - tick_own_ns) +
                 (double)(sampler >= tick_sampler_ns ? sampler - tick_sampler_ns : sampler);
    double spent = (double)threads_ns + own;
    tick_own_ns = b->cpu_ns;
    tick_sampler_ns = sampler;
    /* The calls' cost over the tick (reported), and the part of it that goes on: spans the looks
     * switched off meanwhile cost nothing from now on, and weighing them would switch off the
     * longer spans around them for nothing. */
    double cost = 0, going_on = 0;
    for (size_t i = 0; i < nsums; i++)
        if (sums[i].calls > sums[i].last_calls) {
            double c = (double)(sums[i].calls - sums[i].last_calls) * b->call_ns;
            uint32_t st = __atomic_load_n(&sums[i].site->state, __ATOMIC_RELAXED);
            cost += c;
            going_on += st == SPANPROF__SITE_MUTED || st == SPANPROF__SITE_OFF ? 0 : c;
        }
    /* The spans that lead, whose calls took a tenth of the program's time since start or over
     * this tick (the CPU time less the calls' estimated cost and the runtime's threads': what a
     * profile that takes the cost out shows), go last: they are what a profile of the run is
     * read by, and a phase's own are not a tenth of the whole yet.  SPANPROF=count has no time:
     * none leads. */
    double program_ns = (double)(cpu - start_cpu_ns) - (double)(b->cpu_ns - start_own_ns) -
                        (double)sampler;
    for (size_t i = 0; i < nsums; i++)
        program_ns -= (double)sums[i].calls * b->call_ns;
    double lead_ns = LEAD_SHARE * (program_ns > 0 ? program_ns : 0);
    double lead_lately_ns = LEAD_SHARE * (spent - own - cost > 0 ? spent - own - cost : 0);
    /* SPANPROF=sample: a subtree's time is known only after a few sampler passes. */
    spanprof__budget_leads_known |=
        !spanprof__collect.sample_hz ||
        spanprof__budget_since_start_s() * spanprof__collect.sample_hz >= LEAD_MIN_SAMPLES;
    for (size_t i = 0; i < nsums; i++) {
        struct spanprof__site_sums *x = &sums[i];
        x->leading = spanprof__budget_leads_known && x->incl_ns > 0 &&
                     (x->incl_ns >= lead_ns || x->incl_ns - x->last_incl_ns >= lead_lately_ns);
        x->last_incl_ns = x->incl_ns;
    }
    /* Exact: the mean over this tick, known for every span called in it. */
    if (!spanprof__flags.counting)
        for (size_t i = 0; i < nsums; i++)
            if (sums[i].calls > sums[i].last_calls && sums[i].ticks > sums[i].last_ticks)
                spanprof__budget_note_mean(
                    &sums[i], (double)(sums[i].ticks - sums[i].last_ticks) * ns_per_tick /
                                  (double)(sums[i].calls - sums[i].last_calls));
    double limit = b->percent / 100 * (double)spent;
    /* A tick whose threads' clocks saw under half of MIN_CPU_NS tells nothing of the share or
     * of the spans.  The process's clock let it come: it counts a thread on another CPU late,
     * after the threads' own clocks had given that time to the tick before.  Over the runtime's
     * own time alone the share was 100 %, the profile's figure once the program's threads had
     * ended. */
    int measured = spent >= SPANPROF__BUDGET_MIN_CPU_NS / 2;
    if (measured) {
        double share = (cost + own) / (double)spent;
        __atomic_store(&b->last_share, &share, __ATOMIC_RELAXED);
    }
    /* While the calls are over (the threads' time stays whatever goes; a budget they use up is
     * not met, and the share says so), the spans called in the tick go in order. */
    size_t n = 0;
    /* Not at the first tick, FIRST_TICK_S after the budget began: it weighs start-up at full
     * cost, before the windows acted (when it did, speedtest1 lost spans of 10 us mean there),
     * and its means are a couple of milliseconds' worth, where on a busy machine one preemption
     * inside a 20 ns span made it lead and look longer than the span that led in fact, which
     * went in its place. */
    if (measured && b->percent < 100 && going_on > 0.9 * limit && spanprof__budget_leads_known &&
        ticks_walked > 0) {
        for (size_t i = 0; i < nsums; i++) {
            struct spanprof__site_sums *x = &sums[i];
            if (x->site && (double)(x->calls - x->last_calls) * b->call_ns >= limit / 100 &&
                spanprof__budget_may_switch_off(x->site))
                order[n++] = x;
        }
        qsort(order, n, sizeof *order, by_going_order);
    }
    spanprof__lock(); /* muting: a switch request settles the same table on the live thread */
    for (size_t k = 0; k < n && going_on > 0.9 * limit; k++) {
        going_on -= (double)(order[k]->calls - order[k]->last_calls) * b->call_ns;
        spanprof__budget_switch_off(order[k], order[k]->mean_ns);
    }
    spanprof__unlock();
    for (size_t i = 0; i < nsums; i++) {
        sums[i].last_calls = sums[i].calls;
        sums[i].last_ticks = sums[i].ticks;
    }
    ticks_walked++;
}

void spanprof__budget_tick_restart(uint64_t cpu_ns, uint64_t own_ns, uint64_t mono_ns,
                                   pid_t tid)
{
    struct spanprof__site_sums *sums = spanprof__budget_sums;
    size_t nsums = spanprof__budget_nsums;
    for (size_t i = 0; i < nsums; i++) {
        sums[i].calls = sums[i].ticks = 0;
        sums[i].last_incl_ns = 0;
    }
    spanprof__lock(); /* threads may be ending: they read these */
    start_tid = tid;
    start_tid_ns = tid ? spanprof__thread_cpu_ns(tid) : 0;
    start_tid_ns = start_tid_ns == UINT64_MAX ? 0 : start_tid_ns;
    ended_ns = 0;
    /* The first tick counts from here: the calls made so far and each thread's CPU time now.
     * On a busy machine the writer thread once began 20 ms late, after six of the program's
     * rounds: with those rounds' calls weighed against the CPU time since it began alone, the
     * first tick found the calls costing a third of it, and switched off the span that led. */
    for (struct spanprof__thread *t = spanprof__g.threads; t; t = t->next) {
        thread_cpu_spent(t, 0);
        spanprof__tree_walk(&t->root, add_calls, NULL, NULL);
    }
    spanprof__unlock();
    start_cpu_ns = tick_cpu_ns = cpu_ns;
    start_own_ns = tick_own_ns = own_ns;
    tick_mono_ns = mono_ns;
    for (size_t i = 0; i < nsums; i++) {
        sums[i].last_calls = sums[i].calls;
        sums[i].last_ticks = sums[i].ticks;
    }
    spanprof__budget_leads_known = 0; /* a fork child's trees start empty */
    ticks_walked = 0;
}
