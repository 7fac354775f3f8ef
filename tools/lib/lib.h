/* lib.h — the lowest layer of the spanprof command-line tool (lib/): helpers that know no
 * profile format — allocation that never fails, text tables and durations (util.c), a string
 * map (strmap.c), the files the tool writes (output.c), requests over Unix sockets
 * (unixreq.c), another process's environment (procenv.c), the machine an ELF file is for
 * (elfmachine.c) — and the tool's exit statuses.
 *
 * Not installed and not part of the runtime's ABI (that is include/spanprof.h).  The tool's
 * layers are lib/ < format/ < cmd/: a file includes its own layer's header, which includes the
 * one below, and uses nothing of a layer above (make check-layers checks the objects). */
#ifndef SPANPROF_TOOL_LIB_H
#define SPANPROF_TOOL_LIB_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "common/outfile.h"

/* Exit statuses: 1 for a failure while doing the work (unreadable or bad input), 2 for a command
 * line we do not understand — the split getopt-style tools (grep, diff) use. */
enum { EXIT_BAD_INPUT = 1, EXIT_USAGE = 2 };

/* ---- the tool's output files (output.c) ---- */

/* An output being written: open with output_open, write to the stream, end with output_close. */
struct tool_output {
    const char *shown;             /* the path as given, for messages */
    char path[PATH_MAX];           /* what is written: the path, or its link's target */
    struct spanprof__outfile file;
    FILE *f;
};
/* A stream to PATH's temporary file; NULL after "cannot write 'PATH': REASON" on stderr. */
FILE *output_open(struct tool_output *o, const char *path);
/* Puts the file in place when FAILED is 0 and every write succeeded; otherwise removes it,
 * leaving whatever was at the path as it was.  0, or -1 after "cannot write 'PATH': REASON"
 * (REASON from errno when FAILED). */
int output_close(struct tool_output *o, int failed);

/* ---- a map from byte strings to indexes (strmap.c) ---- */

/* A map from byte strings to indexes 0, 1, 2, ... in order of first insertion. */
struct strmap_entry {
    char *key;                   /* NUL-terminated copy (keys may hold NULs before len) */
    size_t len, index;
    uint64_t hash;
};
struct strmap {
    struct strmap_entry *slots;  /* open addressing; key NULL: empty */
    size_t cap, n;
};
void strmap_init(struct strmap *m);
size_t strmap_index(struct strmap *m, const char *key, size_t len, int *added);
long strmap_find(const struct strmap *m, const char *key, size_t len);   /* -1: absent */
void strmap_free(struct strmap *m);

/* ---- requests over Unix stream sockets (unixreq.c) ---- */

/* One socket to ask.  The caller fills in PATH and PEERS; the rest is unixreq.c's. */
enum { UNIX_REQ_OK, UNIX_REQ_GONE, UNIX_REQ_TIMEOUT, UNIX_REQ_PEER, UNIX_REQ_ERROR };
struct unix_req {
    const char *path;
    const uid_t *peers;          /* the users the listening process may run as; */
    size_t npeers;               /* 0: any */
    int status;                  /* UNIX_REQ_*: answered; nobody listens (its process ended); no
                                  * (complete) answer in time; listened to by another user (not
                                  * asked); anything else */
    uid_t peer_uid;              /* who listens, once connected */
    char *answer;                /* UNIX_REQ_OK: malloc'd, NUL added; else NULL */
    size_t len;
    char err[160];               /* why, when not UNIX_REQ_OK */
    int fd_, phase_;
    size_t sent_, cap_;
};
/* Asks the N sockets at once, sending REQUEST to each whose peer is allowed and reading its
 * answer until it closes: all within TIMEOUT seconds, each answer at most MAX bytes. */
void unix_requests(struct unix_req *reqs, size_t n, const char *request, double timeout, size_t max);

/* ---- another process's environment and working directory (procenv.c) ---- */

struct proc_env {
    char *env;                   /* its environment as it was started with it: NAME=VALUE */
    size_t len;                  /* strings, each NUL-ended, LEN bytes in all (malloc'd) */
    char cwd[PATH_MAX];          /* its working directory now */
    char failed[64];             /* after a failure: the /proc file that could not be read */
};
/* Reads process PID's /proc/PID/environ and /proc/PID/cwd: 0, or -1 with errno (ENOENT: no such
 * process; EACCES: another user's) and FAILED naming the file. */
int proc_env_read(long pid, struct proc_env *pe);
/* The value of NAME in PE's environment; NULL when it has none. */
const char *proc_env_value(const struct proc_env *pe, const char *name);
/* PATH as the process means it: as it is when absolute, else under its working directory
 * (malloc'd).  The directory is the one now: a relative path the process resolved before a
 * chdir is not found again. */
char *proc_env_path(const struct proc_env *pe, const char *path);
void proc_env_free(struct proc_env *pe);
/* The effective user of process PID (/proc/PID/status), or (uid_t)-1 when it cannot be read. */
uid_t proc_uid(long pid);

/* ---- another process's listening Unix sockets (procsock.c) ---- */
/* The path (malloc'd) a listening Unix socket of process PID was bound to, the first that
 * WANTED accepts (called with each bound path, CTX); NULL when none is found or the process's
 * descriptors cannot be read.  The path is the one given to bind: a socket renamed since has
 * another name now. */
char *proc_listening_socket(long pid, int (*wanted)(const char *path, void *ctx), void *ctx);

/* ---- the machine an ELF file is for (elfmachine.c) ---- */

struct elf_machine {
    char name[40];  /* "aarch64", "x86-64"; "64-bit machine N" for one not known here */
    char qemu[20];  /* the qemu-user emulator that runs it ("qemu-aarch64"); "" when not known */
    int own;        /* the machine this tool was built for */
};
/* 0 with *M filled when PATH starts with an ELF header; -1 otherwise (or unreadable). */
int elf_machine(const char *path, struct elf_machine *m);

/* ---- helpers (util.c) ---- */

void *xmalloc(size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Whether S ends with SUFFIX; strcmp for qsort over an array of strings. */
int has_suffix(const char *s, const char *suffix);
int cmp_strp(const void *a, const void *b);

/* "812 ns", "81.23 µs", "81.23 ms", "1.23 s" — into a fresh string. */
char *fmt_duration(double ns);

/* A text table: cells are owned strings; columns are right-aligned unless marked left. Widths
 * count UTF-8 characters, not bytes, so "µs" lines up. */
struct table {
    size_t ncols, nrows, cap;
    const char *left;          /* per column: 'l' left-aligned, anything else right-aligned */
    char **cells;              /* nrows * ncols */
};
void table_init(struct table *t, size_t ncols, const char *align);
void table_row(struct table *t, ...);      /* ncols strings, each taken over (freed later) */
void table_row_of(struct table *t, char **cells); /* the same from an array of ncols */
void table_print(struct table *t, const char *indent);
void table_free(struct table *t);

#endif
