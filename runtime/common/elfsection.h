/* elfsection.h — the sections of an ELF file on disk, read from its section headers: used by
 * the runtime at start-up under coz and by `spanprof record --coz` before it runs a program
 * (elfsection.c; depends on common/namematch.c only, never installed). */
#ifndef SPANPROF_ELFSECTION_H
#define SPANPROF_ELFSECTION_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

/* The section the plugin puts every span's and progress point's name in (plugin/site.cc). */
#define SPANPROF_NAMES_SECTION ".spanprof_names"

/* An open ELF file: its section headers and their names, checked against the file's size. */
struct spanprof__elf {
    int fd;
    uint64_t file_size;
    unsigned nsections;
    Elf64_Shdr *sections;
    char *names;       /* the section names' string table, NUL-terminated */
    uint64_t names_size;
};

/* Opens PATH; 0 when it is a 64-bit ELF file of this machine's byte order whose section headers
 * and section name table lie within it, else -1 (nothing to close). */
int spanprof__elf_open(struct spanprof__elf *e, const char *path);
void spanprof__elf_close(struct spanprof__elf *e);
/* The first section called NAME that has contents in the file (not SHT_NOBITS, not compressed,
 * within the file), or NULL. */
const Elf64_Shdr *spanprof__elf_section(const struct spanprof__elf *e, const char *name);
/* Section number I, under the same conditions, or NULL. */
const Elf64_Shdr *spanprof__elf_section_at(const struct spanprof__elf *e, uint64_t i);
/* The contents of S in a malloc'ed buffer with a NUL added (*SIZE: the section's size), or NULL
 * when S is larger than MAX bytes or can't be read. */
char *spanprof__elf_read(const struct spanprof__elf *e, const Elf64_Shdr *s, uint64_t max,
                         uint64_t *size);

/* Whether the spans of the ELF file at PATH (the names in SPANPROF_NAMES_SECTION) include one
 * that the glob list GLOBS names (common/namematch.h): 1 if one does, 0 if none does, -1 when
 * the file has no such section (not ELF, not built with the plugin) or can't be read. */
int spanprof__elf_names_match(const char *path, const char *globs);

/* Whether the symbol table of the ELF file at PATH (.symtab, else .dynsym) has a function that
 * the glob list GLOBS names, its name taken up to a GCC clone suffix (".constprop.0", ".isra.0",
 * ".part.0", ".cold"): 1 if one does, 0 if none does, -1 when there is no symbol table. */
int spanprof__elf_function_match(const char *path, const char *globs);

#pragma GCC visibility pop

#endif /* SPANPROF_ELFSECTION_H */
