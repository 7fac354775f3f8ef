/* record.c — `spanprof record`: runs a command so that every process it starts writes its profile
 * into one directory, then assembles what they wrote.
 *
 * The directory (default spanprof.out) holds:
 *     processes/PID.json, PID.folded      what each process wrote (PID.N.* for a later exec'd
 *     processes/PID.trace.json             image of the same process), by absolute path, so a
 *     processes/PID.alloc.folded           process that changes directory writes there too
 *     profile.json, profile.folded         their merge
 *     flamegraph.html                      the flame graph page (spanprof view)
 *     timeline.html                        --trace: the command's own process's timeline
 *     alloc.folded, alloc.html             --alloc: the memory flame graph
 *     profile.coz                          --coz: coz's causal profile
 * A directory holding an earlier run is replaced only with --force (one whose processes wrote
 * nothing is reused as it is); any other non-empty directory is never touched.
 *
 * The command's exit status is record's; a command killed by a signal kills record by the same
 * signal once the profile is assembled.  While the command runs, record ignores SIGINT and
 * SIGQUIT (the terminal sends them to the command too, as a shell's system() does) and passes
 * SIGTERM and SIGHUP on to it.  What record prints goes to stderr: the command's stdout stays
 * exactly the command's.  Record's own failures before the command runs exit with 125, a
 * command that cannot be run with 126 (found, not runnable) or 127 (not found), as env(1) does;
 * a command that exits 0 without any process writing a profile makes record exit 125 too.  DIR
 * may hold any character: the runtime's paths get its % doubled.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "tool.h"

#include "config/debuginfo.h"

enum { EXIT_RECORD_FAILED = 125, EXIT_CANNOT_RUN = 126, EXIT_NOT_FOUND = 127 };

const char record_usage[] =
    "usage: spanprof record [-o DIR] [--force] [--mode exact|sample|count] [--trace]\n"
    "                       [--alloc] [--coz] [--progress GLOB] [--limit N] [--] CMD [ARG...]\n";

const char record_help[] =
    "\n"
    "Runs CMD (built with spanprof) so that every process it starts writes its\n"
    "profile into DIR, then merges them: DIR/profile.json and DIR/profile.folded,\n"
    "the flame graph page DIR/flamegraph.html, and the top of `spanprof report` on\n"
    "stderr. Each process's own files are in DIR/processes. CMD's exit status is\n"
    "record's; when a signal ends CMD (Ctrl-C included), the profile is assembled\n"
    "and record ends by the same signal. Record's output goes to stderr only.\n"
    "Other SPANPROF_* variables in the environment apply as usual.\n"
    "\n"
    "Options:\n"
    "  -o, --output DIR   where the run goes (default: spanprof.out)\n"
    "  -f, --force        replace an earlier run in DIR (never another directory's files)\n"
    "  --mode MODE        exact (default: every span timed), sample (SPANPROF=sample:\n"
    "                     times and CPU sampled, calls exact) or count (calls only)\n"
    "  --trace            also a timeline of every span (SPANPROF_TRACE): DIR/timeline.html\n"
    "  --alloc            also allocations per span (the preload library libspanprof-alloc.so\n"
    "                     and SPANPROF_ALLOC=1): DIR/alloc.folded and DIR/alloc.html\n"
    "  --coz              run CMD under `coz run` (its debug info checked first) and print\n"
    "                     the causal table of DIR/profile.coz (spanprof coz)\n"
    "  --progress GLOB    with --coz: the spans whose exits are progress visits\n"
    "                     (SPANPROF_COZ_PROGRESS); needed when CMD marks none\n"
    "  --limit N          spans shown in the report (default: 10; 0: all)\n"
    "  -h, --help         show this text\n"
    "\n"
    "Exit status: CMD's; 125 when record fails before CMD runs, or when CMD exits 0\n"
    "but no process wrote a profile, 126 when CMD cannot be run, 127 when it is not\n"
    "found.\n";

#define DEFAULT_DIR "spanprof.out"
#define PROCESSES "processes"

/* The files an earlier run left beside processes/: what --force removes. */
static const char *const run_outputs[] = {
    "profile.json", "profile.folded", "flamegraph.html", "timeline.html",
    "alloc.folded", "alloc.html", "profile.coz",
};
#define COUNT(a) (sizeof a / sizeof *a)

