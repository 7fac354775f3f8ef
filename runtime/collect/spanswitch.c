/* spanswitch.c — spans switched off and on while the program runs: by a cost budget (off only:
 * budget.c decides which, budgetoff.c keeps its record) or by request (`spanprof spans PID on|off
 * GLOB`, through the live socket: live/protocol.h).
 *
 * Off.  The plugin skips a site's calls once its state is OFF, on the enter and on the exit side
 * (spanprof.h), so an activation entered before would lose its exit and leave its frame on the
 * shadow stack.  A site therefore goes MUTED first: its calls still come, out of line (span.c),
 * an enter records nothing, an exit pops the frame on top only if it is that site's activation.
 * From then on frames of the site only go away.  It goes OFF, and its patch points become
 * no-ops (record/sitepatch.c), once no thread can have a frame of it:
 *  - first every thread listed when it was muted must be past its enter: a thread may have read
 *    the state just before it went MUTED and been preempted before pushing the frame.  It is
 *    past once it has run PAST_CPU_NS on a CPU since (its thread CPU clock; the few
 *    instructions between the read and the push are behind it) or was seen asleep in a system
 *    call (there is none between the two).  The cold path, which can take longer (attaching a
 *    thread at its first span, before it is listed; growing its frame array), reads the state
 *    again right before it pushes (record/stack.c), and sees MUTED.
 *    Sites muted together share one epoch; a later batch starts a new one, which the earlier
 *    sites wait for too (what they saw of the threads before counts no more);
 *  - then each of those threads must be seen once without a frame of it on its shadow stack:
 *    none can come back.  Threads at a time, not all in one scan: four threads calling a span
 *    all the time are seldom all outside it at once, but each is, often.  (Threads past the
 *    epoch's first EPOCH_THREADS are asked all in one scan.)
 *
 * On.  Only from OFF (a span still MUTED is waited for first): record/siteswitch.c arms it, its
 * points get their jumps back, then it records.
 *
 * The record: every switch made by request, in a log the JSON profile shows per span ("switches");
 * a budget's switches are in its own record.  The muting and the log are changed under the
 * process lock, by the writer thread (the budget) or the live thread (requests); patching and the
 * walks over the loaded objects happen outside it.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect/collect.h"
#include "collect/spanswitch.h"
#include "common/namematch.h"
#include "record/clock.h"
#include "record/sitepatch.h"

#define PAST_CPU_NS 20000
#define EPOCH_THREADS 1024
#define MUTING_MAX 4096
#define WAIT_MS 1000 /* what a request waits for calls in progress */
#define LOG_MAX 65536
#define SERVE_MS 20 /* how often the live thread settles sites a request left MUTED */

/* ---- muted, waiting to go OFF --------------------------------------------------------------- */

static struct {
    struct spanprof_site *site;
    uint8_t clean[EPOCH_THREADS / 8]; /* by epoch thread: seen without a frame of it */
} muting[MUTING_MAX];
static size_t nmuting;
static int epoch_pending; /* sites muted since the last epoch began */

static struct {
    const struct spanprof__thread *t;
    pid_t tid;
    uint64_t cpu_ns;
    int past;
} epoch[EPOCH_THREADS];
static size_t nepoch;

int spanprof__switch_mute(struct spanprof_site *site)
{
    if (nmuting == MUTING_MAX)
        return -1;
    muting[nmuting].site = site; /* clean: cleared when its epoch begins */
    SPANPROF_PUBLISH(nmuting, nmuting + 1); /* read unlocked as a hint (spanprof__switch_serve) */
    __atomic_store_n(&site->state, SPANPROF__SITE_MUTED, __ATOMIC_RELEASE);
    epoch_pending = 1;
    return 0;
}

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

/* Whether a frame of SITE is on thread T's shadow stack now, read as it is: the owner pushes and
 * pops meanwhile (under MUTED it only pops frames of SITE), and an array that moved (stack.c's
 * grow, kept mapped with frames_shared) counts as "maybe": next time.  The frames are published
 * by the hot path with plain stores (as the sampler reads them: collect/sample_data.c): a slot
 * being written now may read as its old frame, but no frame of SITE is being written once the
 * epoch passed (only frames pushed well before), so such a read can only take another span's
 * new frame for an old one of SITE: "held", next time.  Hence not seen by ThreadSanitizer. */
__attribute__((no_sanitize_thread)) static int on_stack(const struct spanprof__thread *t,
                                                       const struct spanprof_site *site)
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

