/* bench.h — what the benchmark's driver (never instrumented) and its span functions (work.c,
 * instrumented in every way the harness compares) share. */
#ifndef SPANPROF_BENCH_H
#define SPANPROF_BENCH_H

/* Fan-out and depth of the "stacks" workload: STACK_FANOUT^STACK_DEPTH distinct leaf stacks. */
#define STACK_FANOUT 10
#define STACK_DEPTH 4

int bench_leaf(int x);
int bench_mid(int x);
int bench_rec(int depth);
void bench_step(int depth, unsigned path);

#endif
