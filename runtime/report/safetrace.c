/* safetrace.c — the flight recorder's capture of a crash: the Chrome trace of every thread's last
 * SPANPROF_FLIGHT seconds, written from the crash handler (lifecycle/signals.c, through
 * lifecycle/flight.c, which names the file), so a crash shows what led to it as a slow call does.
 *
 * The file is what trace_writer.c writes for a capture — the same events, replayed by
 * trace_replay.c — with a shorter otherData: "capture" gives reason "crash", the signal and the
 * crashing thread.  Only async-signal-safe calls: the registry and the rings are read as they
 * are, without the process lock (the interrupted thread may hold it), names are escaped by hand
 * into static buffers, text goes out through a buffered write(2).  Threads that ended are
 * written from the retired store as the normal writer does, after the running ones.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "record/clock.h"
#include "report/trace_replay.h"

/* One writer at a time (the crash handler writes once per process image): static buffers. */
static struct spanprof__safe_out out;
static char name_buf[65536];

static void put_text(const char *s)
{
    spanprof__safe_put(&out, s, strlen(s));
}

static void put_u64(uint64_t v)
{
    char num[24];
    spanprof__safe_put(&out, num, spanprof__format_u64(num, v));
}

/* S as the body of a JSON string (no quotes) into BUF at AT; returns the new length. */
static size_t escape_into(char *buf, size_t size, size_t at, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    for (; s && *s && at + 7 < size; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            buf[at++] = '\\';
            buf[at++] = (char)c;
        } else if (c < 0x20) {
            memcpy(buf + at, "\\u00", 4);
            buf[at + 4] = hex[c >> 4];
            buf[at + 5] = hex[c & 15];
            at += 6;
        } else {
            buf[at++] = (char)c;
        }
    }
    return at;
}

/* S as a JSON string, quotes included. */
static void put_string(const char *s)
{
    static char buf[8192];
    size_t n = escape_into(buf, sizeof buf - 1, 1, s);
    buf[0] = '"';
    buf[n++] = '"';
    spanprof__safe_put(&out, buf, n);
}

static void put(void *ctx, const char *text, size_t len)
{
    (void)ctx;
    spanprof__safe_put(&out, text, len);
}

/* The sink's names: "NAME" or "NAME (FILE:LINE)", escaped by hand. */
static const char *site_name(void *ctx, const struct spanprof_site *s, size_t *len)
{
    const struct spanprof__view *v = ctx;
    size_t n = escape_into(name_buf, sizeof name_buf - 2, 1, s->name ? s->name : "?");
    if (v->file_line) {
        char line[24] = ":";
        spanprof__format_u64(line + 1, s->first_line);
        n = escape_into(name_buf, sizeof name_buf - 2, n, " (");
        n = escape_into(name_buf, sizeof name_buf - 2, n, s->file ? s->file : "?");
        n = escape_into(name_buf, sizeof name_buf - 2, n, line);
        n = escape_into(name_buf, sizeof name_buf - 2, n, ")");
    }
    name_buf[0] = '"';
    name_buf[n++] = '"';
    *len = n;
    return name_buf;
}

