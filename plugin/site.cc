/* site.cc — the site descriptor emitted for each span and for each progress point.
 *
 * Builds (once) a RECORD_TYPE mirroring struct spanprof_site from include/spanprof.h and, per
 * span, a writable variable of that type initialised with the constant part (version, kind,
 * name, file, lines); the runtime-owned slots start as zero.  Its symbol is
 * "__spanprof_site.<assembler name of the key function>" for a span and
 * "__spanprof_progress.<assembler name of the key function>" for a progress point (kind
 * SPANPROF_KIND_PROGRESS; a function carrying both attributes has one site of each kind).
 *
 * One site per span:
 *  - The key of a function is itself, except for C++ constructor and destructor clones (C1/C2,
 *    D1/D2), whose key is the function they were cloned from: every clone of one cdtor uses the
 *    same site, so the profile has one entry for it.  (Deleting destructors, D0, only call D1 and
 *    are not instrumented; see select.cc.)
 *  - Functions that are public and COMDAT (C++ inline functions, template instantiations, ...:
 *    one copy per program however many units define them) get a COMDAT site: public, hidden,
 *    one-only in its own group named after the symbol, so the linker (or LTO's symbol merging)
 *    keeps a single site for the whole program (or shared object).  Every other function,
 *    static ones included, gets a site local to the object file.
 *
 * Each site's name is a string of its own in the allocated section ".spanprof_names" (see
 * site_name): so the spans of any object, program or shared library built with the plugin can
 * be listed from the file on disk, by `spanprof record --coz --progress` before it runs a
 * program and by the runtime at start-up under coz, to tell a progress glob that names no span.
 * Strings are NUL-terminated; a name may occur more than once (COMDAT sites, both kinds).
 */
#include "spanplugin.h"
#include "spanprof.h"
#include "hash-map.h"

#include <stddef.h>

/* Cached across functions; GC roots so the collector neither frees nor misses them.
 * site_list: a TREE_LIST (purpose key, value site) of every site built, which keeps the trees
 * that site_maps (heap-allocated, invisible to the collector) point to alive.
 * site_maps[KIND]: key function -> its site of that kind. */
static tree site_type;
static tree site_list;
static hash_map<tree, tree> *site_maps[SPANPROF_KIND_PROGRESS + 1];

const struct ggc_root_tab spanplugin_site_roots[] = {
  { &site_type, 1, sizeof (site_type), gt_ggc_mx_tree_node, gt_pch_nx_tree_node },
  { &site_list, 1, sizeof (site_list), gt_ggc_mx_tree_node, gt_pch_nx_tree_node },
  LAST_GGC_ROOT_TAB
};

tree
spanplugin_site_key (tree fndecl)
{
  tree origin = spanplugin_cdtor_origin (fndecl);
  return origin ? origin : fndecl;
}

/* The site of KIND already built for KEY in this unit, or NULL_TREE. */
tree
spanplugin_lookup_site (tree key, unsigned kind)
{
  gcc_assert (kind < ARRAY_SIZE (site_maps));
  if (!site_maps[kind])
    return NULL_TREE;
  tree *site = site_maps[kind]->get (key);
  return site ? *site : NULL_TREE;
}

/* Whether FNDECL's definition may appear in several units and is merged into one: then its
 * site must be merged the same way. */
static bool
needs_comdat_site (tree fndecl)
{
  return TREE_PUBLIC (fndecl) && (DECL_ONE_ONLY (fndecl) || DECL_COMDAT (fndecl));
}

/* The record's fields, in declaration order, with the offset the C header gives each.  Checking
 * every offset (not only the size) catches a header change that keeps the size.  This assumes
 * the plugin's host and the compiler's target agree on the ABI, true for a native compiler. */
struct site_field
{
  const char *name;
  size_t offset;
  enum { F_U32, F_STR, F_PTR } kind;  /* not PTR: libiberty defines that macro */
};

static const site_field site_fields[] = {
  { "version", offsetof (struct spanprof_site, version), site_field::F_U32 },
  { "kind", offsetof (struct spanprof_site, kind), site_field::F_U32 },
  { "name", offsetof (struct spanprof_site, name), site_field::F_STR },
  { "file", offsetof (struct spanprof_site, file), site_field::F_STR },
  { "first_line", offsetof (struct spanprof_site, first_line), site_field::F_U32 },
  { "last_line", offsetof (struct spanprof_site, last_line), site_field::F_U32 },
  { "state", offsetof (struct spanprof_site, state), site_field::F_U32 },
  { "id", offsetof (struct spanprof_site, id), site_field::F_U32 },
  { "coz_begin", offsetof (struct spanprof_site, coz_begin), site_field::F_PTR },
  { "coz_end", offsetof (struct spanprof_site, coz_end), site_field::F_PTR },
};

