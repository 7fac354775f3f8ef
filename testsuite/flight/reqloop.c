/* reqloop.c — a request loop without markup, built whole-program: two worker threads serve
 * requests (parse, then digest) until a deadline; one request in STALL_EVERY takes ~6 ms more
 * because parse calls stall(), which spins on the clock.
 *
 * usage: reqloop SECONDS [fork|threads|term|crash|quiet]
 *   fork     a fork child runs its own loop for SECONDS too (its own captures)
 *   threads  short-lived threads come and go beside the workers
 *   term     the main thread sends itself SIGTERM once the first worker saw a slow request
 *   crash    halfway through SECONDS the first worker writes through a null pointer inside a
 *            request (after parse): the process dies of SIGSEGV
 *   quiet    no slow request at all
 *   work     no deadline: each worker serves SECONDS × 10,000 requests (a fixed amount of work,
 *            for comparing CPU time: bench/flight.sh)
 * Prints "slow N" when at least one slow request was served, "slow 0" otherwise.  With
 * REQLOOP_STALLS=FILE, writes there each stall's thread, start and end ("TID START END", ns on
 * CLOCK_MONOTONIC, the first 16384), so a test can tell which slow requests stalled. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STALL_EVERY 2000

static double deadline;
static uint64_t requests; /* work: requests per worker; 0: until the deadline */
static int quiet;
static volatile int slow_seen;
static volatile uint64_t sink;
static double crash_at; /* crash: when the first worker faults; 0: never */
static int *volatile nowhere; /* a null pointer the compiler cannot see */
static __thread int first_worker;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

#define STALLS_KEPT 16384
static struct { pid_t tid; double start, end; } stalls[STALLS_KEPT];
static unsigned nstalls;

__attribute__((noinline)) static void stall(void)
{
    double start = now(), end = start + 0.006;
    while (now() < end)
        sink++;
    unsigned i = __atomic_fetch_add(&nstalls, 1, __ATOMIC_RELAXED);
    if (i < STALLS_KEPT) {
        stalls[i].tid = gettid();
        stalls[i].start = start;
        stalls[i].end = now();
    }
}

static void write_stalls(void)
{
    const char *path = getenv("REQLOOP_STALLS");
    FILE *f = path ? fopen(path, "w") : NULL;
    for (unsigned i = 0; f && i < nstalls && i < STALLS_KEPT; i++)
        fprintf(f, "%ld %.0f %.0f\n", (long)stalls[i].tid, stalls[i].start * 1e9,
                stalls[i].end * 1e9);
    if (f)
        fclose(f);
}

__attribute__((noinline)) static uint64_t parse(uint64_t req)
{
    uint64_t h = req;
    for (int i = 0; i < 2000; i++)
        sink += (h = h * 6364136223846793005u + 1442695040888963407u) & 1;
    h = req;
    if (!quiet && h % STALL_EVERY == STALL_EVERY - 1) {
        stall();
        slow_seen++;
    }
    return h;
}

__attribute__((noinline)) static uint64_t digest(uint64_t h)
{
    for (int i = 0; i < 2000; i++)
        h ^= h >> 13, h *= 0x9E3779B97F4A7C15u;
    return h;
}

__attribute__((noinline)) static void fault(void)
{
    *nowhere = 1;
}

/* A request: its steps in a loop (a loopless function this small is no span in whole-program
 * mode). */
__attribute__((noinline)) static void handle(uint64_t req)
{
    uint64_t h = req;
    for (int step = 0; step < 2; step++) {
        h = step == 0 ? parse(h) : digest(h);
        if (crash_at && step == 0 && first_worker && now() > crash_at)
            fault();
    }
    sink += h;
}

static void *worker(void *arg)
{
    uint64_t req = (uintptr_t)arg, first = req;
    first_worker = req == 0;
    if (requests)
        while (req - first < requests)
            handle(req++);
    else
        while (now() < deadline)
            handle(req++);
    return NULL;
}

static void *brief(void *arg)
{
    for (uint64_t i = 0; i < 50; i++)
        sink += digest(i + (uintptr_t)arg);
    return NULL;
}

static void run(double seconds, const char *mode)
{
    deadline = now() + seconds;
    pthread_t a, b;
    pthread_create(&a, NULL, worker, (void *)(uintptr_t)0);
    pthread_create(&b, NULL, worker, (void *)(uintptr_t)(STALL_EVERY / 2));
    if (strcmp(mode, "threads") == 0)
        for (uintptr_t i = 0; now() < deadline; i++) {
            pthread_t c;
            pthread_create(&c, NULL, brief, (void *)i);
            pthread_join(c, NULL);
            usleep(20000);
        }
    if (strcmp(mode, "term") == 0) {
        while (!slow_seen && now() < deadline)
            usleep(1000);
        /* The trigger is noted at the slow call's exit, just after the count. */
        usleep(20000);
        kill(getpid(), SIGTERM);
        for (;;)
            pause();
    }
    pthread_join(a, NULL);
    pthread_join(b, NULL);
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 5;
    const char *mode = argc > 2 ? argv[2] : "";
    quiet = strcmp(mode, "quiet") == 0;
    if (strcmp(mode, "crash") == 0)
        crash_at = now() + seconds / 2;
    if (strcmp(mode, "work") == 0)
        requests = (uint64_t)(seconds * 10000);
    if (strcmp(mode, "fork") == 0) {
        pid_t pid = fork();
        if (pid == 0) {
            run(seconds, "");
            exit(0);
        }
        run(seconds, "");
        int status;
        waitpid(pid, &status, 0);
    } else {
        run(seconds, mode);
    }
    write_stalls();
    printf("slow %s\n", slow_seen ? "N" : "0");
    return 0;
}
