/* budget.c — SPANPROF_BUDGET: recording that keeps its own cost under a share of the process's
 * CPU time, by switching off the spans that cost most for the time they measure (how a span is
 * switched off without losing an exit: budgetoff.c).
 *
 * The cost of a call.  At start-up one span call of the process's recording mode (exact, or
 * counting for `count` and `sample`) is measured on private sites called in turn, on a scratch
 * thread's data: the exported entry points' enter and exit around a little work, the loop
 * without them taken off, the minimum over rounds as calibrate.c does.  Calls that the plugin's
 * inline path records cost less, and calls whose nodes miss the cache more.
 *
 * Looks.  The spans that cost most are called from what runs, so every LOOK_S the writer thread
 * (lifecycle/writer.c) looks at the children of each thread's LOOK_FRAMES innermost open spans: the
 * calls (and, exact, ticks) a child gained since the look before counts for its site.  A walk of
 * every call tree would take milliseconds in a program of many functions (speedtest1: 1.2 ms),
 * too long to run every millisecond, and programs move through phases of a few dozen ms: a span
 * that waited for the next walk would run each new phase at full cost.
 *
 * Choosing.  Every DECIDE_LOOKS looks, among the spans a plugin option chose (whole-program
 * builds: all, functions=; never an attribute-marked span, a progress point, or a site a
 * collector watches) that do not lead (below), each is switched off whose calls cost more than
 * the budget's share of their own time (call_ns > mean × PERCENT / 100) and whose calls over
 * the window would take a hundredth of the budget: a long span is within the budget on its own,
 * and switching it off would lose it for nothing.  The mean: exact, the ticks its calls took; SPANPROF=sample, the
 * sampled time of the span's subtree since start over its calls (a subtree of more than
 * SUBTREE_LIMIT nodes: a long span); SPANPROF=count has no time, so a span goes when its calls
 * alone would take a quarter of the budget (its mean is then at most 4 / PERCENT calls' cost).
 *
 * Ticks.  Every tick (the first after FIRST_TICK_S, then MIN_TICK_S or longer, when a walk
 * takes more than WALK_SHARE of it) every thread's call tree is walked under the process lock:
 * the calls since the last tick times a call's cost, plus the runtime's threads' own time (the
 * writer thread's in looks and ticks, the sampler's), against the CPU time of the threads that
 * run spans (each read by its own clock, see thread_cpu_spent) and of the runtime's threads,
 * are the share the profile reports (last_share).  The rule of the windows bounds each span's
 * cost against its own time, not their sum: spans nested in one another, each within its
 * share, add up (a chain of ten wrappers around a 2 us call, each 16 ns, costs 8 %).  So while
 * the calls of the spans still recording cost more than nine tenths of the budget, spans go:
 * those that do not lead first, and within each group the shortest mean first (exact: over the
 * tick; SPANPROF=sample: the last window that knew it), then, without a mean (SPANPROF=count,
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect/budget.h"
#include "collect/collect.h"
#include "record/clock.h"

#define LOOK_S 0.001
#define LOOK_FRAMES 4
#define DECIDE_LOOKS 2
#define WINDOW_MIN_CPU_NS 1000000 /* a window or tick decides only after the process used this
                                    * much CPU: over a sliver of it, any call weighs too much */
#define SUBTREE_LIMIT 64
#define LEAD_SHARE 0.1     /* a span whose calls took this share of the program's time leads */
#define LEAD_MIN_SAMPLES 20 /* SPANPROF=sample: which spans lead is known after this many periods */
#define MIN_TICK_S 0.01
#define FIRST_TICK_S (2 * LOOK_S) /* it tells which spans lead; the windows wait for it */
#define MAX_TICK_S 0.5
#define WALK_SHARE 0.005
#define PROBE_ROUNDS 8
#define PROBE_PAIRS 512

struct spanprof__budget spanprof__budget;

