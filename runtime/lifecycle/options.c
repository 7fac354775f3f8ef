/* options.c — the table of SPANPROF_* environment variables, and everything derived from it:
 * parsing with one warning line per bad value, the check for misspelt variables, and the rows of
 * the manual's variable tables (`make check-options` compares them with docs/manual.md).
 *
 * Each variable is one row: its name, its kind, its default, the range a value must lie in, the
 * field it fills and the help line the manual shows.  Parsing is a pure function of a getenv-like
 * callback and an error stream, so it can be tested.  In paths, %p is the pid and %% a percent
 * sign (report/path.c).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/duration.h"
#include "lifecycle/options.h"
#include "common/signalname.h"
#include "report/report.h"

enum kind {
    CHOICE, /* one of WORDS; the value is its index (0/1 switches are the words "0" and "1") */
    PATH,   /* an output path pattern; empty: none (NULL) */
    BYTES,  /* a positive whole number of bytes */
    MIB,    /* a size in MiB: a decimal number > 0 and <= MAX; the value is in bytes */
    SIGNAL, /* a signal: a name with or without SIG (USR2, SIGUSR2) or a number; unset: 0 */
    SECONDS, /* a decimal number of seconds > 0 and <= MAX (a double); unset: 0 */
    PERCENT, /* a decimal number > 0 and <= MAX, a share in percent (a double); unset: 0 */
    MARKER, /* set by the runtime for the programs it starts; any text, never a warning */
    COUNT,  /* a whole number >= 1 and <= MAX */
    DIRECTORY, /* a directory (not a pattern), with room for a file name; empty: none (NULL) */
    GLOBS,  /* comma-separated fnmatch patterns, none empty, shorter than PATH_MAX in all; an
             * empty value is an empty list ("") */
    DURATION, /* a number > 0 with a unit, ns, us, ms or s (`10us`), at most a day; in ns;
               * unset: 0 */
    RULES,  /* SPANPROF_SLOW: comma-separated SPAN:DURATION, at most 16, shorter than PATH_MAX;
             * unset: NULL */
};

struct option {
    const char *name;
    enum kind kind;
    size_t field;              /* offset of the value in struct spanprof__options */
    const char *def;           /* the default as written in the environment; NULL: unset (PATH) */
    const char *const *words;  /* CHOICE: the accepted values, NULL-terminated */
    double max;                /* MIB: the largest value */
    const char *help;          /* the manual's "meaning" column (Markdown) */
};

static const char *const switch_words[] = {"0", "1", NULL};
static const char *const mode_words[] = {"0", "1", "count", "sample", NULL};
static const char *const recursion_words[] = {"keep", "collapse", NULL};
static const char *const value_words[] = {"wall", "cpu", NULL};

#define FIELD(f) offsetof(struct spanprof__options, f)

