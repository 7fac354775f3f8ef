/* longjmp.c — longjmp out of nested spans skips their exits. The repair at the setjmp's return
 * drops the abandoned frames: counts stay exact, later stacks are right, and jumping out in a
 * loop does not grow the shadow stack. */
#include <setjmp.h>
#include <spanprof.h>
#include <stdio.h>

static jmp_buf recovery;

__attribute__((span, noinline)) void fail_deep(int i)
{
    if (i >= 0)
        longjmp(recovery, i + 1);
}

__attribute__((span, noinline)) void middle(int i)
{
    fail_deep(i);
}

__attribute__((span, noinline)) int after(int i)
{
    return i + 1;
}

__attribute__((span, noinline)) int attempt(int i)
{
    volatile int result = 0;
    if (setjmp(recovery) == 0)
        middle(i);            /* jumps back to the setjmp above */
    else
        result = after(i);    /* runs inside "attempt", after "middle" was abandoned */
    return result;
}

int main(void)
{
    long sum = 0;
    for (int i = 0; i < 1000; i++)
        sum += attempt(i);
    printf("sum=%ld\n", sum);
    return 0;
}
