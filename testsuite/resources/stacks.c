/* stacks.c — sampled allocation stacks: the memory flame graph shows the native function that
 * allocates under the span that called it, and the scaled estimate is close to the true bytes. */
/* test: needs-libunwind */
/* test-env: SPANPROF_ALLOC_STACKS=1 SPANPROF_ALLOC_SAMPLE=524288 */
#include <spanprof.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 64, SIZE = 1 << 20 };
static void *volatile sink;

__attribute__((noinline)) void make_table(void)
{
    void *p = malloc(SIZE);
    sink = p;
    free(p);
    __asm__ volatile("" ::: "memory"); /* not a tail call: keep this frame */
}

__attribute__((span, noinline)) void build(void)
{
    for (int i = 0; i < N; i++)
        make_table();
}

__attribute__((span, noinline)) void run(void)
{
    build();
}

int main(void)
{
    run();
    printf("expect-bytes %d\n", N * SIZE);
    return 0;
}