/* Per site id. */
struct site_sums {
    struct spanprof_site *site;
    uint64_t calls, last_calls;  /* the ticks': summed over every tree, and at the tick before, */
    uint64_t ticks, last_ticks;  /* ... the same for their ticks (exact) */
    uint64_t look_calls;         /* the looks': gained in the window, */
    uint64_t look_ticks;         /* ... their ticks (exact), */
    double look_sampled_ns;      /* ... SPANPROF=sample: the subtrees' sampled time since start */
    uint64_t look_all_calls;     /*     and their calls since start, */
    int look_long;               /* ... a subtree too big to add up: a long span */
    double mean_ns;              /* last known mean: the tick's (exact), a window's (0: none) */
    double incl_ns, last_incl_ns; /* the ticks': its calls' time since start (their subtrees) */
    int leading;                  /* LEAD_SHARE of the program's time, since start or lately */
};
static struct site_sums *sums;
static struct site_sums **order; /* a tick's: the spans that may go, in the order they go */
static size_t nsums;
static uint64_t start_cpu_ns, start_own_ns; /* the process's CPU time, the writer's in the budget */
static uint64_t tick_cpu_ns, tick_mono_ns, tick_own_ns, tick_sampler_ns, window_cpu_ns;
static double next_tick, next_look, tick_s;
static uint32_t looks;
static size_t muting; /* sites MUTED, waiting to go OFF (budgetoff.c) */
static double ns_per_tick; /* the clock's, read once a window or tick (each read takes two) */
static int leads_known; /* a tick has told which spans lead: windows and ticks may choose */

/* CLOCK's time in ns: the process's CPU time, or the writer thread's own. */
static uint64_t clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double mono_s(void)
{
    return (double)spanprof__mono_ns() / 1e9;
}

static double since_start_s(void)
{
    return (double)(spanprof__mono_ns() - spanprof__g.start_mono_ns) / 1e9;
}

/* ---- the cost of one call ------------------------------------------------------------------ */

/* PROBE_SITES private sites called in turn: each enter then misses the parent's one-entry hint
 * and finds its node in the child cache, as a call does in a program whose functions call many
 * others (a loop over one site, always hitting the hint, measured a third of what speedtest1's
 * calls cost in counting mode). */
#define PROBE_SITES 16
static struct spanprof_site probe_sites[PROBE_SITES];
static volatile uint64_t probe_sink;

/* PROBE_PAIRS enter/exit pairs through the exported entry points (none, WITH 0) around a little
 * dependent work; ns. */
static __attribute__((noinline)) uint64_t probe_loop(int with)
{
    char frame[1];
    uint64_t t0 = spanprof__mono_ns(), x = probe_sink;
    for (int i = 0; i < PROBE_PAIRS; i++) {
        struct spanprof_site *site = &probe_sites[i % PROBE_SITES];
        if (with)
            __spanprof_enter(site, frame);
        x = x * 3 + 1;
        __asm__ volatile("" : "+r"(x));
        if (with)
            __spanprof_exit(site, frame);
    }
    probe_sink = x;
    return spanprof__mono_ns() - t0;
}

static double measure_call_ns(void)
{
    struct spanprof__thread *own = spanprof__tls, *scratch = spanprof__thread_new();
    if (!scratch)
        return 0;
    uintptr_t busy = spanprof__tls_busy;
    spanprof__tls_busy = 0;
    spanprof__tls = scratch;
    for (int i = 0; i < PROBE_SITES; i++) {
        probe_sites[i] = (struct spanprof_site){.version = SPANPROF_SITE_VERSION,
                                                .kind = SPANPROF_KIND_SPAN,
                                                .name = "(budget probe)", .file = ""};
        __atomic_store_n(&probe_sites[i].state,
                         spanprof__flags.counting ? SPANPROF__SITE_COUNT : SPANPROF__SITE_FAST,
                         __ATOMIC_RELEASE);
    }
    probe_loop(1); /* the nodes made, out of the measurement */
    uint64_t with = UINT64_MAX, without = UINT64_MAX;
    for (int r = 0; r < PROBE_ROUNDS; r++) {
        uint64_t a = probe_loop(1), b = probe_loop(0);
        with = a < with ? a : with;
        without = b < without ? b : without;
    }
    spanprof__tls = own;
    spanprof__tls_busy = busy;
    spanprof__thread_discard(scratch);
    return with > without ? (double)(with - without) / PROBE_PAIRS : 0;
}

/* Room in sums for every site id given out so far; 0 when out of memory. */
static int sums_fit(void)
{
    size_t want = spanprof__g.next_site_id + 64;
    if (want <= nsums)
        return 1;
    struct site_sums *n = realloc(sums, want * sizeof *n);
    if (n)
        sums = n;
    struct site_sums **o = n ? realloc(order, want * sizeof *o) : NULL;
    if (!o)
        return 0;
    order = o;
    memset(n + nsums, 0, (want - nsums) * sizeof *n);
    nsums = want;
    return 1;
}

/* Whether spans have a time: exact or SPANPROF=sample, not SPANPROF=count. */
static int timed(void)
{
    return !spanprof__flags.counting || spanprof__collect.sample_hz;
}

