/* fork.c — allocation tracking after fork: the child's profile counts only the child's
 * allocations; freeing a block the parent allocated counts as a free in the child's span and
 * touches no allocating span of the child. */
#include <spanprof.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile sink;
static void *before_block;

__attribute__((span, noinline)) void before(void)
{
    before_block = malloc(1000);
}

__attribute__((span, noinline)) void child_work(void)
{
    for (int i = 0; i < 10; i++)
        sink = malloc(10); /* 10 blocks, 100 bytes live in the child */
    free(before_block);    /* the parent's block: a free here, nothing allocated */
}

__attribute__((span, noinline)) void parent_work(void)
{
    void *p = malloc(77);
    sink = p;
    free(p);
}

int main(void)
{
    before();
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        child_work();
        return 0;
    }
    int status;
    waitpid(pid, &status, 0);
    parent_work();
    printf("child exit %d\n", WEXITSTATUS(status));
    return 0;
}
