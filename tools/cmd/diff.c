/* diff.c — `spanprof diff BEFORE AFTER`: what changed between two runs, per span.
 *
 * Each side is read as `report` reads it (load_inputs: a JSON profile, folded stacks, a
 * directory of JSON profiles or a `record` directory).  Spans are matched by name and file, not
 * line, so an edit above a function does not make it a new span; when either side is folded
 * stacks (no files), by name alone.  The table ranks spans by the absolute change of their self
 * time (of their calls when neither side has times, as in count mode), largest first.
 *
 * --folded OUT writes the differential folded file that difffolded.pl and inferno-diff-folded
 * write — "stack BEFORE AFTER" per stack of either side — from two folded files or two record
 * directories (their profile.folded); `spanprof view` shows it. */
#include "cmd/cmd.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char diff_usage[] = "usage: spanprof diff [--limit N] [--folded OUT] BEFORE AFTER\n";

const char diff_help[] =
    "\n"
    "Compares two runs: BEFORE and AFTER are each a JSON profile, folded stacks, a\n"
    "directory of JSON profiles or a `spanprof record` directory (read as `spanprof\n"
    "report` reads them; pprof profiles: `go tool pprof -diff_base BEFORE AFTER`).\n"
    "Per span: calls, self time and total time before and after, and the change;\n"
    "CPU time too when both sides have it. Spans are matched by name and file (not\n"
    "line: an edit elsewhere in the file moves it), by name alone when a side is\n"
    "folded stacks. Ranked by the absolute change of self time, largest first (of\n"
    "calls when neither side has times); spans on one side only show \"-\" on the\n"
    "other.\n"
    "\n"
    "Options:\n"
    "  --limit N       show the first N spans only (default: 20; 0: all)\n"
    "  --folded OUT    also write a differential folded file (\"stack BEFORE AFTER\"\n"
    "                  lines, as difffolded.pl writes) from two folded files or two\n"
    "                  record directories; `spanprof view OUT` shows it as the\n"
    "                  before, after, grown and shrunk flame graphs\n"
    "  -h, --help      show this text\n";

/* A span of either side: the span in each, or NULL where it is not. */
struct pair {
    const struct sp_span *before, *after;
    double change; /* what ranks it */
};

/* The calls of a pair's span before and after (0 on a side without it). */
static uint64_t calls_before(const struct pair *p)
{
    return p->before ? p->before->calls : 0;
}

static uint64_t calls_after(const struct pair *p)
{
    return p->after ? p->after->calls : 0;
}

/* |A - B| of two counts, exact over the whole unsigned range (a signed difference overflows
 * for counts past 2^63). */
static uint64_t distance(uint64_t a, uint64_t b)
{
    return a > b ? a - b : b - a;
}

static int cmp_pair(const void *pa, const void *pb)
{
    const struct pair *a = pa, *b = pb;
    double ca = a->change < 0 ? -a->change : a->change, cb = b->change < 0 ? -b->change : b->change;
    if (ca != cb)
        return ca > cb ? -1 : 1;
    /* Equal changes: the larger change of calls first (exact, where times are not). */
    uint64_t da = distance(calls_after(a), calls_before(a));
    uint64_t db = distance(calls_after(b), calls_before(b));
    if (da != db)
        return da > db ? -1 : 1;
    const struct sp_span *sa = a->after ? a->after : a->before, *sb = b->after ? b->after : b->before;
    int r = strcmp(sa->name, sb->name);
    return r ? r : strcmp(sa->file, sb->file);
}

static char *span_key(const struct sp_span *s, int by_name, size_t *len)
{
    char *k = xasprintf("%s%c%s", s->name, 0, by_name ? "" : s->file);
    *len = strlen(s->name) + 1 + (by_name ? 0 : strlen(s->file));
    return k;
}

static char *signed_duration(double ns)
{
    char *d = fmt_duration(ns < 0 ? -ns : ns), *s = xasprintf("%s%s", ns < 0 ? "-" : "+", d);
    free(d);
    return s;
}

static char *percent_change(double before, double after)
{
    if (before == 0)
        return xstrdup(after == 0 ? "0%" : "new");
    return xasprintf("%+.1f%%", 100.0 * (after - before) / before);
}

static char *calls_cell(const struct sp_profile *p, const struct sp_span *s)
{
    if (!s)
        return xstrdup("-");
    return p->no_calls ? xstrdup("?") : xasprintf("%llu", (unsigned long long)s->calls);
}

static char *time_cell(const struct sp_span *s, uint64_t ns)
{
    return s ? fmt_duration((double)ns) : xstrdup("-");
}

