/* start.c — start-up and the ABI's writer: reads the environment, switches recording and the
 * collectors on, finds coz, registers the thread-exit key, fork handlers, the process-exit
 * write and the signal handlers (signals.c), and decides when the writer thread (writer.c)
 * starts; spanprof_flush() writes the same files on demand.
 *
 * Start-up is a start stage (record/process.c): it runs once, from the runtime's constructor, or
 * earlier from the first span if another constructor runs spans before it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "collect/budget.h"
#include "collect/collect.h"
#include "lifecycle/lifecycle.h"
#include "common/debuginfo.h"
#include "common/duration.h"
#include "lifecycle/options.h"
#include "record/clock.h"
#include "record/sitepatch.h"
#include "report/report.h"

static struct spanprof__options options;

struct spanprof__outputs spanprof__outputs;

static const char *env_get(const char *name)
{
    return getenv(name);
}

/* A privileged program (setuid, setgid, file capabilities: the kernel's AT_SECURE, glibc's rule
 * for its own LD_* and MALLOC_* variables) runs with an environment its caller chose: every
 * SPANPROF_* variable is ignored and nothing is recorded or written — not even the default
 * folded file, whose directory the caller chooses too. */
static const char *env_none(const char *name)
{
    (void)name;
    return NULL;
}

/* Registered as atexit does it, keyed on this object (__dso_handle), but by hand: an atexit
 * interposed by a tool (ThreadSanitizer's) keys it on no object, and the C library would then
 * call it at exit after the library holding the runtime was unloaded. */
extern void *__dso_handle __attribute__((weak, visibility("hidden")));
int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

static void write_at_exit(void *arg)
{
    (void)arg;
    __atomic_store_n(&spanprof__exit_ran, 1, __ATOMIC_RELEASE); /* see unload.c */
    spanprof__sampler_stop(); /* its last pass done: the write sees every sample */
    if (options.compensate)
        spanprof__calibrate(); /* a second measurement: the lower one stands */
    spanprof__write_final();
}

static void (*collectors_thread_new)(struct spanprof__thread *t);
static int live_on; /* SPANPROF_LIVE: the live socket comes with the first span */

/* A thread's first span.  The first one in the process starts the writer thread when a
 * terminating signal would need it: for the outputs the async-signal-safe writer cannot write
 * (JSON, trace, memory flame graph, pprof).  A program that records nothing never gets it. */
static void thread_new(struct spanprof__thread *t)
{
    if (collectors_thread_new)
        collectors_thread_new(t);
    const struct spanprof__outputs *o = &spanprof__outputs;
    if (spanprof__term_handled && (o->json || o->trace || o->alloc_folded || o->pprof || live_on))
        spanprof__writer_ensure();
    if (live_on)
        spanprof__live_ensure();
}

static void fork_child(void)
{
    spanprof__outputs.image = 0;
    spanprof__ancestry_fork_child();
}

/* A growing comma-separated list of globs. */
struct glob_list {
    char *text;
    size_t len, cap;
    int failed;
};

static void glob_list_add(struct glob_list *l, const char *glob, size_t len)
{
    if (!len || l->failed)
        return;
    if (l->len + len + 2 > l->cap) {
        size_t cap = 2 * (l->len + len + 2);
        char *t = realloc(l->text, cap);
        if (!t) {
            l->failed = 1;
            return;
        }
        l->text = t;
        l->cap = cap;
    }
    if (l->len)
        l->text[l->len++] = ',';
    memcpy(l->text + l->len, glob, len);
    l->len += len;
    l->text[l->len] = 0;
}

static void add_slow_name(const char *glob, size_t len, uint64_t ns, void *arg)
{
    (void)ns;
    glob_list_add(arg, glob, len);
}

/* What start-up patched out in the objects loaded by then, which an object loaded later gets
 * too, as it is loaded (spanprof__object_loaded_abi). */
enum patch_which { PATCH_NONE, PATCH_ALL, PATCH_UNCHOSEN };
static enum patch_which patch_later;
static unsigned long long loads_patched; /* the loader's count of loads the last patching saw */

