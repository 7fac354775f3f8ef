/* dump.c — `spanprof dump PID`: asks a running profiled process for its profile so far.
 *
 * The process was started with SPANPROF_DUMP_SIGNAL=SIG; its runtime writes every output when
 * that signal arrives, each file replaced by rename (a new inode).  This reads the signal and the
 * output paths from /proc/PID/environ (the environment the process started with; relative paths
 * are taken from /proc/PID/cwd), sends the signal, waits until every output file has been
 * replaced, and prints their paths.  A path without %p may carry ".PID" (a descendant: a fork
 * child, or a program started by a profiled one) or ".PID.N" (an image that a profiled image of
 * the same process exec'd): both names are watched.
 *
 * With --flight it asks for a flight-recorder capture instead (the process runs with
 * SPANPROF_FLIGHT): the same signal, sent with sigqueue and SPANPROF__FLIGHT_SIGVAL, and it waits
 * for a new request.PID.*.trace.json in SPANPROF_SLOW_DIR, whose path it prints.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/signalname.h"
#include "cmd/cmd.h"

#define MAX_FILES 8

struct watched {
    char path[PATH_MAX];
    struct stat before;
    int existed;
};

/* Whether process PID's handler for SIG is installed: SIG in the SigCgt mask of its status. */
static int catches(long pid, int sig)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    FILE *f = fopen(path, "re");
    int caught = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long long mask;
        if (sscanf(line, "SigCgt: %llx", &mask) == 1) {
            caught = (mask >> (sig - 1)) & 1;
            break;
        }
    }
    if (f)
        fclose(f);
    return caught;
}

/* Whether process PID runs the thread that serves dumps (the runtime names it "spanprof-write";
 * a runtime linked statically or dynamically alike starts it when SPANPROF_DUMP_SIGNAL is set). */
static int runs_writer(long pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/task", pid);
    DIR *d = opendir(path);
    int found = 0;
    for (struct dirent *e; d && !found && (e = readdir(d));) {
        char comm_path[300], comm[32] = "";
        snprintf(comm_path, sizeof comm_path, "/proc/%ld/task/%s/comm", pid, e->d_name);
        FILE *f = fopen(comm_path, "re");
        if (f && fgets(comm, sizeof comm, f))
            found = strcmp(comm, "spanprof-write\n") == 0;
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return found;
}

/* PATTERN with %p (as PID) and %% expanded, relative to CWD; 0, or -1 when too long. */
static int expand(const char *pattern, const char *pid, const char *cwd, char *out, size_t size)
{
    size_t o = 0;
    if (pattern[0] != '/') {
        int n = snprintf(out, size, "%s/", cwd);
        if (n < 0 || (size_t)n >= size)
            return -1;
        o = (size_t)n;
    }
    for (const char *p = pattern; *p; p++) {
        const char *add = p;
        size_t len = 1;
        if (p[0] == '%' && p[1] == 'p') {
            len = strlen(pid);
            add = pid;
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            p++;
        }
        if (o + len >= size)
            return -1;
        memcpy(out + o, add, len);
        o += len;
    }
    out[o] = 0;
    return 0;
}

static int replaced(const struct watched *w)
{
    struct stat now;
    if (stat(w->path, &now) != 0)
        return 0;
    return !w->existed || now.st_ino != w->before.st_ino ||
           now.st_mtim.tv_sec != w->before.st_mtim.tv_sec ||
           now.st_mtim.tv_nsec != w->before.st_mtim.tv_nsec;
}

/* Whether NAME is one of the N NAMES. */
static int has_name(char **names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return 1;
    return 0;
}

static int dump_flight(long pid, int sig, const struct proc_env *pe, double timeout)
{
    const char *flight = proc_env_value(pe, "SPANPROF_FLIGHT");
    if (!flight || !*flight) {
        fprintf(stderr, "spanprof: process %ld was not started with SPANPROF_FLIGHT: it keeps no "
                        "flight recorder\n", pid);
        return EXIT_BAD_INPUT;
    }
    const char *dir = proc_env_value(pe, "SPANPROF_SLOW_DIR");
    if (!dir || !*dir)
        dir = "spanprof.slow";
    char path[PATH_MAX];
    int len_path = dir[0] == '/' ? snprintf(path, sizeof path, "%s", dir)
                                 : snprintf(path, sizeof path, "%s/%s", pe->cwd, dir);
    if (len_path < 0 || (size_t)len_path >= sizeof path) {
        fprintf(stderr, "spanprof: process %ld's SPANPROF_SLOW_DIR is too long\n", pid);
        return EXIT_BAD_INPUT;
    }
    char **before = NULL;
    size_t nbefore = 0;
    slow_captures(path, &before, &nbefore);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "request.%ld.", pid);
    union sigval value = {.sival_int = SPANPROF__FLIGHT_SIGVAL};
    if (sigqueue((pid_t)pid, sig, value) != 0) {
        fprintf(stderr, "spanprof: cannot send SIG%s to process %ld: %s\n", sigabbrev_np(sig), pid,
                strerror(errno));
        return EXIT_BAD_INPUT;
    }
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        char **names = NULL;
        size_t n = 0;
        slow_captures(path, &names, &n);
        const char *found = NULL;
        for (size_t i = 0; i < n && !found; i++)
            if (strncmp(names[i], prefix, strlen(prefix)) == 0 && !has_name(before, nbefore, names[i]))
                found = names[i];
        if (found)
            printf("%s/%s\n", path, found);
        for (size_t i = 0; i < n; i++)
            free(names[i]);
        free(names);
        if (found)
            break;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double waited = (double)(now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9;
        if (waited >= timeout) {
            fprintf(stderr, "spanprof: process %ld wrote no capture into '%s' within %g s of SIG%s "
                            "(SPANPROF_SLOW_MAX reached, or the directory cannot be written)\n",
                    pid, path, timeout, sigabbrev_np(sig));
            return EXIT_BAD_INPUT;
        }
        if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
            fprintf(stderr, "spanprof: process %ld ended before writing its capture\n", pid);
            return EXIT_BAD_INPUT;
        }
        nanosleep(&(struct timespec){0, 20000000}, NULL);
    }
    for (size_t i = 0; i < nbefore; i++)
        free(before[i]);
    free(before);
    return 0;
}

