/* idle.c — SPANPROF_IDLE: each thread's time outside any span, so that a flame graph's
 * proportions are of the whole run rather than of the time spent in spans.
 *
 * A thread's time outside spans is its wall time — from the process's start for the main thread,
 * else from the moment it got its data (its first span; the runtime has no hook at thread
 * creation); in a fork child, from the fork — to its exit, or to the write for a thread still
 * running —
 * less the time in its outermost spans, which the recording layer sums in the thread's root node
 * (root.child: every completed or settled outermost activation).  It is known for threads that
 * ended, for the thread writing the profile (its open frames were settled first) and for running
 * threads outside any span at that moment; a running thread inside a span while another thread
 * writes has an outermost span of unknown length so far (its frames are its own to read), so it
 * gets no figure in that write rather than a wrong one.
 *
 * The outputs show it as a frame named IDLE_FRAME ("(outside spans)", as `spanprof coz` names
 * the same time): a folded line of its own (per thread with SPANPROF_THREADS=1, else one line
 * for all threads, written after the span stacks), a per-thread "outside_spans_ns" field in the
 * JSON and a sample of its own in pprof (json.c and pprof.c call in here).  With SPANPROF=count
 * there is no clock and nothing is written.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

const char spanprof__idle_frame[] = "(outside spans)";

int spanprof__thread_idle_ns(const struct spanprof__view *v, const struct spanprof__thread *t,
                             uint64_t *ns)
{
    *ns = 0;
    if (!v->idle || v->counting)
        return 0;
    uint64_t end;
    if (__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE))
        end = t->end_tick;
    else if (t == spanprof__tls || spanprof__thread_open_frames(t) == 0)
        end = v->now;
    else
        return 0;
    uint64_t in_spans = __atomic_load_n(&t->root.child, __ATOMIC_RELAXED);
    uint64_t wall = end > t->start_tick ? end - t->start_tick : 0;
    *ns = spanprof__ticks_to_ns(v, wall > in_spans ? wall - in_spans : 0);
    return 1;
}

struct idle_line {
    char label[64];
    uint64_t ns;
};

static int by_label(const void *a, const void *b)
{
    return strcmp(((const struct idle_line *)a)->label, ((const struct idle_line *)b)->label);
}

int spanprof__idle_folded_write(FILE *f, const struct spanprof__view *v)
{
    if (!v->idle || v->counting || !v->nthreads)
        return 0;
    struct idle_line *lines = calloc(v->nthreads, sizeof *lines);
    if (!lines)
        return -1;
    size_t n = 0;
    uint64_t all = 0;
    int any = 0;
    for (size_t i = 0; i < v->nthreads; i++) {
        uint64_t ns;
        if (!spanprof__thread_idle_ns(v, v->threads[i], &ns))
            continue;
        any = 1;
        all += ns;
        char buf[32];
        snprintf(lines[n].label, sizeof lines[n].label, "%s",
                 spanprof__thread_label(v->threads[i], buf, sizeof buf));
        /* as folded.c does for frames: these would split the line */
        for (char *c = lines[n].label; *c; c++)
            if (*c == ';' || *c == '\n' || *c == '\r')
                *c = '_';
        lines[n++].ns = ns;
    }
    if (!v->threads_root) {
        if (any)
            fprintf(f, "%s %" PRIu64 "\n", spanprof__idle_frame, all);
        free(lines);
        return 0;
    }
    /* Threads of one name share their stacks in the file, so they share this line too. */
    qsort(lines, n, sizeof *lines, by_label);
    for (size_t i = 0; i < n;) {
        uint64_t ns = 0;
        size_t j = i;
        for (; j < n && !strcmp(lines[j].label, lines[i].label); j++)
            ns += lines[j].ns;
        fprintf(f, "%s;%s %" PRIu64 "\n", lines[i].label, spanprof__idle_frame, ns);
        i = j;
    }
    free(lines);
    return 0;
}
