/* record_prog.c — a program for record.sh: `prog N` runs work() 3 times, starts N copies of
 * itself (fork, then exec with "child K"), each running work() 5 times, waits for them and exits
 * with status 3; `prog nap` sleeps 30 s inside a span (for the signal cases); `prog crash` runs
 * work() twice and dies by SIGSEGV; `prog many` runs work() 40,000 times (80,000 trace events,
 * more than a 1 MiB trace ring keeps). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((span, noinline)) static void work(int rounds)
{
    for (int i = 0; i < rounds * 1000; i++)
        sink += (unsigned long)i;
}

__attribute__((span, noinline)) static void nap(void)
{
    sleep(30);
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "child")) {
        for (int i = 0; i < 5; i++)
            work(1);
        printf("child %s\n", argv[2]);
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "nap")) {
        nap();
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "many")) {
        for (int i = 0; i < 40000; i++)
            work(0);
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "crash")) {
        work(1);
        work(1);
        fflush(stdout);
        raise(SIGSEGV);
    }
    int n = argc > 1 ? atoi(argv[1]) : 0;
    for (int i = 0; i < 3; i++)
        work(1);
    for (int k = 1; k <= n; k++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            char num[16];
            snprintf(num, sizeof num, "%d", k);
            execl("/proc/self/exe", argv[0], "child", num, (char *)NULL);
            _exit(127);
        }
    }
    while (wait(NULL) > 0)
        ;
    puts("parent");
    return 3;
}
