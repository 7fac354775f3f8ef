/* debuginfo.c — at start-up under coz, tells whether coz can read the executable's debug info.
 *
 * Debian's coz 0.2.2 aborts on DWARF 5 ("unknown compilation unit version 5") and runs no
 * experiments at all for DWARF 4 carrying GCC's location views (DW_AT_GNU_locviews): a long run
 * for nothing.  Both are cheap to recognise from the ELF file: the version in each compilation
 * unit header of .debug_info (a hop from header to header), and the attribute codes in
 * .debug_abbrev (one pass over a section that is small next to .debug_info).  Only the
 * executable is read, once, and only when coz is there.  Anything unexpected (no section
 * headers, no debug info, compressed sections, a truncated file) means "can't tell": no warning.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/debuginfo.h"
#include "common/elfsection.h"

#define DW_AT_GNU_LOCVIEWS 0x2137
#define DW_FORM_IMPLICIT_CONST 0x21 /* carries a value in the abbreviation itself */

struct section {
    uint64_t offset, size;
};

static int read_at(int fd, void *buf, size_t size, uint64_t offset)
{
    return pread(fd, buf, size, (off_t)offset) == (ssize_t)size ? 0 : -1;
}

/* Finds the uncompressed sections .debug_info and .debug_abbrev of E.  Returns 0 when both were
 * found. */
static int find_sections(const struct spanprof__elf *e, struct section *info, struct section *abbrev)
{
    const Elf64_Shdr *i = spanprof__elf_section(e, ".debug_info");
    const Elf64_Shdr *a = spanprof__elf_section(e, ".debug_abbrev");
    if (!i || !a)
        return -1;
    *info = (struct section){i->sh_offset, i->sh_size};
    *abbrev = (struct section){a->sh_offset, a->sh_size};
    return 0;
}

/* Highest compilation-unit version in .debug_info, or 0 if it can't be read. */
static unsigned max_unit_version(int fd, const struct section *info)
{
    unsigned max = 0;
    uint64_t at = 0;
    while (at + 12 <= info->size) {
        unsigned char h[14];
        if (read_at(fd, h, sizeof h < info->size - at ? sizeof h : (size_t)(info->size - at),
                    info->offset + at))
            return 0;
        uint32_t len32;
        memcpy(&len32, h, 4);
        uint64_t length, header;
        uint16_t version;
        if (len32 == 0xffffffffu) { /* 64-bit DWARF */
            memcpy(&length, h + 4, 8);
            memcpy(&version, h + 12, 2);
            header = 12;
        } else {
            length = len32;
            memcpy(&version, h + 4, 2);
            header = 4;
        }
        if (length < 2 || length > info->size - at - header)
            return max;
        if (version > max)
            max = version;
        at += header + length;
    }
    return max;
}

/* Reads an unsigned LEB128 at *p (below end); returns 0 and advances, or -1 if truncated. */
static int uleb(const unsigned char **p, const unsigned char *end, uint64_t *value)
{
    uint64_t v = 0;
    for (unsigned shift = 0; *p < end; shift += 7) {
        unsigned char byte = *(*p)++;
        if (shift < 64)
            v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *value = v;
            return 0;
        }
    }
    return -1;
}

/* Whether any abbreviation in .debug_abbrev uses DW_AT_GNU_locviews. */
static int abbrev_has_locviews(int fd, const struct section *abbrev)
{
    if (abbrev->size == 0 || abbrev->size > ((uint64_t)1 << 28))
        return 0;
    unsigned char *data = malloc(abbrev->size);
    if (!data || read_at(fd, data, abbrev->size, abbrev->offset)) {
        free(data);
        return 0;
    }
    const unsigned char *p = data, *end = data + abbrev->size;
    int found = 0;
    uint64_t code, tag, attr, form, skip;
    /* Tables one after another, each a list of abbreviations ended by code 0:
     *   code, tag, children flag (1 byte), (attribute, form [, implicit value])... 0, 0 */
    while (!found && p < end && !uleb(&p, end, &code)) {
        if (code == 0)
            continue;
        if (uleb(&p, end, &tag) || p >= end)
            break;
        p++; /* DW_CHILDREN_yes / no */
        for (;;) {
            if (uleb(&p, end, &attr) || uleb(&p, end, &form))
                goto out;
            if (attr == 0 && form == 0)
                break;
            if (attr == DW_AT_GNU_LOCVIEWS)
                found = 1;
            if (form == DW_FORM_IMPLICIT_CONST && uleb(&p, end, &skip)) /* signed: same length */
                goto out;
        }
    }
out:
    free(data);
    return found;
}

/* What keeps coz from using PATH's debug info: "DWARF 5", "DWARF 4 with location views", or
 * NULL when it looks usable or can't be told. */
const char *spanprof__debug_info_problem(const char *path)
{
    struct spanprof__elf e;
    if (spanprof__elf_open(&e, path))
        return NULL;
    int fd = e.fd;
    const char *problem = NULL;
    struct section info = {0, 0}, abbrev = {0, 0};
    if (find_sections(&e, &info, &abbrev) == 0) {
        unsigned version = max_unit_version(fd, &info);
        if (version >= 5)
            problem = "DWARF 5";
        else if (version == 4 && abbrev_has_locviews(fd, &abbrev))
            problem = "DWARF 4 with location views";
    }
    spanprof__elf_close(&e);
    return problem;
}

/* One line on ERR when the running executable's debug info is of a kind coz can't use. */
void spanprof__warn_debug_info_for_coz(FILE *err)
{
    const char *problem = spanprof__debug_info_problem("/proc/self/exe");
    if (problem)
        fprintf(err,
                "spanprof: warning: coz cannot use this program's debug info (%s); rebuild it "
                "with " SPANPROF_COZ_DEBUG_FLAGS "\n",
                problem);
}