int cmd_dump(const char *pid_text, double timeout, int flight)
{
    long pid = strtol(pid_text, NULL, 10); /* checked by the caller */
    static struct proc_env pe; /* static: still reachable at exit, after any return below */
    if (proc_env_read(pid, &pe) != 0) {
        if (errno == ENOENT)
            fprintf(stderr, "spanprof: no process %ld\n", pid);
        else
            fprintf(stderr, "spanprof: cannot read '%s': %s\n", pe.failed, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    const char *sig_text = proc_env_value(&pe, "SPANPROF_DUMP_SIGNAL");
    int named = 0;
    int sig = sig_text ? spanprof__dump_signal_parse(sig_text, &named) : 0;
    if (!sig) {
        if (sig_text && named)
            fprintf(stderr, "spanprof: process %ld has SPANPROF_DUMP_SIGNAL='%s', which the "
                            "runtime refuses (KILL, STOP and the crash signals cannot be dump "
                            "signals): nothing sent\n", pid, sig_text);
        else if (sig_text)
            fprintf(stderr, "spanprof: process %ld has SPANPROF_DUMP_SIGNAL='%s', which is not "
                            "a signal\n", pid, sig_text);
        else
            fprintf(stderr, "spanprof: process %ld was not started with SPANPROF_DUMP_SIGNAL "
                            "(not a spanprof process, or dumps not enabled): run it with "
                            "SPANPROF_DUMP_SIGNAL=USR2\n", pid);
        return EXIT_BAD_INPUT;
    }
    const char *mode = proc_env_value(&pe, "SPANPROF");
    if (mode && strcmp(mode, "0") == 0) {
        fprintf(stderr, "spanprof: process %ld runs with SPANPROF=0: nothing is recorded\n", pid);
        return EXIT_BAD_INPUT;
    }
    if (flight) {
        if (!catches(pid, sig) || !runs_writer(pid)) {
            fprintf(stderr, "spanprof: process %ld does not catch SIG%s or runs no spanprof writer "
                            "thread: nothing sent\n", pid, sigabbrev_np(sig));
            return EXIT_BAD_INPUT;
        }
        return dump_flight(pid, sig, &pe, timeout);
    }

    /* Each output under the name a first process gives it and under the name of a descendant
     * (NAME.PID) or of a later image of the process (NAME.PID.N, or PID.N for %p), which the
     * SPANPROF_ANCESTOR it started with tells. */
    char pid_image[64], pid_plain[32];
    snprintf(pid_plain, sizeof pid_plain, "%ld", pid);
    long mpid = 0;
    unsigned long image = 0;
    const char *marker = proc_env_value(&pe, "SPANPROF_ANCESTOR");
    if (!marker || sscanf(marker, "%ld:%lu", &mpid, &image) != 2 || mpid != pid)
        image = 0;
    if (image)
        snprintf(pid_image, sizeof pid_image, "%ld.%lu", pid, image);
    else
        snprintf(pid_image, sizeof pid_image, "%ld", pid);
    const char *folded = proc_env_value(&pe, "SPANPROF_FOLDED");
    const char *alloc_on = proc_env_value(&pe, "SPANPROF_ALLOC_STACKS");
    const char *alloc = proc_env_value(&pe, "SPANPROF_ALLOC_FOLDED");
    const char *patterns[] = {
        folded ? folded : "spanprof.folded",
        proc_env_value(&pe, "SPANPROF_JSON"),
        proc_env_value(&pe, "SPANPROF_TRACE"),
        alloc_on && strcmp(alloc_on, "1") == 0 ? (alloc ? alloc : "spanprof.alloc.folded") : NULL,
        proc_env_value(&pe, "SPANPROF_PPROF"),
    };
    static struct watched w[MAX_FILES];
    size_t nw = 0, outputs = 0;
    for (size_t i = 0; i < sizeof patterns / sizeof *patterns; i++) {
        if (!patterns[i] || !*patterns[i])
            continue;
        outputs++;
        for (int named = 0; named < 2; named++) {
            struct watched *x = &w[nw];
            /* named 0: as a first process names it; 1: as a descendant or later image does */
            const char *as = named && image > 0 ? pid_image : pid_plain;
            if (expand(patterns[i], as, pe.cwd, x->path, sizeof x->path))
                continue;
            if (named && !strstr(patterns[i], "%p")) {
                size_t l = strlen(x->path);
                snprintf(x->path + l, sizeof x->path - l, ".%s", pid_image);
            } else if (named && image == 0) {
                continue; /* the same name as named 0 */
            }
            x->existed = stat(x->path, &x->before) == 0;
            nw++;
        }
    }
    if (outputs == 0) {
        fprintf(stderr, "spanprof: process %ld writes no output (every SPANPROF_* path is "
                        "empty)\n", pid);
        return EXIT_BAD_INPUT;
    }

    /* Sent only where it cannot do harm: a process that does not catch the signal (still
     * starting, the runtime not there, or the program's own handler refused by the runtime)
     * would take its default action, which for most signals ends it. */
    if (!catches(pid, sig)) {
        fprintf(stderr, "spanprof: process %ld does not catch SIG%s (still starting, or no "
                        "spanprof runtime with dumps on): nothing sent, the signal could end it\n",
                pid, sigabbrev_np(sig));
        return EXIT_BAD_INPUT;
    }
    if (!runs_writer(pid)) {
        fprintf(stderr, "spanprof: process %ld runs no spanprof writer thread (not a spanprof "
                        "process, or its handler for SIG%s is not the runtime's): nothing sent\n",
                pid, sigabbrev_np(sig));
        return EXIT_BAD_INPUT;
    }
    if (kill((pid_t)pid, sig) != 0) {
        if (errno == ESRCH)
            fprintf(stderr, "spanprof: no process %ld\n", pid);
        else
            fprintf(stderr, "spanprof: cannot send SIG%s to process %ld: %s\n",
                    sigabbrev_np(sig), pid, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        size_t done = 0;
        for (size_t i = 0; i < nw; i++)
            done += replaced(&w[i]);
        if (done >= outputs)
            break;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double waited = (double)(now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9;
        if (waited >= timeout) {
            fprintf(stderr, "spanprof: process %ld did not write its profile within %g s of "
                            "SIG%s (", pid, timeout, sigabbrev_np(sig));
            for (size_t i = 0; i < nw; i++)
                fprintf(stderr, "%s'%s'", i ? ", " : "", w[i].path);
            fputs(")\n", stderr);
            return EXIT_BAD_INPUT;
        }
        if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
            fprintf(stderr, "spanprof: process %ld ended before writing its profile\n", pid);
            return EXIT_BAD_INPUT;
        }
        nanosleep(&(struct timespec){0, 20000000}, NULL);
    }
    for (size_t i = 0; i < nw; i++)
        if (replaced(&w[i]))
            puts(w[i].path);
    return 0;
}