/* WHICH patched out in every object loaded, LOADS the loader's count read before the walk. */
static void patch_loaded(enum patch_which which, unsigned long long loads)
{
    patch_later = which;
    __atomic_store_n(&loads_patched, loads, __ATOMIC_RELAXED);
    if (which == PATCH_ALL)
        spanprof__sitepatch_recording_off();
    else
        spanprof__sitepatch_unchosen();
}

/* SPANPROF_ABI_OBJECT_LOADED (spanprof.h, section 6): an object with patch points is being
 * loaded, its relocations done and its own code not run yet (the initialiser the plugin adds to
 * it, one for the object).  Loaded after start-up (dlopen), it gets what start-up did to the
 * objects loaded before it: with recording off, or spans SPANPROF_SPANS leaves out, their points
 * become no-ops now.  The loader runs one object's initialisers at a time; at start-up, and for
 * an object's other initialisers, the count of loads has not moved and nothing is walked. */
SPANPROF_API void spanprof__object_loaded_abi(void) __asm__(SPANPROF_ABI_OBJECT_LOADED);
SPANPROF_API void spanprof__object_loaded_abi(void)
{
    if (patch_later == PATCH_NONE)
        return;
    unsigned long long loads = spanprof__sitepatch_loads();
    if (loads == __atomic_load_n(&loads_patched, __ATOMIC_RELAXED))
        return;
    struct spanprof__guard guard = spanprof__guard_enter();
    patch_loaded(patch_later, loads);
    spanprof__guard_leave(guard);
}

/* SPANPROF_SPANS: the spans it names record, and so do those the other variables name (a name
 * given to SPANPROF_SLOW that never recorded would never be captured); the rest are OFF for
 * good, patched out now in the objects loaded so far. */
static void choose_spans(const struct spanprof__options *o)
{
    if (!o->spans)
        return;
    struct glob_list l = {0};
    glob_list_add(&l, o->spans, strlen(o->spans));
    if (o->slow)
        spanprof__slow_rules(o->slow, add_slow_name, &l);
    if (o->coz_progress)
        glob_list_add(&l, o->coz_progress, strlen(o->coz_progress));
    if (o->coz_latency)
        glob_list_add(&l, o->coz_latency, strlen(o->coz_latency));
    if (l.failed) {
        free(l.text);
        fprintf(stderr, "spanprof: warning: SPANPROF_SPANS: no memory for its names; every "
                        "span records\n");
        return;
    }
    spanprof__g.spans = l.text ? l.text : "";
    patch_loaded(PATCH_UNCHOSEN, spanprof__sitepatch_loads());
}

