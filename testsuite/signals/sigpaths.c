/* sigpaths.c — a 10 kHz SIGALRM handler (a span, with a nested span) while the program creates
 * call paths all the time: two spans, a and b, call each other down to a depth of DEPTH, the
 * choice at each level taken from the bits of a hash of the round, so that nearly every round
 * creates new call-tree nodes and the handler lands while one is being created — under the
 * same parent as its own node, often.
 *
 *   sigpaths [rounds]
 *
 * The handler counts its runs and the program prints the count, which must equal the handler
 * span's calls (and its nested span's); a and b have exact counts.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define DEPTH 16

static volatile sig_atomic_t handled;
static volatile unsigned sink;

__attribute__((span, noinline)) static void handler_inner(void)
{
    sink = sink * 7 + 1;
}

__attribute__((span("handler"))) static void on_alarm(int sig)
{
    (void)sig;
    handled = handled + 1;
    handler_inner();
}

__attribute__((span, noinline)) static void b(unsigned path, int depth);

__attribute__((span, noinline)) static void a(unsigned path, int depth)
{
    if (depth == 0)
        return;
    if ((path >> depth) & 1)
        a(path, depth - 1);
    else
        b(path, depth - 1);
}

__attribute__((span, noinline)) static void b(unsigned path, int depth)
{
    if (depth == 0)
        return;
    if ((path >> depth) & 1)
        a(path, depth - 1);
    else
        b(path, depth - 1);
}

int main(int argc, char **argv)
{
    unsigned rounds = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 65536;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, NULL) != 0) {
        perror("sigaction");
        return 1;
    }
    struct itimerval it = {{0, 100}, {0, 100}}; /* 10 kHz */
    setitimer(ITIMER_REAL, &it, NULL);
    for (unsigned i = 0; i < rounds; i++)
        a(i * 2654435761u, DEPTH);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    signal(SIGALRM, SIG_IGN);
    printf("handled=%d\n", (int)handled);
    return 0;
}
