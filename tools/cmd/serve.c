/* serve.c — `spanprof serve`: the profiles of the running processes that record with
 * SPANPROF_LIVE=DIR, over HTTP (libmicrohttpd) and pushed to Pyroscope (libcurl).
 *
 * DIR holds a socket per running process (PID.sock) and the last snapshot of each process that
 * ended (PID.START.final), as live/protocol.h describes.  serve asks each socket for a snapshot
 * when it needs one (the start and end of a profile's window, a push; a scrape of /metrics asks
 * for the spans only, which spares the process the encoding of its stacks), and
 * once a second scans DIR for final snapshots, which it reads once and unlinks, and for processes
 * that have gone.  A process is its pid and its image's start: an exec'd image is a new process.
 * A process that ended stays in /metrics (its counters frozen) for RETAIN_S seconds.
 *
 * Endpoints:
 *   /metrics                        Prometheus text format (format/live_metrics.c); counters are
 *                                   the largest seen per process (sampled estimates wobble)
 *   /debug/pprof/profile            the cumulative profile of every process (pid label per sample)
 *   /debug/pprof/profile?seconds=N  the profile of the next N seconds only (Go's convention):
 *                                   each process's stacks at the end less those at the start
 *   ...&pid=PID                     one process only
 *
 * Bounds: a snapshot takes at most SOCK_TIMEOUT_S seconds and LIVE_SNAPSHOT_MAX bytes; at most
 * MAX_CONNECTIONS connections at once (MAX_PER_IP from one address); a request's header and query
 * fit in REQUEST_MEMORY bytes (else libmicrohttpd answers 4xx); seconds <= MAX_SECONDS.
 * One lock guards the state; the HTTP threads and the main loop (scan, push) take it in turn,
 * never across a window's wait or a push's transfer. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"

#include "live/protocol.h"

enum {
    MAX_CONNECTIONS = 32,
    MAX_PER_IP = 16,
    REQUEST_MEMORY = 16384,
    MAX_SECONDS = 3600,
    RETAIN_S = 300,
    CONNECTION_TIMEOUT_S = 10,
};
#define SOCK_TIMEOUT_S 2.0

/* A snapshot shared by the state and the windows that hold it: freed by its last holder. */
struct snap {
    int refs;                    /* under the lock */
    struct live_snapshot s;
};

struct proc {
    long long pid;
    int64_t start_unix_ns;
    struct snap *latest;         /* never NULL */
    struct live_snapshot kept;   /* the largest counters seen (live_spans_keep_max) */
    struct strmap named;         /* span names with series of their own */
    struct snap *pushed;         /* what the last push covered; NULL: none yet */
    double pushed_unix;          /* when */
    double ended;                /* monotonic time the process was found ended; 0: running */
    int has_final;
};

static struct {
    pthread_mutex_t lock;
    const struct serve_opts *o;
    struct proc **v;
    size_t n, cap;
    uint64_t scrape_errors, ended;
    volatile sig_atomic_t stop;
} S = {.lock = PTHREAD_MUTEX_INITIALIZER};

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double unix_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void snap_put(struct snap *s)
{
    if (s && --s->refs == 0) {
        live_snapshot_free(&s->s);
        free(s);
    }
}

static struct snap *snap_get(struct snap *s)
{
    if (s)
        s->refs++;
    return s;
}

static void proc_free(struct proc *p)
{
    snap_put(p->latest);
    snap_put(p->pushed);
    live_snapshot_free(&p->kept);
    strmap_free(&p->named);
    free(p);
}

static struct proc *find_proc(long long pid, int64_t start)
{
    for (size_t i = 0; i < S.n; i++)
        if (S.v[i]->pid == pid && S.v[i]->start_unix_ns == start)
            return S.v[i];
    return NULL;
}

static void mark_ended(struct proc *p)
{
    if (!p->ended) {
        p->ended = mono_now();
        S.ended++;
    }
}

