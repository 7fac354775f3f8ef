/* tool.h — internal declarations shared by the files of the spanprof command-line tool.
 *
 * Not installed and not part of the runtime's ABI (that is include/spanprof.h): this header only
 * ties together tools/spanprof.c (the command line) and the files that do one job each for it
 * (reading profiles, coz's output, the causal table, reports, merging, pages, utilities). */
#ifndef SPANPROF_TOOL_H
#define SPANPROF_TOOL_H

#include <json-c/json.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report/outfile.h"

/* The release, from configure.ac's AC_INIT (the Makefile passes it). */
#ifndef SPANPROF_VERSION
#error "SPANPROF_VERSION comes from the build (configure.ac's AC_INIT): build with make"
#endif

/* ---- the tool's output files (output.c) ---- */

/* An output being written: open with output_open, write to the stream, end with output_close. */
struct tool_output {
    const char *shown;             /* the path as given, for messages */
    char path[PATH_MAX];           /* what is written: the path, or its link's target */
    struct spanprof__outfile file;
    FILE *f;
};
/* A stream to PATH's temporary file; NULL after "cannot write 'PATH': REASON" on stderr. */
FILE *output_open(struct tool_output *o, const char *path);
/* Puts the file in place when FAILED is 0 and every write succeeded; otherwise removes it,
 * leaving whatever was at the path as it was.  0, or -1 after "cannot write 'PATH': REASON"
 * (REASON from errno when FAILED). */
int output_close(struct tool_output *o, int failed);

/* Exit statuses: 1 for a failure while doing the work (unreadable or bad input), 2 for a command
 * line we do not understand — the split getopt-style tools (grep, diff) use. */
enum { EXIT_BAD_INPUT = 1, EXIT_USAGE = 2 };

/* The command line (spanprof.c): "spanprof: " FMT (with ARG), the running command's usage and
 * where its help is, on stderr; returns EXIT_USAGE.  tool_getopt_error words getopt_long's
 * complaint CH (optstrings start with ':') the same way. */
int tool_usage_error(const char *fmt, const char *arg);
int tool_getopt_error(int ch, char **argv);
/* --limit's value: a whole number of spans, 0 meaning all.  0, or -1 when TEXT is not one. */
int tool_parse_limit(const char *text, long *limit);

/* ---- JSON profile (json_profile.c) ---- */

/* Optional per-span figures (max_depth, the resource profile's fields), each present or not.
 * MERGE_SUM: a count or a time that adds up across processes; MERGE_MAX: a maximum (exact when
 * merged as the largest); MERGE_DROP: a quantile, which cannot be computed from other quantiles,
 * so a merged profile leaves it out. */
enum merge_rule { MERGE_SUM, MERGE_MAX, MERGE_DROP };
enum span_extra {
    X_MAX_DEPTH, X_P50, X_P90, X_P99, X_MAX_NS, X_CPU_USER, X_CPU_SYSTEM,
    X_ALLOCS, X_ALLOC_BYTES, X_FREES, X_FREE_BYTES, X_ALLOCS_INCL, X_ALLOC_BYTES_INCL,
    X_FREES_INCL, X_FREE_BYTES_INCL, X_LIVE_BLOCKS, X_LIVE_BYTES, X_PEAK_LIVE_BYTES,
    X_CPU_TOTAL, X_CPU_SELF, X_SAMPLES, X_CPU,
    NEXTRA
};
struct span_extra_field {
    const char *key;
    enum merge_rule rule;
};
extern const struct span_extra_field span_extras[NEXTRA];

struct sp_span {
    char *name, *file;
    long line, last_line;
    uint64_t calls, total_ns, self_ns;
    uint64_t extra[NEXTRA];
    uint32_t has_extra;          /* bit X set: extra[X] was in the profile */
};

struct sp_progress {
    char *name, *file;           /* file NULL when absent */
    long line;
    uint64_t hits;
};

