/* setjmp_nested.c — setjmp levels inside each other: a jump to the inner level drops only the
 * spans above it; a jump to the outer level drops the inner level's spans and its holder too;
 * getcontext/setcontext and __builtin_setjmp/__builtin_longjmp, other returns-twice pairs,
 * at further levels. */
#include <setjmp.h>
#include <spanprof.h>
#include <stdio.h>
#include <ucontext.h>

static jmp_buf outer_env, inner_env;
static ucontext_t again;
static void *builtin_env[5];

__attribute__((span, noinline)) void deep_fail(int k)
{
    if (k % 3 == 0)
        longjmp(outer_env, 1);
    if (k % 3 == 1)
        longjmp(inner_env, 1);
}

__attribute__((span, noinline)) void middle(int k)
{
    deep_fail(k);
}

__attribute__((span, noinline)) void inner_recover(void)
{
}

__attribute__((span, noinline)) void outer_recover(void)
{
}

__attribute__((span, noinline)) void inner(int k)
{
    if (!setjmp(inner_env))
        middle(k);
    else
        inner_recover();
}

__attribute__((span, noinline)) void outer(int k)
{
    if (!setjmp(outer_env))
        inner(k);
    else
        outer_recover();
}

__attribute__((span, noinline)) void rewind_context(void)
{
    setcontext(&again);
}

__attribute__((span, noinline)) void retry_level(void)
{
    static int tries; /* static: changed after getcontext, so it must not live in a register */
    tries = 0;
    getcontext(&again);
    if (tries++ < 3)
        rewind_context();
}

__attribute__((span, noinline)) void builtin_throw(void)
{
    __builtin_longjmp(builtin_env, 1);
}

__attribute__((span, noinline)) void builtin_level(void)
{
    if (__builtin_setjmp(builtin_env) == 0)
        builtin_throw();
}

int main(void)
{
    for (int k = 0; k < 9; k++)
        outer(k);
    retry_level();
    builtin_level();
    printf("done\n");
    return 0;
}
