/* cpu.c — SPANPROF_CPU=1 gives every span cpu_ns; a bad value of a resource variable gives one
 * warning and the default. */
/* test-env: SPANPROF_CPU=1 SPANPROF_ALLOC=0 SPANPROF_HISTOGRAM=yes SPANPROF_ALLOC_SAMPLE=0 */
#include <spanprof.h>
#include <stdio.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((span, noinline)) void spin(void)
{
    for (unsigned long i = 0; i < 20000000; i++)
        sink += i;
}

__attribute__((span, noinline)) void sys(void)
{
    for (int i = 0; i < 2000; i++)
        sink += (unsigned long)getppid();
}

int main(void)
{
    spin();
    sys();
    puts("done");
    return 0;
}
