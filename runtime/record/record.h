/* record.h — the recording layer: the hot path's data model and everything it touches
 * (never installed).  The layers above it (collect/, report/, lifecycle/) use these declarations;
 * nothing here knows about them: what they add to recording comes in through
 * struct spanprof__hooks, and start-up through SPANPROF_START_STAGE (process.c).
 *
 * Data model: each thread owns a shadow stack (array of frames, frames[0] a root sentinel) and a
 * call tree (one node per distinct call path).  Only the owning thread (and signal handlers on
 * it) writes its stack and tree; the report layer reads every thread's tree while it runs: the
 * owner's stores to what others read go through counter.h (one instruction, atomic with respect
 * to signals, a plain store or add on x86), readers load them with relaxed atomic loads, and
 * nodes are published with release stores.  Thread data lives in mmap'd memory that is never
 * unmapped while the process runs: when a thread ends, its data is merged into its name's
 * retired group and the memory is reused for the next new thread (threadretire.c), so a reader that
 * holds no lock (the crash writer) only ever reads mapped memory.
 */
#ifndef SPANPROF_RECORD_H
#define SPANPROF_RECORD_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/counter.h"
#include "spanprof.h"

/* Everything declared below is internal: hidden, so -fPIC code reaches it without the GOT. */
#pragma GCC visibility push(hidden)

/* Only the ABI is exported (the build uses -fvisibility=hidden). */
#define SPANPROF_API __attribute__((visibility("default")))
/* Rare paths: out of line, in .text.unlikely, so the hot path stays small. */
#define SPANPROF_COLD __attribute__((cold, noinline))
#define SPANPROF_LIKELY(x) __builtin_expect(!!(x), 1)
#define SPANPROF_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* initial-exec TLS: one %fs-relative load (plus one GOT load in the .so), no __tls_get_addr. */
#define SPANPROF_TLS __thread __attribute__((tls_model("initial-exec")))

/* Invariants checked in debug builds (configure with CFLAGS=-DSPANPROF_DEBUG): a failed check
 * prints the condition and its place and aborts.  Compiled out otherwise, so they may sit on
 * cold paths freely but cost nothing in release builds. */