/* Takes over SNAP (a reference) as what is known of its process; FINAL: its last snapshot. */
static void update(struct snap *snap, int final)
{
    struct live_snapshot *s = &snap->s;
    struct proc *p = find_proc(s->pid, s->start_unix_ns);
    if (!p) {
        /* an image that replaced another of the same pid (exec) ends that one */
        for (size_t i = 0; i < S.n; i++)
            if (S.v[i]->pid == s->pid && !S.v[i]->ended && !final)
                mark_ended(S.v[i]);
        p = xmalloc(sizeof *p);
        memset(p, 0, sizeof *p);
        p->pid = s->pid;
        p->start_unix_ns = s->start_unix_ns;
        p->kept.exe = xstrdup("");
        live_stacks_init(&p->kept.stacks);
        strmap_init(&p->named);
        if (S.n == S.cap)
            S.v = xrealloc(S.v, (S.cap = S.cap ? 2 * S.cap : 16) * sizeof *S.v);
        S.v[S.n++] = p;
    } else if (p->has_final) {
        snap_put(snap);          /* a socket answered after its final was read: keep the final */
        return;
    }
    live_spans_keep_max(&p->kept, s);
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
    return sn;
}

/* Reads the final snapshot NAME in DIR (a regular file, no link followed), then unlinks it. */
static void ingest_final(int dfd, const char *name, long long pid)
{
    char what[PATH_MAX + 32];
    snprintf(what, sizeof what, "%s/%s", S.o->dir, name);
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    char *buf = NULL;
    size_t n = 0;
    if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || (size_t)st.st_size > LIVE_SNAPSHOT_MAX + 4096) {
        fprintf(stderr, "spanprof serve: %s: %s\n", what,
                fd < 0 ? strerror(errno) : "not a regular file of at most the snapshot size");
    } else {
        buf = xmalloc((size_t)st.st_size + 1);
        ssize_t r;
        while (n < (size_t)st.st_size && (r = read(fd, buf + n, (size_t)st.st_size - n)) > 0)
            n += (size_t)r;
        struct snap *sn = parse(buf, n, what);
        if (sn)
            sn->s.pid = pid;   /* the file's name is the process's word, as a socket's */
        if (sn)
            update(sn, 1);
        else
            S.scrape_errors++;
    }
    if (fd >= 0)
        close(fd);
    free(buf);
    unlinkat(dfd, name, 0);
}

/* Asks the socket NAME in DIR for a snapshot, with REQUEST (live/protocol.h). */
static void query(const char *name, long long pid, const char *request)
{
    char path[PATH_MAX], err[256];
    snprintf(path, sizeof path, "%s/%s", S.o->dir, name);
    char *buf;
    size_t len;
    int gone;
    if (unix_request(path, request, SOCK_TIMEOUT_S, LIVE_SNAPSHOT_MAX + 4096, &buf, &len,
                     &gone, err, sizeof err)) {
        if (gone) {   /* ended: its final snapshot says the rest */
            for (size_t i = 0; i < S.n; i++)
                if (S.v[i]->pid == pid)
                    mark_ended(S.v[i]);
            return;
        }
        fprintf(stderr, "spanprof serve: %s: %s\n", path, err);
        S.scrape_errors++;
        return;
    }
    struct snap *sn = parse(buf, len, path);
    free(buf);
    if (!sn) {
        S.scrape_errors++;
        return;
    }
    sn->s.pid = pid;   /* the socket's name is the process's word (serve may be in another pid
                        * namespace than the process) */
    update(sn, 0);
}

static int by_pid(const void *a, const void *b)
{
    const struct proc *x = *(struct proc *const *)a, *y = *(struct proc *const *)b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return (x->start_unix_ns > y->start_unix_ns) - (x->start_unix_ns < y->start_unix_ns);
}

/* Scans DIR: final snapshots read, processes gone marked ended, sockets asked with REQUEST
 * (SPANPROF_LIVE_REQUEST or _SPANS) unless it is NULL. */