/* Whether thread T, not one of the epoch's, holds a frame of SITE. */
static int other_holds(const struct spanprof__thread *t, const struct spanprof_site *site)
{
    for (size_t j = 0; j < nepoch; j++)
        if (epoch[j].t == t && epoch[j].tid == t->tid)
            return 0; /* an epoch thread: asked by the caller */
    return !t->exited && on_stack(t, site);
}

/* Whether a thread may still hold a frame of the muting entry M. */
static int still_held(typeof(muting[0]) *m)
{
    int held = 0;
    for (size_t j = 0; j < nepoch; j++) {
        if (m->clean[j / 8] & (1u << (j % 8)))
            continue;
        const struct spanprof__thread *t = epoch[j].t;
        if (t->tid != epoch[j].tid || t->exited || !on_stack(t, m->site))
            m->clean[j / 8] |= (uint8_t)(1u << (j % 8));
        else
            held = 1;
    }
    if (!held && nepoch == EPOCH_THREADS)
        for (const struct spanprof__thread *t = spanprof__g.threads; t && !held; t = t->next)
            held = other_holds(t, m->site);
    return held;
}

size_t spanprof__switch_settle(void)
{
    if (epoch_pending) {
        epoch_begin();
        for (size_t i = 0; i < nmuting; i++)
            memset(muting[i].clean, 0, sizeof muting[i].clean);
    }
    if (!nmuting || !epoch_passed())
        return nmuting;
    size_t kept = 0;
    for (size_t i = 0; i < nmuting; i++) {
        if (__atomic_load_n(&muting[i].site->state, __ATOMIC_ACQUIRE) != SPANPROF__SITE_MUTED)
            continue; /* not ours to settle (nothing else changes a MUTED state: a safeguard) */
        if (still_held(&muting[i]))
            muting[kept++] = muting[i];
        else
            __atomic_store_n(&muting[i].site->state, SPANPROF__SITE_OFF, __ATOMIC_RELEASE);
    }
    SPANPROF_PUBLISH(nmuting, kept);
    return kept;
}

/* ---- the record of switches by request ------------------------------------------------------- */

/* Per site id: the index + 1 of its latest switch in the log (0: none); mapped at the first. */
static uint32_t *latest_by_id;
static struct spanprof__switch_event switch_log[LOG_MAX];
static size_t nlog;
static uint64_t unlogged;

static void log_switch(const struct spanprof_site *site, int on)
{
    if (!latest_by_id)
        latest_by_id = spanprof__map(SPANPROF_SITE_IDS * sizeof *latest_by_id);
    if (!latest_by_id || nlog == LOG_MAX || !site->id || site->id >= SPANPROF_SITE_IDS) {
        __atomic_add_fetch(&unlogged, 1, __ATOMIC_RELAXED);
        return;
    }
    struct spanprof__switch_event *e = &switch_log[nlog];
    e->at_s = (double)(spanprof__mono_ns() - spanprof__g.start_mono_ns) / 1e9;
    e->on = on;
    e->before = latest_by_id[site->id];
    __atomic_store_n(&latest_by_id[site->id], (uint32_t)++nlog, __ATOMIC_RELEASE);
}

const struct spanprof__switch_event *spanprof__switch_latest(const struct spanprof_site *site)
{
    const uint32_t *table = __atomic_load_n(&latest_by_id, __ATOMIC_ACQUIRE);
    uint32_t i = table && site->id && site->id < SPANPROF_SITE_IDS
                     ? __atomic_load_n(&table[site->id], __ATOMIC_ACQUIRE)
                     : 0;
    return i ? &switch_log[i - 1] : NULL;
}

const struct spanprof__switch_event *spanprof__switch_before(const struct spanprof__switch_event *e)
{
    return e->before ? &switch_log[e->before - 1] : NULL;
}

uint64_t spanprof__switch_unlogged(void)
{
    return __atomic_load_n(&unlogged, __ATOMIC_RELAXED);
}

/* ---- requests --------------------------------------------------------------------------------- */

/* Spans (sites of kind span), each once, sorted by name, file and line. */
struct site_set {
    struct spanprof_site **s;
    size_t n, cap;
    int failed;
};

static int add_site(struct spanprof_site *site, void *ctx)
{
    struct site_set *set = ctx;
    if (site->kind == SPANPROF_KIND_PROGRESS || set->failed)
        return 0;
    if (set->n && set->s[set->n - 1] == site) /* a site's points mostly come one after another */
        return 0;
    if (set->n == set->cap) {
        size_t cap = set->cap ? 2 * set->cap : 256;
        struct spanprof_site **s = realloc(set->s, cap * sizeof *s);
        if (!s) {
            set->failed = 1;
            return 0;
        }
        set->s = s;
        set->cap = cap;
    }
    set->s[set->n++] = site;
    return 0;
}

