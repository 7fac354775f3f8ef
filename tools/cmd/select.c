/* select.c — `spanprof select PROFILE`: the plugin's exclude list (exclude-list=FILE) that leaves
 * out, at build time, the spans a cost budget switched off or would switch off, so that the next
 * build is cheap from its first call.
 *
 * PROFILE is a JSON profile recorded with SPANPROF_BUDGET (the runtime's collect/budget.c): it
 * says which spans a plugin option chose ("by_option"), what one call cost ("budget.call_ns")
 * and the process's CPU time ("budget.process_cpu_ns").  Without --budget the list is the spans
 * that run switched off.  With --budget PERCENT it is chosen again from the profile's figures,
 * by the runtime's rule: the spans switched off, then the other spans an option chose, those
 * that do not lead first (a span leads whose total time is a tenth of the program's: the CPU
 * time less the calls' estimated cost), each group shortest mean call first (most called first
 * when counting), leaving out those whose calls take less than a hundredth of the budget, until
 * calls × call_ns of what is left is under nine tenths of PERCENT of the CPU time left.  A span
 * within its share of its own time is listed too when the total is still over: spans nested in
 * one another add up.  SPANPROF_BUDGET=100 records the figures without switching anything off.
 *
 * Names are written one per line with '*', '?', '[' and '\' escaped (fnmatch patterns), each
 * with a comment saying why; names that several functions share (static functions of two files)
 * leave out all of them. */
#include "cmd/cmd.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

const char select_usage[] = "usage: spanprof select [--budget PERCENT] [-o OUT] PROFILE.json\n";

const char select_help[] =
    "\n"
    "Writes the plugin's exclude list from a JSON profile recorded with\n"
    "SPANPROF_BUDGET: the functions whose spans that run switched off, or, with\n"
    "--budget, those a budget of PERCENT would switch off, chosen again from the\n"
    "profile's calls, times and measured cost per call (record with\n"
    "SPANPROF_BUDGET=100 to measure without switching anything off). A rebuild with\n"
    "-fplugin-arg-spanplugin-exclude-list=OUT leaves them out, so it is cheap from\n"
    "the first call. Only spans a plugin option chose (all, functions=) are listed;\n"
    "the last line on stderr says how many and what they cost.\n"
    "\n"
    "Options:\n"
    "  --budget PERCENT  choose for this budget (a number > 0 and <= 100)\n"
    "  -o, --output OUT  where to write the list (default: standard output)\n"
    "  -h, --help        show this text\n";

/* Whether the profile has times (not SPANPROF=count's). */
static int timed(const struct sp_profile *p)
{
    return !(p->clock && !strcmp(p->clock, "none"));
}

/* A span's mean inclusive ns per call, or, when not timed, minus its calls (most called
 * first); the lower, the sooner left out. */
static double rank(const struct sp_profile *p, const struct sp_span *s)
{
    if (!timed(p))
        return -(double)s->calls;
    return s->calls ? (double)s->total_ns / (double)s->calls : 0;
}

static const struct sp_profile *ranking;
static double lead_ns; /* a span whose total time is this much leads (0: none, counting) */

static int leads(const struct sp_span *s)
{
    return lead_ns > 0 && (double)s->total_ns >= lead_ns;
}

