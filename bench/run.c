/* run.c — the benchmark runner behind `make bench`: runs every row of rows.txt on every workload,
 * several times, and prints Markdown tables (per-call cost, output size, memory, budget,
 * instruction counts, compile time).  It prints figures only: nothing here passes or fails.
 *
 * Noise handling (the machine may be busy): runs are interleaved (repetition r runs every row of
 * every workload before repetition r+1 starts), each run reports its own process CPU time (not
 * wall time, so time spent descheduled does not count), every ratio is taken between runs of the
 * same repetition and the median over repetitions is printed.  Instruction counts from callgrind,
 * when valgrind is installed, give a noise-free second figure.
 *
 * Environment (set by bench.mk):
 *   BENCH_BIN    directory of the workload builds        BENCH_ROWS  the rows file
 *   BENCH_REPS   repetitions (default 5)                 BENCH_QUICK 1: no callgrind, no compile
 *   BENCH_COMPILE       compile command without the plugin, e.g. "gcc -O2 -Iinclude"
 *   BENCH_PLUGIN_FLAGS  what the plugin adds to it (whole-program mode)
 *   BENCH_SOURCES       the files to compile (space-separated)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define MAX_ROWS 32
#define MAX_REPS 31
#define MAX_ENV 8
#define NWORK 4

static const char *const workloads[NWORK] = {"tight", "recursive", "threads", "stacks"};
static const char *const workload_text[NWORK] = {
    "one tiny span called in a loop (worst case per call)",
    "a span recursing 1000 deep (deep stacks)",
    "8 threads, each calling a span that calls a span",
    "10 span functions calling each other along 10,000 paths (11,111 distinct stacks)",
};

struct row {
    char label[32];
    char binary[64];
    int uftrace; /* run under uftrace record */
    long divisor;
    int nenv;
    char *env[MAX_ENV];
};

/* One run of one row on one workload. */
struct result {
    int ok;        /* ran and printed its figures */
    int pending;   /* the runtime does not know one of the row's variables */
    double pc;     /* CPU ns per span call, of the workload process's own timed loop */
    double pt;     /* CPU ns per span call of the whole process tree, start-up and exit removed */
    double calls, stacks;
    double bytes;  /* everything the run left in its working directory */
    double rss_kb; /* peak resident set */
};

static struct row rows[MAX_ROWS];
static int nrows, reps = 5;
static struct result res[MAX_REPS][NWORK][MAX_ROWS];
static const char *bindir;
static char tmproot[] = "/tmp/spanprof-bench.XXXXXX";
static int have_uftrace, have_valgrind;

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static double cpu_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of the N finite values in V (NAN when there are none).  Sorts V. */
static double median(double *v, int n)
{
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(v[i]))
            v[m++] = v[i];
    if (!m)
        return NAN;
    qsort(v, m, sizeof *v, cmp_double);
    return m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
}

static int on_path(const char *prog)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", prog);
    return system(cmd) == 0;
}

/* A copy of TOKEN with a leading "@BIN@" in its value replaced by the directory of the builds
 * (runs happen in scratch directories, so paths such as LD_PRELOAD's must be absolute). */
static char *expand_bindir(const char *token)
{
    const char *at = strstr(token, "=@BIN@");
    if (!at)
        return strdup(token);
    char *out;
    if (asprintf(&out, "%.*s=%s%s", (int)(at - token), token, bindir, at + strlen("=@BIN@")) < 0)
        exit(1);
    return out;
}

