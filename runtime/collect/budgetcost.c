/* budgetcost.c — SPANPROF_BUDGET: what one span call costs, measured at start-up (budget.c).
 *
 * At start-up one span call of the process's recording mode (exact, or
 * counting for `count` and `sample`) is measured on private sites called in turn, on a scratch
 * thread's data: the exported entry points' enter and exit around a little work, the loop
 * without them taken off, the minimum over rounds as calibrate.c does.  Calls that the plugin's
 * inline path records cost less, and calls whose nodes miss the cache more.
 */
#define _GNU_SOURCE
#include <stdint.h>

#include "collect/budgetparts.h"
#include "record/clock.h"

#define PROBE_ROUNDS 8
#define PROBE_PAIRS 512

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

double spanprof__budget_measure_call_ns(void)
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
