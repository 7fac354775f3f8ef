/* no_preload.c — SPANPROF_ALLOC=1 without libspanprof-alloc.so: one warning, no allocation
 * fields, the rest of the profile as usual. */
/* test: no-preload */
#include <spanprof.h>
#include <stdio.h>
#include <stdlib.h>

static void *volatile sink;

__attribute__((span, noinline)) void alloc(void)
{
    sink = malloc(10);
}

int main(void)
{
    alloc();
    puts("done");
    return 0;
}