/* S's inclusive CPU time: sampled (SPANPROF=sample) or measured (SPANPROF_CPU=1); -1 without. */
static double cpu_of(const struct sp_span *s)
{
    if (s->has_extra & (1u << X_CPU_TOTAL))
        return (double)s->extra[X_CPU_TOTAL];
    if (s->has_extra & (1u << X_CPU))
        return (double)s->extra[X_CPU];
    return -1;
}

static char *cpu_cell(const struct sp_span *s)
{
    return s ? fmt_duration(cpu_of(s)) : xstrdup("-");
}

static int compare(const struct sp_profile *b, const struct sp_profile *a, const char *bname,
                   const char *aname, long limit)
{
    int by_name = b->no_calls || a->no_calls;
    int timed = 0, cpu;
    struct strmap keys;
    strmap_init(&keys);
    struct pair *pairs = xmalloc((b->nspans + a->nspans + 1) * sizeof *pairs);
    size_t n = 0;
    for (int side = 0; side < 2; side++) {
        const struct sp_profile *p = side ? a : b;
        for (size_t i = 0; i < p->nspans; i++) {
            size_t len;
            int added;
            char *k = span_key(&p->spans[i], by_name, &len);
            size_t at = strmap_index(&keys, k, len, &added);
            free(k);
            if (added)
                pairs[n++] = (struct pair){NULL, NULL, 0};
            if (side)
                pairs[at].after = &p->spans[i];
            else
                pairs[at].before = &p->spans[i];
            timed |= p->spans[i].self_ns != 0 || p->spans[i].total_ns != 0;
        }
    }
    strmap_free(&keys);
    /* A CPU column when every span present has a CPU figure, on both sides. */
    cpu = n > 0;
    for (size_t i = 0; i < n; i++)
        cpu &= (!pairs[i].before || cpu_of(pairs[i].before) >= 0) &&
               (!pairs[i].after || cpu_of(pairs[i].after) >= 0);
    for (size_t i = 0; i < n; i++) {
        const struct sp_span *s0 = pairs[i].before, *s1 = pairs[i].after;
        pairs[i].change = timed ? (double)(s1 ? s1->self_ns : 0) - (double)(s0 ? s0->self_ns : 0)
                                : (double)(s1 ? s1->calls : 0) - (double)(s0 ? s0->calls : 0);
    }
    qsort(pairs, n, sizeof *pairs, cmp_pair);

    printf("before: %s\nafter:  %s\n\n", bname, aname);
    if (n == 0) {
        puts("no spans on either side");
        free(pairs);
        return 0;
    }
    struct table t;
    table_init(&t, cpu ? 13 : 11, "llrrrrrrrrrrr");
    table_row(&t, xstrdup("span"), xstrdup("location"), xstrdup("calls"), xstrdup("->"), xstrdup("change"),
              xstrdup("self"), xstrdup("->"), xstrdup("change"), xstrdup("%"), xstrdup("total"),
              xstrdup("->"), cpu ? xstrdup("cpu") : NULL, cpu ? xstrdup("->") : NULL);
    size_t shown = limit > 0 && (size_t)limit < n ? (size_t)limit : n;
    for (size_t i = 0; i < shown; i++) {
        const struct sp_span *s0 = pairs[i].before, *s1 = pairs[i].after, *s = s1 ? s1 : s0;
        double self0 = s0 ? (double)s0->self_ns : 0, self1 = s1 ? (double)s1->self_ns : 0;
        uint64_t c0 = calls_before(&pairs[i]), c1 = calls_after(&pairs[i]);
        char *calls_change = by_name && (b->no_calls || a->no_calls)
                                 ? xstrdup("?")
                                 : xasprintf("%c%llu", c1 < c0 ? '-' : '+',
                                             (unsigned long long)distance(c1, c0));
        table_row(&t, xstrdup(s->name), *s->file ? xasprintf("%s:%ld", s->file, s->line) : xstrdup("-"),
                  calls_cell(b, s0), calls_cell(a, s1), calls_change,
                  time_cell(s0, s0 ? s0->self_ns : 0), time_cell(s1, s1 ? s1->self_ns : 0),
                  signed_duration(self1 - self0), percent_change(self0, self1),
                  time_cell(s0, s0 ? s0->total_ns : 0), time_cell(s1, s1 ? s1->total_ns : 0),
                  !cpu ? NULL : cpu_cell(s0), !cpu ? NULL : cpu_cell(s1));
    }
    table_print(&t, "");
    table_free(&t);
    if (shown < n)
        printf("(%zu more %s not shown)\n", n - shown, n - shown == 1 ? "span" : "spans");
    printf("ranked by the change of %s\n", timed ? "self time" : "calls");
    free(pairs);
    return 0;
}

/* ---- the differential folded file ---- */