/* The run information of one process; a merged profile lists those of every process in it. */
struct sp_process {
    char *program, *start_time, *clock;   /* NULL when absent */
    long long pid, thread_count;          /* -1 when absent */
    uint64_t wall_ns;
    int has_wall;
    int sampled;                          /* "mode": "sample" */
    uint64_t sample_hz;                   /* its rate, 0 when absent */
};

struct sp_profile {
    const char *path;            /* as given on the command line, for messages */
    char *program, *start_time, *clock;   /* NULL when absent */
    long long pid, thread_count;          /* -1 when absent */
    uint64_t wall_ns;
    int has_wall;
    uint64_t sample_hz;                   /* SPANPROF=sample's rate, 0 when absent (or, merged,
                                           * when the processes' rates differ) */
    int sampled;                          /* "mode": "sample": times are sampled estimates */
    double call_ns;                       /* "compensation"'s call_ns: the cost per span call
                                           * taken out of the times, 0 when absent */
    char *compensation_failed;            /* "compensation"'s "failed": why that cost could not
                                           * be measured (times as recorded), NULL when absent */
    struct sp_span *spans;
    size_t nspans;
    struct sp_progress *progress;         /* the optional top-level "progress" array */
    size_t nprogress;
    int has_progress;
    uint64_t abandoned_frames, unmatched_exits, open_frames, overflow_calls;
    struct sp_process *procs;             /* the "processes" array of a merged profile */
    size_t nprocs;
    int merged;                           /* it had one */
    int no_calls;                         /* from folded stacks: no calls, files or lines */
};

/* Loads PATH; on any problem prints one "spanprof: ..." line and returns -1. */
int sp_profile_load(const char *path, struct sp_profile *out);
void sp_profile_free(struct sp_profile *p);

/* Folded stacks as a profile: self and total per frame name (folded_profile.c); or, by its
 * first byte, a JSON profile (sp_profile_load) or folded stacks. */
int sp_profile_load_folded(const char *path, struct sp_profile *out);
int sp_profile_load_any(const char *path, struct sp_profile *out);

/* ---- reading large JSON a value at a time (jsonstream.c) ---- */