struct record_opts {
    const char *dir, *mode, *progress;
    int force, trace, alloc, coz;
    long limit;
};

/* ---- the directory ---- */

/* Removes the entries of the directory DIR itself: never of one a symbolic link at DIR names
 * (a planted processes -> $HOME must not cost the user a file). */
static int remove_files_in(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && unlinkat(dirfd(d), de->d_name, 0))
            rc = -1;
    closedir(d);
    return rc;
}

/* Is DIR empty (but for "." and "..")?  -1 when it cannot be read. */
static int dir_is_empty(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *de;
    int empty = 1;
    while (empty && (de = readdir(d)))
        empty = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");
    closedir(d);
    return empty;
}

/* Makes DIR ready for a run and puts its absolute path in ABS.  0, or -1 after a message. */
static int prepare_dir(const struct record_opts *o, char *abs)
{
    struct stat st;
    char *processes = xasprintf("%s/" PROCESSES, o->dir);
    int rc = -1;
    if (stat(o->dir, &st) != 0) {
        if (errno != ENOENT || mkdir(o->dir, 0777) != 0) {
            fprintf(stderr, "spanprof: cannot create '%s': %s\n", o->dir, strerror(errno));
            goto out;
        }
    } else if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "spanprof: '%s' is not a directory: -o names the directory of the run\n", o->dir);
        goto out;
    } else if (lstat(processes, &st) == 0 && !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "spanprof: '%s' is not a directory: left alone; -o names another run "
                        "directory\n", processes);
        goto out;
    } else if (lstat(processes, &st) == 0) {
        /* An empty processes/: a run whose command did not run or wrote nothing — no loss. */
        if (!o->force && dir_is_empty(processes) != 1) {
            fprintf(stderr, "spanprof: '%s' holds an earlier run: --force replaces it, or -o names "
                            "another directory\n", o->dir);
            goto out;
        }
        int failed = remove_files_in(processes);
        for (size_t i = 0; i < COUNT(run_outputs); i++) {
            char *path = xasprintf("%s/%s", o->dir, run_outputs[i]);
            if (unlink(path) != 0 && errno != ENOENT)
                failed = -1;
            free(path);
        }
        if (failed) {
            fprintf(stderr, "spanprof: cannot remove the earlier run in '%s': %s\n", o->dir, strerror(errno));
            goto out;
        }
    } else {
        int empty = dir_is_empty(o->dir);
        if (empty != 1) {
            if (empty < 0)
                fprintf(stderr, "spanprof: cannot read '%s': %s\n", o->dir, strerror(errno));
            else
                fprintf(stderr, "spanprof: '%s' is not empty and holds no earlier run: -o names a "
                                "new or empty directory\n", o->dir);
            goto out;
        }
    }
    if (mkdir(processes, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "spanprof: cannot create '%s': %s\n", processes, strerror(errno));
        goto out;
    }
    if (!realpath(o->dir, abs)) {
        fprintf(stderr, "spanprof: cannot resolve '%s': %s\n", o->dir, strerror(errno));
        goto out;
    }
    rc = 0;
out:
    free(processes);
    return rc;
}

/* ---- the environment ---- */

/* DIR/NAME into OUT when it fits and can be read. */
static int readable_at(char *out, size_t size, const char *dir, const char *name)
{
    int n = snprintf(out, size, "%s/%s", dir, name);
    return n > 0 && (size_t)n < size && access(out, R_OK) == 0 ? 0 : -1;
}

