/* folded_limits.c — a program whose folded file the SPANPROF_FOLDED_* variables change: direct
 * recursion (walk calls itself 5 times, then leaf), indirect recursion (value -> array -> value,
 * 3 levels) and a plain sibling.  Run with SPANPROF=count, so every value is a call count. */
#include <spanprof.h>

__attribute__((span, noinline)) static int leaf(int x)
{
    __asm__ volatile("" : "+r"(x));
    return x + 1;
}

__attribute__((span, noinline)) static int walk(int n)
{
    int r = n ? walk(n - 1) : leaf(n);
    __asm__ volatile("" : "+r"(r));
    return r + 1;
}

static int value(int n);

__attribute__((span, noinline)) static int array(int n)
{
    int r = value(n - 1);
    __asm__ volatile("" : "+r"(r));
    return r;
}

__attribute__((span, noinline)) static int value(int n)
{
    int r = n ? array(n) : leaf(n);
    __asm__ volatile("" : "+r"(r));
    return r;
}

__attribute__((span, noinline)) static int other(int n)
{
    return leaf(n);
}

int main(void)
{
    int r = 0;
    for (int i = 0; i < 2; i++)
        r += walk(5) + value(3) + other(i);
    return r == 0;
}
