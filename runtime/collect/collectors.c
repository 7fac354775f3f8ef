/* collectors.c — switches the collectors on at start-up and fans the recording layer's events out
 * to them: a thread getting its data, a fork child resetting its counts, a thread that ended being
 * merged into its retired group (merge.c).
 *
 * The recording layer knows the collectors only through spanprof__hooks and spanprof__flags,
 * both written here once, before any site is registered.
 */
#include <stdio.h>
#include <string.h>

#include "collect/budget.h"
#include "collect/collect.h"
#include "collect/flight.h"
#include "collect/trace_ring.h"

struct spanprof__collect_settings spanprof__collect;

static void thread_new(struct spanprof__thread *t)
{
    spanprof__trace_attach(t);
    if (spanprof__collect.sample_hz)
        spanprof__sample_thread_new(t);
}

static int reset_node_data(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)depth, (void)ctx;
    memset(spanprof__res_of(n), 0, sizeof(struct spanprof__res_node));
    return 1;
}

/* The child's profile covers the child only: per-node data back to zero (the parent's blocks are
 * "allocated elsewhere" in the child), and the trace restarts. */
static void fork_child(struct spanprof__thread *t)
{
    if (spanprof__res_on())
        spanprof__tree_walk(&t->root, reset_node_data, NULL, NULL);
    if (spanprof__collect.sample_hz)
        spanprof__sample_fork_child(t);
    spanprof__trace_fork_child(t);
    spanprof__trace_retired_drop();
    if (spanprof__flight.on)
        spanprof__flight_fork_child();
    spanprof__budget_fork_child();
}

/* A frame popped without its exit: the trace shows the span ending there (at the return from
 * setjmp, or at the call that found it dead), and a coz latency point counts its end, as the
 * entry counted its begin (slowpath.c). */
static void frame_abandoned(const struct spanprof_site *site)
{
    if (site->coz_begin && site->coz_end)
        __atomic_add_fetch(&((struct spanprof__coz_counter *)site->coz_end)->count, 1,
                           __ATOMIC_RELAXED);
    if (spanprof__collect.trace_buffer && !spanprof__flags.flight_min)
        spanprof__trace_push(site, SPANPROF__TRACE_EXIT);
}

void spanprof__collectors_start(const struct spanprof__collect_settings *s)
{
    struct spanprof__collect_settings *c = &spanprof__collect;
    *c = *s;
    if (c->alloc_stacks && !c->alloc) {
        fprintf(stderr, "spanprof: warning: SPANPROF_ALLOC_STACKS=1 needs SPANPROF_ALLOC=1; "
                        "no allocation stacks\n");
        c->alloc_stacks = 0;
    }
    if (c->alloc && !spanprof__alloc_attach(c->alloc_stacks, c->alloc_sample))
        c->alloc = c->alloc_stacks = 0;
    spanprof__flags.histogram = c->histogram; /* per (thread, site), not per node */
    if (spanprof__res_on()) /* first: spanprof__res_of expects offset 0 */
        spanprof__node_ext_add(sizeof(struct spanprof__res_node), spanprof__res_node_merge);
    if (c->sample_hz)
        spanprof__sample_layout();
    if (c->budget > 0)
        spanprof__budget_layout();
    /* A timed trace is pushed by the span paths with their own timestamps (record/tracepush.h);
     * CPU/allocation tracking, and tracing in counting mode (no timestamps to share), send every
     * call through the SLOW state. */
    int timed_trace = c->trace_buffer && !spanprof__flags.counting;
    /* The flight recorder with SPANPROF_FLIGHT_MIN pushes a pair per kept call at its exit
     * (record/hotpath.c) instead of an event at every enter and exit. */
    int pairs = spanprof__flight.on && spanprof__flight.min_ns;
    spanprof__trace_fast_path(timed_trace && !pairs);
    spanprof__flight_start();
    spanprof__flags.every_call = spanprof__res_on() || (c->trace_buffer && !timed_trace && !pairs);
    spanprof__hooks = (struct spanprof__hooks){
        .enter = spanprof__slow_enter,
        .exit = spanprof__slow_exit,
        .thread_new = thread_new,
        .site_watch = spanprof__flight.nrules ? spanprof__flight_site_watch : NULL,
        .fork_child = fork_child,
        .frame_abandoned = c->trace_buffer || spanprof__g.coz_get ? frame_abandoned : NULL,
        .thread_merge = spanprof__collect_thread_merge,
        .node_merge = spanprof__flags.node_ext ? spanprof__node_ext_merge : NULL,
        .thread_clear = spanprof__collect_thread_clear,
    };
}
