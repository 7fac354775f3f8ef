/* diff.c — `spanprof diff BEFORE AFTER`: what changed between two runs, per span.
 *
 * Each side is read as `report` reads it (load_inputs: a JSON profile, folded stacks, a
 * directory of JSON profiles or a `record` directory).  Spans are matched by name and file, not
 * line, so an edit above a function does not make it a new span; a span whose name is held by
 * one span on each side is the same span whatever its file (a program built from a renamed
 * file); when either side is folded stacks (no files), by name alone.
 *
 * Beside the totals, the mean self and total time per call: a run of fixed length that made more
 * calls hides a faster call in its totals.  The table ranks spans by --sort, largest change
 * first; the default weighs both: the change of self time in total, or what the change of its
 * mean makes at the after's calls, whichever is larger (calls alone when neither side has times,
 * as in count mode).
 *
 * --folded OUT writes the differential folded file that difffolded.pl and inferno-diff-folded
 * write — "stack BEFORE AFTER" per stack of either side — from two folded files or two record
 * directories (their profile.folded); `spanprof view` shows it, and --html PAGE writes that
 * page, titled after the program and the two runs. */
#include "cmd/cmd.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char diff_usage[] =
    "usage: spanprof diff [--sort=KEY] [--limit N] [--folded OUT] [--html PAGE]\n"
    "                     BEFORE AFTER\n";

const char diff_help[] =
    "\n"
    "Compares two runs: BEFORE and AFTER are each a JSON profile, folded stacks, a\n"
    "directory of JSON profiles or a `spanprof record` directory (read as `spanprof\n"
    "report` reads them; pprof profiles: `go tool pprof -diff_base BEFORE AFTER`).\n"
    "Per span: calls, self time and total time before and after, and the change;\n"
    "the mean self and total time per call, before and after, and its change;\n"
    "CPU time too when both sides have it. Spans on one side only show \"-\" on\n"
    "the other.\n"
    "\n"
    "Spans are matched by name and file (not line: an edit elsewhere in the file\n"
    "moves it); a name that one span holds on each side is the same span in\n"
    "whichever file (a program built from a renamed file: its location then says\n"
    "\"(was OLD-FILE)\"). When a side is folded stacks, by name alone, without\n"
    "calls or means.\n"
    "\n"
    "Options:\n"
    "  --sort=KEY      rank the spans by the size of a change, largest first:\n"
    "                    both (default): the change of self time, or what the\n"
    "                      change of its mean per call makes at the after's calls\n"
    "                      ((mean after - mean before) x calls after), whichever\n"
    "                      is larger: a faster call shows even when more calls\n"
    "                      kept the total as it was\n"
    "                    self, total: the change of self or total time\n"
    "                    self/call, total/call: the change of its mean per call\n"
    "                    calls: the change of calls\n"
    "                  (without times on either side, as in count mode: calls);\n"
    "                  the table's last line says which ranking it shows\n"
    "  --limit N       show the first N spans only (default: 20; 0: all)\n"
    "  --folded OUT    also write a differential folded file (\"stack BEFORE AFTER\"\n"
    "                  lines, as difffolded.pl writes) from two folded files or two\n"
    "                  record directories; `spanprof view OUT` shows it\n"
    "  --html PAGE     also write the page of that file (as `spanprof view` would),\n"
    "                  titled PROGRAM: BEFORE -> AFTER: it opens on what changed, the\n"
    "                  growth and the shrinkage of every stack side by side in one\n"
    "                  flame graph; after and before are in its profile list\n"
    "  -h, --help      show this text\n";

/* What ranks the spans (--sort). */
enum diff_sort {
    DSORT_BOTH, DSORT_SELF, DSORT_TOTAL, DSORT_SELF_PER_CALL, DSORT_TOTAL_PER_CALL, DSORT_CALLS
};

static const struct {
    const char *key, *ranked_by; /* --sort's value, and the table's last line after "ranked by" */
} sort_keys[] = {
    [DSORT_BOTH] = {"both", "the change of self time, in total or per call (times the calls after), "
                            "whichever is larger (--sort=both)"},
    [DSORT_SELF] = {"self", "the change of self time (--sort=self)"},
    [DSORT_TOTAL] = {"total", "the change of total time (--sort=total)"},
    [DSORT_SELF_PER_CALL] = {"self/call", "the change of self time per call (--sort=self/call)"},
    [DSORT_TOTAL_PER_CALL] = {"total/call", "the change of total time per call (--sort=total/call)"},
    [DSORT_CALLS] = {"calls", "the change of calls (--sort=calls)"},
};

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

/* The index of S's name in NAMES, which holds it. */
static size_t name_at(const struct strmap *names, const struct sp_span *s)
{
    return (size_t)strmap_find(names, s->name, strlen(s->name));
}

