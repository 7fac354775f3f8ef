/* path.c — output path patterns: %p is the pid, %% a percent sign.
 *
 * In a fork child (APPEND_PID), a pattern without %p gets ".PID" appended: the child then writes
 * its own file instead of clobbering its parent's.
 */
#include <stdio.h>
#include <string.h>

#include "report/report.h"

int spanprof__path_valid(const char *p)
{
    for (; *p; p++)
        if (*p == '%') {
            if (p[1] != 'p' && p[1] != '%')
                return 0;
            p++;
        }
    return 1;
}

/* Returns 0, or -1 if PATTERN is invalid or the result does not fit in SIZE bytes. */
int spanprof__path_expand(const char *pattern, long pid, int append_pid, char *out, size_t size)
{
    size_t o = 0;
    int has_pid = 0;
    char num[32];
    int numlen = snprintf(num, sizeof num, "%ld", pid);
    if (!spanprof__path_valid(pattern) || size == 0)
        return -1;
    for (const char *p = pattern; *p; p++) {
        const char *add = p;
        size_t len = 1;
        if (*p == '%') {
            p++;
            if (*p == 'p') {
                add = num;
                len = (size_t)numlen;
                has_pid = 1;
            } else {
                add = "%";
            }
        }
        if (o + len >= size)
            return -1;
        memcpy(out + o, add, len);
        o += len;
    }
    if (append_pid && !has_pid) {
        if (o + 1 + (size_t)numlen >= size)
            return -1;
        out[o++] = '.';
        memcpy(out + o, num, (size_t)numlen);
        o += (size_t)numlen;
    }
    out[o] = 0;
    return 0;
}
