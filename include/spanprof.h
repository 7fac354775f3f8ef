/* spanprof.h — the public interface of spanprof.
 *
 * Five things live here:
 *  1. struct spanprof_site, the one contract between the GCC plugin (which emits one static,
 *     writable descriptor per instrumented function) and the runtime (which reads its constant
 *     part and owns its slots).  Change its layout only together with SPANPROF_SITE_VERSION.
 *  2. The entry points the plugin's inserted calls target (spans, progress points, the repair
 *     after setjmp-like calls), and the few calls a program may make.
 *  3. Macros that let annotated code build unchanged, and warning-free, without the plugin:
 *     the plugin defines __SPANPROF__, and SPAN / SPAN_NAMED("x") expand to the attribute only
 *     when it is there.
 *  4. SPANPROF_PROGRESS("name"), a coz progress point usable anywhere, with or without the plugin.
 *  5. The inline path's ABI: the few offsets into the runtime's per-thread data that the code
 *     the plugin emits inline reads and writes, behind versioned symbol names (SPANPROF_ABI_*).
 */
#ifndef SPANPROF_H
#define SPANPROF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever struct spanprof_site changes; the runtime ignores sites of other versions
 * (with one warning) rather than misreading them. */
#define SPANPROF_SITE_VERSION 1u

/* Values of spanprof_site.kind. */
#define SPANPROF_KIND_SPAN 0u     /* a span: __spanprof_enter / __spanprof_exit */
#define SPANPROF_KIND_PROGRESS 1u /* a progress point: __spanprof_progress */
#define SPANPROF_KIND_SPAN_BY_OPTION 2u /* a span chosen by a plugin option (all, functions=)
                                         * rather than by its own attribute: the same calls;
                                         * under coz it is no latency point unless asked for */

/* One per instrumented function (and one per progress point), emitted by the plugin into .data.
 * The first six fields are constant and set by the plugin; the rest start as zero and belong to
 * the runtime (they cache per-site state so the hot path needs no lookup). */
struct spanprof_site {
    uint32_t version;    /* SPANPROF_SITE_VERSION of the plugin that emitted it */
    uint32_t kind;       /* SPANPROF_KIND_* */
    const char *name;    /* span or progress point name: the attribute's string, else the
                          * (qualified) function name */
    const char *file;    /* source file of the function, as the compiler saw it */
    uint32_t first_line; /* line of the function's opening */
    uint32_t last_line;  /* line of the function's closing brace */
    /* --- runtime-owned, zero in the object file --- */
    uint32_t state;      /* SPANPROF_STATE_NEW (0) = not yet seen by the runtime;
                          * SPANPROF_STATE_OFF = never call the runtime for this site again;
                          * other values are private (see below) */
    uint32_t id;         /* runtime's index for this site */
    void *coz_begin;     /* cached coz latency counter (begin), or 0;
                          * progress point: cached coz throughput counter, or 0 */
    void *coz_end;       /* cached coz latency counter (end), or 0;
                          * progress point: the runtime's private hit counter */
};

/* The two values of spanprof_site.state that code outside the runtime relies on.
 * The plugin puts a test of the state before each call it inserts into a span or progress point:
 *     if (site.state != SPANPROF_STATE_OFF && &__spanprof_enter != 0)
 *         __spanprof_enter (&site, frame);
 * (the same before the exit and the progress calls), so a program whose recording is off
 * (SPANPROF=0, or a site the runtime rejects) makes no call at all: one load of a static in the
 * same object, one compare, one well-predicted branch.  The runtime writes OFF once: when it
 * first sees the site (at its first call, made because the state was still NEW), or, for a span
 * a cost budget switches off (SPANPROF_BUDGET), once no thread can still be inside it; it never
 * changes OFF afterwards.  Every other state means "call".  The load is a volatile 32-bit load of
 * an aligned field: one instruction, never cached nor hoisted out of a loop by the compiler, and
 * on x86-64 and AArch64 as good as a relaxed atomic load.  A load that still sees NEW after
 * another thread registered the site only makes one more call, which the runtime answers from
 * its own (acquire) read of the state.  The hooks are weak references (see below), hence the
 * second test: an object without the runtime linked in makes no call either. */
#define SPANPROF_STATE_NEW 0u
#define SPANPROF_STATE_OFF 3u

