/* report.h — the report layer: everything that turns recorded state into files (never
 * installed).  It reads the recording layer's trees and the collectors' data; what to write and
 * where comes from the caller (lifecycle/start.c) in struct spanprof__outputs.
 */
#ifndef SPANPROF_REPORT_H
#define SPANPROF_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "collect/collect.h"
#include "record/record.h"
#include "common/outfile.h"

#pragma GCC visibility push(hidden)

/* The folded file's limits (folded.c says how each cut is reported). */
struct spanprof__folded_limits {
    uint64_t max_bytes; /* SPANPROF_FOLDED_MAX_BYTES */
    uint64_t max_depth; /* SPANPROF_FOLDED_MAX_DEPTH, frames (the thread frame not counted) */
    int collapse;       /* SPANPROF_FOLDED_RECURSION=collapse */
};
/* Their defaults (options.c's table says the same). */
#define SPANPROF_FOLDED_MAX_DEPTH 1024
#define SPANPROF_FOLDED_MAX_BYTES (64u << 20)

/* ---- output.c ---- */
/* The files to write (path patterns with %p; NULL: not written) and how to print them. */
struct spanprof__outputs {
    const char *folded, *json, *trace, *alloc_folded, *pprof;
    int threads_root; /* SPANPROF_THREADS */
    int file_line;    /* SPANPROF_FILE_LINE */
    int idle;         /* SPANPROF_IDLE */
    int announce;     /* no SPANPROF_QUIET: the exit write names its files on a terminal */
    int folded_cpu;   /* SPANPROF_FOLDED_VALUE=cpu (and CPU time is recorded) */
    int descendant;   /* exec'd by a profiled process: names as in a fork child (path.c) */
    unsigned image;   /* images of this process that wrote before this one (path.c) */
    struct spanprof__folded_limits folded_limits;
};
/* Writes every file O names from the state of all threads so far.  0, or -1 after printing
 * "spanprof: error: cannot write 'PATH': REASON" for each failure.  FINAL: the exit write, which
 * names the files written on stderr when O says to announce them. */
int spanprof__write_all(const struct spanprof__outputs *o, int final);

/* ---- path.c ---- */
int spanprof__path_valid(const char *pattern);
int spanprof__path_expand(const char *pattern, long pid, int append_pid, char *out, size_t size);
/* The file PATTERN names for this process (pid, fork child, exec'd descendant, image number):
 * 0, or -1 when it does not fit.  Async-signal-safe. */
int spanprof__output_path(const struct spanprof__outputs *o, const char *pattern, char *out,
                          size_t size);

/* ---- aggregate.c: what the writers print ---- */
/* A consistent set of threads to write, plus how to print them. */
struct spanprof__view {
    struct spanprof__thread *const *threads;
    size_t nthreads;
    double ns_per_tick;
    int threads_root; /* SPANPROF_THREADS */
    int file_line;    /* SPANPROF_FILE_LINE */
    int counting;     /* SPANPROF=count: folded values are calls, not ns */
    uint32_t sample_hz; /* SPANPROF=sample's rate (0: not sampled): times are the sampled
                         * estimates, in ns (ns_per_tick 1), from spanprof__view_self/_total */
    int idle;         /* SPANPROF_IDLE: time outside spans too */
    int cpu_values;   /* SPANPROF_FOLDED_VALUE=cpu: folded values are self CPU ns */
    int compensate;   /* exact mode, SPANPROF_COMPENSATE and a measured cost: the costs below
                       * are taken out of self and total times; 0: times as recorded */
    double cost_in, cost_out; /* ticks each span call adds inside its own window and outside it
                               * (calibrate.c, lowered by spanprof__view_fit_costs) */
    double enter_in, enter_out; /* the same for a call whose exit never ran (abandoned): what
                                 * its enter added (lower bounds) */
    double measured_in, measured_out; /* cost_in and cost_out as measured */
    const char *compensation_failed; /* the measurement failed (why): times as recorded */
    uint64_t now;     /* the write's timestamp (ticks) */
    const struct spanprof__folded_limits *folded_limits; /* NULL: the defaults */
};
/* SELF, node N's recorded self time, less what the span calls cost that V's cost_in/_out stand
 * for: N's own calls' inside part and its children's calls' outside part, or for calls that
 * were abandoned (record/abandoned.c) only their enter's part (never below 0). */
