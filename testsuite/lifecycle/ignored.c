/* ignored.c — a program started with SIGTERM ignored (as by nohup or `trap '' TERM`): the
 * runtime leaves it ignored, so SIGTERM does nothing and the program runs to its end.
 * test-driver: ignored */
#include <signal.h>
#include <stdio.h>

__attribute__((span, noinline)) void job(void)
{
}

int main(void)
{
    job();
    raise(SIGTERM);
    job();
    puts("SIGTERM ignored, still running");
    return 0;
}
