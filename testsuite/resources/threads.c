/* threads.c — allocation counts per span with 4 threads at once, and a block allocated in one
 * thread's span and freed in another thread's span (freed there, no longer live where it was
 * allocated). */
#include <pthread.h>
#include <spanprof.h>
#include <stdio.h>
#include <stdlib.h>

enum { THREADS = 4, BLOCKS = 1000 };
static void *volatile sink;
static void *handoff[THREADS];

__attribute__((span, noinline)) void work(void)
{
    for (int i = 0; i < BLOCKS; i++) {
        void *p = malloc(100);
        sink = p;
        free(p);
    }
}

__attribute__((span, noinline)) void produce(int i)
{
    handoff[i] = malloc(256);
}

__attribute__((span, noinline)) void consume(int i)
{
    free(handoff[i]);
}

static void *worker(void *arg)
{
    work();
    produce((int)(long)arg);
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < THREADS - 1; i++) /* the last one stays live */
        consume(i);
    puts("done");
    return 0;
}
