/* stack.c — the shadow stack's cold paths: first span of a thread, child nodes missing from the
 * hint, growth of the frame array, repair of stacks left unbalanced, and the depth cap.
 *
 * Repair rules.  Each frame records the instrumented function's canonical frame address (cfa:
 * its caller's stack pointer before the call, passed by the plugin), the enter call site (ra)
 * and the function's own return address (fra).  Stacks grow down.
 *  - at enter, a top frame whose cfa is strictly lower than the current cfa belongs to a function
 *    that has returned without its exit (longjmp out of it, or it was noreturn and something
 *    longjmp'd): it is popped as abandoned, its time counted up to now.  Equal cfa is alive when
 *    the function return address is equal too (a callee inlined into its caller shares both),
 *    unless it is the very same enter call site, which a live activation cannot re-run: that is
 *    a loop re-entering after a longjmp.  Equal cfa with another function return address is a
 *    sibling called at the depth of a frame that a longjmp abandoned: dead.
 *  - at exit, when the top frame is not this activation's: the matching frame is the topmost one
 *    of this site with this cfa (else the topmost of this site with cfa >= the current one, else
 *    the topmost of this site); frames above it are popped as abandoned, then it is popped.  An
 *    exit with no frame of its site is counted as unmatched and ignored (not counted for a span
 *    switched on while the program runs: record/siteswitch.c).
 *  - signal handlers: a handler's spans nest under the span it interrupted.  On the thread's own
 *    stack that needs nothing special (its frames are deeper).  On an alternate signal stack
 *    (SA_ONSTACK) placed above the thread's stack, the handler's first frame looks like a return
 *    past the interrupted frames; before popping a frame for having a lower cfa, the cold path
 *    asks whether the two addresses lie on different stacks (sigstack.c): a frame on the thread's
 *    stack under a handler frame on the alternate stack is alive, a frame on the alternate stack
 *    under a frame on the thread's stack was left by a jump out of the handler: dead.
 *  - "parking": past the depth cap (or when memory runs out) entries are counted in
 *    park_depth/overflow but not recorded; top points to park_frame (cfa 0, site-less node) so
 *    every enter/exit comes here until the parked entries have exited.
 */
#include <string.h>

#include "record/childcache.h"
#include "record/clock.h"
#include "record/histogram.h"
#include "record/record.h"
#include "record/tracepush.h"

static int is_dead(const struct spanprof__frame *f, uintptr_t cfa, uintptr_t ra, uintptr_t fra)
{
    return f->cfa < cfa || (f->cfa == cfa && (f->ra == ra || f->fra != fra));
}

/* is_dead, except for a top frame that only looks dead because a signal handler runs on its
 * alternate stack above it (asked of the kernel only when the cfa comparison says dead). */
static int is_dead_here(const struct spanprof__frame *f, uintptr_t cfa, uintptr_t ra, uintptr_t fra)
{
    if (!is_dead(f, cfa, ra, fra))
        return 0;
    return !(f->cfa < cfa && f->cfa != 0 && spanprof__on_alt_stack(cfa) &&
             !spanprof__on_alt_stack(f->cfa));
}

/* Pop the top frame, charging its time up to NOW (also setjmp.c's repair).  Each step leaves the
 * stack consistent for a signal handler that runs in between. */
void spanprof__close_top(struct spanprof__thread *t, uint64_t now)
{
    SPANPROF_ASSERT(t->top > t->frames); /* the root frame is never closed */
    spanprof__charge(t->top, now);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    SPANPROF_PUBLISH(t->top, t->top - 1);
}

static void park(struct spanprof__thread *t)
{
    t->parked_top = t->top;
    SPANPROF_PUBLISH(t->park_depth, 1);
    spanprof__count_add(&t->overflow, 1);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    SPANPROF_PUBLISH(t->top, &t->park_frame);
}

/* Back to the recorded frames (also setjmp.c's repair). */
void spanprof__unpark(struct spanprof__thread *t)
{
    SPANPROF_PUBLISH(t->top, t->parked_top);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    SPANPROF_PUBLISH(t->park_depth, 0);
}

/* Double the frame array (mmap + copy + munmap rather than mremap); 0 when it cannot (the depth
 * cap, out of memory).  Signals are held meanwhile (record.h): a handler's spans wait for the
 * new array, in a path taken log2(depth) times that makes system calls anyway.  When another
 * thread reads the top frame (spanprof__flags.frames_shared: the sampler, which may have loaded
 * the old top just before the move and read its node just after), the old array stays mapped
 * for the life of the thread's data: the arrays double, so the ones kept add up to less than
 * the current one. */
