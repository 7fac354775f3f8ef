/* phases.c — a program the live tests drive through its stdin, one command a line, answering
 * each with a line on stdout once it is done, so that a snapshot taken between two commands has
 * exact counts:
 *   a N        N calls of phase_a            b N   N calls of phase_b
 *   fork N     a child that makes N calls of phase_b, says "child PID", then waits for SIGTERM
 *   exec N     this program again (same pid), which makes N calls of phase_a before its first line
 *   thread N   a thread that makes N calls of phase_b and ends
 *   exit       exit status 3
 * Every span is marked (no -all): the counts are the program's own. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((span, noinline)) static void phase_a(void)
{
    sink++;
}

__attribute__((span, noinline)) static void phase_b(void)
{
    sink += 2;
}

static void *thread_main(void *arg)
{
    for (long i = 0; i < (long)(intptr_t)arg; i++)
        phase_b();
    return NULL;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 1)
        for (long i = atol(argv[1]); i > 0; i--)
            phase_a();
    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        char cmd[16];
        long n = 0;
        if (sscanf(line, "%15s %ld", cmd, &n) < 1)
            continue;
        if (strcmp(cmd, "a") == 0) {
            for (long i = 0; i < n; i++)
                phase_a();
        } else if (strcmp(cmd, "b") == 0) {
            for (long i = 0; i < n; i++)
                phase_b();
        } else if (strcmp(cmd, "fork") == 0) {
            pid_t pid = fork();
            if (pid == 0) {
                for (long i = 0; i < n; i++)
                    phase_b();
                printf("child %ld\n", (long)getpid());
                for (;;)
                    pause();
            }
            continue; /* the child's line is the answer */
        } else if (strcmp(cmd, "exec") == 0) {
            char arg[24];
            snprintf(arg, sizeof arg, "%ld", n);
            execl("/proc/self/exe", argv[0], arg, (char *)NULL);
            perror("exec");
            return 1;
        } else if (strcmp(cmd, "thread") == 0) {
            pthread_t t;
            pthread_create(&t, NULL, thread_main, (void *)(intptr_t)n);
            pthread_join(t, NULL);
        } else if (strcmp(cmd, "exit") == 0) {
            return 3;
        }
        printf("done %s\n", cmd);
    }
    return 0;
}
