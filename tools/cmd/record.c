/* record.c — `spanprof record`: runs a command so that every process it starts writes its profile
 * into one directory, then assembles what they wrote.
 *
 * The directory (default spanprof.out) holds:
 *     processes/PID.json, PID.folded      what each process wrote (PID.N.* for a later exec'd
 *     processes/PID.trace.json             image of the same process), by absolute path, so a
 *     processes/PID.alloc.folded           process that changes directory writes there too
 *     profile.json, profile.folded         their merge
 *     flamegraph.html                      the flame graph page (spanprof view)
 *     trace.json, timeline.html            --trace: every process's trace in one (a track per
 *                                          process, on one time line), and its page
 *     alloc.folded, alloc.html             --alloc: the memory flame graph
 *     profile.coz                          --coz: coz's causal profile
 *     live/                                --serve: the processes' sockets (SPANPROF_LIVE),
 *                                          removed when the run ends
 * A directory holding an earlier run is replaced only with --force (one whose processes wrote
 * nothing and that holds no output is reused as it is), and then only those files are removed.
 * A directory holding anything else, or that is not the caller's own (a link, another user's,
 * writable by others), is refused and never touched, --force or not (see "the directory").
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
#include <inttypes.h>
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

#include "cmd/cmd.h"

#include "common/debuginfo.h"
#include "common/duration.h"

enum { EXIT_RECORD_FAILED = 125, EXIT_CANNOT_RUN = 126, EXIT_NOT_FOUND = 127 };

const char record_usage[] =
    "usage: spanprof record [-o DIR] [--force] [--mode exact|sample|count] [--trace]\n"
    "                       [--alloc] [--coz] [--progress GLOB] [--limit N]\n"
    "                       [--serve ADDR:PORT] [--slow SPAN:DURATION] [--flight SECONDS]\n"
    "                       [--] CMD [ARG...]\n";

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
    "DIR and DIR/processes must be the caller's own directories (not links, not\n"
    "writable by others) holding only the files record writes; any other is\n"
    "refused whole, with or without --force.\n"
    "\n"
    "Options:\n"
    "  -o, --output DIR   where the run goes (default: spanprof.out)\n"
    "  -f, --force        replace an earlier run in DIR: only its files are removed\n"
    "  --mode MODE        exact (default: every span timed), sample (SPANPROF=sample:\n"
    "                     times and CPU sampled, calls exact) or count (calls only)\n"
    "  --trace            also a timeline of every span (SPANPROF_TRACE): DIR/trace.json\n"
    "                     (every process a track, on one time line) and DIR/timeline.html\n"
    "  --alloc            also allocations per span (the preload library libspanprof-alloc.so\n"
    "                     and SPANPROF_ALLOC=1): DIR/alloc.folded and DIR/alloc.html\n"
    "  --coz              run CMD under `coz run` (its debug info checked first) and print\n"
    "                     the causal table of DIR/profile.coz (spanprof coz)\n"
    "  --progress GLOB    with --coz: the spans whose exits are progress visits\n"
    "                     (SPANPROF_COZ_PROGRESS); needed when CMD marks none\n"
    "  --limit N          spans shown in the report (default: 10; 0: all)\n"
    "  --serve ADDR:PORT  while CMD runs, serve its processes' live profiles there\n"
    "                     (`spanprof serve`: /metrics, /debug/pprof/profile), their\n"
    "                     sockets in DIR/live (SPANPROF_LIVE)\n"
    "  --slow SPAN:DURATION\n"
    "                     the flight recorder (SPANPROF_FLIGHT, SPANPROF_SLOW): a call of\n"
    "                     SPAN (a glob) lasting at least DURATION (5ms; ns, us, ms, s)\n"
    "                     writes a capture of every thread's last seconds into DIR/slow;\n"
    "                     may be repeated; the captures are listed at the end\n"
    "  --flight SECONDS   with --slow: the seconds a capture covers (default: 1)\n"
    "  -h, --help         show this text\n"
    "\n"
    "Exit status: CMD's; 125 when record fails before CMD runs, or when CMD exits 0\n"
    "but no process wrote a profile, 126 when CMD cannot be run, 127 when it is not\n"
    "found.\n";

#define DEFAULT_DIR "spanprof.out"
#define PROCESSES "processes"
#define LIVE "live"
#define SLOW "slow" /* --slow: the flight recorder's captures (SPANPROF_SLOW_DIR) */

