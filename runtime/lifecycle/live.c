/* live.c — SPANPROF_LIVE=DIR: each process offers its profile, as it is now, to `spanprof serve`
 * through a Unix socket of its own in DIR, and leaves its last one there when it ends
 * (live/protocol.h says what is where and what is said).
 *
 * Why a socket and a thread of its own, and not the dump signal: a signal interrupts the
 * program's blocking calls (EINTR) every time it is sent, which is fine on demand and not every
 * few seconds for the life of a server.  The socket is a file in a directory of the user's (mode
 * 0700, made here if missing), so only that user (and root) can connect; the peer's credentials
 * are checked too.  Nothing listens on the network.
 *
 * The live thread is made with the first span of a process (a process that records nothing
 * offers nothing), with every signal blocked.  It waits for the request lines of up to
 * MAX_PENDING connections at once (1 s each; a newer connection closes the oldest waiting one
 * once it has waited EVICT_AFTER_MS with nothing read),
 * so clients that connect and say nothing cannot hold up one that asks; it answers one at a
 * time: capture under the process lock as every write does (threads that start wait; recording
 * threads never do), render into memory, release the lock, send (5 s at most in all, MSG_NOSIGNAL:
 * a client that goes away must not raise SIGPIPE in the program).  Every answer is taken after its
 * request came, but the requests wait their turn: at most one answer every ANSWER_GAP_MS, and a
 * snapshot of one kind at most every CAPTURE_GAP_MS.  However often clients ask, the program
 * makes at most ten captures a second of each kind for them and answers at most 200 requests
 * (each answer costs about 17 µs even for an error; a client asking in a loop took 30 % of a
 * CPU without the gap).  A client that ends its request (shutdown) without a whole line is
 * answered as at once, with an error.  The same thread lists and switches spans by request
 * (`spanprof spans`: collect/spanswitch.c, which may wait up to a second for calls in progress),
 * and settles the spans a request left stopping every 20 ms until they are off.
 *
 * Fork: the child closes the parent's socket (without removing its name) and makes its own.
 * Exec: the ending image leaves its final snapshot; the new one, if it records with
 * SPANPROF_LIVE, takes over the socket's name (same pid).  Exit (and a terminating signal the
 * runtime handles): the final snapshot, then the socket's name is removed.  A privileged program
 * (AT_SECURE) never gets here: its SPANPROF_* variables are ignored (start.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lifecycle/lifecycle.h"
#include "live/protocol.h"
#include "collect/spanswitch.h"

#define REQUEST_WAIT_MS 1000 /* for the request line */
#define SEND_WAIT_S 5        /* for the client to take the snapshot */
#define MAX_PENDING 32       /* connections waiting for their request line */
#define EVICT_AFTER_MS 200   /* a connection still without its line may lose its place after this */
#define CAPTURE_GAP_MS 100   /* between two snapshots of one kind: at most ten a second */
#define ANSWER_GAP_MS 5      /* between two answers: at most 200 a second */

static char dir[PATH_MAX];  /* absolute; "" when SPANPROF_LIVE is unset or unusable */
static char host[256];
static int listen_fd = -1;
static pid_t live_pid;      /* the process whose socket and thread these are; 0: none */
static pthread_t live_thread;
static uint64_t seq;        /* snapshots taken by this image (the live thread and the last one) */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* starting, stopping, final */

static void fork_child(void);

static void warn(const char *what, int err)
{
    fprintf(stderr, "spanprof: warning: SPANPROF_LIVE='%s': %s%s%s; no live profile\n", dir, what,
            err ? ": " : "", err ? strerror(err) : "");
}

/* DIR as an absolute path (a later chdir of the program does not move it), made with mode 0700
 * if missing; it must be a directory of this user's, writable by no one else. */
