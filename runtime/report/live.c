/* live.c — a live snapshot (SPANPROF_LIVE, live/protocol.h): the framing around the two renderings
 * a collector needs from one capture, the JSON profile (spans, histograms, identity) and the pprof
 * profile (stacks), so that both describe the same instant.
 *
 * Both are rendered into memory first: the framing gives each part's length before its bytes, and
 * the caller sends the whole snapshot after the process lock is released. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "live/protocol.h"
#include "report/report.h"

int spanprof__live_snapshot_write(FILE *f, struct spanprof__capture *c,
                                  const struct spanprof__live_meta *live, int stacks)
{
    c->meta.live = live;
    c->view.threads_root = 0; /* the protocol's pprof: stacks summed over threads, no labels */
    int rc = -1;
    json_object *o = spanprof__json_build(&c->view, &c->meta);
    const char *js = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                               JSON_C_TO_STRING_NOSLASHESCAPE)
                       : NULL;
    char *pb = NULL;
    size_t pb_len = 0;
    FILE *mem = js ? open_memstream(&pb, &pb_len) : NULL;
    if (mem) {
        int failed = stacks ? spanprof__pprof_write_view(mem, &c->view, &c->meta) : 0;
        if (fclose(mem) == 0 && !failed && (pb || !stacks) &&
            fprintf(f, SPANPROF_LIVE_MAGIC "json %zu\n", strlen(js)) > 0 &&
            fputs(js, f) >= 0 && fprintf(f, "\npprof %zu\n", pb_len) > 0 &&
            fwrite(pb, 1, pb_len, f) == pb_len && fputs("\nend\n", f) >= 0)
            rc = 0;
    }
    if (rc && !errno)
        errno = ENOMEM;
    free(pb);
    if (o)
        json_object_put(o);
    return rc;
}
