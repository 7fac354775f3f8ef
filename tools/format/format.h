/* format.h — the middle layer of the spanprof command-line tool (format/): the profile
 * formats, each read, merged, written or converted here — the JSON profile, folded stacks,
 * coz's output, pprof profiles, Chrome traces, speedscope's format, the span names in an ELF
 * file — and the inputs the commands read (format/merge.c).  Uses lib/ only. */
#ifndef SPANPROF_TOOL_FORMAT_H
#define SPANPROF_TOOL_FORMAT_H

#include <json-c/json.h>

#include "lib/lib.h"
#include "pprof.h"

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
    X_CPU_TOTAL, X_CPU_SELF, X_SAMPLES, X_CPU, X_RECORDED_TOTAL, X_RECORDED_SELF,
    NEXTRA
};
_Static_assert(NEXTRA <= 32, "has_extra holds a bit per optional field");
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
    int by_option;               /* "by_option": chosen by a plugin option (a budget's profile) */
    int switched_off;            /* "switched_off": the budget switched it off (calls: at least) */
    double off_at_s, off_mean_ns; /* ... when (s since start), its mean ns per call before */
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
    int budget;                           /* "budget" (SPANPROF_BUDGET) was there */
    double budget_percent, budget_call_ns;  /* its percent and one call's measured cost */
    uint64_t process_cpu_ns;              /* the process's CPU time when written */
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
/* O's member KEY when it is a string, else NULL. */
const char *js_member_string(json_object *o, const char *key);

/* ---- a JSON object's members by their type (jsonfield.c) ----
 * 1 with the value, 0 when O has no member FIELD, -1 after "spanprof: FILE: 'FIELD' is not ..."
 * when it has one of another type.  jf_invalid prints that message for the caller's own checks
 * ("an object", "a time") and returns -1. */
int jf_array(const char *file, json_object *o, const char *field, json_object **out);
int jf_object(const char *file, json_object *o, const char *field, json_object **out);
int jf_string(const char *file, json_object *o, const char *field, const char **out);
int jf_u64(const char *file, json_object *o, const char *field, uint64_t *out);
int jf_number(const char *file, json_object *o, const char *field, double *out);  /* finite */
int jf_bool(const char *file, json_object *o, const char *field, int *out);
int jf_invalid(const char *file, const char *field, const char *expected);

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

/* ---- merging (merge.c: the kinds, the inputs; merge_json.c, merge_folded.c, merge_pprof.c,
 * merge_trace.c) ---- */

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
/* Reading a pprof profile (any gzip-compressed profile.proto): pprof_read gunzips and decodes
 * the LEN bytes at GZ (WHAT names them in messages), calls KIND with its run information, then
 * SAMPLE for each sample: its stack outermost first (a location's inlined lines are frames of
 * their own, innermost last; an unsymbolized address is named by its hex form), its values in the
 * profile's type order, and its "thread" label or NULL.  Every string is the profile's, valid
 * during the call only.  A callback's non-zero return stops the read.  0, or -1 after a message
 * (or when a callback stopped it).  pprof_gunzip is its first step, alone (messages to
 * MESSAGES). */
#define PPROF_MAX_TYPES 64
struct pprof_info {
    const struct spanprof__pprof_type *types;
    size_t ntypes;
    struct spanprof__pprof_type period_type;
    int64_t period, duration_ns, time_ns;
    const char *program;         /* the first mapping's file, or NULL */
};
struct pprof_reader {
    int (*kind)(void *arg, const struct pprof_info *info);
    int (*sample)(void *arg, const struct spanprof__pprof_frame *stack, size_t depth,
                  const int64_t *values, const char *thread);
    FILE *messages;              /* where complaints go: NULL for stderr */
};
int pprof_read(const unsigned char *gz, size_t len, const char *what, const struct pprof_reader *r,
               void *arg);
int pprof_gunzip(const unsigned char *gz, size_t len, const char *what, unsigned char **out,
                 size_t *outlen, FILE *messages);

struct pprof_merge;
struct pprof_merge *pprof_merge_new(void);
int pprof_merge_add_file(struct pprof_merge *m, const char *path);    /* -1 with a message */
int pprof_merge_write(struct pprof_merge *m, FILE *out);              /* and frees m */
void pprof_merge_free(struct pprof_merge *m);

/* Writes the merge of PATHS (all of one kind) to OUT ("-": standard output); KIND_NAME gets
 * the kind's name ("JSON profiles").  0, or EXIT_BAD_INPUT after a message. */
