/* inline_static.c — static functions that GCC inlines into their caller at -O2/-O3 keep their
 * span: the enter/exit pair stays around the inlined body, so every call is counted. */
#include <spanprof.h>
#include <stdio.h>

static inline __attribute__((span)) int square(int x)
{
    return x * x;
}

static __attribute__((span("scale"))) int scale(int x, int factor)
{
    return square(x) * factor;
}

int main(int argc, char **argv)
{
    (void)argv;
    long total = 0;
    for (int i = 0; i < 1000; i++)
        total += scale(i + argc, 3);
    printf("total=%ld\n", total);
    return 0;
}
