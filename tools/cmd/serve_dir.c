/* serve_dir.c — what `spanprof serve` knows of the processes in its live directory, and how it
 * learns it: the directory scanned, each entry checked before anything is read from it, the
 * sockets asked at once with one deadline, the answers kept per process (live/protocol.h says
 * what is where).
 *
 * Who is published.  Only what the directory's owner, or serve's own user, made: DIR must be a
 * directory no other user can write to; a socket must be a socket (a link is not followed) whose
 * listening process runs as one of those two users (SO_PEERCRED, checked before anything is
 * asked); a final snapshot must be a regular file (no link followed) owned by one of them.  So
 * root serving a user's directory publishes that user's processes and no one else's: a link
 * planted there to another user's socket is refused, and so is a socket of another user's
 * process moved there.  Each refusal is one line on stderr, once per entry and reason.
 *
 * Never stalled by one process.  The sockets a request needs are asked at once (unixreq.c), with
 * SOCK_TIMEOUT_S for all of them, without the lock: requests that need the same socket at the
 * same time share one answer, and an answer younger than the caller allows is reused, so however
 * many clients there are, a process is asked for its spans at most twice a second and for its
 * stacks at most ten times.  A socket that does not answer in time is silent: requests skip it
 * (its process is published with spanprof_process_up 0 and its last counters) and the main loop
 * asks it again every RETRY_S seconds until it answers.
 *
 * Bounded.  At most MAX_SOCKETS sockets are asked; a process that ended stays RETAIN_S seconds
 * (its counters frozen) but at most MAX_ENDED of them and MAX_ENDED_BYTES of their snapshots are
 * kept, the oldest forgotten first. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"

#include "live/protocol.h"

#define SOCK_TIMEOUT_S 2.0
#define RETRY_S 5.0
#define RETAIN_S 300.0
enum {
    MAX_SOCKETS = 1024,
    MAX_ENDED = 256,
    MAX_REFUSALS_LOGGED = 1000,
};
#define MAX_ENDED_BYTES ((size_t)64 << 20)

/* A socket in DIR, by its pid. */
struct sock {
    long long pid;
    int present;                 /* found by the last scan */
    int asking;                  /* a request is in flight */
    int silent;                  /* did not answer in time: only the retry asks it */
    double retry_at;             /* when the retry may */
    double spans_at, full_at;    /* when it last answered, spans only / with stacks; 0: never */
    dev_t dev;                   /* the socket file refused as another user's (0: none): */
    ino_t ino;                   /* not asked again while it is the same file */
};

struct serve_dir_state SD = {.lock = PTHREAD_MUTEX_INITIALIZER, .answered = PTHREAD_COND_INITIALIZER};

static struct {
    struct sock *v;
    size_t n, cap;
    struct strmap logged;        /* "NAME\tREASON" said once */
    size_t refused;              /* entries the last scan refused (not counting sockets of
                                  * other users' processes, which their asks refuse) */
    uid_t allowed[2];            /* the directory's owner, serve's user */
    int dir_problem;             /* the last scan's: 0 fine, else said once until it changes */
} D;

double serve_mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One line on stderr about the entry NAME, the first time REASON is given for it. */
static void say_once(const char *name, const char *reason)
{
    char *key = xasprintf("%s\t%s", name, reason);
    int added = 0;
    if (D.logged.n < MAX_REFUSALS_LOGGED)
        strmap_index(&D.logged, key, strlen(key), &added);
    if (added)
        fprintf(stderr, "spanprof serve: %s/%s: %s\n", SD.o->dir, name, reason);
    free(key);
}

void snap_put(struct snap *s)
{
    if (s && --s->refs == 0) {
        live_snapshot_free(&s->s);
        free(s);
    }
}

struct snap *snap_get(struct snap *s)
{
    if (s)
        s->refs++;
    return s;
}

static void proc_free(struct serve_proc *p)
{
    snap_put(p->latest);
    snap_put(p->pushed);
    live_snapshot_free(&p->kept);
    live_series_free(&p->series);
    free(p);
}

static struct serve_proc *find_proc(long long pid, int64_t start)
{
    for (size_t i = 0; i < SD.n; i++)
        if (SD.v[i]->pid == pid && SD.v[i]->start_unix_ns == start)
            return SD.v[i];
    return NULL;
}

static struct sock *find_sock(long long pid)
{
    for (size_t i = 0; i < D.n; i++)
        if (D.v[i].pid == pid)
            return &D.v[i];
    return NULL;
}

static void mark_ended(struct serve_proc *p)
{
    if (!p->ended) {
        p->ended = serve_mono_now();
        SD.ended++;
    }
}