/* Parsing, and so the warnings, follow this order. */
static const struct option options[] = {
    {"SPANPROF", CHOICE, FIELD(mode), "1", mode_words, 0,
     "`0` turns recording off: no output files, no coz points, near-zero cost; `count`: counting "
     "only; `sample`: exact counts, sampled wall and CPU time (see below)"},
    {"SPANPROF_SPANS", GLOBS, FIELD(spans), NULL, NULL, 0,
     "only the spans whose names match one of these comma-separated patterns (`*` any "
     "characters, as in the shell) record, whether the attribute or an option gave them, and so "
     "do those `SPANPROF_SLOW`, `SPANPROF_COZ_PROGRESS` and `SPANPROF_COZ_LATENCY` name; the "
     "others are off (see *Choosing spans at run time*; `spanprof spans PID on` switches them "
     "on in a running process); unset: every span"},
    {"SPANPROF_SAMPLE_HZ", COUNT, FIELD(sample_hz), "997", NULL, 10000,
     "with `SPANPROF=sample`: samples per second (on average) of every thread's current span, a "
     "whole number from 1 to 10000"},
    {"SPANPROF_THREADS", CHOICE, FIELD(threads), "0", switch_words, 0,
     "`1`: a root frame per thread, named by its pthread name, else `thread-TID`"},
    {"SPANPROF_FILE_LINE", CHOICE, FIELD(file_line), "0", switch_words, 0,
     "`1`: frames read `name (file:line)` (trace events too)"},
    {"SPANPROF_IDLE", CHOICE, FIELD(idle), "0", switch_words, 0,
     "`1`: each thread's time outside any span as a frame `(outside spans)` (see *Time outside "
     "spans*)"},
    {"SPANPROF_QUIET", CHOICE, FIELD(quiet), "0", switch_words, 0,
     "`1`: no line at exit naming the files written (printed only when stderr is a terminal)"},
    {"SPANPROF_FOLDED", PATH, FIELD(folded), "spanprof.folded", NULL, 0,
     "where to write folded stacks; empty: don't write them"},
    {"SPANPROF_FOLDED_MAX_BYTES", BYTES, FIELD(folded_max_bytes), "67108864", NULL, 0,
     "the folded file's size limit (64 MiB): lines past it are left out and their values summed "
     "into one `FIRST;[truncated]` line per first frame, with a warning"},
    {"SPANPROF_FOLDED_MAX_DEPTH", COUNT, FIELD(folded_max_depth), "1024", NULL, 1000000,
     "folded stacks deeper than this many frames end in a `[truncated]` frame carrying the rest "
     "of the subtree's value, with a warning"},
    {"SPANPROF_FOLDED_RECURSION", CHOICE, FIELD(folded_recursion), "keep", recursion_words, 0,
     "`collapse`: direct recursion becomes one frame in the folded file (`a;a;a;b` → `a;b`)"},
    {"SPANPROF_FOLDED_VALUE", CHOICE, FIELD(folded_value), "wall", value_words, 0,
     "`cpu`: the folded stacks hold each stack's own CPU time in ns instead of its wall time (with "
     "`SPANPROF=sample` or `SPANPROF_CPU=1`; otherwise a warning, and wall time)"},
    {"SPANPROF_JSON", PATH, FIELD(json), NULL, NULL, 0,
     "where to write the JSON profile; unset or empty: don't"},
    {"SPANPROF_TRACE", PATH, FIELD(trace), NULL, NULL, 0,
     "where to write the Chrome trace; unset or empty: no tracing"},
    {"SPANPROF_PPROF", PATH, FIELD(pprof), NULL, NULL, 0,
     "where to write the pprof profile (gzip-compressed protobuf); unset or empty: don't"},
    {"SPANPROF_TRACE_BUFFER", MIB, FIELD(trace_buffer), "8", NULL, 65536,
     "trace buffer per thread, in MiB: a number > 0 and ≤ 65536, fractions allowed (`0.5`); 16 "
     "bytes per event, so 8 MiB holds the last 524,288 events (262,144 span calls)"},
    {"SPANPROF_HISTOGRAM", CHOICE, FIELD(histogram), "0", switch_words, 0,
     "`1`: latency percentiles of each span's inclusive wall time (exact mode: with `count` or "
     "`sample`, which measure no call's duration, a warning and none)"},
    {"SPANPROF_COMPENSATE", CHOICE, FIELD(compensate), "1", switch_words, 0,
     "`0`: exact times keep the profiler's own cost per call; by default it is measured at "
     "start and taken out of every span's total and self time (see *Compensated times*)"},
    {"SPANPROF_CPU", CHOICE, FIELD(cpu), "0", switch_words, 0,
     "`1`: CPU time per span, exact: the thread's CPU clock read at enter and exit"},
    {"SPANPROF_ALLOC", CHOICE, FIELD(alloc), "0", switch_words, 0,
     "`1`: allocations per span; needs `LD_PRELOAD=libspanprof-alloc.so`"},
    {"SPANPROF_ALLOC_STACKS", CHOICE, FIELD(alloc_stacks), "0", switch_words, 0,
     "`1` (with `SPANPROF_ALLOC=1`): sampled allocation stacks as a memory flame graph"},
    {"SPANPROF_ALLOC_SAMPLE", BYTES, FIELD(alloc_sample), "524288", NULL, 0,
     "mean sampling interval, in bytes"},
    {"SPANPROF_ALLOC_FOLDED", PATH, FIELD(alloc_folded), "spanprof.alloc.folded", NULL, 0,
     "where the memory flame graph goes (`%p` as above; empty: not written)"},
    {"SPANPROF_DUMP_SIGNAL", SIGNAL, FIELD(dump_signal), NULL, NULL, 0,
     "a signal (`USR2`, `SIGUSR2` or `12`) on which every output is written while the program "
     "runs on; `spanprof dump PID` sends it"},
    {"SPANPROF_DUMP_INTERVAL", SECONDS, FIELD(dump_interval), NULL, NULL, 31536000,
     "write every output every so many seconds (fractions allowed), so a killed process loses "
     "at most that much"},
    {"SPANPROF_LIVE", DIRECTORY, FIELD(live), NULL, NULL, 0,
     "a directory (made if missing, mode 0700) where each process offers its live profile to "
     "`spanprof serve` on a socket of its own (see *Live profiles*); unset or empty: none"},
    {"SPANPROF_COZ_PROGRESS", GLOBS, FIELD(coz_progress), NULL, NULL, 0,
     "under coz: spans whose names match one of these comma-separated patterns (`*` any "
     "characters, as in the shell) are throughput points of their name, each exit a visit: a "
     "progress point without a source edit (see *coz*)"},
    {"SPANPROF_COZ_LATENCY", GLOBS, FIELD(coz_latency), NULL, NULL, 0,
     "under coz: the spans that are latency points, by name pattern; unset: the spans marked with "
     "the attribute; empty: none.  A span whose function returns into the C or C++ library "
     "(`main`, a thread's start routine) never is one"},
    {"SPANPROF_FLIGHT", SECONDS, FIELD(flight), NULL, NULL, 3600,
     "the flight recorder: each thread keeps its span events of at least the last so many "
     "seconds (fractions allowed) in a ring, written only when asked: by `SPANPROF_SLOW` or "
     "`spanprof dump --flight` (see *Flight recorder*); unset: none, or 1 with `SPANPROF_SLOW`"},
    {"SPANPROF_FLIGHT_BYTES", BYTES, FIELD(flight_bytes), "4194304", NULL, 0,
     "the flight recorder's ring per thread, in bytes (4 MiB: 262,144 events of 16 bytes); the "
     "oldest events are overwritten, so a busy thread may keep less than `SPANPROF_FLIGHT` "
     "seconds"},
    {"SPANPROF_FLIGHT_MIN", DURATION, FIELD(flight_min), NULL, NULL, 0,
     "with the flight recorder: keep only calls at least this long (`10us`; units `ns`, `us`, "
     "`ms`, `s`), one event pair each, written at their exit"},
    {"SPANPROF_SLOW", RULES, FIELD(slow), NULL, NULL, 0,
     "`SPAN:DURATION[,SPAN:DURATION...]` (`handle_request:5ms`, SPAN a pattern as in the shell): "
     "a call of SPAN that lasts at least DURATION writes a capture; starts the flight recorder "
     "with a 1-second window when `SPANPROF_FLIGHT` is unset"},
    {"SPANPROF_SLOW_DIR", DIRECTORY, FIELD(slow_dir), "spanprof.slow", NULL, 0,
     "where captures go (made if missing, mode 0700), one file each, "
     "`SPAN.PID.TIME.trace.json`"},
    {"SPANPROF_SLOW_MAX", COUNT, FIELD(slow_max), "100", NULL, 1000000,
     "no capture is written while the directory holds this many"},
    {"SPANPROF_SLOW_MAX_BYTES", BYTES, FIELD(slow_max_bytes), "268435456", NULL, 0,
     "no capture is written while the directory's captures take this many bytes (256 MiB) or "
     "more"},
    {"SPANPROF_SLOW_INTERVAL", SECONDS, FIELD(slow_interval), "1", NULL, 86400,
     "at most one capture per span in so many seconds (fractions allowed)"},
    {"SPANPROF_BUDGET", PERCENT, FIELD(budget), NULL, NULL, 100,
     "the runtime's own cost kept under this share of the process's CPU time, in percent "
     "(fractions allowed): while it is over, spans a plugin option chose are switched off, the "
     "shortest calls first (see *Cost budget*); unset: no budget"},
    {"SPANPROF_ANCESTOR", MARKER, FIELD(ancestor), NULL, NULL, 0,
     "set by the runtime in its own environment, so programs it starts know they are "
     "descendants (see *Long-running programs*); not meant to be set by hand"},
    {"SPANPROF_HANDOVER", MARKER, FIELD(handover), NULL, NULL, 0,
     "set by the runtime in its own environment when the library holding it is unloaded, so a "
     "copy loaded later in the same process adds to the same profile (see *Long-running "
     "programs*); not meant to be set by hand"},
};
#define NOPTIONS (sizeof options / sizeof options[0])
_Static_assert(SPANPROF__OPTION_TEXTS >= 13 * PATH_MAX,
               "room for the texts of the 13 PATH, DIRECTORY, GLOBS, RULES and MARKER variables");