uint64_t spanprof__compensated_self(const struct spanprof__view *v, const struct spanprof__node *n,
                                    uint64_t self);
/* Node N's self time as V prints it, in V's ticks: the recorded time (compensated), or the
 * sampled wall time.  Sampled figures are written by the sampler only while it holds the process
 * lock, as the writers do: a write reads one pass's state. */
static inline uint64_t spanprof__view_self(const struct spanprof__view *v,
                                           const struct spanprof__node *n)
{
    if (v->sample_hz)
        return __atomic_load_n(&spanprof__sample_of(n)->wall_ns, __ATOMIC_RELAXED);
    uint64_t self = spanprof__node_self(n);
    return v->compensate ? spanprof__compensated_self(v, n, self) : self;
}
/* Node N's own CPU time in ns: SPANPROF=sample's sampled figure, else SPANPROF_CPU=1's (its
 * inclusive counter less its children's); 0 without either (aggregate.c). */
uint64_t spanprof__view_cpu_self(struct spanprof__node *n);
/* Its inclusive time (sampled: as of the write's spanprof__sample_sums), as recorded: the
 * per-site totals (spanprof__aggregate_sites), compensated, are the sums of the compensated self
 * times below the site's outermost nodes instead. */
static inline uint64_t spanprof__view_total(const struct spanprof__view *v,
                                            const struct spanprof__node *n)
{
    if (v->sample_hz)
        return spanprof__sample_of(n)->wall_incl;
    return __atomic_load_n(&n->total, __ATOMIC_RELAXED);
}
/* A view's settings from O and the recording mode, its threads left empty (output.c).
 * Async-signal-safe. */
struct spanprof__view spanprof__view_of(const struct spanprof__outputs *o);
/* Once V's threads are set: lowers V's costs to what their recorded times allow, so that no
 * span's self time goes below zero (aggregate.c).  SETTLED: the writing thread, whose open
 * frames are charged up to now; of the other threads only those that ended are read (a running
 * thread's open activations are missing from their nodes' totals).  Async-signal-safe. */
void spanprof__view_fit_costs(struct spanprof__view *v, const struct spanprof__thread *settled);
struct spanprof__site_stats {
    const struct spanprof_site *site;
    uint64_t calls;
    uint64_t total;  /* ticks, outermost activations only (recursion not double counted) */
    uint64_t self;   /* ticks */
    uint64_t cpu_total, cpu_self, samples; /* SPANPROF=sample: sampled CPU ns (total as total
                                            * is), and the samples behind total */
    uint64_t max_depth; /* deepest recursion of this site on one stack */
    uint64_t recorded_total, recorded_self; /* compensated views: total and self as recorded,
                                             * before compensation (ticks) */
    uint64_t active;    /* walk state */
};
struct spanprof__anomalies {
    uint64_t abandoned, unmatched, open, overflow;
};
/* Per-site totals over all threads of V, sorted by name, file, line.  Returns a malloc'd array
 * (count in *n), or NULL with *n == 0 when empty or out of memory. */
struct spanprof__site_stats *spanprof__aggregate_sites(const struct spanprof__view *v, size_t *n);
uint64_t spanprof__thread_calls(const struct spanprof__thread *t);
/* Threads that ran spans: running ones, and those each retired group holds. */
uint64_t spanprof__thread_count(const struct spanprof__view *v);
void spanprof__anomalies(const struct spanprof__view *v, struct spanprof__anomalies *a);
uint64_t spanprof__ticks_to_ns(const struct spanprof__view *v, uint64_t ticks);
const char *spanprof__thread_label(const struct spanprof__thread *t, char *buf, size_t size);

