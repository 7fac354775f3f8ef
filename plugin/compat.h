/* compat.h — the one place that knows which GCC version the plugin is built against.
 *
 * Every GCC-version-dependent include, type or call lives here.  The plugin builds against
 * GCC 11 and GCC 12 (`make check-plugin` runs with either, see configure's CC/CXX); supporting
 * another release means editing this file only.  The rest of the plugin includes this
 * header first and uses the SPANPLUGIN_* wrappers below instead of the raw GCC API.
 */
#ifndef SPANPLUGIN_COMPAT_H
#define SPANPLUGIN_COMPAT_H

/* gcc-plugin.h must come first: it pulls in config.h/system.h, which every other GCC header
 * assumes. */
#include "gcc-plugin.h"
#include "bversion.h"         /* BUILDING_GCC_MAJOR; plugin-version.h defines a static, so only plugin.cc includes it */
#include "tree.h"
#include "tree-pass.h"
#include "context.h"
#include "function.h"
#include "basic-block.h"
#include "gimple.h"
#include "gimple-iterator.h"
#include "gimple-walk.h"
#include "stringpool.h"
#include "attribs.h"
#include "cgraph.h"
#include "diagnostic-core.h"
#include "langhooks.h"
#include "stor-layout.h"
#include "ggc.h"
#include "cpplib.h"
#include "tree-inline.h"      /* copy_gimple_seq_and_replace_locals */

#include "varasm.h"           /* make_decl_one_only */
#include "output.h"           /* asm_out_file */

#if BUILDING_GCC_MAJOR < 11
#error "spanplugin needs GCC 11 or later"
#endif

/* Thunks (C++ this-adjusting and covariant-return thunks, cdtor thunks of
 * -fdeclone-ctor-dtor): cgraph_node::thunk is a bit-field in GCC 11 and 12 alike (GCC 10 had
 * thunk.thunk_p). */
static inline bool
spanplugin_is_thunk (tree fndecl)
{
  cgraph_node *node = cgraph_node::get (fndecl);
  return node && node->thunk;
}

/* C++ constructor and destructor clones (complete "C1"/"D1", base "C2"/"D2", deleting "D0") are
 * made by the front end from one abstract function and point back at it through
 * DECL_ABSTRACT_ORIGIN (DECL_CLONED_FUNCTION is the same pointer, but it is a front-end macro
 * reading front-end data).  Before the "lower" pass nothing else sets DECL_ABSTRACT_ORIGIN on a
 * function that has a body of its own.  Returns the origin, or NULL_TREE. */
static inline tree
spanplugin_cdtor_origin (tree fndecl)
{
  tree origin = DECL_ABSTRACT_ORIGIN (fndecl);
  if (origin && TREE_CODE (origin) == FUNCTION_DECL && origin != fndecl)
    return origin;
  return NULL_TREE;
}

/* The function call operator of a C++ lambda's closure type: g++ marks it DECL_ARTIFICIAL
 * although its body is the user's lambda body.  LAMBDA_FUNCTION_P is a front-end macro; in
 * GCC 11 and 12 the only artificial member function named "operator()" is a lambda's. */
static inline bool
spanplugin_is_lambda_body (tree fndecl)
{
  tree ctx = DECL_CONTEXT (fndecl);
  return DECL_ARTIFICIAL (fndecl) && ctx && TREE_CODE (ctx) == RECORD_TYPE && DECL_NAME (fndecl)
         && strcmp (IDENTIFIER_POINTER (DECL_NAME (fndecl)), "operator()") == 0;
}

/* The front end names cdtor clones with identifiers that end in a space, so they cannot clash
 * with user names (complete_ctor_identifier etc.: front-end globals that lto1 lacks, hence the
 * string compares).  Same spelling in GCC 11 and 12. */
static inline bool
spanplugin_decl_name_is (tree fndecl, const char *name)
{
  return DECL_NAME (fndecl) && strcmp (IDENTIFIER_POINTER (DECL_NAME (fndecl)), name) == 0;
}

