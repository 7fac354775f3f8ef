/* sitepatch.c — the patch points of spans that are OFF turned into no-ops, and given their jumps
 * back when such a span is switched on again (spanprof.h, section 6; the plugin's patch.cc places
 * them).  As compiled, each point jumps to the guard that tests the site's state; while the state
 * is OFF the guard only ever skips the call, and a no-op in place of the jump does the same for
 * nothing: one instruction instead of a load, a compare and a branch.
 *
 * Finding the points.  Every object built with the plugin lists its points in notes (owner "sp",
 * type SPANPROF_PATCH_NOTE_TYPE) in its PT_NOTE segments: two offsets, to the point and to its
 * site.  dl_iterate_phdr gives each loaded object's program headers; a point is used only if it
 * lies in an executable segment of its object and its site in a writable one, and its bytes are
 * what this direction expects: the jump the plugin writes, or the no-op of a point this runtime
 * patched (whose jump it kept).
 *
 * Writing text other threads may run.  The pages go writable (and stay executable: other
 * threads run them meanwhile) for one batch, then back to their segment's protection: in each
 * segment, every page from the batch's first point to its last, in one call.
 *  - x86-64: the 5 bytes cannot be written at once as far as instruction fetch is concerned, so
 *    as Linux patches its own text: an int3 over the first byte, the other four, then the new
 *    first byte, each step followed by membarrier's core serialisation on every CPU running the
 *    process's threads.  A thread that meets the int3 gets SIGTRAP: the handler (on_trap)
 *    resumes it after the point; a SIGTRAP that is not at a point is passed on to the handler
 *    before ours.
 *  - aarch64: the branch and the nop are instructions the architecture lets one store replace
 *    while other cores run them; the store, the cache maintenance, then membarrier.
 * Where the system refuses (no membarrier core serialisation; mprotect denied by SELinux's
 * execmod, PaX, a seccomp filter), one warning line, and no point is patched from then on: the
 * jumps stay, and run the guards as before.
 *
 * Who patches.  Only threads that may take locks and call the C library freely: start-up, when
 * recording is off or SPANPROF_SPANS leaves spans out (each such site of every object loaded by
 * then goes OFF here, as its first call would make it), and again the loader's thread as each
 * object with points is loaded later (its initialiser: lifecycle/start.c), the writer thread
 * for the spans a cost budget switches off, and the live thread for spans switched off and on
 * by request (collect/spanswitch.c).
 *
 * Objects unloaded.  The jumps kept for patched points are forgotten once their object is gone:
 * after a dlclose (the loader's count of unloads moved), a batch first marks every kept point
 * that no loaded object's executable segment holds any more, or that is not our no-op there (a
 * new object at the same address, not patched yet), as no longer live, so a point of a later
 * object is never given another object's jump.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <linux/membarrier.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "record/record.h"
#include "record/sitepatch.h"
#include "spanprof.h"

#if defined(__x86_64__)
#define POINT_SIZE 5
static const uint8_t point_nop[POINT_SIZE] = {0x0f, 0x1f, 0x44, 0x00, 0x00};
#elif defined(__aarch64__)
#define POINT_SIZE 4
#define A64_NOP 0xd503201fu
#endif

#ifdef POINT_SIZE

struct point {
    uint8_t *at;
    struct spanprof_site *site;
    uintptr_t segment; /* the start of the executable segment that holds it */
    int prot;          /* that segment's protection, as the loader mapped it */
    uint8_t jump[POINT_SIZE]; /* the plugin's jump: what a patched point gets back (a batch's) */
};

/* Points as the notes list them, or as a batch gathers them. */
struct points {
    struct point *p;
    size_t n, cap;
};

static int refused; /* patching failed once: never again */
static unsigned long long unloads_seen; /* the loader's count of unloads at the last batch */
static int serialise_cmd; /* the membarrier command that serialises cores, 0: not known yet */

/* ---- the points of the loaded objects ------------------------------------------------------ */

static int points_add(struct points *ps, const struct point *pt)
{
    if (ps->n == ps->cap) {
        size_t cap = ps->cap ? 2 * ps->cap : 1024;
        struct point *p = realloc(ps->p, cap * sizeof *p);
        if (!p)
            return -1;
        ps->p = p;
        ps->cap = cap;
    }
    ps->p[ps->n++] = *pt;
    return 0;
}

