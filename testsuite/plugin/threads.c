/* threads.c — 32 threads run spans at once: every thread's calls are counted exactly, threads
 * that end before the process lose nothing, and with SPANPROF_THREADS=1 each thread gets its own
 * root frame named after the thread. */
/* test-env: SPANPROF_THREADS=1 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <spanprof.h>
#include <stdio.h>

enum { THREADS = 32, ITEMS = 1000 };

__attribute__((span, noinline)) unsigned hash_item(unsigned x)
{
    x ^= x >> 16;
    x *= 0x45d9f3bu;
    return x ^ (x >> 16);
}

__attribute__((span)) void *worker(void *arg)
{
    unsigned *result = (unsigned *)arg;
    pthread_setname_np(pthread_self(), "worker");
    for (unsigned i = 0; i < ITEMS; i++)
        *result += hash_item(i);
    return NULL;
}

int main(void)
{
    pthread_t threads[THREADS];
    unsigned results[THREADS] = { 0 };
    pthread_setname_np(pthread_self(), "main");
    for (int i = 0; i < THREADS; i++)
        pthread_create(&threads[i], NULL, worker, &results[i]);
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    unsigned all = 0;
    for (int i = 0; i < THREADS; i++)
        all |= results[i] ^ results[0];
    printf("threads agree: %s\n", all == 0 ? "yes" : "no");
    return 0;
}
