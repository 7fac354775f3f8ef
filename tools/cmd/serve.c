/* serve.c — `spanprof serve`: the profiles of the running processes that record with
 * SPANPROF_LIVE=DIR, over HTTP (libmicrohttpd) and pushed to Pyroscope (libcurl).
 *
 * What serve knows of the processes, who is published and how they are asked is serve_dir.c's;
 * which span names get series of their own is format/live_series.c's.  A scrape of /metrics asks
 * for the spans only (which spares the processes the encoding of their stacks); a profile's
 * window, its start and its end, and a push ask for the stacks too.  Once a second the main loop
 * scans DIR (final snapshots read once and unlinked, processes gone marked ended), asks the
 * silent sockets due for a retry, forgets what ended long enough ago, and pushes when due.
 *
 * Endpoints:
 *   /metrics                        Prometheus text format (format/live_metrics.c); counters are
 *                                   the largest seen per process (sampled estimates wobble)
 *   /debug/pprof/profile            the cumulative profile of every process (pid label per sample)
 *   /debug/pprof/profile?seconds=N  the profile of the next N seconds only (Go's convention):
 *                                   each process's stacks at the end less those at the start
 *   ...&pid=PID                     one process only
 *
 * Bounds: at most MAX_CONNECTIONS connections at once (MAX_PER_IP from one address), of which at
 * most MAX_WINDOWS are windows (MAX_WINDOWS_PER_IP from one address; a window whose client hangs
 * up ends then), so scrapes always find a place; a request's header and query fit in
 * REQUEST_MEMORY bytes (else libmicrohttpd answers 4xx); seconds <= MAX_SECONDS; a push's reply
 * is read and dropped.  SD.lock guards what serve knows; nothing holds it across a wait. */
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
#include <poll.h>
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
    MAX_WINDOWS = 8,             /* windows (?seconds=N) at once: the other connections stay */
    MAX_WINDOWS_PER_IP = 2,      /* free for scrapes, from every address */
    REQUEST_MEMORY = 16384,
    MAX_SECONDS = 3600,
    CONNECTION_TIMEOUT_S = 10,
    PUSH_REPLY_SHOWN = 200,      /* bytes of a failed push's reply said on stderr */
};
/* How old an answer may be to serve another request: a process is asked for its spans at most
 * twice a second and for its stacks at most ten times, however many clients ask. */
#define SPANS_MAX_AGE_S 0.5
#define FULL_MAX_AGE_S 0.1

static volatile sig_atomic_t stop;

static double unix_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
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
    pthread_mutex_lock(&SD.lock);
    serve_dir_refresh(SERVE_SPANS, SPANS_MAX_AGE_S);
    struct live_metrics_proc *mp = xmalloc((SD.n + 1) * sizeof *mp);
    size_t n = 0;
    for (size_t i = 0; i < SD.n; i++)
        /* an ended image whose pid a later one has (exec) would repeat its series' labels */
        if (!(SD.v[i]->ended && i + 1 < SD.n && SD.v[i + 1]->pid == SD.v[i]->pid))
            mp[n++] = (struct live_metrics_proc){&SD.v[i]->kept, &SD.v[i]->series, serve_proc_up(SD.v[i])};
    struct live_metrics_totals t = {serve_running(), SD.scrape_errors, SD.ended, SD.forgotten, 0, 0};
    serve_dir_counts(&t.silent, &t.refused);
    live_metrics_write(f, mp, n, &t);
    pthread_mutex_unlock(&SD.lock);
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

/* ---- windows: at most MAX_WINDOWS at once, MAX_WINDOWS_PER_IP from one address ---- */

static struct {
    pthread_mutex_t lock;
    size_t n;
    struct { char addr[INET6_ADDRSTRLEN]; int n; } from[MAX_WINDOWS];
} W = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void client_addr(struct MHD_Connection *c, char *out, size_t size)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    out[0] = 0;
    if (sa && sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)size);
    else if (sa && sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out, (socklen_t)size);
}

/* Takes a window's place for C's address: NULL, or why not. */
static const char *window_begin(struct MHD_Connection *c)
{
    char addr[INET6_ADDRSTRLEN];
    client_addr(c, addr, sizeof addr);
    const char *why = NULL;
    pthread_mutex_lock(&W.lock);
    size_t k = 0, free_at = MAX_WINDOWS;
    for (; k < MAX_WINDOWS; k++) {
        if (W.from[k].n && !strcmp(W.from[k].addr, addr))
            break;
        if (!W.from[k].n && free_at == MAX_WINDOWS)
            free_at = k;
    }
    if (W.n >= MAX_WINDOWS)
        why = "too many profile windows at once (8): try again when one ends";
    else if (k < MAX_WINDOWS && W.from[k].n >= MAX_WINDOWS_PER_IP)
        why = "too many profile windows from this address at once (2): try again when one ends";
    else {
        if (k == MAX_WINDOWS) {
            k = free_at;
            snprintf(W.from[k].addr, sizeof W.from[k].addr, "%s", addr);
        }
        W.from[k].n++;
        W.n++;
    }
    pthread_mutex_unlock(&W.lock);
    return why;
}