#ifdef SPANPROF_DEBUG
void spanprof__assert_fail(const char *cond, const char *file, int line);
#define SPANPROF_ASSERT(cond) \
    ((cond) ? (void)0 : spanprof__assert_fail(#cond, __FILE__, __LINE__))
#else
#define SPANPROF_ASSERT(cond) ((void)0)
#endif

/* Version of the output formats (the JSON "version" field). */
#define SPANPROF_FORMAT_VERSION 1

/* Default maximum shadow-stack depth per thread; deeper calls are counted (overflow_calls) but
 * not recorded.  1 Mi frames = 32 MiB of address space, only touched as the stack grows. */
#define SPANPROF_MAX_DEPTH_DEFAULT ((size_t)1 << 20)

/* Site ids the tables indexed by id cover (the registry, the switch marks and log, the budget's
 * record, the flight recorder's triggers): mapped, touched only for the ids used. */
#define SPANPROF_SITE_IDS (1u << 18)

/* Values of spanprof_site.state.  The plugin's inline test skips the call for OFF; the entry
 * points handle FAST and COUNT inline, each with one compare; everything else (NEW, SLOW, and OFF
 * from objects built by an older plugin) goes out of line. */
enum {
    SPANPROF__SITE_NEW = 0,  /* not seen yet: register it (site.c, cold path) */
    SPANPROF__SITE_FAST = 1, /* registered, recording with bare-rdtsc timestamps and nothing else
                              * to do (no histogram): the inline path records it */
    SPANPROF__SITE_SLOW = 2, /* registered, and something beyond plain recording: coz counters
                              * or a collector that wants every call (CPU/allocation tracking,
                              * tracing), run through spanprof__hooks.enter/exit */
    SPANPROF__SITE_OFF = 3,  /* ignored: wrong version/kind, or recording off (SPANPROF=0) */
    SPANPROF__SITE_COUNT = 4, /* registered, counting only (SPANPROF=count), no coz counters */
    SPANPROF__SITE_TIMED = 5, /* registered, recording with timestamps on the plain path, but
                               * with something the inline path leaves to the runtime: a
                               * histogram, or a clock other than a bare rdtsc */
    SPANPROF__SITE_MUTED = 6, /* being switched off (SPANPROF_BUDGET, collect/budget.c): enters
                               * record nothing, an exit pops only its own activation; OFF once
                               * no thread has a frame of it */
    SPANPROF__SITE_TRACE = 9, /* registered, as FAST with every enter and exit also pushed into
                               * the thread's trace ring (tracepush.h): the inline path records
                               * it */
};
/* The states recorded with timestamps on the plain path: FAST, TIMED and TRACE, which differ from
 * 1 only in the bits of 12 (13 is no state): one masked compare. */
#define SPANPROF__SITE_IS_TIMED(st) (((st) & ~12u) == 1u)
_Static_assert(SPANPROF__SITE_FAST == 1 && SPANPROF__SITE_TIMED == 5 && SPANPROF__SITE_TRACE == 9 &&
                   SPANPROF__SITE_NEW != 13 && SPANPROF__SITE_SLOW != 13 &&
                   SPANPROF__SITE_OFF != 13 && SPANPROF__SITE_COUNT != 13 &&
                   SPANPROF__SITE_MUTED != 13,
               "SPANPROF__SITE_IS_TIMED names FAST, TIMED and TRACE alone");
/* NEW, OFF, FAST, COUNT and TRACE are part of the site ABI: the plugin's inline test before each
 * call skips the call when the state is OFF, and records FAST, COUNT and TRACE sites inline
 * (spanprof.h). */
_Static_assert(SPANPROF__SITE_NEW == SPANPROF_STATE_NEW && SPANPROF__SITE_OFF == SPANPROF_STATE_OFF &&
                   SPANPROF__SITE_COUNT == SPANPROF_STATE_COUNT &&
                   SPANPROF__SITE_FAST == SPANPROF_STATE_FAST &&
                   SPANPROF__SITE_TRACE == SPANPROF_STATE_TRACE,
               "site states NEW, OFF, FAST, COUNT and TRACE must match spanprof.h");

/* coz's counter layout (coz.h's coz_counter_t). */
struct spanprof__coz_counter {
    volatile size_t count;
    size_t backoff;
};
typedef struct spanprof__coz_counter *(*spanprof__coz_get_fn)(int type, const char *name);

/* One node per distinct call path of a thread.  64 bytes: one cache line. */
struct spanprof__node {
    const struct spanprof_site *site;     /* NULL for roots and the sentinels */
    struct spanprof__node *parent;
    struct spanprof__node *first_child;   /* published with a release store */
    struct spanprof__node *next_sibling;  /* set before publication, never changed */
    struct spanprof__node *hint;          /* child looked up last: the hot path's one-entry cache */
    uint64_t calls;                       /* entries (counted at enter) */
    uint64_t total;                       /* inclusive ticks of completed/settled activations */
    uint64_t child;                       /* ticks of those spent in child spans */
};
_Static_assert(sizeof(struct spanprof__node) == 64, "a call-tree node is one cache line");

/* One shadow-stack entry. */
struct spanprof__frame {
    struct spanprof__node *node;
    uint64_t start; /* timestamp (ticks) of entry, or of the last settle */
    uintptr_t cfa;  /* the instrumented function's canonical frame address (from the plugin) */
    uintptr_t ra;   /* return address of the enter call: identifies the entering code */
    uintptr_t fra;  /* the instrumented function's own return address (where it returns to) */
};
/* The inline path's view of nodes and frames (spanprof.h, SPANPROF_ABI_*). */
_Static_assert(offsetof(struct spanprof__node, site) == SPANPROF_ABI_NODE_SITE &&
                   offsetof(struct spanprof__node, parent) == SPANPROF_ABI_NODE_PARENT &&
                   offsetof(struct spanprof__node, hint) == SPANPROF_ABI_NODE_HINT &&
                   offsetof(struct spanprof__node, calls) == SPANPROF_ABI_NODE_CALLS &&
                   offsetof(struct spanprof__node, total) == SPANPROF_ABI_NODE_TOTAL &&
                   offsetof(struct spanprof__node, child) == SPANPROF_ABI_NODE_CHILD,
               "call-tree node layout must match spanprof.h's SPANPROF_ABI_NODE_*");
_Static_assert(sizeof(struct spanprof__frame) == SPANPROF_ABI_FRAME_SIZE &&
                   offsetof(struct spanprof__frame, node) == SPANPROF_ABI_FRAME_NODE &&
                   offsetof(struct spanprof__frame, start) == SPANPROF_ABI_FRAME_START &&
                   offsetof(struct spanprof__frame, cfa) == SPANPROF_ABI_FRAME_CFA &&
                   offsetof(struct spanprof__frame, ra) == SPANPROF_ABI_FRAME_ENTRY &&
                   offsetof(struct spanprof__frame, fra) == SPANPROF_ABI_FRAME_RETURN,
               "frame layout must match spanprof.h's SPANPROF_ABI_FRAME_*");

/* Bump allocator over mmap'd chunks, never unmapped.  The chunks are chained (a header at the
 * start of each) so that a recycled thread's arena is rewound and reused (arena.c). */
struct spanprof__arena {
    char *cur, *end;
    char *first; /* first chunk, NULL before the first allocation */
    char *chunk; /* the chunk cur points into */
};

struct spanprof__hist_table;
struct spanprof__abandoned;
struct spanprof__res_thread;
struct spanprof__sample_thread;
/* Slots of each thread's child-lookup cache (record/childcache.h). */
#define SPANPROF__CHILD_CACHE_BITS SPANPROF_ABI_CHILD_CACHE_BITS
#define SPANPROF__CHILD_CACHE_SLOTS ((size_t)1 << SPANPROF__CHILD_CACHE_BITS)
struct spanprof__trace_ring;

struct spanprof__thread {
    /* --- hot: read on every enter/exit --- */
    struct spanprof__frame *top;   /* current top frame (frames[0] when nothing is open) */
    struct spanprof__frame *limit; /* last usable slot: top == limit means "grow first" */
    struct spanprof__hist_table *hists; /* SPANPROF_HISTOGRAM: histograms by site id, read on
                                         * exit (histogram.h); NULL when off */
    struct spanprof__trace_ring *trace; /* SPANPROF_TRACE ring (tracepush.h), or NULL: read at
                                         * every enter and exit of a traced site */
    /* --- cold --- */
    struct spanprof__frame *frames;
    size_t capacity;                  /* frames allocated */
    struct spanprof__frame *parked_top; /* real top while entries are parked (see stack.c) */
    uint64_t park_depth;              /* entries counted but not recorded */
    struct spanprof__frame park_frame;  /* top while parked: cfa 0 and a site-less node send every
                                         * enter/exit to the cold path */
    struct spanprof__node root;
    struct spanprof__arena arena;
    struct spanprof__thread *next;    /* global registry link (under the process lock) */
    pid_t tid;                        /* 0 for a retired group */
    int exited;                       /* its pthread ended (data kept); always set in a group */
    uint64_t open_at_exit;            /* frames open when it ended */
    uint64_t abandoned;               /* frames popped by repair (longjmp, noreturn) */
    uint64_t unmatched;               /* exits that matched no open frame */
    uint64_t overflow;                /* entries not recorded: depth cap or out of memory */
    uint64_t start_tick;              /* for the time outside spans: the process's start for the
                                       * main thread, else when it got its data (its first
                                       * span); the fork, in a fork child */
    uint64_t end_tick;                /* when its pthread ended (valid once exited is set) */
    char name[64];
    /* Collectors' per-thread data (collect/), opaque here. */
    struct spanprof__res_thread *res;   /* CPU/allocation tracking, or NULL */
    struct spanprof__sample_thread *sample; /* SPANPROF=sample: the sampler's figures, or NULL */
    uint64_t budget_cpu_ns;             /* SPANPROF_BUDGET: its CPU clock at the last tick (0:
                                         * not read yet) */
    /* Thread churn (threadretire.c): a retired group holds the merged data of exited threads. */
    uint64_t merged;                  /* a group: how many exited threads it holds; else 0 */
    uint64_t lifetimes;               /* a group: the sum of their lifetimes (ticks) */
    struct spanprof__thread *free_next; /* free-list link (next stays as it was, for readers
                                         * that walk the registry without the lock) */
    /* (parent, site) -> child, read by the enter path when a node's hint misses; every slot a
     * valid node (childcache.h).  Data reused for another thread must be reset first:
     * spanprof__child_cache_reset. */
    struct spanprof__node *child_cache[SPANPROF__CHILD_CACHE_SLOTS] __attribute__((aligned(64)));
};
_Static_assert(offsetof(struct spanprof__thread, top) == 0 &&
                   offsetof(struct spanprof__thread, trace) < 64,
               "the fields every enter/exit reads share the thread data's first cache line");
_Static_assert(offsetof(struct spanprof__thread, top) == SPANPROF_ABI_THREAD_TOP &&
                   offsetof(struct spanprof__thread, limit) == SPANPROF_ABI_THREAD_LIMIT &&
                   offsetof(struct spanprof__thread, child_cache) == SPANPROF_ABI_THREAD_CHILD_CACHE,
               "thread data layout must match spanprof.h's SPANPROF_ABI_THREAD_*");

/* ---- process.c: process-wide state, switches and start-up ---- */

/* The read-mostly switches the recording paths test.  Written once by start-up, before any site
 * is registered (so before any call reads them), never changed afterwards; one cache line that
 * every core keeps shared. */
struct spanprof__flags {
    int recording;    /* SPANPROF != 0 and start-up succeeded: sites get registered */
    int counting;     /* SPANPROF=count: calls per stack, no timestamps */
    int tsc;          /* timestamps are TSC cycles (clock.c), else CLOCK_MONOTONIC ns */
    int hot_tsc;      /* the span paths' timestamp is a bare rdtsc: TSC, and no trace ring to
                       * fill (clock.h's spanprof__clock_hot_update keeps it) */
    int trace;        /* SPANPROF_TRACE, timed: the span paths push each timestamp into the
                       * thread's trace ring (tracepush.h) */
    int histogram;    /* SPANPROF_HISTOGRAM: the exit fast path adds to the thread's histogram */
    uint64_t flight_min; /* SPANPROF_FLIGHT_MIN, ticks (0: off): the exit pushes one enter/exit
                          * pair into the thread's ring for each call at least this long
                          * (hotpath.c); no event at enter */
    int every_call;   /* a collector wants every call (CPU/allocation tracking, tracing): all
                       * sites take the SLOW state */
    int frames_shared; /* another thread reads each thread's top frame (SPANPROF=sample's
                        * sampler): a grown frame array keeps the old one mapped (stack.c) */
    size_t node_ext;  /* bytes of collector data behind each call-tree node (zeroed) */
    size_t max_depth; /* shadow-stack depth cap per thread */
};
extern struct spanprof__flags spanprof__flags;

/* What the collectors (collect/) add to recording, installed by start-up before any site is
 * registered.  The cold-path members may be NULL. */
struct spanprof__hooks {
    /* A call of a site in state SLOW: record it and run what the collectors do per call. */
    void (*enter)(struct spanprof_site *site, uintptr_t cfa, uintptr_t ra, uintptr_t fra);
    void (*exit)(struct spanprof_site *site, uintptr_t cfa);
    /* A thread got its data (before it is registered). */
    void (*thread_new)(struct spanprof__thread *t);
    /* A span site's first sight, under the process lock (may be NULL): non-zero sends its calls
     * through the SLOW state (a flight-recorder trigger watches its exits). */
    int (*site_watch)(const struct spanprof_site *site);
    /* In a fork child, after the forking thread's counts were reset. */
    void (*fork_child)(struct spanprof__thread *t);
    /* A frame of SITE is popped without its exit: at a setjmp's return, a longjmp having
     * abandoned it, or when a later call finds it dead (noreturn, longjmp without setjmp). */
    void (*frame_abandoned)(const struct spanprof_site *site);
    /* Thread churn (threadretire.c), under the process lock.  T's thread ended and its call tree was
     * merged into GROUP's; each node of T's tree now has its GROUP counterpart in its hint field
     * (NULL where the group ran out of memory).  Add T's collector data to GROUP (per-thread
     * data such as histograms or samples; a trace ring may be moved away).  Returns non-zero
     * when T's nodes must stay where they are (something outside still points into them), so
     * its arena is not reused. */
    int (*thread_merge)(struct spanprof__thread *group, struct spanprof__thread *t);
    /* Adds the collectors' data behind node SRC (spanprof__flags.node_ext bytes) into DST's. */
    void (*node_merge)(struct spanprof__node *dst, const struct spanprof__node *src);
    /* T's data is about to be reused by another thread (or dropped in a fork child): collector
     * data back to empty, keeping what can be reused. */
    void (*thread_clear)(struct spanprof__thread *t);
};
extern struct spanprof__hooks spanprof__hooks;

struct spanprof__process {
    pthread_mutex_t lock;              /* registry, site registration, output */
    int fork_child;                    /* this process is a fork child of a recording process */
    spanprof__coz_get_fn coz_get;      /* _coz_get_counter, or NULL without coz */
    const char *spans;                 /* the spans that record (comma-separated globs:
                                        * SPANPROF_SPANS and the names other variables give),
                                        * NULL: every span (site.c, spanprof__span_chosen) */
    uint64_t points_patched;           /* patch points made no-ops so far (sitepatch.c) */
    const char *coz_progress;          /* SPANPROF_COZ_PROGRESS: spans whose exits are visits of
                                        * a throughput point (comma-separated globs), or NULL */
    const char *coz_latency;           /* SPANPROF_COZ_LATENCY: the spans that are latency points
                                        * (globs; "" none), NULL: those marked by attribute */
    struct spanprof__thread *threads;  /* registry: all threads that entered a span */
    uint32_t next_site_id;
    uint64_t unmatched_no_thread;      /* exits in threads that never entered a span (atomic) */
    pthread_key_t key;                 /* destructor captures name/time at thread exit */
    uint64_t start_mono_ns;            /* for wall_ns */
    uint64_t start_tick;               /* the same moment on the span clock (0 with no clock) */
    int64_t start_real_sec, start_real_nsec; /* for start_time */
    struct spanprof__call_cost {
        double in, out;                /* ticks one span call adds inside its own timed window
                                        * and outside it; 0: not measured */
        double enter_in, enter_out;    /* the enter's share of each (lower bounds): what a call
                                        * whose exit never ran added */
        const char *failed;            /* why the measurement failed, or NULL (in is then 0) */
    } call_cost[2];                    /* through the entry points; on the plugin's inline path
                                        * (calibrate.c) */
    int call_kinds_seen;               /* bits: 1 sites recorded through the entry points, 2
                                        * sites recorded by the inline path (atomic) */
    struct spanprof__abandoned *abandoned; /* abandoned activations per node (abandoned.c) */
    uint64_t abandoned_unplaced;       /* ... that no table had room for (atomic) */
};
extern struct spanprof__process spanprof__g;

/* ---- calibrate.c ---- */
/* Measures spanprof__g.call_cost when exact recording's plain path is what every call takes (TSC
 * timestamps; no trace, histogram or per-call collector); otherwise leaves it 0.  Start-up calls
 * it, after the collectors are set up and before recording begins, and the exit write again
 * (the lower measurement stands).  Not under the process lock. */
void spanprof__calibrate(void);
/* A site was first seen, recorded by the plugin's inline path (INLINE_OBJECT) or not. */
void spanprof__calibrate_saw(int inline_object);
/* The cost the writers take out per call: the inline path's once such a site was seen. */
struct spanprof__call_cost spanprof__call_cost(void);

/* Start-up is done by the layers above, in stages they declare with SPANPROF_START_STAGE(fn):
 * pointers the linker gathers into one section, run once, in link order, by spanprof__start()
 * — from the runtime's constructor, or earlier from the first span if another constructor runs
 * spans before it.  The recording layer needs no name from above to start. */
typedef void (*spanprof__start_fn)(void);
#define SPANPROF_START_STAGE(fn)                                                            \
    static const spanprof__start_fn spanprof__stage_##fn                                    \
        __attribute__((used, section("spanprof_start"), aligned(sizeof(void *)))) = fn
void spanprof__start(void);
/* Stop stages, the same way (SPANPROF_STOP_STAGE(fn), section "spanprof_stop"): what must not
 * run any more once the runtime's code is unloaded (a thread, a signal handler, a key
 * destructor) is stopped there.  spanprof__stop runs them once, in reverse link order (the
 * layers above first), when the object holding the runtime is unloaded — not at process exit,
 * where nothing runs afterwards (lifecycle/unload.c tells the two apart). */
#define SPANPROF_STOP_STAGE(fn)                                                             \
    static const spanprof__start_fn spanprof__stop_##fn                                     \
        __attribute__((used, section("spanprof_stop"), aligned(sizeof(void *)))) = fn
void spanprof__stop(void);
void spanprof__lock(void);
void spanprof__unlock(void);
/* Takes the process's start timestamps (at start-up and in a fork child). */
void spanprof__mark_start(void);

/* The rare-path prologue shared by every entry from user code into the runtime's slow side:
 * errno saved, and the re-entry flag set so that spans run by whatever the runtime calls
 * (allocator hooks, a signal handler) are ignored.  Pair with spanprof__guard_leave.
 * The flag holds the frame address of the function that set it, so that a flag left set by a
 * jump out of the runtime (a signal handler that siglongjmps while the runtime was busy) is
 * recognised as stale by spanprof__busy and cleared (sigstack.c). */
extern SPANPROF_TLS uintptr_t spanprof__tls_busy;
struct spanprof__guard {
    int saved_errno;
    uintptr_t busy;
};
static inline __attribute__((always_inline)) struct spanprof__guard spanprof__guard_enter(void)
{
    struct spanprof__guard g = {errno, spanprof__tls_busy};
    spanprof__tls_busy = (uintptr_t)__builtin_frame_address(0);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return g;
}
static inline __attribute__((always_inline)) void spanprof__guard_leave(struct spanprof__guard g)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    spanprof__tls_busy = g.busy;
    errno = g.saved_errno;
}

/* The guard with every signal of this thread held as well, for the rare paths that create what
 * a signal handler's spans would need (start-up, the thread's data, a site's registration, a
 * longer frame array, a histogram, an arena chunk): a signal that comes meanwhile waits, and its
 * handler runs once spanprof__hold_leave has cleared the busy flag, so its spans are recorded
 * instead of being taken for the runtime's own.  Costs two sigprocmask calls (about 0.45 µs on
 * the reference VM), which is why the common cold paths and node creation (calltree.c) do
 * without.  Holds nest; the outermost one must not sit inside a plain guard, or the signals
 * come back while the runtime is still busy.  Always inline, like the guard, so the busy flag
 * holds the caller's frame.  pthread_sigmask leaves errno alone. */
struct spanprof__hold {
    struct spanprof__guard guard;
    sigset_t old;
};
static inline __attribute__((always_inline)) void spanprof__hold_enter(struct spanprof__hold *h)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &h->old);
    h->guard = spanprof__guard_enter();
}
static inline __attribute__((always_inline)) void spanprof__hold_leave(struct spanprof__hold *h)
{
    spanprof__guard_leave(h->guard);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    pthread_sigmask(SIG_SETMASK, &h->old, NULL);
}

