/* test_histogram.c — latency histograms: bucket bounds, quantiles of synthetic durations against
 * the exact values (within the 3.125% midpoint error), merging, exact maximum and sum; one
 * histogram per (thread, site) fed by every completed activation, reset in a fork child; a live
 * snapshot's histogram sum equal to the span's total time; resource variables. */
#include <json-c/json.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"

static struct spanprof__hist *new_hist(void)
{
    struct spanprof__hist *h = calloc(1, sizeof *h);
    ck_assert_ptr_nonnull(h);
    return h;
}

/* Adds D to H the way the exit path does. */
static void add(struct spanprof__hist *h, uint64_t d)
{
    h->count[spanprof__hist_index(d)]++;
    h->max = d > h->max ? d : h->max;
    h->sum += d;
}

START_TEST(buckets_hold_their_values)
{
    static const uint64_t vals[] = {0, 1, 15, 16, 31, 32, 33, 63, 64, 100, 1000, 123456789,
                                    ((uint64_t)1 << 47) + 12345, ((uint64_t)1 << 48) - 1};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        unsigned b = spanprof__hist_index(vals[i]);
        uint64_t low, width;
        ck_assert_uint_lt(b, SPANPROF_HIST_BUCKETS);
        spanprof__hist_bucket(b, &low, &width);
        ck_assert_uint_le(low, vals[i]);
        ck_assert_uint_lt(vals[i], low + width);
        ck_assert_uint_le(width * 16, low < 32 ? 32 : low); /* width <= 1/16 of the values */
    }
    /* below 32 every value has its own bucket; beyond 2^48 all share the last one */
    ck_assert_uint_eq(spanprof__hist_index(31), 31);
    ck_assert_uint_eq(spanprof__hist_index(32), 32);
    ck_assert_uint_eq(spanprof__hist_index(34), 33);
    ck_assert_uint_eq(spanprof__hist_index(UINT64_MAX), SPANPROF_HIST_BUCKETS - 1);
    /* buckets are contiguous: the next bucket starts where this one ends */
    for (unsigned b = 0; b + 1 < SPANPROF_HIST_BUCKETS; b++) {
        uint64_t l0, w0, l1, w1;
        spanprof__hist_bucket(b, &l0, &w0);
        spanprof__hist_bucket(b + 1, &l1, &w1);
        ck_assert_uint_eq(l0 + w0, l1);
    }
}
END_TEST

/* |estimate - exact| <= exact/32 + 1 (midpoint of a bucket at most 1/16 wide, integer rounding) */
static void assert_close(uint64_t est, uint64_t exact)
{
    uint64_t diff = est > exact ? est - exact : exact - est;
    ck_assert_msg(diff <= exact / 32 + 1, "estimate %llu, exact %llu", (unsigned long long)est,
                  (unsigned long long)exact);
}

START_TEST(quantiles_uniform)
{
    struct spanprof__hist *h = new_hist();
    for (uint64_t d = 1; d <= 100000; d++)
        add(h, d * 10); /* 10 .. 1,000,000 */
    assert_close(spanprof__hist_quantile(h, 0.50), 500000);
    assert_close(spanprof__hist_quantile(h, 0.90), 900000);
    assert_close(spanprof__hist_quantile(h, 0.99), 990000);
    ck_assert_uint_eq(h->max, 1000000);
    ck_assert_uint_le(spanprof__hist_quantile(h, 1.0), 1000000);
    free(h);
}
END_TEST

START_TEST(quantiles_skewed_and_exact_small)
{
    struct spanprof__hist *h = new_hist();
    /* 98 fast calls of 20 ticks (exact bucket), one of 5000, one of 1,000,000 */
    for (int i = 0; i < 98; i++)
        add(h, 20);
    add(h, 5000);
    add(h, 1000000);
    ck_assert_uint_eq(spanprof__hist_quantile(h, 0.50), 20);
    ck_assert_uint_eq(spanprof__hist_quantile(h, 0.90), 20);
    assert_close(spanprof__hist_quantile(h, 0.99), 5000); /* rank 99 of 100 */
    ck_assert_uint_eq(h->max, 1000000);
    free(h);
}
END_TEST

START_TEST(quantile_never_above_max_and_empty)
{
    struct spanprof__hist *h = new_hist();
    ck_assert_uint_eq(spanprof__hist_quantile(h, 0.5), 0);
    add(h, 1000); /* bucket [992, 1024): midpoint 1008 > max */
    ck_assert_uint_eq(spanprof__hist_quantile(h, 0.5), 1000);
    free(h);
}
END_TEST

