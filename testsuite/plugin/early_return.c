/* early_return.c — every way out of a span runs its exit: several returns, a void function that
 * returns early, a loop that returns from its middle. */
#include <spanprof.h>
#include <stdio.h>

__attribute__((span)) int classify(int n)
{
    if (n < 0)
        return -1;
    if (n == 0)
        return 0;
    for (int i = 2; i < n; i++)
        if (n % i == 0)
            return 2; /* composite */
    return 1;         /* prime or one */
}

__attribute__((span)) void maybe_print(int n, int *printed)
{
    if (n % 10 != 0)
        return;
    (*printed)++;
}

int main(void)
{
    int histogram[4] = { 0 }, printed = 0;
    for (int n = -5; n < 100; n++) {
        histogram[classify(n) + 1]++;
        maybe_print(n, &printed);
    }
    printf("negative=%d zero=%d prime=%d composite=%d tens=%d\n", histogram[0], histogram[1],
           histogram[2], histogram[3], printed);
    return 0;
}
