/* writer_stuck.c — SIGTERM while the writer thread cannot finish (its JSON path is a FIFO that
 * nobody reads, so opening it blocks): after 10 s the handler stops waiting, writes the folded
 * stacks itself with one warning line, and the process dies by SIGTERM; never a hang.
 * test-driver: fifo
 * test-env: SPANPROF_JSON=stuck.fifo */
#include <signal.h>

__attribute__((span, noinline)) void work(void)
{
}

int main(void)
{
    work();
    work();
    work();
    raise(SIGTERM);
    return 0;
}