static int may_switch_off(const struct spanprof_site *s)
{
    uint32_t st = __atomic_load_n(&s->state, __ATOMIC_RELAXED);
    return s->kind == SPANPROF_KIND_SPAN_BY_OPTION && spanprof__budget_may_track(s) &&
           (st == SPANPROF__SITE_FAST || st == SPANPROF__SITE_TIMED || st == SPANPROF__SITE_COUNT);
}

static void mute(struct site_sums *x, double mean_ns)
{
    spanprof__budget_mute(x->site, since_start_s(), mean_ns);
    muting++;
}

/* ---- looks ------------------------------------------------------------------------------------ */

/* Behind each node: what the looks saw of it last. */
struct budget_node {
    uint64_t calls, total;
    uint32_t look; /* the look that saw it (0: none) */
};
static size_t ext_offset;

static struct budget_node *budget_of(const struct spanprof__node *n)
{
    return (struct budget_node *)((char *)(n + 1) + ext_offset);
}

/* A retired thread's node merged into its group's: the group's node is seen anew. */
static void merge_nothing(void *dst, const void *src)
{
    (void)dst, (void)src;
}

void spanprof__budget_layout(void)
{
    ext_offset = spanprof__node_ext_add(sizeof(struct budget_node), merge_nothing);
    spanprof__flags.frames_shared = 1; /* the looks and scans read other threads' stacks */
}

/* SPANPROF=sample: the sampled wall time charged to N itself. */
static double sampled_self(const struct spanprof__node *n)
{
    const struct spanprof__sample_node *sn = spanprof__sample_of(n);
    return (double)(__atomic_load_n(&sn->wall_timely_ns, __ATOMIC_RELAXED) +
                    __atomic_load_n(&sn->wall_late_ns, __ATOMIC_RELAXED) +
                    __atomic_load_n(&sn->wall_still_ns, __ATOMIC_RELAXED));
}

/* SPANPROF=sample: the sampled wall time of N's subtree, -1 past *NODES nodes. */
static double subtree_sampled(const struct spanprof__node *n, int *nodes)
{
    if (--*nodes < 0)
        return -1;
    double ns = sampled_self(n);
    for (const struct spanprof__node *c = __atomic_load_n(&n->first_child, __ATOMIC_ACQUIRE); c;
         c = c->next_sibling) {
        double below = subtree_sampled(c, nodes);
        if (below < 0)
            return -1;
        ns += below;
    }
    return ns;
}

static void look_children(const struct spanprof__node *n)
{
    for (struct spanprof__node *c = __atomic_load_n(&n->first_child, __ATOMIC_ACQUIRE); c;
         c = c->next_sibling) {
        const struct spanprof_site *s = c->site;
        struct budget_node *b = budget_of(c);
        uint64_t calls = __atomic_load_n(&c->calls, __ATOMIC_RELAXED);
        uint64_t total = __atomic_load_n(&c->total, __ATOMIC_RELAXED);
        /* Only what it gained since a look in this window or the one before counts. */
        if (s && s->id < nsums && b->look && looks - b->look <= DECIDE_LOOKS && calls > b->calls) {
            struct site_sums *x = &sums[s->id];
            x->site = (struct spanprof_site *)s;
            x->look_calls += calls - b->calls;
            x->look_ticks += total - b->total;
            if (spanprof__collect.sample_hz) {
                int nodes = SUBTREE_LIMIT;
                double ns = subtree_sampled(c, &nodes);
                x->look_long |= ns < 0;
                x->look_sampled_ns += ns > 0 ? ns : 0;
                x->look_all_calls += calls;
            }
        }
        b->calls = calls;
        b->total = total;
        b->look = looks;
    }
}

/* Under the process lock (a retired thread's nodes are rewound under it). */
static void look(void)
{
    looks++;
    for (struct spanprof__thread *t = spanprof__g.threads; t; t = t->next) {
        if (t->exited)
            continue;
        const struct spanprof__frame *top = __atomic_load_n(&t->top, __ATOMIC_ACQUIRE);
        const struct spanprof__frame *frames = __atomic_load_n(&t->frames, __ATOMIC_ACQUIRE);
        if (!frames || top < frames ||
            top >= frames + __atomic_load_n(&t->capacity, __ATOMIC_RELAXED))
            continue; /* the stack moved meanwhile: next time */
        for (int k = 0; k < LOOK_FRAMES; k++, top--) {
            const struct spanprof__node *n = __atomic_load_n(&top->node, __ATOMIC_RELAXED);
            if (n)
                look_children(n);
            if (top == frames)
                break;
        }
    }
}