/* The preload library that records allocations: beside this executable (the build tree), in
 * ../lib from it (an installed prefix), or in the configured library directory. */
static int find_alloc_library(char *out, size_t size)
{
    static const char name[] = "libspanprof-alloc.so";
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = n > 0 ? (exe[n] = 0, strrchr(exe, '/')) : NULL;
    if (slash) {
        *slash = 0;
        if (readable_at(out, size, exe, name) == 0 ||
            (readable_at(out, size, exe, "../lib/libspanprof-alloc.so") == 0 && realpath(out, exe) &&
             readable_at(out, size, "", exe + 1) == 0))
            return 0;
    }
    return readable_at(out, size, SPANPROF_LIBDIR, name);
}

static void set(const char *name, const char *value)
{
    if (setenv(name, value, 1) != 0) {
        perror("spanprof: setenv");
        exit(EXIT_RECORD_FAILED);
    }
}

/* NAME=ABS/processes/FILE for the runtime, which expands %p and %% in it: every % of ABS (a
 * directory named "pct%p") doubled, so the directory is the one the user named. */
static void set_path(const char *name, const char *abs, const char *file)
{
    size_t percents = 0;
    for (const char *c = abs; *c; c++)
        percents += *c == '%';
    char *escaped = xmalloc(strlen(abs) + percents + 1), *e = escaped;
    for (const char *c = abs; *c; c++) {
        *e++ = *c;
        if (*c == '%')
            *e++ = '%';
    }
    *e = '\0';
    char *value = xasprintf("%s/" PROCESSES "/%s", escaped, file);
    set(name, value);
    free(value);
    free(escaped);
}

static int set_environment(const struct record_opts *o, const char *abs)
{
    static const char *const modes[][2] = {{"exact", "1"}, {"sample", "sample"}, {"count", "count"}};
    for (size_t i = 0; i < COUNT(modes); i++)
        if (!strcmp(o->mode, modes[i][0]))
            set("SPANPROF", modes[i][1]);
    set_path("SPANPROF_JSON", abs, "%p.json");
    set_path("SPANPROF_FOLDED", abs, "%p.folded");
    if (o->trace)
        set_path("SPANPROF_TRACE", abs, "%p.trace.json");
    else
        unsetenv("SPANPROF_TRACE");
    if (o->alloc) {
        char lib[PATH_MAX];
        if (find_alloc_library(lib, sizeof lib)) {
            fprintf(stderr, "spanprof: --alloc needs libspanprof-alloc.so, not found beside spanprof "
                            "nor in %s\n", SPANPROF_LIBDIR);
            return -1;
        }
        const char *preload = getenv("LD_PRELOAD");
        char *value = preload && *preload ? xasprintf("%s:%s", lib, preload) : xstrdup(lib);
        set("LD_PRELOAD", value);
        free(value);
        set("SPANPROF_ALLOC", "1");
        set("SPANPROF_ALLOC_STACKS", "1");
        set_path("SPANPROF_ALLOC_FOLDED", abs, "%p.alloc.folded");
    }
    if (o->progress)
        set("SPANPROF_COZ_PROGRESS", o->progress);
    set("SPANPROF_QUIET", "1"); /* record names the files, once, for every process */
    return 0;
}

/* ---- coz ---- */

/* NAME as execvp would find it, into OUT; -1 when it is nowhere on PATH. */
static int which(const char *name, char *out, size_t size)
{
    if (strchr(name, '/')) {
        snprintf(out, size, "%s", name);
        return access(out, X_OK);
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        size_t len = strcspn(path, ":");
        snprintf(out, size, "%.*s%s%s", (int)len, path, len ? "/" : "", name);
        if (access(out, X_OK) == 0)
            return 0;
        path += len + (path[len] == ':');
    }
    return -1;
}

