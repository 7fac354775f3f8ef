/* threads.c — trace sample: two named worker threads and the main thread run nested and
 * recursive spans a fixed number of times; with the argument "fork", the main thread forks and
 * the child runs spans too; with "churn", 40 more short-lived threads run one after the other
 * (the trace keeps the rings of the 32 that ended last). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spanprof.h>

static volatile unsigned long sink;

__attribute__((span)) static void leaf(unsigned long i) { sink += i; }

__attribute__((span)) static unsigned long fib(unsigned n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((span("work"))) static void work(int n)
{
    for (int i = 0; i < n; i++)
        leaf((unsigned long)i);
    sink += fib(5); /* 15 calls */
}

__attribute__((span)) static void *worker(void *arg)
{
    char name[16];
    snprintf(name, sizeof name, "worker-%d", (int)(long)arg);
    pthread_setname_np(pthread_self(), name);
    work(100 * (int)(long)arg);
    return NULL;
}

static void *job(void *arg)
{
    char name[16];
    snprintf(name, sizeof name, "job-%02d", (int)(long)arg);
    pthread_setname_np(pthread_self(), name);
    work(1);
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_setname_np(pthread_self(), "main");
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, (void *)(i + 1));
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    work(10);
    if (argc > 1 && !strcmp(argv[1], "churn"))
        for (long i = 0; i < 40; i++) {
            pthread_create(&t[0], NULL, job, (void *)i);
            pthread_join(t[0], NULL);
        }
    if (argc > 1 && !strcmp(argv[1], "fork")) {
        pid_t pid = fork();
        if (pid == 0) {
            work(3);
            exit(0);
        }
        waitpid(pid, NULL, 0);
    }
    return 0;
}
