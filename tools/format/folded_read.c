/* folded_read.c — the one reader of folded stacks ("outer;inner;leaf 123" lines) that merge,
 * report and diff share: a line at a time, the stack and its value handed to the caller.  Blank
 * lines and line ends (\n, \r\n) are skipped; anything else that is not a stack, a space and a
 * decimal value that fits in 64 bits stops the reading with a message naming the file and line. */
#include "format/format.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int folded_read(const char *path, folded_line_fn *fn, void *ctx)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "spanprof: cannot read '%s': %s\n", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t len;
    int rc = 0;
    while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (len == 0)
            continue;
        /* the value: the digits after the last space */
        char *sp = strrchr(line, ' '), *end;
        int digit = sp && sp > line && sp[1] >= '0' && sp[1] <= '9';
        errno = 0;
        unsigned long long value = digit ? strtoull(sp + 1, &end, 10) : 0;
        if (!digit || *end || errno == ERANGE) {
            fprintf(stderr, "spanprof: %s:%zu: not a folded stack line (\"outer;inner;leaf 123\")\n",
                    path, lineno);
            rc = -1;
            break;
        }
        *sp = 0;
        rc = fn(ctx, line, (size_t)(sp - line), value, lineno);
    }
    if (rc == 0 && ferror(f)) {
        fprintf(stderr, "spanprof: cannot read '%s': %s\n", path, strerror(errno));
        rc = -1;
    }
    free(line);
    fclose(f);
    return rc;
}
