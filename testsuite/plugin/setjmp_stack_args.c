/* setjmp_stack_args.c — after a longjmp out of `fail`, main calls sum8, whose 7th and 8th
 * arguments go on the stack: its frame address is below the abandoned frame's, which the
 * frame-address repair took for a callee of `fail`.  sum8 must be main's child. */
#include <setjmp.h>
#include <spanprof.h>
#include <stdio.h>

static jmp_buf env;
static volatile long args[8] = {1, 2, 3, 4, 5, 6, 7, 8};

__attribute__((span, noipa)) void fail(void)
{
    longjmp(env, 1);
}

__attribute__((span, noipa)) long sum8(long a, long b, long c, long d, long e, long f, long g,
                                       long h)
{
    return a + b + c + d + e + f + g + h;
}

__attribute__((span)) int main(void)
{
    static long total; /* static: changed after setjmp, so it must not live in a register */
    static int i;
    for (i = 0; i < 10; i++) {
        if (!setjmp(env))
            fail();
        total += sum8(args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7]);
    }
    printf("total=%ld\n", total);
    return 0;
}