/* ---- sigstack.c: signal handlers and their stacks, seen from the cold paths ---- */
/* Whether the runtime is busy on this thread, asked by a span enter or exit whose instrumented
 * function has frame address CFA (its spans are then ignored).  Clears a stale flag: one set in
 * a runtime frame deeper than CFA on the same stack, which the stack has since left.  Callers
 * without a frame address pass 0 (never stale). */
int spanprof__busy_confirm(uintptr_t cfa);
static inline __attribute__((always_inline)) int spanprof__busy(uintptr_t cfa)
{
    return spanprof__tls_busy && spanprof__busy_confirm(cfa);
}
/* 1 when exactly one of the frame addresses A and B lies on this thread's alternate signal stack
 * (sigaltstack): frames of a handler running there and the frames it interrupted. */
int spanprof__across_stacks(uintptr_t a, uintptr_t b);
/* 1 when CFA is on this thread's alternate signal stack. */
int spanprof__on_alt_stack(uintptr_t cfa);

/* ---- thread.c ---- */
/* The calling thread's data (the sentinel before it has any).  Exported under the inline path's
 * versioned name (spanprof.h, SPANPROF_ABI_THREAD), which the plugin's inline code reads. */
extern SPANPROF_TLS SPANPROF_API struct spanprof__thread *spanprof__tls __asm__(SPANPROF_ABI_THREAD);
extern struct spanprof__thread spanprof__sentinel_thread;
/* Fresh data for the calling thread: a recycled one (threadretire.c) or spanprof__thread_map's. */
struct spanprof__thread *spanprof__thread_new(void);
struct spanprof__thread *spanprof__thread_map(void);
struct spanprof__thread *spanprof__thread_attach(void);
void spanprof__thread_settle(struct spanprof__thread *t, uint64_t now);
uint64_t spanprof__thread_open_frames(const struct spanprof__thread *t);
void spanprof__thread_refresh_name(struct spanprof__thread *t);
void spanprof__thread_exit_hook(void *arg);
void spanprof__fork_prepare(void);
void spanprof__fork_parent(void);
void spanprof__fork_child(void);

