/* path.c — output path patterns: %p is the pid, %% a percent sign.
 *
 * In a descendant (APPEND_PID: a fork child, or a program exec'd by a profiled process), a
 * pattern without %p gets ".PID" appended: it then writes its own file instead of clobbering its
 * ancestor's.  When one process execs several profiled images, the ones after the first that
 * wrote name their files with "PID.N" (spanprof__output_path in output.c).
 *
 * No stdio and no allocation: the crash writer expands paths inside a signal handler.
 */
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
    int numlen = (int)spanprof__format_u64(num, (uint64_t)pid);
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
