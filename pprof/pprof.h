/* pprof.h — writes profiles in pprof's format (a gzip-compressed profile.proto, as read by
 * `go tool pprof`, Pyroscope, Parca and Grafana) from a plain in-memory model, so that the
 * `spanprof` command (convert) and the runtime (SPANPROF_PPROF) share one encoder.
 *
 * The model knows nothing of protobuf: stacks of frames (name, file, first line), one value per
 * sample type for each stack, the run's period, duration and start, and an optional thread name
 * per stack and one optional further label (key and value) per stack.  The encoder does the rest: the string table, one Function per distinct frame, one
 * Location per Function, location ids leaf first, and one Sample per distinct (stack, thread, label):
 * samples that repeat a stack are summed.  One Mapping, the program, says that functions, file
 * names and lines are all there: nothing is left for a reader to symbolize.
 *
 * Not installed; everything here is internal to spanprof (hence the spanprof__ prefix, which keeps
 * the names clear of a program linked with libspanprof.a). */
#ifndef SPANPROF_PPROF_H
#define SPANPROF_PPROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#pragma GCC visibility push(hidden)

/* A frame: a span.  FILE may be NULL or "" and LINE 0 when unknown. */
struct spanprof__pprof_frame {
    const char *name;
    const char *file;
    int64_t line;
};

/* A sample type or the period type, e.g. {"calls", "count"} or {"wall", "nanoseconds"}. */
struct spanprof__pprof_type {
    const char *type;
    const char *unit;
};

struct spanprof__pprof_sample {
    const struct spanprof__pprof_frame *stack; /* outermost frame first */
    size_t depth;
    const int64_t *values;                     /* one per model type */
    const char *thread;                        /* the "thread" label, or NULL for none */
};

struct spanprof__pprof_model {
    const struct spanprof__pprof_type *types;
    size_t ntypes;
    const struct spanprof__pprof_sample *samples;
    size_t nsamples;
    struct spanprof__pprof_type period_type;   /* type of the events behind the period */
    int64_t period;                            /* events per sample: 1 when every event counts */
    int64_t duration_ns;                       /* 0: unknown */
    int64_t time_ns;                           /* start, ns since the Unix epoch; 0: unknown */
    const char *comment;                       /* one free-text comment, or NULL */
    const char *program;                       /* the profiled executable, or NULL */
    int stored;                                /* 1: gzip framing without compression, for a
                                                * profile handed over on this machine (a live
                                                * snapshot), where deflate's CPU buys nothing */
};

/* Encodes M and writes it gzip-compressed to F.  Returns 0, or -1 with errno set (ENOMEM, EINVAL
 * for a model without types, or the error of the failed write). */
int spanprof__pprof_write(FILE *f, const struct spanprof__pprof_model *m);

/* The same, a sample at a time, for callers that walk their stacks rather than keep them:
 * begin takes everything of M but its samples (NULL with errno set on failure); add copies what
 * it needs of S, so S's stack and values may be reused at once (-1 with ENOMEM, after which the
 * rest is ignored); finish writes to F like spanprof__pprof_write and frees the builder, also
 * after a failed add.  Frames are remembered by the addresses of their strings as a shortcut:
 * a string must not change while the builder lives. */
struct spanprof__pprof_builder;
struct spanprof__pprof_builder *spanprof__pprof_begin(const struct spanprof__pprof_model *m);
int spanprof__pprof_add(struct spanprof__pprof_builder *b, const struct spanprof__pprof_sample *s);
/* The same with one more string label on the sample, KEY=VALUE (e.g. "pid"="1234" in a profile of
 * several processes): samples that differ in it are kept apart, as by thread. */
int spanprof__pprof_add_labelled(struct spanprof__pprof_builder *b, const struct spanprof__pprof_sample *s,
                                 const char *key, const char *value);
int spanprof__pprof_finish(struct spanprof__pprof_builder *b, FILE *f);
/* Replaces the duration, start and program begin took from its model, for callers that learn
 * them while adding samples (a merge: the sum of its inputs' durations). */
void spanprof__pprof_set_run(struct spanprof__pprof_builder *b, int64_t duration_ns, int64_t time_ns,
                             const char *program);

#pragma GCC visibility pop

#endif
