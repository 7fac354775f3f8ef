/* procsock.c — the path a process's listening Unix socket was bound to, found from the process
 * itself: its descriptors (/proc/PID/fd, links "socket:[INODE]") matched against the kernel's
 * table of Unix sockets (/proc/PID/net/unix: inode and bound path).  `spanprof spans` finds a
 * live socket this way when the process's environment no longer says where it is (a server that
 * wrote its title over its environment, as redis does).  Only the caller's own processes' (and,
 * as root, anyone's) descriptors can be read. */
#define _GNU_SOURCE
#include "lib/lib.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether process PID holds a descriptor of the socket INODE. */
static int holds_socket(long pid, unsigned long inode)
{
    char dir[64], link[PATH_MAX], want[64];
    snprintf(dir, sizeof dir, "/proc/%ld/fd", pid);
    snprintf(want, sizeof want, "socket:[%lu]", inode);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int found = 0;
    for (struct dirent *e; !found && (e = readdir(d));) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ssize_t n = readlink(path, link, sizeof link - 1);
        if (n > 0) {
            link[n] = 0;
            found = strcmp(link, want) == 0;
        }
    }
    closedir(d);
    return found;
}

char *proc_listening_socket(long pid, int (*wanted)(const char *path, void *ctx), void *ctx)
{
    char table[64];
    snprintf(table, sizeof table, "/proc/%ld/net/unix", pid);
    FILE *f = fopen(table, "re");
    if (!f)
        return NULL;
    char line[PATH_MAX + 128], *found = NULL;
    while (!found && fgets(line, sizeof line, f)) {
        /* Num RefCount Protocol Flags Type St Inode Path; St 01: listening */
        unsigned long inode;
        unsigned st;
        int path_at = 0;
        if (sscanf(line, "%*s %*s %*s %*s %*s %x %lu %n", &st, &inode, &path_at) < 2 || !path_at ||
            st != 1 || line[path_at] != '/')
            continue;
        char *path = line + path_at;
        path[strcspn(path, "\n")] = 0;
        if (wanted(path, ctx) && holds_socket(pid, inode))
            found = xstrdup(path);
    }
    fclose(f);
    return found;
}
