/* crash.c — a program that dereferences NULL inside a span: it still dies by SIGSEGV, and the
 * folded stacks (counts) are written first; the JSON profile is not (crashes write folded
 * stacks only). */
/* test-env: SPANPROF_JSON=out.json */
#include <stdio.h>

__attribute__((span, noinline)) void work(void)
{
}

__attribute__((span, noinline)) void fault(int *volatile p)
{
    work();
    *p = 1;
}

int main(void)
{
    for (int i = 0; i < 3; i++)
        work();
    puts("about to crash");
    fflush(stdout);
    fault(NULL);
    puts("not reached");
    return 0;
}
