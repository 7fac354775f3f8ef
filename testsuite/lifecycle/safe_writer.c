/* safe_writer.c — the folded stacks written from a signal handler (SIGTERM, no writer thread:
 * folded only) are the same as those written at exit: per-thread roots with thread names, file
 * and line, a recursion deeper than the folded depth limit cut at "[truncated]".
 * test-driver: same-as-exit
 * test-env: SPANPROF_THREADS=1 SPANPROF_FILE_LINE=1 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

__attribute__((span, noinline)) void leaf(void)
{
}

__attribute__((span, noinline)) void deep(int n)
{
    if (n > 0)
        deep(n - 1);
    else
        leaf();
}

__attribute__((span, noinline)) void *worker(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "worker");
    for (int i = 0; i < 3; i++)
        leaf();
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t th;
    pthread_create(&th, NULL, worker, NULL);
    pthread_join(th, NULL);
    deep(1100);
    leaf();
    if (argc > 1 && strcmp(argv[1], "term") == 0)
        raise(SIGTERM);
    return 0;
}