static void collect(const char *request)
{
    int dfd = open(S.o->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return;
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return;
    }
    long long *socks = NULL;
    size_t nsocks = 0, cap = 0;
    struct dirent *e;
    /* finals first: a socket that answers after its process's final was read is ignored */
    char **finals = NULL;
    size_t nfinals = 0, fcap = 0;
    while ((e = readdir(d))) {
        long long pid;
        if ((pid = name_pid(e->d_name, SPANPROF_LIVE_FINAL_SUFFIX, 1)) > 0) {
            if (nfinals == fcap)
                finals = xrealloc(finals, (fcap = fcap ? 2 * fcap : 16) * sizeof *finals);
            finals[nfinals++] = xstrdup(e->d_name);
        } else if ((pid = name_pid(e->d_name, SPANPROF_LIVE_SOCK_SUFFIX, 0)) > 0) {
            if (nsocks == cap)
                socks = xrealloc(socks, (cap = cap ? 2 * cap : 16) * sizeof *socks);
            socks[nsocks++] = pid;
        }
    }
    for (size_t i = 0; i < nfinals; i++) {
        ingest_final(dfd, finals[i], name_pid(finals[i], SPANPROF_LIVE_FINAL_SUFFIX, 1));
        free(finals[i]);
    }
    free(finals);
    if (request)
        for (size_t i = 0; i < nsocks; i++) {
            char name[48];
            snprintf(name, sizeof name, "%lld%s", socks[i], SPANPROF_LIVE_SOCK_SUFFIX);
            query(name, socks[i], request);
        }
    /* a running process has its socket (its pid is not checked: serve may run in another pid
     * namespace than the processes, as a sidecar container does) */
    for (size_t i = 0; i < S.n; i++) {
        struct proc *p = S.v[i];
        if (p->ended)
            continue;
        int has = 0;
        for (size_t k = 0; k < nsocks && !has; k++)
            has = socks[k] == p->pid;
        if (!has)
            mark_ended(p);
    }
    free(socks);
    closedir(d);
    if (S.n > 1)
        qsort(S.v, S.n, sizeof *S.v, by_pid);   /* the order of what is served */
}

/* Drops the processes that ended more than RETAIN_S ago and have nothing left to push. */
static void retire(void)
{
    double now = mono_now();
    size_t k = 0;
    for (size_t i = 0; i < S.n; i++) {
        struct proc *p = S.v[i];
        int pending = S.o->push && p->pushed != p->latest;
        if (p->ended && now - p->ended > RETAIN_S && !pending)
            proc_free(p);
        else
            S.v[k++] = p;
    }
    S.n = k;
}

static size_t running(void)
{
    size_t n = 0;
    for (size_t i = 0; i < S.n; i++)
        n += !S.v[i]->ended;
    return n;
}

/* ---- HTTP ---- */

static enum MHD_Result respond(struct MHD_Connection *c, unsigned code, const char *type, char *body,
                               size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    enum MHD_Result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned code, const char *msg)
{
    char *body = xasprintf("%s\n", msg);
    return respond(c, code, "text/plain; charset=utf-8", body, strlen(body));
}

static enum MHD_Result metrics(struct MHD_Connection *c)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    pthread_mutex_lock(&S.lock);
    collect(SPANPROF_LIVE_REQUEST_SPANS);
    struct live_metrics_proc *mp = xmalloc((S.n + 1) * sizeof *mp);
    size_t n = 0;
    for (size_t i = 0; i < S.n; i++)
        /* an ended image whose pid a later one has (exec) would repeat its series' labels */
        if (!(S.v[i]->ended && i + 1 < S.n && S.v[i + 1]->pid == S.v[i]->pid))
            mp[n++] = (struct live_metrics_proc){&S.v[i]->kept, &S.v[i]->named};
    struct live_metrics_totals t = {running(), S.scrape_errors, S.ended};
    live_metrics_write(f, mp, n, S.o->max_spans, &t);
    pthread_mutex_unlock(&S.lock);
    free(mp);
    fclose(f);
    return respond(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", buf, len);
}

/* A whole number in [MIN, MAX] (decimal digits only): 0, or -1. */
static int parse_whole(const char *s, long long min, long long max, long long *out)
{
    if (!s || !*s || strlen(s) > 18 || strspn(s, "0123456789") != strlen(s))
        return -1;
    *out = strtoll(s, NULL, 10);
    return *out < min || *out > max ? -1 : 0;
}

struct held {
    long long pid;
    int64_t start;
    struct snap *snap;
};

