/* test_env.c — SPANPROF_* parsing: defaults, accepted values, exact warnings for bad ones. */
#include <stdlib.h>
#include <string.h>

#include "unit.h"

/* Loads CONFIG from the NULL-terminated name/value list ENV; returns the warnings. */
static char *load(struct spanprof__options *c, const char *const *env)
{
    return UNIT_LOAD_CONFIG(spanprof__options_load, c, env);
}

START_TEST(defaults)
{
    static const char *const env[] = {NULL};
    struct spanprof__options c;
    char *w = load(&c, env);
    ck_assert_str_eq(w, "");
    ck_assert_int_eq(c.mode, SPANPROF_MODE_ON);
    ck_assert_int_eq(c.threads, 0);
    ck_assert_int_eq(c.file_line, 0);
    ck_assert_str_eq(c.folded, "spanprof.folded");
    ck_assert_ptr_null(c.json);
    free(w);
}
END_TEST

START_TEST(values)
{
    static const char *const env[] = {"SPANPROF", "0", "SPANPROF_THREADS", "1", "SPANPROF_FILE_LINE", "1",
                                      "SPANPROF_FOLDED", "", "SPANPROF_JSON", "out-%p.json", NULL};
    struct spanprof__options c;
    char *w = load(&c, env);
    ck_assert_str_eq(w, "");
    ck_assert_int_eq(c.mode, SPANPROF_MODE_OFF);
    ck_assert_int_eq(c.threads, 1);
    ck_assert_int_eq(c.file_line, 1);
    ck_assert_ptr_null(c.folded);
    ck_assert_str_eq(c.json, "out-%p.json");
    free(w);
    static const char *const env2[] = {"SPANPROF_JSON", "", "SPANPROF_FOLDED", "f%%.txt", NULL};
    w = load(&c, env2);
    ck_assert_str_eq(w, "");
    ck_assert_ptr_null(c.json);
    ck_assert_str_eq(c.folded, "f%%.txt");
    free(w);
}
END_TEST

START_TEST(counting_mode)
{
    static const char *const env[] = {"SPANPROF", "count", NULL};
    struct spanprof__options c;
    char *w = load(&c, env);
    ck_assert_str_eq(w, "");
    ck_assert_int_eq(c.mode, SPANPROF_MODE_COUNT);
    free(w);
    static const char *const on[] = {"SPANPROF", "1", NULL};
    w = load(&c, on);
    ck_assert_int_eq(c.mode, SPANPROF_MODE_ON);
    free(w);
    static const char *const off[] = {"SPANPROF", "0", NULL};
    w = load(&c, off);
    ck_assert_int_eq(c.mode, SPANPROF_MODE_OFF);
    free(w);
}
END_TEST

/* SPANPROF=sample and its rate: 997 by default, 1 to 10000, a bad value one warning and 997. */
START_TEST(sample_mode)
{
    static const char *const env[] = {"SPANPROF", "sample", NULL};
    struct spanprof__options c;
    char *w = load(&c, env);
    ck_assert_str_eq(w, "");
    ck_assert_int_eq(c.mode, SPANPROF_MODE_SAMPLE);
    ck_assert_uint_eq(c.sample_hz, 997);
    free(w);
    static const char *const good[][2] = {{"1", "1"}, {"250", "250"}, {"10000", "10000"}};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        const char *e[] = {"SPANPROF", "sample", "SPANPROF_SAMPLE_HZ", good[i][0], NULL};
        w = load(&c, e);
        ck_assert_str_eq(w, "");
        ck_assert_uint_eq(c.sample_hz, strtoull(good[i][1], NULL, 10));
        free(w);
    }
    static const char *const bad[] = {"0", "10001", "-5", "99.5", "fast", "", "18446744073709551616"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *e[] = {"SPANPROF", "sample", "SPANPROF_SAMPLE_HZ", bad[i], NULL};
        w = load(&c, e);
        char want[200];
        snprintf(want, sizeof want,
                 "spanprof: warning: SPANPROF_SAMPLE_HZ='%s' is not a whole number from 1 to "
                 "10000; using 997\n",
                 bad[i]);
        ck_assert_str_eq(w, want);
        ck_assert_int_eq(c.mode, SPANPROF_MODE_SAMPLE);
        ck_assert_uint_eq(c.sample_hz, 997);
        free(w);
    }
}
END_TEST

