/* compensate_runs.c — one recursive span, fib(22): 57,313 calls of a few nanoseconds' work
 * each, so that without compensation the profiler's own cost is most of its time, and a call's
 * cost measured a few per cent high takes all of it; about a millisecond, so that most runs fit
 * between two preemptions on a busy machine.  compensate_runs.sh runs it 200 times. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((span, noinline)) static unsigned long fib(int n)
{
    return n < 2 ? (unsigned long)n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv)
{
    printf("%lu\n", fib(argc > 1 ? atoi(argv[1]) : 22));
    return 0;
}