int spanprof__live_setup(const char *path)
{
    if (!path)
        return 0;
    if (path[0] == '/' || !getcwd(dir, sizeof dir - 64 - strlen(path)))
        snprintf(dir, sizeof dir, "%s", path);
    else
        snprintf(dir + strlen(dir), sizeof dir - strlen(dir), "/%s", path);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        warn("cannot make the directory", errno);
        dir[0] = 0;
        return 0;
    }
    struct stat st;
    const char *bad = NULL;
    int err = 0;
    if (lstat(dir, &st) != 0)
        bad = "cannot read the directory", err = errno;
    else if (!S_ISDIR(st.st_mode))
        bad = "not a directory";
    else if (st.st_uid != geteuid())
        bad = "a directory of another user";
    else if (st.st_mode & (S_IWGRP | S_IWOTH))
        bad = "a directory others can write to";
    if (bad) {
        warn(bad, err);
        dir[0] = 0;
        return 0;
    }
    if (gethostname(host, sizeof host) != 0)
        host[0] = 0;
    host[sizeof host - 1] = 0;
    pthread_atfork(NULL, NULL, fork_child);
    return 1;
}

static int sock_path(char *out, size_t size, pid_t pid, const char *prefix, const char *suffix)
{
    int n = snprintf(out, size, "%s/%s%ld%s", dir, prefix, (long)pid, suffix);
    return n > 0 && (size_t)n < size && (size_t)n < sizeof ((struct sockaddr_un *)0)->sun_path
               ? 0 : -1;
}

/* The snapshot of this moment, rendered into a buffer (*BUF, *LEN; free it); its stacks too
 * with STACKS. */
static int snapshot(char **buf, size_t *len, int stacks)
{
    *buf = NULL;
    FILE *mem = open_memstream(buf, len);
    if (!mem)
        return -1;
    struct spanprof__capture c;
    int rc = -1;
    if (spanprof__capture_begin(&c, &spanprof__outputs) == 0) {
        struct spanprof__live_meta meta = {
            .host = host,
            .start_unix_ns = (uint64_t)spanprof__g.start_real_sec * 1000000000u +
                             (uint64_t)spanprof__g.start_real_nsec,
            .seq = __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED),
        };
        rc = spanprof__live_snapshot_write(mem, &c, &meta, stacks);
        spanprof__capture_end(&c);
    }
    if (fclose(mem) != 0)
        rc = -1;
    if (rc) {
        free(*buf);
        *buf = NULL;
    }
    return rc;
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The N bytes at P to the connection FD within SEND_WAIT_S in all (a timeout per send would
 * start again with each part a client takes: one reading a little at a time could keep the live
 * thread for as long as it liked). */
static int send_all(int fd, const char *p, size_t n)
{
    long end_ms = now_ms() + SEND_WAIT_S * 1000;
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
            struct pollfd room = {fd, POLLOUT, 0};
            long left = end_ms - now_ms();
            if (left <= 0 || (poll(&room, 1, (int)left) < 0 && errno != EINTR))
                return -1;
            continue;
        }
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Whether LINE (GOT bytes) starts with the request REQ. */
static int is_request(const char *line, size_t got, const char *req)
{
    size_t n = strlen(req);
    return got >= n && memcmp(line, req, n) == 0;
}

/* The requests (live/protocol.h).  The two snapshots' values index captured_ms. */
enum request {
    UNKNOWN = -1,
    SPANS = 0,    /* SPANPROF_LIVE_REQUEST_SPANS: a snapshot without stacks */
    SNAPSHOT = 1, /* SPANPROF_LIVE_REQUEST */
    SITES,        /* SPANPROF_LIVE_REQUEST_SITES */
    SWITCH_ON,    /* SPANPROF_LIVE_REQUEST_SWITCH_ON GLOBS */
    SWITCH_OFF    /* SPANPROF_LIVE_REQUEST_SWITCH_OFF GLOBS */
};

/* Which request the line LINE (GOT bytes) is; UNKNOWN without a newline. */
static enum request request_of(const char *line, size_t got)
{
    if (!memchr(line, '\n', got))
        return UNKNOWN;
    return is_request(line, got, SPANPROF_LIVE_REQUEST)              ? SNAPSHOT
           : is_request(line, got, SPANPROF_LIVE_REQUEST_SPANS)      ? SPANS
           : is_request(line, got, SPANPROF_LIVE_REQUEST_SITES)      ? SITES
           : is_request(line, got, SPANPROF_LIVE_REQUEST_SWITCH_ON)  ? SWITCH_ON
           : is_request(line, got, SPANPROF_LIVE_REQUEST_SWITCH_OFF) ? SWITCH_OFF
                                                                      : UNKNOWN;
}

