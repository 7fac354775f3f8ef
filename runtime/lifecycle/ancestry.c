/* ancestry.c — who this image is: a descendant of a profiled process or not, which image of its
 * process, and whether another copy of the runtime already runs in it.  All through one marker
 * in the environment, SPANPROF_ANCESTOR=PID:N:ID (see exec.c for the naming rule it serves).
 *
 * Two copies of the runtime can meet in one process: libspanprof.a linked into the program and
 * libspanprof.so brought by a dlopen'ed library (or the other way round).  The copy that starts
 * second finds the marker of its own image (same PID and ID) and stays off, with one warning
 * naming the fix — unless it is shadowed: when the process's symbol lookup finds another copy's
 * entry points (the program exports them, -rdynamic, or the shared runtime came first), every
 * span already goes to that copy, so this one stays off without a word.  Either way one profile
 * is written, by one copy, and never overwritten by the other.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "lifecycle/lifecycle.h"

pid_t spanprof__image_pid;

/* This image's identity: the kernel's random bytes for this exec, in hex. */
static void image_id(char out[17])
{
    const unsigned char *r = (const unsigned char *)getauxval(AT_RANDOM);
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 8; i++) {
        unsigned char b = r ? r[i] : 0;
        out[2 * i] = hex[b >> 4];
        out[2 * i + 1] = hex[b & 15];
    }
    out[16] = 0;
}

/* Async-signal-safe (a vfork child calls it). */
void spanprof__marker(char *out, size_t size, pid_t pid, unsigned written)
{
    char num[24], id[17];
    const char *parts[] = {"SPANPROF_ANCESTOR=", num, ":", num + 12, ":", id};
    spanprof__format_u64(num, (uint64_t)pid);
    spanprof__format_u64(num + 12, written);
    image_id(id);
    size_t at = 0;
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        size_t len = strlen(parts[i]);
        if (at + len >= size)
            break;
        memcpy(out + at, parts[i], len);
        at += len;
    }
    out[at] = 0;
}

/* The object (program or library) that holds ADDR, or NULL. */
static const char *object_of(const void *addr, void **base)
{
    Dl_info info;
    if (!dladdr(addr, &info))
        return NULL;
    *base = info.dli_fbase;
    return info.dli_fname;
}

static void here(void) {}

int spanprof__ancestry_start(const char *marker, struct spanprof__outputs *out)
{
    pid_t pid = getpid();
    char id[17];
    image_id(id);
    void *own_base = NULL, *global_base = NULL;
    const char *own = object_of((const void *)here, &own_base);
    void *global = dlsym(RTLD_DEFAULT, "__spanprof_enter");
    if (global && own && object_of(global, &global_base) && global_base != own_base)
        return 0; /* shadowed: spans go to the copy the lookup finds */
    long mpid = 0;
    unsigned long written = 0;
    char mid[17] = "";
    /* A successor (handover.c) is the same image as the copy it took over from: its naming came
     * with the profile. */
    if (marker && !spanprof__successor &&
        sscanf(marker, "%ld:%lu:%16[0-9a-f]", &mpid, &written, mid) == 3) {
        if (mpid == (long)pid && strcmp(mid, id) == 0) {
            fprintf(stderr,
                    "spanprof: warning: a second copy of the runtime (in %s) is not recording: "
                    "this process already runs one; link the program with -rdynamic so "
                    "libraries use its copy, or link every part with the shared libspanprof.so\n",
                    own && *own ? own : "the program");
            return 0;
        }
        out->descendant = 1;
        out->image = mpid == (long)pid ? (unsigned)written : 0;
    }
    spanprof__image_pid = pid;
    char buf[96];
    spanprof__marker(buf, sizeof buf, pid, out->image);
    setenv("SPANPROF_ANCESTOR", buf + strlen("SPANPROF_ANCESTOR="), 1);
    return 1;
}

void spanprof__ancestry_fork_child(void)
{
    spanprof__image_pid = getpid();
}

static int sum_calls(struct spanprof__node *n, size_t depth, void *ctx)
{
    (void)depth;
    *(uint64_t *)ctx += __atomic_load_n(&n->calls, __ATOMIC_RELAXED);
    return 1;
}

int spanprof__image_recorded(void)
{
    uint64_t calls = 0;
    spanprof__lock();
    for (struct spanprof__thread *t = spanprof__g.threads; t && !calls; t = t->next)
        spanprof__tree_walk(&t->root, sum_calls, NULL, &calls);
    spanprof__unlock();
    return calls != 0;
}
