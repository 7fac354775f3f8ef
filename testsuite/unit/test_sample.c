/* test_sample.c — SPANPROF=sample's figures on hand-built trees: merging two nodes' data, the
 * CPU time and inclusive sums a write computes (the stretches found on a CPU scaled to the
 * thread's CPU clock, timely samples' stretches scaled to all of them, late ones standing only
 * where there is no timely one, stretches the thread never ran in as they are), and what the writers print from them (exact values); and
 * frame arrays a thread outgrew staying mapped for the sampler. */
#include <json-c/json.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "unit.h"

UNIT_SITE(s_outer, "outer");
UNIT_SITE(s_inner, "inner");
UNIT_SITE(s_other, "other");

/* What the hand-built trees took from malloc, freed at the end of each test. */
static void *allocated[16];
static size_t nallocated;

static void *take(size_t size)
{
    ck_assert_uint_lt(nallocated, sizeof allocated / sizeof *allocated);
    void *p = calloc(1, size);
    ck_assert_ptr_nonnull(p);
    return allocated[nallocated++] = p;
}

static void release(void)
{
    while (nallocated)
        free(allocated[--nallocated]);
}

/* A node with sample data right behind it (offset 0, as when no other collector is on). */
static struct spanprof__node *node(const struct spanprof_site *site, struct spanprof__node *parent,
                                   uint64_t calls, uint64_t wall, uint64_t on_cpu, uint64_t samples)
{
    struct spanprof__node *n = take(sizeof *n + sizeof(struct spanprof__sample_node));
    spanprof__node_init(n, site, parent);
    n->next_sibling = parent->first_child;
    parent->first_child = n;
    n->calls = calls;
    struct spanprof__sample_node *s = spanprof__sample_of(n);
    s->wall_timely_ns = wall;
    s->cpu_timely_ns = on_cpu;
    s->samples = samples;
    return n;
}

/* outer (wall 100, on a CPU 60, 10 samples) -> inner (40, 30, 4) -> outer (20, 0, 2);
 * outer -> other (5, 5, 1).  Calls 1, 3, 2, 7.  The thread's CPU clock says it used twice the
 * stretches found on a CPU (190 against 95): its spans' CPU times are twice their stretches. */
static struct spanprof__thread *tree(void)
{
    struct spanprof__thread *t = take(sizeof *t);
    t->sample = take(sizeof *t->sample);
    t->sample->cpu_used_ns = 190;
    t->sample->cpu_timely_ns = 95;
    t->sample->wall_timely_ns = 165;
    spanprof__node_init(&t->root, NULL, NULL);
    t->tid = 42;
    strcpy(t->name, "sampled");
    struct spanprof__node *outer = node(&s_outer, &t->root, 1, 100, 60, 10);
    struct spanprof__node *inner = node(&s_inner, outer, 3, 40, 30, 4);
    node(&s_outer, inner, 2, 20, 0, 2);
    node(&s_other, outer, 7, 5, 5, 1);
    return t;
}

START_TEST(merge)
{
    spanprof__sample_ext_offset = 0;
    struct spanprof__sample_node
        d = {.wall_timely_ns = 10, .wall_late_ns = 4, .cpu_timely_ns = 2, .cpu_late_ns = 1,
             .samples = 1, .wall_ns = 99, .cpu_ns = 99, .wall_incl = 99},
        s = {.wall_timely_ns = 5, .wall_late_ns = 3, .cpu_timely_ns = 1, .cpu_late_ns = 2,
             .samples = 2, .wall_ns = 7, .cpu_ns = 7, .wall_incl = 7};
    spanprof__sample_node_merge(&d, &s);
    ck_assert_uint_eq(d.wall_timely_ns, 15);
    ck_assert_uint_eq(d.wall_late_ns, 7);
    ck_assert_uint_eq(d.cpu_timely_ns, 3);
    ck_assert_uint_eq(d.cpu_late_ns, 3);
    ck_assert_uint_eq(d.samples, 3);
    /* the times and the inclusive figures are the next write's to compute */
    ck_assert_uint_eq(d.wall_ns, 99);
    ck_assert_uint_eq(d.cpu_ns, 99);
    ck_assert_uint_eq(d.wall_incl, 99);
    ck_assert_uint_eq(s.wall_timely_ns, 5);
}
END_TEST