/* Called by code the plugin inserts: enter at function entry, exit on every way out.
 * FRAME is the instrumented function's __builtin_dwarf_cfa(): it names the activation, so the
 * runtime can tell frames a longjmp abandoned from live ones.  Never call these by hand. */
void __spanprof_enter(struct spanprof_site *site, void *frame);
void __spanprof_exit(struct spanprof_site *site, void *frame);

/* Called by code the plugin inserts around every call that may return twice (GCC's
 * returns_twice: setjmp, _setjmp, sigsetjmp, __sigsetjmp, savectx, vfork, getcontext, ...), in
 * every function it compiles, span or not:
 *     depth = __spanprof_setjmp_depth (); setjmp (env); __spanprof_setjmp_return (depth);
 * The first returns the number of entries on this thread's shadow stack (0 for a thread that
 * has entered no span yet; entries parked past the depth cap included; an opaque value that
 * makes the second a no-op when called while the runtime itself is busy on this thread).  The
 * second runs after every return of the call: when a longjmp (or siglongjmp, setcontext) came
 * back, the entries above DEPTH belong to spans jumped out of; they are popped as abandoned
 * (abandoned_frames), their time counted up to now, their trace events ended now.  Neither
 * calls back into the program, changes errno or longjmps.  DEPTH must be set before the call
 * and not changed after it (the plugin's temporary is; a longjmp restores it).  Never call these
 * by hand. */
size_t __spanprof_setjmp_depth(void);
void __spanprof_setjmp_return(size_t depth);

/* Called by code the plugin inserts on every way out of a function marked `progress` (after
 * the span's exit call if the function has both), and by SPANPROF_PROGRESS.  Counts one hit of
 * the progress point SITE and, under coz, one visit of coz's throughput point of that name. */
void __spanprof_progress(struct spanprof_site *site);

/* ---- 5. The inline path's ABI ----
 *
 * In counting recording (SPANPROF=count and SPANPROF=sample: the runtime gives each site the
 * state SPANPROF_STATE_COUNT), in exact recording on its plain path (state SPANPROF_STATE_FAST:
 * timestamps are bare rdtsc, no histogram) and in exact recording with every enter and exit
 * also an event of the thread's trace ring (SPANPROF_TRACE, the flight recorder: state
 * SPANPROF_STATE_TRACE) the plugin records a call itself, inline, without calling the runtime's
 * entry points: on x86-64 and aarch64, unless -fplugin-arg-spanplugin-inline=0, it reads the
 * calling thread's data through the runtime's TLS pointer SPANPROF_ABI_THREAD and
 *  - at entry: when the top frame is alive and not the last slot, and the child of its node for
 *    this site is found (the node's hint, else the thread's child cache), counts the call in the
 *    child and pushes a frame for it, whose start is rdtsc (FAST), the tick SPANPROF_ABI_TRACE_PUSH
 *    returns for the enter event (TRACE) or 0 (COUNT); anything else calls SPANPROF_ABI_ENTER;
 *  - at exit: when the top frame is this activation's (its node's site, its frame address), pops
 *    it, FAST first adding its duration (rdtsc taken before the test, less the start, negative
 *    as 0) to its node's total and to the parent frame's node's child time, TRACE the same with
 *    the tick SPANPROF_ABI_TRACE_PUSH returns for the exit event, called once the test has
 *    passed; anything else calls __spanprof_exit.
 * The stores and their order are the runtime's own (record/record.h: spanprof__push_frame), so a
 * frame pushed inline and one pushed by the runtime are the same.
 *
 * Objects with the inline path reference the names below strongly: they need the runtime at
 * link time, and a runtime whose layout differs (another SPANPROF_ABI_VERSION, hence other names)
 * fails the link with an undefined reference to SPANPROF_ABI_THREAD rather than running wrong.
 * (A runtime of this version that predates SPANPROF_STATE_TRACE fails it on
 * SPANPROF_ABI_TRACE_PUSH; objects that predate it run with this runtime, sending TRACE sites to
 * its entry points, as any state they do not know.)
 * The runtime checks every offset here against its own structures at compile time; change one
 * only together with SPANPROF_ABI_VERSION, which the names carry. */