/* Takes over SNAP (a reference) as what is known of its process; FINAL: its last snapshot. */
static void update(struct snap *snap, int final)
{
    struct live_snapshot *s = &snap->s;
    struct serve_proc *p = find_proc(s->pid, s->start_unix_ns);
    if (!p) {
        /* an image that replaced another of the same pid (exec) ends that one */
        for (size_t i = 0; i < SD.n; i++)
            if (SD.v[i]->pid == s->pid && !SD.v[i]->ended && !final)
                mark_ended(SD.v[i]);
        p = xmalloc(sizeof *p);
        memset(p, 0, sizeof *p);
        p->pid = s->pid;
        p->start_unix_ns = s->start_unix_ns;
        p->kept.exe = xstrdup("");
        live_stacks_init(&p->kept.stacks);
        live_series_init(&p->series);
        if (SD.n == SD.cap)
            SD.v = xrealloc(SD.v, (SD.cap = SD.cap ? 2 * SD.cap : 16) * sizeof *SD.v);
        SD.v[SD.n++] = p;
    } else if (p->has_final) {
        snap_put(snap);          /* a socket answered after its final was read: keep the final */
        return;
    }
    live_spans_keep_max(&p->kept, s);
    live_series_update(&p->series, &p->kept, serve_mono_now(), SD.o->max_spans);
    if (!s->has_stacks && p->latest) {
        snap_put(snap);          /* spans only: the stacks last seen stay what is known */
        return;
    }
    snap_put(p->latest);
    p->latest = snap;
    if (final) {
        p->has_final = 1;
        mark_ended(p);
    }
}

/* "DIGITS" then SUFFIX exactly, or "DIGITS.DIGITS" then SUFFIX when TWO. */
static long long name_pid(const char *name, const char *suffix, int two)
{
    const char *p = name;
    long long pid = 0;
    while (*p >= '0' && *p <= '9' && pid < (1LL << 40))
        pid = pid * 10 + (*p++ - '0');
    if (p == name || pid <= 0)
        return -1;
    if (two) {
        if (*p++ != '.' || !(*p >= '0' && *p <= '9'))
            return -1;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return strcmp(p, suffix) ? -1 : pid;
}

static struct snap *parse(char *buf, size_t len, const char *what)
{
    struct snap *sn = xmalloc(sizeof *sn);
    char err[256];
    if (live_snapshot_parse(buf, len, &sn->s, err, sizeof err)) {
        fprintf(stderr, "spanprof serve: %s: %s\n", what, err);
        live_snapshot_free(&sn->s);
        free(sn);
        return NULL;
    }
    sn->refs = 1;
    sn->bytes = len;
    return sn;
}

static int allowed_uid(uid_t uid)
{
    return uid == D.allowed[0] || uid == D.allowed[1];
}

/* "WHO uid UID, neither the directory's owner ... : not published" (a static buffer). */
static const char *owner_reason(const char *who, uid_t uid)
{
    static char why[200];
    snprintf(why, sizeof why, "%s uid %lu, neither the directory's owner (uid %lu) nor "
             "serve's user (uid %lu): not published", who, (unsigned long)uid,
             (unsigned long)D.allowed[0], (unsigned long)D.allowed[1]);
    return why;
}

/* Reads the final snapshot NAME in DIR (checked by the scan), then unlinks it. */
static void ingest_final(int dfd, const char *name, long long pid)
{
    char what[PATH_MAX + 32];
    snprintf(what, sizeof what, "%s/%s", SD.o->dir, name);
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    char *buf = NULL;
    size_t n = 0;
    if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || (size_t)st.st_size > LIVE_SNAPSHOT_MAX + 4096) {
        fprintf(stderr, "spanprof serve: %s: %s\n", what,
                fd < 0 ? strerror(errno) : "not a regular file of at most the snapshot size");
    } else if (!allowed_uid(st.st_uid)) {
        say_once(name, owner_reason("belongs to", st.st_uid));
        close(fd);
        return;                  /* left where it is: not ours to remove */
    } else {
        buf = xmalloc((size_t)st.st_size + 1);
        ssize_t r;
        while (n < (size_t)st.st_size && (r = read(fd, buf + n, (size_t)st.st_size - n)) > 0)
            n += (size_t)r;
        struct snap *sn = parse(buf, n, what);
        if (sn) {
            sn->s.pid = pid;     /* the file's name is the process's word, as a socket's */
            update(sn, 1);
        } else {
            SD.scrape_errors++;
        }
    }
    if (fd >= 0)
        close(fd);
    free(buf);
    unlinkat(dfd, name, 0);
}

