/* live_pprof.c — one pprof profile of several running processes' stacks (what `spanprof serve`
 * answers on /debug/pprof/profile and pushes): each sample labelled with its process's pid, the
 * processes' sample types united. */
#include "format/format.h"

#include <errno.h>
#include <string.h>

int live_pprof_write(FILE *f, const struct live_pprof_part *parts, size_t nparts, int64_t duration_ns,
                     int64_t time_ns)
{
    struct spanprof__pprof_type types[PPROF_MAX_TYPES];
    size_t ntypes = 0;
    struct spanprof__pprof_type period_type = {"calls", "count"};
    int64_t period = 1;
    for (size_t p = 0; p < nparts; p++) {
        const struct live_stacks *st = parts[p].stacks;
        if (p == 0 && st->period_type.type && *st->period_type.type) {
            period_type = st->period_type;
            period = st->period;
        }
        for (size_t i = 0; i < st->ntypes; i++) {
            size_t k = 0;
            while (k < ntypes && (strcmp(types[k].type, st->types[i].type) || strcmp(types[k].unit, st->types[i].unit)))
                k++;
            if (k == ntypes && ntypes < PPROF_MAX_TYPES)
                types[ntypes++] = st->types[i];
        }
    }
    if (ntypes == 0) {
        /* no process: an empty profile of the runtime's first two types */
        types[ntypes++] = (struct spanprof__pprof_type){"calls", "count"};
        types[ntypes++] = (struct spanprof__pprof_type){"wall", "nanoseconds"};
    }
    struct spanprof__pprof_model model = {
        .types = types,
        .ntypes = ntypes,
        .period_type = period_type,
        .period = period,
        .duration_ns = duration_ns,
        .time_ns = time_ns,
    };
    struct spanprof__pprof_builder *b = spanprof__pprof_begin(&model);
    if (!b)
        return -1;
    int64_t values[PPROF_MAX_TYPES];
    for (size_t p = 0; p < nparts; p++) {
        const struct live_stacks *st = parts[p].stacks;
        size_t map[PPROF_MAX_TYPES];
        for (size_t i = 0; i < st->ntypes; i++) {
            size_t k = 0;
            while (k < ntypes && (strcmp(types[k].type, st->types[i].type) || strcmp(types[k].unit, st->types[i].unit)))
                k++;
            map[i] = k;
        }
        char pid[24];
        snprintf(pid, sizeof pid, "%lld", parts[p].pid);
        for (size_t s = 0; s < st->n; s++) {
            memset(values, 0, sizeof values);
            for (size_t i = 0; i < st->ntypes; i++)
                if (map[i] < ntypes)
                    values[map[i]] = st->v[s].values[i];
            struct spanprof__pprof_sample smp = {st->v[s].frames, st->v[s].depth, values, st->v[s].thread};
            if (spanprof__pprof_add_labelled(b, &smp, "pid", pid))
                break;   /* finish reports it */
        }
    }
    return spanprof__pprof_finish(b, f);
}
