/* trace_replay.c — one thread's part of a Chrome trace, replayed from the raw enter and exit
 * events of its ring (collect/trace_ring.c): for the trace writer (trace_writer.c, which says
 * what the file holds) and for the capture a crash writes from its signal handler (safetrace.c).
 *
 * Balancing.  The ring keeps raw events; the replay runs them on a stack so that every thread's
 * events nest properly whatever happened:
 *  - an exit matching no open event while events were dropped belongs to a span that began
 *    before the kept window: it gets a begin at the window's first timestamp (counted in
 *    "before"), nested in the order the exits reveal;
 *  - an exit matching a deeper open span closes the spans above it at that time (longjmp, the
 *    same repair as the profile's);
 *  - any other unmatched exit is left out ("unmatched");
 *  - spans still open at the end close at the end tick ("open").
 * With a window (a flight-recorder capture) only the window's events count, as if the ring held
 * no more, except that the spans open at its start whose begin the ring still holds (a thread's
 * outer spans, or one idle all through the window) begin at its start, and so do, on the slow
 * call's or the crashing thread, the outermost spans of its shadow stack (read at the trigger)
 * that the ring does not hold the begin of.  Rings of SPANPROF_FLIGHT_MIN hold one enter/exit
 * pair per kept call in the order the calls ended: the pairs are sorted by start (the longer
 * first on a tie) and replayed as nested events.
 *
 * Async-signal-safe, so that a crash handler may use it: no malloc (memory comes from mmap,
 * spanprof__map), no stdio (text goes through the sink's put), no qsort (a heap sort).
 */
#include <stdint.h>
#include <string.h>

#include "report/trace_replay.h"

/* ---- memory ------------------------------------------------------------------------------- */

/* Room for NEED elements of ELEM bytes at *BUF (spanprof__map_grow, no bound). */
static int grow(void **buf, size_t *cap, size_t need, size_t elem)
{
    return spanprof__map_grow(buf, cap, need, elem, SIZE_MAX);
}

static void release(void *buf, size_t cap, size_t elem)
{
    if (buf)
        spanprof__unmap(buf, cap * elem);
}

/* ---- time --------------------------------------------------------------------------------- */

uint64_t spanprof__trace_ns(const struct spanprof__trace_sink *w, uint64_t tick)
{
    return tick > w->origin ? (uint64_t)((double)(tick - w->origin) * w->v->ns_per_tick) : 0;
}

/* ns since the origin, never below LAST (per-thread monotonic). */
static uint64_t ts_ns(const struct spanprof__trace_sink *w, uint64_t tick, uint64_t last)
{
    uint64_t r = spanprof__trace_ns(w, tick);
    return r < last ? last : r;
}

/* ---- events ------------------------------------------------------------------------------- */

/* Appends TEXT (a literal) at P. */
#define PUT(p, text) (memcpy((p), (text), sizeof(text) - 1), (p) + sizeof(text) - 1)

/* One event, formatted by hand: a trace holds half a million events per thread with the default
 * ring, and through fprintf writing them took twice as long (BENCHMARKS.md, "Writing a trace"). */
static void event(struct spanprof__trace_sink *w, char ph, pid_t tid, uint64_t ns,
                  const struct spanprof_site *s)
{
    size_t name_len;
    const char *name = w->name(w->ctx, s, &name_len);
    char head[128], *p = head; /* 43 bytes of text, three numbers of up to 20 digits (+ NUL) */
    p = PUT(p, ",\n{\"ph\":\"");
    *p++ = ph;
    p = PUT(p, "\",\"pid\":");
    p += spanprof__format_u64(p, (uint64_t)w->pid);
    p = PUT(p, ",\"tid\":");
    p += spanprof__format_u64(p, (uint64_t)tid);
    p = PUT(p, ",\"ts\":");
    p += spanprof__format_u64(p, ns / 1000);
    unsigned frac = (unsigned)(ns % 1000);
    *p++ = '.';
    *p++ = (char)('0' + frac / 100);
    *p++ = (char)('0' + frac / 10 % 10);
    *p++ = (char)('0' + frac % 10);
    p = PUT(p, ",\"name\":");
    w->put(w->ctx, head, (size_t)(p - head));
    w->put(w->ctx, name, name_len);
    w->put(w->ctx, "}", 1);
}

