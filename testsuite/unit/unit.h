/* unit.h — helpers shared by the runtime's unit tests (Check). */
#ifndef SPANPROF_UNIT_H
#define SPANPROF_UNIT_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "collect/collect.h"
#include "lifecycle/lifecycle.h"
#include "lifecycle/options.h"
#include "record/record.h"
#include "report/report.h"

/* A site as the plugin would emit it. */
#define UNIT_SITE(var, nm)                                                                      \
    static struct spanprof_site var = {SPANPROF_SITE_VERSION, SPANPROF_KIND_SPAN, nm, "unit.c", \
                                       __LINE__, __LINE__ + 1, 0, 0, NULL, NULL}

/* A non-inlined span function shaped like the plugin's output: enter, body, exit. */
#define UNIT_SPAN_FN(fn, site, body)                                                            \
    static __attribute__((noinline)) void fn(void)                                              \
    {                                                                                           \
        __spanprof_enter(&site, __builtin_dwarf_cfa());                                         \
        body;                                                                                   \
        __asm__ volatile("" ::: "memory");                                                      \
        __spanprof_exit(&site, __builtin_dwarf_cfa());                                          \
    }

/* The configuration parsers read the environment through a function; tests hand them
 * unit_fake_getenv, which looks names up in unit_fake_env (a NULL-terminated name/value list). */
extern const char *const *unit_fake_env;
const char *unit_fake_getenv(const char *name);

/* Runs LOAD(CONFIG, unit_fake_getenv, stream) with ENV as the environment and evaluates to what
 * it wrote to the stream (its warnings; malloc'd, "" when none). */
#define UNIT_LOAD_CONFIG(load, config, env)                                                     \
    ({                                                                                          \
        char *unit_buf_ = NULL;                                                                 \
        size_t unit_len_ = 0;                                                                   \
        FILE *unit_err_ = open_memstream(&unit_buf_, &unit_len_);                               \
        unit_fake_env = (env);                                                                  \
        load((config), unit_fake_getenv, unit_err_);                                            \
        fclose(unit_err_);                                                                      \
        unit_buf_;                                                                              \
    })

Suite *calltree_suite(void);
Suite *childcache_suite(void);
Suite *folded_suite(void);
Suite *folded_stream_suite(void);
Suite *json_suite(void);
Suite *env_suite(void);
Suite *path_suite(void);
Suite *longjmp_suite(void);
Suite *deep_suite(void);
Suite *thread_suite(void);
Suite *output_suite(void);
Suite *progress_suite(void);
Suite *elfsection_suite(void);
Suite *coz_suite(void);
Suite *histogram_suite(void);
Suite *trace_suite(void);
Suite *pprof_suite(void);
Suite *setjmp_suite(void);
Suite *idle_suite(void);
Suite *sample_suite(void);
Suite *retire_suite(void);
Suite *compensate_suite(void);
Suite *flight_suite(void);
Suite *budget_suite(void);

/* Tracing on with rings of BYTES per thread for threads that get their data from now on (0: off),
 * as start-up sets it up for SPANPROF_TRACE; no trace file is written. */
void unit_tracing(size_t bytes);

/* The writers' sample tree, for thread NAME/TID (exact values: 1 ns per tick):
 * main (1 call, 100 ticks, 70 in children) -> work (2, 50; 20) -> io;read (4, 20);
 * main -> zero (1, 20; 20: self 0, still a line).  The sites are unit_sa, _sb, _sc, _sz. */
extern struct spanprof_site unit_sa, unit_sb, unit_sc, unit_sz;
struct spanprof__thread *unit_tree1(const char *name, long tid);

/* Child of PARENT for SITE, or NULL. */
struct spanprof__node *unit_child(struct spanprof__node *parent, const struct spanprof_site *site);
/* This thread's data (fails the test if it has none). */
struct spanprof__thread *unit_self(void);
/* Depth of this thread's shadow stack. */
size_t unit_depth(void);
/* A view of the given threads with ns_per_tick = 1, so values are exact ticks. */
struct spanprof__view unit_view(struct spanprof__thread **ts, size_t n);
/* Folded output of V as a malloc'd string. */
char *unit_folded(const struct spanprof__view *v);
/* Redirects stderr to a temporary file until unit_stderr_end, which returns what was written
 * (malloc'd). */
void unit_stderr_begin(void);
char *unit_stderr_end(void);
/* Hand-built node: child of PARENT for SITE with the given counters. */
struct spanprof__node *unit_node(struct spanprof__thread *t, struct spanprof__node *parent,
                                 const struct spanprof_site *site, uint64_t calls, uint64_t total,
                                 uint64_t child);

/* The state a span site gets in timed recording: FAST where the plugin's inline path may record
 * it (bare rdtsc, no histogram), TIMED otherwise (site.c). */
#define UNIT_TIMED_STATE                                                                      \
    (spanprof__flags.hot_tsc && !spanprof__flags.histogram ? SPANPROF__SITE_FAST             \
                                                           : SPANPROF__SITE_TIMED)

#endif