/* Whether program header PH of INFO is a PT_LOAD with all of FLAGS holding [ADDR, ADDR + LEN). */
static int segment_holds(const struct dl_phdr_info *info, const ElfW(Phdr) *ph, uintptr_t addr,
                         size_t len, uint32_t flags)
{
    uintptr_t start = info->dlpi_addr + ph->p_vaddr;
    return ph->p_type == PT_LOAD && (ph->p_flags & flags) == flags && addr >= start &&
           addr - start <= ph->p_memsz && len <= ph->p_memsz - (addr - start);
}

/* The protection of the PT_LOAD of INFO that holds [ADDR, ADDR + LEN) with all of FLAGS, as
 * the loader mapped it; 0 if there is none.  *HINT (if HINT is not NULL): the index of the
 * header to try first, then of the one found (an object's points mostly share one segment, and
 * their sites another). */
static int segment_of(const struct dl_phdr_info *info, uintptr_t addr, size_t len, uint32_t flags,
                      int *hint)
{
    int i = hint && *hint < info->dlpi_phnum ? *hint : 0;
    if (!segment_holds(info, &info->dlpi_phdr[i], addr, len, flags))
        for (i = 0; i < info->dlpi_phnum; i++)
            if (segment_holds(info, &info->dlpi_phdr[i], addr, len, flags))
                break;
    if (i == info->dlpi_phnum)
        return 0;
    if (hint)
        *hint = i;
    uint32_t seg = info->dlpi_phdr[i].p_flags;
    return PROT_READ | (seg & PF_W ? PROT_WRITE : 0) | (seg & PF_X ? PROT_EXEC : 0);
}

/* Whether the bytes at AT are the jump the plugin compiles. */
static int is_jump(const uint8_t *at)
{
#if defined(__x86_64__)
    return at[0] == 0xe9;
#else
    uint32_t insn;
    memcpy(&insn, at, 4);
    return (insn & 0xfc000000u) == 0x14000000u; /* b imm26 */
#endif
}

/* Whether the bytes at AT are the no-op a point is patched to. */
static int is_nop(const uint8_t *at)
{
#if defined(__x86_64__)
    return memcmp(at, point_nop, POINT_SIZE) == 0;
#else
    uint32_t insn;
    memcpy(&insn, at, 4);
    return insn == A64_NOP;
#endif
}

/* ---- every point written, with its jump ----------------------------------------------------- */

/* Chunks that are never freed nor moved, each published whole (release) before its points are
 * written: the SIGTRAP handler searches them (x86-64), and a point switched on again gets its
 * jump back from them.  An entry whose object went is not removed but marked (LIVE 0), and
 * taken again, with the new jump, when a point at that address is patched: a library loaded and
 * unloaded over and over at one address reuses its entries. */
struct patched_chunk {
    struct patched_chunk *next;
    size_t n;
    struct patched_point {
        uint8_t *at;
        uint8_t jump[POINT_SIZE];
        uint8_t live; /* its jump is that of the point at AT now (acquire) */
    } p[]; /* sorted by at */
};
static struct patched_chunk *patched;

/* The entry kept for the point at AT, live or not; NULL if there is none. */
static struct patched_point *entry_of(const uint8_t *at)
{
    for (struct patched_chunk *c = __atomic_load_n(&patched, __ATOMIC_ACQUIRE); c; c = c->next) {
        size_t lo = 0, hi = c->n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (c->p[mid].at == at)
                return &c->p[mid];
            if (c->p[mid].at < at)
                lo = mid + 1;
            else
                hi = mid;
        }
    }
    return NULL;
}

/* The jump of the point at AT as the plugin compiled it, or NULL if it was never patched. */
static const uint8_t *jump_of(const uint8_t *at)
{
    const struct patched_point *e = entry_of(at);
    return e && __atomic_load_n(&e->live, __ATOMIC_ACQUIRE) ? e->jump : NULL;
}

/* The loader's counts of objects loaded and unloaded since the process began (glibc's
 * dl_phdr_info; both stay 0 where the C library does not keep them). */
struct load_counts {
    unsigned long long adds, subs;
};

static int read_counts(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct load_counts *c = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
        *c = (struct load_counts){info->dlpi_adds, info->dlpi_subs};
    return 1; /* the first object tells */
}

static struct load_counts load_counts(void)
{
    struct load_counts c = {0, 0};
    dl_iterate_phdr(read_counts, &c);
    return c;
}

unsigned long long spanprof__sitepatch_loads(void)
{
    return load_counts().adds;
}

