/* sigalrm.c — spans in a 10 kHz SIGALRM handler that interrupts a loop of nested spans.
 *
 *   sigalrm [altstack|altabove|normal] [rounds]
 *
 * The handler is a span ("handler") with a nested span ("handler_inner"); it counts its runs and
 * the program prints the count, which must equal the handler span's calls.  The loop's spans
 * (work > mid > leaf) have exact counts.  With "altstack" the handler runs on an alternate
 * signal stack (SA_ONSTACK) below the interrupted frames (a static array); with "altabove" the
 * loop runs in a thread whose stack is a static array and the alternate stack is mapped, above
 * it.  leaf allocates, so with
 * allocation tracking on the handler also lands inside the allocation hooks.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>

static unsigned rounds = 400000;

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

__attribute__((span, noinline)) static unsigned leaf(unsigned i)
{
    unsigned *p = malloc(16);
    if (!p)
        abort();
    p[0] = i * 3u + 1u;
    unsigned v = p[0];
    free(p);
    return v;
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

static unsigned result;

static void run(int alt, void *alt_stack, size_t alt_size)
{
    if (alt) {
        stack_t ss = {.ss_sp = alt_stack, .ss_size = alt_size};
        if (sigaltstack(&ss, NULL) != 0) {
            perror("sigaltstack");
            exit(1);
        }
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART | (alt ? SA_ONSTACK : 0);
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, NULL) != 0) {
        perror("sigaction");
        exit(1);
    }
    /* The thread's data, the sites and their call paths exist before the signals start: this test
     * is about handlers landing in recording itself (sigstartup.c has them from the start). */
    work(1);
    struct itimerval it = {{0, 100}, {0, 100}}; /* 10 kHz */
    setitimer(ITIMER_REAL, &it, NULL);
    result = work(rounds);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
}

static void *thread_main(void *arg)
{
    size_t size = 1 << 16;
    void *alt = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (alt == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    if ((uintptr_t)alt < (uintptr_t)&size) {
        fprintf(stderr, "the mapped alternate stack is not above the thread's stack\n");
        exit(1);
    }
    pthread_sigmask(SIG_UNBLOCK, arg, NULL);
    run(1, alt, size);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (argc > 2)
        rounds = (unsigned)strtoul(argv[2], NULL, 10);
    static char alt_stack[1 << 16];
    if (strcmp(mode, "altabove") == 0) {
        /* SIGALRM goes to a thread that does not block it: only the loop's thread. */
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGALRM);
        static char thread_stack[1 << 20] __attribute__((aligned(4096)));
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstack(&attr, thread_stack, sizeof thread_stack);
        pthread_t th;
        pthread_sigmask(SIG_BLOCK, &set, NULL);
        if (pthread_create(&th, &attr, thread_main, &set) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
        pthread_join(th, NULL);
    } else {
        run(strcmp(mode, "altstack") == 0, alt_stack, sizeof alt_stack);
    }
    signal(SIGALRM, SIG_IGN);
    printf("sum=%u\nhandled=%d\n", result, (int)handled);
    return 0;
}