START_TEST(merge_adds_counts_and_keeps_max)
{
    struct spanprof__hist *a = new_hist(), *b = new_hist();
    for (uint64_t d = 1; d <= 500; d++)
        add(a, d * 100);
    for (uint64_t d = 501; d <= 1000; d++)
        add(b, d * 100);
    spanprof__hist_merge(a, b);
    assert_close(spanprof__hist_quantile(a, 0.50), 50000);
    assert_close(spanprof__hist_quantile(a, 0.90), 90000);
    ck_assert_uint_eq(a->max, 100000);
    ck_assert_uint_eq(a->sum, 100 * 1000 * 1001 / 2);
    free(a);
    free(b);
}
END_TEST

UNIT_SITE(hist_site, "hist");
UNIT_SPAN_FN(hist_fn, hist_site, (void)0)

static uint64_t hist_count(const struct spanprof__hist *h)
{
    uint64_t count = 0;
    for (unsigned i = 0; i < SPANPROF_HIST_BUCKETS; i++)
        count += h->count[i];
    return count;
}

START_TEST(exit_path_fills_the_site_histogram)
{
    ck_assert_int_eq(spanprof__flags.histogram, 1); /* check-unit runs with SPANPROF_HISTOGRAM=1 */
    for (int i = 0; i < 7; i++)
        hist_fn();
    ck_assert_ptr_nonnull(unit_child(&unit_self()->root, &hist_site));
    struct spanprof__hist *h = spanprof__hist_get(unit_self(), &hist_site);
    ck_assert_ptr_eq(h->site, &hist_site);
    ck_assert_uint_eq(hist_count(h), 7);
    ck_assert_uint_gt(h->max, 0);
}
END_TEST

/* A span of some microseconds, durations in buckets 1024 ticks or more wide: the buckets'
 * midpoints would not add up to its total. */
UNIT_SITE(spin_site, "spin");
static __attribute__((noinline)) void spin_fn(int n)
{
    __spanprof_enter(&spin_site, __builtin_dwarf_cfa());
    for (volatile int i = 0; i < n; i++)
        ;
    __spanprof_exit(&spin_site, __builtin_dwarf_cfa());
}

START_TEST(snapshot_sum_is_the_total)
{
    ck_assert_int_eq(spanprof__flags.histogram, 1); /* see exit_path_fills_the_site_histogram */
    for (int i = 0; i < 9; i++)
        spin_fn(20000 + 3001 * i);
    struct spanprof__thread *ts[1] = {unit_self()};
    struct spanprof__view v = unit_view(ts, 1);
    struct spanprof__live_meta live = {.host = "h", .start_unix_ns = 1, .seq = 1};
    struct spanprof__json_meta m = {.pid = 1, .program = "p", .start_time = "t", .clock = "tsc", .live = &live};
    json_object *o = spanprof__json_build(&v, &m), *spans, *h, *x;
    ck_assert(json_object_object_get_ex(o, "spans", &spans));
    json_object *span = NULL;
    for (size_t i = 0; i < json_object_array_length(spans); i++)
        if (json_object_object_get_ex(json_object_array_get_idx(spans, i), "name", &x) &&
            !strcmp(json_object_get_string(x), "spin"))
            span = json_object_array_get_idx(spans, i);
    ck_assert_ptr_nonnull(span);
    ck_assert(json_object_object_get_ex(span, "histogram", &h));
    ck_assert(json_object_object_get_ex(h, "count", &x));
    ck_assert_int_eq(json_object_get_int64(x), 9);
    ck_assert(json_object_object_get_ex(span, "total_ns", &x));
    int64_t total = json_object_get_int64(x);
    ck_assert(json_object_object_get_ex(h, "sum_ns", &x));
    ck_assert_int_gt(total, 0);
    ck_assert_int_eq(json_object_get_int64(x), total);
    json_object_put(o);
}
END_TEST

/* A recursive span reached from two parents: four nodes, one histogram holding every completed
 * activation (2 x 3 under rp_a, 1 under rp_b). */
UNIT_SITE(rec_site, "rec");
UNIT_SITE(rp_a_site, "rp_a");
UNIT_SITE(rp_b_site, "rp_b");

static __attribute__((noinline)) void rec_fn(int depth)
{
    __spanprof_enter(&rec_site, __builtin_dwarf_cfa());
    if (depth > 1)
        rec_fn(depth - 1);
    __asm__ volatile("" ::: "memory");
    __spanprof_exit(&rec_site, __builtin_dwarf_cfa());
}
UNIT_SPAN_FN(rp_a_fn, rp_a_site, rec_fn(3))
UNIT_SPAN_FN(rp_b_fn, rp_b_site, rec_fn(1))

