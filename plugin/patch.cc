/* patch.cc — patch points: an instruction in front of a span's enter and exit guards that the
 * runtime can turn into a no-op once the span is off for good, so that an OFF span costs one
 * no-op at each end instead of a load, a compare and a branch.
 *
 * A patch point is an `asm goto` with two ways on: the guard (its label, ON) and the code after
 * the guarded call (the fall-through, OFF).  As compiled it is a jump to the guard, so an object
 * whose points the runtime never patches (an older runtime, text it may not write, a point it
 * never saw) runs exactly the test-and-branch code it ran before:
 *
 *   x86-64   e9 <rel32>   jmp ON          patched: 0f 1f 44 00 00, a 5-byte nop
 *   aarch64  b ON                         patched: nop
 *
 * The runtime writes the no-op only over the points of a site whose state is OFF, which it
 * never changes afterwards (spanprof.h): the guard would skip the call anyway, so the no-op
 * changes what runs, not what is recorded.  (runtime/record/sitepatch.c: how it writes text
 * that other threads may be running.)
 *
 * Each point is listed in a note of the object, found at run time through the program headers
 * like the build id (owner "sp", type SPANPROF_PATCH_NOTE_TYPE): two 32-bit offsets, from the
 * descriptor, to the point and to its site.  Offsets, not addresses, so the note needs no
 * relocation at load time and stays read-only.  Each note is a section of its own (`unique`),
 * linked to its function's section (`o`: the linker drops it with a function --gc-sections
 * removes, rather than keep the function for it) and in the function's COMDAT group, if any
 * (`?`: it goes with the copy the linker discards).  It is not named .note.*, as the assembler
 * warns of the link-order flag there; ld puts every allocated note section in a PT_NOTE segment
 * whatever its name.  Inlined and cloned copies of a function carry copies of the asm, and each
 * lists itself.
 *
 * An object loaded after the runtime started (dlopen) must have its points patched before its
 * code runs, as start-up patched those of the objects loaded with the program.  So every unit
 * compiled with points possible ends with a hidden function that calls SPANPROF_ABI_OBJECT_LOADED
 * (weakly: nothing without the runtime) and an .init_array entry for it, both in one COMDAT
 * group: the linker keeps one per object, and the loader calls it once the object is relocated.
 * It starts with the landing pad an indirect call needs where the object is marked for branch
 * protection (endbr64; bti c), a no-op elsewhere.
 */
#include "spanplugin.h"
#include "spanprof.h"   /* SPANPROF_PATCH_NOTE_TYPE */

/* The target, as inline.cc tells it (from the compiler's own target headers). */
/* The site's address as a constant operand: "i" on x86-64; aarch64 takes a symbol only as "S". */
#if defined(X86_64_REGPARM_MAX)
#define PATCH_JUMP "\t.byte 0xe9\n\t.long %l1 - 2f\n2:\n"
#define PATCH_NOTE_TYPE_ATTR "@note"
#define PATCH_SITE_CONSTRAINT "i"
#define LOADED_TYPE(t) "@" t
#define LOADED_CALL                                                                       \
  "\tendbr64\n"                                                                           \
  "\tmovq " SPANPROF_ABI_OBJECT_LOADED "@GOTPCREL(%rip), %rax\n"                          \
  "\ttestq %rax, %rax\n"                                                                  \
  "\tjz .Lspanprof_no_runtime\n"                                                          \
  "\tjmp *%rax\n"
#define LOADED_POINTER ".quad"
#elif defined(GCC_AARCH64_H)
#define PATCH_JUMP "\tb %l1\n"
#define PATCH_NOTE_TYPE_ATTR "%%note"
#define PATCH_SITE_CONSTRAINT "S"
#define LOADED_TYPE(t) "%" t
#define LOADED_CALL                                                                       \
  "\thint 34\n"                                                                           \
  "\tadrp x16, :got:" SPANPROF_ABI_OBJECT_LOADED "\n"                                     \
  "\tldr x16, [x16, :got_lo12:" SPANPROF_ABI_OBJECT_LOADED "]\n"                          \
  "\tcbz x16, .Lspanprof_no_runtime\n"                                                    \
  "\tbr x16\n"
#define LOADED_POINTER ".xword"
#endif

bool
spanplugin_patch_possible (void)
{
#ifdef PATCH_JUMP
  return spanplugin_opts.patch && spanplugin_inline_possible ();
#else
  return false;
#endif
}

#define STR_(x) #x
#define STR(x) STR_ (x)

#ifdef PATCH_JUMP
/* Operand 0: the site's address, printed bare (%c0); %l1: the label ON. */
static const char point_template[] =
    "1:\n.Lspanprof_point%=:\n" PATCH_JUMP
    "\t.pushsection .spanprof_points,\"ao?\"," PATCH_NOTE_TYPE_ATTR ",.Lspanprof_point%=,unique,%=\n"
    "\t.balign 4\n"
    "\t.long 3\n\t.long 8\n\t.long " STR (SPANPROF_PATCH_NOTE_TYPE) "\n"
    "\t.asciz \"sp\"\n\t.balign 4\n"
    "\t.long 1b - .\n\t.long %c0 - .\n"
    "\t.popsection";
#endif

gasm *
spanplugin_build_patch_point (tree site, tree on_label)
{
#ifdef PATCH_JUMP
  vec<tree, va_gc> *inputs = NULL, *labels = NULL;
  vec_safe_push (inputs, build_tree_list (build_tree_list (NULL_TREE,
                                                           build_string (2, PATCH_SITE_CONSTRAINT)),
                                          build_fold_addr_expr (site)));
  vec_safe_push (labels, build_tree_list (NULL_TREE, on_label));
  gasm *g = gimple_build_asm_vec (point_template, inputs, NULL, NULL, labels);
  gimple_asm_set_volatile (g, true);
  /* `asm inline`: one instruction to the inliner, which otherwise counts the template's lines
   * and would stop inlining small spans that the plain build inlines. */
  gimple_asm_set_inline (g, true);
  return g;
#else
  (void) site;
  (void) on_label;
  gcc_unreachable ();
#endif
}

bool
spanplugin_is_patch_point (const gasm *stmt)
{
#ifdef PATCH_JUMP
  return strcmp (gimple_asm_string (stmt), point_template) == 0;
#else
  (void) stmt;
  return false;
#endif
}

/* PLUGIN_FINISH_UNIT: the object's initialiser (see the top), written after the unit's code. */
void
spanplugin_patch_finish_unit (void *, void *)
{
#ifdef PATCH_JUMP
  if (!spanplugin_patch_possible () || !asm_out_file)
    return;
  fputs ("\t.pushsection .text.__spanprof_loaded,\"axG\"," LOADED_TYPE ("progbits")
         ",__spanprof_loaded,comdat\n"
         "\t.weak " SPANPROF_ABI_OBJECT_LOADED "\n"
         "\t.weak __spanprof_loaded\n"
         "\t.hidden __spanprof_loaded\n"
         "\t.type __spanprof_loaded, " LOADED_TYPE ("function") "\n"
         "\t.balign 16\n"
         "__spanprof_loaded:\n" LOADED_CALL
         ".Lspanprof_no_runtime:\n"
         "\tret\n"
         "\t.size __spanprof_loaded, . - __spanprof_loaded\n"
         "\t.popsection\n"
         "\t.pushsection .init_array,\"awG\"," LOADED_TYPE ("init_array")
         ",__spanprof_loaded,comdat\n"
         "\t.balign 8\n"
         "\t" LOADED_POINTER " __spanprof_loaded\n"
         "\t.popsection\n",
         asm_out_file);
#endif
}