/* The mean ns of X's calls seen in the window (-1: not known, or a long span). */
static double window_mean_ns(const struct site_sums *x)
{
    if (spanprof__collect.sample_hz)
        return x->look_long || !x->look_all_calls ? -1
                                                   : x->look_sampled_ns / (double)x->look_all_calls;
    if (spanprof__flags.counting || !x->look_ticks)
        return -1;
    return (double)x->look_ticks * ns_per_tick / (double)x->look_calls;
}

static void choose_window(void)
{
    const struct spanprof__budget *b = &spanprof__budget;
    uint64_t cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    if (cpu - window_cpu_ns < WINDOW_MIN_CPU_NS || (!leads_known && !spanprof__collect.sample_hz))
        return; /* the program hardly ran (a busy machine), or the first tick, which tells which
                 * spans lead, has not come yet (SPANPROF=sample knows that only after
                 * LEAD_MIN_SAMPLES periods, too long to wait: its windows take every span as not
                 * leading until then): the window goes on */
    double limit = b->percent / 100 * (double)(cpu - window_cpu_ns);
    window_cpu_ns = cpu;
    ns_per_tick = spanprof__clock_ns_per_tick();
    for (size_t i = 0; i < nsums; i++) {
        struct site_sums *x = &sums[i];
        uint64_t calls = x->look_calls;
        double mean = window_mean_ns(x);
        x->look_calls = x->look_ticks = x->look_all_calls = 0;
        x->look_sampled_ns = 0;
        x->look_long = 0;
        if (calls && mean > 0)
            x->mean_ns = mean;
        if (!calls || !x->site || x->leading || !may_switch_off(x->site) || b->percent >= 100)
            continue;
        double cost = (double)calls * b->call_ns;
        if (timed() ? mean >= 0 && cost >= limit / 100 && b->call_ns > mean * b->percent / 100
                  : cost >= limit / 4)
            mute(x, mean > 0 ? mean : 0);
    }
}

/* ---- ticks ------------------------------------------------------------------------------------ */

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
        return 0; /* gone */
    uint64_t spent = !t->budget_cpu_ns       ? (now < wall ? now : wall)
                     : now > t->budget_cpu_ns ? now - t->budget_cpu_ns
                                              : 0; /* a fork child's clock started again */
    t->budget_cpu_ns = now;
    return spent;
}

static int add_calls(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)ctx;
    struct spanprof_site *s = (struct spanprof_site *)n->site;
    if (s && s->id < nsums) {
        sums[s->id].site = s;
        sums[s->id].calls += __atomic_load_n(&n->calls, __ATOMIC_RELAXED);
        sums[s->id].ticks += __atomic_load_n(&n->total, __ATOMIC_RELAXED);
    }
    if (!timed())
        return 1; /* no subtree times to gather */
    if (!below_fit(depth + 2))
        return 0; /* no memory: its subtree is itself */
    below[depth + 1] = (struct subtree){0, 0};
    return 1;
}

static void add_subtree(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)ctx;
    struct subtree sub = depth + 1 < below_cap ? below[depth + 1] : (struct subtree){0, 0};
    sub.calls += __atomic_load_n(&n->calls, __ATOMIC_RELAXED);
    sub.ns = spanprof__collect.sample_hz
                 ? sub.ns + sampled_self(n)
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
static int goes_before(const struct site_sums *x, const struct site_sums *y)
{
    if (x->leading != y->leading)
        return !x->leading;
    if (x->mean_ns > 0 || y->mean_ns > 0)
        return x->mean_ns > 0 && (!(y->mean_ns > 0) || x->mean_ns < y->mean_ns);
    return x->calls - x->last_calls > y->calls - y->last_calls;
}

static int by_going_order(const void *a, const void *b)
{
    const struct site_sums *x = *(const struct site_sums *const *)a;
    const struct site_sums *y = *(const struct site_sums *const *)b;
    return goes_before(x, y) ? -1 : goes_before(y, x) ? 1 : 0;
}

