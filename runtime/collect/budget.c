/* budget.c — SPANPROF_BUDGET: recording that keeps its own cost under a share of the process's
 * CPU time, by switching off the spans that cost most for the time they measure.  The writer
 * thread runs it (spanprof__budget_serve), in parts:
 *  - budgetcost.c: what one span call costs, measured at start-up;
 *  - budgetlook.c: every LOOK_S, a look at the calls below each thread's innermost open spans,
 *    and every few looks the spans whose calls cost too much for their own time switched off
 *    (the looks slow down to MAX_LOOK_S while they see nothing new, below);
 *  - budgettick.c: every tick (MIN_TICK_S to MAX_TICK_S apart), every call tree walked: the
 *    runtime's share of the CPU time, which spans lead (those a profile is read by, switched off
 *    last), and spans switched off while the calls cost more than the budget;
 *  - budgetoff.c: how a span is switched off without losing an exit, and the record of it;
 *    once it is OFF, its patch points become no-ops (record/sitepatch.c), and it costs nothing.
 * Here: the sums per site the parts share, their helpers, and when each part runs.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect/budgetparts.h"
#include "collect/spanswitch.h"
#include "record/clock.h"
#include "record/sitepatch.h"

#define LOOK_S 0.001
/* While the looks see no new call path and switch nothing off, the time between them doubles
 * every QUIET_LOOKS looks, up to MAX_LOOK_S, and the first new call path any thread makes wakes
 * the writer for a look at once (record/calltree.c) and brings LOOK_S back.  A look wakes the
 * writer thread: a look every millisecond took 2 to 3 % of a CPU in a program that had long
 * settled (the wake-up 10 to 13 us on a virtual machine, the look 10 to 20 us), about half of
 * a 5 % budget. */
#define MAX_LOOK_S 0.064
#define QUIET_LOOKS 4
#define MIN_TICK_S SPANPROF__BUDGET_MIN_TICK_S
#define FIRST_TICK_S (2 * LOOK_S) /* it tells which spans lead; the windows wait for it */
#define MAX_TICK_S 0.5
#define WALK_SHARE 0.005
/* Batches of patching (record/sitepatch.c; in speedtest1 with every function a span, 0.4 to
 * 15 ms each, medians 1.3 to 1.9 ms, most of it in mprotect's and membarrier's interrupts to
 * every CPU) take at most this share of the time: a span OFF and not patched yet costs only its
 * guards' test meanwhile.  With a batch for each look that saw spans go OFF, speedtest1 ran
 * 70 batches a second, most of the budget's own CPU time. */
#define PATCH_SHARE 0.01
#define MAX_PATCH_GAP_S 0.1

struct spanprof__budget spanprof__budget;

struct spanprof__site_sums *spanprof__budget_sums;
struct spanprof__site_sums **spanprof__budget_order;
size_t spanprof__budget_nsums;
int spanprof__budget_leads_known;
static double next_tick, next_look, tick_s;
static double look_s;    /* LOOK_S to MAX_LOOK_S */
static int quiet_looks;  /* looks in a row at look_s that saw nothing new */
static int path_wanted;  /* spanprof__new_path_wanted was set by us (looks slowed down) */
static double next_patch; /* no batch of patching before this */
static int patch_due;     /* spans went OFF since the last batch */
static size_t muting; /* sites MUTED, waiting to go OFF (budgetoff.c) */
static pid_t start_tid; /* the thread that started the runtime */
static int begun;       /* the clocks are set: start-up is over (the writer thread's own) */

uint64_t spanprof__budget_clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double mono_s(void)
{
    return (double)spanprof__mono_ns() / 1e9;
}

double spanprof__budget_since_start_s(void)
{
    return (double)(spanprof__mono_ns() - spanprof__g.start_mono_ns) / 1e9;
}

int spanprof__budget_timed(void)
{
    return !spanprof__flags.counting || spanprof__collect.sample_hz;
}

int spanprof__budget_may_switch_off(const struct spanprof_site *s)
{
    uint32_t st = __atomic_load_n(&s->state, __ATOMIC_RELAXED);
    return s->kind == SPANPROF_KIND_SPAN_BY_OPTION && spanprof__budget_may_track(s) &&
           (SPANPROF__SITE_IS_TIMED(st) || st == SPANPROF__SITE_COUNT);
}

