/* exec_clean_env.c — exec with an environment of the program's own making (execle, as a test
 * runner spawning with a clean environment does): the run's SPANPROF_* settings are carried into
 * it, so the second image writes into the run (out.folded.PID.1, as with the inherited
 * environment) rather than spanprof.folded in the working directory; a setting the environment
 * makes itself stands (the third image's SPANPROF_FOLDED, out.mine.folded).  Each image prints the environment
 * it got, the runtime's SPANPROF_ANCESTOR marker left out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

__attribute__((span, noinline)) void first(void)
{
}

__attribute__((span, noinline)) void second(void)
{
}

__attribute__((span, noinline)) void third(void)
{
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void print_environment(const char *image)
{
    char *sorted[64];
    size_t n = 0;
    for (char **e = environ; *e && n < 64; e++)
        if (strncmp(*e, "SPANPROF_ANCESTOR=", 18) != 0)
            sorted[n++] = *e;
    qsort(sorted, n, sizeof *sorted, by_name);
    printf("%s image's environment:\n", image);
    for (size_t i = 0; i < n; i++)
        printf("  %s\n", sorted[i]);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "third") == 0) {
        print_environment("third");
        third();
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "second") == 0) {
        print_environment("second");
        second();
        char *const mine[] = {"KEEP=2", "SPANPROF_FOLDED=out.mine.folded", NULL};
        execle("/proc/self/exe", argv[0], "third", (char *)NULL, mine);
        perror("execle");
        return 1;
    }
    first();
    char *const clean[] = {"KEEP=1", NULL};
    execle("/proc/self/exe", argv[0], "second", (char *)NULL, clean);
    perror("execle");
    return 1;
}
