/* resenv.c — the resource-profile environment variables (read at start-up with the others):
 *
 *   SPANPROF_HISTOGRAM=0|1      latency percentiles per span (default 0)
 *   SPANPROF_CPU=0|1            user/system CPU time per span (default 0: ~3.5 µs per span)
 *   SPANPROF_ALLOC=0|1          allocations per span (default 0; needs libspanprof-alloc.so)
 *   SPANPROF_ALLOC_STACKS=0|1   sampled allocation stacks as a memory flame graph (default 0)
 *   SPANPROF_ALLOC_SAMPLE=BYTES mean sampling interval in bytes (default 524288)
 *   SPANPROF_ALLOC_FOLDED=PATH  where the memory flame graph goes (default spanprof.alloc.folded)
 * Same rules as env.c: a bad value gives one warning line and the default.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collect/resources.h"

static uint64_t parse_bytes(const char *var, uint64_t def, spanprof__getenv_fn get, FILE *err)
{
    const char *v = get(var);
    if (!v)
        return def;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (*v < '0' || *v > '9' || *end || errno || n == 0) {
        fprintf(err, "spanprof: warning: %s='%s' is not a positive number of bytes; using %llu\n",
                var, v, (unsigned long long)def);
        return def;
    }
    return n;
}

void spanprof__res_config_load(struct spanprof__res_config *c, spanprof__getenv_fn get, FILE *err)
{
    c->hist = spanprof__env_bool("SPANPROF_HISTOGRAM", SPANPROF_HISTOGRAM_DEFAULT, get, err);
    c->cpu = spanprof__env_bool("SPANPROF_CPU", 0, get, err);
    c->alloc = spanprof__env_bool("SPANPROF_ALLOC", 0, get, err);
    c->alloc_stacks = spanprof__env_bool("SPANPROF_ALLOC_STACKS", 0, get, err);
    c->alloc_sample = parse_bytes("SPANPROF_ALLOC_SAMPLE", SPANPROF_ALLOC_SAMPLE_DEFAULT, get, err);
    c->alloc_folded = SPANPROF_ALLOC_FOLDED_DEFAULT;
    const char *v = get("SPANPROF_ALLOC_FOLDED");
    if (v && !spanprof__path_valid(v))
        fprintf(err,
                "spanprof: warning: SPANPROF_ALLOC_FOLDED='%s' has a '%%' not followed by 'p' or "
                "'%%'; using '" SPANPROF_ALLOC_FOLDED_DEFAULT "'\n", v);
    else if (v)
        c->alloc_folded = *v ? v : NULL;
}
