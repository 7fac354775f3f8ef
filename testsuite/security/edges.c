/* edges.c — the program the security tests run.  It calls its spans a known number of times
 * (the tests run it with SPANPROF=count, so the profiles are exact), then leaves as argv[1] says:
 *   exit        returns from main
 *   term        raises SIGTERM (the runtime's handler writes, then the process dies by it)
 *   segv        faults (the crash handler writes the folded stacks, then the process dies)
 *   privileged  prints whether it runs privileged (AT_SECURE) and its effective uid, then exits
 *   retitle     rewrites its process title as servers do, then forks a child that runs spans too
 *   print       prints three lines on stdout, the second of 5,000 characters (stdio flushes
 *               part of it before exit, cutting it), and two lines on stderr, then returns
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

__attribute__((span, noinline)) static void work(void)
{
    __asm__ volatile("");
}

__attribute__((span, noinline)) static void child_work(void)
{
    __asm__ volatile("");
}

/* What setproctitle does in redis, nginx and postgres: the environment moves to fresh copies
 * (clearenv, then setenv of each entry), and the memory the argument and environment strings
 * were in — one block at the top of the stack — is wiped and holds the new title. */
static void retitle(int argc, char **argv)
{
    char *begin = argv[0], *end = argv[argc - 1] + strlen(argv[argc - 1]) + 1;
    size_t n = 0;
    for (char **e = environ; *e; e++, n++)
        if (*e == end)
            end = *e + strlen(*e) + 1;
    char **copies = malloc((n + 1) * sizeof *copies);
    for (size_t i = 0; i < n; i++)
        copies[i] = strdup(environ[i]);
    clearenv();
    for (size_t i = 0; i < n; i++) {
        char *eq = strchr(copies[i], '=');
        *eq = 0;
        setenv(copies[i], eq + 1, 1);
        free(copies[i]);
    }
    free(copies);
    memset(begin, 0, (size_t)(end - begin));
    snprintf(begin, (size_t)(end - begin), "edges: serving");
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "exit";
    work();
    work();
    if (strcmp(how, "retitle") == 0) {
        retitle(argc, argv);
        work();
        pid_t child = fork();
        if (child == 0) {
            child_work();
            work();
            exit(0);
        }
        int status;
        waitpid(child, &status, 0);
        printf("child %s\n", WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "ok" : "failed");
        return 0;
    }
    if (strcmp(how, "privileged") == 0)
        printf("AT_SECURE %lu, euid %s\n", getauxval(AT_SECURE), geteuid() == 0 ? "root" : "other");
    if (strcmp(how, "print") == 0) {
        printf("out 1\n");
        for (int i = 0; i < 5000; i++)
            putchar('x');
        printf("\nout 3\n");
        fprintf(stderr, "err 1\nerr 2\n");
    }
    if (strcmp(how, "term") == 0)
        raise(SIGTERM);
    if (strcmp(how, "segv") == 0)
        *(volatile int *)(uintptr_t)8 = 1;
    return 0;
}
