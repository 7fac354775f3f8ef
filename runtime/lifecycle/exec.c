/* exec.c — the exec family, wrapped: the profile is written before the image is replaced, and
 * the new image learns it descends from a profiled one.
 *
 * The runtime exports SPANPROF_ANCESTOR=PID:N:ID into its own environment at start-up (start.c):
 * PID is the process, N how many images of that process wrote a profile before this one, ID this
 * image (16 hex digits from the kernel's per-exec random bytes).  Children started any way
 * (fork+exec, posix_spawn, system, popen) inherit it; an image that finds a PID other than its
 * own is a descendant and appends ".PID" to paths without %p, as a fork child does.  Here, before
 * exec, the marker in the new image's environment is set to this PID and the count including
 * this image if it wrote: an image that follows another in the same process writes NAME.PID.N
 * (or, with %p, PID.N in place of the pid).
 *
 * An exec with an environment of the program's own making (execle, execve, execvpe, fexecve
 * with an envp that lacks the run's settings, as a test runner that spawns with a clean
 * environment does) would start an image that records with the defaults, into the working
 * directory, outside the run: the SPANPROF_* settings this process started with are carried into
 * such an environment, each unless the environment sets that variable itself (the program's
 * choice stands).  Only SPANPROF and SPANPROF_* variables: nothing else of the program's
 * environment changes.
 *
 * A vfork child (same memory as its parent, which is suspended) writes nothing and allocates
 * nothing: the environment is copied into a bounded array on the stack.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lifecycle/lifecycle.h"

#define MAX_ENV 4096
#define MAX_ARGS 4096
#define MAX_SETTINGS 64

/* The SPANPROF and SPANPROF_* entries of the environment at start-up (copies), but the runtime's
 * own markers:
 * the run's settings, carried into environments that lack them (spanprof__exec_start). */
static char *settings[MAX_SETTINGS];
static size_t nsettings;

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

/* Writes the profile of this image (not in a vfork child, not when it recorded nothing) and
 * fills MARKER with the new image's SPANPROF_ANCESTOR entry; 0 when the runtime is off (the
 * environment is then passed on untouched).  If exec fails, the program goes on and its exit
 * writes the files again, complete. */
static int before_exec(char *marker, size_t size)
{
    if (!spanprof__flags.recording)
        return 0;
    int saved_errno = errno;
    pid_t pid = getpid();
    unsigned written = 0; /* a vfork or clone child: a process of its own, nothing written yet */
    if (pid == spanprof__image_pid) {
        if (spanprof__image_recorded())
            spanprof__write_serial();
        spanprof__flight_serve(1); /* captures noted but not written: the rings go with the image */
        spanprof__live_final(0);
        written = spanprof__outputs.image + (unsigned)spanprof__image_wrote;
    }
    spanprof__marker(marker, size, pid, written);
    errno = saved_errno;
    return 1;
}

/* Whether ENVP sets the variable of ENTRY ("NAME=VALUE"). */
static int sets(char *const envp[], const char *entry)
{
    size_t len = (size_t)(strchrnul(entry, '=') - entry) + 1; /* with the '=' */
    for (size_t i = 0; envp && envp[i]; i++)
        if (strncmp(envp[i], entry, len) == 0)
            return 1;
    return 0;
}

/* ENVP with every SPANPROF_ANCESTOR entry replaced by MARKER and the run's settings it lacks
 * added, in OUT (MAX_ENV + MAX_SETTINGS + 2 entries); NULL when ENVP is too long (then passed on
 * unchanged). */
static char *const *with_marker(char *const envp[], char *marker, char **out)
{
    size_t n = 0;
    for (size_t i = 0; envp && envp[i]; i++) {
        if (strncmp(envp[i], "SPANPROF_ANCESTOR=", 18) == 0)
            continue;
        if (n == MAX_ENV)
            return NULL;
        out[n++] = envp[i];
    }
    for (size_t i = 0; i < nsettings; i++)
        if (!sets(envp, settings[i]))
            out[n++] = settings[i];
    out[n++] = marker;
    out[n] = NULL;
    return out;
}

/* The C library's function NAME, looked up once (*CACHE; a vfork child then needs no lookup).
 * NULL in a program linked fully statically (-static): the system calls below stand in. */
static void *next(void **cache, const char *name)
{
    void *fn = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (!fn) {
        fn = dlsym(RTLD_NEXT, name);
        __atomic_store_n(cache, fn, __ATOMIC_RELEASE);
    }
    return fn;
}

static int sys_execve(const char *path, char *const argv[], char *const envp[])
{
    return (int)syscall(SYS_execve, path, argv, envp);
}

/* execvpe's search of PATH, for a static program: each directory in turn; EACCES if some
 * candidate was not executable and none ran, else the last error. */
