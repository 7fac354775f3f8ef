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
 *          source file, fewer than `min-lines` source lines;
 *        - for `all` only (not `functions=`, which chooses by name), with `min-size=N`: a body
 *          too small to be worth a span — fewer than N statements with no loop and no call to
 *          itself, other than main (default SPANPLUGIN_MIN_SIZE_DEFAULT; 0: every function);
 *          for a function declared always_inline, fewer than N statements, loop or not.
 *          Such a function costs its caller a few
 *          nanoseconds at most, inlined or not, and its time is better shown as the caller's
 *          (as perf shows it) than paid for on every call: Clang XRay's instruction threshold
 *          makes the same choice.  The statements are the high GIMPLE ones this pass sees,
 *          before inlining: labels, debug statements and scopes do not count; a loop is a jump
 *          back to a label seen earlier in the body.
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

/* What body_size_stmt gathers. */
struct body_size
{
  tree fndecl;
  int statements;
  bool loop;                 /* a backward jump, or a call to itself */
  hash_set<tree> *labels;    /* the labels seen so far */
};

static tree
body_size_stmt (gimple_stmt_iterator *gsi, bool *, struct walk_stmt_info *wi)
{
  body_size *b = (body_size *) wi->info;
  gimple *stmt = gsi_stmt (*gsi);
  switch (gimple_code (stmt))
    {
    case GIMPLE_LABEL:
      b->labels->add (gimple_label_label (as_a<glabel *> (stmt)));
      return NULL_TREE;
    case GIMPLE_BIND:
    case GIMPLE_NOP:
      return NULL_TREE;
    case GIMPLE_GOTO:
      b->loop |= b->labels->contains (gimple_goto_dest (stmt));
      break;
    case GIMPLE_COND:
      {
        gcond *cond = as_a<gcond *> (stmt);
        tree t = gimple_cond_true_label (cond), f = gimple_cond_false_label (cond);
        b->loop |= (t && b->labels->contains (t)) || (f && b->labels->contains (f));
        break;
      }
    case GIMPLE_CALL:
      b->loop |= gimple_call_fndecl (stmt) == b->fndecl;
      break;
    default:
      if (is_gimple_debug (stmt))
        return NULL_TREE;
      break;
    }
  b->statements++;
  return NULL_TREE;
}

/* Whether FNDECL's body is worth a span under `all` with min-size=MIN_SIZE; *SIZE gets its
 * statement count. */
static bool
big_enough (tree fndecl, int min_size, int *size)
{
  hash_set<tree> labels;
  body_size b = { fndecl, 0, false, &labels };
  struct walk_stmt_info wi;
  memset (&wi, 0, sizeof wi);
  wi.info = &b;
  walk_gimple_seq (gimple_body (fndecl), body_size_stmt, NULL, &wi);
  *size = b.statements;
  /* main stays: one call, and its span is the whole run's time (the report's total).  A loop
   * keeps a small function, except one declared always_inline: its body is always part of its
   * callers' code, as a macro's would be, and a short loop there (a few vector chunks, a
   * hash-table row) is as cheap as straight code. */
  bool always_inline = lookup_attribute ("always_inline", DECL_ATTRIBUTES (fndecl)) != NULL_TREE;
  return (b.loop && !always_inline) || b.statements >= min_size
         || (MAIN_NAME_P (DECL_NAME (fndecl)) && DECL_FILE_SCOPE_P (fndecl));
}

bool
spanplugin_small_body (tree fndecl)
{
  int size;
  return !big_enough (fndecl, SPANPLUGIN_MIN_SIZE_DEFAULT, &size);
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
spanplugin_select (tree fndecl, tree key, function *fun, int *size)
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
  bool by_name = matches_any (o.functions, name);
  bool chosen = by_name || (o.all && (o.include.is_empty () || matches_any (o.include, name)));
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
  if (!by_name && o.min_size > 0 && !big_enough (fndecl, o.min_size, size))
    return SPANPLUGIN_SKIP_SMALL;
  return SPANPLUGIN_BY_OPTION;
}