/* A new field in the header must be added above (and SPANPROF_SITE_VERSION bumped). */
static_assert (sizeof (struct spanprof_site)
               == offsetof (struct spanprof_site, coz_end) + sizeof (void *),
               "struct spanprof_site grew: update site_fields in site.cc");
static_assert (SPANPROF_SITE_VERSION == 1, "struct spanprof_site version changed: update site.cc");

tree
spanplugin_site_type (void)
{
  if (site_type)
    return site_type;

  tree const_char_ptr = build_pointer_type (build_qualified_type (char_type_node, TYPE_QUAL_CONST));
  tree type = make_node (RECORD_TYPE);
  tree chain = NULL_TREE;
  for (const site_field &f : site_fields)
    {
      tree ftype = f.kind == site_field::F_U32 ? uint32_type_node
                   : f.kind == site_field::F_STR ? const_char_ptr
                   : ptr_type_node;
      tree field = build_decl (BUILTINS_LOCATION, FIELD_DECL, get_identifier (f.name), ftype);
      DECL_CONTEXT (field) = type;
      /* finish_builtin_struct wants the chain last field first. */
      DECL_CHAIN (field) = chain;
      chain = field;
    }
  finish_builtin_struct (type, "spanprof_site", chain, NULL_TREE);

  gcc_assert (tree_to_uhwi (TYPE_SIZE_UNIT (type)) == sizeof (struct spanprof_site));
  size_t i = 0;
  for (tree field = TYPE_FIELDS (type); field; field = DECL_CHAIN (field), i++)
    gcc_assert (i < ARRAY_SIZE (site_fields)
                && tree_to_uhwi (byte_position (field)) == site_fields[i].offset);
  gcc_assert (i == ARRAY_SIZE (site_fields));

  site_type = type;
  return site_type;
}

/* Returns the FIELD_DECL called NAME in the site record. */
static tree
site_field_decl (tree type, const char *name)
{
  for (tree field = TYPE_FIELDS (type); field; field = DECL_CHAIN (field))
    if (strcmp (IDENTIFIER_POINTER (DECL_NAME (field)), name) == 0)
      return field;
  gcc_unreachable ();
}

/* The address of SITE's state slot, for the inline test before each inserted call
 * (instrument.cc; see SPANPROF_STATE_OFF in spanprof.h). */
tree
spanplugin_site_state (tree site)
{
  tree field = site_field_decl (TREE_TYPE (site), "state");
  return build_fold_addr_expr (build3 (COMPONENT_REF, TREE_TYPE (field), site, field, NULL_TREE));
}

/* The address of NAME as a local, read-only char array in the section .spanprof_names (see the
 * header comment), for the "name" field of KEY's site of KIND.  Byte-aligned on purpose, so the
 * section holds the names back to back and not padded for speed as large arrays are. */
static tree
site_name (tree fndecl, tree key, const char *name, unsigned kind)
{
  size_t len = strlen (name) + 1;
  tree type = build_array_type (build_type_variant (char_type_node, 1, 0),
                                build_index_type (size_int (len - 1)));
  tree str = build_string (len, name);
  TREE_TYPE (str) = type;
  TREE_CONSTANT (str) = 1;
  TREE_READONLY (str) = 1;
  TREE_STATIC (str) = 1;

  const char *asmname = IDENTIFIER_POINTER (DECL_ASSEMBLER_NAME (key));
  if (asmname[0] == '*')
    asmname++;
  char *varname = concat (kind == SPANPROF_KIND_PROGRESS ? "__spanprof_progress_name."
                                                         : "__spanprof_name.",
                          asmname, NULL);
  tree var = build_decl (DECL_SOURCE_LOCATION (fndecl), VAR_DECL, get_identifier (varname), type);
  free (varname);
  TREE_STATIC (var) = 1;
  TREE_PUBLIC (var) = 0;
  TREE_READONLY (var) = 1;
  TREE_ADDRESSABLE (var) = 1;
  TREE_USED (var) = 1;
  DECL_ARTIFICIAL (var) = 1;
  DECL_IGNORED_P (var) = 1;
  SET_DECL_ALIGN (var, BITS_PER_UNIT);
  DECL_USER_ALIGN (var) = 1;
  DECL_INITIAL (var) = str;
  spanplugin_set_section (var, ".spanprof_names");
  varpool_node::add (var);
  return build_fold_addr_expr (var);
}