START_TEST(sums_and_sites)
{
    spanprof__sample_ext_offset = 0;
    struct spanprof__thread *t = tree();
    spanprof__sample_sums(t);
    struct spanprof__node *outer = unit_child(&t->root, &s_outer);
    ck_assert_uint_eq(spanprof__sample_of(outer)->wall_incl, 165);
    ck_assert_uint_eq(spanprof__sample_of(outer)->cpu_ns, 120);
    ck_assert_uint_eq(spanprof__sample_of(outer)->cpu_incl, 190);
    ck_assert_uint_eq(t->sample->root.cpu_ns, 0); /* no stretch outside spans */
    ck_assert_uint_eq(spanprof__sample_of(outer)->samples_incl, 17);
    struct spanprof__view v = unit_view(&t, 1);
    v.sample_hz = 997;
    size_t n;
    struct spanprof__site_stats *st = spanprof__aggregate_sites(&v, &n);
    ck_assert_uint_eq(n, 3);
    /* sorted by name: inner, other, outer; outer's recursion counted once in its totals */
    ck_assert_str_eq(st[0].site->name, "inner");
    ck_assert_uint_eq(st[0].calls, 3);
    ck_assert_uint_eq(st[0].total, 60);
    ck_assert_uint_eq(st[0].self, 40);
    ck_assert_uint_eq(st[0].cpu_total, 60);
    ck_assert_uint_eq(st[0].cpu_self, 60);
    ck_assert_uint_eq(st[0].samples, 6);
    ck_assert_str_eq(st[2].site->name, "outer");
    ck_assert_uint_eq(st[2].calls, 3);
    ck_assert_uint_eq(st[2].total, 165);
    ck_assert_uint_eq(st[2].self, 120);
    ck_assert_uint_eq(st[2].cpu_total, 190);
    ck_assert_uint_eq(st[2].cpu_self, 120);
    ck_assert_uint_eq(st[2].samples, 17);
    free(st);
    /* folded values are the sampled self wall times */
    char *folded = unit_folded(&v);
    ck_assert_str_eq(folded, "outer 100\n"
                             "outer;inner 40\n"
                             "outer;inner;outer 20\n"
                             "outer;other 5\n");
    free(folded);
    /* the JSON: mode and rate, the CPU figures and samples per span */
    struct spanprof__json_meta m = {.program = "p", .start_time = "t", .clock = "none"};
    json_object *o = spanprof__json_build(&v, &m), *x;
    ck_assert(json_object_object_get_ex(o, "mode", &x));
    ck_assert_str_eq(json_object_get_string(x), "sample");
    ck_assert(json_object_object_get_ex(o, "sample_hz", &x));
    ck_assert_int_eq(json_object_get_int(x), 997);
    json_object *spans = json_object_object_get(o, "spans");
    json_object *so = json_object_array_get_idx(spans, 2);
    ck_assert_str_eq(json_object_get_string(json_object_object_get(so, "name")), "outer");
    ck_assert_int_eq(json_object_get_int64(json_object_object_get(so, "total_ns")), 165);
    ck_assert_int_eq(json_object_get_int64(json_object_object_get(so, "self_ns")), 120);
    ck_assert_int_eq(json_object_get_int64(json_object_object_get(so, "cpu_total_ns")), 190);
    ck_assert_int_eq(json_object_get_int64(json_object_object_get(so, "cpu_self_ns")), 120);
    ck_assert_int_eq(json_object_get_int64(json_object_object_get(so, "samples")), 17);
    json_object_put(o);
    /* not sampled: none of it */
    v.sample_hz = 0;
    o = spanprof__json_build(&v, &m);
    ck_assert(!json_object_object_get_ex(o, "mode", &x));
    so = json_object_array_get_idx(json_object_object_get(o, "spans"), 0);
    ck_assert(!json_object_object_get_ex(so, "samples", &x));
    json_object_put(o);
    release();
}
END_TEST

