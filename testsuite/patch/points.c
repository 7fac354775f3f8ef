/* points.c — a program whose spans' patch points the runtime may turn into no-ops, which reports
 * what its own code holds at each point when it ends.  Built whole-program with every function a
 * span (-fplugin-arg-spanplugin-all, min-size=0): tiny() is a few instructions called
 * PER_ROUND times a round, which a cost budget switches off; marked() is as small but carries
 * the attribute (never switched off); work() runs a round.  THREADS workers (default 1) run
 * rounds until SECONDS have passed (0: one round).
 *
 * usage: [POINTS_DENY=1] [POINTS_TRAP=1] [POINTS_SWITCH=GLOBS] [POINTS_DLOPEN=LIB]
 *        points SECONDS [THREADS]
 * POINTS_DENY=1: before the runtime starts (a constructor of a higher priority than the
 * runtime's, which must then be linked statically), a seccomp filter makes mprotect fail with
 * EPERM whenever it asks for writable and executable pages at once, as a hardened system does.
 * POINTS_SWITCH=GLOBS: before the rounds, the program asks its own live socket (SPANPROF_LIVE;
 * it comes with the first span, so main must record) to switch GLOBS on, and prints the
 * request and the answer.
 * POINTS_DLOPEN=LIB: after its own report, the program loads LIB (loadlib.c) twice, each time
 * calling its lib_work(1000) and reporting that object's points as its own, then unloading it.
 *
 * Prints "rounds N", "tiny N", "marked N" (the calls it made), then one line per span with
 * patch points: its name and "jumps" (every point as compiled), "no-ops" (every point patched)
 * or "mixed", read from the object's notes as the runtime reads them (spanprof.h, section 6). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "spanprof.h"

#define PER_ROUND 100000

static volatile long sink;
static double deadline;
static long rounds_done;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static long tiny(long x)
{
    return x * 3 + 1;
}

__attribute__((span, noinline)) static long marked(long x)
{
    return x ^ 5;
}

__attribute__((noinline)) static long work(void)
{
    long s = 0;
    for (long i = 0; i < PER_ROUND; i++)
        s += tiny(i);
    return s + marked(s);
}

__attribute__((nospan)) static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((nospan)) static void *worker(void *arg)
{
    (void)arg;
    long rounds = 0;
    do {
        sink += work();
        rounds++;
    } while (now_s() < deadline);
    pthread_mutex_lock(&lock);
    rounds_done += rounds;
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* ---- the points, as the object's notes list them -------------------------------------------- */

struct span_points {
    const char *name;
    int jumps, noops;
};
static struct span_points spans[16];
static int nspans;

__attribute__((nospan)) static int is_noop(const unsigned char *at)
{
#if defined(__x86_64__)
    static const unsigned char nop5[5] = {0x0f, 0x1f, 0x44, 0x00, 0x00};
    return memcmp(at, nop5, 5) == 0;
#else
    unsigned insn;
    memcpy(&insn, at, 4);
    return insn == 0xd503201fu;
#endif
}

/* Calls FN (POINT, SITE) for each patch point the notes of one object list: the program's, or
 * the library whose path is walk_library. */
typedef void (*point_fn)(unsigned char *at, const struct spanprof_site *site);
static const char *walk_library;

__attribute__((nospan)) static int walk_points(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    point_fn fn = *(point_fn *)arg;
    if (walk_library ? strcmp(info->dlpi_name, walk_library) : info->dlpi_name[0] != 0)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        size_t pad = ph->p_align == 8 ? 7 : 3;
        const unsigned char *note = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        const unsigned char *end = note + ph->p_memsz;
        while (note + 12 <= end) {
            Elf64_Nhdr h;
            memcpy(&h, note, sizeof h);
            const unsigned char *desc = note + 12 + ((h.n_namesz + pad) & ~pad);
            note = desc + ((h.n_descsz + pad) & ~pad);
            if (h.n_type != SPANPROF_PATCH_NOTE_TYPE || h.n_descsz != 8)
                continue;
            int to_point, to_site;
            memcpy(&to_point, desc, 4);
            memcpy(&to_site, desc + 4, 4);
            fn((unsigned char *)(uintptr_t)(desc + to_point),
               (const struct spanprof_site *)(desc + 4 + to_site));
        }
    }
    return 0;
}

__attribute__((nospan)) static void for_each_point(point_fn fn)
{
    dl_iterate_phdr(walk_points, &fn);
}

__attribute__((nospan)) static void count_point(unsigned char *at,
                                                const struct spanprof_site *site)
{
    int k = 0;
    while (k < nspans && strcmp(spans[k].name, site->name))
        k++;
    if (k == nspans && nspans < 16)
        spans[nspans++] = (struct span_points){site->name, 0, 0};
    if (k < nspans) {
        if (is_noop(at))
            spans[k].noops++;
        else
            spans[k].jumps++;
    }
}

