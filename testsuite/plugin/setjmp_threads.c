/* setjmp_threads.c — sigsetjmp/siglongjmp in 4 threads at once: each thread's signal handler
 * jumps out of the spans that raised the signal, back to that thread's sigsetjmp.  Every
 * thread's stack is repaired on its own: counts exact, `recovered` never under `deep`. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spanprof.h>
#include <stdio.h>

enum { THREADS = 4, ROUNDS = 50 };

static __thread sigjmp_buf retry;
static __thread int recoveries;

static void on_signal(int sig)
{
    (void)sig;
    siglongjmp(retry, 1);
}

__attribute__((span, noinline)) void deep(int n)
{
    if (n == 0)
        raise(SIGUSR1); /* delivered to this thread before raise returns */
    else
        deep(n - 1);
}

__attribute__((span, noinline)) void recovered(void)
{
    recoveries++;
}

__attribute__((span)) void *worker(void *arg)
{
    static __thread int round; /* changed after sigsetjmp: not in a register */
    for (round = 0; round < ROUNDS; round++) {
        if (sigsetjmp(retry, 1) == 0)
            deep(3);
        else
            recovered();
    }
    *(int *)arg = recoveries;
    return NULL;
}

int main(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    pthread_t threads[THREADS];
    int done[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&threads[i], NULL, worker, &done[i]);
    int total = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        total += done[i];
    }
    printf("recoveries=%d\n", total);
    return 0;
}