/* Noise only adds time: on a busy machine one preemption inside a call of a short span (a few ms,
 * against calls of 20 ns) made it look long for a whole tick, so it went after longer spans, or
 * not at all, and a span that leads went in its place.  A span whose calls really got longer shows
 * it in the next measurement too. */
void spanprof__budget_note_mean(struct spanprof__site_sums *x, double mean)
{
    x->mean_ns = x->measured_ns > 0 && x->measured_ns < mean ? x->measured_ns : mean;
    x->measured_ns = mean;
}

void spanprof__budget_switch_off(struct spanprof__site_sums *x, double mean_ns)
{
    spanprof__budget_mute(x->site, spanprof__budget_since_start_s(), mean_ns);
    muting++;
}

double spanprof__budget_sampled_self(const struct spanprof__node *n)
{
    const struct spanprof__sample_node *sn = spanprof__sample_of(n);
    return (double)(__atomic_load_n(&sn->wall_timely_ns, __ATOMIC_RELAXED) +
                    __atomic_load_n(&sn->wall_late_ns, __ATOMIC_RELAXED) +
                    __atomic_load_n(&sn->wall_still_ns, __ATOMIC_RELAXED));
}

/* Room in sums for every site id given out so far; 0 when out of memory. */
static int sums_fit(void)
{
    size_t want = (size_t)__atomic_load_n(&spanprof__g.next_site_id, __ATOMIC_RELAXED) + 64;
    size_t have = spanprof__budget_nsums;
    if (want <= have)
        return 1;
    struct spanprof__site_sums *n = realloc(spanprof__budget_sums, want * sizeof *n);
    if (n)
        spanprof__budget_sums = n;
    struct spanprof__site_sums **o = n ? realloc(spanprof__budget_order, want * sizeof *o) : NULL;
    if (!o)
        return 0;
    spanprof__budget_order = o;
    memset(n + have, 0, (want - have) * sizeof *n);
    spanprof__budget_nsums = want;
    return 1;
}

/* A span this budget (or a request: its settling may happen here) switched off that is OFF now:
 * its patch points may go. */
static int switched_off(struct spanprof_site *site, void *ctx)
{
    return __atomic_load_n(&site->state, __ATOMIC_ACQUIRE) == SPANPROF__SITE_OFF &&
           (spanprof__budget_off_of(site) || spanprof__switch_patchable(site, ctx));
}

/* ---- the writer thread's side ---------------------------------------------------------------- */

void spanprof__budget_start(double percent)
{
    struct spanprof__budget *b = &spanprof__budget;
    if (!(percent > 0))
        return;
    if (spanprof__budget_off_setup()) {
        fprintf(stderr, "spanprof: warning: SPANPROF_BUDGET: no memory for its table; no "
                        "budget\n");
        return;
    }
    b->call_ns = spanprof__budget_measure_call_ns();
    if (!(b->call_ns > 0)) {
        fprintf(stderr, "spanprof: warning: SPANPROF_BUDGET: the cost of a span call could not "
                        "be measured; no budget\n");
        return;
    }
    b->percent = percent;
    start_tid = gettid();
}

/* The writer thread's first serve once start-up is over: the program's time counts from now.
 * Counted from spanprof__budget_start, it held the rest of start-up (the writer thread's
 * creation among it: 0.4 to 0.6 ms of CPU time), half of what the first tick saw of a program
 * and enough to put a span of an eighth of the program under LEAD_SHARE (budgettick.c). */
static void begin(void)
{
    uint64_t cpu = spanprof__budget_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    sums_fit(); /* the sites seen so far, for the first tick's baseline */
    spanprof__budget_look_restart(cpu);
    spanprof__budget_tick_restart(cpu, spanprof__budget.cpu_ns, spanprof__mono_ns(), start_tid);
    tick_s = MIN_TICK_S;
    next_tick = mono_s() + FIRST_TICK_S;
    next_look = mono_s() + LOOK_S;
    look_s = LOOK_S;
    begun = 1;
}