static int sys_execvpe(const char *file, char *const argv[], char *const envp[])
{
    if (!*file) {
        errno = ENOENT;
        return -1;
    }
    if (strchr(file, '/'))
        return sys_execve(file, argv, envp);
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin";
    int denied = 0;
    size_t flen = strlen(file);
    for (const char *p = path;; ) {
        const char *end = strchrnul(p, ':');
        size_t dlen = (size_t)(end - p);
        char buf[4096];
        if (dlen + 1 + flen < sizeof buf) {
            memcpy(buf, p, dlen);
            size_t at = dlen;
            if (dlen)
                buf[at++] = '/'; /* an empty entry is the current directory */
            memcpy(buf + at, file, flen + 1);
            sys_execve(buf, argv, envp);
            if (errno == EACCES)
                denied = 1;
            else if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP &&
                     errno != ENAMETOOLONG && errno != ESTALE)
                return -1;
        }
        if (!*end)
            break;
        p = end + 1;
    }
    if (denied)
        errno = EACCES;
    return -1;
}

static void *real_execve, *real_execvpe, *real_fexecve;

#define PREPARE_ENV(envp)                                                                       \
    char marker[96], *env_copy[MAX_ENV + MAX_SETTINGS + 2];                                    \
    char *const *env_new = NULL;                                                                \
    if (before_exec(marker, sizeof marker))                                                     \
        env_new = with_marker(envp, marker, env_copy);                                          \
    if (!env_new)                                                                               \
        env_new = (envp);

SPANPROF_API int execve(const char *path, char *const argv[], char *const envp[])
{
    PREPARE_ENV(envp);
    execve_fn fn = (execve_fn)next(&real_execve, "execve");
    return fn ? fn(path, argv, env_new) : sys_execve(path, argv, env_new);
}

SPANPROF_API int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

SPANPROF_API int execvpe(const char *file, char *const argv[], char *const envp[])
{
    PREPARE_ENV(envp);
    execve_fn fn = (execve_fn)next(&real_execvpe, "execvpe");
    return fn ? fn(file, argv, env_new) : sys_execvpe(file, argv, env_new);
}

SPANPROF_API int execvp(const char *file, char *const argv[])
{
    return execvpe(file, argv, environ);
}

SPANPROF_API int fexecve(int fd, char *const argv[], char *const envp[])
{
    PREPARE_ENV(envp);
    fexecve_fn fn = (fexecve_fn)next(&real_fexecve, "fexecve");
    return fn ? fn(fd, argv, env_new)
              : (int)syscall(SYS_execveat, fd, "", argv, env_new, AT_EMPTY_PATH);
}

/* The list forms: arguments up to the NULL (and, for execle, the environment after it). */
#define COLLECT_ARGS(arg0, ap, argv, envp_out)                                                  \
    char *argv[MAX_ARGS + 1];                                                                  \
    size_t argc = 0;                                                                           \
    argv[argc++] = (char *)(arg0);                                                             \
    while (argv[argc - 1]) {                                                                   \
        if (argc == MAX_ARGS) {                                                                \
            va_end(ap);                                                                        \
            errno = E2BIG;                                                                     \
            return -1;                                                                         \
        }                                                                                      \
        argv[argc++] = va_arg(ap, char *);                                                     \
    }                                                                                          \
    envp_out;                                                                                  \
    va_end(ap);

SPANPROF_API int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    COLLECT_ARGS(arg, ap, argv, (void)0);
    return execve(path, argv, environ);
}

SPANPROF_API int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    COLLECT_ARGS(arg, ap, argv, (void)0);
    return execvpe(file, argv, environ);
}

SPANPROF_API int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    char *const *envp;
    COLLECT_ARGS(arg, ap, argv, envp = va_arg(ap, char *const *));
    return execve(path, argv, envp);
}

/* A runtime marker, not a setting of the run: SPANPROF_ANCESTOR (set anew for each exec) and
 * SPANPROF_HANDOVER (meant for this process only). */
static int is_marker(const char *entry)
{
    return strncmp(entry, "SPANPROF_ANCESTOR=", 18) == 0 ||
           strncmp(entry, "SPANPROF_HANDOVER=", 18) == 0;
}

void spanprof__exec_start(void)
{
    for (char **e = environ; e && *e && nsettings < MAX_SETTINGS; e++)
        if ((strncmp(*e, "SPANPROF_", 9) == 0 || strncmp(*e, "SPANPROF=", 9) == 0) &&
            !is_marker(*e) && (settings[nsettings] = strdup(*e)))
            nsettings++;
    next(&real_execve, "execve");
    next(&real_execvpe, "execvpe");
    next(&real_fexecve, "fexecve");
}
