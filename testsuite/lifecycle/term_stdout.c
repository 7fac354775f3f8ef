/* term_stdout.c — SPANPROF_FOLDED=/dev/stdout and death by SIGTERM: the folded stacks written
 * from the signal handler go to the program's stdout, which stays what it is (a device or link
 * is written in place, never replaced by rename; opened as the exit's writer opens it, so a
 * regular file behind it is truncated first).
 * test-env: SPANPROF_FOLDED=/dev/stdout */
#include <signal.h>

__attribute__((span, noinline)) void work(void)
{
}

int main(void)
{
    work();
    work();
    raise(SIGTERM);
    return 0;
}
