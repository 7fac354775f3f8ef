/* cmd.h — the top layer of the spanprof command-line tool (cmd/): one file per command, and
 * the command line (spanprof.c), which parses the arguments and dispatches to them.  The
 * commands read and write through format/ and lib/; this header declares what spanprof.c and
 * the commands that run others (record runs report, coz and view) call. */
#ifndef SPANPROF_TOOL_CMD_H
#define SPANPROF_TOOL_CMD_H

#include <pthread.h>

#include "format/format.h"

/* The release, from configure.ac's AC_INIT (the Makefile passes it). */
#ifndef SPANPROF_VERSION
#error "SPANPROF_VERSION comes from the build (configure.ac's AC_INIT): build with make"
#endif

/* The command line (spanprof.c): "spanprof: " FMT (with ARG), the running command's usage and
 * where its help is, on stderr; returns EXIT_USAGE.  tool_getopt_error words getopt_long's
 * complaint CH (optstrings start with ':') the same way. */
int tool_usage_error(const char *fmt, const char *arg);
int tool_getopt_error(int ch, char **argv);
/* --limit's value: a whole number of spans, 0 meaning all.  0, or -1 when TEXT is not one. */
int tool_parse_limit(const char *text, long *limit);
/* A process id: decimal digits only, 1 to INT_MAX.  0, or -1 when TEXT is not one. */
int tool_parse_pid(const char *text, long *pid);

/* ---- spanprof report (report.c) and spanprof coz (causal.c) ---- */

enum report_sort { SORT_SELF, SORT_TOTAL, SORT_CALLS, SORT_NAME, SORT_CPU };
int cmd_report(const struct sp_profile *p, enum report_sort sort, long limit);
/* Reports ARGS as load_inputs reads them. */
int report_files(char *const *args, size_t nargs, enum report_sort sort, long limit);

enum causal_sort { CSORT_AT100, CSORT_MAX, CSORT_NAME };
struct causal_opts {
    const char *progress;   /* throughput point to use; NULL: the first in the file */
    const char *latency;    /* only this latency point; NULL: all of them */
    enum causal_sort sort;
};
int cmd_causal(const struct coz_profile *c, const struct sp_profile *p, const struct causal_opts *o);

/* ---- spanprof merge (merge.c) ---- */

/* merge_files, then "OUT: N KIND merged" on stdout. */
int cmd_merge(const char *out, char *const *paths, size_t npaths);

/* ---- spanprof view (view.c) ---- */

/* Writes OUT (default PROFILE.html): a self-contained speedscope page showing PROFILE (folded
 * stacks or a Chrome trace), titled TITLE (NULL: after the program PROFILE shows, see view.c).
 * Returns 0 or EXIT_BAD_INPUT after a message. */
int view_page(const char *profile, const char *out, const char *unit, const char *title);
/* The program PROFILE shows (its base name, malloc'd; NULL: not known), from the JSON profile
 * beside it: STEM.json for STEM.ANYTHING (a process's PID.folded and PID.json, the runtime's
 * spanprof.folded and spanprof.json), else profile.json (a record directory's, for its
 * profile.folded, alloc.folded and trace.json). */
char *program_beside(const char *profile);
/* The same of folded stacks TEXT (N bytes, in ns) made in memory, titled TITLE. */
int view_folded_page(const char *text, size_t n, const char *out, const char *title);
/* view_page, then OUT's path on stdout. */
int cmd_view(const char *profile, const char *out, const char *unit);

/* ---- spanprof dump (dump.c) ---- */
/* Makes process PID (a decimal number, checked) write its profile; waits TIMEOUT seconds. */
int cmd_dump(const char *pid, double timeout, int flight);

/* ---- spanprof spans (spans.c) ---- */
/* A running process's spans with patch points, listed or switched on or off (SPANPROF_LIVE). */
extern const char spans_usage[], spans_help[];
int run_spans(int argc, char **argv);

/* ---- flight-recorder captures (slow.c) ---- */
/* The capture files (NAME.trace.json) of DIR, malloc'd names; -1 (errno) when unreadable. */
int slow_captures(const char *dir, char ***names, size_t *n);
/* Lists DIR's captures, oldest first: when, span, duration, pid, file and the slow call's
 * slowest descendants.  HEADER_IF_NONE: say so when there is none. */