static int by_rank(const void *a, const void *b)
{
    const struct sp_span *x = *(const struct sp_span *const *)a;
    const struct sp_span *y = *(const struct sp_span *const *)b;
    if (leads(x) != leads(y))
        return leads(x) ? 1 : -1;
    double rx = rank(ranking, x), ry = rank(ranking, y);
    if (rx != ry)
        return rx < ry ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* NAME as an fnmatch pattern that matches it alone. */
static void put_name(FILE *f, const char *name)
{
    for (const char *c = name; *c; c++) {
        if (strchr("*?[\\", *c))
            fputc('\\', f);
        fputc(*c, f);
    }
}

/* The spans to leave out into OUT (NULL-terminated, in the order chosen); their cost in *COST. */
static size_t choose(const struct sp_profile *p, double percent, const struct sp_span **out,
                     double *cost)
{
    size_t n = 0, ncand = 0;
    const struct sp_span **cand = xmalloc((p->nspans + 1) * sizeof *cand);
    double total = 0;
    *cost = 0;
    for (size_t i = 0; i < p->nspans; i++) {
        const struct sp_span *s = &p->spans[i];
        double c = (double)s->calls * p->budget_call_ns;
        if (s->switched_off) {
            out[n++] = s; /* its calls are a lower bound: it goes whatever the figures say */
            *cost += c;
            continue;
        }
        total += c;
        if (percent > 0 && s->by_option && s->calls)
            cand[ncand++] = s;
    }
    ranking = p;
    /* The runtime's LEAD_SHARE (collect/budget.c) of the program's time. */
    double program_ns = (double)p->process_cpu_ns - total - *cost;
    lead_ns = timed(p) && program_ns > 0 ? 0.1 * program_ns : 0;
    qsort(cand, ncand, sizeof *cand, by_rank);
    double cpu = (double)p->process_cpu_ns - *cost;
    /* CPU time left at or below nothing: the calls' estimated cost is all of it (call_ns
     * measured on a busy machine), and nothing more can be told apart. */
    for (size_t i = 0; i < ncand && cpu > 0 && total > 0.9 * percent / 100 * cpu; i++) {
        const struct sp_span *s = cand[i];
        double c = (double)s->calls * p->budget_call_ns;
        if (c < percent / 100 * cpu / 100)
            continue; /* a hundredth of the budget at most */
        out[n++] = s;
        total -= c;
        cpu -= c;
        *cost += c;
    }
    free(cand);
    out[n] = NULL;
    return n;
}

int run_select(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"budget", required_argument, NULL, 'b'},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    double percent = 0;
    const char *outpath = NULL, *budget_text = NULL;
    int ch;
    while ((ch = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
        switch (ch) {
        case 'b': {
            char *end;
            percent = strtod(optarg, &end);
            budget_text = optarg;
            if (!*optarg || *end || !(percent > 0 && percent <= 100))
                return tool_usage_error("--budget needs a percentage (> 0 and <= 100), not '%s'",
                                        optarg);
            break;
        }
        case 'o':
            outpath = optarg;
            break;
        case 'h':
            fputs(select_usage, stdout);
            fputs(select_help, stdout);
            return 0;
        default:
            return tool_getopt_error(ch, argv);
        }
    }
    if (argc - optind != 1)
        return tool_usage_error("%s", "select needs one PROFILE.json");
    const char *path = argv[optind];
    struct sp_profile p;
    if (sp_profile_load(path, &p))
        return EXIT_BAD_INPUT;
    if (!p.budget || !(p.budget_call_ns > 0)) {
        fprintf(stderr, "spanprof: %s: not recorded with SPANPROF_BUDGET (no \"budget\" with a "
                        "call's cost): record with SPANPROF_BUDGET=PERCENT, or =100 to only "
                        "measure\n", path);
        sp_profile_free(&p);
        return EXIT_BAD_INPUT;
    }
    const struct sp_span **out = xmalloc((p.nspans + 1) * sizeof *out);
    double cost;
    size_t n = choose(&p, percent, out, &cost);

    struct tool_output o;
    FILE *f = outpath ? output_open(&o, outpath) : stdout;
    int rc = f ? 0 : EXIT_BAD_INPUT;
    if (f) {
        fprintf(f, "# spanprof select%s%s: %zu function%s left out of spans, from %s\n",
                budget_text ? " --budget " : "", budget_text ? budget_text : "", n,
                n == 1 ? "" : "s", path);
        fprintf(f, "# build with -fplugin-arg-spanplugin-exclude-list=THIS_FILE\n");
        for (size_t i = 0; i < n; i++) {
            const struct sp_span *s = out[i];
            put_name(f, s->name);
            if (s->switched_off)
                fprintf(f, "    # switched off at %.2f s after %llu calls of %.0f ns\n",
                        s->off_at_s, (unsigned long long)s->calls, s->off_mean_ns);
            else
                fprintf(f, "    # %llu calls of %.0f ns\n", (unsigned long long)s->calls,
                        rank(&p, s) > 0 ? rank(&p, s) : 0);
        }
        if (outpath && output_close(&o, ferror(f)))
            rc = EXIT_BAD_INPUT;
    }
    if (rc == 0)
        fprintf(stderr, "spanprof: %zu function%s left out: %.1f%% of the run's CPU time in span "
                        "calls (%.0f ns each)\n", n, n == 1 ? "" : "s",
                p.process_cpu_ns ? 100 * cost / (double)p.process_cpu_ns : 0, p.budget_call_ns);
    if (rc == 0 && percent > 0 && cost >= (double)p.process_cpu_ns)
        fprintf(stderr, "spanprof: warning: by the profile's cost of a call, these calls alone "
                        "took all of the run's CPU time (the cost measured high on a busy "
                        "machine?): nothing after them could be weighed, record again\n");
    free(out);
    sp_profile_free(&p);
    return rc;
}
