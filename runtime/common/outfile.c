/* outfile.c — what the runtime trusts at an output path, and opening it.  The normal writer
 * (output.c) and the crash writer (safefolded.c) both open their files here, so the rule is
 * written once:
 *
 *  - Nothing there, or a regular file: a new temporary file ".NAME.PID[TAG].tmp" is created in
 *    the same directory (O_EXCL | O_NOFOLLOW, so nothing planted under that name is followed)
 *    and renamed over PATH once complete.  A reader never sees half a file, and rename replaces
 *    the directory entry, never a file that another name links to.  NAME is shortened so the
 *    temporary name fits NAME_MAX.
 *  - A symbolic link: followed only when it belongs to the user running the program (the
 *    effective uid) or to root — the user's own redirection, such as /dev/stdout.  A link of
 *    anyone else is refused and its target left alone: in a shared directory another user could
 *    otherwise point the profile of a privileged program at any file.
 *  - Whatever is not a regular file (a FIFO, socket, device or directory, at PATH or behind a
 *    followed link) is refused and left alone, with two exceptions a user asks for on purpose:
 *    /dev/null, and the very file the program's own stdout or stderr is (SPANPROF_FOLDED=
 *    /dev/stdout into a pipe).  Those are opened O_NONBLOCK — opening never waits for a reader —
 *    and every write waits for room at most SPANPROF__OUTFILE_STALL_MS: a reader that stops
 *    reading costs the program that long, not forever (at exit, on SIGTERM or in the crash
 *    handler alike).
 *  - A regular file behind a followed link is written in place, truncated first.
 *  - But the regular file that is the program's own stdout or stderr, however PATH reaches it
 *    (/dev/stdout, /dev/fd/2, /proc/self/fd/1, a link, the redirected file's own name: the same
 *    st_dev and st_ino as fstat(1) or fstat(2)), is appended to through a duplicate of that
 *    descriptor, never truncated or replaced: `SPANPROF_FOLDED=/dev/stdout ./app > out.txt` keeps
 *    every line the program wrote, and the duplicate shares the descriptor's offset (and O_APPEND
 *    under >>), so the program's later writes land after the profile, not over it.  A pipe or
 *    terminal there (above) gets a descriptor of its own, which appends all the same.
 *
 * A process about to die (a crash, or a terminating signal the writer thread did not answer in
 * time) removes the temporary files other threads were writing (spanprof__outfile_abandon).
 *
 * Every decision is re-checked on the opened descriptor (fstat), so a file swapped in between
 * the look and the open is refused too.  Only the last component of PATH is examined: links in
 * its directories are the directory owner's business, as for any program.
 *
 * Async-signal-safe (no malloc, stdio or lock) but for spanprof__outfile_stream: the crash
 * writer runs in a handler.  Nothing else of the runtime is used: the spanprof tool writes its
 * outputs through here too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "common/outfile.h"

/* 1 or 2 when the file described by ST is the program's own stdout or stderr, else 0. */
static int own_std(const struct stat *st)
{
    for (int fd = 1; fd <= 2; fd++) {
        struct stat std;
        if (fstat(fd, &std) == 0 && std.st_dev == st->st_dev && std.st_ino == st->st_ino &&
            (std.st_mode & S_IFMT) == (st->st_mode & S_IFMT))
            return fd;
    }
    return 0;
}

/* Whether the file described by ST may be written although it is not a regular file. */
static int special_allowed(const struct stat *st)
{
    if (S_ISCHR(st->st_mode) && st->st_rdev == makedev(1, 3)) /* /dev/null */
        return 1;
    return own_std(st) != 0;
}