/* Whether AT..AT+POINT_SIZE lies in an executable segment of a loaded object. */
static int in_loaded_text(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    return segment_of(info, (uintptr_t)arg, POINT_SIZE, PF_X, NULL) != 0;
}

/* After unloads: a kept point whose object is gone, or whose bytes are not our no-op any more
 * (another object mapped there since, or its jump given back), is marked no longer live.
 * Under the patching lock, so no point is being written: the SIGTRAP handler has nothing to
 * look up meanwhile. */
static void forget_unloaded(void)
{
    struct load_counts c = load_counts();
    if (c.subs == unloads_seen)
        return;
    unloads_seen = c.subs;
    for (struct patched_chunk *ch = patched; ch; ch = ch->next)
        for (size_t i = 0; i < ch->n; i++) {
            struct patched_point *e = &ch->p[i];
            if (e->live && !(dl_iterate_phdr(in_loaded_text, e->at) && is_nop(e->at)))
                __atomic_store_n(&e->live, 0, __ATOMIC_RELEASE);
        }
}

/* A walk of the notes: EACH is called with every point and CTX, and stops the walk by
 * returning nonzero. */
struct note_walk {
    int (*each)(const struct point *pt, void *ctx);
    void *ctx;
    int stopped;
};

/* Every patch point the notes of INFO's object list, whose point lies in an executable segment
 * of the object and whose site in a writable one. */
static int walk_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct note_walk *w = arg;
    int text_hint = 0, data_hint = 0;
    for (int i = 0; i < info->dlpi_phnum && !w->stopped; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const uint8_t *note = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        const uint8_t *end = note + ph->p_memsz;
        size_t pad = ph->p_align == 8 ? 7 : 3; /* a segment of 8-aligned notes pads to 8 */
        while (end - note >= 12 && !w->stopped) {
            uint32_t namesz, descsz, type;
            memcpy(&namesz, note, 4);
            memcpy(&descsz, note + 4, 4);
            memcpy(&type, note + 8, 4);
            const uint8_t *name = note + 12, *desc = name + ((namesz + pad) & ~pad);
            size_t left = (size_t)(end - name), size = ((namesz + pad) & ~pad) + descsz;
            if (namesz > left || size > left)
                break; /* not notes as the linker writes them */
            note = desc + ((descsz + pad) & ~pad);
            if (type != SPANPROF_PATCH_NOTE_TYPE || namesz != 3 || memcmp(name, "sp", 3) ||
                descsz != 8)
                continue;
            int32_t to_point, to_site;
            memcpy(&to_point, desc, 4);
            memcpy(&to_site, desc + 4, 4);
            struct point pt = {
                .at = (uint8_t *)(uintptr_t)desc + to_point,
                .site = (struct spanprof_site *)((uintptr_t)desc + 4 + to_site),
            };
            pt.prot = segment_of(info, (uintptr_t)pt.at, POINT_SIZE, PF_X, &text_hint);
            if (!pt.prot ||
                !segment_of(info, (uintptr_t)pt.site, sizeof *pt.site, PF_W, &data_hint))
                continue;
            pt.segment = info->dlpi_addr + info->dlpi_phdr[text_hint].p_vaddr;
            w->stopped = w->each(&pt, w->ctx);
        }
    }
    return w->stopped;
}

/* Every point of the loaded objects, as their notes list them, read again only when the
 * loader's counts moved (an object loaded or unloaded since), or on every batch where the C
 * library does not keep them.  A batch filters this list: walking the notes for each batch,
 * and finding each point's segments, took a fifth of the writer thread's time under a cost
 * budget on SQLite's speedtest1 with every function a span (14,600 points, a batch every
 * 13 ms).  Under the
 * patching lock. */
static struct points listed;
static struct load_counts listed_counts;
static int listed_current;

static int list_point(const struct point *pt, void *ctx)
{
    return points_add(ctx, pt) != 0;
}

/* The list, current: 0, or -1 when there is no memory for it. */
static int list_points(void)
{
    struct load_counts c = load_counts(); /* read first: an object loaded meanwhile moves them */
    if (listed_current && c.adds && c.adds == listed_counts.adds && c.subs == listed_counts.subs)
        return 0;
    listed_current = 0; /* until whole (a fork child of a thread that was building it) */
    listed.n = 0;
    struct note_walk w = {list_point, &listed, 0};
    dl_iterate_phdr(walk_object, &w);
    listed_current = !w.stopped;
    listed_counts = c;
    return w.stopped ? -1 : 0;
}

