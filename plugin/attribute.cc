/* attribute.cc — the `span`, `nospan` and `progress` function attributes.
 *
 *   __attribute__((span))          instrument this function; span named after the function
 *   __attribute__((span("name")))  same, span named "name"
 *   __attribute__((nospan))        never instrument this function, whatever the options select
 *                                  (-fplugin-arg-spanplugin-all, functions=FILE)
 *   __attribute__((progress))      a coz throughput progress point hit each time this function
 *                                  returns (any way out, exceptions included); named after the
 *                                  function.  Independent of `span`: a function may carry both.
 *   __attribute__((progress("name")))  same, progress point named "name"
 *   [[gnu::span]], [[gnu::span("name")]], [[gnu::nospan]], [[gnu::progress]],
 *   [[gnu::progress("name")]]       the same in C++11 / C2x syntax
 *
 * Options never add progress points: only the attribute does (`all` gives spans, not progress
 * points), and `nospan` does not remove one.
 *
 * `span` and `nospan` on the same function (on one or on different declarations) is an error,
 * reported at the definition by the pass ("'span' and 'nospan' attributes on the same
 * function"); the function is then not instrumented.
 *
 * The attribute may sit on the definition or on any earlier declaration: the front ends merge
 * DECL_ATTRIBUTES into the definition, and the pass only looks there.
 *
 * Diagnostics (all at the declaration, or at the argument when the front end knows its place),
 * the same for `progress` with its name:
 *   warning: 'span' attribute only applies to functions [-Wattributes]   (then ignored)
 *   error: 'span' attribute argument must be a string constant
 *   error: 'span' attribute argument must not be an empty string
 *   more than one argument: GCC's own "wrong number of arguments specified for 'span' attribute"
 */
#include "spanplugin.h"

/* The attribute sits on something that is not a function: warn at its location and drop it.
 * Returns true when that happened. */
static bool
ignored_unless_function (tree decl, tree name, bool *no_add_attrs)
{
  if (TREE_CODE (decl) == FUNCTION_DECL)
    return false;
  location_t loc = DECL_P (decl) ? DECL_SOURCE_LOCATION (decl) : input_location;
  warning_at (loc, OPT_Wattributes, "%qE attribute only applies to functions", name);
  *no_add_attrs = true;
  return true;
}

/* Checks one application of `span` or `progress` (NAME says which).  Returning with *no_add_attrs set drops it, so an
 * ignored or erroneous attribute never reaches the pass. */
static tree
handle_span_attribute (tree *node, tree name, tree args, int flags, bool *no_add_attrs)
{
  tree decl = *node;

  /* decl_required is false in the spec so that types reach this handler too and get the same
   * message as variables, instead of GCC's generic "attribute ignored". */
  if (ignored_unless_function (decl, name, no_add_attrs) || args == NULL_TREE)
    return NULL_TREE;

  tree arg = TREE_VALUE (args);
  /* Prefer the argument's own location (the C++ front end wraps literals to keep one). */
  location_t loc = EXPR_LOCATION (arg);
  if (loc == UNKNOWN_LOCATION)
    loc = DECL_SOURCE_LOCATION (decl);
  STRIP_ANY_LOCATION_WRAPPER (arg);

  /* Only narrow strings: the name goes into a const char * field of the site. */
  if (TREE_CODE (arg) != STRING_CST
      || TREE_CODE (TREE_TYPE (arg)) != ARRAY_TYPE
      || TYPE_PRECISION (TREE_TYPE (TREE_TYPE (arg))) != TYPE_PRECISION (char_type_node))
    {
      error_at (loc, "%qE attribute argument must be a string constant", name);
      *no_add_attrs = true;
      return NULL_TREE;
    }
  if (TREE_STRING_LENGTH (arg) == 0 || TREE_STRING_POINTER (arg)[0] == '\0')
    {
      error_at (loc, "%qE attribute argument must not be an empty string", name);
      *no_add_attrs = true;
      return NULL_TREE;
    }
  return NULL_TREE;
}

