/* setjmp_indirect.c — a test driver: each test runs through the same indirect call under a
 * setjmp, and one of them fails by longjmp.  The tests after the failing one are siblings under
 * main, never nested under the test that jumped: all are reached from one call instruction in
 * one frame, so frame and return addresses cannot tell a new test from the abandoned one. */
#include <setjmp.h>
#include <spanprof.h>
#include <stdio.h>

static jmp_buf on_failure;
static volatile int sink;

__attribute__((span, noinline)) void check(int v)
{
    sink += v;
}

__attribute__((span, noinline)) void t_a(void)
{
    check(1);
}

__attribute__((span, noinline)) void t_b(void)
{
    check(2);
    longjmp(on_failure, 1); /* this test fails */
}

__attribute__((span, noinline)) void t_c(void)
{
    check(3);
}

static void (*const tests[])(void) = {t_a, t_b, t_c, t_b, t_a, t_c};

__attribute__((span)) int main(void)
{
    static int i, failed; /* static: changed after setjmp, so not in registers */
    for (i = 0; i < (int)(sizeof tests / sizeof tests[0]); i++)
        if (!setjmp(on_failure))
            tests[i]();
        else
            failed++;
    printf("sink=%d failed=%d\n", sink, failed);
    return 0;
}
