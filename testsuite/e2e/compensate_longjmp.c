/* compensate_longjmp.c — spans whose exits never run: request() sets a jump point and calls the
 * recursive parse(), which longjmps back from depth 8, 200,000 times.  Every parse activation
 * is abandoned (popped by the repair at setjmp's return), so compensation may take out of it
 * only what its enter cost; compensate_longjmp.sh checks what the outputs of one run say. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

static jmp_buf env;
static volatile unsigned long sink;

__attribute__((span, noinline)) static void parse(int depth)
{
    sink++;
    if (depth == 8)
        longjmp(env, 1);
    parse(depth + 1);
    sink++;
}

__attribute__((span, noinline)) static int request(void)
{
    if (setjmp(env) == 0) {
        parse(1);
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 200000, jumped = 0;
    for (int i = 0; i < rounds; i++)
        jumped += request();
    printf("%d\n", jumped);
    return 0;
}
