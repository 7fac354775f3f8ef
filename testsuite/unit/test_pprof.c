/* test_pprof.c — the pprof writer (runtime/report/pprof.c) and its encoder (pprof/encode.c) on
 * hand-built trees: the file is gunzipped and decoded with the same generated protobuf-c code,
 * and the profile checked field by field (exact values: 1 ns per tick). */
#include <string.h>

#include <zlib.h>

#include "profile.pb-c.h"
#include "unit.h"

typedef Spanprof__Pprof__Profile Profile;


/* Writes V as pprof and decodes it again. */
static Profile *roundtrip(const struct spanprof__view *v)
{
    char *gz = NULL;
    size_t gz_len = 0;
    FILE *f = open_memstream(&gz, &gz_len);
    ck_assert_ptr_nonnull(f);
    struct spanprof__json_meta m = {.pid = 1, .program = "/bin/app", .wall_ns = 12345};
    ck_assert_int_eq(spanprof__pprof_write_view(f, v, &m), 0);
    fclose(f);
    ck_assert_msg(gz_len > 2 && (unsigned char)gz[0] == 0x1f && (unsigned char)gz[1] == 0x8b,
                  "not gzip data");
    z_stream z = {0};
    ck_assert_int_eq(inflateInit2(&z, 15 + 16), Z_OK);
    size_t cap = 1 << 16, len = 0;
    unsigned char *raw = malloc(cap);
    z.next_in = (unsigned char *)gz;
    z.avail_in = (uInt)gz_len;
    int rc;
    do {
        if (len == cap)
            raw = realloc(raw, cap *= 2);
        z.next_out = raw + len;
        z.avail_out = (uInt)(cap - len);
        rc = inflate(&z, Z_NO_FLUSH);
        len = cap - z.avail_out;
    } while (rc == Z_OK);
    ck_assert_int_eq(rc, Z_STREAM_END);
    inflateEnd(&z);
    free(gz);
    Profile *p = spanprof__pprof__profile__unpack(NULL, len, raw);
    free(raw);
    ck_assert_ptr_nonnull(p);
    return p;
}

static const char *str(const Profile *p, int64_t i)
{
    ck_assert_int_ge(i, 0);
    ck_assert_uint_lt((size_t)i, p->n_string_table);
    return p->string_table[i];
}

static const Spanprof__Pprof__Function *function_of(const Profile *p, uint64_t location_id)
{
    for (size_t i = 0; i < p->n_location; i++) {
        if (p->location[i]->id != location_id)
            continue;
        ck_assert_uint_eq(p->location[i]->n_line, 1);
        for (size_t j = 0; j < p->n_function; j++)
            if (p->function[j]->id == p->location[i]->line[0]->function_id)
                return p->function[j];
    }
    ck_abort_msg("no location/function %lu", (unsigned long)location_id);
    return NULL;
}

static int cmp_line(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The samples as sorted lines "[thread] root;...;leaf v1 v2 ...\n". */
static char *render(const Profile *p)
{
    char **lines = calloc(p->n_sample + 1, sizeof *lines);
    for (size_t i = 0; i < p->n_sample; i++) {
        const Spanprof__Pprof__Sample *s = p->sample[i];
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        for (size_t j = 0; j < s->n_label; j++)
            fprintf(f, "[%s=%s] ", str(p, s->label[j]->key), str(p, s->label[j]->str));
        for (size_t j = s->n_location_id; j-- > 0;) /* leaf first in the file */
            fprintf(f, "%s%s", str(p, function_of(p, s->location_id[j])->name), j ? ";" : "");
        ck_assert_uint_eq(s->n_value, p->n_sample_type);
        for (size_t j = 0; j < s->n_value; j++)
            fprintf(f, " %lld", (long long)s->value[j]);
        fputc('\n', f);
        fclose(f);
        lines[i] = buf;
    }
    qsort(lines, p->n_sample, sizeof *lines, cmp_line);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    for (size_t i = 0; i < p->n_sample; i++) {
        fputs(lines[i], f);
        free(lines[i]);
    }
    fclose(f);
    free(lines);
    return out;
}

static char *types(const Profile *p)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    for (size_t i = 0; i < p->n_sample_type; i++)
        fprintf(f, "%s%s/%s", i ? " " : "", str(p, p->sample_type[i]->type), str(p, p->sample_type[i]->unit));
    fclose(f);
    return out;
}

