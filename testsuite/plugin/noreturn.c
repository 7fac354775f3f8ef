/* noreturn.c — a span that never returns (it calls exit): the call is still counted and the
 * profile is still written, and the program's exit status is untouched. */
#include <spanprof.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((span)) int step(int i)
{
    return i * 2;
}

__attribute__((span, noreturn)) void finish(int status)
{
    printf("finishing with %d\n", status);
    exit(status);
}

__attribute__((span)) int run(void)
{
    int total = 0;
    for (int i = 0; i < 3; i++)
        total += step(i);
    finish(total);
}

int main(void)
{
    return run();
}