/* DIR opened and checked: a directory no other user can write to.  Its descriptor, or -1 after
 * saying why (once, until the problem changes). */
static int open_dir(void)
{
    int problem = 0, err = 0;
    struct stat st;
    int dfd = open(SD.o->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        problem = 1, err = errno;
    else if (fstat(dfd, &st) != 0)
        problem = 1, err = errno;
    else if (st.st_mode & (S_IWGRP | S_IWOTH))
        problem = 2;
    if (!problem) {
        D.allowed[0] = st.st_uid;
        D.allowed[1] = geteuid();
    }
    if (problem && problem * 1000 + err != D.dir_problem)
        fprintf(stderr, "spanprof serve: '%s': %s; nothing is served from it\n", SD.o->dir,
                problem == 1 ? strerror(err)
                             : "other users can write to it, so anyone could plant a socket there "
                               "(chmod go-w it)");
    D.dir_problem = problem ? problem * 1000 + err : 0;
    if (problem && dfd >= 0) {
        close(dfd);
        dfd = -1;
    }
    return dfd;
}

int serve_dir_check(const struct serve_opts *o)
{
    SD.o = o;
    strmap_init(&D.logged);
    int dfd = open_dir();
    if (dfd < 0)
        return -1;
    close(dfd);
    return 0;
}

static int by_pid(const void *a, const void *b)
{
    const struct serve_proc *x = *(struct serve_proc *const *)a, *y = *(struct serve_proc *const *)b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return (x->start_unix_ns > y->start_unix_ns) - (x->start_unix_ns < y->start_unix_ns);
}

/* The order of what is served: by pid, then start. */
static void sort_procs(void)
{
    if (SD.n > 1)
        qsort(SD.v, SD.n, sizeof *SD.v, by_pid);
}

/* Scans DIR under the lock: finals read, sockets found (D.v's present), processes whose socket
 * went marked ended.  The directory's descriptor (for the asks), or -1. */
static int scan(void)
{
    int dfd = open_dir();
    if (dfd < 0)
        return -1;
    DIR *d = fdopendir(dup(dfd));
    if (!d) {
        close(dfd);
        return -1;
    }
    for (size_t i = 0; i < D.n; i++)
        D.v[i].present = 0;
    D.refused = 0;
    char **finals = NULL;
    size_t nfinals = 0, fcap = 0, nsocks = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        int final = name_pid(e->d_name, SPANPROF_LIVE_FINAL_SUFFIX, 1) > 0;
        long long pid = final ? 0 : name_pid(e->d_name, SPANPROF_LIVE_SOCK_SUFFIX, 0);
        if (!final && pid <= 0)
            continue;
        struct stat st;
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;            /* gone since readdir */
        const char *bad = S_ISLNK(st.st_mode)                  ? "a symbolic link: not followed, not published"
                          : final && !S_ISREG(st.st_mode)      ? "not a regular file: not published"
                          : !final && !S_ISSOCK(st.st_mode)    ? "not a socket: not published"
                          : !allowed_uid(st.st_uid) && final   ? owner_reason("belongs to", st.st_uid)
                                                               : NULL;
        if (bad) {
            say_once(e->d_name, bad);
            D.refused++;
            continue;
        }
        if (final) {
            if (nfinals == fcap)
                finals = xrealloc(finals, (fcap = fcap ? 2 * fcap : 16) * sizeof *finals);
            finals[nfinals++] = xstrdup(e->d_name);
            continue;
        }
        struct sock *s = find_sock(pid);
        if (!s && nsocks >= MAX_SOCKETS) {
            char why[64];
            snprintf(why, sizeof why, "beyond the %d sockets serve asks: not published", MAX_SOCKETS);
            say_once(e->d_name, why);
            continue;
        }
        if (!s) {
            if (D.n == D.cap)
                D.v = xrealloc(D.v, (D.cap = D.cap ? 2 * D.cap : 16) * sizeof *D.v);
            s = &D.v[D.n++];
            memset(s, 0, sizeof *s);
            s->pid = pid;
        }
        if (s->ino && (s->dev != st.st_dev || s->ino != st.st_ino))
            s->ino = 0;          /* another socket of that name: judged afresh */
        s->present = 1;
        nsocks++;
    }
    closedir(d);
    /* finals first: a socket that answers after its process's final was read is ignored */
    for (size_t i = 0; i < nfinals; i++) {
        ingest_final(dfd, finals[i], name_pid(finals[i], SPANPROF_LIVE_FINAL_SUFFIX, 1));
        free(finals[i]);
    }
    free(finals);
    /* a socket gone: forgotten unless a request still asks it; its process has ended (its pid is
     * not checked: serve may run in another pid namespace than the processes, as a sidecar
     * container does) */
    size_t k = 0;
    for (size_t i = 0; i < D.n; i++)
        if (D.v[i].present || D.v[i].asking)
            D.v[k++] = D.v[i];
    D.n = k;
    for (size_t i = 0; i < SD.n; i++) {
        struct sock *s = find_sock(SD.v[i]->pid);
        if (!SD.v[i]->ended && (!s || !s->present))
            mark_ended(SD.v[i]);
    }
    sort_procs();
    return dfd;
}

