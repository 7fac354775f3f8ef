/* duration.c — durations with a unit, and SPANPROF_SLOW's SPAN:DURATION lists (duration.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/duration.h"

int spanprof__duration_parse(const char *text, size_t len, uint64_t *ns)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return 0;
    memcpy(buf, text, len);
    buf[len] = 0;
    if (!(buf[0] >= '0' && buf[0] <= '9') && buf[0] != '.')
        return 0;
    char *end;
    double v = strtod(buf, &end);
    double scale;
    if (strcmp(end, "ns") == 0)
        scale = 1;
    else if (strcmp(end, "us") == 0)
        scale = 1e3;
    else if (strcmp(end, "ms") == 0)
        scale = 1e6;
    else if (strcmp(end, "s") == 0)
        scale = 1e9;
    else
        return 0;
    double r = v * scale;
    if (!isfinite(r) || r <= 0 || r > 86400e9)
        return 0;
    *ns = r < 1 ? 1 : (uint64_t)r;
    return 1;
}

static int each(const char *list, void (*fn)(const char *, size_t, uint64_t, void *), void *arg)
{
    const char *p = list;
    for (;;) {
        size_t len = strcspn(p, ",");
        const char *colon = NULL;
        for (const char *q = p; q < p + len; q++)
            if (*q == ':')
                colon = q;
        uint64_t ns;
        if (!colon || colon == p ||
            !spanprof__duration_parse(colon + 1, (size_t)(p + len - colon - 1), &ns))
            return -1;
        if (fn)
            fn(p, (size_t)(colon - p), ns, arg);
        if (!p[len])
            return 0;
        p += len + 1;
    }
}

int spanprof__slow_rules(const char *list, void (*fn)(const char *, size_t, uint64_t, void *),
                         void *arg)
{
    if (!list || !*list || each(list, NULL, NULL))
        return -1;
    return each(list, fn, arg);
}