static inline bool
spanplugin_is_cdtor_clone_name (tree fndecl)
{
  return spanplugin_decl_name_is (fndecl, "__ct_comp ")
         || spanplugin_decl_name_is (fndecl, "__ct_base ")
         || spanplugin_decl_name_is (fndecl, "__dt_comp ")
         || spanplugin_decl_name_is (fndecl, "__dt_base ")
         || spanplugin_decl_name_is (fndecl, "__dt_del ");
}

/* Clones that hold no body of their own and only call the function carrying the span:
 *  - the deleting destructor "D0" (calls the complete destructor, then operator delete);
 *  - with -fdeclone-ctor-dtor (default at -Os), every clone: the front end emits the body once,
 *    as the "C4"/"D4" function (the origin itself, instrumented), and makes C1/C2/D0/D1/D2
 *    forwarders to it; those forwarders have no DECL_ABSTRACT_ORIGIN any more. */
static inline bool
spanplugin_is_cdtor_forwarder (tree fndecl)
{
  if (spanplugin_decl_name_is (fndecl, "__dt_del "))
    return true;
  return spanplugin_cdtor_origin (fndecl) == NULL_TREE && spanplugin_is_cdtor_clone_name (fndecl);
}

/* struct attribute_spec: GCC 11 and 12 share the nine-field layout {name, min, max,
 * decl_required, type_required, function_type_required, affects_type_identity, handler,
 * exclude}; later releases change how attribute tables are registered.  Build the entry and
 * register it only through these two macros. */
#define SPANPLUGIN_ATTRIBUTE_SPEC(NAME, MIN, MAX, DECL_REQ, HANDLER) \
  { NAME, MIN, MAX, DECL_REQ, false, false, false, HANDLER, NULL }

/* Registration of a plugin attribute (in the "gnu" namespace, so [[gnu::span]] works too). */
#define SPANPLUGIN_REGISTER_ATTRIBUTE(SPEC) register_attribute (SPEC)

/* build_string_literal: the type of its length parameter differs between releases (int up to
 * GCC 10, unsigned in 11 and 12), so callers pass no length; it counts the terminating NUL. */
static inline tree
spanplugin_string_literal (const char *str)
{
  return build_string_literal (strlen (str) + 1, str);
}

/* Puts DECL in the section NAME.  GCC 11 and 12 take the name as a string (and as a tree);
 * GCC 10 had the string form only, which is the one used. */
static inline void
spanplugin_set_section (tree decl, const char *name)
{
  set_decl_section_name (decl, name);
}

/* The C-family preprocessor.  parse_in exists only in cc1/cc1plus/cc1obj, not in lto1, which
 * loads the plugin with RTLD_NOW: reference it weakly so loading never fails, and test it for
 * NULL before use.  (cpp_define and cpp_get_options themselves are exported by the lto1 of
 * GCC 11 and of GCC 12, so referencing them strongly is fine.) */
extern cpp_reader *parse_in __attribute__ ((weak));

static inline void
spanplugin_cpp_define (const char *def)
{
  /* Input that is already preprocessed (-fpreprocessed, e.g. the second step of -save-temps)
   * takes no definitions: cpplib would parse ours as a line marker. */
  if (&parse_in != NULL && parse_in != NULL && !cpp_get_options (parse_in)->preprocessed)
    cpp_define (parse_in, def);
}

/* The pass the inline path's late pass (inline.cc) follows: pass_cleanup_cfg_post_optimizing,
 * named "optimized", the last GIMPLE pass that runs at every -O level (and in the LTO ltrans
 * stage) before pass_warn_function_noreturn and "expand".  In GCC 12 it comes after the late
 * pass_warn_access (-Wdangling-pointer and the other late access warnings), in GCC 11 after
 * pass_gimple_isel; in both after pass_late_warn_uninitialized, which runs within
 * pass_all_optimizations (and pass_all_optimizations_g at -Og). */
#define SPANPLUGIN_LATE_PASS_AFTER "optimized"

#endif /* SPANPLUGIN_COMPAT_H */