static void load_rows(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die(path);
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char *save, *tok = strtok_r(line, " \t\n", &save);
        if (!tok || *tok == '#')
            continue;
        if (nrows == MAX_ROWS) {
            fprintf(stderr, "%s: more than %d rows\n", path, MAX_ROWS);
            exit(1);
        }
        struct row *r = &rows[nrows++];
        snprintf(r->label, sizeof r->label, "%s", tok);
        const char *bin = strtok_r(NULL, " \t\n", &save);
        const char *div = strtok_r(NULL, " \t\n", &save);
        if (!bin || !div) {
            fprintf(stderr, "%s: row '%s' needs BINARY and DIVISOR\n", path, r->label);
            exit(1);
        }
        r->uftrace = strncmp(bin, "uftrace:", 8) == 0;
        snprintf(r->binary, sizeof r->binary, "%s", r->uftrace ? bin + 8 : bin);
        r->divisor = atol(div) > 0 ? atol(div) : 1;
        while ((tok = strtok_r(NULL, " \t\n", &save)) && r->nenv < MAX_ENV)
            r->env[r->nenv++] = expand_bindir(tok);
    }
    fclose(f);
}

static int find_row(const char *label)
{
    for (int i = 0; i < nrows; i++)
        if (strcmp(rows[i].label, label) == 0)
            return i;
    return -1;
}

static double dir_bytes;
static int add_size(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
    (void)p;
    (void)ftw;
    if (type == FTW_F)
        dir_bytes += st->st_size;
    return 0;
}

static int remove_entry(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    remove(p);
    return 0;
}

static void rm_rf(const char *dir)
{
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Runs ARGV in the empty directory DIR with the row's environment; stdout goes to OUT, stderr to
 * ERR (both outside DIR).  Returns the exit status; *RSS_KB gets the peak RSS of the process
 * tree, *CPU_NS its CPU time (user + system). */
static int spawn(char *const argv[], const struct row *r, const char *dir, const char *out,
                 const char *err, double *rss_kb, double *cpu_ns)
{
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        if (dir && chdir(dir) != 0)
            _exit(126);
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0)
            _exit(126);
        dup2(o, 1);
        dup2(e, 2);
        unsetenv("SPANPROF");
        unsetenv("SPANPROF_FOLDED");
        unsetenv("SPANPROF_JSON");
        for (int i = 0; r && i < r->nenv; i++)
            putenv(r->env[i]);
        execvp(argv[0], argv);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0)
        die("wait4");
    if (rss_kb)
        *rss_kb = ru.ru_maxrss;
    if (cpu_ns)
        *cpu_ns = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
                  (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
    return status;
}

static int file_contains(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[1024];
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, needle) != NULL;
    fclose(f);
    return found;
}

/* What one process reported and left behind. */
struct proc {
    unsigned long long calls, stacks, cpu_ns;
    double tree_ns; /* CPU time of the whole process tree (uftrace's recorder included) */
    double rss_kb, bytes;
    int pending;
};

/* Runs row R's binary on workload W at divisor DIV in an empty directory.  Returns 0 on failure
 * (after showing the start of the process's stderr). */
static int run_proc(const struct row *r, int w, long divisor, struct proc *p)
{
    char dir[512], out[512], err[512], bin[512], div[32];
    snprintf(dir, sizeof dir, "%s/run", tmproot);
    snprintf(out, sizeof out, "%s/stdout", tmproot);
    snprintf(err, sizeof err, "%s/stderr", tmproot);
    snprintf(bin, sizeof bin, "%s/%s", bindir, r->binary);
    snprintf(div, sizeof div, "%ld", divisor);
    rm_rf(dir);
    if (mkdir(dir, 0755) != 0)
        die(dir);
    char *plain[] = {bin, (char *)workloads[w], div, NULL};
    char *traced[] = {"uftrace", "record", "-d", "uftrace.data", bin, (char *)workloads[w], div,
                      NULL};
    memset(p, 0, sizeof *p);
    int st = spawn(r->uftrace ? traced : plain, r, dir, out, err, &p->rss_kb, &p->tree_ns);
    p->pending = file_contains(err, "is not a spanprof variable") ||
                 file_contains(err, "is not 0");
    FILE *f = fopen(out, "r");
    char line[512];
    unsigned long long wall = 0;
    int got = 0;
    while (f && !got && fgets(line, sizeof line, f))
        got = sscanf(line, "calls=%llu stacks=%llu cpu_ns=%llu wall_ns=%llu", &p->calls,
                     &p->stacks, &p->cpu_ns, &wall) == 4;
    if (f)
        fclose(f);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || !got) {
        fprintf(stderr, "bench: %s on %s failed (status %d); its stderr:\n", r->label,
                workloads[w], st);
        char cmd[600];
        snprintf(cmd, sizeof cmd, "head -5 '%s' >&2", err);
        if (system(cmd)) {
        }
        return 0;
    }
    dir_bytes = 0;
    nftw(dir, add_size, 16, FTW_PHYS);
    p->bytes = dir_bytes;
    return 1;
}

