/* test_elfsection.c — the ELF section reader (common/elfsection.c) on a small file made here:
 * the span names found and matched as the runtime matches them, then the same file truncated at
 * every length, with each header field made hostile, and with random bytes changed: never a
 * crash, never a match read from outside the file, and "can't tell" (-1) for what isn't ELF. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/elfsection.h"
#include "unit.h"

/* ELF header, the section name table, the names (the last one unterminated), then the section
 * headers: null, .shstrtab, .spanprof_names. */
static const char shstrtab[] = "\0.shstrtab\0.spanprof_names";
static const char names[] = "alpha\0beta\0gamma"; /* written without its final NUL */
enum { SHSTRTAB_AT = 64, NAMES_AT = SHSTRTAB_AT + sizeof shstrtab, SHDRS_AT = 112 };
enum { FILE_SIZE = SHDRS_AT + 3 * sizeof(Elf64_Shdr) };

static void make_elf(unsigned char *f)
{
    memset(f, 0, FILE_SIZE);
    Elf64_Ehdr eh = {.e_type = ET_EXEC, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
                     .e_shoff = SHDRS_AT, .e_ehsize = sizeof eh, .e_shentsize = sizeof(Elf64_Shdr),
                     .e_shnum = 3, .e_shstrndx = 1};
    memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    memcpy(f, &eh, sizeof eh);
    memcpy(f + SHSTRTAB_AT, shstrtab, sizeof shstrtab);
    memcpy(f + NAMES_AT, names, sizeof names - 1);
    Elf64_Shdr sh[3] = {
        {0},
        {.sh_name = 1, .sh_type = SHT_STRTAB, .sh_offset = SHSTRTAB_AT, .sh_size = sizeof shstrtab},
        {.sh_name = 11, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC, .sh_offset = NAMES_AT,
         .sh_size = sizeof names - 1},
    };
    memcpy(f + SHDRS_AT, sh, sizeof sh);
}

static char path[] = "/tmp/spanprof-elf-XXXXXX";

static void write_file(const unsigned char *f, size_t size)
{
    FILE *out = fopen(path, "wb");
    ck_assert_ptr_nonnull(out);
    ck_assert_uint_eq(fwrite(f, 1, size, out), size);
    fclose(out);
}

static int match(const unsigned char *f, size_t size, const char *globs)
{
    write_file(f, size);
    return spanprof__elf_names_match(path, globs);
}

static void setup(void)
{
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
}

static void teardown(void)
{
    unlink(path);
}

START_TEST(names_found_and_matched)
{
    unsigned char f[FILE_SIZE];
    make_elf(f);
    ck_assert_int_eq(match(f, sizeof f, "beta"), 1);
    ck_assert_int_eq(match(f, sizeof f, "x,al*"), 1);
    ck_assert_int_eq(match(f, sizeof f, "gamma"), 1); /* the unterminated last name */
    ck_assert_int_eq(match(f, sizeof f, "tiny"), 0);
    ck_assert_int_eq(match(f, sizeof f, "bet"), 0);
    /* Not ELF, no file, a directory: can't tell. */
    ck_assert_int_eq(spanprof__elf_names_match("/proc/self/status", "*"), -1);
    ck_assert_int_eq(spanprof__elf_names_match("/nonexistent/spanprof-test", "*"), -1);
    ck_assert_int_eq(spanprof__elf_names_match("/", "*"), -1);
}
END_TEST

START_TEST(truncated_at_every_length)
{
    unsigned char f[FILE_SIZE];
    make_elf(f);
    /* The section headers are last: any shorter file has none that can be trusted. */
    for (size_t size = 0; size < sizeof f; size++)
        ck_assert_msg(match(f, size, "*") == -1, "truncated to %zu bytes", size);
}
END_TEST

/* hostile FIELD-OFFSET VALUE-BYTES: the file with those bytes overwritten is refused (-1). */
static void refused(size_t at, const void *value, size_t size, const char *what)
{
    unsigned char f[FILE_SIZE];
    make_elf(f);
    memcpy(f + at, value, size);
    ck_assert_msg(match(f, sizeof f, "*") == -1, "%s", what);
}

START_TEST(hostile_headers)
{
    uint64_t huge = UINT64_MAX - 8, past = FILE_SIZE;
    uint16_t many = 0xffff, one = 1;
    uint32_t far = 0xffffff;
    unsigned char c32 = ELFCLASS32, msb = ELFDATA2MSB, bad = 'X';
    const size_t names_sh = SHDRS_AT + 2 * sizeof(Elf64_Shdr);
    refused(1, &bad, 1, "bad magic");
    refused(EI_CLASS, &c32, 1, "32-bit");
    refused(EI_DATA, &msb, 1, "big-endian");
    refused(offsetof(Elf64_Ehdr, e_shoff), &huge, 8, "section headers past the end (overflow)");
    refused(offsetof(Elf64_Ehdr, e_shoff), &past, 8, "section headers past the end");
    refused(offsetof(Elf64_Ehdr, e_shnum), &many, 2, "too many section headers");
    refused(offsetof(Elf64_Ehdr, e_shentsize), &one, 2, "wrong header size");
    refused(offsetof(Elf64_Ehdr, e_shstrndx), &many, 2, "name table out of range");
    refused(SHDRS_AT + sizeof(Elf64_Shdr) + offsetof(Elf64_Shdr, sh_offset), &huge, 8,
            "name table past the end (overflow)");
    refused(SHDRS_AT + sizeof(Elf64_Shdr) + offsetof(Elf64_Shdr, sh_size), &huge, 8,
            "name table too large");
    refused(names_sh + offsetof(Elf64_Shdr, sh_offset), &huge, 8, "names past the end (overflow)");
    refused(names_sh + offsetof(Elf64_Shdr, sh_size), &past, 8, "names past the end");
    refused(names_sh + offsetof(Elf64_Shdr, sh_name), &far, 4, "section name out of range");
}
END_TEST

START_TEST(random_damage)
{
    unsigned char f[FILE_SIZE];
    srand(32);
    for (int round = 0; round < 3000; round++) {
        make_elf(f);
        for (int k = 1 + rand() % 4; k > 0; k--)
            f[rand() % FILE_SIZE] = (unsigned char)rand();
        int found = match(f, sizeof f, "*");
        ck_assert_msg(found >= -1 && found <= 1, "round %d: %d", round, found);
    }
}
END_TEST

Suite *elfsection_suite(void)
{
    Suite *s = suite_create("elfsection");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, names_found_and_matched);
    tcase_add_test(tc, truncated_at_every_length);
    tcase_add_test(tc, hostile_headers);
    tcase_add_test(tc, random_damage);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
