/* sampler_thread.c — the sampler is a thread of its own, named spanprof-sample, there from
 * start-up when SPANPROF=sample, and absent in the other modes (the runner runs this with
 * SPANPROF=sample, then SPANPROF=count and SPANPROF=1). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

__attribute__((span, noinline)) static void list_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    char names[16][32];
    int n = 0;
    while (d && (e = readdir(d)) && n < 16) {
        if (e->d_name[0] == '.')
            continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fgets(names[n], sizeof names[n], f)) {
            names[n][strcspn(names[n], "\n")] = 0;
            n++;
        }
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    struct timespec ts = {0, 50000000}; /* 50 ms: sampled many times over */
    nanosleep(&ts, NULL);
    qsort(names, (size_t)n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    for (int i = 0; i < n; i++)
        printf("thread %s\n", names[i]);
}

int main(void)
{
    list_threads();
    return 0;
}
