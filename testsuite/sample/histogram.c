/* histogram.c — SPANPROF_HISTOGRAM=1 with SPANPROF=sample: one warning line saying why there are
 * no histograms (sample mode measures no call's duration), and the profile as without it.
 * test-env: SPANPROF_HISTOGRAM=1 */
#include <stdio.h>
#include <time.h>

__attribute__((span, noinline)) static void nap(void)
{
    struct timespec t = {0, 2000000};
    nanosleep(&t, NULL);
}

int main(void)
{
    for (int i = 0; i < 20; i++)
        nap();
    printf("done\n");
    return 0;
}