/* Into PS, the listed points whose site WANT accepts and whose bytes are the plugin's jump
 * (to be patched), or our no-op with a jump kept (RESTORE: to get it back).  0, or -1 when
 * there is no memory. */
static int gather(struct points *ps, int (*want)(struct spanprof_site *site, void *ctx),
                  void *ctx, int restore)
{
    if (list_points())
        return -1;
    for (size_t i = 0; i < listed.n; i++) {
        struct point pt = listed.p[i];
        const uint8_t *jump = restore ? (is_nop(pt.at) ? jump_of(pt.at) : NULL)
                                      : (is_jump(pt.at) ? pt.at : NULL);
        if (!jump || !want(pt.site, ctx))
            continue;
        memcpy(pt.jump, jump, POINT_SIZE);
        if (points_add(ps, &pt))
            return -1;
    }
    return 0;
}

/* ---- writing them -------------------------------------------------------------------------- */

static void warn_refused(const char *what, int err)
{
    refused = 1;
    fprintf(stderr,
            "spanprof: warning: spans that are off cannot be patched out (%s: %s); they keep "
            "their test of the state\n",
            what, strerror(err));
}

/* Every CPU that runs a thread of the process serialises its instruction stream. */
static int serialise_cores(void)
{
    return (int)syscall(SYS_membarrier, serialise_cmd, 0, 0);
}

/* The membarrier command that serialises cores, registered; 0 with a warning if none. */
static int find_serialise_cmd(void)
{
    if (serialise_cmd)
        return serialise_cmd;
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (cmds >= 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE) &&
        syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) == 0)
        return serialise_cmd = MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE;
#if defined(__x86_64__)
    /* An IPI's return (iret) serialises an x86 core: the plain expedited barrier is enough. */
    if (cmds >= 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
        syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
        return serialise_cmd = MEMBARRIER_CMD_PRIVATE_EXPEDITED;
#endif
    warn_refused("membarrier", cmds < 0 ? errno : ENOSYS);
    return 0;
}

/* mprotect on the pages of every point in PS, sorted: writable (and executable), or back to
 * their segment's protection (RESTORE).  One call per segment, from its first point's page to
 * its last's: each call is a TLB shootdown on every CPU the process ran on (24 us on a 2-CPU
 * virtual machine), and a batch's points spread over tens of pages.  Returns 0, or the errno
 * of the first call refused (the pages before it are restored). */
static int set_pages(const struct points *ps, int restore)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), last = 0;
    for (size_t i = 0, next; i < ps->n; i = next) {
        next = i + 1;
        while (next < ps->n && ps->p[next].segment == ps->p[i].segment)
            next++;
        uintptr_t first = (uintptr_t)ps->p[i].at & ~(page - 1);
        uintptr_t end = ((uintptr_t)ps->p[next - 1].at + POINT_SIZE + page - 1) & ~(page - 1);
        if (first < last)
            first = last; /* a page the segment before ends in: done with it */
        if (first >= end)
            continue;
        if (mprotect((void *)first, end - first,
                     restore ? ps->p[i].prot : PROT_READ | PROT_WRITE | PROT_EXEC)) {
            int err = errno;
            if (!restore && i) {
                struct points before = {ps->p, i, 0};
                set_pages(&before, 1);
            }
            return err;
        }
        last = end;
    }
    return 0;
}

static int by_address(const void *a, const void *b)
{
    const struct point *x = a, *y = b;
    return (x->at > y->at) - (x->at < y->at);
}

/* Whether PS is in address order already: the linker lays an object's notes out in the order of
 * their functions, and the loader lists the program first, so it mostly is, and sorting tens of
 * thousands of points would cost more than the rest of the batch. */
static int sorted_by_address(const struct points *ps)
{
    for (size_t i = 1; i < ps->n; i++)
        if (ps->p[i - 1].at > ps->p[i].at)
            return 0;
    return 1;
}

/* The points of PS, with their jumps, published before any of them is written (the first
 * time each is patched; a point switched on again is in a chunk already, a point at the address
 * of one whose object went takes its entry). */
static int record_jumps(const struct points *ps)
{
    size_t n = 0;
    for (size_t i = 0; i < ps->n; i++)
        n += !entry_of(ps->p[i].at);
    struct patched_chunk *c = NULL;
    if (n && !(c = malloc(sizeof *c + n * sizeof c->p[0])))
        return -1;
    if (c)
        c->n = 0;
    for (size_t i = 0; i < ps->n; i++) { /* PS is sorted: so is the chunk */
        struct patched_point *e = entry_of(ps->p[i].at);
        if (!e)
            e = &c->p[c->n++];
        else if (e->live)
            continue;
        e->at = ps->p[i].at;
        memcpy(e->jump, ps->p[i].jump, POINT_SIZE);
        __atomic_store_n(&e->live, 1, __ATOMIC_RELEASE);
    }
    if (c) {
        c->next = patched;
        __atomic_store_n(&patched, c, __ATOMIC_RELEASE);
    }
    return 0;
}

