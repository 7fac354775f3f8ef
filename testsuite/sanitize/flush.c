/* flush.c — dumps while threads record: four threads run nested spans (new call paths keep
 * appearing, so nodes are published while the dumps walk the trees, and the shadow stacks grow
 * past their first array) while the main thread calls spanprof_flush() over and over.  Built
 * with ThreadSanitizer by `make check-sanitize`: any data race between the recording threads and
 * the writers is reported there.  Prints the calls it made, which the final profile must show.
 */
#include <pthread.h>
#include <spanprof.h>
#include <stdio.h>

#define THREADS 4
#define ROUNDS 30000
#define DEPTH 1100 /* deeper than the first frame array (1024 frames) */

static __thread volatile unsigned sink; /* per thread: the program itself has no race */
static volatile int running = THREADS;

__attribute__((span, noinline)) static void leaf(unsigned i)
{
    sink += i;
}

__attribute__((span, noinline)) static void other(unsigned i)
{
    sink ^= i;
}

__attribute__((span, noinline)) static void deep(unsigned n)
{
    if (n)
        deep(n - 1);
}

__attribute__((span, noinline)) static void branch(unsigned i)
{
    /* Alternating children: the cold path's child lookup and, early on, new nodes. */
    if (i % 3)
        leaf(i);
    else
        other(i);
}

static void *worker(void *arg)
{
    unsigned id = (unsigned)(size_t)arg;
    for (unsigned i = 0; i < ROUNDS; i++) {
        branch(i + id);
        if (i % 1000 == 0)
            deep(DEPTH);
    }
    __atomic_sub_fetch(&running, 1, __ATOMIC_RELEASE);
    return NULL;
}

int main(void)
{
    pthread_t th[THREADS];
    for (size_t i = 0; i < THREADS; i++)
        if (pthread_create(&th[i], NULL, worker, (void *)i) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    unsigned flushes = 0;
    while (__atomic_load_n(&running, __ATOMIC_ACQUIRE) > 0 || flushes < 3) {
        if (spanprof_flush() != 0) {
            fprintf(stderr, "spanprof_flush failed\n");
            return 1;
        }
        flushes++;
    }
    for (size_t i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    printf("branch calls=%u\n", THREADS * ROUNDS);
    return 0;
}