static enum MHD_Result profile(struct MHD_Connection *c)
{
    const char *sec = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "seconds");
    const char *pidarg = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "pid");
    long long seconds = 0, want = 0;
    if (sec && parse_whole(sec, 1, MAX_SECONDS, &seconds))
        return text(c, MHD_HTTP_BAD_REQUEST, "seconds must be a whole number from 1 to 3600");
    if (pidarg && parse_whole(pidarg, 1, 1LL << 40, &want))
        return text(c, MHD_HTTP_BAD_REQUEST, "pid must be a process id (a whole number > 0)");

    struct held *start = NULL;
    size_t nstart = 0;
    double t0_mono = 0, t0_unix = 0;
    if (seconds) {
        pthread_mutex_lock(&S.lock);
        collect(SPANPROF_LIVE_REQUEST);
        t0_mono = mono_now();
        t0_unix = unix_now();
        start = xmalloc((S.n + 1) * sizeof *start);
        for (size_t i = 0; i < S.n; i++)
            if (!S.v[i]->ended && (!want || S.v[i]->pid == want))
                start[nstart++] = (struct held){S.v[i]->pid, S.v[i]->start_unix_ns, snap_get(S.v[i]->latest)};
        pthread_mutex_unlock(&S.lock);
        double end = t0_mono + (double)seconds;
        while (!S.stop && mono_now() < end) {
            double left = end - mono_now();
            struct timespec ts = {0, (long)((left < 0.1 ? left : 0.1) * 1e9)};
            if (left > 0)
                nanosleep(&ts, NULL);
        }
    }

    pthread_mutex_lock(&S.lock);
    if (!S.stop)
        collect(SPANPROF_LIVE_REQUEST);
    double now_mono = mono_now(), now_unix = unix_now();
    struct live_pprof_part *parts = xmalloc((S.n + 1) * sizeof *parts);
    struct live_stacks *deltas = xmalloc((S.n + 1) * sizeof *deltas);
    size_t nparts = 0, ndeltas = 0;
    int64_t earliest = 0;
    for (size_t i = 0; i < S.n; i++) {
        struct proc *p = S.v[i];
        if (want && p->pid != want)
            continue;
        if (!seconds) {
            parts[nparts++] = (struct live_pprof_part){p->pid, &p->latest->s.stacks};
            if (p->start_unix_ns > 0 && (!earliest || p->start_unix_ns < earliest))
                earliest = p->start_unix_ns;
            continue;
        }
        if (p->ended && p->ended < t0_mono)
            continue;  /* ended before the window */
        const struct live_stacks *before = NULL;
        for (size_t k = 0; k < nstart; k++)
            if (start[k].pid == p->pid && start[k].start == p->start_unix_ns)
                before = &start[k].snap->s.stacks;
        live_stacks_delta(&p->latest->s.stacks, before, &deltas[ndeltas]);
        parts[nparts++] = (struct live_pprof_part){p->pid, &deltas[ndeltas++]};
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc = -1;
    if (f) {
        int64_t dur = seconds ? (int64_t)((now_mono - t0_mono) * 1e9)
                              : (earliest ? (int64_t)(now_unix * 1e9) - earliest : 0);
        int64_t when = seconds ? (int64_t)(t0_unix * 1e9) : earliest;
        rc = live_pprof_write(f, parts, nparts, dur, when);
        if (fclose(f))
            rc = -1;
    }
    for (size_t k = 0; k < nstart; k++)
        snap_put(start[k].snap);
    pthread_mutex_unlock(&S.lock);
    for (size_t k = 0; k < ndeltas; k++)
        live_stacks_free(&deltas[k]);
    free(deltas);
    free(parts);
    free(start);
    if (S.stop) {
        free(buf);
        return text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "spanprof serve is stopping");
    }
    if (rc) {
        free(buf);
        return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "the profile could not be encoded");
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(buf);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "application/octet-stream");
    MHD_add_response_header(r, "Content-Disposition", "attachment; filename=\"profile\"");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

static const char index_page[] =
    "spanprof serve: the live profiles of the processes in its directory\n"
    "  /metrics                                  Prometheus metrics\n"
    "  /debug/pprof/profile?seconds=N[&pid=PID]  pprof profile of the next N seconds\n"
    "  /debug/pprof/profile[?pid=PID]            cumulative pprof profile\n";

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *upload, size_t *upload_size, void **state)
{
    (void)cls, (void)version, (void)upload, (void)upload_size, (void)state;
    /* answered at the first call, on the header alone: a body is never read */
    if (strcmp(method, "GET") && strcmp(method, "HEAD"))
        return text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD");
    if (!strcmp(url, "/metrics"))
        return metrics(c);
    if (!strcmp(url, "/debug/pprof/profile"))
        return profile(c);
    if (!strcmp(url, "/"))
        return respond(c, MHD_HTTP_OK, "text/plain; charset=utf-8", xstrdup(index_page), strlen(index_page));
    return text(c, MHD_HTTP_NOT_FOUND, "no such page: try /metrics or /debug/pprof/profile");
}

