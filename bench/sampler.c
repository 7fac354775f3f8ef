/* sampler.c — the cost of SPANPROF=sample's sampler thread: N threads (argv[1]) each wait in a
 * span for SECONDS (argv[2], default 2), while the sampler samples them at SPANPROF_SAMPLE_HZ;
 * prints one Markdown row: threads, rate, the sampler thread's CPU time per second of wall time
 * (from its /proc schedstat, which counts every ns it ran), as a share of one core, and per pass
 * (one wake-up sampling every thread).
 * Run with SPANPROF=sample (make bench does, for 1, 8 and 64 threads). */
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double seconds = 2;
static pthread_barrier_t ready;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ns on CPU of the thread named spanprof-sample, or 0 when there is none. */
static uint64_t sampler_cpu_ns(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    uint64_t ns = 0;
    while (d && (e = readdir(d))) {
        char path[300], buf[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        int is_sampler = fgets(buf, sizeof buf, f) && strncmp(buf, "spanprof-sample", 15) == 0;
        fclose(f);
        if (!is_sampler)
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
        f = fopen(path, "r");
        unsigned long long v = 0;
        if (f && fscanf(f, "%llu", &v) == 1)
            ns = v;
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return ns;
}

__attribute__((span, noinline)) static void wait_in_span(void)
{
    pthread_barrier_wait(&ready);
    struct timespec ts = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void *worker(void *arg)
{
    (void)arg;
    wait_in_span();
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1;
    if (argc > 2)
        seconds = atof(argv[2]);
    if (n < 1 || n > 4096 || seconds <= 0) {
        fprintf(stderr, "usage: sampler THREADS [SECONDS]\n");
        return 2;
    }
    pthread_t *t = calloc((size_t)n, sizeof *t);
    pthread_barrier_init(&ready, NULL, (unsigned)n + 1);
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    pthread_barrier_wait(&ready); /* every thread registered (its span entered) */
    uint64_t c0 = sampler_cpu_ns(), w0 = now_ns();
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    uint64_t c1 = sampler_cpu_ns(), w1 = now_ns();
    const char *hz = getenv("SPANPROF_SAMPLE_HZ");
    double per_s = (double)(c1 - c0) / ((double)(w1 - w0) / 1e9);
    printf("| %d | %s | %.2f ms | %.2f %% | %.1f µs |\n", n, hz ? hz : "997", per_s / 1e6,
           per_s / 1e7, per_s / (hz ? atof(hz) : 997.0) / 1e3);
    free(t);
    return c0 || c1 ? 0 : 1;
}
