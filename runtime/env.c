/* env.c — the SPANPROF_* environment variables.
 *
 *   SPANPROF=0|1|count      recording on (default 1); 0: nothing recorded, no files, no coz points;
 *                           count: calls per stack and coz points, no timestamps (cheaper)
 *   SPANPROF_FOLDED=PATH    folded-stacks file (default "spanprof.folded"; empty: none)
 *   SPANPROF_JSON=PATH      JSON report (default: none; empty: none)
 *   SPANPROF_THREADS=0|1    folded stacks get a root frame per thread (default 0)
 *   SPANPROF_FILE_LINE=0|1  folded frames read "name (file:line)" (default 0)
 *   SPANPROF_TRACE=PATH     Chrome trace file (default: none; empty: none)
 *   SPANPROF_TRACE_BUFFER=MiB  trace ring size per thread (parsed in trace.c)
 *   SPANPROF_PPROF=PATH     pprof profile (default: none; empty: none)
 * In paths, %p is the pid and %% a percent sign.  A bad value gives one warning line naming the
 * variable and its value, and the default is used.  Parsing is a pure function of a getenv-like
 * callback and an error stream, so it can be tested.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "trace.h"

/* A 0/1 variable: unset gives DEF; anything else one warning line and DEF. */
int spanprof__env_bool(const char *var, int def, spanprof__getenv_fn get, FILE *err)
{
    const char *v = get(var);
    if (!v)
        return def;
    if (strcmp(v, "0") == 0)
        return 0;
    if (strcmp(v, "1") == 0)
        return 1;
    fprintf(err, "spanprof: warning: %s='%s' is not 0 or 1; using %d\n", var, v, def);
    return def;
}

/* DEF_TEXT describes the default in the warning ("'spanprof.folded'", "none"). */
static const char *parse_path(const char *var, const char *def, const char *def_text,
                              spanprof__getenv_fn get, FILE *err)
{
    const char *v = get(var);
    if (!v)
        return def;
    if (!*v)
        return NULL;
    if (!spanprof__path_valid(v)) {
        fprintf(err,
                "spanprof: warning: %s='%s' has a '%%' not followed by 'p' or '%%'; using %s\n",
                var, v, def_text);
        return def;
    }
    return v;
}

static void parse_mode(struct spanprof__config *c, spanprof__getenv_fn get, FILE *err)
{
    const char *v = get("SPANPROF");
    c->enabled = 1;
    c->counting = 0;
    if (!v || strcmp(v, "1") == 0)
        return;
    if (strcmp(v, "0") == 0)
        c->enabled = 0;
    else if (strcmp(v, "count") == 0)
        c->counting = 1;
    else
        fprintf(err, "spanprof: warning: SPANPROF='%s' is not 0, 1 or count; using 1\n", v);
}

void spanprof__config_load(struct spanprof__config *c, spanprof__getenv_fn get, FILE *err)
{
    parse_mode(c, get, err);
    c->threads = spanprof__env_bool("SPANPROF_THREADS", 0, get, err);
    c->file_line = spanprof__env_bool("SPANPROF_FILE_LINE", 0, get, err);
    c->folded = parse_path("SPANPROF_FOLDED", SPANPROF_FOLDED_DEFAULT,
                           "'" SPANPROF_FOLDED_DEFAULT "'", get, err);
    c->json = parse_path("SPANPROF_JSON", NULL, "none", get, err);
    c->trace = parse_path("SPANPROF_TRACE", NULL, "none", get, err);
    c->pprof = parse_path("SPANPROF_PPROF", NULL, "none", get, err);
    c->trace_buffer = spanprof__trace_parse_buffer(get, err);
}

/* A misspelt variable would otherwise be silently ignored. */
void spanprof__config_warn_unknown(char *const *env, FILE *err)
{
    static const char *const known[] = {"SPANPROF",         "SPANPROF_THREADS", "SPANPROF_FILE_LINE",
                                        "SPANPROF_FOLDED",  "SPANPROF_JSON", "SPANPROF_PPROF",
                                        /* resenv.c */
                                        "SPANPROF_HISTOGRAM", "SPANPROF_CPU", "SPANPROF_ALLOC",
                                        "SPANPROF_ALLOC_STACKS", "SPANPROF_ALLOC_SAMPLE",
                                        "SPANPROF_ALLOC_FOLDED",
                                        /* trace.c */
                                        "SPANPROF_TRACE", "SPANPROF_TRACE_BUFFER"};
    for (; env && *env; env++) {
        const char *e = *env;
        if (strncmp(e, "SPANPROF_", 9) != 0)
            continue;
        size_t len = strcspn(e, "=");
        int ok = 0;
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
            if (strlen(known[i]) == len && strncmp(known[i], e, len) == 0)
                ok = 1;
        if (!ok)
            fprintf(err, "spanprof: warning: %.*s is not a spanprof variable; ignored\n",
                    (int)len, e);
    }
}