/* The smallest trace buffer: two 16-byte events. */
#define TRACE_BUFFER_MIN 32

/* Parses TEXT as option O's value into *VALUE (a field of the kind's type); 0 when TEXT is not
 * a valid value. */
static int parse(const struct option *o, const char *text, void *value)
{
    switch (o->kind) {
    case CHOICE:
        for (int i = 0; o->words[i]; i++)
            if (strcmp(text, o->words[i]) == 0) {
                *(int *)value = i;
                return 1;
            }
        return 0;
    case PATH:
        if (!spanprof__path_valid(text) || strlen(text) >= PATH_MAX)
            return 0;
        *(const char **)value = *text ? text : NULL;
        return 1;
    case DIRECTORY:
        if (strlen(text) >= PATH_MAX - 64)
            return 0;
        *(const char **)value = *text ? text : NULL;
        return 1;
    case BYTES: {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(text, &end, 10);
        if (*text < '0' || *text > '9' || *end || errno || n == 0)
            return 0;
        *(uint64_t *)value = n;
        return 1;
    }
    case COUNT: {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(text, &end, 10);
        if (*text < '0' || *text > '9' || *end || errno || n == 0 || n > o->max)
            return 0;
        *(uint64_t *)value = n;
        return 1;
    }
    case MIB: {
        char *end;
        double mib = strtod(text, &end);
        if (!*text || *end || !isfinite(mib) || mib <= 0 || mib > o->max)
            return 0;
        uint64_t bytes = (uint64_t)(mib * 1048576.0);
        *(uint64_t *)value = bytes < TRACE_BUFFER_MIN ? TRACE_BUFFER_MIN : bytes;
        return 1;
    }
    case SIGNAL:
        return (*(int *)value = spanprof__dump_signal_parse(text, NULL)) != 0;
    case SECONDS:
    case PERCENT: {
        char *end;
        double sec = strtod(text, &end);
        if (!*text || *end || !isfinite(sec) || sec <= 0 || sec > o->max)
            return 0;
        *(double *)value = sec;
        return 1;
    }
    case MARKER:
        *(const char **)value = text;
        return 1;
    case DURATION:
        return spanprof__duration_parse(text, strlen(text), (uint64_t *)value);
    case RULES: {
        size_t n = 1;
        for (const char *p = text; *p; p++)
            n += *p == ',';
        if (strlen(text) >= PATH_MAX || n > 16 || spanprof__slow_rules(text, NULL, NULL))
            return 0;
        *(const char **)value = text;
        return 1;
    }
    case GLOBS:
        if (strlen(text) >= PATH_MAX || (*text && (text[0] == ',' || strstr(text, ",,") ||
                                                   text[strlen(text) - 1] == ',')))
            return 0;
        *(const char **)value = text;
        return 1;
    }
    return 0;
}