START_TEST(samples_exact)
{
    struct spanprof__thread *t = unit_tree1("t1", 11);
    struct spanprof__view v = unit_view(&t, 1);
    Profile *p = roundtrip(&v);
    char *s = types(p);
    ck_assert_str_eq(s, "calls/count wall/nanoseconds");
    free(s);
    s = render(p);
    ck_assert_str_eq(s, "main 1 30\n"
                        "main;work 2 30\n"
                        "main;work;io;read 4 20\n"
                        "main;zero 1 0\n");
    free(s);
    /* The rest of the profile: string 0 empty, one function per span with its file and first
     * line, one mapping that needs no symbolization, exact values, the run's duration. */
    ck_assert_str_eq(p->string_table[0], "");
    ck_assert_uint_eq(p->n_function, 4);
    ck_assert_uint_eq(p->n_location, 4);
    for (size_t i = 0; i < p->n_function; i++) {
        const Spanprof__Pprof__Function *fn = p->function[i];
        const struct spanprof_site *site = !strcmp(str(p, fn->name), "main")   ? &unit_sa
                                           : !strcmp(str(p, fn->name), "work") ? &unit_sb
                                           : !strcmp(str(p, fn->name), "zero") ? &unit_sz
                                                                               : &unit_sc;
        ck_assert_str_eq(str(p, fn->name), site->name);
        ck_assert_str_eq(str(p, fn->filename), site->file);
        ck_assert_int_eq(fn->start_line, site->first_line);
    }
    ck_assert_uint_eq(p->n_mapping, 1);
    ck_assert_str_eq(str(p, p->mapping[0]->filename), "/bin/app");
    ck_assert(p->mapping[0]->has_functions && p->mapping[0]->has_filenames &&
              p->mapping[0]->has_line_numbers);
    ck_assert_int_eq(p->period, 1);
    ck_assert_str_eq(str(p, p->period_type->type), "calls");
    ck_assert_int_eq(p->duration_nanos, 12345);
    spanprof__pprof__profile__free_unpacked(p, NULL);
}
END_TEST

START_TEST(threads_merged_or_labelled)
{
    struct spanprof__thread *ts[2] = {unit_tree1("worker", 11), unit_tree1("", 12)};
    struct spanprof__view v = unit_view(ts, 2);
    Profile *p = roundtrip(&v);
    char *s = render(p);
    ck_assert_str_eq(s, "main 2 60\n"
                        "main;work 4 60\n"
                        "main;work;io;read 8 40\n"
                        "main;zero 2 0\n");
    free(s);
    spanprof__pprof__profile__free_unpacked(p, NULL);
    v.threads_root = 1;
    p = roundtrip(&v);
    s = render(p);
    ck_assert_str_eq(s, "[thread=thread-12] main 1 30\n"
                        "[thread=thread-12] main;work 2 30\n"
                        "[thread=thread-12] main;work;io;read 4 20\n"
                        "[thread=thread-12] main;zero 1 0\n"
                        "[thread=worker] main 1 30\n"
                        "[thread=worker] main;work 2 30\n"
                        "[thread=worker] main;work;io;read 4 20\n"
                        "[thread=worker] main;zero 1 0\n");
    free(s);
    /* Equal frames of both threads share their function and location. */
    ck_assert_uint_eq(p->n_function, 4);
    spanprof__pprof__profile__free_unpacked(p, NULL);
}
END_TEST

START_TEST(counting_mode_has_calls_only)
{
    struct spanprof__thread *t = unit_tree1("t1", 11);
    struct spanprof__view v = unit_view(&t, 1);
    v.counting = 1;
    Profile *p = roundtrip(&v);
    char *s = types(p);
    ck_assert_str_eq(s, "calls/count");
    free(s);
    s = render(p);
    ck_assert_str_eq(s, "main 1\n"
                        "main;work 2\n"
                        "main;work;io;read 4\n"
                        "main;zero 1\n");
    free(s);
    spanprof__pprof__profile__free_unpacked(p, NULL);
}
END_TEST

