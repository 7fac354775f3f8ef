/* toolbench.c — the large-input figures of the spanprof command: writes a JSON profile with many
 * spans, coz profiles with many experiments (text and JSON Lines, the same experiments) and a
 * large JSON profile cut short near its end, then times `spanprof report`, `spanprof coz` and
 * `spanprof merge` on them and prints seconds and peak memory per command.
 *
 *   toolbench [--check SECONDS] SPANPROF DIR SPANS EXPERIMENTS MALFORMED_MB
 *
 * `make bench` runs it with 300,000 spans, 100,000 experiments and 100 MB.  With --check (the
 * test suite, on smaller inputs) it also fails when a command takes more than SECONDS of CPU
 * time (wall time would fail on a busy machine), exits
 * with the wrong status, or when the text and JSON Lines coz profiles give different tables.
 *
 * The inputs are deterministic (a fixed pseudo-random sequence), so runs compare. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what, const char *path)
{
    fprintf(stderr, "toolbench: %s '%s': %s\n", what, path, strerror(errno));
    exit(2);
}

static unsigned long long rng_state = 0x9e3779b97f4a7c15ULL;

static unsigned long long rnd(void)
{
    /* xorshift64*: enough spread for made-up figures, the same on every machine */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

static FILE *create(const char *dir, const char *name, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        die("cannot create", path);
    return f;
}

static void finish(FILE *f, const char *path)
{
    if (ferror(f) || fclose(f))
        die("cannot write", path);
}

/* Spans live in NFILES files, 10 directories sharing each basename (so file matching has to tell
 * src/d3/f7.c from src/d4/f7.c), 20 lines per function, every fifth span a nested function
 * inside the one before it. */
enum { NFILES = 1000, FN_LINES = 20 };

static void file_name(char *buf, size_t size, long k)
{
    snprintf(buf, size, "src/d%ld/f%ld.c", k % 10, k / 10);
}

/* One span entry as the runtime writes it (pretty-printed); PAD lengthens names. */
static void span_entry(FILE *f, long i, long nspans, const char *pad, int last)
{
    long per_file = (nspans + NFILES - 1) / NFILES;
    long k = i / per_file, j = i % per_file;
    char file[64];
    file_name(file, sizeof file, k);
    long line, last_line;
    if (j % 5 == 4) {           /* nested in span i-1 */
        line = (j - 1) * FN_LINES + 5;
        last_line = line + 8;
    } else {
        line = j * FN_LINES + 1;
        last_line = line + FN_LINES - 2;
    }
    unsigned long long calls = 1 + rnd() % 100000, self = calls * (50 + rnd() % 5000);
    unsigned long long total = self + rnd() % 1000000;
    fprintf(f,
            "    {\n      \"name\": \"fn_%ld%s\",\n      \"file\": \"%s\",\n      \"line\": %ld,\n"
            "      \"last_line\": %ld,\n      \"calls\": %llu,\n      \"total_ns\": %llu,\n"
            "      \"self_ns\": %llu,\n      \"max_depth\": 1\n    }%s\n",
            i, pad, file, line, last_line, calls, total, self, last ? "" : ",");
}

static void profile_head(FILE *f)
{
    fputs("{\n  \"version\": 1,\n  \"pid\": 4242,\n  \"program\": \"/usr/bin/big\",\n"
          "  \"start_time\": \"2026-01-01T00:00:00.000Z\",\n  \"wall_ns\": 60000000000,\n"
          "  \"thread_count\": 1,\n  \"clock\": \"tsc\",\n"
          "  \"threads\": [ { \"tid\": 4242, \"name\": \"big\", \"calls\": 1 } ],\n  \"spans\": [\n",
          f);
}

static void write_profile(const char *dir, long nspans, char *path, size_t size)
{
    FILE *f = create(dir, "spans.json", path, size);
    profile_head(f);
    for (long i = 0; i < nspans; i++)
        span_entry(f, i, nspans, "", i == nspans - 1);
    fputs("  ],\n  \"anomalies\": { \"abandoned_frames\": 0, \"unmatched_exits\": 0, \"open_frames\": 0,"
          " \"overflow_calls\": 0 },\n  \"progress\": [ { \"name\": \"item\", \"file\": \"src/main.c\","
          " \"line\": 3, \"hits\": 1000000 } ]\n}\n",
          f);
    finish(f, path);
}

/* A profile of about MB megabytes whose last span lacks its closing brace: the whole file has to
 * be read before the error shows, the worst case for memory. */
static void write_malformed(const char *dir, long mb, char *path, size_t size)
{
    FILE *f = create(dir, "malformed.json", path, size);
    profile_head(f);
    const char *pad = "_with_a_long_name_as_cxx_programs_have_for_their_templates";
    long target = mb * 1000000L, i = 0;
    while (ftell(f) < target)
        span_entry(f, i++, 1000000, pad, 0);
    fputs("    { \"name\": \"cut\", \"file\": \"src/cut.c\", \"line\": 1, \"last_line\": 2,\n"
          "  ],\n  \"progress\": []\n}\n",
          f);
    finish(f, path);
}

