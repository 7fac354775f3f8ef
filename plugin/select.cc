/* select.cc — which functions get a span.
 *
 * A function defined in the translation unit is instrumented when
 *   1. it carries `span` (on any declaration): always, whatever the options say — except that
 *      `span` together with `nospan` is an error, and naked functions, thunks and C++ cdtor
 *      clones that only forward to the real body (the deleting destructor D0; all clones under
 *      -fdeclone-ctor-dtor, where the unified C4/D4 function gets the span) are never
 *      instrumented; or
 *   2. an option selects it: `all` (restricted to the `include` patterns if any are given), or
 *      its name matches a line of the `functions` file; and no filter removes it:
 *        - `nospan` or `no_instrument_function` on the function,
 *        - compiler-made functions (DECL_ARTIFICIAL: implicit C++ members, static initialisers,
 *          lambda conversion thunks, OpenMP bodies ...; but the body of a lambda, which g++
 *          marks artificial too, is user code and is selected), thunks, gnu_inline `extern inline`
 *          always_inline functions — the set GCC's -finstrument-functions leaves alone,
 *        - an `exclude` pattern matching the name, an `exclude-file` pattern matching the
 *          source file, fewer than `min-lines` source lines.
 * Names are matched as the span name would be without an attribute (decl_printable_name:
 * "ns::Parser::parse", "tmax<int>", "f" in C), files as DECL_SOURCE_FILE, both with
 * fnmatch (PATTERN, STRING, 0): `*` also matches '/' and ':'.
 * C++ constructor/destructor clones are judged by the function they were cloned from.
 */
#include "spanplugin.h"

#include <fnmatch.h>

static bool
matches_any (const vec<char *> &patterns, const char *s)
{
  for (unsigned i = 0; i < patterns.length (); i++)
    if (fnmatch (patterns[i], s, 0) == 0)
      return true;
  return false;
}

/* Source lines from the opening to the closing of FUN's body. */
static int
function_lines (tree fndecl, function *fun)
{
  location_t end = fun ? fun->function_end_locus : UNKNOWN_LOCATION;
  int first = DECL_SOURCE_LINE (fndecl);
  if (end == UNKNOWN_LOCATION || LOCATION_LINE (end) < first)
    return 1;
  return LOCATION_LINE (end) - first + 1;
}

/* Functions that an option must not select, whatever it says.  Mirrors the tests
 * gimplify_function_tree makes for -finstrument-functions.  The no_instrument_function
 * attribute is looked up itself: DECL_NO_INSTRUMENT_FUNCTION_ENTRY_EXIT, which its handler
 * sets, is found set on every function by the time this pass runs (GCC 11 and 12). */
static bool
never_selected_by_options (tree fndecl)
{
  if ((DECL_ARTIFICIAL (fndecl) && !spanplugin_is_lambda_body (fndecl))
      || lookup_attribute ("no_instrument_function", DECL_ATTRIBUTES (fndecl)))
    return true;
  if (DECL_DECLARED_INLINE_P (fndecl) && DECL_EXTERNAL (fndecl)
      && DECL_DISREGARD_INLINE_LIMITS (fndecl))
    return true;
  return false;
}

bool
spanplugin_selectable (tree fndecl, tree key)
{
  return !never_selected_by_options (fndecl) && !never_selected_by_options (key);
}

bool
spanplugin_name_matches (const vec<char *> &patterns, tree key)
{
  if (patterns.is_empty ())
    return false;
  /* Copied: the C++ printable name lives in a ring of buffers that later calls reuse. */
  char *name = xstrdup (lang_hooks.decl_printable_name (key, 1));
  bool found = matches_any (patterns, name);
  free (name);
  return found;
}

spanplugin_choice
spanplugin_select (tree fndecl, tree key, function *fun)
{
  /* Never, not even with the attribute: they only call the function that has the span. */
  if (spanplugin_is_cdtor_forwarder (fndecl) || spanplugin_is_thunk (fndecl))
    return SPANPLUGIN_SKIP;

  bool span = spanplugin_has_span (fndecl);
  bool nospan = spanplugin_has_nospan (fndecl);
  if (span && nospan)
    return SPANPLUGIN_CONFLICT;
  if (span)
    return SPANPLUGIN_BY_ATTRIBUTE;
  if (nospan)
    return SPANPLUGIN_SKIP;

  const spanplugin_options &o = spanplugin_opts;
  if (!o.all && !o.functions_given)
    return SPANPLUGIN_SKIP;
  if (!spanplugin_selectable (fndecl, key))
    return SPANPLUGIN_SKIP;

  /* Copied: the C++ printable name lives in a ring of buffers that later calls reuse. */
  char *name = xstrdup (lang_hooks.decl_printable_name (key, 1));
  bool chosen = (o.all && (o.include.is_empty () || matches_any (o.include, name)))
                || matches_any (o.functions, name);
  if (chosen && matches_any (o.exclude, name))
    chosen = false;
  free (name);
  if (!chosen)
    return SPANPLUGIN_SKIP;

  const char *file = DECL_SOURCE_FILE (fndecl);
  if (!o.exclude_file.is_empty () && matches_any (o.exclude_file, file ? file : ""))
    return SPANPLUGIN_SKIP;
  if (o.min_lines > 0 && function_lines (fndecl, fun) < o.min_lines)
    return SPANPLUGIN_SKIP;
  return SPANPLUGIN_BY_OPTION;
}
