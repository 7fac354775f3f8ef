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
 * gets no figure in that write rather than a wrong one.  A retired group (threads of one name
 * that ended, record/threadretire.c) has the sum of its threads' lifetimes less the sum of their
 * time in outermost spans.
 *
 * The outputs show it as a frame named IDLE_FRAME ("(outside spans)", as `spanprof coz` names
 * the same time): a folded line of its own (per thread with SPANPROF_THREADS=1, else one line
 * for all threads, written after the span stacks), a per-thread "outside_spans_ns" field in the
 * JSON and a sample of its own in pprof (json.c and pprof.c call in here).  With SPANPROF=count
 * there is no clock and nothing is written.  With SPANPROF=sample it is the wall time of the
 * samples that found the thread outside every span (sample_data.c), known for every thread.
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
    if (v->sample_hz) {
        *ns = t->sample ? __atomic_load_n(&t->sample->root.wall_ns, __ATOMIC_RELAXED) : 0;
        return 1;
    }
    uint64_t in_spans = __atomic_load_n(&t->root.child, __ATOMIC_RELAXED);
    if (t->merged) { /* a retired group: its threads' lifetimes, summed */
        *ns = spanprof__ticks_to_ns(v, t->lifetimes > in_spans ? t->lifetimes - in_spans : 0);
        return 1;
    }
    uint64_t end;
    if (__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE))
        end = t->end_tick;
    else if (t == spanprof__tls || spanprof__thread_open_frames(t) == 0)
        end = v->now;
    else
        return 0;
    uint64_t wall = end > t->start_tick ? end - t->start_tick : 0;
    *ns = spanprof__ticks_to_ns(v, wall > in_spans ? wall - in_spans : 0);
    return 1;
}

/* Copies LABEL into LINE's label, with the characters that would split a folded line as '_'
 * (as folded.c does for frames). */
static void set_label(struct spanprof__idle_line *line, const char *label)
{
    size_t len = strnlen(label, sizeof line->label - 1);
    if (label != line->label)
        memcpy(line->label, label, len);
    line->label[len] = 0;
    for (char *c = line->label; *c; c++)
        if (*c == ';' || *c == '\n' || *c == '\r')
            *c = '_';
}

size_t spanprof__idle_lines(const struct spanprof__view *v, struct spanprof__idle_line *lines,
                            spanprof__label_fn label)
{
    size_t n = 0;
    for (size_t i = 0; i < v->nthreads; i++) {
        uint64_t ns;
        if (!spanprof__thread_idle_ns(v, v->threads[i], &ns))
            continue;
        if (!v->threads_root) { /* one line for all threads */
            if (n == 0) {
                lines[0] = (struct spanprof__idle_line){"", 0};
                n = 1;
            }
            lines[0].ns += ns;
            continue;
        }
        set_label(&lines[n], label(v->threads[i], lines[n].label, sizeof lines[n].label));
        lines[n].ns = ns;
        /* Threads of one name share their stacks in the file, so they share this line too:
         * insert in label order (threads are few), merging equal labels. */
        size_t j = n;
        for (; j > 0 && strcmp(lines[j - 1].label, lines[n].label) > 0; j--)
            ;
        if (j > 0 && !strcmp(lines[j - 1].label, lines[n].label)) {
            lines[j - 1].ns += ns;
            continue;
        }
        struct spanprof__idle_line new_line = lines[n];
        memmove(&lines[j + 1], &lines[j], (n - j) * sizeof *lines);
        lines[j] = new_line;
        n++;
    }
    return n;
}

int spanprof__idle_folded_write(FILE *f, const struct spanprof__view *v)
{
    if (!v->idle || v->counting || !v->nthreads)
        return 0;
    struct spanprof__idle_line *lines = calloc(v->nthreads, sizeof *lines);
    if (!lines)
        return -1;
    size_t n = spanprof__idle_lines(v, lines, spanprof__thread_label);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%s%s %" PRIu64 "\n", lines[i].label, v->threads_root ? ";" : "",
                spanprof__idle_frame, lines[i].ns);
    free(lines);
    return 0;
}