/* Spans of one side only that are the only span of their name on both sides, paired across
 * their files (a program built from a renamed file); N shrinks by the pairs joined. */
static void join_renamed(const struct sp_profile *b, const struct sp_profile *a, struct pair *pairs,
                         size_t *n)
{
    struct strmap names;
    strmap_init(&names);
    const struct sp_profile *side[2] = {b, a};
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < side[k]->nspans; i++) {
            int added;
            strmap_index(&names, side[k]->spans[i].name, strlen(side[k]->spans[i].name), &added);
        }
    /* Per name: its spans before and after, and the after-only pair holding it (+1; 0: none). */
    size_t (*per_name)[3] = xmalloc((names.n + 1) * sizeof *per_name);
    memset(per_name, 0, (names.n + 1) * sizeof *per_name);
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < side[k]->nspans; i++)
            per_name[name_at(&names, &side[k]->spans[i])][k]++;
    for (size_t i = 0; i < *n; i++)
        if (!pairs[i].before)
            per_name[name_at(&names, pairs[i].after)][2] = i + 1;
    size_t kept = 0;
    for (size_t i = 0; i < *n; i++) {
        if (!pairs[i].after) {
            const size_t *c = per_name[name_at(&names, pairs[i].before)];
            if (c[0] == 1 && c[1] == 1 && c[2]) {
                pairs[c[2] - 1].before = pairs[i].before;
                continue;
            }
        }
        pairs[kept++] = pairs[i];
    }
    *n = kept;
    free(per_name);
    strmap_free(&names);
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

/* NS per call of S; 0 for a span absent or never called. */
static double per_call(const struct sp_span *s, uint64_t ns)
{
    return s && s->calls ? (double)ns / (double)s->calls : 0;
}

static char *per_call_cell(const struct sp_span *s, uint64_t ns)
{
    return s && s->calls ? fmt_duration(per_call(s, ns)) : xstrdup("-");
}

