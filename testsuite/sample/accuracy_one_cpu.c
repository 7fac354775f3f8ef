/* accuracy_one_cpu.c — the short-span accuracy test on one CPU, as a program pinned with taskset
 * or a one-CPU container runs: the sampler thread shares the CPU with the thread it samples (and
 * with the runner's busy loop there), so it never sees that thread's CPU clock move and must
 * tell from the thread's state that it took the CPU from it (every span had 0 CPU time before).
 * Sampled at 4 kHz, as accuracy.c is.
 * test-env: SPANPROF_SAMPLE_HZ=4000 */
#define WORK_A_US 140
#define WORK_B_US 60
#define NAP_US 2000
#define NAP_EVERY 10
#define ROUNDS 5000
#define ONE_CPU 1
#include "accuracy.inc"
