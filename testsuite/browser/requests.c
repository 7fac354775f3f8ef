/* requests.c — browser test sample: a timeline that is unlabelled slivers when it shows the whole
 * run.  One thread handles 40 requests, each a span of 20 short steps, 1 ms apart (asleep in
 * between, outside spans): the run lasts some 40 ms, a request some µs, a step a fraction of
 * one.  The page must open on a stretch of a few requests. */
#define _GNU_SOURCE
#include <time.h>

#include <spanprof.h>

static volatile unsigned long sink;

__attribute__((span)) static void step(int i)
{
    for (int k = 0; k < 200; k++)
        sink += (unsigned long)(i + k);
}

__attribute__((span)) static void request(void)
{
    for (int i = 0; i < 20; i++)
        step(i);
}

int main(void)
{
    struct timespec ms = {0, 1000000L};
    for (int r = 0; r < 40; r++) {
        request();
        nanosleep(&ms, NULL);
    }
    return 0;
}
