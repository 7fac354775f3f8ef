/* internal.h — declarations shared by the runtime's source files (never installed).
 *
 * Data model: each thread owns a shadow stack (array of frames, frames[0] a root sentinel) and a
 * call tree (one node per distinct call path).  Only the owning thread writes its stack and tree;
 * the output code reads every thread's tree (racy but benign: 64-bit counters, nodes published
 * with release stores).  Thread data lives in mmap'd memory that is never freed while the
 * process runs, so it outlives its thread and can be written at process exit.
 */
#ifndef SPANPROF_INTERNAL_H
#define SPANPROF_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

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

/* Version of the output formats (the JSON "version" field). */
#define SPANPROF_FORMAT_VERSION 1

/* Default maximum shadow-stack depth per thread; deeper calls are counted (overflow_calls) but
 * not recorded.  1 Mi frames = 32 MiB of address space, only touched as the stack grows. */
#define SPANPROF_MAX_DEPTH_DEFAULT ((size_t)1 << 20)
/* Folded stacks deeper than this are cut: the rest of the subtree's self time is reported on a
 * line ending in the frame "[truncated]" (keeps the file linear in the number of nodes). */
#define SPANPROF_FOLDED_MAX_DEPTH 1024

/* Values of spanprof_site.state.  FAST is the only value the hot path accepts without a call:
 * one compare covers "not seen yet", "extras on (coz, resources, trace)" and "ignored /
 * recording off". */
enum {
    SPANPROF__SITE_NEW = 0,  /* not seen yet: register it (cold path) */
    SPANPROF__SITE_FAST = 1, /* registered, recording on, no coz counters */
    SPANPROF__SITE_SLOW = 2, /* registered, recording on, and something beyond the fast path:
                              * coz counters (coz_begin/coz_end), CPU/allocation tracking
                              * (resources.c) or tracing (trace.c) */
    SPANPROF__SITE_OFF = 3,  /* ignored: wrong version/kind, or recording off (SPANPROF=0) */
    SPANPROF__SITE_COUNT = 4, /* registered, counting only (SPANPROF=count), no coz counters */
};

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

/* One shadow-stack entry. */
struct spanprof__frame {
    struct spanprof__node *node;
    uint64_t start; /* timestamp (ticks) of entry, or of the last settle */
    uintptr_t cfa;  /* the instrumented function's canonical frame address (from the plugin) */
    uintptr_t ra;   /* return address of the enter call: identifies the entering code */
    uintptr_t fra;  /* the instrumented function's own return address (where it returns to) */
};

/* Bump allocator over mmap'd chunks (never freed). */
struct spanprof__arena {
    char *cur, *end;
};

struct spanprof__thread {
    /* --- hot: read on every enter/exit --- */
    struct spanprof__frame *top;   /* current top frame (frames[0] when nothing is open) */
    struct spanprof__frame *limit; /* last usable slot: top == limit means "grow first" */
    struct spanprof__hist_table *hists; /* SPANPROF_HISTOGRAM: histograms by site id, read on
                                         * exit (histogram.h); NULL when off */
    /* --- cold --- */
    struct spanprof__frame *frames;
    size_t capacity;                  /* frames allocated */
    struct spanprof__frame *parked_top; /* real top while entries are parked (see stack.c) */
    uint64_t park_depth;              /* entries counted but not recorded */
    struct spanprof__frame park_frame;  /* top while parked: cfa 0 and a site-less node send every
                                         * enter/exit to the cold path */
    struct spanprof__node root;
    struct spanprof__arena arena;
    struct spanprof__thread *next;    /* global registry link (under spanprof__g.lock) */
    pid_t tid;
    int exited;                       /* its pthread ended (data kept) */
    uint64_t open_at_exit;            /* frames open when it ended */
    uint64_t abandoned;               /* frames popped by repair (longjmp, noreturn) */
    uint64_t unmatched;               /* exits that matched no open frame */
    uint64_t overflow;                /* entries not recorded: depth cap or out of memory */
    char name[64];
    struct spanprof__res_thread *res; /* resource profile's per-frame data, or NULL (resources.c) */
    struct spanprof__trace_ring *trace; /* SPANPROF_TRACE ring (trace.h), or NULL */
};