/* One repetition of row RI on workload W: the measured run, and an empty run of the same
 * configuration (no span calls) whose process-tree CPU time is the start-up and exit cost to
 * take away from the measured run's. */
static void run_one(int rep, int w, int ri)
{
    const struct row *r = &rows[ri];
    struct result *x = &res[rep][w][ri];
    memset(x, 0, sizeof *x);
    x->pc = x->pt = x->bytes = x->rss_kb = NAN;
    if (r->uftrace && !have_uftrace)
        return;
    struct proc p, idle;
    if (!run_proc(r, w, r->divisor, &p) || !p.calls)
        return;
    x->pending = p.pending;
    x->ok = run_proc(r, w, 1000000000L, &idle);
    x->pc = (double)p.cpu_ns / p.calls;
    x->pt = (p.tree_ns - idle.tree_ns) / p.calls;
    x->calls = p.calls;
    x->stacks = p.stacks;
    x->bytes = p.bytes;
    x->rss_kb = p.rss_kb;
}

/* ---- figures over repetitions ------------------------------------------------------------- */

static int usable(int w, int ri)
{
    for (int k = 0; k < reps; k++)
        if (res[k][w][ri].ok && !res[k][w][ri].pending)
            return 1;
    return 0;
}

static int pending(int w, int ri)
{
    for (int k = 0; k < reps; k++)
        if (res[k][w][ri].pending)
            return 1;
    return 0;
}

/* Added CPU ns per call of row RI over the baseline (row 0), same repetition; TREE: measured on
 * the whole process tree instead of the timed loop. */
static int use_tree;
static double added(int w, int ri, int k)
{
    struct result *a = &res[k][w][ri], *b = &res[k][w][0];
    if (!a->ok || a->pending || !b->ok)
        return NAN;
    return use_tree ? a->pt - b->pt : a->pc - b->pc;
}

static double med_added(int w, int ri)
{
    double v[MAX_REPS];
    for (int k = 0; k < reps; k++)
        v[k] = added(w, ri, k);
    return median(v, reps);
}

/* Median over repetitions of added(A) / added(B) (or of added(A) / (added(B) + EXTRA)). */
static double med_ratio(int w, int a, int b, double extra)
{
    double v[MAX_REPS];
    if (a < 0 || b < 0)
        return NAN;
    for (int k = 0; k < reps; k++)
        v[k] = added(w, a, k) / (added(w, b, k) + extra);
    return median(v, reps);
}

static double med_field(int w, int ri, size_t off)
{
    double v[MAX_REPS];
    for (int k = 0; k < reps; k++) {
        struct result *x = &res[k][w][ri];
        v[k] = x->ok && !x->pending ? *(double *)((char *)x + off) : NAN;
    }
    return median(v, reps);
}
#define MED(w, ri, field) med_field(w, ri, offsetof(struct result, field))

static const char *fmt(char *buf, size_t n, const char *f, double v)
{
    if (isnan(v) || isinf(v))
        snprintf(buf, n, "–");
    else
        snprintf(buf, n, f, v);
    return buf;
}