/* When the last snapshot of each kind (spans only, whole) was taken: the next of its kind waits
 * until CAPTURE_GAP_MS after it, so that clients asking in a loop cost the program at most
 * 1000 / CAPTURE_GAP_MS captures a second of each kind, and every answer is still taken after its
 * request came.  The live thread's alone. */
static long captured_ms[2];

static void send_text(int fd, const char *text)
{
    send_all(fd, text, strlen(text));
}

/* A switch's answer: the listing, or the error its result RC says (GLOBS, the request's, named). */
static void answer_switch(int fd, const char *globs, int on)
{
    char *buf = NULL, error[SPANPROF_LIVE_REQUEST_MAX + 64];
    size_t n = 0;
    int rc = spanprof__switch_spans(globs, on, &buf, &n);
    if (rc == 0)
        send_all(fd, buf, n);
    else if (rc == SPANPROF__SWITCH_NO_MATCH) {
        snprintf(error, sizeof error, "error no span matches %s\n", globs);
        send_text(fd, error);
    } else
        send_text(fd, rc == SPANPROF__SWITCH_REFUSED
                          ? "error patching is refused here (the warning on the program's "
                            "standard error says why)\n"
                          : "error out of memory\n");
    free(buf);
}

/* Answers REQUEST, whose line is LINE (NUL-terminated). */
static void answer(int fd, enum request request, char *line)
{
    char *buf = NULL;
    size_t n;
    switch (request) {
    case UNKNOWN:
        send_text(fd, "error unknown request\n");
        return;
    case SITES:
        if (spanprof__switch_list(&buf, &n))
            send_text(fd, "error out of memory\n");
        else
            send_all(fd, buf, n);
        free(buf);
        return;
    case SWITCH_ON:
    case SWITCH_OFF: {
        const char *prefix =
            request == SWITCH_ON ? SPANPROF_LIVE_REQUEST_SWITCH_ON : SPANPROF_LIVE_REQUEST_SWITCH_OFF;
        char *globs = line + strlen(prefix);
        globs[strcspn(globs, "\n")] = 0;
        answer_switch(fd, globs, request == SWITCH_ON);
        return;
    }
    case SPANS:
    case SNAPSHOT:
        break;
    }
    if (snapshot(&buf, &n, request == SNAPSHOT) != 0) {
        send_text(fd, "error out of memory\n");
        return;
    }
    captured_ms[request] = now_ms();
    send_all(fd, buf, n);
    free(buf);
}

/* The connection being answered, -1 between them: the end shuts it down too, so that a client
 * that stopped reading does not hold the program's exit for SEND_WAIT_S.  Set and closed under
 * conn_lock, so the end never shuts down a descriptor number the program reuses. */
static int conn_fd = -1;
static pthread_mutex_t conn_lock = PTHREAD_MUTEX_INITIALIZER;

/* Connections accepted and not answered yet: each waits at most REQUEST_WAIT_MS for its request
 * line, at most MAX_PENDING of them (a newer one closes the oldest still without its line once
 * that has waited EVICT_AFTER_MS; until then, and while every place holds a request waiting its
 * turn, new ones wait in the backlog), so clients that connect and say nothing cannot keep
 * another's request from being answered, and many clients asking at once (each slow to send on a
 * busy host) are all answered. */
static struct pending {
    int fd;                      /* -1: a free place */
    long since_ms;
    size_t got;
    int ready;                   /* its line is complete: answered in its turn */
    char line[SPANPROF_LIVE_REQUEST_MAX + 1];
} pending[MAX_PENDING];

