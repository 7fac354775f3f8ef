/* setjmp_callback.c — longjmp out of callbacks called through function pointers: from our own
 * visitor, and from inside libc's qsort (code built without the plugin between the callback and
 * the setjmp).  What runs after the jump is main's child, not the abandoned callback's. */
#include <setjmp.h>
#include <spanprof.h>
#include <stdio.h>
#include <stdlib.h>

static jmp_buf give_up;

typedef int (*visit_fn)(int);

__attribute__((span, noinline)) int walk(visit_fn fn, int n)
{
    int sum = 0;
    for (int i = 0; i < n; i++)
        sum += fn(i);
    return sum;
}

__attribute__((span, noinline)) int check(int x)
{
    if (x == 3)
        longjmp(give_up, 1);
    return x;
}

__attribute__((span, noinline)) int count(int x)
{
    return x >= 0;
}

__attribute__((span, noinline)) int compare_or_give_up(const void *a, const void *b)
{
    (void)a, (void)b;
    longjmp(give_up, 2);
}

__attribute__((span, noinline)) void report(int why)
{
    printf("gave up (%d)\n", why);
}

__attribute__((span)) int main(void)
{
    static int i; /* static: changed after setjmp, so it must not live in a register */
    static int counted;
    int data[16];
    for (i = 0; i < 4; i++) {
        int why = setjmp(give_up);
        if (why == 0) {
            if (i % 2 == 0)
                walk(check, 10);
            for (int k = 0; k < 16; k++)
                data[k] = 16 - k;
            qsort(data, 16, sizeof data[0], compare_or_give_up);
        } else {
            report(why);
        }
        counted += walk(count, 2);
    }
    printf("counted=%d\n", counted);
    return 0;
}
