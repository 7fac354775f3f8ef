/* exec_self.c — exec replaces the image: the spans before it are written first, and the new
 * image (same process, a descendant) writes NAME.PID.1 rather than overwriting NAME. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((span, noinline)) void before_exec(void)
{
}

__attribute__((span, noinline)) void after_exec(void)
{
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "again") == 0) {
        after_exec();
        after_exec();
        puts("second image done");
        return 0;
    }
    before_exec();
    puts("first image: exec");
    fflush(stdout);
    execl("/proc/self/exe", argv[0], "again", (char *)NULL);
    perror("execl");
    return 1;
}