static void drop(struct pending *p)
{
    /* the place is free before the descriptor closes: a fork in between must not leave the
     * child a number the program may have reused by the time the child closes it */
    int fd = p->fd;
    __atomic_store_n(&p->fd, -1, __ATOMIC_RELEASE);
    close(fd);
}

/* Reads what P's client sent: ready to be answered once its line is complete, closed when it
 * hung up. */
static void read_more(struct pending *p)
{
    ssize_t k = recv(p->fd, p->line + p->got, sizeof p->line - 1 - p->got, 0);
    if (k < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (k < 0) {
        drop(p);
        return;
    }
    p->got += (size_t)k;
    if (k == 0) /* the client has said all it will: answered as it is */
        p->ready = 1;
    if (memchr(p->line, '\n', p->got) || p->got == sizeof p->line - 1)
        p->ready = 1;
}

/* The place a new connection may take at NOW: a free one, else that of the oldest connection
 * still without its line once it has waited EVICT_AFTER_MS (what it sent is read first: a line
 * waiting unread keeps its place); NULL when there is none, and *RETRY_MS (if not NULL) is set to
 * when one may become free. */
static struct pending *place_for_new(long now, long *retry_ms)
{
    struct pending *oldest = NULL;
    for (size_t i = 0; i < MAX_PENDING; i++) {
        if (pending[i].fd < 0)
            return &pending[i];
        if (!pending[i].ready && (!oldest || pending[i].since_ms < oldest->since_ms))
            oldest = &pending[i];
    }
    if (oldest && now - oldest->since_ms >= EVICT_AFTER_MS) {
        read_more(oldest);
        if (oldest->fd < 0 || !oldest->ready)
            return oldest; /* hung up, or still nothing: its place is free */
        return place_for_new(now, retry_ms); /* its line came: ask again */
    }
    if (retry_ms)
        *retry_ms = oldest ? oldest->since_ms + EVICT_AFTER_MS - now : -1;
    return NULL;
}

/* A connection from the listening socket FD: refused without a word unless its peer is this
 * user or root; else waiting for its request in the place place_for_new gives. */
static void take(int fd)
{
    struct pending *at = place_for_new(now_ms(), NULL);
    if (!at)
        return; /* it waits in the backlog */
    int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (c < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
            usleep(100000); /* out of descriptors: no busy loop */
        return;
    }
    struct ucred peer;
    socklen_t len = sizeof peer;
    if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 ||
        (peer.uid != geteuid() && peer.uid != 0)) {
        close(c);
        return;
    }
    if (at->fd >= 0) /* the oldest still without its line gives its place up */
        drop(at);
    *at = (struct pending){.fd = c, .since_ms = now_ms()};
}

/* Answers P, whose line is complete (or which said too much), then closes it. */
static void serve_one(struct pending *p)
{
    pthread_mutex_lock(&conn_lock);
    conn_fd = p->fd;
    pthread_mutex_unlock(&conn_lock);
    p->line[p->got] = 0;
    answer(p->fd, request_of(p->line, p->got), p->line);
    pthread_mutex_lock(&conn_lock);
    drop(p);
    conn_fd = -1;
    pthread_mutex_unlock(&conn_lock);
}

/* When P, whose request is all there, may be answered: ANSWER_GAP_MS after the last answer, and
 * a snapshot CAPTURE_GAP_MS after the last of its kind. */
static long turn_of(struct pending *p, long last_answer_ms)
{
    long turn = last_answer_ms + ANSWER_GAP_MS;
    enum request request = request_of(p->line, p->got);
    if ((request == SPANS || request == SNAPSHOT) && captured_ms[request] + CAPTURE_GAP_MS > turn)
        turn = captured_ms[request] + CAPTURE_GAP_MS;
    return turn;
}