/* Checks what coz needs; ARGV gets "coz run -o DIR/profile.coz ---" in front of CMD. */
static char **coz_command(const char *abs, char **cmd, int ncmd)
{
    char coz[PATH_MAX], exe[PATH_MAX];
    if (which("coz", coz, sizeof coz)) {
        fprintf(stderr, "spanprof: --coz needs coz on PATH (Debian: apt-get install coz-profiler)\n");
        return NULL;
    }
    const char *problem = which(cmd[0], exe, sizeof exe) ? NULL : spanprof__debug_info_problem(exe);
    if (problem) {
        fprintf(stderr, "spanprof: coz cannot use the debug info of '%s' (%s): rebuild it with "
                        SPANPROF_COZ_DEBUG_FLAGS "\n", cmd[0], problem);
        return NULL;
    }
    char **argv = xmalloc((size_t)(ncmd + 6) * sizeof *argv);
    argv[0] = xstrdup(coz);
    argv[1] = xstrdup("run");
    argv[2] = xstrdup("-o");
    argv[3] = xasprintf("%s/profile.coz", abs);
    argv[4] = xstrdup("---");
    for (int i = 0; i < ncmd; i++)
        argv[5 + i] = cmd[i];
    argv[5 + ncmd] = NULL;
    return argv;
}

/* ---- running the command ---- */

static volatile sig_atomic_t child_pid;

static void pass_on(int sig)
{
    if (child_pid > 0)
        kill((pid_t)child_pid, sig);
}

static const int ignored_signals[] = {SIGINT, SIGQUIT};
static const int passed_signals[] = {SIGTERM, SIGHUP};

/* Runs ARGV; *STATUS gets its wait status, *PID its process id.  -1 with *STATUS an exit
 * status when it could not be started (a message printed). */
