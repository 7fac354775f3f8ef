/* outfile.h — what may be written at an output path, and opening it (outfile.c): shared by the
 * runtime's writers and the spanprof tool's outputs, so both follow one rule.  Depends on
 * nothing else of the runtime (never installed).
 */
#ifndef SPANPROF_OUTFILE_H
#define SPANPROF_OUTFILE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#pragma GCC visibility push(hidden)

/* An output being written: a temporary file to rename over the path, or the path itself. */
struct spanprof__outfile {
    int fd;
    int in_place; /* fd is the path's own file (a followed link, /dev/null, stdout/stderr) */
    int own;      /* 1 or 2: the program's own stdout or stderr (a regular one: fd duplicates it) */
    int noted;    /* the temporary file is in the table spanprof__outfile_abandon empties */
    char tmp[PATH_MAX];
};
/* Refusals, beside errno values: a symbolic link of another user; not a regular file; a
 * temporary file removed because the process is dying (spanprof__outfile_abandon). */
#define SPANPROF__OUTFILE_FOREIGN_LINK (-1)
#define SPANPROF__OUTFILE_NOT_REGULAR (-2)
#define SPANPROF__OUTFILE_ABANDONED (-3)
/* How long a write to a pipe or terminal may wait for room before the output is given up. */
#define SPANPROF__OUTFILE_STALL_MS 2000

/* Async-signal-safe: */
/* V in decimal into BUF (>= 21 bytes), NUL-terminated; returns the length. */
size_t spanprof__format_u64(char *buf, uint64_t v);
/* Opens PATH for writing as outfile.c's rules say (TAG goes into the temporary file's name, ""
 * or ".crash"): 0, or an errno value or refusal, OF then holding nothing open. */
int spanprof__outfile_open(const char *path, const char *tag, struct spanprof__outfile *of);
/* Writes all of BUF to FD, waiting at most SPANPROF__OUTFILE_STALL_MS at a time for room: 0, or
 * an errno value (ETIMEDOUT for a reader that stopped). */
int spanprof__outfile_write(int fd, const void *buf, size_t len);
/* Closes OF and, when ERR is 0, puts the temporary file in place; otherwise removes it.  Returns
 * ERR, or the error that closing or renaming gave. */
int spanprof__outfile_finish(struct spanprof__outfile *of, const char *path, int err);
/* Removes the temporary files still being written (by other threads): for a process about to
 * die, so that it leaves none behind. */
void spanprof__outfile_abandon(void);
/* ERR's text for "cannot write 'PATH': TEXT". */
const char *spanprof__outfile_reason(int err);
/* Buffered writes to FD through spanprof__outfile_write, for the writers that may not use
 * stdio (a signal handler's): the first error is kept in ERR and later writes are dropped. */
struct spanprof__safe_out {
    int fd, err;
    size_t len;
    char buf[8192];
};
void spanprof__safe_put(struct spanprof__safe_out *o, const char *s, size_t len);
void spanprof__safe_flush(struct spanprof__safe_out *o);

/* Not async-signal-safe: */
/* A stdio stream over OF's descriptor whose writes go through spanprof__outfile_write; fclose it
 * before spanprof__outfile_finish (it leaves the descriptor open).  NULL with errno set. */
FILE *spanprof__outfile_stream(struct spanprof__outfile *of);

#pragma GCC visibility pop

#endif /* SPANPROF_OUTFILE_H */
