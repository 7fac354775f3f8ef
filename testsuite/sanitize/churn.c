/* churn.c — threads ending while the profile is written: 400 short-lived threads, 4 alive at a
 * time, in two names, run nested spans; each one's data is merged into its name's group at its
 * exit and its memory reused by a later thread, while another thread calls spanprof_flush()
 * over and over.  Built with ThreadSanitizer by `make check-sanitize`: a data race between the
 * merge/reuse and the writers or the recording threads is reported there.  Prints the calls it
 * made, which the final profile must show.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <spanprof.h>
#include <stdio.h>
#include <time.h>

#define THREADS 400
#define BATCH 4
#define ROUNDS 300

static __thread volatile unsigned sink; /* per thread: the program itself has no race */
static volatile int done;

__attribute__((span, noinline)) static void leaf(unsigned i)
{
    sink += i;
}

__attribute__((span, noinline)) static void other(unsigned i)
{
    sink ^= i;
}

__attribute__((span, noinline)) static void branch(unsigned i)
{
    if (i % 3)
        leaf(i);
    else
        other(i);
}

static void *worker(void *arg)
{
    unsigned id = (unsigned)(size_t)arg;
    pthread_setname_np(pthread_self(), id % 2 ? "odd" : "even");
    for (unsigned i = 0; i < ROUNDS; i++)
        branch(i + id);
    return NULL;
}

static void *flusher(void *arg)
{
    (void)arg;
    unsigned flushes = 0;
    while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE) || flushes < 3) {
        if (spanprof_flush() != 0) {
            fprintf(stderr, "spanprof_flush failed\n");
            return (void *)1;
        }
        flushes++;
        /* A breath between writes: the process lock is not fair, and a writer that takes it
         * back at once would keep the ending threads (which merge under it) waiting for as
         * long as it runs.  Writes still overlap the threads' spans, merges and reuse. */
        nanosleep(&(struct timespec){0, 200000}, NULL);
    }
    return NULL;
}

int main(void)
{
    pthread_t f, th[BATCH];
    if (pthread_create(&f, NULL, flusher, NULL) != 0)
        return 1;
    for (size_t i = 0; i < THREADS; i += BATCH) {
        for (size_t k = 0; k < BATCH; k++)
            if (pthread_create(&th[k], NULL, worker, (void *)(i + k)) != 0) {
                fprintf(stderr, "pthread_create failed\n");
                return 1;
            }
        for (size_t k = 0; k < BATCH; k++)
            pthread_join(th[k], NULL);
    }
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    void *rc;
    pthread_join(f, &rc);
    printf("branch calls=%u\n", THREADS * ROUNDS);
    return rc != NULL;
}
