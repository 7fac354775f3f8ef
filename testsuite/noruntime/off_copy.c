/* off_copy.c — at -O1 and above each small function has a second copy of its body, run while its
 * span is off, as here without the runtime (the instrumented body runs with it).  Both must
 * compute what the original does: static locals (one variable for both bodies), tail recursion,
 * loops and gotos, a switch, a struct returned, variadic arguments, block-scoped names. */
#include <stdarg.h>
#include <stdio.h>

struct pair {
    long a, b;
};

int counter(void)
{
    static int calls; /* one variable for both bodies: 1, 2, 3, ... */
    return ++calls;
}

unsigned long sum_to(unsigned long n, unsigned long acc)
{
    if (n == 0)
        return acc;
    return sum_to(n - 1, acc + n);
}

int collatz_steps(long n)
{
    int steps = 0;
again:
    if (n == 1)
        return steps;
    n = n % 2 ? 3 * n + 1 : n / 2;
    steps++;
    goto again;
}

const char *kind(int c)
{
    switch (c) {
    case 'a': case 'e': case 'i': case 'o': case 'u':
        return "vowel";
    case ' ':
        return "space";
    default:
        return "other";
    }
}

struct pair swap(struct pair p)
{
    struct pair r = {p.b, p.a};
    return r;
}

long total(int n, ...)
{
    va_list ap;
    long sum = 0;
    va_start(ap, n);
    for (int i = 0; i < n; i++)
        sum += va_arg(ap, long);
    va_end(ap);
    return sum;
}

int shadow(int x)
{
    int y = x * 2;
    {
        int x = y + 1; /* another x */
        y += x;
    }
    return y + x;
}

int main(void)
{
    for (int i = 0; i < 3; i++)
        counter();
    printf("counter=%d\n", counter());
    printf("sum_to=%lu %lu\n", sum_to(3, 0), sum_to(10, 0));
    printf("collatz=%d %d\n", collatz_steps(6), collatz_steps(27));
    printf("kind=%s %s %s\n", kind('e'), kind(' '), kind('z'));
    struct pair one_two = {1, 2};
    struct pair p = swap(one_two);
    struct pair q = swap(p);
    printf("swap=%ld,%ld %ld,%ld\n", p.a, p.b, q.a, q.b);
    printf("total=%ld %ld\n", total(3, 1L, 2L, 3L), total(0));
    printf("shadow=%d %d\n", shadow(1), shadow(10));
    return 0;
}
