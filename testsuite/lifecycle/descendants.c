/* descendants.c — children of a profiled process started by fork+exec, posix_spawn and system,
 * with a path without %p: each writes its own NAME.PID and the parent's NAME stays its own. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

__attribute__((span, noinline)) void parent_work(void)
{
}

__attribute__((span, noinline)) void child_work(int n)
{
    if (n > 1)
        child_work(n - 1);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        child_work(atoi(argv[1]));
        return 0;
    }
    parent_work();
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execl(argv[0], argv[0], "1", (char *)NULL);
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    char *args[] = {argv[0], "2", NULL};
    posix_spawn(&pid, argv[0], NULL, NULL, args, environ);
    waitpid(pid, &status, 0);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "'%s' 3", argv[0]);
    int rc = system(cmd);
    parent_work();
    printf("children done (system: %d)\n", rc);
    return 0;
}
