/* fork.c — after fork the child's profile goes to its own files and holds only the child's
 * calls; the parent's profile is not clobbered and holds only the parent's. */
#include <spanprof.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((span, noinline)) int work(int n)
{
    return n * 3;
}

__attribute__((span("child.run"))) int child_run(void)
{
    int total = 0;
    for (int i = 0; i < 5; i++)
        total += work(i);
    return total;
}

int main(void)
{
    int total = 0;
    for (int i = 0; i < 10; i++)
        total += work(i);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        return child_run() == 30 ? 0 : 1;
    int status = 0;
    waitpid(pid, &status, 0);
    for (int i = 0; i < 2; i++)
        total += work(i);
    printf("parent total=%d child status=%d\n", total, WEXITSTATUS(status));
    return 0;
}