/* POINTS_TRAP=1 (x86-64): an int3 over the first byte of tiny()'s enter point, as a thread
 * meets it while the runtime writes the point; the runtime's SIGTRAP handler must take the
 * thread past the point, as the no-op would. */
static unsigned char *tiny_point;

__attribute__((nospan)) static void find_tiny_point(unsigned char *at,
                                                    const struct spanprof_site *site)
{
    if (!strcmp(site->name, "tiny") && is_noop(at) && (!tiny_point || at < tiny_point))
        tiny_point = at; /* the lowest: the enter's, which every call runs */
}

__attribute__((nospan)) static void trap_a_point(void)
{
    for_each_point(find_tiny_point);
    if (!tiny_point) {
        printf("trap: no patched point of tiny\n");
        return;
    }
    long page = sysconf(_SC_PAGESIZE);
    unsigned char *first = (unsigned char *)((uintptr_t)tiny_point & ~(uintptr_t)(page - 1));
    if (mprotect(first, (size_t)(tiny_point + 5 - first), PROT_READ | PROT_WRITE | PROT_EXEC)) {
        perror("points: mprotect");
        return;
    }
    *tiny_point = 0xcc;
    printf("trap: tiny(41) = %ld past an int3 at its point\n", tiny(41));
    *tiny_point = 0x0f;
    mprotect(first, (size_t)(tiny_point + 5 - first), PROT_READ | PROT_EXEC);
}

__attribute__((nospan)) static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct span_points *)a)->name, ((const struct span_points *)b)->name);
}

/* One line per span of the object walk_library names (NULL: the program). */
__attribute__((nospan)) static void report_points(void)
{
    nspans = 0;
    for_each_point(count_point);
    qsort(spans, (size_t)nspans, sizeof spans[0], by_name);
    for (int k = 0; k < nspans; k++)
        printf("%s %s\n", spans[k].name,
               !spans[k].noops ? "jumps" : !spans[k].jumps ? "no-ops" : "mixed");
}

/* POINTS_DLOPEN: LIB loaded, called, reported and unloaded, twice. */
__attribute__((nospan)) static void load_library(const char *path)
{
    for (int k = 1; k <= 2; k++) {
        void *h = dlopen(path, RTLD_NOW);
        long (*lib_work)(long) = h ? (long (*)(long))dlsym(h, "lib_work") : NULL;
        if (!lib_work) {
            printf("load %d: %s\n", k, dlerror());
            return;
        }
        printf("load %d: lib_work(1000) = %ld\n", k, lib_work(1000));
        walk_library = path;
        report_points();
        walk_library = NULL;
        dlclose(h);
    }
}

/* ---- deny: mprotect refused for writable and executable pages -------------------------------- */

__attribute__((nospan, constructor(101))) static void deny_writable_text(void)
{
    const char *deny = getenv("POINTS_DENY");
    if (!deny || strcmp(deny, "1"))
        return;
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mprotect, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_WRITE, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1 /* EPERM */),
    };
    struct sock_fprog prog = {sizeof filter / sizeof filter[0], filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
        perror("points: seccomp");
}

/* ---- switch: spans switched on through the program's own live socket ------------------------- */

__attribute__((nospan)) static void switch_on(const char *globs)
{
    const char *dir = getenv("SPANPROF_LIVE");
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s/%d.sock", dir ? dir : ".", (int)getpid());
    for (int tries = 0; access(a.sun_path, F_OK) != 0 && tries < 5000; tries++)
        usleep(1000); /* the live thread makes it */
    char request[256], answer[4096];
    snprintf(request, sizeof request, "switch on %s\n", globs);
    printf("%s", request);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) ||
        write(fd, request, strlen(request)) != (ssize_t)strlen(request)) {
        perror("points: live socket");
        if (fd >= 0)
            close(fd);
        return;
    }
    size_t got = 0;
    ssize_t k;
    while (got < sizeof answer - 1 && (k = read(fd, answer + got, sizeof answer - 1 - got)) > 0)
        got += (size_t)k;
    answer[got] = 0;
    close(fd);
    printf("%s", answer);
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 0;
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    pthread_t t[16];
    if (threads < 1 || threads > 16)
        threads = 1;
    const char *globs = getenv("POINTS_SWITCH");
    if (globs && *globs)
        switch_on(globs);
    deadline = now_s() + seconds;
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    printf("rounds %ld\ntiny %ld\nmarked %ld\n", rounds_done, rounds_done * PER_ROUND,
           rounds_done);
    const char *trap = getenv("POINTS_TRAP");
    if (trap && !strcmp(trap, "1"))
        trap_a_point();
    report_points();
    const char *library = getenv("POINTS_DLOPEN");
    if (library && *library)
        load_library(library);
    return 0;
}