/* Time outside spans is the root's sampled wall time, known for every thread; its CPU time the
 * root's stretches scaled, with the main thread's CPU time before its first span. */
START_TEST(idle)
{
    spanprof__sample_ext_offset = 0;
    struct spanprof__thread *t = tree();
    struct spanprof__sample_thread st = {
        .cpu_used_ns = 10, .cpu_timely_ns = 5, .wall_timely_ns = 165 + 333,
        .root = {.wall_timely_ns = 333, .cpu_timely_ns = 3, .samples = 4}};
    t->sample = &st;
    struct spanprof__view v = unit_view(&t, 1);
    v.sample_hz = 997;
    v.idle = 1;
    uint64_t ns;
    spanprof__sample_sums(t);
    ck_assert_int_eq(spanprof__thread_idle_ns(&v, t, &ns), 1);
    ck_assert_uint_eq(ns, 333);
    /* two threads merged into one: their time outside spans adds up, and so do their CPU clocks
     * and stretches */
    struct spanprof__thread other = {0};
    struct spanprof__sample_thread ost = {
        .cpu_used_ns = 4, .cpu_timely_ns = 2, .cpu_before_ns = 1, .wall_timely_ns = 7,
        .wall_before_ns = 50, .root = {.wall_timely_ns = 7, .cpu_timely_ns = 1, .samples = 2}};
    other.sample = &ost;
    spanprof__sample_thread_merge(t, &other);
    ck_assert_uint_eq(st.root.wall_timely_ns, 340);
    ck_assert_uint_eq(st.root.cpu_timely_ns, 4);
    ck_assert_uint_eq(st.root.samples, 6);
    ck_assert_uint_eq(st.cpu_used_ns, 14);
    ck_assert_uint_eq(st.cpu_timely_ns, 7);
    ck_assert_uint_eq(st.wall_timely_ns, 505);
    ck_assert_uint_eq(st.wall_before_ns, 50);
    other.sample = NULL;
    spanprof__sample_thread_merge(t, &other); /* no sampler state: nothing */
    ck_assert_uint_eq(st.root.wall_timely_ns, 340);
    /* a write: 4 ns of stretches at 14/7, and the 1 ns before the first span; the 50 ns before
     * it outside spans as they are */
    spanprof__sample_sums(t);
    ck_assert_uint_eq(st.root.cpu_ns, 9);
    ck_assert_int_eq(spanprof__thread_idle_ns(&v, t, &ns), 1);
    ck_assert_uint_eq(ns, 390);
    /* a thread no sample found on a CPU: all its CPU time outside spans */
    struct spanprof__sample_thread unseen = {.cpu_used_ns = 12};
    t->sample = &unseen;
    spanprof__sample_sums(t);
    ck_assert_uint_eq(unseen.root.cpu_ns, 12);
    release();
}
END_TEST

/* Late samples: a thread's wall and CPU time are shared in the proportion of its timely
 * stretches alone; its late ones count only when it has no timely one. */