/* What a bad value of O should have been, for its warning: "is not 0, 1 or count", ... */
static void print_expected(const struct option *o, const char *text, FILE *err)
{
    switch (o->kind) {
    case CHOICE:
        fputs("is not ", err);
        for (int i = 0; o->words[i]; i++)
            fprintf(err, "%s%s", i == 0 ? "" : o->words[i + 1] ? ", " : " or ", o->words[i]);
        break;
    case PATH:
        fputs(strlen(text) >= PATH_MAX ? "is longer than PATH_MAX"
                                       : "has a '%' not followed by 'p' or '%'", err);
        break;
    case DIRECTORY:
        fputs("is too long a directory name", err);
        break;
    case BYTES:
        fputs("is not a positive number of bytes", err);
        break;
    case COUNT:
        fprintf(err, "is not a whole number from 1 to %.0f", o->max);
        break;
    case MIB:
        fprintf(err, "is not a size in MiB (a number > 0 and <= %.0f)", o->max);
        break;
    case SIGNAL:
        fputs("is not a signal name or number (USR2, SIGUSR2, 12) that a program may catch", err);
        break;
    case SECONDS:
        fprintf(err, "is not a number of seconds (> 0 and <= %.0f)", o->max);
        break;
    case PERCENT:
        fprintf(err, "is not a percentage (a number > 0 and <= %.0f)", o->max);
        break;
    case GLOBS:
        fputs(strlen(text) >= PATH_MAX ? "is longer than PATH_MAX"
                                       : "has an empty pattern (a comma at an end or two in a row)",
              err);
        break;
    case DURATION:
        fputs("is not a duration (a number > 0 and a unit: ns, us, ms or s)", err);
        break;
    case RULES:
        fputs("is not SPAN:DURATION[,SPAN:DURATION...] (at most 16; units ns, us, ms or s)", err);
        break;
    case MARKER:
        break;
    }
}

