/* alloc_hooks.h — the contract between libspanprof (the runtime) and libspanprof-alloc.so (the
 * malloc interposer).  Shared by both, never installed.
 *
 * The interposer exports spanprof_alloc_attach; the runtime, when SPANPROF_ALLOC=1, finds it with
 * dlsym at start-up and hands over this table.  Before that (or without the runtime) the
 * interposer only forwards.  Owners are opaque tokens naming the span that allocated a block
 * (the runtime's per-node counters); they stay valid for the life of the process.
 */
#ifndef SPANPROF_ALLOC_HOOKS_H
#define SPANPROF_ALLOC_HOOKS_H

#include <stddef.h>
#include <stdint.h>

#define SPANPROF_ALLOC_HOOKS_VERSION 1u
#define SPANPROF_ALLOC_MAX_FRAMES 64

struct spanprof_alloc_hooks {
    unsigned version;
    /* A block of SIZE bytes was allocated by this thread: count it, return its owner (or NULL when
     * no span is open or the runtime itself is allocating). */
    void *(*on_alloc)(size_t size);
    /* A block of SIZE bytes is being freed by this thread.  OWNER is the allocating span's token
     * when the block was allocated in this process image (not before a fork), else NULL. */
    void (*on_free)(void *owner, size_t size);
    /* For a sampled allocation: the innermost open span (opaque, NULL if none) and its frame
     * address, so only native frames inside it are kept. */
    void *(*sample_span)(uintptr_t *cfa);
    /* Records a sample: SPAN from sample_span, NAMES the native frames from the innermost span
     * down to the allocating function (outermost first, strings that live forever), WEIGHT the
     * estimated bytes it stands for. */
    void (*sample_add)(void *span, const char *const *names, size_t n, double weight);
};

/* Exported by libspanprof-alloc.so.  STACKS: sample allocation stacks with mean interval
 * SAMPLE_MEAN bytes.  Returns 1 when the interposer tracks blocks (it was loaded with
 * SPANPROF_ALLOC=1 in the environment), 0 if it only forwards. */
typedef int (*spanprof_alloc_attach_fn)(const struct spanprof_alloc_hooks *hooks, int stacks,
                                        uint64_t sample_mean);
#define SPANPROF_ALLOC_ATTACH_SYMBOL "spanprof_alloc_attach"

#endif /* SPANPROF_ALLOC_HOOKS_H */
