/* accuracy.c — the accuracy test with spans shorter than the sampler's period (1 ms): 5,000
 * rounds of work_a (140 µs), work_b (60 µs) and nap, which sleeps 2 ms every tenth round.  Most
 * samples that find nap asleep follow CPU time the thread used in the working spans: charged to
 * nap, it would make a sleeping span look busy (accuracy.inc has the program). */
#define WORK_A_US 140
#define WORK_B_US 60
#define NAP_US 2000
#define NAP_EVERY 10
#define ROUNDS 5000
#include "accuracy.inc"