static const double speedups[] = { 0, 0, 0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.75, 0.8, 0.9, 1 };

/* The same experiments twice: coz's text records in DIR/text/exps and its JSON Lines in
 * DIR/jsonl/exps (one name, so the tables, headers included, can be compared byte for byte). */
static void write_coz(const char *dir, long nspans, long nexp, char *tpath, char *jpath, size_t size)
{
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/text", dir);
    if (mkdir(sub, 0755) && errno != EEXIST)
        die("cannot create", sub);
    FILE *t = create(sub, "exps", tpath, size);
    snprintf(sub, sizeof sub, "%s/jsonl", dir);
    if (mkdir(sub, 0755) && errno != EEXIST)
        die("cannot create", sub);
    FILE *j = create(sub, "exps", jpath, size);
    long per_file = (nspans + NFILES - 1) / NFILES;
    fputs("startup\ttime=1000\n", t);
    fputs("{\"type\":\"startup\",\"time\":1000}\n", j);
    for (long e = 0; e < nexp; e++) {
        char file[64];
        file_name(file, sizeof file, (long)(rnd() % NFILES));
        /* a tenth of the lines lie past the file's last span: "(outside spans)" */
        long line = 1 + (long)(rnd() % (unsigned long long)(per_file * FN_LINES * 11 / 10 + 1));
        double s = speedups[rnd() % (sizeof speedups / sizeof *speedups)];
        unsigned long long dur = 400000000 + rnd() % 200000000, samples = rnd() % 500;
        /* at least 5 visits of every point, as current coz requires before it writes an experiment */
        unsigned long long delta = 5 + rnd() % 2000, arr = 10 + rnd() % 3000, dep = arr - rnd() % 5;
        unsigned long long diff = rnd() % 40;
        fprintf(t, "experiment\tselected=/home/u/proj/%s:%ld\tspeedup=%g\tduration=%llu\tselected-samples=%llu\n",
                file, line, s, dur, samples);
        fprintf(t, "throughput-point\tname=item\tdelta=%llu\n", delta);
        fprintf(t, "latency-point\tname=fn_1\tarrivals=%llu\tdepartures=%llu\tdifference=%llu\n", arr, dep, diff);
        fprintf(j, "{\"type\":\"experiment\",\"selected\":\"/home/u/proj/%s:%ld\",\"speedup\":%g,"
                   "\"duration\":%llu,\"selected_samples\":%llu}\n",
                file, line, s, dur, samples);
        fprintf(j, "{\"type\":\"throughput-point\",\"name\":\"item\",\"delta\":%llu}\n", delta);
        fprintf(j, "{\"type\":\"latency-point\",\"name\":\"fn_1\",\"arrivals\":%llu,\"departures\":%llu,"
                   "\"difference\":%llu}\n",
                arr, dep, diff);
    }
    fputs("runtime\ttime=60000001000\n", t);
    fputs("{\"type\":\"runtime\",\"time\":60000001000}\n", j);
    for (int k = 0; k < 100; k++) {
        fprintf(t, "samples\tlocation=/home/u/proj/src/d0/f%d.c:%d\tcount=%d\n", k, k + 1, 10 * k + 1);
        fprintf(j, "{\"type\":\"samples\",\"location\":\"/home/u/proj/src/d0/f%d.c:%d\",\"count\":%d}\n", k,
                k + 1, 10 * k + 1);
    }
    finish(t, tpath);
    finish(j, jpath);
}

struct run {
    int status;     /* exit status, or -1 when killed by a signal */
    double seconds, cpu;   /* wall, and user + system CPU (steadier on a busy machine) */
    long rss_kb;    /* peak resident set size */
};

/* Runs ARGV in directory CWD (NULL: this one) with stdout to OUT and stderr to ERR; measures
 * wall time and peak memory. */
static struct run run(char *const argv[], const char *cwd, const char *out, const char *err)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    pid_t pid = fork();
    if (pid < 0)
        die("cannot fork for", argv[0]);
    if (pid == 0) {
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644), e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 || (cwd && chdir(cwd)))
            _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) < 0)
        die("cannot wait for", argv[0]);
    clock_gettime(CLOCK_MONOTONIC, &b);
    struct run r = { WIFEXITED(st) ? WEXITSTATUS(st) : -1,
                     (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9,
                     (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6,
                     ru.ru_maxrss };
    return r;
}

static char *first_line(const char *path)
{
    static char buf[512];
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f) {
        if (fgets(buf, sizeof buf, f))
            buf[strcspn(buf, "\n")] = '\0';
        fclose(f);
    }
    return buf;
}