/* The answer to one ask (R, of the socket of PID), under the lock. */
static void answered(int dfd, long long pid, struct unix_req *r, int full)
{
    char name[48];
    snprintf(name, sizeof name, "%lld%s", pid, SPANPROF_LIVE_SOCK_SUFFIX);
    struct sock *s = find_sock(pid);
    double now = serve_mono_now();
    switch (r->status) {
    case UNIX_REQ_OK: {
        char what[PATH_MAX + 48];
        snprintf(what, sizeof what, "%s/%s", SD.o->dir, name);
        struct snap *sn = parse(r->answer, r->len, what);
        if (!sn) {
            SD.scrape_errors++;
            break;
        }
        sn->s.pid = pid;   /* the socket's name is the process's word (serve may be in another pid
                            * namespace than the process) */
        update(sn, 0);
        if (s) {
            if (s->silent)
                fprintf(stderr, "spanprof serve: %s/%s: answers again\n", SD.o->dir, name);
            s->silent = 0;
            s->spans_at = now;
            if (full)
                s->full_at = now;
        }
        break;
    }
    case UNIX_REQ_GONE:          /* ended: its final snapshot says the rest */
        for (size_t i = 0; i < SD.n; i++)
            if (SD.v[i]->pid == pid)
                mark_ended(SD.v[i]);
        break;
    case UNIX_REQ_TIMEOUT:
        SD.scrape_errors++;
        if (s && !s->silent)
            fprintf(stderr, "spanprof serve: %s/%s: %s within %.0f s; asked again every %.0f s "
                    "until it answers\n", SD.o->dir, name, r->err, SOCK_TIMEOUT_S, RETRY_S);
        if (s) {
            s->silent = 1;
            s->retry_at = now + RETRY_S;
        }
        break;
    case UNIX_REQ_PEER: {
        say_once(name, owner_reason("its process runs as", r->peer_uid));
        struct stat st;
        if (s && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
            s->dev = st.st_dev;
            s->ino = st.st_ino;
        }
        break;
    }
    default:
        fprintf(stderr, "spanprof serve: %s/%s: %s\n", SD.o->dir, name, r->err);
        SD.scrape_errors++;
    }
}

/* Asks the sockets of PIDS (N) at once, the lock released meanwhile; FULL: with stacks. */
static void ask(int dfd, const long long *pids, size_t n, int full)
{
    struct unix_req *reqs = xmalloc((n + 1) * sizeof *reqs);
    int *fds = xmalloc((n + 1) * sizeof *fds);
    char (*paths)[48] = xmalloc((n + 1) * sizeof *paths);
    uid_t allowed[2] = {D.allowed[0], D.allowed[1]};
    for (size_t i = 0; i < n; i++) {
        char name[48];
        snprintf(name, sizeof name, "%lld%s", pids[i], SPANPROF_LIVE_SOCK_SUFFIX);
        /* the socket itself, no link followed, connected to through its descriptor */
        fds[i] = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fds[i] >= 0 && (fstat(fds[i], &st) != 0 || !S_ISSOCK(st.st_mode))) {
            close(fds[i]);       /* replaced since the scan (by a link?): asked next time */
            fds[i] = -1;
        }
        snprintf(paths[i], sizeof paths[i], "/proc/self/fd/%d", fds[i]);
        reqs[i] = (struct unix_req){.path = fds[i] >= 0 ? paths[i] : "", .peers = allowed, .npeers = 2};
    }
    pthread_mutex_unlock(&SD.lock);
    unix_requests(reqs, n, full ? SPANPROF_LIVE_REQUEST : SPANPROF_LIVE_REQUEST_SPANS, SOCK_TIMEOUT_S,
                  LIVE_SNAPSHOT_MAX + 4096);
    pthread_mutex_lock(&SD.lock);
    for (size_t i = 0; i < n; i++) {
        if (fds[i] < 0)
            reqs[i].status = UNIX_REQ_GONE;
        else
            close(fds[i]);
        answered(dfd, pids[i], &reqs[i], full);
        free(reqs[i].answer);
        struct sock *s = find_sock(pids[i]);
        if (s)
            s->asking = 0;
    }
    sort_procs();
    pthread_cond_broadcast(&SD.answered);
    free(paths);
    free(fds);
    free(reqs);
}

