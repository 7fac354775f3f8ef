/* startup.c — a server-like program for the live test, built whole-program
 * (-fplugin-arg-spanplugin-all: no markup): at start 150 start-up functions run (each a span,
 * each called 20 times), then it waits IDLE_S seconds as a server waits for its first client,
 * then it serves: handle_request() for LOAD_S seconds, each call spinning SPIN_US microseconds.
 * With BUSY_S=S in the environment it serves S seconds before it idles.
 * "idle" is written to the file MARK when it goes idle, "load" when the load starts; at the end it prints
 * "request_rate R", its own count of handle_request's calls per second of load.
 *
 * Usage: startup IDLE_S LOAD_S MARK */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define SPIN_US 50

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile unsigned long sink;

/* startup_10 ... startup_159: a loop each, so the size rule gives each a span */
#define STARTUP(n)                                                                                 \
    __attribute__((noinline)) void startup_##n(void)                                               \
    {                                                                                              \
        for (int i = 0; i < 2000 + 10 * (n); i++)                                                  \
            sink++;                                                                                \
    }
#define TEN(d)                                                                                     \
    STARTUP(d##0) STARTUP(d##1) STARTUP(d##2) STARTUP(d##3) STARTUP(d##4) STARTUP(d##5)             \
    STARTUP(d##6) STARTUP(d##7) STARTUP(d##8) STARTUP(d##9)
TEN(1) TEN(2) TEN(3) TEN(4) TEN(5) TEN(6) TEN(7) TEN(8) TEN(9) TEN(10) TEN(11) TEN(12) TEN(13)
TEN(14) TEN(15)

#define CALL(n) startup_##n();
#define CALL_TEN(d)                                                                                \
    CALL(d##0) CALL(d##1) CALL(d##2) CALL(d##3) CALL(d##4) CALL(d##5) CALL(d##6) CALL(d##7)        \
    CALL(d##8) CALL(d##9)

__attribute__((noinline)) void start_up(void)
{
    for (int round = 0; round < 20; round++) {
        CALL_TEN(1) CALL_TEN(2) CALL_TEN(3) CALL_TEN(4) CALL_TEN(5) CALL_TEN(6) CALL_TEN(7)
        CALL_TEN(8) CALL_TEN(9) CALL_TEN(10) CALL_TEN(11) CALL_TEN(12) CALL_TEN(13) CALL_TEN(14)
        CALL_TEN(15)
    }
}

__attribute__((noinline)) void handle_request(void)
{
    double end = now() + SPIN_US / 1e6;
    while (now() < end)
        sink++;
}

static int mark(const char *path, const char *what)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(what, f);
    return fclose(f);
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    double idle_s = atof(argv[1]), load_s = atof(argv[2]);
    start_up();
    const char *busy = getenv("BUSY_S");
    for (double end = now() + (busy ? atof(busy) : 0); now() < end;)
        handle_request();
    if (mark(argv[3], "idle\n"))
        return 1;
    usleep((useconds_t)(idle_s * 1e6));
    if (mark(argv[3], "load\n"))
        return 1;
    double start = now(), end = start + load_s;
    unsigned long calls = 0;
    while (now() < end) {
        handle_request();
        calls++;
    }
    printf("request_rate %.1f\n", calls / (now() - start));
    return 0;
}
