/* budgetoff.c — switching a span off while the program runs (SPANPROF_BUDGET; budget.c decides
 * which): without losing an exit, and with a record the profile shows.
 *
 * The plugin skips a site's calls once its state is OFF, on the enter and on the exit side
 * (spanprof.h), so an activation entered before would lose its exit and leave its frame on the
 * shadow stack.  A site therefore goes MUTED first: its calls still come, out of line (span.c),
 * an enter records nothing, an exit pops the frame on top only if it is that site's activation.
 * From then on frames of the site only go away.  It goes OFF, and costs what recording off costs
 * (the off copy of its body runs), once
 *  - CLEAN_SCANS scans of every thread's shadow stack in a row, one a look, found none, and
 *  - every thread that existed when it was muted is past its enter: a thread may have read the
 *    state just before it went MUTED and been preempted before pushing the frame.  It is past
 *    once it has run PAST_CPU_NS on a CPU since (its thread CPU clock; the few instructions
 *    between the read and the push are behind it) or was seen asleep in a system call (there is
 *    none between the two).  Threads created since read MUTED.  Sites muted together share
 *    one epoch; a later batch starts a new one, which the earlier sites wait for too.
 *
 * The record: per site id, the entry in spanprof__budget.off (when, the mean call before, when
 * it went OFF), which the writers read without a lock (a release store publishes each).
 */
#define _GNU_SOURCE
#include <string.h>
#include <time.h>

#include "collect/budget.h"
#include "collect/collect.h"
#include "record/clock.h"

#define CLEAN_SCANS 2
#define PAST_CPU_NS 20000
#define EPOCH_THREADS 1024
#define SITE_IDS (1u << 18)

/* Per site id: the index + 1 of its entry in spanprof__budget.off (0: never switched off); mapped
 * at start, pages touched only for the ids used. */
static uint32_t *off_by_id;
static int clean_scans[SPANPROF__BUDGET_OFF_MAX]; /* per entry of off, while MUTED */
static int epoch_pending;                        /* sites muted since the last epoch began */

static struct {
    const struct spanprof__thread *t;
    pid_t tid;
    uint64_t cpu_ns;
    int past;
} epoch[EPOCH_THREADS];
static size_t nepoch;

int spanprof__budget_off_setup(void)
{
    off_by_id = spanprof__map(SITE_IDS * sizeof *off_by_id);
    return off_by_id ? 0 : -1;
}

int spanprof__budget_may_track(const struct spanprof_site *site)
{
    return off_by_id && site->id < SITE_IDS &&
           __atomic_load_n(&spanprof__budget.noff, __ATOMIC_RELAXED) < SPANPROF__BUDGET_OFF_MAX;
}

const struct spanprof__budget_off *spanprof__budget_off_of(const struct spanprof_site *site)
{
    if (!off_by_id || site->id >= SITE_IDS)
        return NULL;
    uint32_t i = __atomic_load_n(&off_by_id[site->id], __ATOMIC_ACQUIRE);
    return i ? &spanprof__budget.off[i - 1] : NULL;
}

void spanprof__budget_mute(struct spanprof_site *site, double at_s, double mean_ns)
{
    struct spanprof__budget *b = &spanprof__budget;
    if (!spanprof__budget_may_track(site))
        return;
    size_t i = b->noff;
    b->off[i] = (struct spanprof__budget_off){site, at_s, mean_ns, 0};
    clean_scans[i] = 0;
    __atomic_store_n(&off_by_id[site->id], (uint32_t)i + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&b->noff, i + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&site->state, SPANPROF__SITE_MUTED, __ATOMIC_RELEASE);
    epoch_pending = 1;
}

/* ---- every thread past its enter ------------------------------------------------------------ */

/* Whether thread TID is asleep in a system call, or gone. */
static int asleep(pid_t tid)
{
    char buf[512];
    const char *state = spanprof__task_stat(tid, buf, sizeof buf);
    return !state || *state == 'S';
}

static void epoch_begin(void)
{
    nepoch = 0;
    for (struct spanprof__thread *t = spanprof__g.threads; t && nepoch < EPOCH_THREADS; t = t->next)
        if (!t->exited && t->tid > 0)
            epoch[nepoch++] = (typeof(epoch[0])){t, t->tid, spanprof__thread_cpu_ns(t->tid), 0};
    epoch_pending = 0;
}

static int epoch_passed(void)
{
    int all = 1;
    for (size_t i = 0; i < nepoch; i++) {
        if (epoch[i].past)
            continue;
        const struct spanprof__thread *t = epoch[i].t;
        uint64_t cpu = spanprof__thread_cpu_ns(epoch[i].tid);
        epoch[i].past = t->tid != epoch[i].tid || t->exited || cpu == UINT64_MAX ||
                        cpu - epoch[i].cpu_ns >= PAST_CPU_NS || asleep(epoch[i].tid);
        all &= epoch[i].past;
    }
    return all;
}

/* ---- the scans -------------------------------------------------------------------------------- */

/* Whether a frame of SITE is on thread T's shadow stack now, read as it is: the owner pushes and
 * pops meanwhile (under MUTED it only pops frames of SITE), and an array that moved (stack.c's
 * grow, kept mapped with frames_shared) counts as "maybe": next time. */
static int on_stack(const struct spanprof__thread *t, const struct spanprof_site *site)
{
    const struct spanprof__frame *top = __atomic_load_n(&t->top, __ATOMIC_ACQUIRE);
    const struct spanprof__frame *frames = __atomic_load_n(&t->frames, __ATOMIC_ACQUIRE);
    if (!frames || top < frames || top >= frames + __atomic_load_n(&t->capacity, __ATOMIC_RELAXED))
        return 1;
    for (const struct spanprof__frame *f = top; f > frames; f--) {
        const struct spanprof__node *n = __atomic_load_n(&f->node, __ATOMIC_RELAXED);
        if (n && n->site == site)
            return 1;
    }
    return 0;
}

size_t spanprof__budget_settle(double now_s)
{
    struct spanprof__budget *b = &spanprof__budget;
    if (epoch_pending)
        epoch_begin();
    size_t n = __atomic_load_n(&b->noff, __ATOMIC_ACQUIRE), muting = 0;
    int passed = -1; /* not asked yet: the threads' clocks are read only when a site is ready */
    for (size_t i = 0; i < n; i++) {
        struct spanprof__budget_off *off = &b->off[i];
        if (off->off_s > 0)
            continue;
        int seen = 0;
        for (struct spanprof__thread *t = spanprof__g.threads; t && !seen; t = t->next)
            seen = !t->exited && on_stack(t, off->site);
        clean_scans[i] = seen ? 0 : clean_scans[i] + 1;
        if (clean_scans[i] >= CLEAN_SCANS && passed < 0)
            passed = epoch_passed();
        if (clean_scans[i] < CLEAN_SCANS || !passed) {
            muting++;
            continue;
        }
        __atomic_store_n(&((struct spanprof_site *)off->site)->state, SPANPROF__SITE_OFF,
                         __ATOMIC_RELEASE);
        off->off_s = now_s;
    }
    return muting;
}