/* ---- threadretire.c: thread churn ---- */
/* Group cap: threads of further names go to the group named spanprof__other_threads. */
#define SPANPROF_GROUPS_MAX 256
extern const char spanprof__other_threads[];
/* T's thread ended (key destructor, lock held, T->name and end_tick set): merge T into its
 * name's group, take T out of the registry and keep its memory for the next new thread. */
void spanprof__thread_retire(struct spanprof__thread *t);
/* A recycled thread's data, reset (NULL when none is free).  Takes the lock. */
struct spanprof__thread *spanprof__thread_reuse(void);
/* Data no thread uses (never registered: calibrate.c's), reset, kept for the next new thread.
 * Takes the lock. */
void spanprof__thread_discard(struct spanprof__thread *t);
/* Fork child (lock re-initialised): every thread in OLD_REGISTRY but KEEP and every group goes
 * to the free list. */
void spanprof__retire_fork_child(struct spanprof__thread *old_registry,
                                 struct spanprof__thread *keep);

/* Charges a frame's time up to NOW to its node (inclusive) and to its parent's child time.
 * Clamps a negative duration to 0 (cmov).  Shared by the hot exit, repair and settling. */
static inline __attribute__((always_inline)) uint64_t spanprof__charge(struct spanprof__frame *f,
                                                                       uint64_t now)
{
    uint64_t d = now - f->start;
    d = (int64_t)d < 0 ? 0 : d;
    spanprof__count_add(&f->node->total, d);
    spanprof__count_add(&f[-1].node->child, d); /* f > frames[0]: the root is never charged */
    return d;
}