int merge_files(const char *out, char *const *paths, size_t npaths, const char **kind_name);

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

/* Loads ARGS: one profile (JSON or folded stacks) as it is; several JSON profiles, or
 * directories of them, merged.  0, or -1 after a message. */
int load_inputs(char *const *args, size_t nargs, struct sp_profile *out);

/* ---- span names of ELF files (spannames.c) ---- */

/* Whether the ELF program EXE carries span names (the plugin's section) and none of them, nor
 * any of the libraries it links, matches the glob list GLOBS: 1 then, else 0. */
int spanprof_progress_unmatched(const char *exe, const char *globs);

/* ---- speedscope's file format (speedscope.c) ---- */

/* speedscope's own file format, written to OUT: folded stacks TEXT (N bytes) as
 * one profile whose values are in UNIT (a speedscope unit: "nanoseconds", "bytes", "none"),
 * or the Chrome trace at PATH as one profile per thread, the busiest shown first.  NAME names
 * the profile; for a trace, NULL names it after the process the trace names first.  -1 when the
 * trace is not one this converts (it is then viewed as it is); SPEEDSCOPE_BAD_TRACE, after a
 * message, when it holds what no trace may (a timestamp out of range), which no viewer could
 * show right. */
enum { SPEEDSCOPE_BAD_TRACE = -2 };
int speedscope_from_folded(const char *text, size_t n, const char *name, const char *unit, FILE *out);
/* Whether folded TEXT (N bytes) is a differential file ("stack BEFORE AFTER" on every line, as
 * difffolded.pl and `spanprof diff --folded` write). */
int speedscope_is_differential(const char *text, size_t n);
/* What a trace's page opens on: the name it got (malloc'd), and the stretch of the busiest
 * thread its timeline shows first, FROM to TO ns after the trace's start (of LENGTH ns in all):
 * one narrow enough that its spans are drawn with their names, where most of them start (TO 0:
 * the whole trace is readable as it is; see speedscope.c). */
struct speedscope_opening {
    char *name;
    long long from, to, length;
};
int speedscope_from_trace(const char *path, const char *name, FILE *out,
                         struct speedscope_opening *opening);

/* ---- live profiles: a running process's snapshot (live/protocol.h), as `spanprof serve` reads
 * it (live_snapshot.c), the difference of two (live_delta.c), and what serve renders of them:
 * Prometheus metrics (live_metrics.c) and one pprof profile of several processes (live_pprof.c) */

struct live_bucket {
    int64_t le_ns;               /* the bucket's largest value */
    uint64_t count;              /* activations in this bucket alone */
};
struct live_span {
    char *name, *file;
    long line;
    uint64_t calls, total_ns, self_ns, cpu_total_ns, cpu_self_ns;
    int has_cpu_total, has_cpu_self;
    int has_hist;                /* "histogram" was there */
    uint64_t hist_count, hist_sum_ns;
    struct live_bucket *buckets; /* ascending */
    size_t nbuckets;
};
/* A stack of the pprof profile and its values (in the order of its profile's types). */
struct live_stack {
    struct spanprof__pprof_frame *frames;  /* outermost first; strings owned */
    size_t depth;
    char *thread;                /* NULL: none */
    int64_t *values;
};
struct live_stacks {
    struct spanprof__pprof_type types[PPROF_MAX_TYPES], period_type;  /* strings owned */
    size_t ntypes;
    int64_t period;
    struct live_stack *v;
    size_t n, cap;
    struct strmap index;         /* a stack's key (live_stack_key) to its index in v */
};
struct live_snapshot {
    long long pid;
    char *exe;                   /* "exe", else "program"; never NULL ("" when neither) */
    char *host;                  /* NULL when absent */
    int64_t start_unix_ns, seq;  /* 0 when absent */
    struct live_span *spans;
    size_t nspans;
    struct live_stacks stacks;
    int has_stacks;              /* the pprof part was there (not the answer to "spans") */
};

/* The most a snapshot may be (its JSON and pprof parts): larger answers are refused. */
#define LIVE_SNAPSHOT_MAX ((size_t)64 << 20)

/* Parses the LEN bytes at BUF, a snapshot (WHAT names it in messages).  0, or -1 with the reason
 * in ERR (no message printed).  live_snapshot_free releases what parse filled in. */
int live_snapshot_parse(const char *buf, size_t len, struct live_snapshot *out, char *err, size_t errlen);
void live_snapshot_free(struct live_snapshot *s);