START_TEST(one_histogram_per_site_counts_every_activation)
{
    ck_assert_int_eq(spanprof__flags.histogram, 1); /* see exit_path_fills_the_site_histogram */
    rp_a_fn();
    rp_a_fn();
    rp_b_fn();
    struct spanprof__thread *t = unit_self();
    struct spanprof__node *a = unit_child(unit_child(&t->root, &rp_a_site), &rec_site);
    struct spanprof__node *b = unit_child(unit_child(&t->root, &rp_b_site), &rec_site);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_nonnull(unit_child(unit_child(a, &rec_site), &rec_site));
    struct spanprof__hist *h = spanprof__hist_get(t, &rec_site);
    ck_assert_ptr_eq(h->site, &rec_site);
    ck_assert_uint_eq(hist_count(h), 7);
    ck_assert_uint_eq(hist_count(spanprof__hist_get(t, &rp_a_site)), 2);
    ck_assert_uint_eq(hist_count(spanprof__hist_get(t, &rp_b_site)), 1);
}
END_TEST

START_TEST(fork_child_starts_at_zero)
{
    ck_assert_int_eq(spanprof__flags.histogram, 1); /* see exit_path_fills_the_site_histogram */
    hist_fn();
    ck_assert_uint_gt(hist_count(spanprof__hist_get(unit_self(), &hist_site)), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        const struct spanprof__hist *h = spanprof__hist_get(unit_self(), &hist_site);
        int ok = hist_count(h) == 0 && h->max == 0 && h->sum == 0 && h->site == &hist_site;
        hist_fn();
        ok = ok && hist_count(h) == 1;
        _exit(ok ? 0 : 1);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

static char *load(struct spanprof__options *c, const char *const *env)
{
    return UNIT_LOAD_CONFIG(spanprof__options_load, c, env);
}

START_TEST(resource_env)
{
    static const char *const none[] = {NULL};
    struct spanprof__options c;
    char *w = load(&c, none);
    ck_assert_str_eq(w, "");
    ck_assert_int_eq(c.histogram, 0);
    ck_assert_int_eq(c.cpu, 0);
    ck_assert_int_eq(c.alloc, 0);
    ck_assert_int_eq(c.alloc_stacks, 0);
    ck_assert_uint_eq(c.alloc_sample, 524288);
    ck_assert_str_eq(c.alloc_folded, "spanprof.alloc.folded");
    free(w);
    static const char *const bad[] = {"SPANPROF_CPU", "2", "SPANPROF_ALLOC_SAMPLE", "12k",
                                      "SPANPROF_ALLOC_FOLDED", "a%d", "SPANPROF_HISTOGRAM", "1",
                                      NULL};
    w = load(&c, bad);
    ck_assert_str_eq(w, "spanprof: warning: SPANPROF_CPU='2' is not 0 or 1; using 0\n"
                        "spanprof: warning: SPANPROF_ALLOC_SAMPLE='12k' is not a positive number "
                        "of bytes; using 524288\n"
                        "spanprof: warning: SPANPROF_ALLOC_FOLDED='a%d' has a '%' not followed by "
                        "'p' or '%'; using 'spanprof.alloc.folded'\n");
    ck_assert_int_eq(c.cpu, 0);
    ck_assert_int_eq(c.histogram, 1);
    ck_assert_uint_eq(c.alloc_sample, 524288);
    free(w);
    static const char *const good[] = {"SPANPROF_ALLOC_SAMPLE", "4096", "SPANPROF_ALLOC_FOLDED", "",
                                       NULL};
    w = load(&c, good);
    ck_assert_str_eq(w, "");
    ck_assert_uint_eq(c.alloc_sample, 4096);
    ck_assert_ptr_null(c.alloc_folded);
    free(w);
}
END_TEST

Suite *histogram_suite(void)
{
    Suite *s = suite_create("histogram");
    TCase *tc = tcase_create("histogram");
    tcase_add_test(tc, buckets_hold_their_values);
    tcase_add_test(tc, quantiles_uniform);
    tcase_add_test(tc, quantiles_skewed_and_exact_small);
    tcase_add_test(tc, quantile_never_above_max_and_empty);
    tcase_add_test(tc, merge_adds_counts_and_keeps_max);
    tcase_add_test(tc, exit_path_fills_the_site_histogram);
    tcase_add_test(tc, one_histogram_per_site_counts_every_activation);
    tcase_add_test(tc, snapshot_sum_is_the_total);
    tcase_add_test(tc, fork_child_starts_at_zero);
    tcase_add_test(tc, resource_env);
    suite_add_tcase(s, tc);
    return s;
}