/* A span of the slow call's thread that closed: kept among the longest inside it. */
static void note_inside(struct spanprof__trace_sink *w, const struct spanprof_site *s, uint64_t b,
                        uint64_t e)
{
    const struct spanprof__trace_window *win = w->win;
    uint64_t from = spanprof__trace_ns(w, win->start), to = spanprof__trace_ns(w, win->end);
    if (b + 1000 < from || e > to + 1000 || e < b)
        return;
    uint64_t d = e - b;
    size_t i;
    if (w->nslowest < SPANPROF__TRACE_SLOWEST)
        i = w->nslowest++;
    else if (w->slowest[SPANPROF__TRACE_SLOWEST - 1].ns < d)
        i = SPANPROF__TRACE_SLOWEST - 1;
    else
        return;
    for (; i > 0 && w->slowest[i - 1].ns < d; i--)
        w->slowest[i] = w->slowest[i - 1];
    w->slowest[i].site = s;
    w->slowest[i].ns = d;
}

/* ---- the open spans ----------------------------------------------------------------------- */

struct open_span {
    const struct spanprof_site *site;
    uint64_t begin; /* ns of its begin event */
};

struct stack {
    struct open_span *v;
    size_t n, cap;
};

static int stack_push(struct stack *st, const struct spanprof_site *s)
{
    if (!grow((void **)&st->v, &st->cap, st->n + 1, sizeof *st->v))
        return -1;
    st->v[st->n++] = (struct open_span){s, 0};
    return 0;
}

/* Index + 1 of the topmost open span of S, or 0. */
static size_t stack_find(const struct stack *st, const struct spanprof_site *s)
{
    for (size_t i = st->n; i > 0; i--)
        if (st->v[i - 1].site == s)
            return i;
    return 0;
}

/* Runs ST on the N raw events EV as the thread ran them: a begin opens, an exit closes its
 * span and any left open above it; an exit of a span begun before them closes everything (all
 * of it was nested inside), and that span goes onto LOST when given (innermost first). */
static void run_stack(struct spanprof__trace_sink *w, struct stack *st,
                      const struct spanprof__trace_event *ev, size_t n, struct stack *lost)
{
    for (size_t i = 0; i < n; i++) {
        const struct spanprof_site *s = (const void *)(ev[i].tag & ~SPANPROF__TRACE_EXIT);
        if (!(ev[i].tag & SPANPROF__TRACE_EXIT)) {
            if (stack_push(st, s))
                w->failed = 1;
            continue;
        }
        size_t at = stack_find(st, s);
        st->n = at ? at - 1 : 0;
        if (!at && lost && stack_push(lost, s))
            w->failed = 1;
    }
}

/* ---- SPANPROF_FLIGHT_MIN's pairs ------------------------------------------------------------ */

struct pair {
    const struct spanprof_site *site;
    uint64_t start, end;
};

/* By start, the longer first on a tie (it encloses the other). */
static int pair_before(const struct pair *x, const struct pair *y)
{
    return x->start != y->start ? x->start < y->start : x->end > y->end;
}

static void sift(struct pair *p, size_t i, size_t n)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            return;
        if (c + 1 < n && pair_before(&p[c], &p[c + 1]))
            c++;
        if (!pair_before(&p[i], &p[c]))
            return;
        struct pair t = p[i];
        p[i] = p[c];
        p[c] = t;
        i = c;
    }
}

static void sort_pairs(struct pair *p, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        sift(p, i, n);
    for (size_t end = n; end > 1; end--) {
        struct pair t = p[0];
        p[0] = p[end - 1];
        p[end - 1] = t;
        sift(p, 0, end - 1);
    }
}

