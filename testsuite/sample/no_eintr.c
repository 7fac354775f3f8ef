/* no_eintr.c — sampling sends no signals: a thread blocked in read() on a pipe, and the main
 * thread sleeping in nanosleep() and waiting in poll(), all inside spans, at 10,000 samples a
 * second, never return early with EINTR.
 * test-env: SPANPROF_SAMPLE_HZ=10000 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static int read_rc, read_errno;

__attribute__((span, noinline)) static void wait_for_pipe(void)
{
    char c;
    read_rc = (int)read(fds[0], &c, 1);
    read_errno = read_rc < 0 ? errno : 0;
}

static void *reader(void *arg)
{
    (void)arg;
    wait_for_pipe();
    return NULL;
}

__attribute__((span, noinline)) static int naps(void)
{
    int interrupted = 0;
    for (int i = 0; i < 200; i++) {
        struct timespec ts = {0, 1000000}; /* 1 ms, no restart: an EINTR would show */
        if (nanosleep(&ts, NULL) != 0)
            interrupted += errno == EINTR;
    }
    return interrupted;
}

__attribute__((span, noinline)) static int poll_wait(void)
{
    int interrupted = 0;
    for (int i = 0; i < 4; i++)
        if (poll(NULL, 0, 50) < 0)
            interrupted += errno == EINTR;
    return interrupted;
}

int main(void)
{
    pthread_t t;
    if (pipe(fds) != 0 || pthread_create(&t, NULL, reader, NULL) != 0)
        return 1;
    int slept = naps();
    int polled = poll_wait();
    if (write(fds[1], "x", 1) != 1)
        return 1;
    pthread_join(t, NULL);
    printf("nanosleep: %d interrupted\n", slept);
    printf("poll: %d interrupted\n", polled);
    printf("read: returned %d, %s\n", read_rc, read_rc == 1 ? "no error" : strerror(read_errno));
    return 0;
}
