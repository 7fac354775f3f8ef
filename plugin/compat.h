/* compat.h — the one place that knows which GCC version the plugin is built against.
 *
 * Every GCC-version-dependent include, type or call lives here, so that supporting another GCC
 * release (GCC 11 next) means editing this file only.  The rest of the plugin includes this
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
#include "stringpool.h"
#include "attribs.h"
#include "cgraph.h"
#include "diagnostic-core.h"
#include "langhooks.h"
#include "stor-layout.h"
#include "ggc.h"
#include "cpplib.h"

#if BUILDING_GCC_MAJOR < 11
#error "spanplugin needs GCC 11 or later"
#endif

/* struct attribute_spec: GCC 11 and 12 share the nine-field layout {name, min, max,
 * decl_required, type_required, function_type_required, affects_type_identity, handler,
 * exclude}; later releases change how attribute tables are registered.  Build the entry and
 * register it only through these two macros. */
#define SPANPLUGIN_ATTRIBUTE_SPEC(NAME, MIN, MAX, DECL_REQ, HANDLER) \
  { NAME, MIN, MAX, DECL_REQ, false, false, false, HANDLER, NULL }

/* Registration of a plugin attribute (in the "gnu" namespace, so [[gnu::span]] works too). */
#define SPANPLUGIN_REGISTER_ATTRIBUTE(SPEC) register_attribute (SPEC)

/* build_string_literal: the type of its length parameter differs between releases (int before
 * GCC 12, unsigned in 12); the length counts the terminating NUL. */
static inline tree
spanplugin_string_literal (const char *str)
{
  return build_string_literal (strlen (str) + 1, str);
}

/* The C-family preprocessor.  parse_in exists only in cc1/cc1plus/cc1obj, not in lto1, which
 * loads the plugin with RTLD_NOW: reference it weakly so loading never fails, and test it for
 * NULL before use.  (cpp_define itself is exported by GCC 12's lto1 as well; re-check on GCC 11.) */
extern cpp_reader *parse_in __attribute__ ((weak));

static inline void
spanplugin_cpp_define (const char *def)
{
  /* Input that is already preprocessed (-fpreprocessed, e.g. the second step of -save-temps)
   * takes no definitions: cpplib would parse ours as a line marker. */
  if (&parse_in != NULL && parse_in != NULL && !cpp_get_options (parse_in)->preprocessed)
    cpp_define (parse_in, def);
}

#endif /* SPANPLUGIN_COMPAT_H */