/* The files an earlier run left beside processes/: what --force removes. */
static const char *const run_outputs[] = {
    "profile.json", "profile.folded", "flamegraph.html", "trace.json", "timeline.html",
    "alloc.folded", "alloc.html", "profile.coz",
};
/* What the runtime writes into processes/ for the patterns set_environment gives it:
 * "%p" SUFFIX, and "PID.N" SUFFIX for a later image of the same process (the runtime's
 * report/output.c). */
static const char *const process_suffixes[] = {".json", ".folded", ".trace.json", ".alloc.folded"};
#define COUNT(a) (sizeof a / sizeof *a)

struct record_opts {
    const char *dir, *mode, *progress, *serve, *flight;
    char *slow; /* --slow rules, comma-separated; NULL: none */
    int force, trace, alloc, coz;
    long limit;
    int dir_fd; /* DIR as checked by prepare_dir: what record reads and removes goes through it */
};

/* ---- the directory ----
 *
 * Record removes files, so it must know that the directory is the caller's and that what it
 * removes is its own: DIR and DIR/processes must be real directories (not links), owned by the
 * effective user and writable by nobody else, and every entry in them must be a name record or
 * the runtime writes.  A directory that fails any of this is refused whole, --force or not: a
 * user's file among the profiles, or a processes/ that another user made in /tmp, is not
 * record's to remove or to read.  The checks are made on open descriptors and the removals go
 * through them (unlinkat), so a directory swapped after the check is not the one touched. */