static void start(void)
{
    /* Spans run by anything called here (dlsym → malloc hooks) are ignored. */
    struct spanprof__guard guard = spanprof__guard_enter();
    struct spanprof__options *o = &options;
    int privileged = getauxval(AT_SECURE) != 0;
    spanprof__options_load(o, privileged ? env_none : env_get, stderr);
    if (privileged) {
        o->mode = SPANPROF_MODE_OFF;
        o->folded = o->alloc_folded = NULL; /* the defaults: relative to the caller's directory */
    }
    else
        spanprof__options_warn_unknown(environ, stderr);
    /* SPANPROF=sample counts as count mode does; its time comes from the sampler thread. */
    spanprof__flags.counting = o->mode == SPANPROF_MODE_COUNT || o->mode == SPANPROF_MODE_SAMPLE;
    spanprof__clock_init();
    if (spanprof__flags.counting)
        spanprof__clock_disable();
    spanprof__mark_start();
    spanprof__outputs = (struct spanprof__outputs){
        .folded = o->folded,
        .json = o->json,
        .trace = o->trace,
        .pprof = o->pprof,
        .threads_root = o->threads,
        .file_line = o->file_line,
        .idle = o->idle,
        .announce = !o->quiet,
        .folded_limits = {o->folded_max_bytes, o->folded_max_depth, o->folded_recursion},
        .folded_cpu = o->folded_value && (o->mode == SPANPROF_MODE_SAMPLE || o->cpu),
    };
    if (o->folded_value && !spanprof__outputs.folded_cpu && o->mode != SPANPROF_MODE_OFF)
        fprintf(stderr, "spanprof: warning: SPANPROF_FOLDED_VALUE=cpu needs CPU time "
                        "(SPANPROF=sample or SPANPROF_CPU=1); the folded stacks hold wall time\n");
    /* Recording off by the environment, which any other copy of the runtime in the process
     * reads too: no span of any object will ever record, so their patch points go (the copy
     * that finds recording off for another reason, a second runtime, leaves the others').  A
     * privileged program's text is left as it is, and its stderr without a word from us. */
    if (o->mode == SPANPROF_MODE_OFF && !privileged)
        patch_loaded(PATCH_ALL, spanprof__sitepatch_loads());
    if (o->mode != SPANPROF_MODE_OFF) {
        /* Present only when the program runs under `coz run` (libcoz preloaded). */
        spanprof__g.coz_get = (spanprof__coz_get_fn)dlsym(RTLD_DEFAULT, "_coz_get_counter");
        spanprof__g.coz_progress = o->coz_progress;
        spanprof__g.coz_latency = o->coz_latency;
        choose_spans(o);
        if (spanprof__g.coz_get)
            spanprof__warn_debug_info_for_coz(stderr);
        spanprof__check_names(o, stderr);
        int flight = spanprof__flight_setup(o, spanprof__flags.counting);
        /* A histogram holds each call's duration: counting modes take no timestamps per call
         * (sample mode's time comes from the sampler), and taking them would cost what exact
         * mode does. */
        int histogram = o->histogram && !spanprof__flags.counting;
        if (o->histogram && !histogram)
            fprintf(stderr, "spanprof: warning: SPANPROF_HISTOGRAM needs each call's duration, "
                            "which SPANPROF=%s does not measure; no histograms (exact mode, "
                            "SPANPROF=1, has them)\n",
                    o->mode == SPANPROF_MODE_SAMPLE ? "sample" : "count");
        /* Before any node exists: fixes the per-node data layout. */
        spanprof__collectors_start(&(struct spanprof__collect_settings){
            .histogram = histogram,
            .cpu = o->cpu,
            .alloc = o->alloc,
            .alloc_stacks = o->alloc_stacks,
            .alloc_sample = o->alloc_sample,
            .trace_buffer = o->trace ? o->trace_buffer : flight ? o->flight_bytes : 0,
            .sample_hz = o->mode == SPANPROF_MODE_SAMPLE ? (uint32_t)o->sample_hz : 0,
            .budget = o->budget,
        });
        if (spanprof__collect.alloc_stacks)
            spanprof__outputs.alloc_folded = o->alloc_folded;
        /* A copy of the runtime unloaded earlier in this process left its profile: go on with
         * it (before the ancestry, which would take that copy for a second runtime). */
        spanprof__handover_adopt(o->handover, &spanprof__outputs);
        if (spanprof__ancestry_start(o->ancestor, &spanprof__outputs) &&
            pthread_key_create(&spanprof__g.key, spanprof__thread_exit_hook) == 0) {
            pthread_atfork(spanprof__fork_prepare, spanprof__fork_parent, spanprof__fork_child);
            pthread_atfork(NULL, NULL, fork_child);
            spanprof__writer_setup(o->dump_interval);
            live_on = spanprof__live_setup(o->live);
            spanprof__exec_start();
            spanprof__dlclose_start();
            __cxa_atexit(write_at_exit, NULL, &__dso_handle ? __dso_handle : NULL);
            collectors_thread_new = spanprof__hooks.thread_new;
            spanprof__hooks.thread_new = thread_new;
            spanprof__signals_start(o->dump_signal);
            spanprof__budget_start(o->budget); /* before the writer thread, which runs it */
            /* Dumps on a signal or a timer need the writer from the start. */
            if (o->dump_signal || o->dump_interval > 0 || flight || o->budget > 0)
                spanprof__writer_ensure();
            if (spanprof__collect.sample_hz)
                spanprof__sampler_setup();
            if (o->compensate)
                spanprof__calibrate();
            __atomic_store_n(&spanprof__flags.recording, 1, __ATOMIC_RELEASE);
        }
    }
    spanprof__guard_leave(guard);
}
SPANPROF_START_STAGE(start);

SPANPROF_API int spanprof_flush(void)
{
    spanprof__start();
    return spanprof__write_serial();
}