static int by_pointer(const void *a, const void *b)
{
    const struct spanprof_site *x = *(struct spanprof_site *const *)a;
    const struct spanprof_site *y = *(struct spanprof_site *const *)b;
    return (x > y) - (x < y);
}

static int by_name(const void *a, const void *b)
{
    int c = spanprof__site_compare(*(struct spanprof_site *const *)a,
                                   *(struct spanprof_site *const *)b);
    return c ? c : by_pointer(a, b);
}

/* The spans that GLOBS names (every one for NULL): those with patch points in the objects loaded
 * now, and those the runtime has seen (the registry: objects built without points too). */
static int spans_named(const char *globs, struct site_set *set)
{
    *set = (struct site_set){0};
    spanprof__sitepatch_visit(add_site, set);
    spanprof__lock();
    size_t n;
    struct spanprof_site *const *registry = spanprof__site_registry(&n);
    for (size_t id = 1; id < n; id++)
        if (registry[id])
            add_site(registry[id], set);
    spanprof__unlock();
    if (set->failed)
        return -1;
    qsort(set->s, set->n, sizeof *set->s, by_pointer);
    size_t kept = 0;
    for (size_t i = 0; i < set->n; i++)
        if ((!kept || set->s[kept - 1] != set->s[i]) &&
            (!globs || spanprof__name_matches(globs, set->s[i]->name)))
            set->s[kept++] = set->s[i];
    set->n = kept;
    qsort(set->s, set->n, sizeof *set->s, by_name);
    return 0;
}

static int in_set(struct spanprof_site *site, void *ctx)
{
    const struct site_set *set = ctx;
    for (size_t i = 0; i < set->n; i++)
        if (set->s[i] == site)
            return 1;
    return 0;
}

static int off_in_set(struct spanprof_site *site, void *ctx)
{
    return __atomic_load_n(&site->state, __ATOMIC_ACQUIRE) == SPANPROF__SITE_OFF &&
           in_set(site, ctx);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {0, (long)ms * 1000000};
    nanosleep(&ts, NULL);
}

/* Settles muted sites until none of SET is MUTED, for at most WAIT_MS by the clock (on a busy
 * machine each 2 ms nap lasts a scheduling round, so a count of naps would wait many times
 * longer); then, with PATCH, patches the points of SET's spans that are OFF. */
static void settle_set(struct site_set *set, int patch)
{
    uint64_t until = spanprof__mono_ns() + (uint64_t)WAIT_MS * 1000000;
    for (;;) {
        spanprof__lock();
        if (nmuting)
            spanprof__switch_settle();
        int left = 0;
        for (size_t i = 0; i < set->n; i++)
            left |= __atomic_load_n(&set->s[i]->state, __ATOMIC_ACQUIRE) == SPANPROF__SITE_MUTED;
        spanprof__unlock();
        if (!left || spanprof__mono_ns() >= until)
            break;
        sleep_ms(2);
    }
    if (patch)
        spanprof__sitepatch_off(off_in_set, set);
}

int spanprof__switch_patchable(struct spanprof_site *site, void *ctx)
{
    (void)ctx;
    const struct spanprof__switch_event *e = spanprof__switch_latest(site);
    return e && !e->on && __atomic_load_n(&site->state, __ATOMIC_ACQUIRE) == SPANPROF__SITE_OFF;
}

long spanprof__switch_serve(void)
{
    if (!__atomic_load_n(&nmuting, __ATOMIC_RELAXED)) /* a hint: settled under the lock */
        return -1;
    spanprof__lock();
    size_t before = nmuting, left = before ? spanprof__switch_settle() : 0;
    spanprof__unlock();
    if (left < before)
        spanprof__sitepatch_off(spanprof__switch_patchable, NULL);
    return left ? SERVE_MS : -1;
}

static const char *state_word(const struct spanprof_site *site)
{
    uint32_t st = __atomic_load_n(&site->state, __ATOMIC_ACQUIRE);
    return st == SPANPROF__SITE_OFF                                ? "off"
           : st == SPANPROF__SITE_MUTED                            ? "stopping"
           : st != SPANPROF__SITE_NEW || spanprof__span_chosen(site) ? "on"
                                                                   : "off";
}

/* The answer listing SET, in *OUT (malloc'd), or -1 without memory. */
static int listing(const struct site_set *set, char **out, size_t *len)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f)
        return -1;
    fputs(SPANPROF_LIVE_SITES_MAGIC, f);
    for (size_t i = 0; i < set->n; i++) {
        const struct spanprof_site *s = set->s[i];
        fprintf(f, "%s\t%s\t%s\t%u\n", state_word(s), s->name ? s->name : "",
                s->file ? s->file : "", s->first_line);
    }
    fputs("end\n", f);
    if (fclose(f)) {
        free(buf);
        return -1;
    }
    *out = buf;
    *len = size;
    return 0;
}

