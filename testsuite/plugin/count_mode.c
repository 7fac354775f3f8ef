/* count_mode.c — SPANPROF=count: calls per stack, no timestamps.  The program writes its profile
 * with spanprof_flush() and prints its own folded stacks, whose values in counting mode are call
 * counts: exact, and the same at every optimisation level.  A longjmp out of a span checks that
 * the repair path also works without a clock. */
/* test-env: SPANPROF=count */
#include <setjmp.h>
#include <spanprof.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static jmp_buf env;

__attribute__((span)) void leaf(void)
{
    __asm__ volatile("");
}

__attribute__((span)) void mid(int n)
{
    for (int i = 0; i < n; i++)
        leaf();
}

/* Not inlined: a longjmp out of a span inlined into the function holding the jmp_buf cannot be
 * told from a live one (same frame, same return address; see longjmp.c). */
__attribute__((span, noinline)) void jumper(void)
{
    leaf();
    longjmp(env, 1);
}

int main(void)
{
    mid(3);
    mid(2);
    leaf();
    if (!setjmp(env))
        jumper();
    leaf();
    if (spanprof_flush() != 0)
        return 1;
    /* The folded path is set by the test as ".../out.%p.folded". */
    const char *pattern = getenv("SPANPROF_FOLDED");
    const char *p = pattern ? strstr(pattern, "%p") : NULL;
    if (!p)
        return 2;
    char path[4096];
    snprintf(path, sizeof path, "%.*s%ld%s", (int)(p - pattern), pattern, (long)getpid(), p + 2);
    FILE *f = fopen(path, "r");
    if (!f)
        return 3;
    char line[256];
    while (fgets(line, sizeof line, f))
        printf("folded: %s", line);
    fclose(f);
    return 0;
}
