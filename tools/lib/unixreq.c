/* unixreq.c — one request over a Unix stream socket, bounded in time and size: connect, send a
 * line, read the answer until the peer closes.  `spanprof serve` asks running processes for their
 * profile this way (live/protocol.h); nothing here knows what is asked or answered. */
#include "lib/lib.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* Waits until FD is ready for EVENTS or the deadline passes: 0, or -1 (errno ETIMEDOUT). */
static int wait_fd(int fd, short events, double deadline)
{
    for (;;) {
        double left = deadline - now_s();
        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct pollfd p = {fd, events, 0};
        int r = poll(&p, 1, (int)(left * 1000) + 1);
        if (r > 0)
            return 0;
        if (r < 0 && errno != EINTR)
            return -1;
    }
}

int unix_request(const char *path, const char *request, double timeout, size_t max, char **out,
                 size_t *outlen, int *gone, char *err, size_t errlen)
{
    double deadline = now_s() + timeout;
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    *gone = 0;
    if (strlen(path) >= sizeof addr.sun_path)
        return fail(err, errlen, "the socket path is longer than %zu bytes", sizeof addr.sun_path - 1);
    strcpy(addr.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return fail(err, errlen, "socket: %s", strerror(errno));
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        if (errno == ECONNREFUSED || errno == ENOENT)
            *gone = 1;  /* nobody listens: the process has ended */
        if (errno != EINPROGRESS && errno != EAGAIN) {
            int e = errno;
            close(fd);
            return fail(err, errlen, "connect: %s", strerror(e));
        }
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        if (wait_fd(fd, POLLOUT, deadline) || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) || soerr) {
            int e = soerr ? soerr : errno;
            close(fd);
            return fail(err, errlen, "connect: %s", strerror(e));
        }
    }
    size_t sent = 0, reqlen = strlen(request);
    while (sent < reqlen) {
        ssize_t w = send(fd, request + sent, reqlen - sent, MSG_NOSIGNAL);
        if (w > 0) {
            sent += (size_t)w;
            continue;
        }
        if (w < 0 && errno != EAGAIN && errno != EINTR) {
            int e = errno;
            close(fd);
            return fail(err, errlen, "send: %s", strerror(e));
        }
        if (wait_fd(fd, POLLOUT, deadline)) {
            int e = errno;
            close(fd);
            return fail(err, errlen, "send: %s", e == ETIMEDOUT ? "timed out" : strerror(e));
        }
    }
    size_t cap = 65536, n = 0;
    char *buf = xmalloc(cap + 1);
    for (;;) {
        if (n == cap) {
            if (cap >= max) {
                free(buf);
                close(fd);
                return fail(err, errlen, "the answer is longer than %zu bytes", max);
            }
            cap = cap * 2 > max ? max : cap * 2;
            buf = xrealloc(buf, cap + 1);
        }
        ssize_t r = recv(fd, buf + n, cap - n, 0);
        if (r > 0) {
            n += (size_t)r;
            continue;
        }
        if (r == 0)
            break;
        if (errno != EAGAIN && errno != EINTR) {
            int e = errno;
            free(buf);
            close(fd);
            return fail(err, errlen, "recv: %s", strerror(e));
        }
        if (wait_fd(fd, POLLIN, deadline)) {
            int e = errno;
            free(buf);
            close(fd);
            return fail(err, errlen, "no complete answer: %s",
                        e == ETIMEDOUT ? "timed out" : strerror(e));
        }
    }
    close(fd);
    buf[n] = 0;
    *out = buf;
    *outlen = n;
    return 0;
}