static const char *fmt_bytes(char *buf, size_t n, double v)
{
    if (isnan(v))
        return snprintf(buf, n, "–"), buf;
    if (v >= 10e6)
        snprintf(buf, n, "%.0f MB", v / 1e6);
    else if (v >= 10e3)
        snprintf(buf, n, "%.0f kB", v / 1e3);
    else
        snprintf(buf, n, "%.0f B", v);
    return buf;
}

/* ---- timestamps ----------------------------------------------------------------------------- */

static volatile unsigned long long ts_sink;

/* CPU ns per iteration of a loop taking two timestamps, minus an empty loop's. */
static double two_timestamps(int which)
{
    const long n = 2000000;
    double v[MAX_REPS];
    for (int k = 0; k < reps; k++) {
        unsigned long long acc = 0;
        double t0 = cpu_now_ns();
        for (long i = 0; i < n; i++)
            __asm__ volatile("" : "+r"(acc));
        double t1 = cpu_now_ns();
        for (long i = 0; i < n; i++) {
            if (which == 0) {
                unsigned long long a = __rdtsc(), b = __rdtsc();
                acc += b - a;
            } else {
                struct timespec a, b;
                clock_gettime(CLOCK_MONOTONIC, &a);
                clock_gettime(CLOCK_MONOTONIC, &b);
                acc += (unsigned long long)(b.tv_nsec - a.tv_nsec);
            }
        }
        double t2 = cpu_now_ns();
        ts_sink = acc;
        v[k] = ((t2 - t1) - (t1 - t0)) / n;
    }
    return median(v, reps);
}

/* ---- callgrind: instructions per call, noise-free ------------------------------------------ */

static double callgrind_instr(const struct row *r, long div, double *calls)
{
    char bin[512], ds[32], out[512], err[512];
    snprintf(bin, sizeof bin, "%s/%s", bindir, r->binary);
    snprintf(ds, sizeof ds, "%ld", div);
    snprintf(out, sizeof out, "%s/stdout", tmproot);
    snprintf(err, sizeof err, "%s/stderr", tmproot);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/run", tmproot);
    rm_rf(dir);
    mkdir(dir, 0755);
    char *argv[] = {"valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", bin,
                    "tight", ds, NULL};
    spawn(argv, r, dir, out, err, NULL, NULL);
    FILE *f = fopen(err, "r");
    char line[512];
    double instr = NAN;
    while (f && fgets(line, sizeof line, f)) {
        char *p = strstr(line, "Collected : ");
        if (p)
            instr = atof(p + 12);
    }
    if (f)
        fclose(f);
    f = fopen(out, "r");
    unsigned long long c = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "calls=%llu", &c) == 1)
            break;
    if (f)
        fclose(f);
    *calls = c;
    return instr;
}

/* Instructions per call: the difference of two run sizes cancels start-up and exit. */
static double instr_per_call(const struct row *r)
{
    double c1, c2;
    double i1 = callgrind_instr(r, 200, &c1), i2 = callgrind_instr(r, 100, &c2);
    return c2 > c1 ? (i2 - i1) / (c2 - c1) : NAN;
}

/* ---- compile time -------------------------------------------------------------------------- */

static double compile_all(const char *cc, const char *extra, const char *sources)
{
    char *list = strdup(sources), *save, *src;
    double total = 0;
    for (src = strtok_r(list, " ", &save); src; src = strtok_r(NULL, " ", &save)) {
        char cmd[4096], out[512], err[512];
        snprintf(cmd, sizeof cmd, "%s %s -c %s -o /dev/null", cc, extra, src);
        snprintf(out, sizeof out, "%s/stdout", tmproot);
        snprintf(err, sizeof err, "%s/stderr", tmproot);
        char *argv[] = {"sh", "-c", cmd, NULL};
        double cpu = 0;
        int st = spawn(argv, NULL, NULL, out, err, NULL, &cpu);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "bench: compile failed: %s\n", cmd);
            free(list);
            return NAN;
        }
        total += cpu;
    }
    free(list);
    return total;
}