#define SPANPROF_ABI_VERSION 1
#define SPANPROF__ABI_NAME2(name, version) name #version
#define SPANPROF__ABI_NAME(name, version) SPANPROF__ABI_NAME2(name, version)
/* TLS: struct spanprof__thread *, "__spanprof_thread_abi1" */
#define SPANPROF_ABI_THREAD SPANPROF__ABI_NAME("__spanprof_thread_abi", SPANPROF_ABI_VERSION)
/* void SPANPROF_ABI_ENTER (struct spanprof_site *site, void *frame, uintptr_t entry): the enter
 * of every state but OFF from objects with the inline path; ENTRY is the address of the inline
 * code that called it (it names the entering code, as a call's return address would). */
#define SPANPROF_ABI_ENTER SPANPROF__ABI_NAME("__spanprof_enter_abi", SPANPROF_ABI_VERSION)
/* uint64_t SPANPROF_ABI_TRACE_PUSH (struct spanprof_site *site, uintptr_t exit): pushes the
 * enter (EXIT 0) or exit (EXIT 1) event of SITE into the calling thread's trace ring and returns
 * its tick (a fresh one when the thread has no ring).  The ring's layout stays the runtime's. */
#define SPANPROF_ABI_TRACE_PUSH SPANPROF__ABI_NAME("__spanprof_trace_push_abi", SPANPROF_ABI_VERSION)
#define SPANPROF_STATE_FAST 1u  /* exact, bare rdtsc, no histogram: recorded inline */
#define SPANPROF_STATE_COUNT 4u /* counting: recorded inline */
#define SPANPROF_STATE_TRACE 9u /* FAST, each enter and exit also a trace event: recorded inline */
enum {
    SPANPROF_ABI_THREAD_TOP = 0,          /* struct frame *: the top frame */
    SPANPROF_ABI_THREAD_LIMIT = 8,        /* struct frame *: the last usable frame */
    SPANPROF_ABI_THREAD_CHILD_CACHE = 384,  /* struct node *[1 << SPANPROF_ABI_CHILD_CACHE_BITS] */
    SPANPROF_ABI_CHILD_CACHE_BITS = 10,   /* slot: ((parent ^ (site << 16)) * HASH) >> (64 - BITS) */
    SPANPROF_ABI_FRAME_SIZE = 40,
    SPANPROF_ABI_FRAME_NODE = 0,          /* struct node * */
    SPANPROF_ABI_FRAME_START = 8,         /* uint64_t: 0 when counting */
    SPANPROF_ABI_FRAME_CFA = 16,          /* uintptr_t: the function's frame address */
    SPANPROF_ABI_FRAME_ENTRY = 24,        /* uintptr_t: the entering code */
    SPANPROF_ABI_FRAME_RETURN = 32,       /* uintptr_t: the function's return address */
    SPANPROF_ABI_NODE_SITE = 0,           /* const struct spanprof_site * */
    SPANPROF_ABI_NODE_PARENT = 8,         /* struct node * */
    SPANPROF_ABI_NODE_HINT = 32,          /* struct node *: the child looked up last */
    SPANPROF_ABI_NODE_CALLS = 40,         /* uint64_t: calls, one signal-atomic add each */
    SPANPROF_ABI_NODE_TOTAL = 48,         /* uint64_t: inclusive ticks, one add each */
    SPANPROF_ABI_NODE_CHILD = 56          /* uint64_t: ticks in child spans, one add each */
};
#define SPANPROF_ABI_CHILD_HASH 0x9e3779b97f4a7c15ull

/* ---- 6. Patch points ----
 *
 * On x86-64 and aarch64 (unless -fplugin-arg-spanplugin-patch=0) the guard in front of each
 * enter and exit of a span is reached through one instruction the runtime may rewrite: as
 * compiled, a jump to the guard (x86-64: `e9 rel32`; aarch64: `b`); the runtime turns it into a
 * no-op of the same size (x86-64: `0f 1f 44 00 00`; aarch64: `nop`), which goes straight past
 * the call, only once the site's state is SPANPROF_STATE_OFF, so the two run the same recording.
 * A runtime that does not patch, or may not, leaves the jumps: they run the guard as before.
 * Each point is listed in a note of its object, in a PT_NOTE segment: owner "sp", type
 * SPANPROF_PATCH_NOTE_TYPE, an 8-byte descriptor of two int32_t, the offsets from the first and
 * from the second to the point and to its struct spanprof_site. */
