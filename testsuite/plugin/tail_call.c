/* tail_call.c — spans on functions whose last act is a call: self-recursion and mutual recursion
 * in tail position (the exit must still run after the callee returns). */
#include <spanprof.h>
#include <stdio.h>

__attribute__((span)) unsigned long sum_to(unsigned long n, unsigned long acc)
{
    if (n == 0)
        return acc;
    return sum_to(n - 1, acc + n);
}

int is_odd(unsigned n);

__attribute__((span("even?"))) int is_even(unsigned n)
{
    return n == 0 ? 1 : is_odd(n - 1);
}

__attribute__((span("odd?"))) int is_odd(unsigned n)
{
    return n == 0 ? 0 : is_even(n - 1);
}

int main(void)
{
    printf("sum=%lu even(7)=%d\n", sum_to(5, 0), is_even(7));
    return 0;
}
