/* progress.c — progress points count exactly: a hit per return of a `progress` function on every
 * path (early returns included), one per pass through SPANPROF_PROGRESS, a function with both a
 * span and a progress point, and 8 threads hitting the same points at once. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <spanprof.h>
#include <stdio.h>

enum { THREADS = 8, ITEMS = 1000 };

/* Three ways out: each counts once. */
__attribute__((progress, noinline)) int classify(int x)
{
    if (x % 3 == 0)
        return 0;
    if (x % 3 == 1)
        return 1;
    return 2;
}

/* Span and progress point on one function, the point with its own name. */
__attribute__((span, progress("item.done"), noinline)) unsigned handle(unsigned x)
{
    if (x & 1)
        SPANPROF_PROGRESS("odd");
    return x * 2654435761u;
}

__attribute__((progress("worker.finished"))) void *worker(void *arg)
{
    unsigned *sum = (unsigned *)arg;
    for (unsigned i = 0; i < ITEMS; i++)
        *sum += handle(i);
    return NULL;
}

int main(void)
{
    int counts[3] = { 0, 0, 0 };
    for (int i = 0; i < 10; i++)
        counts[classify(i)]++;
    printf("classified %d %d %d\n", counts[0], counts[1], counts[2]);

    pthread_t threads[THREADS];
    unsigned sums[THREADS] = { 0 };
    for (int i = 0; i < THREADS; i++)
        pthread_create(&threads[i], NULL, worker, &sums[i]);
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    unsigned differ = 0;
    for (int i = 0; i < THREADS; i++)
        differ |= sums[i] ^ sums[0];
    printf("threads agree: %s\n", differ == 0 ? "yes" : "no");
    return 0;
}
