/* dump_twice.c — `spanprof dump PID` twice while the program runs on: each dump replaces the
 * files with the cumulative profile so far (10 calls, then 20), and the exit writes the last.
 * The program waits between its phases for the files "go1" and "go2" that the test creates.
 * test-driver: dump
 * test-env: SPANPROF_DUMP_SIGNAL=USR2 SPANPROF_JSON=out.json */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

__attribute__((span, noinline)) void request(void)
{
}

static void phase(const char *done, const char *go)
{
    for (int i = 0; i < 10; i++)
        request();
    fclose(fopen(done, "w"));
    /* A caught signal interrupts sleeps (EINTR): simply sleep again. */
    while (access(go, F_OK) != 0)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
}

int main(void)
{
    phase("phase1", "go1");
    phase("phase2", "go2");
    puts("served 20 requests");
    return 0;
}