/* The pairs in EV (N events, in the order the calls ended) replaced by nested enter and exit
 * events in time order (those of the window only).  Returns the count. */
static size_t pairs_to_events(struct spanprof__trace_sink *w, struct spanprof__trace_event *ev,
                              size_t n)
{
    size_t cap = n / 2 + 1, pcap = 0, ocap = 0;
    struct pair *p = NULL;
    struct open_span *open = NULL; /* begin holds the span's end tick here */
    if (!grow((void **)&p, &pcap, cap, sizeof *p) || !grow((void **)&open, &ocap, cap, sizeof *open)) {
        release(p, pcap, sizeof *p);
        w->failed = 1;
        return 0;
    }
    size_t np = 0, out = 0, depth = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        uintptr_t a = ev[i].tag, b = ev[i + 1].tag;
        if ((a & SPANPROF__TRACE_EXIT) || b != (a | SPANPROF__TRACE_EXIT))
            continue; /* half a pair (overwritten or cut short) */
        struct pair x = {(const void *)a, ev[i].tick, ev[i + 1].tick};
        i++;
        if (w->win && (x.start < w->win->from || x.end > w->win->to))
            continue;
        p[np++] = x;
    }
    sort_pairs(p, np);
    for (size_t i = 0; i < np; i++) {
        while (depth && open[depth - 1].begin <= p[i].start) {
            depth--;
            ev[out++] = (struct spanprof__trace_event){
                (uintptr_t)open[depth].site | SPANPROF__TRACE_EXIT, open[depth].begin};
        }
        ev[out++] = (struct spanprof__trace_event){(uintptr_t)p[i].site, p[i].start};
        open[depth++] = (struct open_span){p[i].site, p[i].end};
    }
    while (depth) {
        depth--;
        ev[out++] = (struct spanprof__trace_event){(uintptr_t)open[depth].site | SPANPROF__TRACE_EXIT,
                                                   open[depth].begin};
    }
    release(p, pcap, sizeof *p);
    release(open, ocap, sizeof *open);
    return out;
}

/* ---- one thread --------------------------------------------------------------------------- */

