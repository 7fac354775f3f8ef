/* writer_stuck.c — SIGTERM while the writer thread cannot finish (writer_stuck_lib.inc, preloaded,
 * never lets it open the JSON file): after 10 s the handler stops waiting, writes the folded
 * stacks itself with one warning line, and the process dies by SIGTERM; never a hang.
 * test-driver: stuck
 * test-env: SPANPROF_JSON=out.json */
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
