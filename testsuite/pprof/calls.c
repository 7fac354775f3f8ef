/* calls.c — a program with known call counts on known stacks, for the pprof tests:
 *   main thread:  run -> parse (x3) -> lex (x4 per parse), and run -> digest (x2)
 *   "worker":     work -> digest (x5)
 * so `go tool pprof` must show parse 3, lex 12, digest 7 (2 under run, 5 under work).  Each lex
 * call allocates 16 bytes and each parse call 100, for the allocation sample types. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <spanprof.h>
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned sink;
static void *volatile block; /* keeps the compiler from dropping malloc/free pairs */

static void use_bytes(size_t n)
{
    block = malloc(n);
    free(block);
}

__attribute__((span, noinline)) static void lex(unsigned i)
{
    sink += i * 2654435761u;
    use_bytes(16);
}

__attribute__((span, noinline)) static void parse(unsigned n)
{
    use_bytes(100);
    for (unsigned i = 0; i < 4; i++)
        lex(n + i);
}

__attribute__((span, noinline)) static void digest(unsigned n)
{
    sink ^= n;
}

__attribute__((span, noinline)) static void *work(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "worker");
    for (unsigned i = 0; i < 5; i++)
        digest(i);
    return NULL;
}

__attribute__((span, noinline)) static void run(void)
{
    for (unsigned i = 0; i < 3; i++)
        parse(i);
    digest(1);
    digest(2);
}

int main(void)
{
    pthread_t t;
    pthread_setname_np(pthread_self(), "main");
    pthread_create(&t, NULL, work, NULL);
    pthread_join(t, NULL);
    run();
    printf("done\n");
    return 0;
}
