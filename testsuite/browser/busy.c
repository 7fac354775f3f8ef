/* busy.c — browser test sample: three threads of very different loads, the busiest neither the
 * first nor the last in the trace.  "light" runs one short span and ends before "heavy" starts,
 * so the trace lists light, heavy, main in that order (their first spans'); "heavy" spends about
 * 60 ms in spans, the others well under one; the main thread only waits in between. */
#define _GNU_SOURCE
#include <pthread.h>
#include <time.h>

#include <spanprof.h>

static volatile unsigned long sink;

__attribute__((span)) static void nap(long ms)
{
    struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};
    nanosleep(&ts, NULL);
}

__attribute__((span)) static void step(int i) { sink += (unsigned long)i; }

__attribute__((span)) static void *worker(void *arg)
{
    long ms = (long)arg;
    pthread_setname_np(pthread_self(), ms ? "heavy" : "light");
    for (int i = 0; i < 3; i++)
        step(i);
    if (ms)
        nap(ms);
    return NULL;
}

int main(void)
{
    pthread_setname_np(pthread_self(), "main");
    pthread_t t;
    pthread_create(&t, NULL, worker, (void *)0L);
    pthread_join(t, NULL);
    pthread_create(&t, NULL, worker, (void *)60L);
    pthread_join(t, NULL);
    step(0);
    return 0;
}
