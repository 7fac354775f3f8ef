/* stacks.h — sampled allocation stacks inside libspanprof-alloc.so (stacks.c). */
#ifndef SPANPROF_ALLOC_STACKS_H
#define SPANPROF_ALLOC_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "collect/alloc_hooks.h"

#pragma GCC visibility push(hidden)

/* Mean sampling interval in bytes; 0 = no sampling.  Set once at attach. */
extern uint64_t spanprof_alloc__sample_mean;
extern __thread int64_t spanprof_alloc__until __attribute__((tls_model("initial-exec")));

void spanprof_alloc__sample(const struct spanprof_alloc_hooks *h, size_t size);

/* Called after every tracked allocation: one subtraction and a predictable branch, except every
 * ~sample_mean bytes. */
static inline void spanprof_alloc__maybe_sample(const struct spanprof_alloc_hooks *h, size_t size)
{
    if (!spanprof_alloc__sample_mean)
        return;
    spanprof_alloc__until -= (int64_t)size;
    if (__builtin_expect(spanprof_alloc__until <= 0, 0))
        spanprof_alloc__sample(h, size);
}

#pragma GCC visibility pop

#endif
