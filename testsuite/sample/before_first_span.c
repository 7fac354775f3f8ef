/* before_first_span.c — time before a thread's first span is outside every span: main sleeps
 * 600 ms, then calls a span that sleeps 200 ms.  The runner checks the span's sampled wall time
 * against those 200 ms (the first sample used to charge it the 600 ms too) and, with
 * SPANPROF_IDLE=1, that the time outside spans holds the 600 ms.
 * test-env: SPANPROF_IDLE=1 */
#include <time.h>

__attribute__((span, noinline)) static void short_sleep(void)
{
    struct timespec ts = {0, 200000000};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

int main(void)
{
    struct timespec ts = {0, 600000000};
    while (nanosleep(&ts, &ts) != 0)
        ;
    short_sleep();
    return 0;
}
