/* live.c — what live profiles (SPANPROF_LIVE) cost: `make bench`'s live table (bench/live.sh).
 *
 *   live snapshot THREADS [spans]
 *                           THREADS threads call 500 distinct spans, each calling two more levels
 *                           below it (1,500 call-tree nodes a thread), then park; the program
 *                           then asks its own socket for 30 snapshots (with "spans": the spans
 *                           only, as a scrape of /metrics asks) and prints THREADS, the median
 *                           and the largest time from request to last byte (ms), the process's
 *                           CPU time per snapshot (ms) and the snapshot's size
 *   live work SECONDS       2 threads call the 500 spans for a fixed amount of work (about
 *                           SECONDS of it on an idle machine): bench/live.sh compares its CPU
 *                           time with and without SPANPROF_LIVE and a client asking every second
 *   live scrape DIR         that client: every second, a snapshot of every DIR/PID.sock, until
 *                           killed (the bench's program runs without the plugin's runtime when
 *                           SPANPROF_LIVE is unset in its environment)
 * Built with the plugin (-all is not needed: every span is marked). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "live/protocol.h"

#define NSPANS 500
static volatile unsigned long sink;
typedef void (*span_fn)(int depth);
static span_fn table[NSPANS];

#define SPAN_FN(n)                                                                                 \
    __attribute__((span, noinline)) static void f##n(int depth)                                    \
    {                                                                                              \
        sink++;                                                                                    \
        if (depth > 0)                                                                             \
            table[(n * 31 + 7) % NSPANS](depth - 1);                                               \
    }
#define D10(p) SPAN_FN(p##0) SPAN_FN(p##1) SPAN_FN(p##2) SPAN_FN(p##3) SPAN_FN(p##4)              \
               SPAN_FN(p##5) SPAN_FN(p##6) SPAN_FN(p##7) SPAN_FN(p##8) SPAN_FN(p##9)
#define D100(p) D10(p##0) D10(p##1) D10(p##2) D10(p##3) D10(p##4) D10(p##5) D10(p##6) D10(p##7)  \
                D10(p##8) D10(p##9)
SPAN_FN(0) SPAN_FN(1) SPAN_FN(2) SPAN_FN(3) SPAN_FN(4) SPAN_FN(5) SPAN_FN(6) SPAN_FN(7)
SPAN_FN(8) SPAN_FN(9) D10(1) D10(2) D10(3) D10(4) D10(5) D10(6) D10(7) D10(8) D10(9)
D100(1) D100(2) D100(3) D100(4)

#define T10(p) &f##p##0, &f##p##1, &f##p##2, &f##p##3, &f##p##4, &f##p##5, &f##p##6, &f##p##7,   \
               &f##p##8, &f##p##9,
#define T100(p) T10(p##0) T10(p##1) T10(p##2) T10(p##3) T10(p##4) T10(p##5) T10(p##6)          \
                T10(p##7) T10(p##8) T10(p##9)
static span_fn const all[NSPANS] = {&f0, &f1, &f2, &f3, &f4, &f5, &f6, &f7, &f8, &f9,
                                    T10(1) T10(2) T10(3) T10(4) T10(5) T10(6) T10(7) T10(8)
                                    T10(9) T100(1) T100(2) T100(3) T100(4)};

static long rounds;
static pthread_barrier_t parked;

static void *worker(void *arg)
{
    (void)arg;
    for (long r = 0; r < rounds; r++)
        for (int i = 0; i < NSPANS; i++)
            table[i](2);
    if (arg)
        pthread_barrier_wait(&parked);
    return NULL;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The request the snapshots are asked with (live/protocol.h). */
static const char *request = SPANPROF_LIVE_REQUEST;

/* One snapshot of this process through its own socket: seconds, and its size in *BYTES. */
static double snapshot(const char *path, size_t *bytes)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    double t0 = now();
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        perror(path);
        if (fd >= 0)
            close(fd);
        return 0; /* scrape: a process that just ended */
    }
    send(fd, request, strlen(request), 0);
    static char buf[1 << 16];
    *bytes = 0;
    for (ssize_t k; (k = read(fd, buf, sizeof buf)) > 0;)
        *bytes += (size_t)k;
    close(fd);
    return now() - t0;
}

int main(int argc, char **argv)
{
    memcpy(table, all, sizeof table);
    if ((argc == 3 || (argc == 4 && strcmp(argv[3], "spans") == 0)) &&
        strcmp(argv[1], "snapshot") == 0) {
        if (argc == 4)
            request = SPANPROF_LIVE_REQUEST_SPANS;
        int n = atoi(argv[2]);
        const char *dir = getenv("SPANPROF_LIVE");
        if (!dir) {
            fprintf(stderr, "live: set SPANPROF_LIVE\n");
            return 2;
        }
        rounds = 2;
        pthread_barrier_init(&parked, NULL, (unsigned)n + 1);
        pthread_t t[64];
        for (int i = 0; i < n && i < 64; i++)
            pthread_create(&t[i], NULL, worker, (void *)1);
        pthread_barrier_wait(&parked); /* every thread's tree complete; they stay alive */
        char path[4096];
        snprintf(path, sizeof path, "%s/%ld.sock", dir, (long)getpid());
        double times[30];
        size_t bytes = 0;
        struct timespec c0, c1;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0); /* the workers are parked: the live thread's */
        for (int i = 0; i < 30; i++)
            times[i] = snapshot(path, &bytes);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
        double cpu = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9;
        qsort(times, 30, sizeof *times, cmp);
        printf("%d %.2f %.2f %.2f %zu\n", n, times[15] * 1e3, times[29] * 1e3, cpu / 30 * 1e3, bytes);
        for (int i = 0; i < n && i < 64; i++)
            pthread_join(t[i], NULL);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "work") == 0) {
        rounds = (long)(atof(argv[2]) * 12000); /* 12,000 rounds: about 1 s of a core */
        pthread_t t[2];
        for (int i = 0; i < 2; i++)
            pthread_create(&t[i], NULL, worker, NULL);
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "scrape") == 0) {
        for (;;) {
            char cmd[4200];
            snprintf(cmd, sizeof cmd, "ls %s 2>/dev/null", argv[2]);
            FILE *ls = popen(cmd, "r");
            char name[256];
            while (ls && fgets(name, sizeof name, ls)) {
                name[strcspn(name, "\n")] = 0;
                size_t len = strlen(name), bytes;
                if (len > 5 && strcmp(name + len - 5, ".sock") == 0) {
                    char path[4096];
                    snprintf(path, sizeof path, "%s/%s", argv[2], name);
                    snapshot(path, &bytes);
                }
            }
            if (ls)
                pclose(ls);
            sleep(1);
        }
    }
    fprintf(stderr, "usage: live snapshot THREADS [spans] | live work SECONDS | live scrape DIR\n");
    return 2;
}