static int same_file(const char *a, const char *b)
{
    FILE *x = fopen(a, "rb"), *y = fopen(b, "rb");
    int same = x && y;
    while (same) {
        int c = getc(x), d = getc(y);
        if (c != d)
            same = 0;
        if (c == EOF || d == EOF)
            break;
    }
    if (x)
        fclose(x);
    if (y)
        fclose(y);
    return same;
}

static long file_mb(const char *path)
{
    struct stat st;
    return stat(path, &st) ? -1 : (long)(st.st_size / 1000000);
}

int main(int argc, char **argv)
{
    double bound = 0;
    if (argc > 2 && !strcmp(argv[1], "--check")) {
        bound = atof(argv[2]);
        argv += 2;
        argc -= 2;
    }
    if (argc != 6) {
        fputs("usage: toolbench [--check SECONDS] SPANPROF DIR SPANS EXPERIMENTS MALFORMED_MB\n", stderr);
        return 2;
    }
    char *tool = realpath(argv[1], NULL);
    if (!tool)
        die("cannot find", argv[1]);
    const char *dir = argv[2];
    long nspans = atol(argv[3]), nexp = atol(argv[4]), mb = atol(argv[5]);
    if (nspans < NFILES || nexp < 1 || mb < 1) {
        fprintf(stderr, "toolbench: need at least %d spans, 1 experiment, 1 MB\n", NFILES);
        return 2;
    }
    /* DIR and its parents, as mkdir -p */
    char *d = strdup(dir);
    for (char *sl = d + 1; d && *sl; sl++) {
        if (*sl != '/')
            continue;
        *sl = '\0';
        if (mkdir(d, 0755) && errno != EEXIST)
            die("cannot create", d);
        *sl = '/';
    }
    free(d);
    if (mkdir(dir, 0755) && errno != EEXIST)
        die("cannot create", dir);

    char prof[4096], bad[4096], coz[4096], jsonl[4096], merged[4096], tdir[4096], jdir[4096];
    write_profile(dir, nspans, prof, sizeof prof);
    write_coz(dir, nspans, nexp, coz, jsonl, sizeof coz);
    write_malformed(dir, mb, bad, sizeof bad);
    snprintf(merged, sizeof merged, "%s/merged.json", dir);
    snprintf(tdir, sizeof tdir, "%s/text", dir);
    snprintf(jdir, sizeof jdir, "%s/jsonl", dir);

    struct {
        const char *label, *cwd;
        char *argv[8];
        int want;             /* expected exit status */
    } cases[] = {
        { "report", NULL, { tool, "report", prof, NULL }, 0 },
        { "coz (text)", tdir, { tool, "coz", "exps", "../spans.json", NULL }, 0 },
        { "coz (JSON Lines)", jdir, { tool, "coz", "exps", "../spans.json", NULL }, 0 },
        { "merge (2 profiles)", NULL, { tool, "merge", "-o", merged, prof, prof, NULL }, 0 },
        { "report (malformed)", NULL, { tool, "report", bad, NULL }, 1 },
    };
    enum { NCASES = sizeof cases / sizeof *cases };
    char out[NCASES][4200], err[NCASES][4200];
    int failed = 0;

    printf("spanprof on large inputs: %ld spans (%ld MB), %ld coz experiments (%ld MB as text), "
           "a %ld MB JSON profile cut short near its end\n\n",
           nspans, file_mb(prof), nexp, file_mb(coz), file_mb(bad));
    printf("| command | seconds | CPU seconds | peak RSS | exit |\n|---|---:|---:|---:|---:|\n");
    for (int i = 0; i < NCASES; i++) {
        char *abs = realpath(dir, NULL);
        snprintf(out[i], sizeof out[i], "%s/out.%d", abs ? abs : dir, i);
        snprintf(err[i], sizeof err[i], "%s/err.%d", abs ? abs : dir, i);
        free(abs);
        struct run r = run(cases[i].argv, cases[i].cwd, out[i], err[i]);
        printf("| %s | %.2f | %.2f | %.0f MB | %d |\n", cases[i].label, r.seconds, r.cpu, r.rss_kb / 1024.0,
               r.status);
        fflush(stdout);
        if (bound > 0 && r.status != cases[i].want) {
            printf("FAIL: %s exited %d, not %d: %s\n", cases[i].label, r.status, cases[i].want, first_line(err[i]));
            failed = 1;
        }
        /* CPU time, not wall time: the test machine may be busy with other builds */
        if (bound > 0 && r.cpu > bound) {
            printf("FAIL: %s took %.2f CPU seconds (bound %.0f s)\n", cases[i].label, r.cpu, bound);
            failed = 1;
        }
    }
    printf("\nmalformed profile's message: %s\n", first_line(err[NCASES - 1]));
    int same = same_file(out[1], out[2]);
    printf("coz tables from the text and JSON Lines profiles: %s\n", same ? "identical" : "DIFFERENT");
    if (bound > 0 && !same) {
        printf("FAIL: compare %s and %s\n", out[1], out[2]);
        failed = 1;
    }
    return failed;
}