START_TEST(late_samples)
{
    spanprof__sample_ext_offset = 0;
    struct spanprof__thread *t = take(sizeof *t);
    spanprof__node_init(&t->root, NULL, NULL);
    /* timely: outer 60 of wall (20 on a CPU), outside spans 40 (5); late: outer 10 (0),
     * outside 90 (30); the CPU clock says 50 */
    struct spanprof__node *outer = node(&s_outer, &t->root, 1, 60, 20, 3);
    struct spanprof__sample_node *o = spanprof__sample_of(outer);
    o->wall_late_ns = 10;
    struct spanprof__sample_thread st = {
        .cpu_used_ns = 50, .wall_timely_ns = 100, .wall_late_ns = 100, .cpu_timely_ns = 25,
        .cpu_late_ns = 30,
        .root = {.wall_timely_ns = 40, .wall_late_ns = 90, .cpu_timely_ns = 5, .cpu_late_ns = 30}};
    t->sample = &st;
    spanprof__sample_sums(t);
    ck_assert_uint_eq(o->wall_ns, 120); /* 60 of the 100 timely: 60 % of all 200 */
    ck_assert_uint_eq(st.root.wall_ns, 80);
    ck_assert_uint_eq(o->cpu_ns, 40); /* 20 of 25: 80 % of the clock's 50 */
    ck_assert_uint_eq(st.root.cpu_ns, 10);
    /* no timely sample at all (a thread sampled afresh): the late stretches, as they are; CPU
     * scaled to the clock */
    memset(o, 0, sizeof *o);
    o->wall_late_ns = 10;
    st = (struct spanprof__sample_thread){
        .cpu_used_ns = 60, .wall_late_ns = 100, .cpu_late_ns = 30,
        .root = {.wall_late_ns = 90, .cpu_late_ns = 30}};
    spanprof__sample_sums(t);
    ck_assert_uint_eq(o->wall_ns, 10);
    ck_assert_uint_eq(st.root.wall_ns, 90);
    ck_assert_uint_eq(o->cpu_ns, 0);
    ck_assert_uint_eq(st.root.cpu_ns, 60);
    release();
}
END_TEST

/* Still stretches (the thread ran nothing since its previous sample) are charged as they are:
 * never scaled, whether or not the thread had timely samples, and kept out of the share-out of
 * the stretches it ran in. */
START_TEST(still_stretches)
{
    spanprof__sample_ext_offset = 0;
    struct spanprof__thread *t = take(sizeof *t);
    spanprof__node_init(&t->root, NULL, NULL);
    /* outer: 30 still (asleep), 20 timely and 10 late it ran in (20 and 0 on a CPU); inner:
     * 40 still, 5 late; outside spans: 30 timely (10 on a CPU), 35 late.  Ran in: 50 timely,
     * 50 late, so each timely stretch stands for twice itself; the CPU clock says 60. */
    struct spanprof__node *outer = node(&s_outer, &t->root, 1, 20, 20, 6);
    struct spanprof__node *inner = node(&s_inner, outer, 2, 0, 0, 5);
    struct spanprof__sample_node *o = spanprof__sample_of(outer), *in = spanprof__sample_of(inner);
    o->wall_still_ns = 30;
    o->wall_late_ns = 10;
    in->wall_still_ns = 40;
    in->wall_late_ns = 5;
    struct spanprof__sample_thread st = {
        .cpu_used_ns = 60, .wall_timely_ns = 50, .wall_late_ns = 50, .cpu_timely_ns = 30,
        .root = {.wall_timely_ns = 30, .wall_late_ns = 35, .cpu_timely_ns = 10}};
    t->sample = &st;
    spanprof__sample_sums(t);
    ck_assert_uint_eq(o->wall_ns, 70);    /* 30 as it is + 2 x 20 */
    ck_assert_uint_eq(in->wall_ns, 40);   /* its still 40 only: no timely stretch */
    ck_assert_uint_eq(st.root.wall_ns, 60);
    ck_assert_uint_eq(o->wall_incl, 110); /* all 170 of wall time, shared out or as it was */
    ck_assert_uint_eq(o->cpu_ns, 40);     /* 20 of the 30 found on a CPU: 2/3 of the clock's 60 */
    ck_assert_uint_eq(in->cpu_ns, 0);
    /* merged into a group's node, the still stretches add up like the others */
    struct spanprof__sample_node d = {.wall_still_ns = 1};
    spanprof__sample_node_merge(&d, in);
    ck_assert_uint_eq(d.wall_still_ns, 41);
    release();
}
END_TEST

/* Each write shares out only its interval: a span sampled before one write and not after it
 * keeps its times through later writes, whatever the thread's proportions become. */