size_t spanprof__format_u64(char *buf, uint64_t v)
{
    char rev[24];
    size_t n = 0;
    do
        rev[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    for (size_t i = 0; i < n; i++)
        buf[i] = rev[n - 1 - i];
    buf[n] = 0;
    return n;
}

/* The temporary file's name for PATH into OF->tmp: ".NAME.PID" TAG ".tmp" in PATH's directory. */
static int temp_name(const char *path, const char *tag, struct spanprof__outfile *of)
{
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path + 1) : 0, baselen = strlen(path + dirlen);
    char pid[24];
    size_t pidlen = spanprof__format_u64(pid, (uint64_t)getpid()), taglen = strlen(tag);
    size_t extra = 1 + 1 + pidlen + taglen + 4; /* "." NAME "." PID TAG ".tmp" */
    if (baselen + extra > NAME_MAX)
        baselen = NAME_MAX > extra ? NAME_MAX - extra : 0;
    if (dirlen + baselen + extra + 1 > sizeof of->tmp)
        return ENAMETOOLONG;
    char *p = of->tmp;
    memcpy(p, path, dirlen), p += dirlen;
    *p++ = '.';
    memcpy(p, path + dirlen, baselen), p += baselen;
    *p++ = '.';
    memcpy(p, pid, pidlen), p += pidlen;
    memcpy(p, tag, taglen), p += taglen;
    memcpy(p, ".tmp", sizeof ".tmp");
    return 0;
}

/* The temporary files being written, so that a process about to die leaves none behind
 * (spanprof__outfile_abandon): slots claimed with a compare-and-swap, a handful at most (the
 * writer thread's, a live snapshot's, the crash writer's).  A slot is claimed before the file is
 * created and the flag looked at after, so a file created while the process is being abandoned
 * is either in the table when it is emptied or removed by its own writer. */
#define WRITING_MAX 8
static struct spanprof__outfile *writing[WRITING_MAX];
static int abandoned;

/* The slot holding WAS now holds NOW: 1, or 0 when none held WAS (the table was full, or
 * spanprof__outfile_abandon emptied it). */
static int note_writing(struct spanprof__outfile *was, struct spanprof__outfile *now)
{
    for (size_t i = 0; i < WRITING_MAX; i++) {
        struct spanprof__outfile *seen = was;
        if (__atomic_compare_exchange_n(&writing[i], &seen, now, 0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_RELAXED))
            return 1;
    }
    return 0;
}

void spanprof__outfile_abandon(void)
{
    __atomic_store_n(&abandoned, 1, __ATOMIC_SEQ_CST);
    for (size_t i = 0; i < WRITING_MAX; i++) {
        struct spanprof__outfile *of = __atomic_exchange_n(&writing[i], NULL, __ATOMIC_SEQ_CST);
        if (of)
            unlink(of->tmp);
    }
}