START_TEST(bad_values_warn_and_default)
{
    static const char *const env[] = {"SPANPROF", "yes", "SPANPROF_THREADS", "yes", "SPANPROF_FILE_LINE", "",
                                      "SPANPROF_FOLDED", "a%x", "SPANPROF_JSON", "b%", NULL};
    struct spanprof__options c;
    char *w = load(&c, env);
    ck_assert_str_eq(w,
                     "spanprof: warning: SPANPROF='yes' is not 0, 1, count or sample; using 1\n"
                     "spanprof: warning: SPANPROF_THREADS='yes' is not 0 or 1; using 0\n"
                     "spanprof: warning: SPANPROF_FILE_LINE='' is not 0 or 1; using 0\n"
                     "spanprof: warning: SPANPROF_FOLDED='a%x' has a '%' not followed by 'p' or '%'; "
                     "using 'spanprof.folded'\n"
                     "spanprof: warning: SPANPROF_JSON='b%' has a '%' not followed by 'p' or '%'; "
                     "using none\n");
    ck_assert_int_eq(c.mode, SPANPROF_MODE_ON);
    ck_assert_int_eq(c.threads, 0);
    ck_assert_int_eq(c.file_line, 0);
    ck_assert_str_eq(c.folded, "spanprof.folded");
    ck_assert_ptr_null(c.json);
    free(w);
}
END_TEST

/* SPANPROF_DUMP_SIGNAL: a name with or without SIG, or a number; SPANPROF_DUMP_INTERVAL: seconds
 * with fractions; both unset by default, and a bad value is one warning and unset. */
START_TEST(dump_variables)
{
    static const char *const none[] = {NULL};
    struct spanprof__options c;
    char *w = load(&c, none);
    ck_assert_int_eq(c.dump_signal, 0);
    ck_assert(c.dump_interval == 0);
    ck_assert_ptr_null(c.ancestor);
    free(w);
    static const char *const names[][2] = {{"USR2", "12"}, {"SIGUSR1", "10"}, {"HUP", "1"},
                                           {"34", "34"}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const char *env[] = {"SPANPROF_DUMP_SIGNAL", names[i][0], "SPANPROF_DUMP_INTERVAL", "0.25",
                             NULL};
        w = load(&c, env);
        ck_assert_str_eq(w, "");
        ck_assert_int_eq(c.dump_signal, atoi(names[i][1]));
        ck_assert(c.dump_interval == 0.25);
        free(w);
    }
    static const char *const bad[] = {"SPANPROF_DUMP_SIGNAL", "SIGKILL", "SPANPROF_DUMP_INTERVAL", "0",
                                      NULL};
    w = load(&c, bad);
    ck_assert_str_eq(w, "spanprof: warning: SPANPROF_DUMP_SIGNAL='SIGKILL' is not a signal name or "
                        "number (USR2, SIGUSR2, 12) that a program may catch; using none\n"
                        "spanprof: warning: SPANPROF_DUMP_INTERVAL='0' is not a number of seconds "
                        "(> 0 and <= 31536000); using none\n");
    ck_assert_int_eq(c.dump_signal, 0);
    ck_assert(c.dump_interval == 0);
    free(w);
    static const char *const crash[] = {"SPANPROF_DUMP_SIGNAL", "11", NULL};
    w = load(&c, crash);
    ck_assert_int_eq(c.dump_signal, 0);
    ck_assert_ptr_nonnull(strstr(w, "SPANPROF_DUMP_SIGNAL='11' is not"));
    free(w);
}
END_TEST

START_TEST(unknown_variables)
{
    char *env[] = {"PATH=/bin", "SPANPROF_THREAD=1", "SPANPROF_JSON=x", "SPANPROFX=1", "SPANPROF_=2",
                   "SPANPROF_ANCESTOR=12:0:00ff00ff00ff00ff", NULL};
    char *buf = NULL;
    size_t len = 0;
    FILE *err = open_memstream(&buf, &len);
    spanprof__options_warn_unknown(env, err);
    fclose(err);
    ck_assert_str_eq(buf, "spanprof: warning: SPANPROF_THREAD is not a spanprof variable; ignored\n"
                          "spanprof: warning: SPANPROF_ is not a spanprof variable; ignored\n");
    free(buf);
}
END_TEST

Suite *env_suite(void)
{
    Suite *s = suite_create("env");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, defaults);
    tcase_add_test(tc, values);
    tcase_add_test(tc, counting_mode);
    tcase_add_test(tc, sample_mode);
    tcase_add_test(tc, bad_values_warn_and_default);
    tcase_add_test(tc, dump_variables);
    tcase_add_test(tc, unknown_variables);
    suite_add_tcase(s, tc);
    return s;
}
