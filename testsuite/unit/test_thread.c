/* test_thread.c — per-thread data: exact calls across threads, data outliving threads, names,
 * open frames at thread exit, fork, a span muted while an enter is on the cold path. */
#define _GNU_SOURCE
#include <json-c/json.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"

UNIT_SITE(sw, "work");
UNIT_SITE(so, "outer");
UNIT_SPAN_FN(fw, sw, )
UNIT_SPAN_FN(fo, so, )

#define NTHREADS 4
#define NCALLS 1000

static void *worker(void *arg)
{
    char name[16];
    snprintf(name, sizeof name, "worker-%d", (int)(intptr_t)arg);
    pthread_setname_np(pthread_self(), name);
    for (int i = 0; i < NCALLS; i++)
        fw();
    return NULL;
}

static size_t registry(struct spanprof__thread **ts, size_t max)
{
    size_t n = 0;
    for (struct spanprof__thread *t = spanprof__g.threads; t && n < max; t = t->next)
        ts[n++] = t;
    return n;
}

START_TEST(exact_calls_across_threads)
{
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < NCALLS; i++)
        fw();
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    struct spanprof__thread *ts[16];
    size_t n = registry(ts, 16);
    ck_assert_uint_eq(n, NTHREADS + 1);
    struct spanprof__view v = unit_view(ts, n);
    size_t ns;
    struct spanprof__site_stats *st = spanprof__aggregate_sites(&v, &ns);
    ck_assert_uint_eq(ns, 1);
    ck_assert_uint_eq(st[0].calls, (NTHREADS + 1) * NCALLS);
    free(st);
    int exited = 0, named = 0;
    for (size_t i = 0; i < n; i++) {
        exited += ts[i]->exited;
        named += strncmp(ts[i]->name, "worker-", 7) == 0;
        ck_assert_uint_eq(spanprof__thread_calls(ts[i]), NCALLS);
    }
    ck_assert_int_eq(exited, NTHREADS);
    ck_assert_int_eq(named, NTHREADS);
    v.threads_root = 1;
    char *s = unit_folded(&v);
    ck_assert_ptr_nonnull(strstr(s, "worker-0;work "));
    ck_assert_ptr_nonnull(strstr(s, "worker-3;work "));
    free(s);
}
END_TEST

static void *exits_inside_span(void *arg)
{
    (void)arg;
    __spanprof_enter(&so, __builtin_dwarf_cfa());
    fw();
    pthread_exit(NULL); /* outer never exits */
}

START_TEST(thread_ending_with_open_frame)
{
    pthread_t th;
    pthread_create(&th, NULL, exits_inside_span, NULL);
    pthread_join(th, NULL);
    struct spanprof__thread *t = spanprof__g.threads;
    ck_assert_int_eq(t->exited, 1);
    ck_assert_uint_eq(t->open_at_exit, 1);
    struct spanprof__node *o = unit_child(&t->root, &so);
    ck_assert_uint_eq(o->calls, 1);
    ck_assert_uint_gt(o->total, 0); /* charged up to the thread's end */
    ck_assert_uint_ge(o->total, o->child);
    struct spanprof__anomalies a;
    struct spanprof__view v = unit_view(&t, 1);
    spanprof__anomalies(&v, &a);
    ck_assert_uint_eq(a.open, 1);
}
END_TEST