static int all_digits(const char *s, size_t n)
{
    if (!n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

/* A process's file: PID SUFFIX or PID.N SUFFIX. */
static int is_process_name(const char *name)
{
    size_t pid = strspn(name, "0123456789");
    const char *rest = name + pid;
    if (!pid)
        return 0;
    if (rest[0] == '.' && rest[1] >= '0' && rest[1] <= '9')
        rest += 1 + strspn(rest + 1, "0123456789");
    for (size_t i = 0; i < COUNT(process_suffixes); i++)
        if (!strcmp(rest, process_suffixes[i]))
            return 1;
    return 0;
}

/* A capture of the flight recorder (lifecycle/flight.c): NAME.PID.TIME.trace.json. */
static int is_capture_name(const char *name)
{
    size_t len = strlen(name);
    return name[0] != '.' && len > 11 && !strcmp(name + len - 11, ".trace.json");
}

/* The run's subdirectories, checked on their own. */
static int is_subdir_name(const char *name)
{
    return !strcmp(name, PROCESSES) || !strcmp(name, SLOW);
}

static int is_output_name(const char *name)
{
    for (size_t i = 0; i < COUNT(run_outputs); i++)
        if (!strcmp(name, run_outputs[i]))
            return 1;
    return 0;
}

/* The temporary file of a writer killed before it renamed it (outfile.c):
 * "." NAME "." PID ".tmp", or ".crash.tmp" for the crash writer, NAME one that OWN accepts. */
static int is_temp_of(const char *name, int (*own)(const char *))
{
    size_t len = strlen(name);
    if (name[0] != '.' || len < 6 || strcmp(name + len - 4, ".tmp"))
        return 0;
    len -= 4;
    if (len > 6 && !strncmp(name + len - 6, ".crash", 6))
        len -= 6;
    size_t pid = 0;
    while (pid < len && name[len - 1 - pid] >= '0' && name[len - 1 - pid] <= '9')
        pid++;
    if (!all_digits(name + len - pid, pid) || len - pid < 3 || name[len - pid - 1] != '.')
        return 0;
    char *base = xasprintf("%.*s", (int)(len - pid - 2), name + 1);
    int yes = own(base);
    free(base);
    return yes;
}

static int is_own(const char *name, int (*own)(const char *))
{
    return own(name) || is_temp_of(name, own);
}

/* Opens NAME (relative to AT) as a directory of the run, SHOWN being its name in messages:
 * its descriptor; -2 (errno ENOENT) when there is nothing there; -1 after a message when it is
 * no directory record may use. */
static int open_run_dir(int at, const char *name, const char *shown)
{
    struct stat st;
    if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT)
            return -2;
        fprintf(stderr, "spanprof: cannot use '%s': %s\n", shown, strerror(errno));
        return -1;
    }
    if (S_ISLNK(st.st_mode)) {
        fprintf(stderr, "spanprof: '%s' is a symbolic link: left alone; -o names a directory of "
                        "the run itself\n", shown);
        return -1;
    }
    int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (errno == ENOTDIR)
            fprintf(stderr, "spanprof: '%s' is not a directory: left alone; -o names the "
                            "directory of the run\n", shown);
        else
            fprintf(stderr, "spanprof: cannot open '%s': %s\n", shown, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    /* What was opened is judged, not what the name showed a moment before. */
    const char *why = NULL;
    if (!S_ISDIR(st.st_mode))
        why = "is not a directory";
    else if (st.st_uid != geteuid())
        why = "belongs to another user";
    else if (st.st_mode & (S_IWGRP | S_IWOTH))
        why = "is writable by other users";
    if (why) {
        fprintf(stderr, "spanprof: '%s' %s: left alone; a run's directory is the caller's own "
                        "and writable by the caller only\n", shown, why);
        close(fd);
        return -1;
    }
    return fd;
}

/* A new descriptor on FD's directory, read from its start. */
static DIR *read_dir(int fd)
{
    int again = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = again >= 0 ? fdopendir(again) : NULL;
    if (!d && again >= 0)
        close(again);
    return d;
}

static int is_dot(const char *name)
{
    return !strcmp(name, ".") || !strcmp(name, "..");
}

/* Checks that every entry of FD (SHOWN in messages, in the run directory RUN) is a regular file
 * that OWN names, but for SKIP (processes/ beside the outputs); *N counts them.  0, or -1 after
 * a message naming the first entry that is not record's. */
static int check_entries(int fd, const char *shown, const char *run, int (*own)(const char *),
                         const char *skip, size_t *n)
{
    DIR *d = read_dir(fd);
    if (!d) {
        fprintf(stderr, "spanprof: cannot read '%s': %s\n", shown, strerror(errno));
        return -1;
    }
    struct dirent *de;
    int rc = 0;
    struct stat st;
    *n = 0;
    while (rc == 0 && (de = readdir(d))) {
        if (is_dot(de->d_name) || (skip && is_subdir_name(de->d_name)))
            continue;
        if (!is_own(de->d_name, own) ||
            fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) {
            fprintf(stderr, "spanprof: '%s/%s' is not a file that record writes: '%s' is left "
                            "alone; -o names a new or empty directory, or an earlier run's\n",
                    shown, de->d_name, run);
            rc = -1;
        }
        ++*n;
    }
    closedir(d);
    return rc;
}

/* Removes the regular files of FD that OWN names; anything else stays.  0, or -1 (errno). */
static int remove_own(int fd, int (*own)(const char *))
{
    DIR *d = read_dir(fd);
    if (!d)
        return -1;
    struct dirent *de;
    struct stat st;
    int rc = 0, err = 0;
    while ((de = readdir(d)))
        if (!is_dot(de->d_name) && is_own(de->d_name, own) &&
            fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
            unlinkat(fd, de->d_name, 0) != 0)
            rc = -1, err = errno;
    closedir(d);
    errno = err;
    return rc;
}

/* Is FD the directory that PATH names now? */
static int same_dir(int fd, const char *path)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* What the runtime and serve leave in live/ (live/protocol.h): PID.sock, PID.START.final and
 * .PID.START.tmp. */
static int is_live_name(const char *name)
{
    const char *p = name + (name[0] == '.');
    size_t pid = strspn(p, "0123456789");
    if (!pid)
        return 0;
    p += pid;
    if (name[0] != '.' && !strcmp(p, ".sock"))
        return 1;
    if (p[0] != '.' || !strspn(p + 1, "0123456789"))
        return 0;
    p += 1 + strspn(p + 1, "0123456789");
    return !strcmp(p, name[0] == '.' ? ".tmp" : ".final");
}

/* Removes DIR/live (FD: DIR) when it is a directory of the caller's holding only what the
 * runtime and serve leave there; anything else is left as it is (and check_entries refuses it). */
static void remove_live(int fd, const char *dir)
{
    char *shown = xasprintf("%s/" LIVE, dir);
    int lfd = open_run_dir(fd, LIVE, shown);
    free(shown);
    if (lfd < 0)
        return;
    DIR *d = read_dir(lfd);
    struct dirent *de;
    struct stat st;
    while (d && (de = readdir(d)))
        if (!is_dot(de->d_name) && is_live_name(de->d_name) &&
            fstatat(lfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            (S_ISREG(st.st_mode) || S_ISSOCK(st.st_mode)))
            unlinkat(lfd, de->d_name, 0);
    if (d)
        closedir(d);
    else
        close(lfd);
    unlinkat(fd, LIVE, AT_REMOVEDIR);
}

/* Makes DIR ready for a run: O->dir_fd gets its descriptor, ABS its absolute path.  0, or -1
 * after a message. */
static int prepare_dir(struct record_opts *o, char *abs)
{
    /* "run/" would name what a link "run" points to, whatever O_NOFOLLOW says. */
    char *dir = xstrdup(o->dir);
    for (size_t len = strlen(dir); len > 1 && dir[len - 1] == '/'; len--)
        dir[len - 1] = '\0';
    char *processes = xasprintf("%s/" PROCESSES, dir);
    int fd = open_run_dir(AT_FDCWD, dir, dir), pfd = -1, rc = -1;
    if (fd == -2) {
        /* 0755: the umask may take more away, never leave it writable by others. */
        if (mkdir(dir, 0755) != 0) {
            fprintf(stderr, "spanprof: cannot create '%s': %s\n", dir, strerror(errno));
            goto out;
        }
        fd = open_run_dir(AT_FDCWD, dir, dir);
    }
    if (fd < 0)
        goto out;
    remove_live(fd, dir);   /* an earlier --serve run's, left by a record that was killed */
    pfd = open_run_dir(fd, PROCESSES, processes);
    if (pfd == -1)
        goto out;
    size_t outputs, files = 0;
    if (pfd == -2) {
        /* No processes/: no run of record's, whatever the other names. */
        if (check_entries(fd, dir, dir, is_output_name, NULL, &outputs))
            goto out;
        if (outputs) {
            fprintf(stderr, "spanprof: '%s' holds no processes/ and so no earlier run: left "
                            "alone; -o names a new or empty directory\n", dir);
            goto out;
        }
    } else if (check_entries(fd, dir, dir, is_output_name, PROCESSES, &outputs) ||
               check_entries(pfd, processes, dir, is_process_name, NULL, &files))
        goto out;
    /* The captures of an earlier --slow run, in DIR/slow: the runtime's files only. */
    char *slow_shown = xasprintf("%s/" SLOW, dir);
    int sfd = pfd >= 0 ? open_run_dir(fd, SLOW, slow_shown) : -2;
    size_t captures = 0;
    int slow_bad = sfd == -1 || (sfd >= 0 && check_entries(sfd, slow_shown, dir, is_capture_name,
                                                            NULL, &captures));
    free(slow_shown);
    if (slow_bad) {
        if (sfd >= 0)
            close(sfd);
        goto out;
    }
    files += captures;
    /* An empty processes/ alone is a run whose command wrote nothing: no loss to reuse it.
     * Outputs beside it are another matter, even when no process wrote (--coz's profile.coz). */
    if (files + outputs) {
        if (!o->force) {
            fprintf(stderr, "spanprof: '%s' holds an earlier run: --force replaces it, or -o "
                            "names another directory\n", dir);
            goto out;
        }
        if (remove_own(pfd, is_process_name) || remove_own(fd, is_output_name) ||
            (sfd >= 0 && remove_own(sfd, is_capture_name))) {
            if (sfd >= 0)
                close(sfd);
            fprintf(stderr, "spanprof: cannot remove the earlier run in '%s': %s\n", dir,
                    strerror(errno));
            goto out;
        }
    }
    if (sfd >= 0)
        close(sfd);
    if (pfd == -2) {
        if (mkdirat(fd, PROCESSES, 0755) != 0) {
            fprintf(stderr, "spanprof: cannot create '%s': %s\n", processes, strerror(errno));
            goto out;
        }
        if ((pfd = open_run_dir(fd, PROCESSES, processes)) < 0)
            goto out;
    }
    /* The runtime writes by path: the path must still lead to the directory checked. */
    errno = 0;
    if (!realpath(dir, abs) || !same_dir(fd, abs)) {
        fprintf(stderr, "spanprof: cannot resolve '%s': %s\n", dir,
                errno ? strerror(errno) : "it changed while record prepared it");
        goto out;
    }
    o->dir_fd = fd;
    fd = -1;
    rc = 0;
out:
    if (fd >= 0)
        close(fd);
    if (pfd >= 0)
        close(pfd);
    free(processes);
    free(dir);
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
    if (o->slow) {
        set("SPANPROF_SLOW", o->slow);
        set("SPANPROF_FLIGHT", o->flight ? o->flight : "1");
        char *slow = xasprintf("%s/" SLOW, abs);
        set("SPANPROF_SLOW_DIR", slow);
        free(slow);
    }
    if (o->serve) {
        char *live = xasprintf("%s/" LIVE, abs);
        if (mkdirat(o->dir_fd, LIVE, 0700) != 0) {
            fprintf(stderr, "spanprof: cannot create '%s': %s\n", live, strerror(errno));
            free(live);
            return -1;
        }
        set("SPANPROF_LIVE", live);
        free(live);
    } else {
        unsetenv("SPANPROF_LIVE");
    }
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

/* Checks what coz needs, and that PROGRESS (--progress's globs, or NULL) names a span of CMD;
 * ARGV gets "coz run -o DIR/profile.coz ---" in front of CMD. */
static char **coz_command(const char *abs, char **cmd, int ncmd, const char *progress)
{
    char coz[PATH_MAX], exe[PATH_MAX];
    if (which("coz", coz, sizeof coz)) {
        fprintf(stderr, "spanprof: --coz needs coz on PATH (Debian: apt-get install coz-profiler)\n");
        return NULL;
    }
    int found = which(cmd[0], exe, sizeof exe) == 0;
    const char *problem = found ? spanprof__debug_info_problem(exe) : NULL;
    if (problem) {
        fprintf(stderr, "spanprof: coz cannot use the debug info of '%s' (%s): rebuild it with "
                        SPANPROF_COZ_DEBUG_FLAGS "\n", cmd[0], problem);
        return NULL;
    }
    /* A function the size rule left without a span: coz would see no progress point, which
     * record could only say after the whole run. */
    if (found && progress && spanprof_progress_unmatched(exe, progress)) {
        fprintf(stderr, "spanprof: --progress %s names no span of '%s' or of the libraries it "
                        "links (a function smaller than the plugin's min-size has none): rebuild "
                        "with -fplugin-arg-spanplugin-progress=%s, which makes a progress point of "
                        "a function of any size, or mark it __attribute__((progress))\n",
                progress, cmd[0], progress);
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

/* Why CMD could not be run (ERR: exec's errno), on stderr.  A program the kernel refuses
 * (ENOEXEC) is named by its machine: most often it is one of another machine. */
static void exec_failure(const char *cmd, int err)
{
    char path[PATH_MAX];
    struct elf_machine m;
    if (err != ENOEXEC || which(cmd, path, sizeof path) || elf_machine(path, &m)) {
        fprintf(stderr, "spanprof: cannot run '%s': %s\n", cmd, strerror(err));
    } else if (!m.own) {
        fprintf(stderr, "spanprof: cannot run '%s': it is %s %s program and this machine cannot run "
                        "it directly (the kernel has no handler for it): run it under %s "
                        "(`spanprof record -- %s %s`; see the manual's \"arm64 under qemu\")\n",
                cmd, strchr("aeiou", m.name[0]) ? "an" : "a", m.name, *m.qemu ? m.qemu : "an emulator",
                *m.qemu ? m.qemu : "EMULATOR", cmd);
    } else {
        fprintf(stderr, "spanprof: cannot run '%s': the kernel refuses this %s program (%s): it "
                        "is damaged, or spanprof itself runs under an emulator (qemu-user), whose "
                        "programs cannot exec another: run a spanprof built for this machine with "
                        "`%s %s` as the command (see the manual's \"arm64 under qemu\")\n",
                cmd, m.name, strerror(err), *m.qemu ? m.qemu : "qemu-ARCH", cmd);
    }
}

/* Runs ARGV; *STATUS gets its wait status.  -1 with *STATUS an exit
 * status when it could not be started (a message printed). */
static int run_command(char **argv, int *status)
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
        /* An ELF program is exec'd as it is: execvp would hand a program the kernel refuses
         * (ENOEXEC: one of another machine) to /bin/sh as a script, whose "Syntax error" hides
         * the cause. */
        char path[PATH_MAX];
        struct elf_machine m;
        if (which(argv[0], path, sizeof path) == 0 && elf_machine(path, &m) == 0)
            execv(path, argv);
        else
            execvp(argv[0], argv);
        int err = errno;
        if (write(report[1], &err, sizeof err) < 0)
            _exit(EXIT_CANNOT_RUN);
        _exit(err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN);
    }
    int fork_errno = errno;
    if (pid > 0)
        child_pid = pid;
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
        exec_failure(argv[0], exec_errno);
        *status = exec_errno == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
        return -1;
    }
    return 0;
}

/* ---- --serve ---- */

/* Starts `spanprof serve --listen ADDR:PORT ABS/live` as a child (its output on stderr, as
 * record's): its pid, or -1 after a message. */
static pid_t start_serve(const struct record_opts *o, const char *abs)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("spanprof: fork");
        return -1;
    }
    if (pid == 0) {
        /* its own process group: the terminal's Ctrl-C goes to CMD, and record stops serve */
        setpgid(0, 0);
        dup2(STDERR_FILENO, STDOUT_FILENO);
        char *live = xasprintf("%s/" LIVE, abs);
        struct serve_opts so = {live, o->serve, NULL, NULL, 15, 100};
        int rc = cmd_serve(&so);
        fflush(NULL);
        _exit(rc);
    }
    return pid;
}