/* ---- push to Pyroscope ---- */

struct push_job {
    char *url;
    char *body;
    size_t len;
};

/* EXE's base name, with what Pyroscope's label syntax cannot hold (anything but letters, digits,
 * '_', '.', '-') as '_'. */
static char *exe_base(const char *exe)
{
    const char *s = strrchr(exe, '/');
    char *b = xstrdup(s ? s + 1 : exe);
    for (char *c = b; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_' || *c == '.' || *c == '-'))
            *c = '_';
    return b;
}

/* The pushes due now: each process's profile since its last push (or its start), ended
 * processes' last ones included.  Under the lock. */
static struct push_job *push_jobs(CURL *curl, size_t *njobs)
{
    struct push_job *jobs = xmalloc((S.n + 1) * sizeof *jobs);
    *njobs = 0;
    double now = unix_now();
    for (size_t i = 0; i < S.n; i++) {
        struct proc *p = S.v[i];
        if (p->pushed == p->latest)
            continue;
        struct live_stacks d;
        live_stacks_delta(&p->latest->s.stacks, p->pushed ? &p->pushed->s.stacks : NULL, &d);
        double from = p->pushed ? p->pushed_unix : (p->start_unix_ns > 0 ? p->start_unix_ns / 1e9 : now);
        snap_put(p->pushed);
        p->pushed = snap_get(p->latest);
        p->pushed_unix = now;
        if (d.n == 0) {
            live_stacks_free(&d);
            continue;
        }
        struct live_pprof_part part = {p->pid, &d};
        char *body = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&body, &len);
        int rc = f ? live_pprof_write(f, &part, 1, (int64_t)((now - from) * 1e9), (int64_t)(from * 1e9)) : -1;
        if (f && fclose(f))
            rc = -1;
        live_stacks_free(&d);
        if (rc) {
            free(body);
            fprintf(stderr, "spanprof serve: push: the profile of %lld could not be encoded\n", p->pid);
            continue;
        }
        char *exe = exe_base(p->latest->s.exe);
        char *name = xasprintf("%s{pid=%lld,exe=%s}", S.o->service ? S.o->service : (*exe ? exe : "spanprof"),
                               p->pid, exe);
        char *esc = curl_easy_escape(curl, name, 0);
        jobs[*njobs].url = xasprintf("%s/ingest?name=%s&from=%lld&until=%lld&format=pprof", S.o->push,
                                     esc ? esc : "", (long long)from, (long long)now);
        jobs[*njobs].body = body;
        jobs[*njobs].len = len;
        ++*njobs;
        curl_free(esc);
        free(name);
        free(exe);
    }
    return jobs;
}

static void push_all(CURL *curl)
{
    size_t n;
    pthread_mutex_lock(&S.lock);
    collect(SPANPROF_LIVE_REQUEST);
    struct push_job *jobs = push_jobs(curl, &n);
    pthread_mutex_unlock(&S.lock);
    for (size_t i = 0; i < n; i++) {
        curl_easy_reset(curl);
        struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/octet-stream");
        curl_easy_setopt(curl, CURLOPT_URL, jobs[i].url);
        curl_easy_setopt(curl, CURLOPT_POST, 1L);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, jobs[i].body);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)jobs[i].len);
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 2000L);
        curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 5000L);
        curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
        char errbuf[CURL_ERROR_SIZE] = "";
        curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
        CURLcode rc = curl_easy_perform(curl);
        long code = 0;
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
        if (rc != CURLE_OK)
            fprintf(stderr, "spanprof serve: push to %s failed: %s\n", S.o->push,
                    *errbuf ? errbuf : curl_easy_strerror(rc));
        else if (code < 200 || code > 299)
            fprintf(stderr, "spanprof serve: push to %s failed: HTTP %ld\n", S.o->push, code);
        curl_slist_free_all(h);
        free(jobs[i].url);
        free(jobs[i].body);
    }
    free(jobs);
}

/* ---- the command ---- */

static void on_stop(int sig)
{
    (void)sig;
    S.stop = 1;
}

int serve_listen_form_ok(const char *listen)
{
    const char *colon = strrchr(listen, ':');
    return colon && colon != listen && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1) &&
           strlen(colon + 1) <= 5 && atoi(colon + 1) <= 65535 &&
           !(listen[0] == '[' && (colon - listen < 3 || colon[-1] != ']'));
}

