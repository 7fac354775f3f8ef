/* test_output.c — spanprof_flush end to end: files, %p, errors, errno. */
#include <errno.h>
#include <json-c/json.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"

UNIT_SITE(sm, "m");
UNIT_SITE(sn, "n");
UNIT_SPAN_FN(fn_n, sn, )
UNIT_SPAN_FN(fn_m, sm, fn_n(); fn_n())

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    char *buf = calloc(1, 1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* Check runs each test in a fork child of the runner; these tests are about a plain process. */
static void not_a_fork_child(void)
{
    spanprof__g.fork_child = 0;
}

/* No files at the test process's exit. */
static void no_output(void)
{
    spanprof__outputs.folded = NULL;
    spanprof__outputs.json = NULL;
}

START_TEST(flush_writes_files)
{
    char dir[] = "/tmp/spanprof-unit-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char folded[128], json[128], fpath[160], jpath[160];
    snprintf(folded, sizeof folded, "%s/f-%%p.folded", dir);
    snprintf(json, sizeof json, "%s/j.json", dir);
    spanprof__outputs.folded = folded;
    spanprof__outputs.json = json;
    fn_m();
    __spanprof_enter(&sm, __builtin_dwarf_cfa()); /* open during the flush: charged up to now */
    fn_n();
    errno = 77;
    ck_assert_int_eq(spanprof_flush(), 0);
    ck_assert_int_eq(errno, 77);
    __spanprof_exit(&sm, __builtin_dwarf_cfa());
    snprintf(fpath, sizeof fpath, "%s/f-%ld.folded", dir, (long)getpid());
    snprintf(jpath, sizeof jpath, "%s/j.json", dir);
    char *s = slurp(fpath);
    /* values vary: check the stack strings */
    ck_assert_msg(strncmp(s, "m ", 2) == 0 && strstr(s, "\nm;n ") && !strstr(s, "\nn "), "%s", s);
    int lines = 0;
    for (char *p = s; *p; p++)
        lines += *p == '\n';
    ck_assert_int_eq(lines, 2);
    free(s);
    json_object *o = json_object_from_file(jpath), *v, *an;
    ck_assert_ptr_nonnull(o);
    json_object_object_get_ex(o, "anomalies", &an);
    json_object_object_get_ex(an, "open_frames", &v);
    ck_assert_int_eq(json_object_get_int64(v), 1);
    json_object_object_get_ex(o, "thread_count", &v);
    ck_assert_int_eq(json_object_get_int64(v), 1);
    json_object_object_get_ex(o, "program", &v);
    ck_assert_ptr_nonnull(strstr(json_object_get_string(v), "unit"));
    json_object_object_get_ex(o, "spans", &v);
    ck_assert_int_eq(json_object_array_length(v), 2);
    json_object *n;
    json_object_object_get_ex(json_object_array_get_idx(v, 1), "calls", &n);
    ck_assert_int_eq(json_object_get_int64(n), 3);
    json_object_object_get_ex(json_object_array_get_idx(v, 0), "total_ns", &n);
    ck_assert_int_gt(json_object_get_int64(n), 0);
    json_object_put(o);
    unlink(fpath);
    unlink(jpath);
    rmdir(dir);
}
END_TEST

START_TEST(unwritable_path)
{
    spanprof__outputs.folded = "/nonexistent-spanprof-dir/out.folded";
    spanprof__outputs.json = NULL;
    fn_m();
    unit_stderr_begin();
    errno = 5;
    int rc = spanprof_flush();
    int e = errno;
    char *err = unit_stderr_end();
    ck_assert_int_eq(rc, -1);
    ck_assert_int_eq(e, 5);
    ck_assert_str_eq(err, "spanprof: error: cannot write '/nonexistent-spanprof-dir/out.folded': "
                          "No such file or directory\n");
    free(err);
}
END_TEST

START_TEST(nothing_configured)
{
    spanprof__outputs.folded = NULL;
    spanprof__outputs.json = NULL;
    fn_m();
    ck_assert_int_eq(spanprof_flush(), 0);
}
END_TEST

Suite *output_suite(void)
{
    Suite *s = suite_create("output");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, not_a_fork_child, no_output);
    tcase_add_test(tc, flush_writes_files);
    tcase_add_test(tc, unwritable_path);
    tcase_add_test(tc, nothing_configured);
    suite_add_tcase(s, tc);
    return s;
}