void spanprof__trace_replay(struct spanprof__trace_sink *w, const struct spanprof__trace_ring *ring,
                            pid_t tid, uint64_t end_tick, struct spanprof__trace_thread_stats *ts)
{
    memset(ts, 0, sizeof *ts);
    size_t acap = 0, n = 0;
    struct spanprof__trace_event *all = NULL;
    uint64_t pending = ring ? spanprof__trace_pending(ring) : 0;
    if (pending) {
        if (grow((void **)&all, &acap, ring->capacity, sizeof *all)) {
            n = spanprof__trace_snapshot_into(ring, all, &ts->dropped);
        } else {
            ts->dropped = pending;
            w->failed = 1;
        }
    }
    struct spanprof__trace_event *ev = all;
    const struct spanprof__trace_window *win = w->win;
    /* Whether the first kept event may be preceded by lost ones (spans begun before it). */
    int cut = ts->dropped != 0;
    /* The ring's own stack (HELD: from its oldest event on), the spans on it at the window's start
     * (outermost first), and when they and the others begun before the window are shown to
     * begin. */
    struct stack held = {0}, opened = {0};
    uint64_t begin_tick = n ? ev[0].tick : 0;
    /* The slow or crashing thread's stack at the window's end, read from its shadow stack: its
     * outermost spans that the ring does not hold the begin of lead the stack.  With pairs, those
     * begun before the window's first pair (they enclose every pair in it), shown from the
     * window's start or their own, whichever is later. */
    const struct spanprof__trace_outer *outer = win && tid == win->tid ? win->outer : NULL;
    size_t nouter = 0;
    if (spanprof__flags.flight_min) {
        n = n ? pairs_to_events(w, ev, n) : 0;
        begin_tick = win ? win->from : n ? ev[0].tick : 0;
        cut = 0;
        uint64_t first_pair = n ? ev[0].tick : end_tick;
        for (; outer && nouter < outer->n && outer->v[nouter].start <= first_pair; nouter++)
            if (outer->v[nouter].start > begin_tick)
                begin_tick = outer->v[nouter].start;
    } else if (win) {
        size_t first = 0;
        while (first < n && ev[first].tick < win->from)
            first++;
        size_t last = first;
        while (last < n && ev[last].tick <= win->to)
            last++;
        run_stack(w, &held, ev, first, NULL);
        for (size_t i = 0; i < held.n; i++)
            if (stack_push(&opened, held.v[i].site))
                w->failed = 1;
        /* The ring holds events before the window: whatever was open was open at its start. */
        begin_tick = first > 0 ? win->from : last > first ? ev[first].tick : win->from;
        if (cut && first == 0 && last > 0 && ev[0].tick > win->from)
            ts->late_from = ev[0].tick;
        cut = cut || first > 0;
        ev += first;
        n = last - first;
    }
    if (win)
        end_tick = win->to;
    int inside = win && win->site && tid == win->tid;
    struct stack st = {0}, before = {0};
    /* Pass 1: the ring's stack run on through the kept events: which exits close spans that
     * began before them (BEFORE), and at the window's end how many of the spans open there the
     * ring holds the begin of (the shadow stack gives the others). */
    int outer_by_ring = outer && !spanprof__flags.flight_min;
    if (cut || outer_by_ring)
        run_stack(w, &held, ev, n, cut ? &before : NULL);
    if (outer_by_ring && outer->depth > held.n)
        nouter = outer->depth - held.n < outer->n ? outer->depth - held.n : outer->n;
    release(held.v, held.cap, sizeof *held.v);
    /* Pass 2 starts with the spans open before the kept events, outermost at the bottom: the
     * shadow stack's, those whose begin was lost, those whose begin the ring holds. */
    for (size_t i = 0; i < nouter; i++)
        if (stack_push(&st, outer->v[i].site) == 0)
            ts->before++;
    for (size_t i = before.n; i > 0; i--)
        if (stack_push(&st, before.v[i - 1].site) == 0)
            ts->before++;
    for (size_t i = 0; i < opened.n; i++)
        if (stack_push(&st, opened.v[i].site) == 0)
            ts->before++;
    release(before.v, before.cap, sizeof *before.v);
    release(opened.v, opened.cap, sizeof *opened.v);
    uint64_t last = 0;
    if (st.n) {
        last = ts_ns(w, begin_tick, 0);
        for (size_t i = 0; i < st.n; i++) {
            event(w, 'B', tid, last, st.v[i].site);
            st.v[i].begin = last;
            ts->events++;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const struct spanprof_site *s = (const void *)(ev[i].tag & ~SPANPROF__TRACE_EXIT);
        uint64_t ns = ts_ns(w, ev[i].tick, last);
        if (!(ev[i].tag & SPANPROF__TRACE_EXIT)) {
            if (stack_push(&st, s)) {
                w->failed = 1;
                continue;
            }
            st.v[st.n - 1].begin = ns;
            event(w, 'B', tid, ns, s);
            ts->events++;
            last = ns;
            continue;
        }
        size_t at = stack_find(&st, s);
        if (!at) {
            ts->unmatched++;
            continue;
        }
        while (st.n >= at) {
            --st.n;
            if (inside)
                note_inside(w, st.v[st.n].site, st.v[st.n].begin, ns);
            event(w, 'E', tid, ns, st.v[st.n].site);
            ts->events++;
        }
        last = ns;
    }
    ts->open = st.n;
    if (st.n) {
        uint64_t ns = ts_ns(w, end_tick, last);
        while (st.n) {
            --st.n;
            event(w, 'E', tid, ns, st.v[st.n].site);
            ts->events++;
        }
    }
    release(st.v, st.cap, sizeof *st.v);
    release(all, acap, sizeof *all);
}
