/* phases.c — the live test's program, built whole-program (-fplugin-arg-spanplugin-all: no
 * markup): phase_a() busy for A_S seconds, then phase_b() for B_S seconds, each call of either
 * spinning SPIN_US microseconds.  It counts its own calls of phase_b and, at the end, prints
 * "b_tenths N..." (its calls in each tenth of a second of phase B, by its own clock, in order).
 * "phase B" is written to the file MARK when phase B starts.  With WORKERS=N (pre-fork mode)
 * the parent forks N workers that run phase_b until killed, replaces the first with a new one
 * after a second (SIGTERM: it exits through exit(), leaving its final snapshot), writes every
 * worker's pid to MARK, one a line, then "done", and waits for SIGTERM.
 *
 * Usage: phases A_S B_S MARK   or   WORKERS=N phases 0 0 MARK */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SPIN_US 200

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile unsigned long sink;

/* Each phase spins in a loop of its own: whole-program mode's size rule keeps a function with
 * a loop (and leaves out now(), a one-line helper). */
__attribute__((noinline)) void phase_a(void)
{
    double end = now() + SPIN_US / 1e6;
    while (now() < end)
        sink++;
}

__attribute__((noinline)) void phase_b(void)
{
    double end = now() + SPIN_US / 1e6;
    while (now() < end)
        sink++;
}

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static pid_t worker(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGTERM, on_term);
        while (!stop)
            phase_b();
        exit(0);
    }
    return pid;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    double a_s = atof(argv[1]), b_s = atof(argv[2]);
    const char *workers = getenv("WORKERS");
    if (workers) {
        int n = atoi(workers);
        pid_t pids[16];
        signal(SIGTERM, on_term);
        for (int i = 0; i < n && i < 15; i++)
            pids[i] = worker();
        sleep(1);
        kill(pids[0], SIGTERM);
        waitpid(pids[0], NULL, 0);
        pids[n] = worker();
        FILE *f = fopen(argv[3], "w");
        for (int i = 0; i <= n; i++)
            fprintf(f, "%d\n", (int)pids[i]);
        fputs("done\n", f);
        fclose(f);
        while (!stop)
            pause();
        for (int i = 1; i <= n; i++)
            kill(pids[i], SIGTERM);
        while (wait(NULL) > 0)
            ;
        return 0;
    }
    double end = now() + a_s;
    while (now() < end)
        phase_a();
    FILE *f = fopen(argv[3], "w");
    fputs("phase B\n", f);
    fclose(f);
    double start = now();
    end = start + b_s;
    /* Calls per tenth of a second of phase B: on a busy machine the rate moves from one second
     * to the next, so a window's count is judged against the counts of windows of its length. */
    size_t nbuckets = (size_t)(b_s * 10) + 1;
    unsigned long *bucket = calloc(nbuckets, sizeof *bucket);
    if (!bucket)
        return 1;
    for (double t = start; t < end; t = now()) {
        phase_b();
        bucket[(size_t)((t - start) * 10)]++; /* t < end: below nbuckets */
    }
    printf("b_tenths");
    for (size_t i = 0; i < nbuckets; i++)
        printf(" %lu", bucket[i]);
    printf("\n");
    free(bucket);
    return 0;
}
