/* allocsamples.c — sampled allocation stacks (SPANPROF_ALLOC_STACKS=1): the interposer hands each
 * sample to the allocating thread, which keeps it in its arena (no malloc: this runs inside the
 * program's allocation) on a list the memory flame graph's writer reads (report/allocfolded.c).
 */
#include <string.h>

#include "collect/collect.h"

/* Called by the interposer on the allocating thread, inside the span it names. */
void spanprof__alloc_sample_add(void *span, const char *const *names, size_t n, double weight)
{
    struct spanprof__thread *t = spanprof__tls;
    struct spanprof__res_thread *rt = t->res;
    if (!span || !rt || t == &spanprof__sentinel_thread)
        return;
    struct spanprof__alloc_sample *s =
        spanprof__arena_alloc(&t->arena, sizeof *s + n * sizeof s->names[0]);
    if (!s)
        return;
    s->node = span;
    s->weight = weight;
    s->n = n;
    memcpy(s->names, names, n * sizeof names[0]);
    s->next = rt->samples;
    __atomic_store_n(&rt->samples, s, __ATOMIC_RELEASE);
}
