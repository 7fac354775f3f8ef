/* spannames.c — whether `spanprof record --coz --progress GLOB` can work for a program, told
 * before the program runs: GLOB must name a span of the program or of a library it links, as
 * listed in the plugin's section of each file (common/elfsection.h).  A function the plugin's
 * size rule left out of a whole-program build has no span, so coz would see no progress point
 * and the run (minutes) would be for nothing.
 *
 * The libraries are the executable's DT_NEEDED entries, looked for as the dynamic loader does,
 * minus its cache: DT_RPATH (when there is no DT_RUNPATH), LD_LIBRARY_PATH, DT_RUNPATH, then the
 * default directories (with this build's multiarch ones first).  $ORIGIN is the executable's
 * directory.  Only the program's direct libraries are read.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/elfsection.h"
#include "format/format.h"

#ifndef SPANPROF_MULTIARCH
#define SPANPROF_MULTIARCH ""
#endif

/* A .dynamic or .dynstr section larger than this is not a linker's: not read. */
#define MAX_DYNAMIC ((uint64_t)1 << 24)

/* Looks for library NAME in the colon-separated directories of LIST ($ORIGIN: ORIGIN); OUT
 * gets the first regular file found.  Returns 0 when one was found. */
static int find_in(const char *list, const char *origin, const char *name, char *out, size_t size)
{
    while (list && *list) {
        size_t len = strcspn(list, ":");
        char dir[PATH_MAX];
        if (len < sizeof dir) {
            memcpy(dir, list, len);
            dir[len] = '\0';
            const char *rest = NULL;
            if (strncmp(dir, "$ORIGIN", 7) == 0)
                rest = dir + 7;
            else if (strncmp(dir, "${ORIGIN}", 9) == 0)
                rest = dir + 9;
            int n = rest ? snprintf(out, size, "%s%s/%s", origin, rest, name)
                         : snprintf(out, size, "%s/%s", len ? dir : ".", name);
            if (n > 0 && (size_t)n < size && access(out, R_OK) == 0)
                return 0;
        }
        list += len + (list[len] == ':');
    }
    return -1;
}

/* The names of the ELF file at PATH's DT_NEEDED, DT_RPATH and DT_RUNPATH entries: *STRINGS (to
 * free) holds them; NEEDED gets up to MAX offsets into it.  Returns how many needed, or -1. */
static int dynamic_entries(const char *path, char **strings, uint64_t *needed, int max,
                           const char **rpath, const char **runpath)
{
    struct spanprof__elf e;
    *strings = NULL;
    *rpath = *runpath = NULL;
    if (spanprof__elf_open(&e, path))
        return -1;
    const Elf64_Shdr *dyn = spanprof__elf_section(&e, ".dynamic");
    const Elf64_Shdr *str = dyn ? spanprof__elf_section_at(&e, dyn->sh_link) : NULL;
    uint64_t dyn_size = 0, str_size = 0;
    Elf64_Dyn *d = dyn && str && str->sh_type == SHT_STRTAB
                       ? (Elf64_Dyn *)(void *)spanprof__elf_read(&e, dyn, MAX_DYNAMIC, &dyn_size)
                       : NULL;
    char *s = d ? spanprof__elf_read(&e, str, MAX_DYNAMIC, &str_size) : NULL;
    spanprof__elf_close(&e);
    if (!s) {
        free(d);
        return -1;
    }
    int n = 0;
    for (uint64_t i = 0; i < dyn_size / sizeof *d && d[i].d_tag != DT_NULL; i++) {
        uint64_t at = d[i].d_un.d_val;
        if (at >= str_size) /* s is NUL-terminated past str_size: any index below is a string */
            continue;
        if (d[i].d_tag == DT_NEEDED && n < max)
            needed[n++] = at;
        else if (d[i].d_tag == DT_RPATH)
            *rpath = s + at;
        else if (d[i].d_tag == DT_RUNPATH)
            *runpath = s + at;
    }
    free(d);
    *strings = s;
    return n;
}

int spanprof_progress_unmatched(const char *exe, const char *globs)
{
    int found = spanprof__elf_names_match(exe, globs);
    if (found != 0) /* a span matches, or the file is no program built with the plugin */
        return 0;
    char *strings;
    uint64_t needed[256];
    const char *rpath, *runpath;
    int n = dynamic_entries(exe, &strings, needed, 256, &rpath, &runpath);
    char origin[PATH_MAX];
    snprintf(origin, sizeof origin, "%s", exe);
    char *slash = strrchr(origin, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(origin, sizeof origin, ".");
    const char *multiarch = SPANPROF_MULTIARCH;
    char *defaults = *multiarch ? xasprintf("/lib/%s:/usr/lib/%s:/lib:/usr/lib:/usr/local/lib",
                                            multiarch, multiarch)
                                : xstrdup("/lib:/usr/lib:/usr/local/lib");
    for (int i = 0; i < n && !found; i++) {
        const char *name = strings + needed[i];
        char lib[PATH_MAX];
        int located = strchr(name, '/') ? (snprintf(lib, sizeof lib, "%s", name), 0)
                      : (!runpath && !find_in(rpath, origin, name, lib, sizeof lib)) ||
                              !find_in(getenv("LD_LIBRARY_PATH"), origin, name, lib, sizeof lib) ||
                              !find_in(runpath, origin, name, lib, sizeof lib) ||
                              !find_in(defaults, origin, name, lib, sizeof lib)
                          ? 0
                          : -1;
        if (located == 0 && spanprof__elf_names_match(lib, globs) == 1)
            found = 1;
    }
    free(defaults);
    free(strings);
    return !found;
}