/* ---- pprof.c ---- */
/* V as a gzip-compressed pprof profile (pprof/ encodes it): one sample per distinct stack. */
struct spanprof__json_meta;
int spanprof__pprof_write_view(FILE *f, const struct spanprof__view *v,
                               const struct spanprof__json_meta *m);

/* ---- idle.c: time outside spans (SPANPROF_IDLE) ---- */
/* The frame that stands for it: "(outside spans)". */
extern const char spanprof__idle_frame[];
/* Thread T's wall time outside any span so far, in ns, into *NS: 1 when V asks for it and it is
 * known, else 0 (see idle.c for when it is not). */
int spanprof__thread_idle_ns(const struct spanprof__view *v, const struct spanprof__thread *t,
                             uint64_t *ns);
/* The folded lines of that time, written after the span stacks. */
int spanprof__idle_folded_write(FILE *f, const struct spanprof__view *v);
/* One folded line of time outside spans: LABEL is the thread's (empty without thread roots). */
struct spanprof__idle_line {
    char label[64];
    uint64_t ns;
};
typedef const char *(*spanprof__label_fn)(const struct spanprof__thread *t, char *buf, size_t size);
/* The lines the folded file gets, into LINES (room for V's threads), in the file's order: one
 * per thread name (labelled by LABEL, merged and sorted) with thread roots, else one for all
 * threads.  Returns how many; no malloc, lock or stdio, so the crash writer uses it too. */
size_t spanprof__idle_lines(const struct spanprof__view *v, struct spanprof__idle_line *lines,
                            spanprof__label_fn label);

/* ---- folded.c ---- */
int spanprof__folded_write(FILE *f, const struct spanprof__view *v);

/* ---- safefolded.c ---- */
/* Writes O's folded stacks (if O names them) as spanprof__write_all would, with only
 * async-signal-safe calls: for a signal handler, when the process is about to die.  0, or -1
 * after printing the error line. */
int spanprof__folded_write_safe(const struct spanprof__outputs *o);
/* The label of thread T as spanprof__thread_label gives it, into BUF: async-signal-safe. */
const char *spanprof__thread_label_safe(const struct spanprof__thread *t, char *buf, size_t size);

/* ---- json.c ---- */
struct spanprof__json_meta {
    long pid;
    const char *program;
    const char *start_time; /* ISO 8601 UTC */
    uint64_t wall_ns;
    const char *clock;      /* "tsc", "monotonic" or "none" (SPANPROF=count) */
    uint64_t extra_unmatched; /* exits seen in threads with no data */
    const struct spanprof__live_meta *live; /* a live snapshot's extras (live/protocol.h), or NULL */
};
/* What a live snapshot adds to the JSON profile: the process's identity for a collector that
 * sees many, and each kept histogram's buckets (resreport.c). */
struct spanprof__live_meta {
    const char *host;
    uint64_t start_unix_ns;
    uint64_t seq; /* snapshots taken so far, this one included */
};
struct json_object;
struct json_object *spanprof__json_build(const struct spanprof__view *v,
                                         const struct spanprof__json_meta *m);
int spanprof__json_write(FILE *f, const struct spanprof__view *v,
                         const struct spanprof__json_meta *m);
/* [ { "name", "file", "line", "hits" } ] for every progress point hit so far, sorted by name,
 * file and line.  Call with the process lock held. */
struct json_object *spanprof__progress_json(void);

/* One consistent capture of every thread, what every write (and a live snapshot) renders from:
 * _begin takes the process lock (thread starts wait; recording threads never do) and fills the
 * view and the JSON's metadata; _end releases it.  -1: out of memory, nothing held. */
struct spanprof__capture {
    struct spanprof__view view;
    struct spanprof__json_meta meta;
    struct spanprof__thread **threads;
    struct spanprof__guard guard;
    char program[4096];
    char start[64];
};
int spanprof__capture_begin(struct spanprof__capture *c, const struct spanprof__outputs *o);
void spanprof__capture_end(struct spanprof__capture *c);

/* ---- live.c: a live snapshot (live/protocol.h) ---- */
/* Writes the snapshot of C to F: the framing, the JSON profile with LIVE's extras and, with
 * STACKS, the pprof profile (else an empty pprof part).  0, or -1 with errno set. */
