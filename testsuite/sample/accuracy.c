/* accuracy.c — the accuracy test with spans shorter than the sampler's period (1 ms): 10,000
 * rounds of work_a (140 µs), work_b (60 µs) and nap, which sleeps 2 ms every tenth round.  Most
 * samples that find nap asleep follow CPU time the thread used in the working spans: charged to
 * nap, it would make a sleeping span look busy (accuracy.inc has the program).  Sampled at 4 kHz:
 * a share is estimated from the samples that find the thread on a CPU, and beside busy loops in
 * other scheduling groups, with a sampler that may not take its real-time priority, as few as
 * 60 of 5,800 samples did at 997 Hz (1,250 of 11,600 with the priority): 5 points was then
 * within the estimate's own scatter.
 * test-env: SPANPROF_SAMPLE_HZ=4000 */
#define WORK_A_US 140
#define WORK_B_US 60
#define NAP_US 2000
#define NAP_EVERY 10
#define ROUNDS 10000
#include "accuracy.inc"