int spanprof__outfile_open(const char *path, const char *tag, struct spanprof__outfile *of)
{
    of->fd = -1;
    of->in_place = 0;
    of->noted = 0;
    of->own = 0;
    of->tmp[0] = 0;
    struct stat st;
    int exists = lstat(path, &st) == 0;
    if (!exists && errno != ENOENT)
        return errno;
    if (exists && S_ISLNK(st.st_mode) && st.st_uid != geteuid() && st.st_uid != 0)
        return SPANPROF__OUTFILE_FOREIGN_LINK;
    /* The program's own stdout or stderr, a regular file: its descriptor, duplicated.  Opening
     * PATH again would start at offset 0 (and truncate), renaming would take the name away from
     * the file the program writes.  Nothing to re-check: whatever PATH names by now, only the
     * program's own descriptor is written. */
    struct stat target;
    int own = exists && stat(path, &target) == 0 && S_ISREG(target.st_mode) ? own_std(&target) : 0;
    if (own) {
        of->fd = fcntl(own, F_DUPFD_CLOEXEC, 0);
        if (of->fd < 0)
            return errno;
        of->in_place = 1;
        of->own = own;
        return 0;
    }
    if (!exists || S_ISREG(st.st_mode)) {
        int err = temp_name(path, tag, of);
        if (err)
            return err;
        unlink(of->tmp); /* a stale one: a process of this pid killed while writing */
        of->noted = note_writing(NULL, of);
        of->fd = open(of->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        err = of->fd < 0 ? errno : 0;
        if (!err && __atomic_load_n(&abandoned, __ATOMIC_SEQ_CST)) {
            unlink(of->tmp);
            err = SPANPROF__OUTFILE_ABANDONED;
        }
        if (err) {
            if (of->noted)
                note_writing(of, NULL);
            if (of->fd >= 0)
                close(of->fd);
            of->fd = -1;
        }
        return err;
    }
    /* A trusted link, or a file that is not a regular one: look at what is really there. */
    int flags = O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
    if (stat(path, &target) == 0) {
        if (!S_ISREG(target.st_mode) && !special_allowed(&target))
            return SPANPROF__OUTFILE_NOT_REGULAR;
    } else if (errno == ENOENT && S_ISLNK(st.st_mode)) {
        flags |= O_CREAT; /* the user's own link to a file not there yet */
    } else {
        return errno;
    }
    of->fd = open(path, flags, 0666);
    if (of->fd < 0)
        return errno == ENXIO ? SPANPROF__OUTFILE_NOT_REGULAR : errno; /* ENXIO: a FIFO */
    of->in_place = 1;
    int err = 0;
    if (fstat(of->fd, &target) != 0)
        err = errno;
    else if (!S_ISREG(target.st_mode) && !special_allowed(&target))
        err = SPANPROF__OUTFILE_NOT_REGULAR; /* swapped in since the look */
    else if (S_ISREG(target.st_mode) && ftruncate(of->fd, 0) != 0)
        err = errno;
    else
        of->own = own_std(&target);
    if (err) {
        close(of->fd);
        of->fd = -1;
    }
    return err;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int spanprof__outfile_write(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    int64_t deadline = -1; /* set at the first write that would block */
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w > 0) {
            p += w, len -= (size_t)w;
            deadline = -1;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w == 0 || errno != EAGAIN)
            return w == 0 ? EIO : errno;
        int64_t now = now_ms();
        if (deadline < 0)
            deadline = now + SPANPROF__OUTFILE_STALL_MS;
        if (now >= deadline)
            return ETIMEDOUT;
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        if (poll(&pfd, 1, (int)(deadline - now)) < 0 && errno != EINTR)
            return errno;
    }
    return 0;
}

int spanprof__outfile_finish(struct spanprof__outfile *of, const char *path, int err)
{
    if (of->fd >= 0 && close(of->fd) != 0 && !err)
        err = errno;
    of->fd = -1;
    if (of->in_place)
        return err;
    if (of->noted && !note_writing(of, NULL))
        return SPANPROF__OUTFILE_ABANDONED; /* already removed: nothing to rename */
    if (!err && rename(of->tmp, path) != 0)
        err = errno;
    if (err)
        unlink(of->tmp);
    return err;
}

const char *spanprof__outfile_reason(int err)
{
    switch (err) {
    case SPANPROF__OUTFILE_FOREIGN_LINK:
        return "a symbolic link owned by another user; not followed";
    case SPANPROF__OUTFILE_ABANDONED:
        return "the process is dying of a signal; left out";
    case SPANPROF__OUTFILE_NOT_REGULAR:
        return "not a regular file; left alone";
    case ETIMEDOUT:
        return "its reader took no data for 2 s"; /* SPANPROF__OUTFILE_STALL_MS */
    }
    const char *reason = strerrordesc_np(err);
    return reason ? reason : "unknown error";
}

static ssize_t stream_write(void *cookie, const char *buf, size_t size)
{
    int err = spanprof__outfile_write(*(int *)cookie, buf, size);
    if (err) {
        errno = err;
        return -1;
    }
    return (ssize_t)size;
}

FILE *spanprof__outfile_stream(struct spanprof__outfile *of)
{
    return fopencookie(&of->fd, "w", (cookie_io_functions_t){.write = stream_write});
}

void spanprof__safe_flush(struct spanprof__safe_out *o)
{
    if (!o->err)
        o->err = spanprof__outfile_write(o->fd, o->buf, o->len);
    o->len = 0;
}

void spanprof__safe_put(struct spanprof__safe_out *o, const char *s, size_t len)
{
    while (len) {
        size_t k = sizeof o->buf - o->len < len ? sizeof o->buf - o->len : len;
        memcpy(o->buf + o->len, s, k);
        o->len += k, s += k, len -= k;
        if (o->len == sizeof o->buf)
            spanprof__safe_flush(o);
    }
}
