/* namematch.c — whether a span's name is one a list of globs names.  Shared by the runtime
 * (record/site.c, at a site's registration) and by `spanprof record --coz --progress`, which
 * checks the program's span names before it runs it: both must agree on what matches. */
#include <fnmatch.h>
#include <limits.h>
#include <string.h>

#include "common/namematch.h"

int spanprof__name_matches(const char *list, const char *name)
{
    while (list && *list) {
        size_t n = strcspn(list, ",");
        char pattern[PATH_MAX]; /* a list is at most PATH_MAX long (lifecycle/options.c) */
        if (n < sizeof pattern) {
            memcpy(pattern, list, n);
            pattern[n] = 0;
            if (fnmatch(pattern, name, 0) == 0)
                return 1;
        }
        list += n + (list[n] == ',');
    }
    return 0;
}