/* Pushes a frame for N, a child of the top frame F's node, onto T's stack and counts the call
 * (at entry, so noreturn functions count too).  Shared by the hot path and the cold one; the
 * caller stores the start timestamp last, so this bookkeeping is not charged to the span.
 * A signal handler running spans on this thread sees either the old or the new top, never a
 * half-written frame: compiler barrier only, x86 keeps the store order. */
static inline __attribute__((always_inline)) struct spanprof__frame *
spanprof__push_frame(struct spanprof__thread *t, struct spanprof__frame *f, struct spanprof__node *n,
                     uintptr_t cfa, uintptr_t ra, uintptr_t fra)
{
    n->calls++;
    f[1].node = n;
    f[1].cfa = cfa;
    f[1].ra = ra;
    f[1].fra = fra;
    __atomic_signal_fence(__ATOMIC_RELEASE);
    t->top = f + 1;
    return f + 1;
}

/* ---- env.c ---- */
struct spanprof__config {
    int enabled;        /* SPANPROF != 0 */
    int counting;       /* SPANPROF=count: calls per stack, no timestamps */
    int threads;        /* SPANPROF_THREADS */
    int file_line;      /* SPANPROF_FILE_LINE */
    const char *folded; /* SPANPROF_FOLDED pattern, NULL = no folded output */
    const char *json;   /* SPANPROF_JSON pattern, NULL = no JSON output */
    const char *trace;  /* SPANPROF_TRACE pattern, NULL = no trace (see trace.c) */
    size_t trace_buffer; /* SPANPROF_TRACE_BUFFER in bytes per thread */
};
#define SPANPROF_FOLDED_DEFAULT "spanprof.folded"
typedef const char *(*spanprof__getenv_fn)(const char *name);
void spanprof__config_load(struct spanprof__config *c, spanprof__getenv_fn get, FILE *err);
/* A 0/1 variable VAR: unset gives DEF; any other value one warning line on ERR and DEF. */
int spanprof__env_bool(const char *var, int def, spanprof__getenv_fn get, FILE *err);
void spanprof__config_warn_unknown(char *const *env, FILE *err);

/* ---- path.c ---- */
int spanprof__path_valid(const char *pattern);
int spanprof__path_expand(const char *pattern, long pid, int append_pid, char *out, size_t size);

/* ---- init.c: process-wide state ---- */
struct spanprof__global {
    pthread_mutex_t lock;              /* registry, site registration, output */
    struct spanprof__config config;
    int recording;                     /* SPANPROF != 0 and init succeeded */
    int fork_child;                    /* this process is a fork child of a recording process */
    spanprof__coz_get_fn coz_get;      /* _coz_get_counter, or NULL without coz */
    struct spanprof__thread *threads;  /* registry: all threads that entered a span */
    uint32_t next_site_id;
    uint64_t unmatched_no_thread;      /* exits in threads that never entered a span (atomic) */
    pthread_key_t key;                 /* destructor captures name/time at thread exit */
    uint64_t start_mono_ns;            /* for wall_ns */
    int64_t start_real_sec, start_real_nsec; /* for start_time */
};
extern struct spanprof__global spanprof__g;
void spanprof__init(void);
void spanprof__lock(void);
void spanprof__unlock(void);

/* ---- thread.c ---- */
extern SPANPROF_TLS struct spanprof__thread *spanprof__tls;
extern SPANPROF_TLS int spanprof__tls_busy; /* inside the runtime: ignore spans (re-entry guard) */
extern struct spanprof__thread spanprof__sentinel_thread;
struct spanprof__thread *spanprof__thread_new(void);
struct spanprof__thread *spanprof__thread_attach(void);
void spanprof__thread_settle(struct spanprof__thread *t, uint64_t now);
uint64_t spanprof__thread_open_frames(const struct spanprof__thread *t);
void spanprof__thread_refresh_name(struct spanprof__thread *t);
void spanprof__thread_exit_hook(void *arg);
void spanprof__fork_prepare(void);
void spanprof__fork_parent(void);
void spanprof__fork_child(void);

/* ---- stack.c: cold paths of the shadow stack ---- */
extern size_t spanprof__max_depth;
void spanprof__enter_cold(struct spanprof_site *site, uintptr_t cfa, uintptr_t ra,
                          uintptr_t fra);
void spanprof__exit_cold(struct spanprof_site *site, uintptr_t cfa, uint64_t now);
void spanprof__close_top(struct spanprof__thread *t, uint64_t now);

