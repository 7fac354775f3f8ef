/* dlclose.c — a library with spans loaded, unloaded, loaded again and unloaded again
 * (dlclose_lib.inc).  Each time the main thread calls into it once and a thread twice; the first
 * time that thread exits only after the unload.  With "moved", a page of the first load's place
 * is taken before the second load, so the library comes back at another address; with
 * "settings", the second load's runtime (if it comes with the library) records with other
 * settings, so it cannot take over the first one's profile.  The folded
 * and JSON profiles hold both loads' calls under the library's names, whichever copy of the
 * runtime records them: the program's (shared, or static with -rdynamic) or one inside the
 * library that goes away with it.  At the end: what is left running (threads, the SIGTERM action)
 * and a fork, which would crash on a fork handler left by a runtime that is gone.
 * test-env: SPANPROF_JSON=out.json SPANPROF_TRACE=trace.json
 * test-driver: dlclose */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

typedef void (*work_fn)(void);
static sem_t ran, go;

static void *worker(void *arg)
{
    work_fn work = (work_fn)(uintptr_t)arg;
    work();
    work();
    sem_post(&ran);
    sem_wait(&go); /* exits when told: after the unload */
    return NULL;
}

/* One load: the main thread's call, the worker's two; the worker ends after the unload when
 * LATE.  Returns where the library's code was. */
static uintptr_t load_run_unload(const char *path, int late)
{
    void *lib = dlopen(path, RTLD_NOW);
    if (!lib) {
        printf("dlopen: %s\n", dlerror());
        return 0;
    }
    work_fn work = (work_fn)(uintptr_t)dlsym(lib, "lib_work");
    work();
    pthread_t th;
    pthread_create(&th, NULL, worker, (void *)(uintptr_t)work);
    sem_wait(&ran);
    if (!late) {
        sem_post(&go);
        pthread_join(th, NULL);
    }
    if (dlclose(lib) != 0)
        printf("dlclose: %s\n", dlerror());
    if (late) {
        sem_post(&go);
        pthread_join(th, NULL);
    }
    return (uintptr_t)work;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "";
    int moved = argc > 2 && strcmp(argv[2], "moved") == 0;
    sem_init(&ran, 0, 0);
    sem_init(&go, 0, 0);
    uintptr_t first = load_run_unload(path, 1);
    if (moved) {
        long page = sysconf(_SC_PAGESIZE);
        void *at = (void *)(first & ~(uintptr_t)(page - 1));
        if (mmap(at, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                 -1, 0) != at)
            puts("could not take the old place");
    }
    if (argc > 2 && strcmp(argv[2], "settings") == 0)
        setenv("SPANPROF_CPU", "1", 1); /* read by a runtime that starts from now on */
    uintptr_t second = load_run_unload(path, 0);
    if (moved)
        printf("loaded again at another address: %s\n", second != first ? "yes" : "no");
    /* What is left running: a runtime that went away with the library left no thread, signal
     * handler or fork handler behind. */
    int writers = 0;
    DIR *dir = opendir("/proc/self/task");
    for (struct dirent *e; dir && (e = readdir(dir));) {
        char comm[64] = "", name[300];
        snprintf(name, sizeof name, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = e->d_name[0] != '.' ? fopen(name, "r") : NULL;
        if (f && fgets(comm, sizeof comm, f))
            writers += strcmp(comm, "spanprof-write\n") == 0;
        if (f)
            fclose(f);
    }
    if (dir)
        closedir(dir);
    printf("writer threads left: %d\n", writers);
    struct sigaction term;
    sigaction(SIGTERM, NULL, &term);
    printf("SIGTERM action: %s\n", term.sa_handler == SIG_DFL ? "default" : "a handler");
    fflush(stdout);
    pid_t child = fork();
    if (child == 0)
        _exit(7);
    int status = 0;
    waitpid(child, &status, 0);
    printf("fork: child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    puts("done");
    return 0;
}