START_TEST(interval)
{
    spanprof__sample_ext_offset = 0;
    struct spanprof__thread *t = take(sizeof *t);
    spanprof__node_init(&t->root, NULL, NULL);
    struct spanprof__node *outer = node(&s_outer, &t->root, 1, 60, 20, 3);
    struct spanprof__sample_node *o = spanprof__sample_of(outer);
    /* first interval: outer 60 of 100 timely wall (20 of 25 on a CPU), the clock says 50 */
    struct spanprof__sample_thread st = {
        .cpu_used_ns = 50, .wall_timely_ns = 100, .wall_late_ns = 100, .cpu_timely_ns = 25,
        .root = {.wall_timely_ns = 40, .cpu_timely_ns = 5}};
    t->sample = &st;
    spanprof__sample_sums(t);
    ck_assert_uint_eq(o->wall_ns, 120);
    ck_assert_uint_eq(o->cpu_ns, 40);
    /* second interval: the thread outside spans only, with late samples and CPU of its own */
    st.wall_timely_ns += 30;
    st.wall_late_ns += 90;
    st.cpu_timely_ns += 10;
    st.cpu_used_ns += 40;
    st.root.wall_timely_ns += 30;
    st.root.cpu_timely_ns += 10;
    spanprof__sample_sums(t);
    ck_assert_uint_eq(o->wall_ns, 120); /* as it was */
    ck_assert_uint_eq(o->cpu_ns, 40);
    ck_assert_uint_eq(st.root.wall_ns, 80 + 120); /* 30 timely of the interval's 120 */
    ck_assert_uint_eq(st.root.cpu_ns, 10 + 40);
    /* a write with nothing new changes nothing */
    spanprof__sample_sums(t);
    ck_assert_uint_eq(o->wall_ns, 120);
    ck_assert_uint_eq(st.root.cpu_ns, 50);
    release();
}
END_TEST

UNIT_SITE(s_deep, "deep");

static __attribute__((noinline)) void deep(int n)
{
    __spanprof_enter(&s_deep, __builtin_dwarf_cfa());
    if (n > 1)
        deep(n - 1);
    __asm__ volatile("" ::: "memory");
    __spanprof_exit(&s_deep, __builtin_dwarf_cfa());
}

/* 1 when the page holding P is mapped. */
static int mapped(const void *p)
{
    long page = sysconf(_SC_PAGESIZE);
    unsigned char v;
    return mincore((void *)((uintptr_t)p & ~(uintptr_t)(page - 1)), (size_t)page, &v) == 0;
}

/* The sampler may have loaded a thread's top frame just before the array moved: with
 * frames_shared (set by sample mode) the old array stays mapped and keeps its frames.  (Without
 * it, this fails at the first mapped() check.) */
START_TEST(outgrown_frames_stay_mapped)
{
    spanprof__flags.frames_shared = 1;
    deep(1);
    struct spanprof__thread *t = unit_self();
    struct spanprof__frame *first = t->frames;
    size_t cap = t->capacity;
    deep(3 * (int)cap); /* two moves */
    ck_assert_ptr_ne(t->frames, first);
    ck_assert_uint_ge(t->capacity, 4 * cap);
    ck_assert(mapped(first));
    ck_assert(mapped(&first[cap - 1]));
    /* what a sampler that read the old top before the first move finds there */
    ck_assert_ptr_eq(first[cap - 1].node, t->frames[cap - 1].node);
    ck_assert_ptr_eq(first[cap - 1].node->site, &s_deep);
    spanprof__flags.frames_shared = 0;
}
END_TEST

Suite *sample_suite(void)
{
    Suite *s = suite_create("sample");
    TCase *tc = tcase_create("sample");
    tcase_add_test(tc, merge);
    tcase_add_test(tc, sums_and_sites);
    tcase_add_test(tc, idle);
    tcase_add_test(tc, late_samples);
    tcase_add_test(tc, still_stretches);
    tcase_add_test(tc, interval);
    tcase_add_test(tc, outgrown_frames_stay_mapped);
    suite_add_tcase(s, tc);
    return s;
}