struct jstream {
    const char *path;
    FILE *f;
    json_tokener *tok;
    char buf[65536];
    size_t pos, len;             /* unread bytes: buf[pos..len) */
    unsigned long long offset;   /* file offset of buf[pos] */
    size_t line, col;            /* of buf[pos], from 1 */
    int eof, read_error;
    int quiet;                   /* js_error prints nothing (the caller has a fallback) */
};
int js_open(struct jstream *s, const char *path);           /* -1 with a message */
void js_close(struct jstream *s);
int js_peek(struct jstream *s);                             /* next non-blank byte, or EOF */
int js_take(struct jstream *s, int c, const char *what);    /* consume C, or -1 with a message */
json_object *js_value(struct jstream *s);                   /* one value, or NULL with a message */
int js_end(struct jstream *s);                              /* nothing but blanks left, or -1 */
void js_error(struct jstream *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Walks the Chrome trace at PATH: EACH(event, CTX) for every element of traceEvents (none when
 * EACH is NULL), its otherData into *OTHER (the caller's to put) when OTHER is not NULL.  0; -1
 * after a message (none with QUIET) on a read or syntax error; or what EACH returned, non-zero,
 * which stops the walk. */
int js_trace_walk(const char *path, int quiet, int (*each)(json_object *event, void *ctx), void *ctx,
                  json_object **other);

/* ---- coz profile.coz (coz_profile.c) ---- */

enum coz_point_kind { COZ_THROUGHPUT, COZ_LATENCY };

struct coz_point {
    enum coz_point_kind kind;
    char *name;
    double delta;                              /* throughput */
    double arrivals, departures, difference;   /* latency */
};

struct coz_experiment {
    char *file;            /* the selected source line, split at its last ':' */
    long line;
    double speedup, duration;
    size_t first_point, npoints;   /* the point records that followed it, in coz_profile.points */
};

struct coz_profile {
    const char *path;
    struct coz_experiment *exps;
    size_t nexps;
    struct coz_point *points;
    size_t npoints;
    size_t skipped_records;        /* lines of record types we do not know */
};

/* Loads PATH; on any problem prints one "spanprof: ..." line and returns -1. */
int coz_profile_load(const char *path, struct coz_profile *out);

/* ---- which span holds a source line (span_index.c) ---- */

/* How well a coz path (absolute, from DWARF) names a JSON path (often relative to the build
 * directory): 3 same string, 2 one ends with the other at a '/', 1 same basename, 0 different. */
int file_match(const char *coz, const char *json);
struct span_index;
struct span_index *span_index_build(const struct sp_profile *p);
/* The span holding FILE:LINE: best file match, then the narrowest, then the first listed;
 * p->nspans when no span holds it. */
size_t span_index_find(const struct span_index *ix, const char *file, long line);
void span_index_free(struct span_index *ix);

/* ---- merging (merge.c: the kinds and the command; merge_json.c, merge_folded.c) ---- */

/* A map from byte strings to indexes 0, 1, 2, ... in order of first insertion (strmap.c). */
struct strmap_entry {
    char *key;                   /* NUL-terminated copy (keys may hold NULs before len) */
    size_t len, index;
    uint64_t hash;
};
struct strmap {
    struct strmap_entry *slots;  /* open addressing; key NULL: empty */
    size_t cap, n;
};
void strmap_init(struct strmap *m);
size_t strmap_index(struct strmap *m, const char *key, size_t len, int *added);
void strmap_free(struct strmap *m);

/* JSON profiles: add any number, then finish into one profile (a "processes" array, sums). */
struct json_merge;
struct json_merge *json_merge_new(void);
int json_merge_add(struct json_merge *m, const struct sp_profile *p);    /* -1 with a message */
int json_merge_add_file(struct json_merge *m, const char *path);
void json_merge_finish(struct json_merge *m, struct sp_profile *out);  /* frees m */
int sp_profile_write(const struct sp_profile *p, FILE *f);

/* Folded stacks read a line at a time (folded_read.c): FN gets each line's STACK (NUL-terminated,
 * LEN bytes, writable) and VALUE; it returns 0 to go on, or -1 (after its own message) to stop.
 * 0 when every line was read, else -1 after a message naming the file (and line). */
typedef int folded_line_fn(void *ctx, char *stack, size_t len, unsigned long long value, size_t lineno);
int folded_read(const char *path, folded_line_fn *fn, void *ctx);

/* Folded stacks: values summed per stack, written in byte order of the stacks. */
struct folded_merge;
struct folded_merge *folded_merge_new(void);
int folded_merge_add_file(struct folded_merge *m, const char *path);
int folded_merge_write(struct folded_merge *m, FILE *out);
void folded_merge_free(struct folded_merge *m);

/* pprof profiles (gzip-compressed profile.proto): values summed per stack and thread label,
 * inputs of one kind (sample types, period) only (merge_pprof.c). */
struct pprof_merge;
struct pprof_merge *pprof_merge_new(void);
int pprof_merge_add_file(struct pprof_merge *m, const char *path);    /* -1 with a message */
int pprof_merge_write(struct pprof_merge *m, FILE *out);              /* and frees m */
void pprof_merge_free(struct pprof_merge *m);

/* Writes the merge of PATHS (all of one kind) to OUT ("-": standard output); KIND_NAME gets
 * the kind's name ("JSON profiles").  0, or EXIT_BAD_INPUT after a message. */
int merge_files(const char *out, char *const *paths, size_t npaths, const char **kind_name);
/* merge_files, then "OUT: N KIND merged" on stdout. */
int cmd_merge(const char *out, char *const *paths, size_t npaths);

/* merge_trace.c: the Chrome traces of a run's processes as one trace at OUT, every process a
 * track, on one time line; 0, or -1 after a message.  T gets the processes, and the events their
 * files kept and their rings dropped. */
struct trace_totals {
    size_t processes;
    uint64_t events, dropped;
};
int merge_traces(const char *out, char **paths, size_t npaths, struct trace_totals *t);

/* The JSON profiles `spanprof report` reads: files as given, and in a directory every file
 * that holds a JSON profile (not a trace), in name order. Prints a message and returns -1 when
 * there are none or a path cannot be read. */
int report_inputs(char *const *args, size_t nargs, char ***paths, size_t *npaths, int *any_dir);

/* ---- commands ---- */

enum report_sort { SORT_SELF, SORT_TOTAL, SORT_CALLS, SORT_NAME, SORT_CPU };
int cmd_report(const struct sp_profile *p, enum report_sort sort, long limit);
/* Loads ARGS: one profile (JSON or folded stacks) as it is; several JSON profiles, or
 * directories of them, merged.  0, or -1 after a message. */
int load_inputs(char *const *args, size_t nargs, struct sp_profile *out);
/* Reports ARGS as load_inputs reads them. */
int report_files(char *const *args, size_t nargs, enum report_sort sort, long limit);

enum causal_sort { CSORT_AT100, CSORT_MAX, CSORT_NAME };
struct causal_opts {
    const char *progress;   /* throughput point to use; NULL: the first in the file */
    const char *latency;    /* only this latency point; NULL: all of them */
    enum causal_sort sort;
};
int cmd_causal(const struct coz_profile *c, const struct sp_profile *p, const struct causal_opts *o);

/* ---- helpers (util.c) ---- */

/* Whether the ELF program EXE carries span names (the plugin's section) and none of them, nor
 * any of the libraries it links, matches the glob list GLOBS: 1 then, else 0 (spannames.c). */
int spanprof_progress_unmatched(const char *exe, const char *globs);

void *xmalloc(size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Whether S ends with SUFFIX; strcmp for qsort over an array of strings. */
int has_suffix(const char *s, const char *suffix);
int cmp_strp(const void *a, const void *b);

/* "812 ns", "81.23 µs", "81.23 ms", "1.23 s" — into a fresh string. */
char *fmt_duration(double ns);

/* A text table: cells are owned strings; columns are right-aligned unless marked left. Widths
 * count UTF-8 characters, not bytes, so "µs" lines up. */
struct table {
    size_t ncols, nrows, cap;
    const char *left;          /* per column: 'l' left-aligned, anything else right-aligned */
    char **cells;              /* nrows * ncols */
};
void table_init(struct table *t, size_t ncols, const char *align);
void table_row(struct table *t, ...);      /* ncols strings, each taken over (freed later) */
void table_print(struct table *t, const char *indent);
void table_free(struct table *t);

/* ---- spanprof view (view.c) ---- */

/* Writes OUT (default PROFILE.html): a self-contained speedscope page showing PROFILE (folded
 * stacks or a Chrome trace).  Returns 0 or EXIT_BAD_INPUT after a message. */
int view_page(const char *profile, const char *out, const char *unit);
/* view_page, then OUT's path on stdout. */
int cmd_view(const char *profile, const char *out, const char *unit);

/* speedscope's own file format (speedscope.c), written to OUT: folded stacks TEXT (N bytes) as
 * one profile whose values are in UNIT (a speedscope unit: "nanoseconds", "bytes", "none"),
 * or the Chrome trace at PATH as one profile per thread, the busiest shown first.  NAME names
 * the profile.  -1 when the trace is not one this converts (it is then viewed as it is);
 * SPEEDSCOPE_BAD_TRACE, after a message, when it holds what no trace may (a timestamp out of
 * range), which no viewer could show right. */
enum { SPEEDSCOPE_BAD_TRACE = -2 };
int speedscope_from_folded(const char *text, size_t n, const char *name, const char *unit, FILE *out);
int speedscope_from_trace(const char *path, const char *name, FILE *out);

/* ---- spanprof dump (dump.c) ---- */
/* Makes process PID (a decimal number, checked) write its profile; waits TIMEOUT seconds. */
int cmd_dump(const char *pid, double timeout);

#endif