int spanprof__live_snapshot_write(FILE *f, struct spanprof__capture *c,
                                  const struct spanprof__live_meta *live, int stacks);

/* ---- jsonvalue.c: the few json-c values every JSON writer shares ---- */
/* An unsigned counter as a JSON integer (json-c's are signed 64-bit: clamped). */
struct json_object *spanprof__json_u64(uint64_t v);
/* A string, "" for NULL. */
struct json_object *spanprof__json_str(const char *s);
/* { "tid", "name" } of thread T: the start of each per-thread object. */
struct json_object *spanprof__json_thread(const struct spanprof__thread *t);

/* ---- resreport.c: the collectors' numbers per site ---- */
/* Per-site totals over all threads of V (NULL when no collector is on), added to each span's
 * JSON object by spanprof__res_json. */
struct spanprof__res_sites;
struct spanprof__res_sites *spanprof__res_collect(const struct spanprof__view *v);
void spanprof__res_json(const struct spanprof__res_sites *r, const struct spanprof_site *site,
                        struct json_object *js, const struct spanprof__view *v);
/* SITE's kept histogram as a live snapshot's "histogram" object (live/protocol.h), if it has one. */
void spanprof__res_json_histogram(const struct spanprof__res_sites *r,
                                  const struct spanprof_site *site, struct json_object *js,
                                  const struct spanprof__view *v);
void spanprof__res_free(struct spanprof__res_sites *r);

/* ---- allocfolded.c ---- */
int spanprof__alloc_folded_write(FILE *f, const struct spanprof__view *v);

/* ---- trace_writer.c ---- */
/* Writes the Chrome trace of V: ticks become µs since ORIGIN_TICK; frames still open are closed
 * at END_TICK.  spanprof__trace_write picks both from the clock (for output.c). */
int spanprof__trace_write_at(FILE *f, const struct spanprof__view *v,
                             const struct spanprof__json_meta *m, uint64_t origin_tick,
                             uint64_t end_tick);
int spanprof__trace_write(FILE *f, const struct spanprof__view *v,
                          const struct spanprof__json_meta *m);
/* A flight-recorder capture (lifecycle/flight.c): only the events from FROM to TO (ticks) of every
 * thread, spans open at TO closed there, and what set it off in otherData's "capture". */
struct spanprof__trace_outer;
struct spanprof__trace_kept;
struct spanprof__trace_window {
    uint64_t from, to;
    const struct spanprof_site *site; /* the slow call's site; NULL: asked for */
    pid_t tid;                        /* the slow call's thread */
    uint64_t start, end;              /* the slow call (ticks) */
    double seconds;                   /* SPANPROF_FLIGHT */
    const char *time;                 /* when, as an ISO 8601 UTC text */
    uint64_t suppressed;              /* triggers left out so far (rate limit, queue full) */
    /* The slow or crashing thread's outermost spans, still open at the window's end: those
     * begun before its ring's oldest event show as begun at the window's start. */
    const struct spanprof__trace_outer *outer;
    /* Threads' newest events, copied as the slow call ended (collect/flight.h): each written in
     * place of its thread's ring when the ring no longer holds all of it. */
    const struct spanprof__trace_kept *kept;
    size_t nkept;
};
int spanprof__trace_write_window(FILE *f, const struct spanprof__view *v,
                                 const struct spanprof__json_meta *m, uint64_t origin_tick,
                                 const struct spanprof__trace_window *win);

/* ---- safetrace.c ---- */
/* A flight-recorder capture of a crash, written to FD with async-signal-safe calls only: every
 * thread's events of WIN (its site NULL, its tid the crashing thread's), otherData's "capture"
 * giving reason "crash" and SIGNAL (e.g. "SIGSEGV").  0, or an errno value. */
int spanprof__trace_write_crash(int fd, const struct spanprof__view *v, uint64_t origin_tick,
                                const struct spanprof__trace_window *win, const char *signal);

#pragma GCC visibility pop

#endif /* SPANPROF_REPORT_H */