static void tick(void)
{
    struct spanprof__budget *b = &spanprof__budget;
    uint64_t cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    if (cpu - tick_cpu_ns < WINDOW_MIN_CPU_NS)
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
    uint64_t threads_ns = 0;
    for (struct spanprof__thread *t = spanprof__g.threads; t; t = t->next) {
        threads_ns += thread_cpu_spent(t, wall);
        spanprof__tree_walk(&t->root, add_calls, timed() ? add_subtree : NULL, NULL);
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
    leads_known |= !spanprof__collect.sample_hz ||
                   since_start_s() * spanprof__collect.sample_hz >= LEAD_MIN_SAMPLES;
    for (size_t i = 0; i < nsums; i++) {
        struct site_sums *x = &sums[i];
        x->leading = leads_known && x->incl_ns > 0 &&
                     (x->incl_ns >= lead_ns || x->incl_ns - x->last_incl_ns >= lead_lately_ns);
        x->last_incl_ns = x->incl_ns;
    }
    /* Exact: the mean over this tick, known for every span called in it. */
    if (!spanprof__flags.counting)
        for (size_t i = 0; i < nsums; i++)
            if (sums[i].calls > sums[i].last_calls && sums[i].ticks > sums[i].last_ticks)
                sums[i].mean_ns = (double)(sums[i].ticks - sums[i].last_ticks) *
                                  ns_per_tick /
                                  (double)(sums[i].calls - sums[i].last_calls);
    double limit = b->percent / 100 * (double)spent;
    b->last_share = spent ? (cost + own) / (double)spent : 0;
    /* While the calls are over (the threads' time stays whatever goes; a budget they use up is
     * not met, and the share says so), the spans called in the tick go in order. */
    size_t n = 0;
    /* Not at the first tick, FIRST_TICK_S after start: it weighs start-up at full cost, before
     * the windows acted (when it did, speedtest1 lost spans of 10 us mean there). */
    if (b->percent < 100 && going_on > 0.9 * limit && leads_known &&
        since_start_s() >= MIN_TICK_S) {
        for (size_t i = 0; i < nsums; i++) {
            struct site_sums *x = &sums[i];
            if (x->site && (double)(x->calls - x->last_calls) * b->call_ns >= limit / 100 &&
                may_switch_off(x->site))
                order[n++] = x;
        }
        qsort(order, n, sizeof *order, by_going_order);
    }
    for (size_t k = 0; k < n && going_on > 0.9 * limit; k++) {
        going_on -= (double)(order[k]->calls - order[k]->last_calls) * b->call_ns;
        mute(order[k], order[k]->mean_ns);
    }
    for (size_t i = 0; i < nsums; i++) {
        sums[i].last_calls = sums[i].calls;
        sums[i].last_ticks = sums[i].ticks;
    }
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
    b->call_ns = measure_call_ns();
    if (!(b->call_ns > 0)) {
        fprintf(stderr, "spanprof: warning: SPANPROF_BUDGET: the cost of a span call could not "
                        "be measured; no budget\n");
        return;
    }
    b->percent = percent;
    start_cpu_ns = tick_cpu_ns = window_cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    start_own_ns = tick_own_ns = b->cpu_ns;
    tick_mono_ns = spanprof__mono_ns();
    tick_s = MIN_TICK_S;
    next_tick = mono_s() + FIRST_TICK_S;
    next_look = mono_s() + LOOK_S;
}

double spanprof__budget_serve(void)
{
    struct spanprof__budget *b = &spanprof__budget;
    if (!(b->percent > 0))
        return -1;
    uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    double now = mono_s();
    if (now >= next_look && sums_fit()) {
        spanprof__lock();
        look();
        if (looks % DECIDE_LOOKS == 0)
            choose_window();
        if (muting)
            muting = spanprof__budget_settle(since_start_s());
        spanprof__unlock();
        next_look = now + LOOK_S;
    }
    if (now >= next_tick && sums_fit()) {
        tick();
        /* As often as a walk of the trees allows: at most WALK_SHARE of one CPU; every
         * MIN_TICK_S until a tick may choose (a first walk, of small trees, would put the
         * next one far off). */
        double walked = mono_s() - now;
        b->ticks++;
        b->tick_ns += (uint64_t)(walked * 1e9);
        tick_s = since_start_s() < MIN_TICK_S || !leads_known ? 0 : walked / WALK_SHARE;
        tick_s = tick_s < MIN_TICK_S ? MIN_TICK_S : tick_s > MAX_TICK_S ? MAX_TICK_S : tick_s;
        next_tick = now + tick_s;
    }
    b->looks = looks;
    b->cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    double next = next_look < next_tick ? next_look : next_tick;
    return next > now ? next - now : 0;
}

void spanprof__budget_fork_child(void)
{
    if (!(spanprof__budget.percent > 0))
        return;
    start_cpu_ns = tick_cpu_ns = window_cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    start_own_ns = tick_own_ns = spanprof__budget.cpu_ns;
    tick_mono_ns = spanprof__mono_ns();
    for (size_t i = 0; i < nsums; i++) {
        sums[i].last_calls = sums[i].last_ticks = 0;
        sums[i].last_incl_ns = 0;
    }
    leads_known = 0; /* the child's trees start empty */
}