/* Held by a request from start to end, and by dlclose while objects go: a request's sites stay
 * mapped.  A fork child's is free (the thread that may have held it is not copied). */
static pthread_mutex_t requests = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t requests_once = PTHREAD_ONCE_INIT;

static void requests_fork_child(void)
{
    pthread_mutex_init(&requests, NULL);
}

static void requests_init(void)
{
    pthread_atfork(NULL, NULL, requests_fork_child);
}

void spanprof__switch_hold(void)
{
    pthread_once(&requests_once, requests_init);
    pthread_mutex_lock(&requests);
}

int spanprof__switch_try_hold(void)
{
    pthread_once(&requests_once, requests_init);
    return pthread_mutex_trylock(&requests);
}

void spanprof__switch_release(void)
{
    pthread_mutex_unlock(&requests);
}

int spanprof__switch_list(char **answer, size_t *len)
{
    struct site_set set;
    spanprof__switch_hold();
    int rc = spans_named(NULL, &set) ? -1 : listing(&set, answer, len);
    spanprof__switch_release();
    free(set.s);
    return rc;
}

/* ON: SET's spans that are OFF are armed, get their jumps back and record.  NEW ones record at
 * their first call unless SPANPROF_SPANS leaves them out: those are made OFF first.  Returns -1
 * where patching is refused (the spans whose points stay no-ops stay OFF), -2 without memory. */
static int switch_on(struct site_set *set)
{
    settle_set(set, 0); /* those still stopping, if they can */
    /* Only the spans armed here go on: one still stopping stays so (calls entered while it was
     * muted must not meet a recording state), and is left out of ARMED. */
    struct site_set armed = {malloc(set->n * sizeof *armed.s), 0, set->n, 0};
    if (!armed.s)
        return -2;
    spanprof__lock();
    for (size_t i = 0; i < set->n; i++) {
        struct spanprof_site *s = set->s[i];
        uint32_t seen = SPANPROF__SITE_NEW;
        if (!spanprof__span_chosen(s))
            __atomic_compare_exchange_n(&s->state, &seen, SPANPROF__SITE_OFF, 0, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED);
        if (spanprof__site_arm(s)) {
            log_switch(s, 1);
            armed.s[armed.n++] = s;
        }
    }
    spanprof__unlock();
    long restored = armed.n ? spanprof__sitepatch_on(in_set, &armed) : 0;
    spanprof__lock();
    for (size_t i = 0; i < armed.n; i++)
        if (restored >= 0)
            spanprof__site_resume(armed.s[i]);
        else /* its points stay no-ops: off again (armed, it has no frame) */
            __atomic_store_n(&armed.s[i]->state, SPANPROF__SITE_OFF, __ATOMIC_RELEASE);
    spanprof__unlock();
    free(armed.s);
    return restored < 0 ? -1 : 0;
}

/* OFF: SET's spans that record are muted; those never called go OFF at once. */
static void switch_off(struct site_set *set)
{
    spanprof__lock();
    for (size_t i = 0; i < set->n; i++) {
        struct spanprof_site *s = set->s[i];
        uint32_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
        if (st == SPANPROF__SITE_NEW) {
            if (__atomic_compare_exchange_n(&s->state, &st, SPANPROF__SITE_OFF, 0,
                                            __ATOMIC_RELEASE, __ATOMIC_RELAXED))
                continue; /* never called: no id, nothing to record */
        }
        if (st != SPANPROF__SITE_OFF && st != SPANPROF__SITE_MUTED && st != SPANPROF__SITE_NEW &&
            spanprof__switch_mute(s) == 0)
            log_switch(s, 0);
    }
    spanprof__unlock();
    settle_set(set, 1);
}

int spanprof__switch_spans(const char *globs, int on, char **answer, size_t *len)
{
    struct site_set set;
    int rc;
    spanprof__switch_hold();
    if (spans_named(globs, &set))
        rc = SPANPROF__SWITCH_NO_MEMORY;
    else if (!set.n)
        rc = SPANPROF__SWITCH_NO_MATCH;
    else if (on && (rc = switch_on(&set)) != 0)
        rc = rc == -1 ? SPANPROF__SWITCH_REFUSED : SPANPROF__SWITCH_NO_MEMORY;
    else {
        if (!on)
            switch_off(&set);
        rc = listing(&set, answer, len) ? SPANPROF__SWITCH_NO_MEMORY : 0;
    }
    spanprof__switch_release();
    free(set.s);
    return rc;
}
