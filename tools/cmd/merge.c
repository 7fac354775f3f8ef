/* merge.c — `spanprof merge -o OUT FILE...`: one profile from the profiles of many processes,
 * by the merge of format/merge.c (which recognises each input's kind and merges it), then a
 * line saying what was merged. */
#include "cmd/cmd.h"

#include <stdio.h>
#include <string.h>

int cmd_merge(const char *out, char *const *paths, size_t npaths)
{
    const char *kind_name;
    int rc = merge_files(out, paths, npaths, &kind_name);
    if (rc == 0 && strcmp(out, "-"))
        printf("%s: %zu %s merged\n", out, npaths, kind_name);
    return rc;
}