START_TEST(allocations_per_stack)
{
    /* What the collectors set up for SPANPROF_ALLOC=1: resource counters behind each node (this
     * test runs in its own process, so the layout change stays here). */
    spanprof__collect.alloc = 1;
    spanprof__flags.node_ext = sizeof(struct spanprof__res_node);
    struct spanprof__thread *t = unit_tree1("t1", 11);
    struct spanprof__node *m = unit_child(&t->root, &unit_sa);
    struct spanprof__node *w = unit_child(m, &unit_sb);
    spanprof__res_of(m)->allocs = 3;
    spanprof__res_of(m)->alloc_bytes = 300;
    spanprof__res_of(w)->allocs = 5;
    spanprof__res_of(w)->alloc_bytes = 80;
    struct spanprof__view v = unit_view(&t, 1);
    Profile *p = roundtrip(&v);
    char *s = types(p);
    ck_assert_str_eq(s, "calls/count wall/nanoseconds alloc_objects/count alloc_space/bytes");
    free(s);
    s = render(p);
    ck_assert_str_eq(s, "main 1 30 3 300\n"
                        "main;work 2 30 5 80\n"
                        "main;work;io;read 4 20 0 0\n"
                        "main;zero 1 0 0 0\n");
    free(s);
    spanprof__pprof__profile__free_unpacked(p, NULL);
}
END_TEST

START_TEST(cpu_self_per_stack)
{
    spanprof__collect.cpu = 1; /* as the collectors set it up for SPANPROF_CPU=1 */
    spanprof__flags.node_ext = sizeof(struct spanprof__res_node);
    struct spanprof__thread *t = unit_tree1("t1", 11);
    struct spanprof__node *m = unit_child(&t->root, &unit_sa);
    struct spanprof__node *w = unit_child(m, &unit_sb);
    struct spanprof__node *r = unit_child(w, &unit_sc);
    /* inclusive CPU time per node: main 900, work 500, io;read 150, zero 0 */
    spanprof__res_of(m)->cpu_ns = 900;
    spanprof__res_of(w)->cpu_ns = 500;
    spanprof__res_of(r)->cpu_ns = 150;
    struct spanprof__view v = unit_view(&t, 1);
    Profile *p = roundtrip(&v);
    char *s = types(p);
    ck_assert_str_eq(s, "calls/count wall/nanoseconds cpu/nanoseconds");
    free(s);
    s = render(p);
    ck_assert_str_eq(s, "main 1 30 400\n"
                        "main;work 2 30 350\n"
                        "main;work;io;read 4 20 150\n"
                        "main;zero 1 0 0\n");
    free(s);
    spanprof__pprof__profile__free_unpacked(p, NULL);
}
END_TEST

/* SPANPROF=sample: wall and cpu are the sampled self figures (not SPANPROF_CPU's). */
START_TEST(sampled_wall_and_cpu)
{
    spanprof__collect.sample_hz = 997; /* as the collectors set it up for SPANPROF=sample */
    spanprof__flags.node_ext = 0;
    spanprof__sample_layout();
    struct spanprof__thread *t = unit_tree1("t1", 11);
    struct spanprof__node *m = unit_child(&t->root, &unit_sa);
    struct spanprof__node *w = unit_child(m, &unit_sb);
    struct spanprof__node *r = unit_child(w, &unit_sc);
    *spanprof__sample_of(m) = (struct spanprof__sample_node){.wall_ns = 7000, .cpu_ns = 6000};
    *spanprof__sample_of(w) = (struct spanprof__sample_node){.wall_ns = 3000, .cpu_ns = 100};
    *spanprof__sample_of(r) = (struct spanprof__sample_node){.wall_ns = 1000, .cpu_ns = 0};
    struct spanprof__view v = unit_view(&t, 1);
    v.sample_hz = 997;
    Profile *p = roundtrip(&v);
    char *s = types(p);
    ck_assert_str_eq(s, "calls/count wall/nanoseconds cpu/nanoseconds");
    free(s);
    s = render(p);
    ck_assert_str_eq(s, "main 1 7000 6000\n"
                        "main;work 2 3000 100\n"
                        "main;work;io;read 4 1000 0\n"
                        "main;zero 1 0 0\n");
    free(s);
    spanprof__pprof__profile__free_unpacked(p, NULL);
}
END_TEST