static void put_thread_meta(long pid, pid_t tid, const char *name, size_t index)
{
    put_text(",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":");
    put_u64((uint64_t)pid);
    put_text(",\"tid\":");
    put_u64((uint64_t)tid);
    put_text(",\"args\":{\"name\":");
    put_string(name);
    put_text("}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":");
    put_u64((uint64_t)pid);
    put_text(",\"tid\":");
    put_u64((uint64_t)tid);
    put_text(",\"args\":{\"sort_index\":");
    put_u64(index);
    put_text("}}");
}

static void put_stats(pid_t tid, const char *name, int ended,
                      const struct spanprof__trace_thread_stats *st)
{
    put_text("{\"tid\":");
    put_u64((uint64_t)tid);
    put_text(",\"name\":");
    put_string(name);
    put_text(ended ? ",\"ended\":true,\"events\":" : ",\"events\":");
    put_u64(st->events);
    put_text(",\"dropped_events\":");
    put_u64(st->dropped);
    put_text(",\"begins_before_window\":");
    put_u64(st->before);
    put_text(",\"open_at_write\":");
    put_u64(st->open);
    put_text(",\"unmatched_ends\":");
    put_u64(st->unmatched);
    put_text("}");
}

/* The threads' statistics for otherData, kept as written (at most this many). */
#define MAX_THREADS 1024
static struct {
    pid_t tid;
    int ended;
    char name[64];
    struct spanprof__trace_thread_stats st;
} threads[MAX_THREADS];

int spanprof__trace_write_crash(int fd, const struct spanprof__view *v, uint64_t origin_tick,
                                const struct spanprof__trace_window *win, const char *signal)
{
    long pid = (long)getpid();
    out.fd = fd, out.err = 0, out.len = 0;
    struct spanprof__trace_sink sink = {.put = put, .name = site_name, .ctx = (void *)v, .v = v,
                                        .pid = pid, .origin = origin_tick, .win = win};
    char program[4096];
    ssize_t n = readlink("/proc/self/exe", program, sizeof program - 1);
    program[n > 0 ? n : 0] = 0;
    put_text("{\"traceEvents\":[\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
    put_u64((uint64_t)pid);
    put_text(",\"tid\":0,\"args\":{\"name\":");
    put_string(program);
    put_text("}}");

    /* Running threads, newest first in the registry: their sort index puts them back in order. */
    size_t nt = 0, running = 0;
    for (struct spanprof__thread *t = __atomic_load_n(&spanprof__g.threads, __ATOMIC_ACQUIRE); t;
         t = t->next)
        running += !t->merged;
    for (struct spanprof__thread *t = __atomic_load_n(&spanprof__g.threads, __ATOMIC_ACQUIRE);
         t && nt < MAX_THREADS; t = t->next) {
        if (t->merged)
            continue;
        char label[64];
        const char *name = spanprof__thread_label_safe(t, label, sizeof label);
        put_thread_meta(pid, t->tid, name, running - 1 - nt);
        spanprof__trace_replay(&sink, __atomic_load_n(&t->trace, __ATOMIC_ACQUIRE), t->tid,
                               win->to, &threads[nt].st);
        threads[nt].tid = t->tid;
        threads[nt].ended = 0;
        memcpy(threads[nt].name, name, strnlen(name, sizeof threads[nt].name - 1));
        threads[nt].name[strnlen(name, sizeof threads[nt].name - 1)] = 0;
        nt++;
    }
    const struct spanprof__trace_retired *r = &spanprof__trace_retired;
    for (size_t k = 0; k < r->n && k < SPANPROF__TRACE_RETIRED && nt < MAX_THREADS; k++) {
        const struct spanprof__trace_exited *e = &r->v[k];
        if (!e->ring)
            continue;
        put_thread_meta(pid, e->tid, e->name, nt);
        spanprof__trace_replay(&sink, e->ring, e->tid, win->to, &threads[nt].st);
        threads[nt].tid = e->tid;
        threads[nt].ended = 1;
        memcpy(threads[nt].name, e->name, sizeof threads[nt].name);
        threads[nt].name[sizeof threads[nt].name - 1] = 0;
        nt++;
    }

    put_text("\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"version\":");
    put_u64(SPANPROF_FORMAT_VERSION);
    put_text(",\"pid\":");
    put_u64((uint64_t)pid);
    put_text(",\"program\":");
    put_string(program);
    put_text(",\"clock\":");
    put_string(spanprof__clock_name());
    put_text(",\"start_monotonic_ns\":");
    put_u64(spanprof__g.start_mono_ns);
    put_text(",\"threads\":[");
    for (size_t i = 0; i < nt; i++) {
        if (i)
            put_text(",");
        put_stats(threads[i].tid, threads[i].name, threads[i].ended, &threads[i].st);
    }
    put_text("],\"capture\":{\"reason\":\"crash\",\"signal\":");
    put_string(signal);
    put_text(",\"time\":");
    put_string(win->time);
    put_text(",\"window_s\":");
    /* SPANPROF_FLIGHT in ms, as a decimal number of seconds. */
    uint64_t ms = (uint64_t)(win->seconds * 1000 + 0.5);
    put_u64(ms / 1000);
    char frac[5] = {'.', (char)('0' + ms % 1000 / 100), (char)('0' + ms % 100 / 10),
                    (char)('0' + ms % 10), 0};
    put_text(frac);
    put_text(",\"from_us\":");
    put_u64(spanprof__trace_ns(&sink, win->from) / 1000);
    put_text(",\"to_us\":");
    put_u64(spanprof__trace_ns(&sink, win->to) / 1000);
    put_text(",\"tid\":");
    put_u64((uint64_t)win->tid);
    put_text("}}}\n");
    spanprof__safe_flush(&out);
    if (!out.err && sink.failed)
        return ENOMEM;
    return out.err;
}
