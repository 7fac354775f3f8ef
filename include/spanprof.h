/* spanprof.h — the public interface of spanprof.
 *
 * Three things live here:
 *  1. struct spanprof_site, the one contract between the GCC plugin (which emits one static,
 *     writable descriptor per instrumented function) and the runtime (which reads its constant
 *     part and owns its slots).  Change its layout only together with SPANPROF_SITE_VERSION.
 *  2. The entry points the plugin's inserted calls target, and the few calls a program may make.
 *  3. Macros that let annotated code build unchanged, and warning-free, without the plugin:
 *     the plugin defines __SPANPROF__, and SPAN / SPAN_NAMED("x") expand to the attribute only
 *     when it is there.
 */
#ifndef SPANPROF_H
#define SPANPROF_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever struct spanprof_site changes; the runtime ignores sites of other versions
 * (with one warning) rather than misreading them. */
#define SPANPROF_SITE_VERSION 1u

/* Values of spanprof_site.kind. */
#define SPANPROF_KIND_SPAN 0u

/* One per instrumented function, emitted by the plugin into .data.
 * The first six fields are constant and set by the plugin; the rest start as zero and belong to
 * the runtime (they cache per-site state so the hot path needs no lookup). */
struct spanprof_site {
    uint32_t version;    /* SPANPROF_SITE_VERSION of the plugin that emitted it */
    uint32_t kind;       /* SPANPROF_KIND_* */
    const char *name;    /* span name: the attribute's string, else the (qualified) function name */
    const char *file;    /* source file of the function, as the compiler saw it */
    uint32_t first_line; /* line of the function's opening */
    uint32_t last_line;  /* line of the function's closing brace */
    /* --- runtime-owned, zero in the object file --- */
    uint32_t state;      /* 0 = not yet seen by the runtime; other values are private */
    uint32_t id;         /* runtime's index for this site */
    void *coz_begin;     /* cached coz latency counter (begin), or 0 */
    void *coz_end;       /* cached coz latency counter (end), or 0 */
};

/* Called by code the plugin inserts: enter at function entry, exit on every way out.
 * FRAME is the instrumented function's __builtin_dwarf_cfa(): it names the activation, so the
 * runtime can tell frames a longjmp abandoned from live ones.  Never call these by hand. */
void __spanprof_enter(struct spanprof_site *site, void *frame);
void __spanprof_exit(struct spanprof_site *site, void *frame);

/* Writes the profile files now (as at process exit) from all threads' data collected so far.
 * Returns 0 on success, -1 if an output could not be written (the reason went to stderr). */
int spanprof_flush(void);

#ifdef __cplusplus
}
#endif

/* Annotation macros.  With the plugin loaded (it defines __SPANPROF__) they are the attribute;
 * without it they are nothing, so the same source builds either way.
 * Define SPANPROF_NO_SHORT_MACROS to keep the names SPAN and SPAN_NAMED free. */
#ifdef __SPANPROF__
#define SPANPROF_SPAN __attribute__((span))
#define SPANPROF_SPAN_NAMED(name) __attribute__((span(name)))
#define SPANPROF_FLUSH() spanprof_flush()
#else
#define SPANPROF_SPAN
#define SPANPROF_SPAN_NAMED(name)
#define SPANPROF_FLUSH() 0
#endif

#ifndef SPANPROF_NO_SHORT_MACROS
#define SPAN SPANPROF_SPAN
#define SPAN_NAMED(name) SPANPROF_SPAN_NAMED(name)
#endif

#endif /* SPANPROF_H */