/* The percentage change of a mean, "-" where a side has none. */
static char *per_call_change(const struct sp_span *s0, const struct sp_span *s1, double m0, double m1)
{
    return s0 && s1 && s0->calls && s1->calls ? percent_change(m0, m1) : xstrdup("-");
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

/* What ranks P by KEY: a change, in ns or calls. */
static double change_of(const struct pair *p, enum diff_sort key)
{
    const struct sp_span *s0 = p->before, *s1 = p->after;
    double self0 = s0 ? (double)s0->self_ns : 0, self1 = s1 ? (double)s1->self_ns : 0;
    double total0 = s0 ? (double)s0->total_ns : 0, total1 = s1 ? (double)s1->total_ns : 0;
    switch (key) {
    case DSORT_BOTH: {
        double in_total = self1 - self0;
        if (!s0 || !s1 || !s0->calls || !s1->calls)
            return in_total;
        /* What the change of the mean makes at the after's calls: the part of the change that
         * the calls' own cost, not their number, explains. */
        double by_mean = (per_call(s1, s1->self_ns) - per_call(s0, s0->self_ns)) * (double)s1->calls;
        return fabs(by_mean) > fabs(in_total) ? by_mean : in_total;
    }
    case DSORT_SELF:
        return self1 - self0;
    case DSORT_TOTAL:
        return total1 - total0;
    case DSORT_SELF_PER_CALL:
        return per_call(s1, s1 ? s1->self_ns : 0) - per_call(s0, s0 ? s0->self_ns : 0);
    case DSORT_TOTAL_PER_CALL:
        return per_call(s1, s1 ? s1->total_ns : 0) - per_call(s0, s0 ? s0->total_ns : 0);
    case DSORT_CALLS:
        break;
    }
    return (double)calls_after(p) - (double)calls_before(p);
}

static int compare(const struct sp_profile *b, const struct sp_profile *a, const char *bname,
                   const char *aname, long limit, enum diff_sort sort)
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
    if (!by_name)
        join_renamed(b, a, pairs, &n);
    /* Means per call where both sides count calls and have times. */
    int means = timed && !by_name;
    if (!means && (sort == DSORT_SELF_PER_CALL || sort == DSORT_TOTAL_PER_CALL)) {
        if (by_name)
            fprintf(stderr, "spanprof: --sort=%s needs calls on both sides: '%s' is folded stacks, "
                            "which have none\n", sort_keys[sort].key, b->no_calls ? bname : aname);
        else
            fprintf(stderr, "spanprof: --sort=%s needs times: neither side has any (count mode)\n",
                    sort_keys[sort].key);
        free(pairs);
        return EXIT_BAD_INPUT;
    }
    if (!timed)
        sort = DSORT_CALLS; /* count mode: nothing else changed */
    else if (!means && sort == DSORT_BOTH)
        sort = DSORT_SELF;
    /* A CPU column when every span present has a CPU figure, on both sides. */
    cpu = n > 0;
    for (size_t i = 0; i < n; i++)
        cpu &= (!pairs[i].before || cpu_of(pairs[i].before) >= 0) &&
               (!pairs[i].after || cpu_of(pairs[i].after) >= 0);
    for (size_t i = 0; i < n; i++)
        pairs[i].change = change_of(&pairs[i], sort);
    qsort(pairs, n, sizeof *pairs, cmp_pair);

    printf("before: %s\nafter:  %s\n\n", bname, aname);
    if (n == 0) {
        puts("no spans on either side");
        free(pairs);
        return 0;
    }
    /* Columns: span, location, calls (3), self (4), self per call (3), total (2), total per
     * call (3), CPU (2); the per-call ones with means only. */
    struct table t;
    table_init(&t, 11 + (means ? 6 : 0) + (cpu ? 2 : 0), "llrrrrrrrrrrrrrrrrr");
    if (means)
        table_row(&t, xstrdup("span"), xstrdup("location"), xstrdup("calls"), xstrdup("->"),
                  xstrdup("change"), xstrdup("self"), xstrdup("->"), xstrdup("change"), xstrdup("%"),
                  xstrdup("self/call"), xstrdup("->"), xstrdup("%"), xstrdup("total"), xstrdup("->"),
                  xstrdup("total/call"), xstrdup("->"), xstrdup("%"), cpu ? xstrdup("cpu") : NULL,
                  cpu ? xstrdup("->") : NULL);
    else
        table_row(&t, xstrdup("span"), xstrdup("location"), xstrdup("calls"), xstrdup("->"),
                  xstrdup("change"), xstrdup("self"), xstrdup("->"), xstrdup("change"), xstrdup("%"),
                  xstrdup("total"), xstrdup("->"), cpu ? xstrdup("cpu") : NULL, cpu ? xstrdup("->") : NULL);
    size_t shown = limit > 0 && (size_t)limit < n ? (size_t)limit : n;
    for (size_t i = 0; i < shown; i++) {
        const struct sp_span *s0 = pairs[i].before, *s1 = pairs[i].after, *s = s1 ? s1 : s0;
        double self0 = s0 ? (double)s0->self_ns : 0, self1 = s1 ? (double)s1->self_ns : 0;
        uint64_t c0 = calls_before(&pairs[i]), c1 = calls_after(&pairs[i]);
        char *calls_change = by_name ? xstrdup("?")
                                     : xasprintf("%c%llu", c1 < c0 ? '-' : '+',
                                                 (unsigned long long)distance(c1, c0));
        char *location = !*s->file ? xstrdup("-")
                         : s0 && s1 && strcmp(s0->file, s1->file)
                             ? xasprintf("%s:%ld (was %s)", s->file, s->line, s0->file)
                             : xasprintf("%s:%ld", s->file, s->line);
        char *total[2] = {time_cell(s0, s0 ? s0->total_ns : 0), time_cell(s1, s1 ? s1->total_ns : 0)};
        char *cpus[2] = {cpu ? cpu_cell(s0) : NULL, cpu ? cpu_cell(s1) : NULL};
        if (!means) {
            table_row(&t, xstrdup(s->name), location, calls_cell(b, s0), calls_cell(a, s1), calls_change,
                      time_cell(s0, s0 ? s0->self_ns : 0), time_cell(s1, s1 ? s1->self_ns : 0),
                      signed_duration(self1 - self0), percent_change(self0, self1), total[0], total[1],
                      cpus[0], cpus[1]);
            continue;
        }
        double m0 = per_call(s0, s0 ? s0->self_ns : 0), m1 = per_call(s1, s1 ? s1->self_ns : 0);
        double t0 = per_call(s0, s0 ? s0->total_ns : 0), t1 = per_call(s1, s1 ? s1->total_ns : 0);
        table_row(&t, xstrdup(s->name), location, calls_cell(b, s0), calls_cell(a, s1), calls_change,
                  time_cell(s0, s0 ? s0->self_ns : 0), time_cell(s1, s1 ? s1->self_ns : 0),
                  signed_duration(self1 - self0), percent_change(self0, self1),
                  per_call_cell(s0, s0 ? s0->self_ns : 0), per_call_cell(s1, s1 ? s1->self_ns : 0),
                  per_call_change(s0, s1, m0, m1), total[0], total[1],
                  per_call_cell(s0, s0 ? s0->total_ns : 0), per_call_cell(s1, s1 ? s1->total_ns : 0),
                  per_call_change(s0, s1, t0, t1), cpus[0], cpus[1]);
    }
    table_print(&t, "");
    table_free(&t);
    if (shown < n)
        printf("(%zu more %s not shown)\n", n - shown, n - shown == 1 ? "span" : "spans");
    printf("ranked by %s\n", sort_keys[sort].ranked_by);
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
        fprintf(stderr, "spanprof: '%s' has no profile.folded: --folded and --html need two folded "
                        "files or two `spanprof record` directories\n", arg);
        free(path);
        return NULL;
    }
    FILE *f = fopen(arg, "r");
    int c = f ? getc(f) : EOF;
    if (f)
        fclose(f);
    if (c == '{' || c == '[') {
        fprintf(stderr, "spanprof: '%s' is JSON: --folded and --html need two folded files or two "
                        "`spanprof record` directories\n", arg);
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

/* The differential lines of SV's stacks in ORDER to F. */
static void put_diff_lines(FILE *f, const struct stack_values *sv, const struct strmap_entry **order, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s %llu %llu\n", order[i]->key, sv->v[order[i]->index][0], sv->v[order[i]->index][1]);
}

/* PATHS: the two folded files (folded_of); their differential file into OUT and its page into
 * PAGE, titled TITLE (either NULL: not written). */
static int write_diff_folded(char *const paths[2], const char *out, const char *page, const char *title)
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
    rc = 0;
    struct tool_output o;
    FILE *f = out ? output_open(&o, out) : NULL;
    if (out && f) {
        put_diff_lines(f, &sv, order, n);
        if (output_close(&o, 0) == 0)
            printf("%s: %zu stacks, before and after\n", out, n);
        else
            rc = EXIT_BAD_INPUT;
    } else if (out) {
        rc = EXIT_BAD_INPUT;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *mem = page && rc == 0 ? open_memstream(&text, &len) : NULL;
    if (mem) {
        put_diff_lines(mem, &sv, order, n);
        fclose(mem);
        rc = view_folded_page(text, len, page, title);
        if (rc == 0)
            printf("%s: what changed (grew and shrank), then after and before\n", page);
    } else if (page && rc == 0) {
        perror("spanprof: open_memstream");
        rc = EXIT_BAD_INPUT;
    }
    free(text);
    free(order);
done:
    free(sv.v);
    strmap_free(&sv.stacks);
    return rc;
}

/* The diff page's title: "PROGRAM: BEFORE → AFTER (change)", the program of either side (the
 * after's first: of its profile, else of the JSON profile beside its folded stacks STACKS),
 * BEFORE and AFTER as given. */
static char *diff_title(const struct sp_profile *b, const struct sp_profile *a, char *const stacks[2],
                        const char *bname, const char *aname)
{
    char *program = NULL;
    const struct sp_profile *side[2] = {a, b};
    for (int k = 0; k < 2 && !program; k++)
        if (side[k]->program) {
            const char *slash = strrchr(side[k]->program, '/');
            program = xstrdup(slash && slash[1] ? slash + 1 : side[k]->program);
        } else {
            program = program_beside(stacks[1 - k]);
        }
    char *title = xasprintf("%s%s%s \xe2\x86\x92 %s (change)", program ? program : "",
                            program ? ": " : "", bname, aname);
    free(program);
    return title;
}

/* ---- the command ---- */

static int parse_sort(const char *text, enum diff_sort *sort)
{
    for (size_t i = 0; i < sizeof sort_keys / sizeof *sort_keys; i++)
        if (!strcmp(text, sort_keys[i].key)) {
            *sort = (enum diff_sort)i;
            return 0;
        }
    return -1;
}

int run_diff(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"limit", required_argument, NULL, 'n'},
        {"sort", required_argument, NULL, 's'},
        {"folded", required_argument, NULL, 'f'},
        {"html", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    long limit = 20;
    enum diff_sort sort = DSORT_BOTH;
    const char *folded = NULL, *page = NULL;
    int ch;
    while ((ch = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'n':
            if (tool_parse_limit(optarg, &limit))
                return tool_usage_error("--limit needs a number of spans, not '%s'", optarg);
            break;
        case 's':
            if (parse_sort(optarg, &sort))
                return tool_usage_error("--sort needs both, self, total, self/call, total/call or "
                                        "calls, not '%s'", optarg);
            break;
        case 'f':
            folded = optarg;
            break;
        case 'p':
            page = optarg;
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
    if ((folded || page) && (!(stacks[0] = folded_of(args[0])) || !(stacks[1] = folded_of(args[1]))))
        goto out;
    if (load_inputs(&args[0], 1, &b))
        goto out;
    if (load_inputs(&args[1], 1, &a)) {
        sp_profile_free(&b);
        goto out;
    }
    rc = compare(&b, &a, args[0], args[1], limit, sort);
    char *title = page ? diff_title(&b, &a, stacks, args[0], args[1]) : NULL;
    sp_profile_free(&b);
    sp_profile_free(&a);
    if (rc == 0 && (folded || page))
        rc = write_diff_folded(stacks, folded, page, title);
    free(title);
out:
    free(stacks[0]);
    free(stacks[1]);
    return rc;
}
