/* procenv.c — what another process was started with: its environment (/proc/PID/environ) and
 * its working directory (/proc/PID/cwd), so that a command can find what the process's runtime
 * was told (SPANPROF_DUMP_SIGNAL and the output paths for `spanprof dump`, SPANPROF_LIVE for
 * `spanprof spans`) and the paths it meant, relative ones included.
 *
 * /proc/PID/environ is the memory execve put the environment in: setenv does not change it, so
 * it holds what the runtime read at start-up, unless the program wrote over that memory itself
 * (a server retitling itself: its variables are then not found here, though the runtime,
 * which copied them at start-up, still uses them). */
#define _GNU_SOURCE
#include "lib/lib.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The whole of FD (no size is known in advance: /proc files say 0), NUL added. */
static char *read_all(int fd, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf = xmalloc(cap + 1);
    for (;;) {
        if (n == cap)
            buf = xrealloc(buf, (cap *= 2) + 1);
        ssize_t k = read(fd, buf + n, cap - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            free(buf);
            return NULL;
        }
        if (k == 0)
            break;
        n += (size_t)k;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

int proc_env_read(long pid, struct proc_env *pe)
{
    pe->env = NULL;
    pe->len = 0;
    pe->cwd[0] = 0;
    snprintf(pe->failed, sizeof pe->failed, "/proc/%ld/environ", pid);
    int fd = open(pe->failed, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    pe->env = read_all(fd, &pe->len);
    int err = errno;
    close(fd);
    if (!pe->env) {
        errno = err;
        return -1;
    }
    snprintf(pe->failed, sizeof pe->failed, "/proc/%ld/cwd", pid);
    ssize_t n = readlink(pe->failed, pe->cwd, sizeof pe->cwd - 1);
    if (n < 0) {
        proc_env_free(pe);
        return -1;
    }
    pe->cwd[n] = 0;
    pe->failed[0] = 0;
    return 0;
}

const char *proc_env_value(const struct proc_env *pe, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = pe->env; p < pe->env + pe->len; p += strlen(p) + 1)
        if (strncmp(p, name, n) == 0 && p[n] == '=')
            return p + n + 1;
    return NULL;
}

char *proc_env_path(const struct proc_env *pe, const char *path)
{
    return path[0] == '/' ? xstrdup(path) : xasprintf("%s/%s", pe->cwd, path);
}

uid_t proc_uid(long pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    FILE *f = fopen(path, "re");
    unsigned long real, effective;
    uid_t uid = (uid_t)-1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Uid: %lu %lu", &real, &effective) == 2) {
            uid = (uid_t)effective;
            break;
        }
    if (f)
        fclose(f);
    return uid;
}

void proc_env_free(struct proc_env *pe)
{
    free(pe->env);
    pe->env = NULL;
    pe->len = 0;
}
