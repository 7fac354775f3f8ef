/* dlclose.c — dlclose, wrapped: the spans of a library that is unloaded stay in the profile.
 *
 * Call-tree nodes point to sites, the plugin's descriptors in the instrumented object's .data.
 * Before the C library's dlclose runs, the objects that may go with it are noted (the one the
 * handle names and every object loaded after it: its dependencies come with it) and copies of
 * their sites are made (record/siteretire.c); after it, those objects that are really gone (dlclose
 * only drops a reference while others hold one) have every pointer into them turned to the
 * copies, under the process lock.  A request switching spans by name (collect/spanswitch.c)
 * waits meanwhile: it reads the sites of the loaded objects.  A library loaded again gets fresh sites: the outputs merge
 * them with the copies by name, file and line.
 *
 * Who gets here: the runtime exports dlclose, which takes the place of the C library's for every
 * caller that finds the runtime's first — all of them when libspanprof.so is linked into the
 * program (it comes before libc in the lookup order); with libspanprof.a, the program's own
 * calls, and the libraries' too when the program exports its symbols (-rdynamic).  A dlclose
 * that does not come here (a library's own call, the program linked statically without
 * -rdynamic) unloads as before, and the profile may then read unmapped memory: the manual says so.
 * A program linked fully statically (-static) has no dlclose to forward to: the library then
 * simply stays loaded.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>

#include "collect/collect.h"
#include "collect/spanswitch.h"
#include "lifecycle/lifecycle.h"
#include "record/siteretire.h"

typedef int (*dlclose_fn)(void *);
static void *real_dlclose;

struct object {
    uintptr_t base, lo, hi; /* load bias; the span of its PT_LOAD segments */
};
struct objects {
    struct object *v;
    size_t n, cap;
    uintptr_t from; /* before: the handle's object's base; objects before it stay */
    int seen;       /* the handle's object was met */
};

static int note_object(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    struct objects *o = ctx;
    if (o->v == NULL) {
        o->n++; /* counting pass */
        return 0;
    }
    if (!o->seen && info->dlpi_addr != o->from)
        return 0;
    o->seen = 1;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (size_t i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo)
            lo = a;
        if (a + ph->p_memsz > hi)
            hi = a + ph->p_memsz;
    }
    if (lo < hi && o->n < o->cap)
        o->v[o->n++] = (struct object){info->dlpi_addr, lo, hi};
    return 0;
}

/* Objects loaded from FROM's object on (all when ALL), in O->v (malloc'd: temporary). */
static int list_objects(struct objects *o, uintptr_t from, int all)
{
    *o = (struct objects){.from = from, .seen = all};
    dl_iterate_phdr(note_object, o);
    o->cap = o->n + 16; /* room for objects loaded meanwhile */
    o->n = 0;
    o->v = malloc(o->cap * sizeof *o->v);
    if (!o->v)
        return -1;
    dl_iterate_phdr(note_object, o);
    return 0;
}

static void free_objects(struct objects *o)
{
    free(o->v);
}

static int still_there(const struct objects *now, const struct object *x)
{
    for (size_t i = 0; i < now->n; i++)
        if (now->v[i].base == x->base && now->v[i].lo == x->lo && now->v[i].hi == x->hi)
            return 1;
    return 0;
}

SPANPROF_API int dlclose(void *handle)
{
    dlclose_fn fn = (dlclose_fn)__atomic_load_n(&real_dlclose, __ATOMIC_ACQUIRE);
    if (!fn) {
        fn = (dlclose_fn)dlsym(RTLD_NEXT, "dlclose");
        if (!fn)
            return 0; /* fully static: the library stays loaded (see above) */
        __atomic_store_n(&real_dlclose, (void *)fn, __ATOMIC_RELEASE);
    }
    struct link_map *lm = NULL;
    if (!__atomic_load_n(&spanprof__flags.recording, __ATOMIC_ACQUIRE) ||
        dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm)
        return fn(handle);
    struct spanprof__guard guard = spanprof__guard_enter();
    struct objects before, after = {0};
    struct spanprof__range *ranges = NULL;
    struct spanprof__retire r = {0};
    int prepared = 0;
    if (list_objects(&before, lm->l_addr, 0) == 0 && before.n > 0 &&
        (ranges = malloc(before.n * sizeof *ranges)) != NULL) {
        for (size_t i = 0; i < before.n; i++)
            ranges[i] = (struct spanprof__range){before.v[i].lo, before.v[i].hi};
        r.ranges = ranges;
        r.nranges = before.n;
        spanprof__lock();
        prepared = spanprof__retire_collect(&r) == 0;
        spanprof__unlock();
    }
    spanprof__guard_leave(guard);
    spanprof__switch_hold(); /* a switch request reads the sites: not while they go */
    int rc = fn(handle);
    if (!prepared) {
        spanprof__switch_release();
        free_objects(&before);
        return rc;
    }
    guard = spanprof__guard_enter();
    /* Only the objects that are gone: the others' pointers stay as they are. */
    size_t gone = 0;
    if (list_objects(&after, 0, 1) == 0)
        for (size_t i = 0; i < before.n; i++)
            if (!still_there(&after, &before.v[i]))
                ranges[gone++] = (struct spanprof__range){before.v[i].lo, before.v[i].hi};
    spanprof__lock();
    if (gone) {
        r.nranges = gone;
        spanprof__retire_apply(&r);
        spanprof__trace_retire_sites(&r);
    }
    spanprof__retire_end(&r);
    spanprof__unlock();
    spanprof__switch_release();
    free_objects(&after);
    free_objects(&before);
    free(ranges);
    spanprof__guard_leave(guard);
    return rc;
}

void spanprof__dlclose_start(void)
{
    void *fn = dlsym(RTLD_NEXT, "dlclose");
    if (fn)
        __atomic_store_n(&real_dlclose, fn, __ATOMIC_RELEASE);
}
