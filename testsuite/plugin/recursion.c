/* recursion.c — a recursive span: every activation counted, the call tree has one level per
 * recursion depth, and a recursive span's inclusive time is not counted twice. */
#include <spanprof.h>
#include <stdio.h>

__attribute__((span)) unsigned fib(unsigned n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

/* Attribute given on an earlier declaration only. */
__attribute__((span)) unsigned long factorial(unsigned n);

unsigned long factorial(unsigned n)
{
    return n <= 1 ? 1 : n * factorial(n - 1);
}

int main(void)
{
    printf("fib(6)=%u 5!=%lu\n", fib(6), factorial(5));
    return 0;
}