/* Pushes a frame for N, a child of the top frame F's node, onto T's stack and counts the call
 * (at entry, so noreturn functions count too).  Shared by the hot path and the cold one; the
 * caller stores the start timestamp last, so this bookkeeping is not charged to the span.
 *
 * Signal handlers running spans on this thread: the store of top is the commit.  A handler that
 * runs before it sees the old top, pushes its own frame into the same slot and pops it again, so
 * the fields are written a second time after the commit; a handler that runs after it sees the
 * new top and pushes above it, finding the fields already right from the first writes.  (x86
 * keeps the store order; the signal fences keep the compiler's.)  Both writes hit the same line:
 * 4 stores, about a cycle.  The count is one signal-atomic add (counter.h).  What this does not
 * cover: a second signal, after a first one's handler reused the slot, landing in the four
 * stores between the commit and the second write (nested handlers are fine: they finish first). */
static inline __attribute__((always_inline)) struct spanprof__frame *
spanprof__push_frame(struct spanprof__thread *t, struct spanprof__frame *f, struct spanprof__node *n,
                     uintptr_t cfa, uintptr_t ra, uintptr_t fra)
{
    struct spanprof__frame *g = f + 1;
    spanprof__count_add(&n->calls, 1);
    g->node = n;
    g->cfa = cfa;
    g->ra = ra;
    g->fra = fra;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    SPANPROF_PUBLISH(t->top, g);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    g->node = n;
    g->cfa = cfa;
    g->ra = ra;
    g->fra = fra;
    return g;
}