/* Stops serve (SIGTERM) once CMD has ended, and waits for it. */
static void stop_serve(pid_t pid)
{
    int st;
    kill(pid, SIGTERM);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
}

/* ---- assembling the profile ---- */

/* The processes' files in DIR/processes (PFD) whose names end with SUFFIX and not with any of
 * NOT (a folded file's suffix is also the end of an allocation folded file's), in name order.
 * Only regular files named as the runtime names them: the directory was read through PFD, and
 * the path ABS/processes was checked to lead there (assemble). */
static char **process_files(int pfd, const char *abs, const char *suffix, const char *not, size_t *n)
{
    char *dir = xasprintf("%s/" PROCESSES, abs);
    char **v = NULL;
    size_t cap = 0;
    *n = 0;
    DIR *d = read_dir(pfd);
    if (d) {
        struct dirent *de;
        struct stat st;
        while ((de = readdir(d))) {
            if (!is_process_name(de->d_name) || !has_suffix(de->d_name, suffix) ||
                (not && has_suffix(de->d_name, not)) ||
                fstatat(pfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
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
static int merge_kind(int pfd, const char *abs, const char *suffix, const char *not,
                      const char *out)
{
    size_t n;
    char **files = process_files(pfd, abs, suffix, not, &n);
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
    int rc = view_page(in, html, unit, NULL);
    free(in);
    free(html);
    return rc;
}

/* --trace: every process's trace merged into DIR/trace.json (a track per process, on one time
 * line) and shown in timeline.html; what the rings dropped said on stdout (stderr by then).
 * 2 both written, 1 trace.json only (no speedscope), 0 no process traced, -1 failed. */
static int timeline(int pfd, const char *abs)
{
    size_t n;
    char **traces = process_files(pfd, abs, ".trace.json", NULL, &n);
    if (!n)
        return 0;
    char *merged = xasprintf("%s/trace.json", abs), *html = xasprintf("%s/timeline.html", abs);
    struct trace_totals t;
    int rc = merge_traces(merged, traces, n, &t) ? -1 : 1;
    if (rc > 0 && t.dropped)
        printf("spanprof: the trace holds the last %" PRIu64 " of %" PRIu64 " span events (%.1f %%): "
               "each thread's ring keeps its most recent events and dropped %" PRIu64 " older "
               "ones; SPANPROF_TRACE_BUFFER=MIB (default 8, per thread) keeps more\n",
               t.events, t.events + t.dropped,
               100.0 * (double)t.events / (double)(t.events + t.dropped), t.dropped);
    if (rc > 0 && view_page(merged, html, NULL, NULL) == 0)
        rc = 2;
    free(merged);
    free(html);
    free_list(traces, n);
    return rc;
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

/* How many processes of FOLDED (sorted paths PID[.N].folded) have no JSON profile in JSON
 * (sorted paths PID[.N].json): those that died by a crash or a fatal signal, whose writer
 * leaves folded stacks only. */
static size_t count_folded_only(char **folded, size_t nfolded, char **json, size_t njson)
{
    size_t only = 0;
    for (size_t i = 0; i < nfolded; i++) {
        size_t base = strlen(folded[i]) - strlen(".folded");
        char *as_json = xasprintf("%.*s.json", (int)base, folded[i]);
        only += !bsearch(&as_json, json, njson, sizeof *json, cmp_strp);
        free(as_json);
    }
    return only;
}

/* What the user types next: the directory as they named it.  NJSON processes wrote a JSON
 * profile, FOLDED_ONLY more their folded stacks only. */
static void closing_line(const struct record_opts *o, size_t njson, size_t folded_only,
                         int have_page, int have_timeline, int have_alloc)
{
    size_t nprocs = njson + folded_only;
    printf("\nspanprof: %zu %s recorded in %s/: %sprofile.folded%s%s%s%s\n", nprocs,
           nprocs == 1 ? "process" : "processes", o->dir, njson ? "profile.json, " : "",
           have_page ? ", flamegraph.html" : "",
           have_timeline == 2 ? ", trace.json, timeline.html" : have_timeline == 1 ? ", trace.json" : "",
           have_alloc ? ", alloc.folded, alloc.html" : "", o->coz ? ", profile.coz" : "");
    if (folded_only && njson)
        printf("spanprof: %zu of the %zu processes wrote folded stacks only (a crash or a fatal "
               "signal leaves no JSON profile): profile.folded and the flame graph have their "
               "stacks, profile.json and the report above (%zu %s merged) do not\n",
               folded_only, nprocs, njson, njson == 1 ? "process" : "processes");
    if (have_page)
        printf("next: spanprof report %s | open %s/flamegraph.html in a browser | "
               "spanprof diff %s OTHER-RUN\n", o->dir, o->dir, o->dir);
    else
        printf("next: spanprof report %s | spanprof diff %s OTHER-RUN\n", o->dir, o->dir);
}

/* Assembles the run from PFD, DIR/processes, into ABS; -1 when no process wrote a profile
 * (said on stderr: why, as far as STATUS, how the command ended, tells). */
static int assemble_from(const struct record_opts *o, int pfd, const char *abs, int status)
{
    /* A process that crashed wrote its folded stacks only (the crash writer's one file). */
    size_t nprocs, nfolded;
    char **json = process_files(pfd, abs, ".json", ".trace.json", &nprocs);
    char **folded = process_files(pfd, abs, ".folded", ".alloc.folded", &nfolded);
    size_t folded_only = count_folded_only(folded, nfolded, json, nprocs);
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
    if (merge_kind(pfd, abs, ".json", ".trace.json", "profile.json") < 0 ||
        merge_kind(pfd, abs, ".folded", ".alloc.folded", "profile.folded") < 0)
        return 0;
    int have_page = page(abs, "profile.folded", "flamegraph.html", "nanoseconds") == 0;
    int have_timeline = o->trace ? timeline(pfd, abs) : 0;
    int have_alloc = o->alloc && merge_kind(pfd, abs, ".alloc.folded", NULL, "alloc.folded") > 0 &&
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
    closing_line(o, nprocs, folded_only, have_page, have_timeline, have_alloc);
    if (o->slow) {
        char *slow = xasprintf("%s/" SLOW, o->dir);
        putchar('\n');
        struct stat st;
        if (stat(slow, &st) == 0)
            cmd_slow_list(slow, 1);
        else
            printf("0 flight-recorder captures: no call of --slow's spans was that slow\n");
        free(slow);
    }
    return 0;
}

/* Assembles the run in ABS (assemble_from).  The directories are checked again first: CMD ran
 * for as long as it liked, and the files are opened by path under ABS, which must still lead
 * to the directory prepare_dir checked. */
static int assemble(const struct record_opts *o, const char *abs, int status)
{
    char *shown = xasprintf("%s/" PROCESSES, o->dir);
    int pfd = open_run_dir(o->dir_fd, PROCESSES, shown);
    if (pfd == -2 || (pfd >= 0 && !same_dir(o->dir_fd, abs)))
        fprintf(stderr, "spanprof: '%s' is no longer the directory record prepared: its files "
                        "are left unread\n", pfd == -2 ? shown : o->dir);
    free(shown);
    if (pfd < 0 || !same_dir(o->dir_fd, abs)) {
        if (pfd >= 0)
            close(pfd);
        return -1;
    }
    int rc = assemble_from(o, pfd, abs, status);
    close(pfd);
    return rc;
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
        {"serve", required_argument, NULL, 'L'},  {"slow", required_argument, NULL, 's'},
        {"flight", required_argument, NULL, 'F'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct record_opts o = {.dir = DEFAULT_DIR, .mode = "exact", .limit = 10, .dir_fd = -1};
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
        case 'L':
            if (!serve_listen_form_ok(optarg))
                return usage("--serve needs ADDR:PORT (e.g. 127.0.0.1:6061), not '%s'", optarg);
            o.serve = optarg;
            break;
        case 's': {
            if (strchr(optarg, ',') || spanprof__slow_rules(optarg, NULL, NULL))
                return usage("--slow needs SPAN:DURATION (a duration such as 5ms, 200us), not '%s'",
                             optarg);
            char *all = o.slow ? xasprintf("%s,%s", o.slow, optarg) : xstrdup(optarg);
            free(o.slow);
            o.slow = all;
            break;
        }
        case 'F': {
            char *end;
            double sec = strtod(optarg, &end);
            if (!*optarg || *end || !(sec > 0) || sec > 3600)
                return usage("--flight needs a number of seconds (> 0, at most 3600), not '%s'",
                             optarg);
            o.flight = optarg;
            break;
        }
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
    if (o.flight && !o.slow)
        return usage("%s", "--flight sets the seconds a capture covers: it goes with --slow");
    if (o.progress && !o.coz)
        return usage("%s", "--progress chooses coz's progress points: it goes with --coz");
    if (!*o.dir)
        return usage("%s", "-o needs a directory");

    char abs[PATH_MAX];
    char **cmd = argv + optind, **run = cmd;
    if (prepare_dir(&o, abs) || set_environment(&o, abs))
        return EXIT_RECORD_FAILED;
    if (o.coz && !(run = coz_command(abs, cmd, argc - optind, o.progress)))
        return EXIT_RECORD_FAILED;
    pid_t serve = o.serve ? start_serve(&o, abs) : -1;
    int status;
    int ran = run_command(run, &status);
    if (serve > 0)
        stop_serve(serve);
    if (o.serve)
        remove_live(o.dir_fd, o.dir);
    if (ran)
        return status;
    /* Everything record prints from here goes to stderr (the reports print on stdout): the
     * command's standard output stays the command's alone. */
    fflush(stdout);
    if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
        return pass_status(status);
    int assembled = assemble(&o, abs, status);
    fflush(stdout);
    /* A command that succeeded but left no profile is record's failure, not a success. */
    if (assembled < 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return EXIT_RECORD_FAILED;
    return pass_status(status);
}
