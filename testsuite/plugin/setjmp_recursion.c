/* setjmp_recursion.c — a recursive span that GCC inlines into the function holding the jmp_buf
 * (at -O2 and above), 100 rounds of setjmp, dive 5 deep, longjmp back.  Every dive frame shares
 * the holder's frame address, so only the repair at the setjmp's return can drop them: the
 * stack must stay 5 deep, and `resume` must not nest under `dive`. */
#include <setjmp.h>
#include <spanprof.h>
#include <stdio.h>

static jmp_buf env;
static int rounds;

__attribute__((span)) static void dive(int n)
{
    if (n == 0)
        longjmp(env, 1);
    dive(n - 1);
}

__attribute__((span)) static void resume(void)
{
    rounds++;
}

int main(void)
{
    static int i; /* static: changed after setjmp, so it must not live in a register */
    for (i = 0; i < 100; i++) {
        if (setjmp(env) == 0)
            dive(4);
        else
            resume();
    }
    printf("rounds=%d\n", rounds);
    return 0;
}
