/* elfsection.c — finds and reads sections of an ELF file on disk (64-bit, this machine's byte
 * order), for checks made before anything runs: the span names of a program and its libraries
 * (SPANPROF_NAMES_SECTION), the libraries a program links (.dynamic), its debug info.
 *
 * The files are anyone's, so everything read is checked before use: the identification bytes,
 * the header sizes, every offset and size against the file's size (without overflow), every
 * string index against its table, and sizes are capped before anything is allocated.  A file
 * that fails a check is "not ELF" or "no such section": never a crash, never a read outside a
 * buffer.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/elfsection.h"
#include "common/namematch.h"

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_DATA ELFDATA2LSB
#else
#define HOST_DATA ELFDATA2MSB
#endif

/* A section name table or a names section larger than this is not one the plugin or a linker
 * made: refused rather than allocated. */
#define MAX_TABLE ((uint64_t)1 << 26)

static int read_at(int fd, void *buf, uint64_t size, uint64_t offset)
{
    char *p = buf;
    while (size > 0) {
        ssize_t n = pread(fd, p, size, (off_t)offset);
        if (n <= 0)
            return -1;
        p += n;
        size -= (uint64_t)n;
        offset += (uint64_t)n;
    }
    return 0;
}

/* Whether [OFFSET, OFFSET + SIZE) lies within a file of FILE_SIZE bytes. */
static int within(uint64_t offset, uint64_t size, uint64_t file_size)
{
    return offset <= file_size && size <= file_size - offset;
}

static int has_contents(const struct spanprof__elf *e, const Elf64_Shdr *s)
{
    return s->sh_type != SHT_NOBITS && !(s->sh_flags & SHF_COMPRESSED) &&
           within(s->sh_offset, s->sh_size, e->file_size);
}

int spanprof__elf_open(struct spanprof__elf *e, const char *path)
{
    *e = (struct spanprof__elf){.fd = open(path, O_RDONLY | O_CLOEXEC)};
    struct stat st;
    Elf64_Ehdr eh;
    if (e->fd < 0)
        return -1;
    if (fstat(e->fd, &st) != 0 || !S_ISREG(st.st_mode))
        goto fail;
    e->file_size = (uint64_t)st.st_size;
    if (e->file_size < sizeof eh || read_at(e->fd, &eh, sizeof eh, 0) ||
        memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_DATA] != HOST_DATA || eh.e_ident[EI_VERSION] != EV_CURRENT ||
        eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shstrndx >= eh.e_shnum ||
        !within(eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr), e->file_size))
        goto fail;
    e->nsections = eh.e_shnum;
    if (!(e->sections = malloc((size_t)eh.e_shnum * sizeof(Elf64_Shdr))) ||
        read_at(e->fd, e->sections, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr), eh.e_shoff))
        goto fail;
    const Elf64_Shdr *strtab = &e->sections[eh.e_shstrndx];
    if (strtab->sh_type != SHT_STRTAB || !has_contents(e, strtab) ||
        !(e->names = spanprof__elf_read(e, strtab, MAX_TABLE, &e->names_size)))
        goto fail;
    return 0;
fail:
    spanprof__elf_close(e);
    return -1;
}

void spanprof__elf_close(struct spanprof__elf *e)
{
    if (e->fd >= 0)
        close(e->fd);
    free(e->sections);
    free(e->names);
    *e = (struct spanprof__elf){.fd = -1};
}

const Elf64_Shdr *spanprof__elf_section_at(const struct spanprof__elf *e, uint64_t i)
{
    return i < e->nsections && has_contents(e, &e->sections[i]) ? &e->sections[i] : NULL;
}

const Elf64_Shdr *spanprof__elf_section(const struct spanprof__elf *e, const char *name)
{
    for (unsigned i = 0; i < e->nsections; i++) {
        const Elf64_Shdr *s = &e->sections[i];
        /* names is NUL-terminated past names_size, so any index below it is a string. */
        if (s->sh_name < e->names_size && strcmp(e->names + s->sh_name, name) == 0 &&
            has_contents(e, s))
            return s;
    }
    return NULL;
}

char *spanprof__elf_read(const struct spanprof__elf *e, const Elf64_Shdr *s, uint64_t max,
                         uint64_t *size)
{
    if (!has_contents(e, s) || s->sh_size > max)
        return NULL;
    char *data = malloc((size_t)s->sh_size + 1);
    if (!data || read_at(e->fd, data, s->sh_size, s->sh_offset)) {
        free(data);
        return NULL;
    }
    data[s->sh_size] = '\0';
    *size = s->sh_size;
    return data;
}

int spanprof__elf_names_match(const char *path, const char *globs)
{
    struct spanprof__elf e;
    if (spanprof__elf_open(&e, path))
        return -1;
    const Elf64_Shdr *s = spanprof__elf_section(&e, SPANPROF_NAMES_SECTION);
    uint64_t size = 0;
    char *names = s ? spanprof__elf_read(&e, s, MAX_TABLE, &size) : NULL;
    int found = names ? 0 : -1;
    /* NUL-terminated names back to back; the NUL added after the last ends an unterminated one. */
    for (uint64_t at = 0; names && at < size && !found; at += strlen(names + at) + 1)
        found = names[at] && spanprof__name_matches(globs, names + at);
    free(names);
    spanprof__elf_close(&e);
    return found;
}

int spanprof__elf_function_match(const char *path, const char *globs)
{
    struct spanprof__elf e;
    if (spanprof__elf_open(&e, path))
        return -1;
    const Elf64_Shdr *symtab = NULL;
    for (unsigned i = 0; i < e.nsections && !symtab; i++)
        if (e.sections[i].sh_type == SHT_SYMTAB)
            symtab = spanprof__elf_section_at(&e, i);
    for (unsigned i = 0; i < e.nsections && !symtab; i++)
        if (e.sections[i].sh_type == SHT_DYNSYM)
            symtab = spanprof__elf_section_at(&e, i);
    const Elf64_Shdr *strtab = symtab ? spanprof__elf_section_at(&e, symtab->sh_link) : NULL;
    uint64_t nsyms = 0, nstr = 0;
    Elf64_Sym *syms = strtab ? (Elf64_Sym *)spanprof__elf_read(&e, symtab, MAX_TABLE, &nsyms) : NULL;
    char *str = syms ? spanprof__elf_read(&e, strtab, MAX_TABLE, &nstr) : NULL;
    int found = str ? 0 : -1;
    char name[256];
    for (uint64_t i = 0; str && i < nsyms / sizeof *syms && !found; i++) {
        if (ELF64_ST_TYPE(syms[i].st_info) != STT_FUNC || syms[i].st_name >= nstr)
            continue;
        const char *full = str + syms[i].st_name;
        size_t len = strcspn(full, ".");
        if (len == 0 || len >= sizeof name)
            continue;
        memcpy(name, full, len);
        name[len] = 0;
        found = spanprof__name_matches(globs, name);
    }
    free(syms);
    free(str);
    spanprof__elf_close(&e);
    return found;
}