void serve_dir_refresh(int want, double max_age)
{
    int dfd = scan();
    if (dfd < 0 || want == SERVE_SCAN) {
        if (dfd >= 0)
            close(dfd);
        return;
    }
    double now = serve_mono_now();
    long long *mine = xmalloc((D.n + 1) * sizeof *mine), *others = xmalloc((D.n + 1) * sizeof *others);
    size_t nmine = 0, nothers = 0;
    for (size_t i = 0; i < D.n; i++) {
        struct sock *s = &D.v[i];
        double at = want == SERVE_FULL ? s->full_at : s->spans_at;
        if (!s->present || s->silent || s->ino || (at > 0 && now - at <= max_age))
            continue;
        if (s->asking) {
            others[nothers++] = s->pid;   /* another request's answer will do */
        } else {
            s->asking = 1;
            mine[nmine++] = s->pid;
        }
    }
    if (nmine)
        ask(dfd, mine, nmine, want == SERVE_FULL);
    double until = now + SOCK_TIMEOUT_S + 0.5;
    for (size_t i = 0; i < nothers; i++) {
        struct sock *s;
        while ((s = find_sock(others[i])) && s->asking && serve_mono_now() < until) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 100 * 1000 * 1000;
            if (ts.tv_nsec >= 1000000000)
                ts.tv_sec++, ts.tv_nsec -= 1000000000;
            pthread_cond_timedwait(&SD.answered, &SD.lock, &ts);
        }
    }
    free(mine);
    free(others);
    close(dfd);
}

void serve_dir_retry_silent(void)
{
    int dfd = scan();
    if (dfd < 0)
        return;
    double now = serve_mono_now();
    long long *pids = xmalloc((D.n + 1) * sizeof *pids);
    size_t n = 0;
    for (size_t i = 0; i < D.n; i++)
        if (D.v[i].present && D.v[i].silent && !D.v[i].asking && now >= D.v[i].retry_at) {
            D.v[i].asking = 1;
            pids[n++] = D.v[i].pid;
        }
    if (n)
        ask(dfd, pids, n, 0);
    free(pids);
    close(dfd);
}

int serve_proc_up(const struct serve_proc *p)
{
    const struct sock *s = p->ended ? NULL : find_sock(p->pid);
    return s && !s->silent;
}

void serve_dir_counts(size_t *silent, size_t *refused)
{
    *silent = 0;
    *refused = D.refused;
    for (size_t i = 0; i < D.n; i++) {
        *silent += D.v[i].present && D.v[i].silent;
        *refused += D.v[i].present && D.v[i].ino;
    }
}

void serve_dir_retire(int keep_unpushed)
{
    double now = serve_mono_now();
    size_t k = 0, nended = 0, bytes = 0;
    for (size_t i = 0; i < SD.n; i++) {
        struct serve_proc *p = SD.v[i];
        int pending = keep_unpushed && p->pushed != p->latest;
        if (p->ended && now - p->ended > RETAIN_S && !pending) {
            proc_free(p);
            continue;
        }
        SD.v[k++] = p;
        if (p->ended) {
            nended++;
            bytes += p->latest ? p->latest->bytes : 0;
        }
    }
    SD.n = k;
    /* over the caps: the processes that ended first go first */
    while (nended > MAX_ENDED || bytes > MAX_ENDED_BYTES) {
        size_t oldest = SD.n;
        for (size_t i = 0; i < SD.n; i++)
            if (SD.v[i]->ended && (oldest == SD.n || SD.v[i]->ended < SD.v[oldest]->ended))
                oldest = i;
        struct serve_proc *p = SD.v[oldest];
        nended--;
        bytes -= p->latest ? p->latest->bytes : 0;
        proc_free(p);
        memmove(&SD.v[oldest], &SD.v[oldest + 1], (SD.n - oldest - 1) * sizeof *SD.v);
        SD.n--;
        SD.forgotten++;
    }
}

size_t serve_running(void)
{
    size_t n = 0;
    for (size_t i = 0; i < SD.n; i++)
        n += !SD.v[i]->ended;
    return n;
}

void serve_dir_free(void)
{
    for (size_t i = 0; i < SD.n; i++)
        proc_free(SD.v[i]);
    free(SD.v);
    SD.v = NULL;
    SD.n = SD.cap = 0;
    free(D.v);
    D.v = NULL;
    D.n = D.cap = 0;
    strmap_free(&D.logged);
}