#if defined(__x86_64__)
static struct sigaction trap_before;

/* An int3 at a point being written: the thread goes on past the point, as its no-op would take
 * it.  That is right both ways: a point is patched only once its site is OFF (the guard would
 * skip the call), and gets its jump back only while its site is MUTED (a call entering or
 * leaving then records nothing: record/siteswitch.c).  Any other SIGTRAP goes to the handler
 * before ours, or gets its default action. */
static void on_trap(int sig, siginfo_t *info, void *context)
{
    ucontext_t *uc = context;
    uint8_t *at = (uint8_t *)uc->uc_mcontext.gregs[REG_RIP] - 1;
    if (info->si_code == SI_KERNEL && jump_of(at)) {
        uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)(at + POINT_SIZE);
        return;
    }
    if (trap_before.sa_flags & SA_SIGINFO) {
        trap_before.sa_sigaction(sig, info, context);
    } else if (trap_before.sa_handler != SIG_DFL && trap_before.sa_handler != SIG_IGN) {
        trap_before.sa_handler(sig);
    } else {
        /* As without our handler: the signal's default action (an int3 is never ignored). */
        signal(sig, SIG_DFL);
        raise(sig);
    }
}

static int trap_installed;

/* Before each batch: ours, the program's own kept to pass other SIGTRAPs on to (a program may
 * have set one since the batch before). */
static int trap_ready(void)
{
    struct sigaction now;
    if (sigaction(SIGTRAP, NULL, &now))
        return errno;
    if (trap_installed && (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_trap)
        return 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_trap;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGTRAP, &sa, &trap_before))
        return errno;
    trap_installed = 1;
    return 0;
}

/* The runtime's code is being unloaded: SIGTRAP goes back to what the program had (no batch
 * runs then: the writer thread, the only one that patches after start-up, stopped first). */
static void trap_restore(void)
{
    if (trap_installed && sigaction(SIGTRAP, &trap_before, NULL) == 0)
        trap_installed = 0;
}
SPANPROF_STOP_STAGE(trap_restore);

static void write_bytes(uint8_t *at, const uint8_t *bytes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        __atomic_store_n(at + i, bytes[i], __ATOMIC_RELAXED);
}

/* Every point of PS becomes its no-op, or its jump again (RESTORE). */
static void write_points(const struct points *ps, int restore)
{
    static const uint8_t int3 = 0xcc;
    for (size_t i = 0; i < ps->n; i++)
        write_bytes(ps->p[i].at, &int3, 1);
    serialise_cores();
    for (size_t i = 0; i < ps->n; i++)
        write_bytes(ps->p[i].at + 1, (restore ? ps->p[i].jump : point_nop) + 1, POINT_SIZE - 1);
    serialise_cores();
    for (size_t i = 0; i < ps->n; i++)
        write_bytes(ps->p[i].at, restore ? ps->p[i].jump : point_nop, 1);
    serialise_cores();
}
#else
static int trap_ready(void)
{
    return 0;
}

static void write_points(const struct points *ps, int restore)
{
    for (size_t i = 0; i < ps->n; i++) {
        uint32_t insn = A64_NOP;
        if (restore)
            memcpy(&insn, ps->p[i].jump, 4);
        __atomic_store_n((uint32_t *)(void *)ps->p[i].at, insn, __ATOMIC_RELAXED);
        __builtin___clear_cache((char *)ps->p[i].at, (char *)ps->p[i].at + POINT_SIZE);
    }
    serialise_cores();
}
#endif

/* Under the patching lock: the points of the sites WANT accepts, patched, or given their jumps
 * back (RESTORE).  Returns how many, or -1 when some were found and none could be written
 * (refused, now or before; no memory). */