static void window_end(struct MHD_Connection *c)
{
    char addr[INET6_ADDRSTRLEN];
    client_addr(c, addr, sizeof addr);
    pthread_mutex_lock(&W.lock);
    for (size_t k = 0; k < MAX_WINDOWS; k++)
        if (W.from[k].n && !strcmp(W.from[k].addr, addr)) {
            W.from[k].n--;
            W.n--;
            break;
        }
    pthread_mutex_unlock(&W.lock);
}

/* Waits until END (monotonic) or stop: 0, or 1 as soon as the client has hung up. */
static int wait_window(struct MHD_Connection *c, double end)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    int fd = ci ? ci->connect_fd : -1;
    while (!stop) {
        double left = end - serve_mono_now();
        if (left <= 0)
            return 0;
        int ms = left < 0.1 ? (int)(left * 1000) + 1 : 100;
        struct pollfd p = {fd, POLLRDHUP, 0};
        if (fd >= 0 && poll(&p, 1, ms) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)))
            return 1;
        if (fd < 0) {
            struct timespec ts = {0, ms * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    return 0;
}

static enum MHD_Result busy(struct MHD_Connection *c, const char *why)
{
    char *body = xasprintf("%s\n", why);
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
    MHD_add_response_header(r, "Retry-After", "10");
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_SERVICE_UNAVAILABLE, r);
    MHD_destroy_response(r);
    return ret;
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
        const char *why = window_begin(c);
        if (why)
            return busy(c, why);
        pthread_mutex_lock(&SD.lock);
        serve_dir_refresh(SERVE_FULL, FULL_MAX_AGE_S);
        t0_mono = serve_mono_now();
        t0_unix = unix_now();
        start = xmalloc((SD.n + 1) * sizeof *start);
        for (size_t i = 0; i < SD.n; i++)
            if (!SD.v[i]->ended && (!want || SD.v[i]->pid == want))
                start[nstart++] = (struct held){SD.v[i]->pid, SD.v[i]->start_unix_ns, snap_get(SD.v[i]->latest)};
        pthread_mutex_unlock(&SD.lock);
        int gone = wait_window(c, t0_mono + (double)seconds);
        window_end(c);
        if (gone) {   /* the client hung up: the window ends with nobody to answer */
            pthread_mutex_lock(&SD.lock);
            for (size_t k = 0; k < nstart; k++)
                snap_put(start[k].snap);
            pthread_mutex_unlock(&SD.lock);
            free(start);
            return MHD_NO;
        }
    }

    pthread_mutex_lock(&SD.lock);
    if (!stop)
        serve_dir_refresh(SERVE_FULL, FULL_MAX_AGE_S);
    double now_mono = serve_mono_now(), now_unix = unix_now();
    struct live_pprof_part *parts = xmalloc((SD.n + 1) * sizeof *parts);
    struct live_stacks *deltas = xmalloc((SD.n + 1) * sizeof *deltas);
    size_t nparts = 0, ndeltas = 0;
    int64_t earliest = 0;
    for (size_t i = 0; i < SD.n; i++) {
        struct serve_proc *p = SD.v[i];
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
    pthread_mutex_unlock(&SD.lock);
    for (size_t k = 0; k < ndeltas; k++)
        live_stacks_free(&deltas[k]);
    free(deltas);
    free(parts);
    free(start);
    if (stop) {
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
    struct push_job *jobs = xmalloc((SD.n + 1) * sizeof *jobs);
    *njobs = 0;
    double now = unix_now();
    for (size_t i = 0; i < SD.n; i++) {
        struct serve_proc *p = SD.v[i];
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
        char *name = xasprintf("%s{pid=%lld,exe=%s}", SD.o->service ? SD.o->service : (*exe ? exe : "spanprof"),
                               p->pid, exe);
        char *esc = curl_easy_escape(curl, name, 0);
        jobs[*njobs].url = xasprintf("%s/ingest?name=%s&from=%lld&until=%lld&format=pprof", SD.o->push,
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

/* A push's reply: kept up to PUSH_REPLY_SHOWN bytes for the message when it failed, the rest
 * read and dropped (libcurl's default would print it on stdout). */
struct reply {
    char text[PUSH_REPLY_SHOWN + 1];
    size_t len;
};

static size_t take_reply(char *data, size_t size, size_t n, void *arg)
{
    struct reply *r = arg;
    size_t bytes = size * n, room = PUSH_REPLY_SHOWN - r->len;
    size_t keep = bytes < room ? bytes : room;
    memcpy(r->text + r->len, data, keep);
    r->len += keep;
    r->text[r->len] = 0;
    return bytes;
}

/* The reply's first line, printable characters only. */
static const char *reply_line(struct reply *r)
{
    size_t k = 0;
    for (; k < r->len && r->text[k] != '\n' && r->text[k] != '\r'; k++)
        if ((unsigned char)r->text[k] < 0x20 || r->text[k] == 0x7f)
            r->text[k] = '?';
    r->text[k] = 0;
    return r->text;
}

static void push_all(CURL *curl)
{
    size_t n;
    pthread_mutex_lock(&SD.lock);
    serve_dir_refresh(SERVE_FULL, FULL_MAX_AGE_S);
    struct push_job *jobs = push_jobs(curl, &n);
    pthread_mutex_unlock(&SD.lock);
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
        struct reply reply = {"", 0};
        curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, take_reply);
        curl_easy_setopt(curl, CURLOPT_WRITEDATA, &reply);
        CURLcode rc = curl_easy_perform(curl);
        long code = 0;
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
        if (rc != CURLE_OK)
            fprintf(stderr, "spanprof serve: push to %s failed: %s\n", SD.o->push,
                    *errbuf ? errbuf : curl_easy_strerror(rc));
        else if (code < 200 || code > 299)
            fprintf(stderr, "spanprof serve: push to %s failed: HTTP %ld%s%s\n", SD.o->push, code,
                    reply.len ? ": " : "", reply_line(&reply));
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
    stop = 1;
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

/* Whether SA is a loopback address (127.0.0.0/8, ::1, or ::ffff:127.x). */
static int is_loopback(const struct sockaddr_storage *sa)
{
    if (sa->ss_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
}

int cmd_serve(const struct serve_opts *o)
{
    stop = 0;
    struct stat st;
    if (stat(o->dir, &st) != 0 && errno == ENOENT && mkdir(o->dir, 0700) != 0) {
        fprintf(stderr, "spanprof serve: cannot create '%s': %s\n", o->dir, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    if (stat(o->dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "spanprof serve: '%s' is not a directory\n", o->dir);
        return EXIT_BAD_INPUT;
    }
    if (serve_dir_check(o))
        return EXIT_BAD_INPUT;
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
    if (!is_loopback(&sa))
        fprintf(stderr, "spanprof serve: warning: %s is not a loopback address: whoever can reach "
                "it can read every profile served (their function names, call counts and "
                "times); put a firewall or an authenticating proxy in front\n", o->listen);
    printf("spanprof serve: http://%s:%u/ (%s)\n", host, info ? (unsigned)info->port : 0u, o->dir);
    fflush(stdout);

    CURL *curl = NULL;
    if (o->push) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        curl = curl_easy_init();
    }
    double next_push = serve_mono_now() + o->interval;
    while (!stop) {
        struct timespec ts = {0, 200 * 1000 * 1000};
        for (int i = 0; i < 5 && !stop; i++)
            nanosleep(&ts, NULL);
        if (curl && serve_mono_now() >= next_push) {
            next_push += o->interval;
            if (next_push < serve_mono_now())
                next_push = serve_mono_now() + o->interval;
            push_all(curl);
        }
        pthread_mutex_lock(&SD.lock);
        serve_dir_retry_silent();
        serve_dir_retire(curl != NULL);
        pthread_mutex_unlock(&SD.lock);
    }
    MHD_stop_daemon(d);
    if (curl) {
        push_all(curl);   /* what happened since the last push, the processes' last snapshots too */
        curl_easy_cleanup(curl);
        curl_global_cleanup();
    }
    pthread_mutex_lock(&SD.lock);
    serve_dir_free();
    pthread_mutex_unlock(&SD.lock);
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
    "Only what DIR's owner or serve's own user runs is published: DIR must not be\n"
    "writable by other users; a link, or a socket whose process runs as another\n"
    "user, is skipped with one line on stderr. Processes are asked at once, each\n"
    "within 2 s: one that does not answer is skipped (spanprof_process_up 0) and\n"
    "asked again every 5 s. At most 8 windows run at once, 2 from one address.\n"
    "\n"
    "Options:\n"
    "  --listen ADDR:PORT   where to serve (default: " SERVE_DEFAULT_LISTEN "; port 0: any free\n"
    "                       port, printed on stdout); an address other than loopback\n"
    "                       gets a warning: anyone who reaches it reads the profiles\n"
    "  --push URL           Pyroscope's base URL, e.g. http://127.0.0.1:4040\n"
    "  --service NAME       the pushed profiles' application name (default: each\n"
    "                       process's executable)\n"
    "  --interval SECONDS   between pushes (default: 15)\n"
    "  --max-spans N        per process, the N span names with the most recent time\n"
    "                       (decaying with a 30 s half-life) have series of their\n"
    "                       own; one displaces another when twice as hot; the rest\n"
    "                       are summed as (other) (default: 100)\n"
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