START_TEST(fork_child_starts_from_zero)
{
    char dir[] = "/tmp/spanprof-unit-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/out.json", dir);
    for (int i = 0; i < 5; i++)
        fw();
    __spanprof_enter(&so, __builtin_dwarf_cfa());
    pid_t pid = fork();
    if (pid == 0) {
        struct spanprof__thread *t = spanprof__tls;
        int ok = spanprof__g.threads == t && t->next == NULL && unit_child(&t->root, &sw)->calls == 0 &&
                 t->top - t->frames == 1;
        fw();
        __spanprof_exit(&so, __builtin_dwarf_cfa());
        spanprof__outputs.json = path;
        ok = ok && spanprof_flush() == 0;
        _exit(ok ? 0 : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    __spanprof_exit(&so, __builtin_dwarf_cfa());
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_int_ne(access(path, F_OK), 0); /* the parent's file name is not used */
    char cpath[160];
    snprintf(cpath, sizeof cpath, "%s.%ld", path, (long)pid);
    json_object *o = json_object_from_file(cpath);
    ck_assert_ptr_nonnull(o);
    json_object *spans, *pidv;
    json_object_object_get_ex(o, "spans", &spans);
    json_object_object_get_ex(o, "pid", &pidv);
    ck_assert_int_eq(json_object_get_int64(pidv), pid);
    ck_assert_int_eq(json_object_array_length(spans), 2);
    json_object *s0 = json_object_array_get_idx(spans, 0), *s1 = json_object_array_get_idx(spans, 1), *v;
    json_object_object_get_ex(s0, "name", &v);
    ck_assert_str_eq(json_object_get_string(v), "outer");
    json_object_object_get_ex(s0, "calls", &v);
    ck_assert_int_eq(json_object_get_int64(v), 0); /* entered in the parent */
    json_object_object_get_ex(s1, "name", &v);
    ck_assert_str_eq(json_object_get_string(v), "work");
    json_object_object_get_ex(s1, "calls", &v);
    ck_assert_int_eq(json_object_get_int64(v), 1); /* not 6 */
    json_object_put(o);
    unlink(cpath);
    rmdir(dir);
    /* the parent's counters are untouched */
    ck_assert_uint_eq(unit_child(&unit_self()->root, &sw)->calls, 5);
    ck_assert_ptr_null(unit_child(unit_child(&unit_self()->root, &so), &sw));
}
END_TEST

/* A span's state read as recording just before it was muted (a switch off,
 * collect/spanswitch.c), and the enter gone to the cold path: the switch waits only for the
 * threads listed when it muted the span to run a little further, and the cold path can take
 * longer (attaching the thread at its first span, before it is listed; growing the frame array;
 * a new node), so it reads the state again before it pushes: a frame pushed once the span is OFF
 * would never be popped.  LISTED: the thread has run another span first, so it is attached and
 * only sw's node is new. */
struct cold_enter {
    uint32_t state;
    int listed;
};

static void *cold_enter_thread(void *arg)
{
    const struct cold_enter *c = arg;
    if (c->listed)
        fo();
    uintptr_t cfa = (uintptr_t)__builtin_dwarf_cfa();
    spanprof__enter_cold(&sw, cfa, (uintptr_t)__builtin_return_address(0), 0);
    uintptr_t depth = unit_depth();
    __spanprof_exit(&sw, (void *)cfa);
    return (void *)depth;
}

static uintptr_t cold_enter_depth(uint32_t state, int listed)
{
    struct cold_enter c = {state, listed};
    __atomic_store_n(&sw.state, state, __ATOMIC_RELEASE);
    pthread_t th;
    void *depth;
    pthread_create(&th, NULL, cold_enter_thread, &c);
    pthread_join(th, &depth);
    return (uintptr_t)depth;
}

START_TEST(cold_enter_of_a_span_muted_meanwhile)
{
    fw(); /* registered: sw records */
    uint32_t recording = __atomic_load_n(&sw.state, __ATOMIC_ACQUIRE);
    for (int listed = 0; listed <= 1; listed++) {
        ck_assert_uint_eq(cold_enter_depth(recording, listed), 1);
        ck_assert_uint_eq(cold_enter_depth(SPANPROF__SITE_MUTED, listed), 0);
        ck_assert_uint_eq(cold_enter_depth(SPANPROF__SITE_OFF, listed), 0);
    }
}
END_TEST

Suite *thread_suite(void)
{
    Suite *s = suite_create("thread");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, exact_calls_across_threads);
    tcase_add_test(tc, thread_ending_with_open_frame);
    tcase_add_test(tc, fork_child_starts_from_zero);
    tcase_add_test(tc, cold_enter_of_a_span_muted_meanwhile);
    suite_add_tcase(s, tc);
    return s;
}