static long patch_batch(int (*want)(struct spanprof_site *site, void *ctx), void *ctx,
                        int restore)
{
    forget_unloaded();
    struct points ps = {0};
    long done = gather(&ps, want, ctx, restore);
    if (ps.n && !done) {
        if (!sorted_by_address(&ps))
            qsort(ps.p, ps.n, sizeof *ps.p, by_address);
        int err;
        done = -1;
        if (refused)
            ; /* refused before: nothing is written any more */
        else if ((err = trap_ready()))
            warn_refused("sigaction", err);
        else if (record_jumps(&ps))
            ; /* no memory: nothing written */
        else if ((err = set_pages(&ps, 0)))
            warn_refused("mprotect", err);
        else {
            write_points(&ps, restore);
            set_pages(&ps, 1);
            done = (long)ps.n;
            if (restore)
                __atomic_fetch_sub(&spanprof__g.points_patched, ps.n, __ATOMIC_RELAXED);
            else
                __atomic_fetch_add(&spanprof__g.points_patched, ps.n, __ATOMIC_RELAXED);
        }
    }
    free(ps.p);
    return done;
}

static pthread_mutex_t patching = PTHREAD_MUTEX_INITIALIZER; /* one batch at a time */

/* A fork child's lock is free: the thread that may have held it is not copied. */
static void fork_child(void)
{
    pthread_mutex_init(&patching, NULL);
}

static void register_fork_child(void)
{
    pthread_atfork(NULL, NULL, fork_child);
}

size_t spanprof__sitepatch_off(int (*want)(struct spanprof_site *site, void *ctx), void *ctx)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_fork_child);
    pthread_mutex_lock(&patching);
    long done = refused || !find_serialise_cmd() ? 0 : patch_batch(want, ctx, 0);
    pthread_mutex_unlock(&patching);
    return done > 0 ? (size_t)done : 0;
}

long spanprof__sitepatch_on(int (*want)(struct spanprof_site *site, void *ctx), void *ctx)
{
    pthread_mutex_lock(&patching);
    /* Only the points this runtime patched are gathered: none while nothing was (patching
     * refused from the start: the jumps are all there, the state alone switches). */
    long done = patched ? patch_batch(want, ctx, 1) : 0;
    pthread_mutex_unlock(&patching);
    return done;
}

struct visit {
    int (*visit)(struct spanprof_site *site, void *ctx);
    void *ctx;
};

static int visit_point(const struct point *pt, void *ctx)
{
    struct visit *v = ctx;
    v->visit(pt->site, v->ctx);
    return 0;
}

void spanprof__sitepatch_visit(int (*visit)(struct spanprof_site *site, void *ctx), void *ctx)
{
    struct visit v = {visit, ctx};
    struct note_walk w = {visit_point, &v, 0};
    dl_iterate_phdr(walk_object, &w);
}

/* Recording off: a site not seen yet is OFF now, as its first call would make it. */
static int off_from_now(struct spanprof_site *site, void *ctx)
{
    (void)ctx;
    uint32_t seen = SPANPROF__SITE_NEW;
    __atomic_compare_exchange_n(&site->state, &seen, SPANPROF__SITE_OFF, 0, __ATOMIC_RELEASE,
                                __ATOMIC_RELAXED);
    return __atomic_load_n(&site->state, __ATOMIC_ACQUIRE) == SPANPROF__SITE_OFF;
}

size_t spanprof__sitepatch_recording_off(void)
{
    return spanprof__sitepatch_off(off_from_now, NULL);
}

/* SPANPROF_SPANS: a span not chosen that has not been seen yet is OFF now, as its first call
 * would make it. */
static int off_unless_chosen(struct spanprof_site *site, void *ctx)
{
    (void)ctx;
    if (site->kind == SPANPROF_KIND_PROGRESS || spanprof__span_chosen(site))
        return 0;
    return off_from_now(site, NULL);
}

size_t spanprof__sitepatch_unchosen(void)
{
    return spanprof__sitepatch_off(off_unless_chosen, NULL);
}

#else /* no patch points on this target */

unsigned long long spanprof__sitepatch_loads(void)
{
    return 0;
}

long spanprof__sitepatch_on(int (*want)(struct spanprof_site *site, void *ctx), void *ctx)
{
    (void)want, (void)ctx;
    return 0;
}

void spanprof__sitepatch_visit(int (*visit)(struct spanprof_site *site, void *ctx), void *ctx)
{
    (void)visit, (void)ctx;
}

size_t spanprof__sitepatch_off(int (*want)(struct spanprof_site *site, void *ctx), void *ctx)
{
    (void)want, (void)ctx;
    return 0;
}

size_t spanprof__sitepatch_recording_off(void)
{
    return 0;
}

size_t spanprof__sitepatch_unchosen(void)
{
    return 0;
}

#endif