/* ---- stack.c: cold paths of the shadow stack ---- */
void spanprof__enter_cold(struct spanprof_site *site, uintptr_t cfa, uintptr_t ra,
                          uintptr_t fra);
void spanprof__exit_cold(struct spanprof_site *site, uintptr_t cfa, uint64_t now);
/* Whether SITE's activation at CFA has a frame on this thread's stack: the top one (right after
 * its entry), or at its exit one that the exit will close (below frames a longjmp abandoned).
 * 0 for an entry that pushed nothing (parked, ignored) and an exit that will close nothing. */
int spanprof__has_open_frame(const struct spanprof_site *site, uintptr_t cfa);
/* Pops T's top frame, charging its time up to NOW (the repair paths' pop). */
void spanprof__close_top(struct spanprof__thread *t, uint64_t now);
/* Pops T's top frame as abandoned (its exit will never run): the collectors told
 * (frame_abandoned), the frame closed and counted. */
void spanprof__abandon_top(struct spanprof__thread *t, uint64_t now);
/* Ends T's parking: top back at the last recorded frame (the parked entries are the caller's to
 * count). */
void spanprof__unpark(struct spanprof__thread *t);

/* ---- abandoned.c: activations popped by repair, per node ---- */
/* One more activation of N (a node of this thread's tree) was abandoned.  Signal-safe. */
void spanprof__abandoned_count(struct spanprof__node *n);
/* N's abandoned activations so far (0 when none; any thread, no lock). */
uint64_t spanprof__abandoned_of(const struct spanprof__node *n);
/* SRC's count goes to DST (NULL: nowhere) and SRC's becomes 0: SRC's memory is about to be
 * reused.  Under the process lock. */
