/* fork.c — a fork child has no copy of the sampler thread: the runtime starts one in the child,
 * so the child's own profile has sampled times too.  Each process's span runs 150 ms. */
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void busy(uint64_t ns)
{
    uint64_t end = now_ns() + ns;
    while (now_ns() < end)
        sink++;
}

__attribute__((span, noinline)) static void parent_work(void)
{
    busy(150000000);
}

__attribute__((span, noinline)) static void child_work(void)
{
    busy(150000000);
}

int main(void)
{
    parent_work();
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        child_work();
        return 0;
    }
    int status;
    waitpid(pid, &status, 0);
    printf("child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}