static int run_command(char **argv, int *status, pid_t *pid_out)
{
    int report[2]; /* the child writes exec's errno here; end of file means it ran */
    if (pipe2(report, O_CLOEXEC) != 0) {
        perror("spanprof: pipe");
        *status = EXIT_RECORD_FAILED;
        return -1;
    }
    struct sigaction ign = {.sa_handler = SIG_IGN}, pass = {.sa_handler = pass_on};
    struct sigaction old_ign[COUNT(ignored_signals)], old_pass[COUNT(passed_signals)];
    sigset_t block, old_mask;
    sigemptyset(&block);
    for (size_t i = 0; i < COUNT(ignored_signals); i++)
        sigaddset(&block, ignored_signals[i]);
    for (size_t i = 0; i < COUNT(passed_signals); i++)
        sigaddset(&block, passed_signals[i]);
    sigprocmask(SIG_BLOCK, &block, &old_mask);
    for (size_t i = 0; i < COUNT(ignored_signals); i++)
        sigaction(ignored_signals[i], &ign, &old_ign[i]);
    for (size_t i = 0; i < COUNT(passed_signals); i++)
        sigaction(passed_signals[i], &pass, &old_pass[i]);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        for (size_t i = 0; i < COUNT(ignored_signals); i++)
            sigaction(ignored_signals[i], &old_ign[i], NULL);
        for (size_t i = 0; i < COUNT(passed_signals); i++)
            sigaction(passed_signals[i], &old_pass[i], NULL);
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        close(report[0]);
        execvp(argv[0], argv);
        int err = errno;
        if (write(report[1], &err, sizeof err) < 0)
            _exit(EXIT_CANNOT_RUN);
        _exit(err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN);
    }
    int fork_errno = errno;
    if (pid > 0)
        child_pid = *pid_out = pid;
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    close(report[1]);
    if (pid < 0) {
        close(report[0]);
        fprintf(stderr, "spanprof: cannot start '%s': %s\n", argv[0], strerror(fork_errno));
        *status = EXIT_RECORD_FAILED;
        return -1;
    }
    int exec_errno = 0;
    ssize_t got;
    while ((got = read(report[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR)
        ;
    close(report[0]);
    while (waitpid(pid, status, 0) < 0)
        if (errno != EINTR) {
            perror("spanprof: waitpid");
            *status = EXIT_RECORD_FAILED;
            return -1;
        }
    child_pid = 0;
    for (size_t i = 0; i < COUNT(passed_signals); i++)
        sigaction(passed_signals[i], &old_pass[i], NULL);
    /* SIGINT and SIGQUIT stay ignored while the profile is assembled: a second Ctrl-C must not
     * lose what the first one's run wrote; they are restored before record exits by one. */
    if (got == (ssize_t)sizeof exec_errno) {
        fprintf(stderr, "spanprof: cannot run '%s': %s\n", argv[0], strerror(exec_errno));
        *status = exec_errno == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
        return -1;
    }
    return 0;
}

/* ---- assembling the profile ---- */

/* The files in DIR/processes whose names end with SUFFIX and not with any of NOT (a folded
 * file's suffix is also the end of an allocation folded file's), in name order. */
static char **process_files(const char *abs, const char *suffix, const char *not, size_t *n)
{
    char *dir = xasprintf("%s/" PROCESSES, abs);
    char **v = NULL;
    size_t cap = 0;
    *n = 0;
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *de;
        while ((de = readdir(d))) {
            if (de->d_name[0] == '.' || !has_suffix(de->d_name, suffix) ||
                (not && has_suffix(de->d_name, not)))
                continue;
            if (*n == cap)
                v = xrealloc(v, (cap = cap ? 2 * cap : 16) * sizeof *v);
            v[(*n)++] = xasprintf("%s/%s", dir, de->d_name);
        }
        closedir(d);
    }
    free(dir);
    if (*n)
        qsort(v, *n, sizeof *v, cmp_strp);
    return v;
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* FROM copied whole to TO.  0, or -1 after a message. */
static int copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb");
    if (!in) {
        fprintf(stderr, "spanprof: cannot read '%s': %s\n", from, strerror(errno));
        return -1;
    }
    struct tool_output o;
    FILE *out = output_open(&o, to);
    int failed = !out;
    char buf[65536];
    size_t got;
    while (out && (got = fread(buf, 1, sizeof buf, in)) > 0)
        failed |= fwrite(buf, 1, got, out) != got;
    failed |= ferror(in);
    fclose(in);
    return out && output_close(&o, failed) == 0 && !failed ? 0 : -1;
}

/* Merges the processes' files ending in SUFFIX into DIR/OUT (one process's is copied: its
 * run information stays its own); 1 written, 0 none, -1 failed. */
static int merge_kind(const char *abs, const char *suffix, const char *not, const char *out)
{
    size_t n;
    char **files = process_files(abs, suffix, not, &n);
    if (!n)
        return 0;
    char *path = xasprintf("%s/%s", abs, out);
    const char *kind;
    int rc = (n == 1 ? copy_file(files[0], path) : merge_files(path, files, n, &kind)) ? -1 : 1;
    free(path);
    free_list(files, n);
    return rc;
}

static int page(const char *abs, const char *from, const char *out, const char *unit)
{
    char *in = xasprintf("%s/%s", abs, from), *html = xasprintf("%s/%s", abs, out);
    int rc = view_page(in, html, unit);
    free(in);
    free(html);
    return rc;
}

/* The timeline of the command's own process (PID), else of the first process that wrote one. */
static int timeline(const char *abs, long pid)
{
    size_t n;
    char **traces = process_files(abs, ".trace.json", NULL, &n);
    if (!n)
        return 0;
    char *own = xasprintf("%s/" PROCESSES "/%ld.trace.json", abs, pid);
    const char *chosen = traces[0];
    for (size_t i = 0; i < n; i++)
        if (!strcmp(traces[i], own))
            chosen = own;
    char *html = xasprintf("%s/timeline.html", abs);
    int rc = view_page(chosen, html, NULL);
    free(html);
    free(own);
    free_list(traces, n);
    return rc ? -1 : 1;
}

/* The causal table, as `spanprof coz` prints it; PROGRESS: --progress's value, or NULL. */
static void causal_table(const char *abs, const struct sp_profile *p, const char *progress)
{
    char *path = xasprintf("%s/profile.coz", abs);
    struct coz_profile c;
    if (access(path, F_OK) != 0)
        fprintf(stderr, "spanprof: coz wrote no profile (%s)\n", path);
    else if (coz_profile_load(path, &c) == 0) {
        struct causal_opts co = {NULL, NULL, CSORT_AT100};
        putchar('\n');
        cmd_causal(&c, p, &co);
        size_t throughput = 0;
        for (size_t i = 0; i < c.npoints; i++)
            throughput += c.points[i].kind == COZ_THROUGHPUT;
        if (!throughput && !progress)
            printf("\ncoz saw no progress point: with --progress GLOB the exits of the matching "
                   "spans are one (the span that finishes a unit of work: a request, a file)\n");
        else if (!throughput)
            printf("\ncoz saw no progress point: no span that ran matches --progress %s.  A "
                   "function too small for a span of its own (the plugin's min-size) has none: "
                   "rebuild with -fplugin-arg-spanplugin-progress=%s, which makes a progress "
                   "point of a function of any size\n", progress, progress);
    }
    free(path);
}

/* What the user types next: the directory as they named it. */
static void closing_line(const struct record_opts *o, size_t nprocs, int have_json, int have_page,
                         int have_timeline, int have_alloc)
{
    printf("\nspanprof: %zu %s recorded in %s/: %sprofile.folded%s%s%s%s\n", nprocs,
           nprocs == 1 ? "process" : "processes", o->dir, have_json ? "profile.json, " : "", have_page ? ", flamegraph.html" : "",
           have_timeline ? ", timeline.html" : "", have_alloc ? ", alloc.folded, alloc.html" : "",
           o->coz ? ", profile.coz" : "");
    if (have_page)
        printf("next: spanprof report %s | open %s/flamegraph.html in a browser | "
               "spanprof diff %s OTHER-RUN\n", o->dir, o->dir, o->dir);
    else
        printf("next: spanprof report %s | spanprof diff %s OTHER-RUN\n", o->dir, o->dir);
}

/* Assembles the run in ABS; -1 when no process wrote a profile (said on stderr: why, as far as
 * STATUS, how the command ended, tells). */
static int assemble(const struct record_opts *o, const char *abs, long pid, int status)
{
    /* A process that crashed wrote its folded stacks only (the crash writer's one file). */
    size_t nprocs, nfolded;
    char **json = process_files(abs, ".json", ".trace.json", &nprocs);
    char **folded = process_files(abs, ".folded", ".alloc.folded", &nfolded);
    free_list(json, nprocs);
    free_list(folded, nfolded);
    if (!nprocs && !nfolded) {
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
            fprintf(stderr, "spanprof: no process wrote a profile into %s/" PROCESSES ": the "
                            "command was killed by SIGKILL, which no process can write after\n",
                    o->dir);
        else
            fprintf(stderr, "spanprof: no process wrote a profile into %s/" PROCESSES ": is the "
                            "program built and linked with spanprof (`pkg-config --cflags --libs "
                            "spanprof`)?\n", o->dir);
        if (o->coz)
            causal_table(abs, &(struct sp_profile){0}, o->progress);
        return -1;
    }
    if (merge_kind(abs, ".json", ".trace.json", "profile.json") < 0 ||
        merge_kind(abs, ".folded", ".alloc.folded", "profile.folded") < 0)
        return 0;
    int have_page = page(abs, "profile.folded", "flamegraph.html", "nanoseconds") == 0;
    int have_timeline = o->trace && timeline(abs, pid) > 0;
    int have_alloc = o->alloc && merge_kind(abs, ".alloc.folded", NULL, "alloc.folded") > 0 &&
                     page(abs, "alloc.folded", "alloc.html", "bytes") == 0;

    char *path = xasprintf("%s/%s", abs, nprocs ? "profile.json" : "profile.folded");
    struct sp_profile p;
    if (sp_profile_load_any(path, &p) == 0) {
        putchar('\n');
        cmd_report(&p, SORT_SELF, o->limit);
        if (o->coz)
            causal_table(abs, &p, o->progress);
        sp_profile_free(&p);
    }
    free(path);
    closing_line(o, nprocs > nfolded ? nprocs : nfolded, nprocs > 0, have_page, have_timeline, have_alloc);
    return 0;
}

/* Ends record the way the command ended. */
static int pass_status(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (!WIFSIGNALED(status))
        return EXIT_RECORD_FAILED;
    int sig = WTERMSIG(status);
    struct rlimit no_core = {0, 0}; /* the command dumped its own core where it would */
    setrlimit(RLIMIT_CORE, &no_core);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    fflush(NULL);
    raise(sig);
    return 128 + sig; /* a signal that does not end a process */
}

/* ---- the command line ---- */

/* A bad command line: 125, as record's other failures, not 2, which CMD may well return. */
static int usage(const char *fmt, const char *arg)
{
    tool_usage_error(fmt, arg);
    return EXIT_RECORD_FAILED;
}

int run_record(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"force", no_argument, NULL, 'f'},
        {"mode", required_argument, NULL, 'm'},   {"trace", no_argument, NULL, 't'},
        {"alloc", no_argument, NULL, 'a'},        {"coz", no_argument, NULL, 'c'},
        {"progress", required_argument, NULL, 'p'}, {"limit", required_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    struct record_opts o = {.dir = DEFAULT_DIR, .mode = "exact", .limit = 10};
    int ch;
    /* '+': options end at CMD, whose own options are its own. */
    while ((ch = getopt_long(argc, argv, "+:ho:f", longopts, NULL)) != -1) {
        switch (ch) {
        case 'o': o.dir = optarg; break;
        case 'f': o.force = 1; break;
        case 'm':
            if (strcmp(optarg, "exact") && strcmp(optarg, "sample") && strcmp(optarg, "count"))
                return usage("--mode must be exact, sample or count, not '%s'", optarg);
            o.mode = optarg;
            break;
        case 't': o.trace = 1; break;
        case 'a': o.alloc = 1; break;
        case 'c': o.coz = 1; break;
        case 'p': o.progress = optarg; break;
        case 'n':
            if (tool_parse_limit(optarg, &o.limit))
                return usage("--limit needs a number of spans, not '%s'", optarg);
            break;
        case 'h':
            fputs(record_usage, stdout);
            fputs(record_help, stdout);
            return 0;
        default:
            tool_getopt_error(ch, argv);
            return EXIT_RECORD_FAILED;
        }
    }
    if (optind >= argc)
        return usage("%s", "record needs a command to run");
    if (o.progress && !o.coz)
        return usage("%s", "--progress chooses coz's progress points: it goes with --coz");
    if (!*o.dir)
        return usage("%s", "-o needs a directory");

    char abs[PATH_MAX];
    char **cmd = argv + optind, **run = cmd;
    if (prepare_dir(&o, abs) || set_environment(&o, abs))
        return EXIT_RECORD_FAILED;
    if (o.coz && !(run = coz_command(abs, cmd, argc - optind)))
        return EXIT_RECORD_FAILED;
    int status;
    pid_t pid;
    if (run_command(run, &status, &pid))
        return status;
    /* Everything record prints from here goes to stderr (the reports print on stdout): the
     * command's standard output stays the command's alone. */
    fflush(stdout);
    if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
        return pass_status(status);
    int assembled = assemble(&o, abs, (long)pid, status);
    fflush(stdout);
    /* A command that succeeded but left no profile is record's failure, not a success. */
    if (assembled < 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return EXIT_RECORD_FAILED;
    return pass_status(status);
}
