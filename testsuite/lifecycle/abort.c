/* abort.c — abort() inside a span: dies by SIGABRT with the folded stacks written. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((span, noinline)) void check(int ok)
{
    if (!ok)
        abort();
}

int main(void)
{
    check(1);
    check(1);
    check(0);
    return 0;
}
