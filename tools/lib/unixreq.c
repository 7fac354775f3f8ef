/* unixreq.c — requests over Unix stream sockets, bounded in time and size: connect, check who
 * listens (SO_PEERCRED), send a line, read the answer until the peer closes.  Many sockets are
 * asked at once, in one poll loop with one deadline, so one that never answers costs the others
 * nothing.  `spanprof serve` asks running processes for their profile this way
 * (live/protocol.h); nothing here knows what is asked or answered. */
#define _GNU_SOURCE   /* struct ucred */
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

enum { PHASE_CONNECT, PHASE_SEND, PHASE_RECV, PHASE_DONE };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Ends R with STATUS and the message FMT (none when NULL). */
static void finish(struct unix_req *r, int status, const char *fmt, ...)
{
    r->status = status;
    r->err[0] = 0;
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->err, sizeof r->err, fmt, ap);
        va_end(ap);
    }
    if (status != UNIX_REQ_OK) {
        free(r->answer);
        r->answer = NULL;
        r->len = 0;
    }
    if (r->fd_ >= 0)
        close(r->fd_);
    r->fd_ = -1;
    r->phase_ = PHASE_DONE;
}

/* Connected: the peer must be one of R's users; then the request is sent. */
static void connected(struct unix_req *r)
{
    struct ucred peer;
    socklen_t len = sizeof peer;
    if (getsockopt(r->fd_, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0) {
        finish(r, UNIX_REQ_ERROR, "SO_PEERCRED: %s", strerror(errno));
        return;
    }
    r->peer_uid = peer.uid;
    int allowed = r->npeers == 0;
    for (size_t i = 0; i < r->npeers && !allowed; i++)
        allowed = r->peers[i] == peer.uid;
    if (!allowed) {
        finish(r, UNIX_REQ_PEER, "the process listening runs as uid %lu", (unsigned long)peer.uid);
        return;
    }
    r->phase_ = PHASE_SEND;
}

static void start(struct unix_req *r)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    r->status = UNIX_REQ_ERROR;
    r->answer = NULL;
    r->len = 0;
    r->sent_ = 0;
    r->fd_ = -1;
    if (strlen(r->path) >= sizeof addr.sun_path) {
        finish(r, UNIX_REQ_ERROR, "the socket path is longer than %zu bytes", sizeof addr.sun_path - 1);
        return;
    }
    strcpy(addr.sun_path, r->path);
    r->fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (r->fd_ < 0) {
        finish(r, UNIX_REQ_ERROR, "socket: %s", strerror(errno));
        return;
    }
    r->phase_ = PHASE_CONNECT;
    if (connect(r->fd_, (struct sockaddr *)&addr, sizeof addr) == 0) {
        connected(r);
    } else if (errno == ECONNREFUSED || errno == ENOENT) {
        finish(r, UNIX_REQ_GONE, "connect: %s", strerror(errno)); /* nobody listens: ended */
    } else if (errno != EINPROGRESS && errno != EAGAIN) {
        finish(r, UNIX_REQ_ERROR, "connect: %s", strerror(errno));
    }
}

/* One step of R after poll said EVENTS. */
static void step(struct unix_req *r, const char *request, size_t max, short events)
{
    if (r->phase_ == PHASE_CONNECT) {
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        if (getsockopt(r->fd_, SOL_SOCKET, SO_ERROR, &soerr, &sl) || soerr) {
            int e = soerr ? soerr : errno;
            finish(r, e == ECONNREFUSED ? UNIX_REQ_GONE : UNIX_REQ_ERROR, "connect: %s", strerror(e));
            return;
        }
        connected(r);
        return;
    }
    if (r->phase_ == PHASE_SEND) {
        size_t reqlen = strlen(request);
        ssize_t w = send(r->fd_, request + r->sent_, reqlen - r->sent_, MSG_NOSIGNAL);
        if (w < 0 && errno != EAGAIN && errno != EINTR) {
            finish(r, UNIX_REQ_ERROR, "send: %s", strerror(errno));
            return;
        }
        if (w > 0 && (r->sent_ += (size_t)w) == reqlen) {
            r->phase_ = PHASE_RECV;
            r->cap_ = 0;
        }
        return;
    }
    (void)events;
    for (;;) {
        if (r->len == r->cap_) {
            if (r->cap_ >= max) {
                finish(r, UNIX_REQ_ERROR, "the answer is longer than %zu bytes", max);
                return;
            }
            r->cap_ = r->cap_ ? (r->cap_ * 2 > max ? max : r->cap_ * 2) : (max < 65536 ? max : 65536);
            r->answer = xrealloc(r->answer, r->cap_ + 1);
        }
        ssize_t k = recv(r->fd_, r->answer + r->len, r->cap_ - r->len, 0);
        if (k > 0) {
            r->len += (size_t)k;
            continue;
        }
        if (k == 0) {
            r->answer[r->len] = 0;
            finish(r, UNIX_REQ_OK, NULL);
        } else if (errno != EAGAIN && errno != EINTR) {
            finish(r, UNIX_REQ_ERROR, "recv: %s", strerror(errno));
        }
        return;
    }
}

void unix_requests(struct unix_req *reqs, size_t n, const char *request, double timeout, size_t max)
{
    double deadline = now_s() + timeout;
    for (size_t i = 0; i < n; i++)
        start(&reqs[i]);
    struct pollfd *p = xmalloc((n + 1) * sizeof *p);
    for (;;) {
        size_t np = 0;
        for (size_t i = 0; i < n; i++)
            if (reqs[i].phase_ != PHASE_DONE)
                p[np++] = (struct pollfd){reqs[i].fd_, reqs[i].phase_ == PHASE_RECV ? POLLIN : POLLOUT, 0};
        if (np == 0)
            break;
        double left = deadline - now_s();
        int r = left > 0 ? poll(p, np, (int)(left * 1000) + 1) : 0;
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {   /* the deadline (or poll failing): what has not ended ends now */
            const char *why = r < 0 ? strerror(errno) : "timed out";
            for (size_t i = 0; i < n; i++)
                if (reqs[i].phase_ != PHASE_DONE)
                    finish(&reqs[i], r < 0 ? UNIX_REQ_ERROR : UNIX_REQ_TIMEOUT,
                           reqs[i].phase_ == PHASE_RECV ? "no complete answer: %s" : "no answer: %s", why);
            break;
        }
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (reqs[i].phase_ == PHASE_DONE)
                continue;
            short ev = p[k++].revents;
            if (ev)
                step(&reqs[i], request, max, ev);
        }
    }
    free(p);
}
