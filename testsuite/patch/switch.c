/* switch.c — spans switched on and off by request while eight threads call them (run.sh's
 * "switch" case): the program asks its own live socket (SPANPROF_LIVE) ROUNDS times,
 * "switch on counted,busy" and "switch off counted,busy" in turns.
 *  - Four threads call counted(), but stand still outside it while a switch is made, so the
 *    calls made while it was on are known exactly: the profile must count those, no more.
 *  - Four threads call busy() throughout, so switches land while calls are inside it: the
 *    profile must have no unmatched exit, abandoned or open frame, and no more calls than made.
 * Both spans call leaf(), which records throughout.  Prints "counted_on CALLS", "busy CALLS" and
 * "leaf CALLS"; exits 1 with a message when an answer is not the one expected.
 * "switch.c wait FILE": busy() is called, counted() not, and one more thread sits inside
 * resident() (asleep), until FILE exists (for `spanprof spans` run beside it). */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum { COUNTED = 4, BUSY = 4 };

static int stop, paused, standing, phase_on;
static uint64_t counted_on[COUNTED], busy_calls[BUSY], leaf_calls[COUNTED + BUSY];

__attribute__((noinline)) static void leaf(int who)
{
    leaf_calls[who]++; /* each thread its own */
}

__attribute__((noinline)) static void counted(int who)
{
    leaf(who);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void busy(int who)
{
    leaf(who);
    __asm__ volatile("" ::: "memory");
}

static void *counted_main(void *arg)
{
    int who = (int)(intptr_t)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        if (__atomic_load_n(&paused, __ATOMIC_ACQUIRE)) {
            __atomic_add_fetch(&standing, 1, __ATOMIC_ACQ_REL);
            while (__atomic_load_n(&paused, __ATOMIC_ACQUIRE))
                sched_yield();
            __atomic_sub_fetch(&standing, 1, __ATOMIC_ACQ_REL);
            continue;
        }
        counted(who);
        if (__atomic_load_n(&phase_on, __ATOMIC_RELAXED))
            counted_on[who]++;
    }
    return NULL;
}

/* Asleep inside the span until the end: switched off, it stays stopping. */
__attribute__((noinline)) static void resident(void)
{
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
        usleep(5000);
}

static void *resident_main(void *arg)
{
    (void)arg;
    resident();
    return NULL;
}

static void *busy_main(void *arg)
{
    int who = (int)(intptr_t)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        busy(who);
        busy_calls[who - COUNTED]++;
    }
    return NULL;
}

/* The live socket's answer to REQUEST, in ANSWER. */
static int ask(const char *path, const char *request, char *answer, size_t size)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        write(fd, request, strlen(request)) != (ssize_t)strlen(request)) {
        perror(path);
        return -1;
    }
    size_t got = 0;
    ssize_t k;
    while (got < size - 1 && (k = read(fd, answer + got, size - 1 - got)) > 0)
        got += (size_t)k;
    answer[got] = 0;
    close(fd);
    return 0;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 1000;
    const char *dir = getenv("SPANPROF_LIVE");
    char path[100], answer[4096], want[256];
    snprintf(path, sizeof path, "%s/%d.sock", dir ? dir : ".", (int)getpid());
    pthread_t t[COUNTED + BUSY];
    for (int i = 0; i < COUNTED + BUSY; i++)
        pthread_create(&t[i], NULL, i < COUNTED ? counted_main : busy_main, (void *)(intptr_t)i);
    for (int tries = 0; access(path, F_OK) != 0 && tries < 5000; tries++)
        usleep(1000); /* the socket comes with the first span */
    pthread_t resident_thread;
    int waits = argc > 2 && strcmp(argv[1], "wait") == 0;
    if (waits) {
        rounds = 0;
        __atomic_store_n(&paused, 1, __ATOMIC_RELEASE); /* counted() goes off at once */
        pthread_create(&resident_thread, NULL, resident_main, NULL);
        printf("ready\n");
        fflush(stdout);
        while (access(argv[2], F_OK) != 0)
            usleep(10000);
    }
    for (int r = 0; r < rounds; r++) {
        int on = r % 2 == 0;
        __atomic_store_n(&paused, 1, __ATOMIC_RELEASE);
        while (__atomic_load_n(&standing, __ATOMIC_ACQUIRE) < COUNTED)
            sched_yield();
        if (ask(path, on ? "switch on counted,busy\n" : "switch off counted,busy\n", answer,
                sizeof answer))
            return 1;
        snprintf(want, sizeof want, "spanprof-sites 1\n%s\tbusy\t", on ? "on" : "off");
        /* busy may still be stopping: calls are inside it */
        if (strncmp(answer, want, strlen(want)) != 0 &&
            (on || strncmp(answer, "spanprof-sites 1\nstopping\tbusy\t", 31) != 0)) {
            fprintf(stderr, "switch.c: round %d: unexpected answer: %s", r, answer);
            return 1;
        }
        if (!strstr(answer, on ? "\non\tcounted\t" : "\noff\tcounted\t")) {
            fprintf(stderr, "switch.c: round %d: counted not switched: %s", r, answer);
            return 1;
        }
        __atomic_store_n(&phase_on, on, __ATOMIC_RELAXED);
        __atomic_store_n(&paused, 0, __ATOMIC_RELEASE);
        while (__atomic_load_n(&standing, __ATOMIC_ACQUIRE) > 0)
            sched_yield();
        usleep(500);
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&paused, 0, __ATOMIC_RELEASE);
    if (waits)
        pthread_join(resident_thread, NULL);
    uint64_t c = 0, b = 0, l = 0;
    for (int i = 0; i < COUNTED + BUSY; i++) {
        pthread_join(t[i], NULL);
        c += i < COUNTED ? counted_on[i] : 0;
        b += i < COUNTED ? 0 : busy_calls[i - COUNTED];
        l += leaf_calls[i];
    }
    printf("counted_on %llu\nbusy %llu\nleaf %llu\n", (unsigned long long)c,
           (unsigned long long)b, (unsigned long long)l);
    return 0;
}