void spanprof__abandoned_move(struct spanprof__node *dst, struct spanprof__node *src);
/* The same for N and every node below it, counts dropped. */
void spanprof__abandoned_forget_tree(struct spanprof__node *n);
/* In a fork child: the parent's counts are not the child's. */
void spanprof__abandoned_fork_child(void);

/* ---- arena.c: memory that never goes through malloc ---- */
void *spanprof__map(size_t size);
void spanprof__unmap(void *p, size_t size);
/* *BUF (*CAP elements of ELEM bytes, from spanprof__map or NULL) made room for NEED: a mapping
 * twice as big (64 KiB at first) with the contents copied, the old one unmapped.  0 when that
 * would pass MAX elements or memory runs out (*BUF kept).  Async-signal-safe. */
int spanprof__map_grow(void **buf, size_t *cap, size_t need, size_t elem, size_t max);
/* SIZE bytes, zeroed, 64-byte aligned (nodes are one cache line each); NULL when out of memory. */
void *spanprof__arena_alloc(struct spanprof__arena *a, size_t size);
/* Everything allocated from A is zeroed and A starts again at its first chunk, keeping its
 * chunks for the allocations to come. */
void spanprof__arena_rewind(struct spanprof__arena *a);

/* ---- calltree.c ---- */
extern struct spanprof__node spanprof__miss_node;
void spanprof__node_init(struct spanprof__node *n, const struct spanprof_site *site,
                         struct spanprof__node *parent);
/* Empties T's child-lookup cache (every slot back to spanprof__miss_node): for new thread data,
 * and before data whose nodes may be gone or reused serves another thread. */
