/* accuracy_one_cpu.c — the short-span accuracy test on one CPU, as a program pinned with taskset
 * or a one-CPU container runs: the sampler thread shares the CPU with the thread it samples (and
 * with the runner's busy loop there), so it never sees that thread's CPU clock move and must
 * tell from the thread's state that it took the CPU from it (every span had 0 CPU time before).
 * Sampled at 4 kHz, as accuracy.c is.
 *
 * The sampled CPU shares are held to 10 points, not 5: on one CPU the sampler's own wake-ups
 * decide when the thread loses and regains the CPU, so the instants it samples keep step with
 * the program after all, and each sample's stretch (the time since the one before) is charged
 * to where the stretch ends.  Measured beside busy loops, work_a's sampled share came out 2 to 6
 * points above its share by its own CPU clock (69.1-72.3 % against 66.5-67.3 %); with the work
 * paced by a fixed count of iterations instead of the clock, 0.4 to 3.7 points.  A sampler that
 * found nothing on one CPU (every span 0 CPU time) misses by 70 points.
 * sampled-cpu-points: 10
 * test-env: SPANPROF_SAMPLE_HZ=4000 */
#define WORK_A_US 140
#define WORK_B_US 60
#define NAP_US 2000
#define NAP_EVERY 10
#define ROUNDS 5000
#define ONE_CPU 1
#include "accuracy.inc"
