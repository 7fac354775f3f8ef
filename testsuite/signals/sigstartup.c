/* sigstartup.c — a 10 kHz SIGALRM handler (a span) armed before the program's first span, so
 * that signals land while the runtime starts and while a thread gets its data.
 *
 *   SIGSTARTUP=main|thread|ctor sigstartup [rounds]
 *
 * The mode is read from the environment, as the constructor of "ctor" runs before main.
 * main    main arms the timer, then runs a first span ("early") and the loop (work > mid >
 *         leaf): the signals find the main thread getting its data at its first span (and the
 *         writer thread being started for the JSON profile), sites seen for the first time and
 *         call paths being created.
 * thread  main blocks SIGALRM, arms the timer and runs the same in a thread that unblocks it
 *         first: the signals land in that thread's start.
 * ctor    a constructor arms the timer and runs "early" before the runtime's own constructor
 *         (the runtime linked statically), so start-up runs from that span, with its calibration
 *         (exact mode), while the signals come; then main runs the loop.
 * The handler counts its runs and the program prints the count, which must equal the handler
 * span's calls.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static unsigned rounds = 400000;

static volatile sig_atomic_t handled;
static volatile unsigned sink;

__attribute__((span("handler"))) static void on_alarm(int sig)
{
    (void)sig;
    handled = handled + 1;
}

__attribute__((span, noinline)) static unsigned leaf(unsigned i)
{
    sink = sink * 7 + i;
    return i * 3u + 1u;
}

__attribute__((span, noinline)) static unsigned mid(unsigned i)
{
    return leaf(i) + leaf(i + 1);
}

__attribute__((span, noinline)) static unsigned work(unsigned n)
{
    unsigned s = 0;
    for (unsigned i = 0; i < n; i++)
        s += mid(i);
    return s;
}

__attribute__((span, noinline)) static void early(void)
{
    sink = sink + 1;
}

static void arm(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, NULL) != 0) {
        perror("sigaction");
        exit(1);
    }
    struct itimerval it = {{0, 100}, {0, 100}}; /* 10 kHz */
    setitimer(ITIMER_REAL, &it, NULL);
}

static const char *mode(void)
{
    const char *m = getenv("SIGSTARTUP");
    return m ? m : "main";
}

__attribute__((constructor(101))) static void start_early(void)
{
    if (strcmp(mode(), "ctor") == 0) {
        arm();
        early();
    }
}

static void disarm(void)
{
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
}

static unsigned result;

/* The timer stops before the thread ends: a handler that lands while a thread ends is another
 * matter (the manual, docs/manual.md, "Signal handlers"). */
static void *thread_main(void *arg)
{
    pthread_sigmask(SIG_UNBLOCK, arg, NULL);
    early();
    result = work(rounds);
    disarm();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        rounds = (unsigned)strtoul(argv[1], NULL, 10);
    if (strcmp(mode(), "thread") == 0) {
        /* SIGALRM goes to a thread that does not block it: only the loop's thread. */
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGALRM);
        pthread_sigmask(SIG_BLOCK, &set, NULL);
        arm();
        pthread_t th;
        if (pthread_create(&th, NULL, thread_main, &set) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
        pthread_join(th, NULL);
    } else {
        if (strcmp(mode(), "ctor") != 0) {
            arm();
            early();
        }
        result = work(rounds);
    }
    disarm();
    signal(SIGALRM, SIG_IGN);
    printf("sum=%u\nhandled=%d\n", result, (int)handled);
    return 0;
}