/* ---- calltree.c ---- */
extern struct spanprof__node spanprof__miss_node;
void *spanprof__arena_alloc(struct spanprof__arena *a, size_t size);
void *spanprof__map(size_t size);
void spanprof__unmap(void *p, size_t size);
void spanprof__node_init(struct spanprof__node *n, const struct spanprof_site *site,
                         struct spanprof__node *parent);
struct spanprof__node *spanprof__tree_child(struct spanprof__thread *t,
                                            struct spanprof__node *parent,
                                            const struct spanprof_site *site);
/* Iterative pre/post-order walk of ROOT's descendants (depth 1 = ROOT's children); no recursion,
 * so 100k-deep trees are fine.  PRE returns non-zero to descend into the node's children. */
typedef int (*spanprof__pre_fn)(struct spanprof__node *n, size_t depth, void *ctx);
typedef void (*spanprof__post_fn)(struct spanprof__node *n, size_t depth, void *ctx);
void spanprof__tree_walk(struct spanprof__node *root, spanprof__pre_fn pre,
                         spanprof__post_fn post, void *ctx);
static inline uint64_t spanprof__node_self(const struct spanprof__node *n)
{
    uint64_t total = __atomic_load_n(&n->total, __ATOMIC_RELAXED);
    uint64_t child = __atomic_load_n(&n->child, __ATOMIC_RELAXED);
    /* child > total happens while a parent is still open in another thread: clamp. */
    return total > child ? total - child : 0;
}

/* ---- site.c ---- */
uint32_t spanprof__site_register(struct spanprof_site *site);

/* ---- progress.c ---- */
uint32_t spanprof__progress_register_locked(struct spanprof_site *site);
struct json_object *spanprof__progress_json(void);

/* ---- debuginfo.c ---- */
const char *spanprof__debug_info_problem(const char *path);
void spanprof__warn_debug_info_for_coz(FILE *err);

/* ---- aggregate.c: what the writers print ---- */
/* A consistent set of threads to write, plus how to print them. */
struct spanprof__view {
    struct spanprof__thread *const *threads;
    size_t nthreads;
    double ns_per_tick;
    int threads_root; /* SPANPROF_THREADS */
    int file_line;    /* SPANPROF_FILE_LINE */
    int counting;     /* SPANPROF=count: folded values are calls, not ns */
};
struct spanprof__site_stats {
    const struct spanprof_site *site;
    uint64_t calls;
    uint64_t total;  /* ticks, outermost activations only (recursion not double counted) */
    uint64_t self;   /* ticks */
    uint64_t max_depth; /* deepest recursion of this site on one stack */
    uint64_t active;    /* walk state */
};
struct spanprof__anomalies {
    uint64_t abandoned, unmatched, open, overflow;
};
/* Per-site totals over all threads of V, sorted by name, file, line.  Returns a malloc'd array
 * (count in *n), or NULL with *n == 0 when empty or out of memory. */
struct spanprof__site_stats *spanprof__aggregate_sites(const struct spanprof__view *v, size_t *n);
uint64_t spanprof__thread_calls(const struct spanprof__thread *t);
void spanprof__anomalies(const struct spanprof__view *v, struct spanprof__anomalies *a);
uint64_t spanprof__ticks_to_ns(const struct spanprof__view *v, uint64_t ticks);
const char *spanprof__thread_label(const struct spanprof__thread *t, char *buf, size_t size);

/* ---- folded.c ---- */
int spanprof__folded_write(FILE *f, const struct spanprof__view *v);

/* ---- json.c ---- */
struct spanprof__json_meta {
    long pid;
    const char *program;
    const char *start_time; /* ISO 8601 UTC */
    uint64_t wall_ns;
    const char *clock;      /* "tsc" or "monotonic" */
    uint64_t extra_unmatched; /* exits seen in threads with no data */
};
struct json_object;
struct json_object *spanprof__json_build(const struct spanprof__view *v,
                                         const struct spanprof__json_meta *m);
int spanprof__json_write(FILE *f, const struct spanprof__view *v,
                         const struct spanprof__json_meta *m);

/* ---- output.c ---- */
int spanprof__write_all(void);

#pragma GCC visibility pop

#endif /* SPANPROF_INTERNAL_H */
