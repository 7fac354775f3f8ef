/* interval_kill.c — SPANPROF_DUMP_INTERVAL: the profile is written every 50 ms, so a process
 * killed by SIGKILL (which no handler sees) still leaves its profile so far.
 * test-driver: interval
 * test-env: SPANPROF_DUMP_INTERVAL=0.05 */
#include <stdio.h>
#include <time.h>

__attribute__((span, noinline)) void tick(void)
{
}

int main(void)
{
    for (int i = 0; i < 7; i++)
        tick();
    fclose(fopen("phase1", "w"));
    for (;;)
        nanosleep(&(struct timespec){1, 0}, NULL);
}