/* ---- report -------------------------------------------------------------------------------- */

static void machine(void)
{
    char line[512], model[256] = "?";
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0) {
            char *p = strchr(line, ':');
            snprintf(model, sizeof model, "%s", p ? p + 2 : line);
            model[strcspn(model, "\n")] = 0;
            break;
        }
    if (f)
        fclose(f);
    printf("Machine: %s, %ld CPUs online; ", model, sysconf(_SC_NPROCESSORS_ONLN));
    fflush(stdout);
    if (system("uname -sr | tr -d '\\n'; printf '; '; "
               "${BENCH_CC:-gcc} --version | head -1 | tr -d '\\n'; "
               "if command -v uftrace >/dev/null; then printf '; '; uftrace --version | head -1 "
               "| tr -d '\\n'; fi; echo")) {
    }
}

static void loadavg(const char *when)
{
    double l[3];
    if (getloadavg(l, 3) == 3)
        printf("Load average %s: %.2f %.2f %.2f\n", when, l[0], l[1], l[2]);
}

int main(void)
{
    /* Absolute: every run starts in its own scratch directory. */
    bindir = realpath(getenv("BENCH_BIN") ? getenv("BENCH_BIN") : "build/bench", NULL);
    if (!bindir)
        die("BENCH_BIN");
    const char *rows_file = getenv("BENCH_ROWS") ? getenv("BENCH_ROWS") : "bench/rows.txt";
    if (getenv("BENCH_REPS"))
        reps = atoi(getenv("BENCH_REPS"));
    if (reps < 1)
        reps = 1;
    if (reps > MAX_REPS)
        reps = MAX_REPS;
    int quick = getenv("BENCH_QUICK") && strcmp(getenv("BENCH_QUICK"), "1") == 0;
    load_rows(rows_file);
    if (!mkdtemp(tmproot))
        die("mkdtemp");
    have_uftrace = on_path("uftrace");
    have_valgrind = !quick && on_path("valgrind");
    int floor = find_row("floor"), floor_so = find_row("floor-so"), uft = find_row("uftrace");

    printf("## spanprof benchmark\n\n");
    machine();
    loadavg("at start");
    printf("Repetitions: %d, interleaved; figures are medians over repetitions; ratios are taken "
           "within each repetition.\n",
           reps);
    if (!have_uftrace)
        printf("uftrace is not installed: its row is empty (apt-get install uftrace).\n");
    fflush(stdout);

    for (int k = 0; k < reps; k++) {
        fprintf(stderr, "bench: repetition %d/%d\n", k + 1, reps);
        for (int w = 0; w < NWORK; w++)
            for (int ri = 0; ri < nrows; ri++)
                run_one(k, w, ri);
    }
    double ts_rdtsc = two_timestamps(0), ts_mono = two_timestamps(1);

    printf("\nTwo timestamps (CPU ns per pair): rdtsc %.1f, clock_gettime(CLOCK_MONOTONIC) %.1f\n",
           ts_rdtsc, ts_mono);
    printf("\nColumns: CPU ns per span call; added ns per call over uninstrumented; that added "
           "cost as a multiple of the floor's (empty -finstrument-functions hooks); uftrace's "
           "added cost divided by the row's; added ns per call counting the CPU time of every "
           "process of the run (uftrace's recorder, spanprof's output at exit), start-up "
           "excluded; bytes written; bytes per distinct stack; peak RSS of the process tree.\n");
    for (int w = 0; w < NWORK; w++) {
        printf("\n### %s: %s", workloads[w], workload_text[w]);
        double calls = MED(w, 0, calls), stacks = MED(w, 0, stacks);
        printf(" — %.0f calls, %.0f distinct stacks\n\n", calls, stacks);
        printf("| row | ns/call | added ns | × floor | uftrace ÷ row | added ns, all processes | "
               "output | B/stack | peak RSS |\n");
        printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (int ri = 0; ri < nrows; ri++) {
            char a[32], b[32], c[32], d[32], e[32], f[32], g[32];
            if (!usable(w, ri)) {
                printf("| %s | %s ||||||||\n", rows[ri].label,
                       pending(w, ri) ? "pending (the runtime does not know this setting yet)"
                       : rows[ri].uftrace && !have_uftrace ? "not run (no uftrace)"
                                                           : "failed");
                continue;
            }
            double by = MED(w, ri, bytes);
            char h[32];
            use_tree = 1;
            fmt(h, sizeof h, "%+.2f", med_added(w, ri));
            use_tree = 0;
            printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", rows[ri].label,
                   fmt(a, sizeof a, "%.2f", MED(w, ri, pc)),
                   ri ? fmt(b, sizeof b, "%+.2f", med_added(w, ri)) : "0",
                   ri && floor >= 0 ? fmt(c, sizeof c, "%.2f", med_ratio(w, ri, floor, 0)) : "",
                   ri && uft >= 0 && ri != uft ? fmt(d, sizeof d, "%.1f", med_ratio(w, uft, ri, 0))
                                               : "",
                   ri ? h : "0", fmt_bytes(e, sizeof e, by), fmt(f, sizeof f, "%.1f", by / stacks),
                   fmt(g, sizeof g, "%.1f MiB", MED(w, ri, rss_kb) / 1024));
        }
    }

    /* Budget, on the worst case (tight) unless said otherwise. */
    int off = find_row("off"), off_so = find_row("off-so"), count = find_row("count"),
        exact = find_row("exact"), exact_so = find_row("exact-so");
    printf("\n### Budget (tight workload; same repetitions)\n\n");
    printf("| target | measured | met? |\n|---|---|---|\n");
    char m[256];
    double v;
