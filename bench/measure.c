/* measure.c — runs one command and prints what it cost, for the benchmark scripts:
 *
 *     measure COMMAND [ARG...]   →   CPU_SECONDS WALL_SECONDS PEAK_RSS_KIB EXIT_STATUS
 *
 * CPU is user + system time of the command and every process it waited for (uftrace's recorder,
 * for one), so a busy machine, which delays a run, changes it little.  The command's standard
 * output goes to /dev/null; its standard error is kept (warnings must stay visible).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: measure COMMAND [ARG...]\n");
        return 2;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, 1);
        execvp(argv[1], argv + 1);
        fprintf(stderr, "measure: cannot run '%s'\n", argv[1]);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &status, 0, &ru) < 0) {
        perror("measure");
        return 2;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    /* Grandchildren the command waited for are in its own children's usage. */
    struct rusage rc;
    getrusage(RUSAGE_CHILDREN, &rc);
    double cpu = seconds(rc.ru_utime) + seconds(rc.ru_stime);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("%.3f %.3f %ld %d\n", cpu, wall, rc.ru_maxrss,
           WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    return 0;
}