/* The folded file behind ARG: itself, or a record directory's profile.folded. */
static char *folded_of(const char *arg)
{
    struct stat st;
    if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
        char *path = xasprintf("%s/profile.folded", arg);
        if (access(path, R_OK) == 0)
            return path;
        fprintf(stderr, "spanprof: '%s' has no profile.folded: --folded needs two folded files or "
                        "two `spanprof record` directories\n", arg);
        free(path);
        return NULL;
    }
    FILE *f = fopen(arg, "r");
    int c = f ? getc(f) : EOF;
    if (f)
        fclose(f);
    if (c == '{' || c == '[') {
        fprintf(stderr, "spanprof: '%s' is JSON: --folded needs two folded files or two `spanprof "
                        "record` directories\n", arg);
        return NULL;
    }
    return xstrdup(arg);
}

struct stack_values {
    struct strmap stacks;
    unsigned long long (*v)[2];
    size_t cap;
};

struct side_line {
    struct stack_values *sv;
    int side;
};

static int add_stack(void *ctx, char *stack, size_t len, unsigned long long value, size_t lineno)
{
    struct side_line *sl = ctx;
    struct stack_values *sv = sl->sv;
    int added;
    (void)lineno;
    size_t at = strmap_index(&sv->stacks, stack, len, &added);
    if (at == sv->cap)
        sv->v = xrealloc(sv->v, (sv->cap = sv->cap ? 2 * sv->cap : 1024) * sizeof *sv->v);
    if (added)
        sv->v[at][0] = sv->v[at][1] = 0;
    sv->v[at][sl->side] += value;
    return 0;
}

static int read_side(struct stack_values *sv, const char *path, int side)
{
    struct side_line sl = {sv, side};
    return folded_read(path, add_stack, &sl);
}

static int cmp_entry(const void *a, const void *b)
{
    const struct strmap_entry *x = *(const struct strmap_entry *const *)a,
                              *y = *(const struct strmap_entry *const *)b;
    return strcmp(x->key, y->key);
}

/* PATHS: the two folded files (folded_of). */
static int write_diff_folded(char *const paths[2], const char *out)
{
    struct stack_values sv = {.v = NULL};
    strmap_init(&sv.stacks);
    int rc = EXIT_BAD_INPUT;
    if (read_side(&sv, paths[0], 0) || read_side(&sv, paths[1], 1))
        goto done;
    const struct strmap_entry **order = xmalloc((sv.stacks.n + 1) * sizeof *order);
    size_t n = 0;
    for (size_t i = 0; i < sv.stacks.cap; i++)
        if (sv.stacks.slots[i].key)
            order[n++] = &sv.stacks.slots[i];
    qsort(order, n, sizeof *order, cmp_entry);
    struct tool_output o;
    FILE *f = output_open(&o, out);
    if (f) {
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%s %llu %llu\n", order[i]->key, sv.v[order[i]->index][0], sv.v[order[i]->index][1]);
        if (output_close(&o, 0) == 0) {
            printf("%s: %zu stacks, before and after\n", out, n);
            rc = 0;
        }
    }
    free(order);
done:
    free(sv.v);
    strmap_free(&sv.stacks);
    return rc;
}

/* ---- the command ---- */

int run_diff(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"limit", required_argument, NULL, 'n'},
        {"folded", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    long limit = 20;
    const char *folded = NULL;
    int ch;
    while ((ch = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'n':
            if (tool_parse_limit(optarg, &limit))
                return tool_usage_error("--limit needs a number of spans, not '%s'", optarg);
            break;
        case 'f':
            folded = optarg;
            break;
        case 'h':
            fputs(diff_usage, stdout);
            fputs(diff_help, stdout);
            return 0;
        default:
            return tool_getopt_error(ch, argv);
        }
    }
    if (argc - optind != 2)
        return tool_usage_error("%s", "diff needs a BEFORE and an AFTER");
    char *const *args = argv + optind;
    char *stacks[2] = {NULL, NULL};
    struct sp_profile b, a;
    int rc = EXIT_BAD_INPUT;
    /* Every input checked before anything is printed. */
    if (folded && (!(stacks[0] = folded_of(args[0])) || !(stacks[1] = folded_of(args[1]))))
        goto out;
    if (load_inputs(&args[0], 1, &b))
        goto out;
    if (load_inputs(&args[1], 1, &a)) {
        sp_profile_free(&b);
        goto out;
    }
    rc = compare(&b, &a, args[0], args[1], limit);
    sp_profile_free(&b);
    sp_profile_free(&a);
    if (rc == 0 && folded)
        rc = write_diff_folded(stacks, folded);
out:
    free(stacks[0]);
    free(stacks[1]);
    return rc;
}
