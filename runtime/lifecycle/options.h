/* options.h — every SPANPROF_* environment variable, declared once in options.c's table with its
 * type, default, range and help line (never installed).  Parsing, the one-line warnings, the
 * "is not a spanprof variable" check and the manual's variable table all come from that table.
 */
#ifndef SPANPROF_OPTIONS_H
#define SPANPROF_OPTIONS_H

#include <stdint.h>
#include <stdio.h>

#pragma GCC visibility push(hidden)

/* Values of SPANPROF. */
enum {
    SPANPROF_MODE_OFF = 0,
    SPANPROF_MODE_ON = 1,
    SPANPROF_MODE_COUNT = 2,
    SPANPROF_MODE_SAMPLE = 3, /* counts as COUNT does, time from the sampler thread */
};

/* Room for the values of the variables that keep their text (paths, pattern lists and markers):
 * 12 of them, a path each at most. */
#define SPANPROF__OPTION_TEXTS (13 * 4096)

/* The parsed values, one field per variable. */
struct spanprof__options {
    int mode;              /* SPANPROF: SPANPROF_MODE_* */
    uint64_t sample_hz;    /* SPANPROF_SAMPLE_HZ */
    const char *folded;    /* SPANPROF_FOLDED pattern, NULL: not written */
    const char *json;      /* SPANPROF_JSON pattern, NULL: not written */
    uint64_t folded_max_bytes; /* SPANPROF_FOLDED_MAX_BYTES */
    uint64_t folded_max_depth; /* SPANPROF_FOLDED_MAX_DEPTH */
    int folded_recursion;  /* SPANPROF_FOLDED_RECURSION: 0 keep, 1 collapse */
    int folded_value;      /* SPANPROF_FOLDED_VALUE: 0 wall, 1 cpu */
    int threads;           /* SPANPROF_THREADS */
    int file_line;         /* SPANPROF_FILE_LINE */
    int idle;              /* SPANPROF_IDLE */
    int quiet;             /* SPANPROF_QUIET */
    const char *trace;     /* SPANPROF_TRACE pattern, NULL: no tracing */
    const char *pprof;     /* SPANPROF_PPROF pattern, NULL: not written */
    uint64_t trace_buffer; /* SPANPROF_TRACE_BUFFER, bytes per thread */
    int histogram;         /* SPANPROF_HISTOGRAM */
    int compensate;        /* SPANPROF_COMPENSATE */
    int cpu;               /* SPANPROF_CPU */
    int alloc;             /* SPANPROF_ALLOC */
    int alloc_stacks;      /* SPANPROF_ALLOC_STACKS */
    uint64_t alloc_sample; /* SPANPROF_ALLOC_SAMPLE, bytes */
    const char *alloc_folded; /* SPANPROF_ALLOC_FOLDED pattern, NULL: not written */
    int dump_signal;       /* SPANPROF_DUMP_SIGNAL, 0: unset */
    double dump_interval;  /* SPANPROF_DUMP_INTERVAL, seconds, 0: unset */
    const char *live;      /* SPANPROF_LIVE directory, NULL: unset */
    const char *ancestor;  /* SPANPROF_ANCESTOR, NULL: unset */
    const char *handover;  /* SPANPROF_HANDOVER, NULL: unset */
    const char *spans;        /* SPANPROF_SPANS patterns, NULL: unset (every span) */
    const char *coz_progress; /* SPANPROF_COZ_PROGRESS patterns, NULL: unset */
    const char *coz_latency;  /* SPANPROF_COZ_LATENCY patterns ("" none), NULL: unset */
    double flight;            /* SPANPROF_FLIGHT, seconds, 0: unset */
    double budget;            /* SPANPROF_BUDGET, percent, 0: unset */
    uint64_t flight_bytes;    /* SPANPROF_FLIGHT_BYTES */
    uint64_t flight_min;      /* SPANPROF_FLIGHT_MIN, ns, 0: unset */
    const char *slow;         /* SPANPROF_SLOW rules, NULL: unset */
    const char *slow_dir;     /* SPANPROF_SLOW_DIR */
    uint64_t slow_max;        /* SPANPROF_SLOW_MAX */
    uint64_t slow_max_bytes;  /* SPANPROF_SLOW_MAX_BYTES */
    double slow_interval;     /* SPANPROF_SLOW_INTERVAL, seconds */
    /* The texts the fields above point to, copied out of the environment at load: a program
     * that sets its process title rewrites the memory the environment strings were in. */
    char texts[SPANPROF__OPTION_TEXTS];
    size_t texts_used;
};

typedef const char *(*spanprof__getenv_fn)(const char *name);
/* Reads every variable through GET; a bad value gives one warning line on ERR and the default.
 * Texts are copied into O: nothing points into the environment afterwards. */
void spanprof__options_load(struct spanprof__options *o, spanprof__getenv_fn get, FILE *err);
/* One warning line on ERR for each SPANPROF_* entry of ENV that no option has (a misspelling). */
void spanprof__options_warn_unknown(char *const *env, FILE *err);
/* The manual's rows, "| `NAME` | default | meaning |", one per variable, in table order. */
void spanprof__options_markdown(FILE *out);

#pragma GCC visibility pop

#endif /* SPANPROF_OPTIONS_H */