void spanprof__child_cache_reset(struct spanprof__thread *t);
/* PARENT's child for SITE, created with EXT zeroed bytes behind it if missing (NULL when out of
 * memory).  A node made while spanprof__new_path_wanted is set clears it and calls
 * spanprof__new_path_notify: a reader that looks seldom while the program makes no new call path
 * (the cost budget's looks, collect/budget.c) hears of the next one at once.  The layer that
 * can wake that reader sets the notification; it must be async-signal-safe (a signal handler's
 * spans make nodes too), and errno is kept around it. */
extern uint32_t spanprof__new_path_wanted;
extern void (*spanprof__new_path_notify)(void);
struct spanprof__node *spanprof__tree_child(struct spanprof__thread *t,
                                            struct spanprof__node *parent,
                                            const struct spanprof_site *site, size_t ext);
/* Iterative pre/post-order walk of ROOT's descendants (depth 1 = ROOT's children); no recursion,
 * so 100k-deep trees are fine.  PRE returns non-zero to descend into the node's children. */
typedef int (*spanprof__pre_fn)(struct spanprof__node *n, size_t depth, void *ctx);
typedef void (*spanprof__post_fn)(struct spanprof__node *n, size_t depth, void *ctx);
void spanprof__tree_walk(struct spanprof__node *root, spanprof__pre_fn pre,
                         spanprof__post_fn post, void *ctx);
/* Adds SRC's tree into DST's path by path (nodes created as needed, collectors' node data merged
 * through spanprof__hooks.node_merge); each SRC node's hint is left at its DST counterpart.
 * Returns the calls left out for want of memory. */
uint64_t spanprof__tree_merge(struct spanprof__thread *dst, struct spanprof__thread *src);
static inline uint64_t spanprof__node_self(const struct spanprof__node *n)
{
    uint64_t total = __atomic_load_n(&n->total, __ATOMIC_RELAXED);
    uint64_t child = __atomic_load_n(&n->child, __ATOMIC_RELAXED);
    /* child > total happens while a parent is still open in another thread: clamp. */
    return total > child ? total - child : 0;
}

/* ---- site.c: first sight of a site, and the progress points' hit counters ---- */
/* FRA: the return address of the function whose site it is, 0 when not known (see site.c). */
uint32_t spanprof__site_register(struct spanprof_site *site, uintptr_t fra);
/* Whether SITE, a span, is one that records: spanprof__g.spans unset, or a glob of it names it.
 * A span that is not goes OFF at its first call (and may be patched out before it). */
int spanprof__span_chosen(const struct spanprof_site *site);
/* Under the process lock, for a site seen for the first time: its id (a library loaded again
 * takes back its old one), and its place in the registry. */
void spanprof__site_give_id(struct spanprof_site *site);
/* The registry: every site given an id, indexed by id, *N entries (NULL: none, or unloaded).
 * Read under the process lock. */
struct spanprof_site *const *spanprof__site_registry(size_t *n);
/* The site of ID goes away with its object (siteretire.c, lock held; by id: the site may be
 * unmapped already): out of the registry. */
void spanprof__site_registry_forget(uint32_t id);
/* Under the process lock: the state a valid span records in (FAST, TIMED, COUNT or SLOW), its coz
 * counters looked up.  FRA as for spanprof__site_register. */
uint32_t spanprof__site_span_state(struct spanprof_site *site, uintptr_t fra);

/* ---- siteswitch.c: spans switched on while the program runs ---- */
/* Under the process lock: SITE, a valid span that is OFF, goes MUTED (given an id if it never had
 * one) and is marked switched on; 0 if it is not such a span.  Its points may then jump again. */
int spanprof__site_arm(struct spanprof_site *site);
/* Under the process lock: an armed SITE (MUTED) records from now on. */
void spanprof__site_resume(struct spanprof_site *site);
/* Whether SITE was ever switched on while the program ran: an exit of it without a frame is then
 * a call entered while it was off, not an unmatched exit. */
int spanprof__site_switched_on(const struct spanprof_site *site);
/* Orders sites by name, then file, then first line (for every sorted output). */
int spanprof__site_compare(const struct spanprof_site *a, const struct spanprof_site *b);
/* One progress point: a hit counter of its own, kept for the life of the process (the site's
 * coz_end slot points to it). */
struct spanprof__progress_point {
    uint64_t hits; /* atomic, relaxed */
    const struct spanprof_site *site;
    struct spanprof__progress_point *next; /* registry link, under the process lock */
};
/* The registered progress points, newest first (read with the process lock held). */
extern struct spanprof__progress_point *spanprof__progress_points;

#pragma GCC visibility pop

#endif /* SPANPROF_RECORD_H */
