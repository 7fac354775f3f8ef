/* elfmachine.c — which machine an ELF file is for, from its header: for `spanprof record`'s
 * message when the kernel refuses to run a program (ENOEXEC), which is most often a program of
 * another machine (an arm64 build on x86-64 without a binfmt handler for qemu). */
#include "lib/lib.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/* The ELF machine (e_machine) this tool was built for; 0 where the table below lacks it. */
#if defined(__x86_64__)
#define OWN_MACHINE 62
#elif defined(__aarch64__)
#define OWN_MACHINE 183
#elif defined(__i386__)
#define OWN_MACHINE 3
#elif defined(__arm__)
#define OWN_MACHINE 40
#elif defined(__riscv)
#define OWN_MACHINE 243
#elif defined(__powerpc64__)
#define OWN_MACHINE 21
#elif defined(__s390x__)
#define OWN_MACHINE 22
#else
#define OWN_MACHINE 0
#endif

int elf_machine(const char *path, struct elf_machine *m)
{
    unsigned char h[20]; /* e_ident (16 bytes), e_type (2), e_machine (2): alike in both classes */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t got = read(fd, h, sizeof h);
    close(fd);
    if (got != (ssize_t)sizeof h || memcmp(h, "\177ELF", 4) || (h[4] != 1 && h[4] != 2) ||
        (h[5] != 1 && h[5] != 2))
        return -1;
    int bits = h[4] == 2 ? 64 : 32, big = h[5] == 2;
    unsigned machine = big ? (unsigned)h[18] << 8 | h[19] : (unsigned)h[19] << 8 | h[18];
    /* Debian's qemu-user names each emulator after the machine (qemu-aarch64, qemu-x86_64). */
    static const struct {
        unsigned machine;
        int bits, big; /* big: 1 big-endian, 0 little-endian, -1 either */
        const char *name, *qemu;
    } known[] = {
        {62, 64, -1, "x86-64", "qemu-x86_64"},    {183, 64, -1, "aarch64", "qemu-aarch64"},
        {3, 32, -1, "i386", "qemu-i386"},         {40, 32, -1, "arm", "qemu-arm"},
        {243, 64, -1, "riscv64", "qemu-riscv64"}, {21, 64, 0, "ppc64le", "qemu-ppc64le"},
        {21, 64, 1, "ppc64", "qemu-ppc64"},       {22, 64, 1, "s390x", "qemu-s390x"},
    };
    snprintf(m->name, sizeof m->name, "%d-bit machine %u", bits, machine);
    m->qemu[0] = 0;
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (known[i].machine == machine && known[i].bits == bits && (known[i].big < 0 || known[i].big == big)) {
            snprintf(m->name, sizeof m->name, "%s", known[i].name);
            snprintf(m->qemu, sizeof m->qemu, "%s", known[i].qemu);
            break;
        }
    m->own = machine == OWN_MACHINE;
    return 0;
}
