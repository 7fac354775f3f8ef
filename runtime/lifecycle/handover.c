/* handover.c — a runtime that is unloaded leaves its profile to the next copy loaded into the
 * same process, so that the files written last hold every call.
 *
 * The runtime can live in a library that a program loads and unloads (libspanprof.so brought in
 * by a dlopen'ed library, or libspanprof.a linked into one).  When it is unloaded (unload.c) it
 * writes its files and leaves its state behind: the thread registry and call trees are in mmap'd
 * memory that is never unmapped, their site pointers already turned to copies the runtime owns
 * (record/siteretire.c), and its threads all marked ended.  The anchor is one entry in the process's
 * environment, SPANPROF_HANDOVER=PID:ID:ADDRESS: the process, the image (the kernel's random
 * bytes for this exec, as in SPANPROF_ANCESTOR) and the address of a block holding the rest.  A
 * copy that starts later in the same image finds it, checks the block's stamp and layout, and
 * adopts the registry as a whole, the start time, the site ids, the sites' copies, the nodes'
 * abandoned activations and the file naming: its writes are then cumulative, and the library's
 * spans go on in the same nodes.
 * The environment is the one place two copies of the runtime, which share no symbol, both see;
 * the pid and image in the entry keep a program started by exec (which inherits it) from ever
 * reading the address.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lifecycle/lifecycle.h"
#include "record/siteretire.h"

#define STAMP "spanprof handover 2"

struct handover {
    char stamp[24];
    /* The layout the trees were built with: a copy that differs cannot read them. */
    uint32_t thread_size, node_size, version;
    size_t node_ext;
    int counting, tsc, histogram;
    /* The state itself. */
    struct spanprof__thread *threads;
    struct spanprof__progress_point *progress;
    uint32_t next_site_id;
    uint64_t unmatched_no_thread;
    uint64_t start_mono_ns, start_tick;
    int64_t start_real_sec, start_real_nsec;
    int descendant;
    unsigned image;
    int image_wrote;
    void *copies; /* the sites' copies, by name (record/siteretire.c), for the library loaded again */
    struct spanprof__abandoned *abandoned; /* abandoned activations per node (record/abandoned.c) */
    uint64_t abandoned_unplaced;
    size_t copies_cap, copies_n;
};

int spanprof__successor;

/* "PID:ID" of this image, from its SPANPROF_ANCESTOR marker (which ends in the image id). */
static void image_key(char *out, size_t size)
{
    char marker[96];
    spanprof__marker(marker, sizeof marker, getpid(), 0);
    const char *id = strrchr(marker, ':');
    snprintf(out, size, "%ld:%s", (long)getpid(), id ? id + 1 : "");
}

static void fill_layout(struct handover *h)
{
    memcpy(h->stamp, STAMP, sizeof STAMP);
    h->thread_size = sizeof(struct spanprof__thread);
    h->node_size = sizeof(struct spanprof__node);
    h->version = SPANPROF_SITE_VERSION;
    h->node_ext = spanprof__flags.node_ext;
    h->counting = spanprof__flags.counting;
    h->tsc = spanprof__flags.tsc;
    h->histogram = spanprof__flags.histogram;
}

void spanprof__handover_leave(const struct spanprof__outputs *out)
{
    struct handover *h = spanprof__map(sizeof *h);
    if (!h)
        return;
    fill_layout(h);
    h->threads = spanprof__g.threads;
    h->progress = spanprof__progress_points;
    h->next_site_id = spanprof__g.next_site_id;
    h->unmatched_no_thread = spanprof__g.unmatched_no_thread;
    h->start_mono_ns = spanprof__g.start_mono_ns;
    h->start_tick = spanprof__g.start_tick;
    h->start_real_sec = spanprof__g.start_real_sec;
    h->start_real_nsec = spanprof__g.start_real_nsec;
    h->descendant = out->descendant;
    h->image = out->image;
    h->image_wrote = spanprof__image_wrote;
    h->abandoned = spanprof__g.abandoned;
    h->abandoned_unplaced = spanprof__g.abandoned_unplaced;
    void **table;
    size_t *cap, *n;
    spanprof__retire_copies(&table, &cap, &n);
    h->copies = *table;
    h->copies_cap = *cap;
    h->copies_n = *n;
    char key[64], value[96];
    image_key(key, sizeof key);
    snprintf(value, sizeof value, "%s:%lx", key, (unsigned long)(uintptr_t)h);
    setenv("SPANPROF_HANDOVER", value, 1);
}

void spanprof__handover_adopt(const char *value, struct spanprof__outputs *out)
{
    if (!value)
        return;
    char key[64];
    image_key(key, sizeof key);
    size_t len = strlen(key);
    if (strncmp(value, key, len) != 0 || value[len] != ':')
        return; /* left by another process or image (inherited through exec): not ours to read */
    unsetenv("SPANPROF_HANDOVER");
    struct handover *h = (struct handover *)(uintptr_t)strtoul(value + len + 1, NULL, 16);
    if (!h || memcmp(h->stamp, STAMP, sizeof STAMP) != 0)
        return; /* not a block this version of the runtime can read */
    /* The same image as the copy that left it: its file names, whatever else differs. */
    out->descendant = h->descendant;
    out->image = h->image;
    spanprof__image_wrote = h->image_wrote;
    spanprof__successor = 1;
    struct handover now;
    memset(&now, 0, sizeof now); /* padding too: the layout part is compared byte by byte */
    fill_layout(&now);
    if (memcmp(h, &now, offsetof(struct handover, threads)) != 0) {
        fprintf(stderr, "spanprof: warning: the profile of the runtime unloaded earlier in this "
                        "process was recorded with other settings; this copy starts afresh and "
                        "its files replace that profile\n");
        return;
    }
    spanprof__g.threads = h->threads;
    spanprof__progress_points = h->progress;
    spanprof__g.next_site_id = h->next_site_id;
    spanprof__g.unmatched_no_thread = h->unmatched_no_thread;
    spanprof__g.start_mono_ns = h->start_mono_ns;
    spanprof__g.start_tick = h->start_tick;
    spanprof__g.start_real_sec = h->start_real_sec;
    spanprof__g.start_real_nsec = h->start_real_nsec;
    spanprof__g.abandoned = h->abandoned;
    spanprof__g.abandoned_unplaced = h->abandoned_unplaced;
    void **table;
    size_t *cap, *n;
    spanprof__retire_copies(&table, &cap, &n);
    *table = h->copies;
    *cap = h->copies_cap;
    *n = h->copies_n;
}