static void *live_main(void *arg)
{
    int fd = (int)(intptr_t)arg;
    struct pollfd fds[MAX_PENDING + 1];
    struct pending *of[MAX_PENDING + 1];
    long last_answer_ms = now_ms() - ANSWER_GAP_MS;
    for (;;) {
        /* spans a request switched off that were still in calls go off when those end */
        long settle = spanprof__switch_serve(), now = now_ms(), wait = -1;
        nfds_t n = 0;
        /* new connections wait in the backlog while no place is free (place_for_new) */
        int room = place_for_new(now, &wait) != NULL;
        fds[n++] = (struct pollfd){fd, room ? POLLIN : 0, 0};
        for (size_t i = 0; i < MAX_PENDING; i++) {
            if (pending[i].fd < 0)
                continue;
            if (!pending[i].ready && now - pending[i].since_ms >= REQUEST_WAIT_MS) {
                /* Its line may have come in time and wait unread, while another client took its
                 * answer slowly (up to SEND_WAIT_S): read it before saying it never came. */
                read_more(&pending[i]);
                if (pending[i].fd >= 0 && !pending[i].ready)
                    serve_one(&pending[i]); /* no line in time */
                if (pending[i].fd < 0)
                    continue;
            }
            if (pending[i].ready) { /* its turn comes ANSWER_GAP_MS after the last answer */
                long turn = turn_of(&pending[i], last_answer_ms) - now;
                if (turn <= 0) {
                    serve_one(&pending[i]);
                    now = last_answer_ms = now_ms();
                } else if (wait < 0 || turn < wait) {
                    wait = turn;
                }
                continue;
            }
            long left = pending[i].since_ms + REQUEST_WAIT_MS - now;
            if (wait < 0 || left < wait)
                wait = left;
            of[n] = &pending[i];
            fds[n++] = (struct pollfd){pending[i].fd, POLLIN, 0};
        }
        if (settle >= 0 && (wait < 0 || settle < wait))
            wait = settle;
        int r = poll(fds, n, (int)wait);
        if (r < 0 && errno != EINTR)
            break;
        if (r <= 0)
            continue;
        if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL))
            break; /* shut down: the image ends or the runtime is unloaded */
        for (nfds_t i = 1; i < n; i++)
            if (fds[i].revents)
                read_more(of[i]);
        if (fds[0].revents & POLLIN)
            take(fd);
    }
    for (size_t i = 0; i < MAX_PENDING; i++)
        if (pending[i].fd >= 0)
            drop(&pending[i]);
    return NULL;
}

/* The socket, bound under a temporary name, made 0600, then renamed into place: a client never
 * finds the name before it answers.  A name left by an earlier image of this pid is replaced. */
static int open_socket(pid_t pid)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    char final[PATH_MAX];
    if (sock_path(a.sun_path, sizeof a.sun_path, pid, ".", SPANPROF_LIVE_SOCK_BOUND_SUFFIX) ||
        sock_path(final, sizeof final, pid, "", SPANPROF_LIVE_SOCK_SUFFIX)) {
        warn("the directory's name is too long for a socket", 0);
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    unlink(a.sun_path);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || chmod(a.sun_path, 0600) != 0 ||
        listen(fd, 16) != 0 || rename(a.sun_path, final) != 0) {
        int err = errno;
        unlink(a.sun_path);
        close(fd);
        warn("cannot make the socket", err);
        return -1;
    }
    return fd;
}

