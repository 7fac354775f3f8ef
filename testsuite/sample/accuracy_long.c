/* accuracy_long.c — the accuracy test with spans longer than the sampler's period (1 ms): 150
 * rounds of work_a (4.9 ms), work_b (2.1 ms) and nap, which sleeps 7 ms every round: each span
 * gets several samples per call, and the CPU time used before nap starts to sleep is a short
 * stretch at its start (accuracy.inc has the program).  Sampled at 4 kHz, as accuracy.c is and
 * for the same reason: beside busy loops in other scheduling groups, a sampler without its
 * real-time priority finds the thread on a CPU in few of its samples.
 * test-env: SPANPROF_SAMPLE_HZ=4000 */
#define WORK_A_US 4900
#define WORK_B_US 2100
#define NAP_US 7000
#define NAP_EVERY 1
#define ROUNDS 150
#include "accuracy.inc"