static int grow(struct spanprof__thread *t)
{
    struct spanprof__hold hold;
    spanprof__hold_enter(&hold);
    /* A handler that landed before the hold may have grown the array already. */
    int ok = t->top != t->limit;
    size_t cap = t->capacity * 2;
    if (cap > spanprof__flags.max_depth + 1)
        cap = spanprof__flags.max_depth + 1;
    struct spanprof__frame *nf = ok || cap <= t->capacity ? NULL : spanprof__map(cap * sizeof *nf);
    if (nf) {
        struct spanprof__frame *old = t->frames;
        size_t oldcap = t->capacity;
        size_t depth = (size_t)(t->top - old);
        memcpy(nf, old, oldcap * sizeof *nf);
        SPANPROF_PUBLISH(t->frames, nf);
        SPANPROF_PUBLISH(t->capacity, cap);
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        SPANPROF_PUBLISH(t->top, nf + depth);
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        t->limit = nf + cap - 1;
        if (!spanprof__flags.frames_shared)
            spanprof__unmap(old, oldcap * sizeof *old);
        ok = 1;
    }
    spanprof__hold_leave(&hold);
    return ok;
}

/* Push a frame for an existing child N of the top frame's node (as the hot path does). */
static void push(struct spanprof__thread *t, struct spanprof__node *n, uintptr_t cfa, uintptr_t ra,
                 uintptr_t fra)
{
    t->top->node->hint = n;
    spanprof__child_cache_put(t, n);
    spanprof__push_frame(t, t->top, n, cfa, ra, fra)->start = spanprof__clock_now();
}

/* The node's count first: a writer that sees the frame's time charged also sees that its exit
 * did not run (compensation then takes out only the enter's cost). */
void spanprof__abandon_top(struct spanprof__thread *t, uint64_t now)
{
    if (spanprof__hooks.frame_abandoned)
        spanprof__hooks.frame_abandoned(t->top->node->site);
    spanprof__abandoned_count(t->top->node);
    spanprof__close_top(t, now);
    spanprof__count_add(&t->abandoned, 1);
}

/* Pops the frames a longjmp or noreturn function left above this call.  frames[0] has cfa
 * UINTPTR_MAX: never dead, so this stops there.  The timestamp is taken only when a frame is
 * closed: the common reason to be in the cold path is a child missing from the hint (alternating
 * children), and a timestamp costs as much as the rest of it. */
static void repair(struct spanprof__thread *t, uintptr_t cfa, uintptr_t ra, uintptr_t fra)
{
    if (is_dead_here(t->top, cfa, ra, fra)) {
        uint64_t now = spanprof__clock_now();
        while (is_dead_here(t->top, cfa, ra, fra))
            spanprof__abandon_top(t, now);
    }
}

/* Pushes an existing child of the top frame's node for SITE; 0 when there is none or the
 * frame array is full. */
static int push_existing(struct spanprof__thread *t, struct spanprof_site *site, uintptr_t cfa,
                         uintptr_t ra, uintptr_t fra)
{
    if (t->top == t->limit)
        return 0;
    struct spanprof__node *n = __atomic_load_n(&t->top->node->first_child, __ATOMIC_RELAXED);
    for (; n; n = n->next_sibling)
        if (n->site == site) {
            push(t, n, cfa, ra, fra);
            return 1;
        }
    return 0;
}

/* Whether SITE still records, read again by the cold path just before it pushes.  The state was
 * read before the cold path ran, and a switch off (collect/spanswitch.c) waits only until each
 * thread it listed when it muted the span has run 20 µs on a CPU since, or was seen asleep; then,
 * with none of them holding a frame of the span, it is OFF and its exits are no longer run.  The
 * cold path can outlast that: attaching a thread at its first span (an mmap, and it is not
 * listed until that is done), growing the frame array (an mmap and a copy), a node's new arena
 * chunk.  A frame pushed after the span went OFF would never be popped.  A thread missing from
 * the list reads MUTED or OFF here: the list is changed under the process lock, and the span is
 * muted before the lock is taken to list the threads.  A node made for nothing keeps no calls,
 * and the writers leave such nodes out. */
static int still_records(const struct spanprof_site *site)
{
    uint32_t st = __atomic_load_n(&site->state, __ATOMIC_ACQUIRE);
    return st != SPANPROF__SITE_MUTED && st != SPANPROF__SITE_OFF;
}

/* Signals are held (record.h) on the rare paths that a signal handler's spans must not
 * interleave with: getting the thread's data (thread.c), growing the frame array, a histogram's
 * creation (histogram.c), a new arena chunk (arena.c).  A signal waits there, and its handler's
 * spans are recorded once the path is done.  Creating a node allows for a handler running in
 * the middle (calltree.c), as do the common cold paths (a child missing from the hint, repair
 * after a longjmp), which leave the stack consistent at every step: a handler's spans nest
 * there as anywhere else.  Only parking runs with the plain re-entry guard (spans of a handler
 * then are ignored): it happens past the depth cap or out of memory, where entries go uncounted
 * anyway. */