void spanprof__live_ensure(void)
{
    pid_t pid = getpid();
    if (!dir[0] || __atomic_load_n(&live_pid, __ATOMIC_ACQUIRE) == pid)
        return;
    pthread_mutex_lock(&lock);
    if (live_pid == pid) { /* another thread made it meanwhile: its places are in use */
        pthread_mutex_unlock(&lock);
        return;
    }
    for (size_t i = 0; i < MAX_PENDING; i++)
        pending[i].fd = -1;
    if ((listen_fd = open_socket(pid)) >= 0) {
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old); /* the new thread inherits the mask */
        if (pthread_create(&live_thread, NULL, live_main, (void *)(intptr_t)listen_fd) == 0) {
            pthread_setname_np(live_thread, "spanprof-live");
            __atomic_store_n(&live_pid, pid, __ATOMIC_RELEASE);
        } else {
            char name[PATH_MAX];
            if (sock_path(name, sizeof name, pid, "", SPANPROF_LIVE_SOCK_SUFFIX) == 0)
                unlink(name);
            close(listen_fd);
            listen_fd = -1;
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    pthread_mutex_unlock(&lock);
}

/* The final snapshot into DIR/PID.START.final, through a temporary name. */
static void leave_final(pid_t pid)
{
    char tmp[PATH_MAX], name[PATH_MAX], suffix[48];
    snprintf(suffix, sizeof suffix, ".%llu.tmp", (unsigned long long)spanprof__g.start_mono_ns);
    if (sock_path(tmp, sizeof tmp, pid, ".", suffix))
        return;
    snprintf(suffix, sizeof suffix, ".%llu%s", (unsigned long long)spanprof__g.start_mono_ns,
             SPANPROF_LIVE_FINAL_SUFFIX);
    if (sock_path(name, sizeof name, pid, "", suffix))
        return;
    char *buf;
    size_t n;
    if (snapshot(&buf, &n, 1) != 0)
        return;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    int ok = fd >= 0;
    for (size_t done = 0; ok && done < n;) {
        ssize_t k = write(fd, buf + done, n - done);
        if (k < 0 && errno == EINTR)
            continue;
        ok = k > 0;
        done += ok ? (size_t)k : 0;
    }
    if (fd >= 0 && close(fd) != 0)
        ok = 0;
    if (!ok || rename(tmp, name) != 0) {
        int err = errno;
        unlink(tmp);
        fprintf(stderr, "spanprof: error: cannot write '%s': %s\n", name, strerror(err));
    }
    free(buf);
}

/* No more answers: the socket's name goes, and shutdown wakes the thread out of accept to end.
 * Joined only when the runtime is unloaded: at exit the process ends it. */
static int ended;

static void end_answering(pid_t pid)
{
    char name[PATH_MAX];
    if (sock_path(name, sizeof name, pid, "", SPANPROF_LIVE_SOCK_SUFFIX) == 0)
        unlink(name);
    shutdown(listen_fd, SHUT_RDWR);
    pthread_mutex_lock(&conn_lock);
    if (conn_fd >= 0)
        shutdown(conn_fd, SHUT_RDWR);
    pthread_mutex_unlock(&conn_lock);
    ended = 1;
}

void spanprof__live_final(int ending)
{
    pid_t pid = getpid();
    if (__atomic_load_n(&live_pid, __ATOMIC_ACQUIRE) != pid)
        return;
    pthread_mutex_lock(&lock);
    if (live_pid == pid && !ended) {
        leave_final(pid);
        if (ending)
            end_answering(pid);
    }
    pthread_mutex_unlock(&lock);
}

/* In a fork child the live thread is gone and the socket is the parent's: closed (its name
 * stays: the parent still answers on it); the child makes its own if the parent had one. */
static void fork_child(void)
{
    pthread_mutex_init(&lock, NULL);
    pthread_mutex_init(&conn_lock, NULL);
    conn_fd = -1;
    int had = live_pid != 0;
    for (size_t i = 0; i < MAX_PENDING; i++)
        if (live_pid && pending[i].fd >= 0)
            close(pending[i].fd); /* the parent's clients, waiting for the parent */
    if (listen_fd >= 0)
        close(listen_fd);
    listen_fd = -1;
    live_pid = 0;
    seq = 0;
    ended = 0;
    if (had)
        spanprof__live_ensure();
}

/* The runtime is being unloaded (a stop stage; at exit too, when the runtime is a shared library
 * whose destructors run before its exit handler): the image's last snapshot, and the thread must
 * not outlive its code. */
static void stop_live(void)
{
    pid_t pid = getpid();
    if (__atomic_load_n(&live_pid, __ATOMIC_ACQUIRE) != pid)
        return;
    pthread_mutex_lock(&lock);
    if (!ended) {
        leave_final(pid);
        end_answering(pid);
    }
    pthread_mutex_unlock(&lock);
    pthread_join(live_thread, NULL);
    close(listen_fd);
    listen_fd = -1;
    __atomic_store_n(&live_pid, 0, __ATOMIC_RELEASE);
}
SPANPROF_STOP_STAGE(stop_live);