int cmd_slow_list(const char *dir, int header_if_none);
/* Whether PATH is a directory of captures only (no profile beside them). */
int slow_is_capture_dir(const char *path);

/* ---- spanprof serve (serve.c) ---- */

/* The default --listen: loopback only. */
#define SERVE_DEFAULT_LISTEN "127.0.0.1:6061"
struct serve_opts {
    const char *dir;             /* SPANPROF_LIVE's directory */
    const char *listen;          /* ADDR:PORT */
    const char *push;            /* Pyroscope's URL, or NULL */
    const char *service;         /* the pushed profiles' name, NULL: each executable's */
    double interval;             /* seconds between pushes */
    size_t max_spans;            /* per process, the span names with series of their own */
};
extern const char serve_usage[], serve_help[];
/* Serves until SIGINT or SIGTERM; 0, or EXIT_BAD_INPUT after a message. */
int cmd_serve(const struct serve_opts *o);
int run_serve(int argc, char **argv);
/* Whether LISTEN has the form ADDR:PORT: a non-empty ADDR, PORT a number up to 65535. */
int serve_listen_form_ok(const char *listen);

/* What serve knows of the processes in its directory (serve_dir.c, which says who is published
 * and how processes are asked).  Everything here is under SD.lock, which serve_dir_refresh and
 * serve_dir_retry_silent release while they wait for answers. */
struct snap {                    /* a snapshot shared by the state and the windows that hold it */
    int refs;                    /* freed by its last holder */
    size_t bytes;                /* as read */
    struct live_snapshot s;
};
struct serve_proc {              /* a process image: its pid and its start (an exec: a new one) */
    long long pid;
    int64_t start_unix_ns;
    struct snap *latest;         /* never NULL */
    struct live_snapshot kept;   /* the largest counters seen (live_spans_keep_max) */
    struct live_series series;   /* which span names have series of their own */
    struct snap *pushed;         /* what the last push covered; NULL: none yet */
    double pushed_unix;          /* when */
    double ended;                /* monotonic time it was found ended; 0: running */
    int has_final;
};
extern struct serve_dir_state {
    pthread_mutex_t lock;
    pthread_cond_t answered;     /* an ask ended */
    const struct serve_opts *o;
    struct serve_proc **v;       /* by pid, then start */
    size_t n, cap;
    uint64_t scrape_errors, ended, forgotten;
} SD;
enum { SERVE_SCAN, SERVE_SPANS, SERVE_FULL };
/* Checks DIR at start: 0, or -1 after a message. */
int serve_dir_check(const struct serve_opts *o);
/* Scans DIR (final snapshots read, processes gone ended) and, for SERVE_SPANS or SERVE_FULL, asks
 * every socket whose last such answer is older than MAX_AGE seconds, waiting for them (and for
 * what other requests are asking) at most the socket timeout. */
void serve_dir_refresh(int want, double max_age);
/* Asks the silent sockets due for a retry (the main loop's). */
void serve_dir_retry_silent(void);
/* Drops processes ended long enough ago, then the oldest ended over the caps; KEEP_UNPUSHED: an
 * ended process whose last snapshot is not pushed yet stays while within the caps. */
void serve_dir_retire(int keep_unpushed);
void serve_dir_free(void);
/* Whether P answered its last request; the processes running; the silent and refused entries. */
int serve_proc_up(const struct serve_proc *p);
size_t serve_running(void);
void serve_dir_counts(size_t *silent, size_t *refused);
double serve_mono_now(void);
void snap_put(struct snap *s);
struct snap *snap_get(struct snap *s);

/* ---- the commands that parse their own arguments (convert.c, record.c, diff.c): their help
 * texts and entry points, for the command table in spanprof.c.  Each entry point takes argv[0]
 * as the command's name and returns the tool's exit status. ---- */

extern const char convert_usage[], convert_help[];
int run_convert(int argc, char **argv);

extern const char record_usage[], record_help[];
/* CMD's exit status (or record ends by CMD's signal), or record's own (125-127). */
int run_record(int argc, char **argv);

extern const char diff_usage[], diff_help[];
int run_diff(int argc, char **argv);

extern const char select_usage[], select_help[];
int run_select(int argc, char **argv);

#endif