/* A chain deeper than the folded depth cap: everything below the cap is one [truncated] sample. */
START_TEST(deep_stacks_are_cut)
{
    static struct spanprof_site deep = {1, 0, "r", "r.c", 1, 2, 0, 0, NULL, NULL};
    struct spanprof__thread *t = spanprof__thread_new();
    ck_assert_ptr_nonnull(t);
    struct spanprof__node *n = &t->root;
    enum { DEPTH = SPANPROF_FOLDED_MAX_DEPTH + 10 };
    for (int d = 1; d <= DEPTH; d++)
        n = unit_node(t, n, &deep, 1, (uint64_t)(DEPTH - d + 1) * 10, (uint64_t)(DEPTH - d) * 10);
    struct spanprof__view v = unit_view(&t, 1);
    Profile *p = roundtrip(&v);
    ck_assert_uint_eq(p->n_sample, SPANPROF_FOLDED_MAX_DEPTH + 1);
    uint64_t calls = 0, ns = 0;
    int truncated = 0;
    for (size_t i = 0; i < p->n_sample; i++) {
        const Spanprof__Pprof__Sample *s = p->sample[i];
        calls += (uint64_t)s->value[0];
        ns += (uint64_t)s->value[1];
        if (!strcmp(str(p, function_of(p, s->location_id[0])->name), "[truncated]")) {
            truncated++;
            ck_assert_uint_eq(s->n_location_id, SPANPROF_FOLDED_MAX_DEPTH + 1);
            ck_assert_int_eq(s->value[0], 10); /* the 10 calls below the cap */
            ck_assert_int_eq(s->value[1], 100);
        }
    }
    ck_assert_int_eq(truncated, 1);
    ck_assert_uint_eq(calls, DEPTH);
    ck_assert_uint_eq(ns, (uint64_t)DEPTH * 10);
    ck_assert_uint_eq(p->n_function, 2); /* r and [truncated] */
    spanprof__pprof__profile__free_unpacked(p, NULL);
}
END_TEST

START_TEST(env_path)
{
    struct spanprof__options c;
    static const char *const good[] = {"SPANPROF_PPROF", "app.%p.pb.gz", NULL};
    char *w = UNIT_LOAD_CONFIG(spanprof__options_load, &c, good);
    ck_assert_str_eq(w, "");
    ck_assert_str_eq(c.pprof, "app.%p.pb.gz");
    free(w);
    static const char *const none[] = {NULL};
    w = UNIT_LOAD_CONFIG(spanprof__options_load, &c, none);
    ck_assert_ptr_null(c.pprof);
    free(w);
    static const char *const bad[] = {"SPANPROF_PPROF", "a%d.pb.gz", NULL};
    w = UNIT_LOAD_CONFIG(spanprof__options_load, &c, bad);
    ck_assert_str_eq(w, "spanprof: warning: SPANPROF_PPROF='a%d.pb.gz' has a '%' not followed by "
                        "'p' or '%'; using none\n");
    ck_assert_ptr_null(c.pprof);
    free(w);
}
END_TEST

Suite *pprof_suite(void)
{
    Suite *s = suite_create("pprof");
    TCase *tc = tcase_create("pprof");
    tcase_add_test(tc, samples_exact);
    tcase_add_test(tc, threads_merged_or_labelled);
    tcase_add_test(tc, counting_mode_has_calls_only);
    tcase_add_test(tc, allocations_per_stack);
    tcase_add_test(tc, cpu_self_per_stack);
    tcase_add_test(tc, sampled_wall_and_cpu);
    tcase_add_test(tc, deep_stacks_are_cut);
    tcase_add_test(tc, env_path);
    suite_add_tcase(s, tc);
    return s;
}
