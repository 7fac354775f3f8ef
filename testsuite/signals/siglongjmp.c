/* siglongjmp.c — a 10 kHz SIGALRM handler (a span) that siglongjmps back to the main loop at
 * random, from wherever the signal landed: user code, a span's enter or exit, or the runtime's
 * cold paths (each round repairs the stack after a longjmp of its own, so the runtime is often
 * busy when the signal comes).
 *
 *   siglongjmp [rounds]
 *
 * After the timer stops, spans never seen before ("after", "after_child") run AFTER_CALLS times:
 * all of them must be recorded, at the root of the stack (the frames the jumps abandoned are
 * repaired, and the runtime's re-entry flag is not left set).  Prints the handler's runs, which
 * must equal the handler span's calls, and how many of them jumped.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define AFTER_CALLS 100000

static sigjmp_buf loop_env;
static volatile sig_atomic_t armed, handled, jumped;
static volatile unsigned sink;
static jmp_buf round_env;

__attribute__((span("handler"))) static void on_alarm(int sig)
{
    (void)sig;
    handled = handled + 1;
    /* A cheap xorshift: rand() is not async-signal-safe. */
    static unsigned s = 2463534242u;
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    if (armed && (s & 1)) {
        jumped = jumped + 1;
        armed = 0;
        siglongjmp(loop_env, 1);
    }
}

__attribute__((span, noinline)) static void thrower(void)
{
    longjmp(round_env, 1);
}

__attribute__((span, noinline)) static void leaf(unsigned i)
{
    sink = sink * 31 + i;
}

__attribute__((span, noinline)) static void mid(unsigned i)
{
    leaf(i);
    if (!setjmp(round_env))
        thrower(); /* the next enter repairs the stack: a busy cold path */
    leaf(i + 1);
}

__attribute__((span, noinline)) static void after_child(void)
{
    sink++;
}

__attribute__((span, noinline)) static void after(void)
{
    after_child();
}

int main(int argc, char **argv)
{
    unsigned rounds = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 400000;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, NULL) != 0) {
        perror("sigaction");
        return 1;
    }
    mid(0); /* the loop's sites registered before the signals start */
    struct itimerval it = {{0, 100}, {0, 100}}; /* 10 kHz */
    setitimer(ITIMER_REAL, &it, NULL);
    static volatile unsigned i;
    for (i = 0; i < rounds; i++) {
        if (sigsetjmp(loop_env, 1))
            continue;
        armed = 1;
        mid(i);
        armed = 0;
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    signal(SIGALRM, SIG_IGN);
    for (unsigned k = 0; k < AFTER_CALLS; k++)
        after();
    printf("handled=%d\njumped=%d\n", (int)handled, (int)jumped);
    return 0;
}