/* Kinds whose value is a text of the environment, kept as a copy. */
static int keeps_text(enum kind kind)
{
    return kind == PATH || kind == DIRECTORY || kind == MARKER || kind == GLOBS || kind == RULES;
}

/* A copy of TEXT in O's own storage (NULL when full: only values longer than a path fill it). */
static const char *keep_text(struct spanprof__options *o, const char *text)
{
    size_t n = strlen(text) + 1;
    if (n > sizeof o->texts - o->texts_used)
        return NULL;
    char *copy = memcpy(o->texts + o->texts_used, text, n);
    o->texts_used += n;
    return copy;
}

void spanprof__options_load(struct spanprof__options *opts, spanprof__getenv_fn get, FILE *err)
{
    opts->texts_used = 0;
    for (size_t i = 0; i < NOPTIONS; i++) {
        const struct option *o = &options[i];
        void *value = (char *)opts + o->field;
        const char *text = get(o->name);
        if (text && parse(o, text, value)) {
            const char **kept = keeps_text(o->kind) ? (const char **)value : NULL;
            if (kept && *kept && !(*kept = keep_text(opts, *kept)))
                fprintf(err, "spanprof: warning: no room left for %s's value; using none\n",
                        o->name);
            continue;
        }
        if (keeps_text(o->kind))
            *(const char **)value = o->def; /* NULL: unset, and no pattern to parse */
        else if (o->kind == SIGNAL)
            *(int *)value = 0; /* no default: unset */
        else if ((o->kind == SECONDS || o->kind == PERCENT) && !o->def)
            *(double *)value = 0;
        else if (o->kind == DURATION)
            *(uint64_t *)value = 0;
        else
            parse(o, o->def, value);
        if (!text)
            continue;
        fprintf(err, "spanprof: warning: %s='%s' ", o->name, text);
        print_expected(o, text, err);
        if (!o->def)
            fputs("; using none\n", err);
        else if (o->kind == PATH)
            fprintf(err, "; using '%s'\n", o->def);
        else
            fprintf(err, "; using %s\n", o->def);
    }
}

void spanprof__options_warn_unknown(char *const *env, FILE *err)
{
    for (; env && *env; env++) {
        const char *e = *env;
        if (strncmp(e, "SPANPROF_", 9) != 0)
            continue;
        size_t len = strcspn(e, "=");
        int known = 0;
        for (size_t i = 0; i < NOPTIONS && !known; i++)
            known = strlen(options[i].name) == len && strncmp(options[i].name, e, len) == 0;
        if (!known)
            fprintf(err, "spanprof: warning: %.*s is not a spanprof variable; ignored\n", (int)len, e);
    }
}

void spanprof__options_markdown(FILE *out)
{
    for (size_t i = 0; i < NOPTIONS; i++) {
        const struct option *o = &options[i];
        if (o->def)
            fprintf(out, "| `%s` | `%s` | %s |\n", o->name, o->def, o->help);
        else
            fprintf(out, "| `%s` | unset | %s |\n", o->name, o->help);
    }
}