/* Emits the descriptor of KIND (span or progress point) for FNDECL (whose key is KEY) called
 * NAME, records it as KEY's site of that kind and returns its VAR_DECL. */
tree
spanplugin_build_site (tree fndecl, tree key, const char *name, unsigned kind, bool by_option)
{
  gcc_assert (kind < ARRAY_SIZE (site_maps));
  tree type = spanplugin_site_type ();
  function *fn = DECL_STRUCT_FUNCTION (fndecl);
  location_t end = fn ? fn->function_end_locus : UNKNOWN_LOCATION;
  unsigned first_line = DECL_SOURCE_LINE (fndecl);
  /* The end locus can be unknown (e.g. for compiler-made bodies); never report last < first. */
  unsigned last_line = end != UNKNOWN_LOCATION ? LOCATION_LINE (end) : first_line;
  if (last_line < first_line)
    last_line = first_line;
  const char *file = DECL_SOURCE_FILE (fndecl);

  vec<constructor_elt, va_gc> *elts = NULL;
  auto set = [&] (const char *field, tree value) {
    tree f = site_field_decl (type, field);
    CONSTRUCTOR_APPEND_ELT (elts, f, fold_convert (TREE_TYPE (f), value));
  };
  set ("version", build_int_cst (uint32_type_node, SPANPROF_SITE_VERSION));
  unsigned emitted = kind == SPANPROF_KIND_SPAN && by_option ? SPANPROF_KIND_SPAN_BY_OPTION : kind;
  set ("kind", build_int_cst (uint32_type_node, emitted));
  set ("name", site_name (fndecl, key, name, kind));
  set ("file", spanplugin_string_literal (file ? file : ""));
  set ("first_line", build_int_cst (uint32_type_node, first_line));
  set ("last_line", build_int_cst (uint32_type_node, last_line));
  /* state, id, coz_begin, coz_end: omitted, hence zero. */
  tree init = build_constructor (type, elts);
  TREE_CONSTANT (init) = 1;
  TREE_STATIC (init) = 1;

  /* Symbol "__spanprof_site.<function's assembler name>": readable in nm, unique in the unit,
   * and the '.' keeps it out of the C/C++ identifier space. */
  const char *asmname = IDENTIFIER_POINTER (DECL_ASSEMBLER_NAME (key));
  if (asmname[0] == '*')
    asmname++;
  char *varname = concat (kind == SPANPROF_KIND_PROGRESS ? "__spanprof_progress." : "__spanprof_site.",
                          asmname, NULL);
  tree var = build_decl (DECL_SOURCE_LOCATION (fndecl), VAR_DECL, get_identifier (varname), type);
  free (varname);

  TREE_STATIC (var) = 1;      /* static storage ... */
  TREE_PUBLIC (var) = 0;      /* ... local to the object file unless COMDAT below */
  TREE_READONLY (var) = 0;    /* writable: the runtime owns the trailing slots */
  TREE_ADDRESSABLE (var) = 1;
  TREE_USED (var) = 1;
  DECL_ARTIFICIAL (var) = 1;
  DECL_IGNORED_P (var) = 1;   /* no debug info for a compiler-made object */
  DECL_PRESERVE_P (var) = 0;  /* dies with the last call to its function */
  DECL_INITIAL (var) = init;

  if (needs_comdat_site (fndecl))
    {
      /* Hidden: one site per linked object, never interposed across shared objects. */
      TREE_PUBLIC (var) = 1;
      DECL_VISIBILITY (var) = VISIBILITY_HIDDEN;
      DECL_VISIBILITY_SPECIFIED (var) = 1;
      make_decl_one_only (var, DECL_ASSEMBLER_NAME (var));
      DECL_COMDAT (var) = 1;
    }

  varpool_node::add (var);

  if (!site_maps[kind])
    site_maps[kind] = new hash_map<tree, tree>;
  site_maps[kind]->put (key, var);
  site_list = tree_cons (key, var, site_list);
  return var;
}