/* `nospan` takes no argument (GCC itself reports one); only functions. */
static tree
handle_nospan_attribute (tree *node, tree name, tree args, int flags, bool *no_add_attrs)
{
  ignored_unless_function (*node, name, no_add_attrs);
  return NULL_TREE;
}

/* max_len 1: a second argument gets GCC's own "wrong number of arguments" error. */
static struct attribute_spec span_attribute_spec
  = SPANPLUGIN_ATTRIBUTE_SPEC (SPANPLUGIN_ATTR_NAME, 0, 1, false, handle_span_attribute);
static struct attribute_spec nospan_attribute_spec
  = SPANPLUGIN_ATTRIBUTE_SPEC (SPANPLUGIN_NOSPAN_ATTR_NAME, 0, 0, false, handle_nospan_attribute);
static struct attribute_spec progress_attribute_spec
  = SPANPLUGIN_ATTRIBUTE_SPEC (SPANPLUGIN_PROGRESS_ATTR_NAME, 0, 1, false, handle_span_attribute);

/* PLUGIN_ATTRIBUTES callback; registering earlier (in plugin_init) ICEs, the attribute tables
 * are not set up yet then. */
void
spanplugin_register_attributes (void *event_data, void *user_data)
{
  SPANPLUGIN_REGISTER_ATTRIBUTE (&span_attribute_spec);
  SPANPLUGIN_REGISTER_ATTRIBUTE (&nospan_attribute_spec);
  SPANPLUGIN_REGISTER_ATTRIBUTE (&progress_attribute_spec);
}

bool
spanplugin_has_span (tree fndecl)
{
  return lookup_attribute (SPANPLUGIN_ATTR_NAME, DECL_ATTRIBUTES (fndecl)) != NULL_TREE;
}

bool
spanplugin_has_nospan (tree fndecl)
{
  return lookup_attribute (SPANPLUGIN_NOSPAN_ATTR_NAME, DECL_ATTRIBUTES (fndecl)) != NULL_TREE;
}

bool
spanplugin_has_progress (tree fndecl)
{
  return lookup_attribute (SPANPLUGIN_PROGRESS_ATTR_NAME, DECL_ATTRIBUTES (fndecl)) != NULL_TREE;
}

/* The name given by attribute ATTR_NAME ("span" or "progress") on FNDECL if it has a string,
 * else the readable name of KEY (the function
 * itself, or for a C++ constructor/destructor clone the function it was cloned from: "A::A"
 * rather than the clone's internal name).
 * decl_printable_name verbosity 1 gives the scope-qualified name with template arguments but
 * without return type and parameters in C++ ("ns::Parser::parse", "max<int>"); the plain
 * identifier in C.  The C++ string lives in a ring of buffers that later calls reuse: callers
 * copy it before asking for another name.
 * If several declarations carried different names, the front end keeps the first attribute in
 * the list, which is the one on the latest declaration. */
static const char *
attribute_or_function_name (const char *attr_name, tree fndecl, tree key)
{
  tree attr = lookup_attribute (attr_name, DECL_ATTRIBUTES (fndecl));
  if (attr && TREE_VALUE (attr))
    {
      tree arg = TREE_VALUE (TREE_VALUE (attr));
      STRIP_ANY_LOCATION_WRAPPER (arg);
      if (TREE_CODE (arg) == STRING_CST)
        return TREE_STRING_POINTER (arg);
    }
  return lang_hooks.decl_printable_name (key, 1);
}

const char *
spanplugin_span_name (tree fndecl, tree key)
{
  return attribute_or_function_name (SPANPLUGIN_ATTR_NAME, fndecl, key);
}

const char *
spanplugin_progress_name (tree fndecl, tree key)
{
  return attribute_or_function_name (SPANPLUGIN_PROGRESS_ATTR_NAME, fndecl, key);
}