/* Stacks: empty (types to be set), a stack's key, and one added (its values summed into an equal
 * stack's). */
void live_stacks_init(struct live_stacks *st);
void live_stacks_free(struct live_stacks *st);
char *live_stack_key(const struct live_stack *s, size_t *len);   /* malloc'd; LEN bytes */
void live_stacks_add(struct live_stacks *st, const struct spanprof__pprof_frame *frames, size_t depth,
                     const char *thread, const int64_t *values);

/* OUT (initialised here) = AFTER - BEFORE, stack by stack, each value clamped at 0; BEFORE NULL
 * (a process that started since): AFTER whole.  Stacks whose values are all 0 are left out. */
void live_stacks_delta(const struct live_stacks *after, const struct live_stacks *before,
                       struct live_stacks *out);
/* KEPT's span counters become the larger of theirs and FRESH's, span by span (name, file, line),
 * histogram bucket by bucket, the buckets folded into live_hist_le_ns's bounds (and one for
 * +Inf, LE_NS INT64_MAX); FRESH's spans KEPT lacks are added.  KEPT's other fields become
 * FRESH's.  So counters published from KEPT never go backwards, though sampled estimates may. */
void live_spans_keep_max(struct live_snapshot *kept, const struct live_snapshot *fresh);

/* A span name's sums in one process, as /metrics publishes them: its spans of that name added
 * up, the histogram's buckets in live_hist_le_ns's bounds. */
#define LIVE_HIST_NLE 22
struct live_row {
    const char *name;
    uint64_t calls, total_ns, self_ns, cpu_total_ns, cpu_self_ns;
    int has_cpu_total, has_cpu_self, has_hist;
    uint64_t hist_sum_ns;
    uint64_t le[LIVE_HIST_NLE + 1];  /* per bound, not cumulative; [LIVE_HIST_NLE]: +Inf */
};
/* Which of a process's span names have series of their own (live_series.c says the rule). */
struct live_series_name {
    char *name;
    struct live_row row;         /* its sums at the last update */
    double heat_ns, heat_calls;  /* recent growth of its time and calls, decayed */
    int named;                   /* it has series of its own */
};
struct live_series {
    struct strmap index;         /* name to its place in v */
    struct live_series_name *v;
    size_t n, cap, nnamed;
    struct live_row other;       /* what names did while they had no series of their own */
    int any_other;               /* some name has had none */
    double updated_s;            /* when, on the monotonic clock; 0: never */
};
void live_series_init(struct live_series *ser);
void live_series_free(struct live_series *ser);
/* Takes KEPT (a process's counters, kept by live_spans_keep_max) as of NOW_S seconds on the
 * monotonic clock: the names' heat, the named set (at most MAX_SPANS) and "(other)". */
void live_series_update(struct live_series *ser, const struct live_snapshot *kept, double now_s,
                        size_t max_spans);

/* One process for the metrics: its snapshot (pid, exe, start), its series, whether it answered
 * its last request. */
struct live_metrics_proc {
    const struct live_snapshot *s;
    const struct live_series *series;
    int up;
};
struct live_metrics_totals {
    size_t processes;            /* live now */
    uint64_t scrape_errors;      /* snapshots that could not be read, since the start */
    uint64_t ended;              /* processes whose final snapshot was read */
    uint64_t forgotten;          /* ended processes dropped to keep within the caps */
    size_t silent;               /* sockets skipped until they answer again */
    size_t refused;              /* sockets and files not published (link, owner, peer) */
};
/* Writes Prometheus's text exposition format of PROCS to F. */
void live_metrics_write(FILE *f, const struct live_metrics_proc *procs, size_t nprocs,
                        const struct live_metrics_totals *t);
/* The histogram's upper bounds, in ns, ascending (+Inf is implied after them). */
extern const int64_t live_hist_le_ns[];
extern const size_t live_hist_nle;

/* One process's stacks in a profile of several. */
struct live_pprof_part {
    long long pid;
    const struct live_stacks *stacks;
};
/* Writes the gzip'd pprof profile of PARTS to F: their sample types united (a value a process
 * does not measure is 0 in its samples), each sample labelled pid=PID; the duration and start
 * given.  0, or -1 with errno. */
int live_pprof_write(FILE *f, const struct live_pprof_part *parts, size_t nparts, int64_t duration_ns,
                     int64_t time_ns);

#endif