#define SPANPROF_PATCH_NOTE_TYPE 0x53507031 /* "SPp1" */
/* void SPANPROF_ABI_OBJECT_LOADED (void): called once by each object with patch points as the
 * loader runs its initialisers (a hidden function and .init_array entry the plugin adds to every
 * unit, in one COMDAT group, so an object has one), referenced weakly (an object linked without
 * the runtime does not call it).  A runtime started before the object was loaded gives its
 * points what it gave those of the objects loaded at start-up. */
#define SPANPROF_ABI_OBJECT_LOADED SPANPROF__ABI_NAME("__spanprof_object_loaded_abi", SPANPROF_ABI_VERSION)

/* Writes the profile files now (as at process exit) from all threads' data collected so far.
 * Returns 0 on success, -1 if an output could not be written (the reason went to stderr). */
int spanprof_flush(void);

/* Weak references to __spanprof_progress and spanprof_flush for SPANPROF_PROGRESS and
 * SPANPROF_FLUSH: null when the runtime is not linked in, so the macros cost a test and do
 * nothing.  (The plugin's own references are weak too; only a direct call by the program makes
 * one strong.) */
static void spanprof__progress_weak(struct spanprof_site *site)
    __attribute__((weakref("__spanprof_progress")));
static int spanprof__flush_weak(void) __attribute__((weakref("spanprof_flush")));

#ifdef __cplusplus
}
#endif

/* SPANPROF_PROGRESS("name"): a coz throughput progress point at this statement, counted in the
 * profile's "progress" array.  Each use is one static site and a call into the runtime; without
 * coz the call costs a few ns (one atomic add).  NAME must be a string literal.
 * The call is guarded as the plugin guards its own (see SPANPROF_STATE_OFF): not made when the
 * site is off (SPANPROF=0) nor when the runtime is not linked in (the weak reference above), so
 * there is no link dependency.  (A linker running with --as-needed, Debian's default, drops a
 * shared library that is only referenced weakly: link it through pkg-config, whose --libs keeps
 * it, or with -Wl,--no-as-needed before -lspanprof.) */
#define SPANPROF__PROGRESS_CALL(site)                                                  \
    ((*(volatile uint32_t *)&(site)->state != SPANPROF_STATE_OFF && spanprof__progress_weak) \
         ? spanprof__progress_weak(site)                                                  \
         : (void)0)
#define SPANPROF_PROGRESS(name)                                                                  \
    do {                                                                                         \
        static struct spanprof_site spanprof_progress_site_ = {                                  \
            SPANPROF_SITE_VERSION, SPANPROF_KIND_PROGRESS, "" name, __FILE__, __LINE__, __LINE__, \
            0, 0, 0, 0};                                                                         \
        SPANPROF__PROGRESS_CALL(&spanprof_progress_site_);                                       \
    } while (0)

/* Annotation macros.  With the plugin loaded (it defines __SPANPROF__) they are the attribute;
 * without it they are nothing, so the same source builds either way.
 * Define SPANPROF_NO_SHORT_MACROS to keep the names SPAN, SPAN_NAMED, PROGRESS_POINT and
 * PROGRESS_POINT_NAMED free. */
#ifdef __SPANPROF__
#define SPANPROF_SPAN __attribute__((span))
#define SPANPROF_SPAN_NAMED(name) __attribute__((span(name)))
#define SPANPROF_PROGRESS_POINT __attribute__((progress))
#define SPANPROF_PROGRESS_POINT_NAMED(name) __attribute__((progress(name)))
#define SPANPROF_FLUSH() (spanprof__flush_weak ? spanprof__flush_weak() : 0)
#else
#define SPANPROF_SPAN
#define SPANPROF_SPAN_NAMED(name)
#define SPANPROF_PROGRESS_POINT
#define SPANPROF_PROGRESS_POINT_NAMED(name)
#define SPANPROF_FLUSH() 0
#endif

#ifndef SPANPROF_NO_SHORT_MACROS
#define SPAN SPANPROF_SPAN
#define SPAN_NAMED(name) SPANPROF_SPAN_NAMED(name)
#define PROGRESS_POINT SPANPROF_PROGRESS_POINT
#define PROGRESS_POINT_NAMED(name) SPANPROF_PROGRESS_POINT_NAMED(name)
#endif

#endif /* SPANPROF_H */