static void enter_cold(struct spanprof_site *site, uintptr_t cfa, uintptr_t ra, uintptr_t fra)
{
    if (spanprof__busy(cfa))
        return; /* a span run by the runtime itself (signal, allocator hook): ignored */
    /* The usual reason to be here: the stack is sound and the child exists, but it is not the
     * parent's hint (a parent calling several spans in turn); or a longjmp left frames to pop.
     * Nothing here allocates or calls out (but sigaltstack, which saves errno itself).  (A thread
     * without data, or a parked one, has a top frame with cfa 0: not taken here.) */
    struct spanprof__thread *t = spanprof__tls;
    if (t->top->cfa != 0) {
        repair(t, cfa, ra, fra);
        if (push_existing(t, site, cfa, ra, fra))
            return;
    }
    if (t == &spanprof__sentinel_thread) {
        t = spanprof__thread_attach();
        if (!t)
            return;
    }
    if (t->park_depth) {
        struct spanprof__guard guard = spanprof__guard_enter();
        int parked = !is_dead(t->parked_top, cfa, ra, fra) || t->parked_top == t->frames;
        if (parked) {
            SPANPROF_PUBLISH(t->park_depth, t->park_depth + 1);
            spanprof__count_add(&t->overflow, 1);
        } else {
            /* A longjmp left the parked entries: they will never exit. */
            spanprof__count_add(&t->abandoned, t->park_depth);
            spanprof__unpark(t);
        }
        spanprof__guard_leave(guard);
        if (parked)
            return;
    }
    repair(t, cfa, ra, fra);
    /* The exit fast path takes the thread's histogram for the site without a test: it must
     * exist before the site's first node on this thread can be pushed.  A handler that runs
     * between these steps leaves the stack as it found it (or a longer array: push reads top
     * again). */
    struct spanprof__node *n = NULL;
    if ((t->top != t->limit || grow(t)) &&
        (!spanprof__flags.histogram || spanprof__hist_attach(t, site)))
        n = spanprof__tree_child(t, t->top->node, site, spanprof__flags.node_ext);
    if (!still_records(site))
        return;
    if (n) {
        push(t, n, cfa, ra, fra);
        return;
    }
    struct spanprof__guard guard = spanprof__guard_enter();
    park(t);
    spanprof__guard_leave(guard);
}

/* With tracing on, the trace's enter event follows whatever the cold path did, as in the hot path
 * (there the push also gives the frame its start; here the frame has its own timestamp). */
SPANPROF_COLD void spanprof__enter_cold(struct spanprof_site *site, uintptr_t cfa, uintptr_t ra,
                                        uintptr_t fra)
{
    enter_cold(site, cfa, ra, fra);
    if (spanprof__flags.trace)
        spanprof__trace_push(site, 0);
}

/* Guarded only for parked entries; the search and the pops below are safe to interrupt. */
SPANPROF_COLD void spanprof__exit_cold(struct spanprof_site *site, uintptr_t cfa, uint64_t now)
{
    if (spanprof__busy(cfa))
        return;
    struct spanprof__thread *t = spanprof__tls;
    if (t == &spanprof__sentinel_thread) {
        __atomic_add_fetch(&spanprof__g.unmatched_no_thread, 1, __ATOMIC_RELAXED);
        return;
    }
    if (t->park_depth) {
        struct spanprof__guard guard = spanprof__guard_enter();
        int done = 0;
        /* Parked entries are deeper than parked_top; an exit from a frame above it means a
         * longjmp skipped them.  (The first parked entry may be inlined into parked_top's
         * function and share its cfa, hence "strictly above".) */
        if (cfa <= t->parked_top->cfa || t->parked_top == t->frames) {
            if (t->park_depth == 1)
                spanprof__unpark(t);
            else
                SPANPROF_PUBLISH(t->park_depth, t->park_depth - 1);
            done = 1;
        } else {
            spanprof__count_add(&t->abandoned, t->park_depth);
            spanprof__unpark(t);
        }
        spanprof__guard_leave(guard);
        if (done)
            return;
    }
    struct spanprof__frame *target = NULL, *f;
    for (f = t->top; f > t->frames; f--)
        if (f->node->site == site && f->cfa == cfa) {
            target = f;
            break;
        }
    if (!target)
        for (f = t->top; f > t->frames; f--)
            if (f->node->site == site && f->cfa >= cfa) {
                target = f;
                break;
            }
    if (!target)
        for (f = t->top; f > t->frames; f--)
            if (f->node->site == site) {
                target = f;
                break;
            }
    if (!target) {
        if (!spanprof__site_switched_on(site)) /* else: a call entered while it was off */
            spanprof__count_add(&t->unmatched, 1);
        return;
    }
    while (t->top != target)
        spanprof__abandon_top(t, now);
    spanprof__close_top(t, now);
}

int spanprof__has_open_frame(const struct spanprof_site *site, uintptr_t cfa)
{
    const struct spanprof__thread *t = spanprof__tls;
    if (t->top->node->site == site && t->top->cfa == cfa)
        return 1;
    if (t == &spanprof__sentinel_thread || t->park_depth)
        return 0;
    for (const struct spanprof__frame *f = t->top; f > t->frames; f--)
        if (f->node->site == site)
            return 1;
    return 0;
}