/* ADDR:PORT (ADDR a name, an IPv4 address or [an IPv6 one]) into *SA: 0, or -1. */
static int serve_parse_listen(const char *listen, struct sockaddr_storage *sa, socklen_t *salen)
{
    const char *colon = strrchr(listen, ':');
    if (!colon || colon == listen || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
        strlen(colon + 1) > 5 || atoi(colon + 1) > 65535)
        return -1;
    char host[256];
    size_t hl = (size_t)(colon - listen);
    if (listen[0] == '[' && colon[-1] == ']')
        listen++, hl -= 2;
    if (hl == 0 || hl >= sizeof host)
        return -1;
    memcpy(host, listen, hl);
    host[hl] = 0;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV}, *res;
    if (getaddrinfo(host, colon + 1, &hints, &res) || !res)
        return -1;
    memcpy(sa, res->ai_addr, res->ai_addrlen);
    *salen = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

static void log_mhd(void *cls, const char *fmt, va_list ap)
{
    (void)cls, (void)fmt, (void)ap;   /* refused connections are the limits working: no noise */
}

int cmd_serve(const struct serve_opts *o)
{
    S.o = o;
    S.stop = 0;
    struct stat st;
    if (stat(o->dir, &st) != 0 && errno == ENOENT && mkdir(o->dir, 0700) != 0) {
        fprintf(stderr, "spanprof serve: cannot create '%s': %s\n", o->dir, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    if (stat(o->dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "spanprof serve: '%s' is not a directory\n", o->dir);
        return EXIT_BAD_INPUT;
    }
    struct sockaddr_storage sa;
    socklen_t salen;
    if (serve_parse_listen(o->listen, &sa, &salen)) {
        fprintf(stderr, "spanprof serve: cannot resolve '%s'\n", o->listen);
        return EXIT_BAD_INPUT;
    }
    struct sigaction act = {.sa_handler = on_stop};
    sigemptyset(&act.sa_mask);
    sigaction(SIGINT, &act, NULL);
    sigaction(SIGTERM, &act, NULL);
    signal(SIGPIPE, SIG_IGN);
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    if (sa.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    struct MHD_Daemon *d = MHD_start_daemon(
        flags, 0, NULL, NULL, handler, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        (unsigned)MAX_PER_IP, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)REQUEST_MEMORY,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONNECTION_TIMEOUT_S, MHD_OPTION_EXTERNAL_LOGGER, log_mhd,
        NULL, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "spanprof serve: cannot listen on %s: %s\n", o->listen, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    char host[256];
    const char *colon = strrchr(o->listen, ':');
    snprintf(host, sizeof host, "%.*s", (int)(colon - o->listen), o->listen);
    printf("spanprof serve: http://%s:%u/ (%s)\n", host, info ? (unsigned)info->port : 0u, o->dir);
    fflush(stdout);

    CURL *curl = NULL;
    if (o->push) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        curl = curl_easy_init();
    }
    double next_push = mono_now() + o->interval;
    while (!S.stop) {
        struct timespec ts = {0, 200 * 1000 * 1000};
        for (int i = 0; i < 5 && !S.stop; i++)
            nanosleep(&ts, NULL);
        if (curl && mono_now() >= next_push) {
            next_push += o->interval;
            if (next_push < mono_now())
                next_push = mono_now() + o->interval;
            push_all(curl);
        }
        pthread_mutex_lock(&S.lock);
        collect(NULL);
        retire();
        pthread_mutex_unlock(&S.lock);
    }
    MHD_stop_daemon(d);
    if (curl) {
        push_all(curl);   /* what happened since the last push, the processes' last snapshots too */
        curl_easy_cleanup(curl);
        curl_global_cleanup();
    }
    pthread_mutex_lock(&S.lock);
    for (size_t i = 0; i < S.n; i++)
        proc_free(S.v[i]);
    free(S.v);
    S.v = NULL;
    S.n = S.cap = 0;
    pthread_mutex_unlock(&S.lock);
    return 0;
}

const char serve_usage[] =
    "usage: spanprof serve [--listen ADDR:PORT] [--push URL] [--service NAME]\n"
    "                      [--interval SECONDS] [--max-spans N] DIR\n";

const char serve_help[] =
    "\n"
    "Serves the live profiles of the processes that record with SPANPROF_LIVE=DIR:\n"
    "each answers on DIR/PID.sock while it runs and leaves DIR/PID.START.final when\n"
    "it ends, which serve reads once and removes. Over HTTP, on loopback unless\n"
    "--listen says otherwise:\n"
    "  /metrics                 Prometheus metrics: per process (pid, exe) and span,\n"
    "                           spanprof_span_calls_total, spanprof_span_seconds_total,\n"
    "                           spanprof_span_self_seconds_total, the CPU ones where\n"
    "                           measured, and spanprof_span_duration_seconds (with\n"
    "                           SPANPROF_HISTOGRAM=1); counters never go backwards\n"
    "  /debug/pprof/profile?seconds=N\n"
    "                           the pprof profile of the next N seconds (1 to 3600)\n"
    "                           of every process, a pid label on each sample, as\n"
    "                           `go tool pprof`, Parca and Grafana Alloy fetch it;\n"
    "                           without seconds, since the processes started;\n"
    "                           &pid=PID: that process only\n"
    "With --push, every --interval seconds each process's profile of the interval is\n"
    "sent to Pyroscope (URL/ingest, name SERVICE{pid=PID,exe=EXE}); a failed push is\n"
    "one line on stderr and is not retried. Runs until SIGINT or SIGTERM.\n"
    "\n"
    "Options:\n"
    "  --listen ADDR:PORT   where to serve (default: " SERVE_DEFAULT_LISTEN "; port 0: any free\n"
    "                       port, printed on stdout)\n"
    "  --push URL           Pyroscope's base URL, e.g. http://127.0.0.1:4040\n"
    "  --service NAME       the pushed profiles' application name (default: each\n"
    "                       process's executable)\n"
    "  --interval SECONDS   between pushes (default: 15)\n"
    "  --max-spans N        per process, the N spans with the most total time have\n"
    "                       series of their own, the rest are summed as (other)\n"
    "                       (default: 100)\n"
    "  -h, --help           show this text\n"
    "\n"
    "Exit status: 0 after SIGINT or SIGTERM; 1 when DIR or the address cannot be\n"
    "used; 2 for a bad command line.\n";

int run_serve(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "listen", required_argument, NULL, 'l' },
        { "push", required_argument, NULL, 'p' },
        { "service", required_argument, NULL, 's' },
        { "interval", required_argument, NULL, 'i' },
        { "max-spans", required_argument, NULL, 'm' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct serve_opts o = {NULL, SERVE_DEFAULT_LISTEN, NULL, NULL, 15, 100};
    int ch;
    while ((ch = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'l':
            if (!serve_listen_form_ok(optarg))
                return tool_usage_error("--listen needs ADDR:PORT (e.g. 127.0.0.1:6061), not '%s'", optarg);
            o.listen = optarg;
            break;
        case 'p': {
            size_t n = strlen(optarg);
            if (strncmp(optarg, "http://", 7) && strncmp(optarg, "https://", 8))
                return tool_usage_error("--push needs an http:// or https:// URL, not '%s'", optarg);
            while (n > 0 && optarg[n - 1] == '/')
                optarg[--n] = 0;
            o.push = optarg;
            break;
        }
        case 's':
            if (!*optarg)
                return tool_usage_error("%s", "--service needs a name");
            o.service = optarg;
            break;
        case 'i': {
            char *end;
            o.interval = strtod(optarg, &end);
            if (!*optarg || *end || !(o.interval >= 1 && o.interval <= 86400))
                return tool_usage_error("--interval must be a number of seconds from 1 to 86400, not '%s'", optarg);
            break;
        }
        case 'm': {
            long n;
            if (tool_parse_limit(optarg, &n) || n < 1)
                return tool_usage_error("--max-spans needs a number of spans >= 1, not '%s'", optarg);
            o.max_spans = (size_t)n;
            break;
        }
        case 'h':
            fputs(serve_usage, stdout);
            fputs(serve_help, stdout);
            return 0;
        default:
            return tool_getopt_error(ch, argv);
        }
    }
    if (argc - optind != 1)
        return tool_usage_error("%s", argc - optind < 1 ? "serve needs a DIR (SPANPROF_LIVE's)" : "serve takes one DIR");
    o.dir = argv[optind];
    return cmd_serve(&o);
}