/* After a look: as often as LOOK_S while it saw something new (BUSY), and slower while it did
 * not (MAX_LOOK_S above). */
static void pace_looks(int busy)
{
    if (busy) {
        look_s = LOOK_S;
        quiet_looks = 0;
        if (path_wanted)
            __atomic_store_n(&spanprof__new_path_wanted, 0, __ATOMIC_RELAXED);
        path_wanted = 0;
    } else if (++quiet_looks >= QUIET_LOOKS && look_s < MAX_LOOK_S) {
        quiet_looks = 0;
        look_s = 2 * look_s < MAX_LOOK_S ? 2 * look_s : MAX_LOOK_S;
        path_wanted = 1;
        __atomic_store_n(&spanprof__new_path_wanted, 1, __ATOMIC_RELEASE);
    }
}

double spanprof__budget_serve(void)
{
    struct spanprof__budget *b = &spanprof__budget;
    if (!(b->percent > 0))
        return -1;
    if (!begun) {
        if (!__atomic_load_n(&spanprof__flags.recording, __ATOMIC_ACQUIRE))
            return LOOK_S; /* start-up is not over */
        begin();
    }
    uint64_t cpu0 = spanprof__budget_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    double now = mono_s();
    if (path_wanted && !__atomic_load_n(&spanprof__new_path_wanted, __ATOMIC_ACQUIRE)) {
        pace_looks(1); /* a thread made a new call path, and woke us: a look now, and often */
        next_look = now;
        SPANPROF_PUBLISH(b->looks_woken, b->looks_woken + 1);
    }
    if (now >= next_look && sums_fit()) {
        spanprof__lock();
        int first_seen = spanprof__budget_look();
        /* Counted after the look: a span it mutes may go OFF in this same settle. */
        size_t was_muting = muting;
        if (muting)
            muting = spanprof__budget_settle(spanprof__budget_since_start_s());
        spanprof__unlock();
        if (muting < was_muting) /* some went OFF: their points go too (outside the lock) */
            patch_due = 1;
        pace_looks(first_seen || was_muting || muting);
        next_look = now + look_s;
    }
    if (patch_due && now >= next_patch) {
        double before = mono_s();
        spanprof__sitepatch_off(switched_off, NULL);
        double gap = (mono_s() - before) / PATCH_SHARE;
        next_patch = before + (gap < MAX_PATCH_GAP_S ? gap : MAX_PATCH_GAP_S);
        patch_due = 0;
    }
    if (now >= next_tick && sums_fit()) {
        spanprof__budget_tick();
        /* As often as a walk of the trees allows: at most WALK_SHARE of one CPU; every
         * MIN_TICK_S until a tick may choose (a first walk, of small trees, would put the
         * next one far off). */
        double walked = mono_s() - now;
        SPANPROF_PUBLISH(b->ticks, b->ticks + 1);
        SPANPROF_PUBLISH(b->tick_ns, b->tick_ns + (uint64_t)(walked * 1e9));
        tick_s = spanprof__budget_since_start_s() < MIN_TICK_S || !spanprof__budget_leads_known
                     ? 0
                     : walked / WALK_SHARE;
        tick_s = tick_s < MIN_TICK_S ? MIN_TICK_S : tick_s > MAX_TICK_S ? MAX_TICK_S : tick_s;
        next_tick = now + tick_s;
    }
    uint64_t cpu1 = spanprof__budget_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    SPANPROF_PUBLISH(b->cpu_ns, b->cpu_ns + (cpu1 - cpu0));
    double next = next_look < next_tick ? next_look : next_tick;
    if (patch_due && next_patch < next)
        next = next_patch;
    return next > now ? next - now : 0;
}

void spanprof__budget_fork_child(void)
{
    if (!(spanprof__budget.percent > 0))
        return;
    uint64_t cpu = spanprof__budget_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    spanprof__budget_look_restart(cpu);
    spanprof__budget_tick_restart(cpu, spanprof__budget.cpu_ns, spanprof__mono_ns(), 0);
    pace_looks(1); /* the child's own writer thread looks often first */
}