#define BUDGET(target, cond, ...)                                                                  \
    do {                                                                                           \
        snprintf(m, sizeof m, __VA_ARGS__);                                                        \
        printf("| %s | %s | %s |\n", target, m, isnan(v) ? "–" : (cond) ? "yes" : "no");           \
    } while (0)
    v = med_ratio(0, off, floor, 0);
    BUDGET("recording off ≤ 1.3 × floor's added cost", v <= 1.3, "%.2f × (%+.2f vs %+.2f ns)", v,
           med_added(0, off), med_added(0, floor));
    v = med_ratio(0, off_so, floor_so, 0);
    BUDGET("recording off, shared runtime ≤ 1.3 × floor with hooks in a .so", v <= 1.3,
           "%.2f × (%+.2f vs %+.2f ns; %.2f × the in-program floor)", v, med_added(0, off_so),
           med_added(0, floor_so), med_ratio(0, off_so, floor, 0));
    v = med_ratio(0, count, floor, 0);
    BUDGET("counting only ≤ 2 × floor's added cost", v <= 2, "%.2f × (%+.2f ns)", v,
           med_added(0, count));
    v = med_ratio(0, exact, floor, ts_rdtsc);
    BUDGET("exact timing ≤ 1.3 × (floor + two timestamps)", v <= 1.3,
           "%.2f × (%+.2f vs %+.2f + %.1f ns)", v, med_added(0, exact), med_added(0, floor),
           ts_rdtsc);
    {
        double lo = INFINITY;
        char per[160] = "";
        size_t len = 0;
        for (int w = 0; w < NWORK; w++) {
            double r = med_ratio(w, uft, exact, 0);
            if (!isnan(r) && r < lo)
                lo = r;
            len += snprintf(per + len, sizeof per - len, "%s%s %.1f×", w ? ", " : "",
                            workloads[w], r);
        }
        v = isinf(lo) ? NAN : lo;
        BUDGET("≥ 8 × less added time per call than uftrace record (traced process only)", v >= 8,
               "%s", per);
        /* uftrace hands its buffers to a recorder process: count that CPU time too. */
        use_tree = 1;
        lo = INFINITY;
        len = 0;
        for (int w = 0; w < NWORK; w++) {
            double r = med_ratio(w, uft, exact, 0);
            if (!isnan(r) && r < lo)
                lo = r;
            len += snprintf(per + len, sizeof per - len, "%s%s %.1f×", w ? ", " : "",
                            workloads[w], r);
        }
        use_tree = 0;
        v = isinf(lo) ? NAN : lo;
        BUDGET("… counting all processes' CPU (uftrace's recorder, spanprof's output)", v >= 8,
               "%s", per);
        v = med_ratio(0, uft, count, 0);
        BUDGET("… counting-only mode, tight (traced process only)", v >= 8, "%.1f×", v);
    }
    {
        /* Output is per distinct stack (call tree), not per call: compare bytes per stack. */
        v = MED(0, exact, bytes);
        BUDGET("output size proportional to distinct stacks", v < 4096,
               "exact: %.0f B for %.0f calls on 1 stack; %.0f B for %.0f stacks (%.0f B/stack); "
               "recursive (stacks 1..1000 deep): %.0f B; uftrace: %.0f B per call",
               v, MED(0, exact, calls), MED(3, exact, bytes), MED(3, exact, stacks),
               MED(3, exact, bytes) / MED(3, exact, stacks), MED(1, exact, bytes),
               MED(0, uft, bytes) / MED(0, uft, calls));
    }
    {
        double per = (MED(2, exact, rss_kb) - MED(2, 0, rss_kb)) / 8;
        double so = (MED(2, exact_so, rss_kb) - MED(2, 0, rss_kb)) / 8;
        double deep = MED(1, exact, rss_kb) - MED(1, 0, rss_kb);
        double many = MED(3, exact, rss_kb) - MED(3, 0, rss_kb);
        v = per;
        BUDGET("memory per thread bounded and reported", per < 1024,
               "threads: +%.0f KiB per thread (static), +%.0f KiB (shared); one thread with "
               "1000-deep stacks: +%.0f KiB; 11,111 stacks: +%.0f KiB",
               per, so, deep, many);
    }

    if (have_valgrind) {
        printf("\n### Instructions per span call (callgrind, tight workload, added over "
               "uninstrumented)\n\n| row | instructions/call |\n|---|---:|\n");
        double base = instr_per_call(&rows[0]);
        for (int ri = 1; ri < nrows; ri++) {
            if (rows[ri].uftrace || !usable(0, ri))
                continue;
            char a[32];
            printf("| %s | %s |\n", rows[ri].label,
                   fmt(a, sizeof a, "%+.1f", instr_per_call(&rows[ri]) - base));
        }
    }

    const char *cc = getenv("BENCH_COMPILE"), *pf = getenv("BENCH_PLUGIN_FLAGS"),
               *srcs = getenv("BENCH_SOURCES");
    if (!quick && cc && pf && srcs) {
        double without[MAX_REPS], with[MAX_REPS], ratio[MAX_REPS];
        int n = reps < 3 ? reps : 3;
        for (int k = 0; k < n; k++) {
            without[k] = compile_all(cc, "", srcs);
            with[k] = compile_all(cc, pf, srcs);
            ratio[k] = with[k] / without[k];
        }
        int files = 0;
        for (const char *p = srcs; *p; p++)
            files += (p == srcs || p[-1] == ' ') && *p != ' ';
        printf("\n### Compile time of whole-program mode (%d files: the runtime and the spanprof "
               "tool, `-O2`, CPU seconds, median of %d)\n\n",
               files, n);
        printf("| build | CPU s |\n|---|---:|\n| without the plugin | %.2f |\n"
               "| with `-fplugin-arg-spanplugin-all` | %.2f |\n| ratio | %.3f |\n",
               median(without, n) / 1e9, median(with, n) / 1e9, median(ratio, n));
    }
    printf("\n");
    loadavg("at end");
    rm_rf(tmproot);
    return 0;
}
