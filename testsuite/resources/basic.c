/* basic.c — exact allocation counts per span: many small blocks, a leak, freeing memory
 * allocated outside the span, calloc, realloc growth and shrink, aligned allocations, peak. */
#include <malloc.h>
#include <spanprof.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void *volatile keep[16];
static void *volatile sink;

__attribute__((span, noinline)) void many(void)
{
    void *p[1000];
    for (int i = 0; i < 1000; i++)
        sink = p[i] = malloc(100);
    for (int i = 0; i < 1000; i++)
        free(p[i]);
}

__attribute__((span, noinline)) void outer(void)
{
    many();
    keep[0] = malloc(10); /* one more, kept: live in "outer" */
}

__attribute__((span, noinline)) void leak(void)
{
    for (int i = 1; i <= 3; i++)
        keep[i] = malloc(64);
}

__attribute__((span, noinline)) void free_other(void *volatile *blocks, int n)
{
    for (int i = 0; i < n; i++)
        free(blocks[i]);
}

__attribute__((span, noinline)) void zeroed(void)
{
    keep[4] = calloc(10, 30);
}

__attribute__((span, noinline)) void grow_shrink(void)
{
    char *p = malloc(100);
    sink = p;
    p = realloc(p, 200);
    sink = p;
    p = realloc(p, 50);
    keep[5] = p;
}

__attribute__((span, noinline)) int aligned(void)
{
    void *a, *b, *c, *d;
    int bad = posix_memalign(&a, 64, 1000);
    b = aligned_alloc(4096, 4096);
    c = memalign(32, 100);
    d = valloc(10);
    bad |= ((uintptr_t)a % 64) | ((uintptr_t)b % 4096) | ((uintptr_t)c % 32) | ((uintptr_t)d % 4096);
    bad |= malloc_usable_size(a) < 1000;
    sink = a, sink = b, sink = c; /* escape: the compiler may not drop them */
    free(a);
    free(b);
    free(c);
    keep[6] = d;
    return bad;
}

__attribute__((span, noinline)) void peak_inner(void)
{
    void *p = malloc(2000);
    sink = p;
    free(p);
}

__attribute__((span, noinline)) void peak(void)
{
    void *a = malloc(1000);
    sink = a;
    peak_inner(); /* heap grows to 3000 above the entry level here */
    free(a);
    sink = malloc(500);
    free(sink);
}

int main(void)
{
    void *volatile outside[5];
    for (int i = 0; i < 5; i++)
        outside[i] = malloc(40);
    many();
    outer();
    leak();
    free_other(outside, 5);
    zeroed();
    grow_shrink();
    int bad = aligned();
    peak();
    free(keep[3]); /* outside any span: leak's live count drops to 2 blocks */
    printf("aligned: %s\n", bad ? "no" : "yes");
    return 0;
}
