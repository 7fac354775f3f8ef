/* instrument.cc — the GIMPLE pass that instruments the functions select.cc chooses (those
 * carrying the `span` attribute, and those the options select), the functions carrying the
 * `progress` attribute, and the setjmp-like calls of every function.
 *
 * Runs before the pass named "lower", on still-structured GIMPLE, and rewrites the body as
 *
 *     if (ON (site, __spanprof_enter)) __spanprof_enter (&site, __builtin_dwarf_cfa ());
 *     try { <original body> }
 *     finally { if (ON (site, __spanprof_exit)) __spanprof_exit (&site, __builtin_dwarf_cfa ()); }
 *
 * and for a progress point (with or without a span around the body; after the exit call):
 *
 *     try { <original body> }
 *     finally { [exit call;] if (ON (psite, __spanprof_progress)) __spanprof_progress (&psite); }
 *
 * where ON (site, hook) is `site.state != SPANPROF_STATE_OFF && &hook != 0` (add_guard): with
 * recording off no call is made.  By default (x86-64, aarch64) the enter and exit calls are the
 * inline path's instead (inline.cc): calls to the runtime's strong entry points (no address
 * test; the exit's without its state test here) that a late pass writes out as inline code after
 * the optimisers, with the exit's state test, recorded without a call while the site counts, the
 * runtime called otherwise.  With inline=0 the hooks are
 * weak, so an object compiled with the plugin also links and runs without the runtime (spans
 * off).  A small span's body (offpath.cc) is
 * also copied, and the enter call's guard chooses between the two:
 *
 *     if (ON (site, __spanprof_enter)) { enter call; try { <body> } finally { <exit> } }
 *     else <copy of body>
 *
 * so that with recording off the function runs its own code, shaped as without the plugin; with
 * patch points the entry point chooses instead, and split.cc later moves the `if` branch into a
 * clone of the function.  In every function, instrumented or not,
 * each call that may return twice (setjmp, vfork, …) is bracketed as
 *
 *     depth = __spanprof_setjmp_depth ();  setjmp (env);  __spanprof_setjmp_return (depth);
 *
 * (each call only if its weak hook is there) so the runtime drops the frames of spans a longjmp
 * left (see instrument_returns_twice).
 *
 * The span's shape is the one gimplify_function_tree gives -finstrument-functions.  Because the
 * finally clause is lowered by GCC itself (lower_try_finally / EH lowering), every way out gets
 * its exit call: each return, C++ exceptions unwinding through the frame, and calls that were tail calls
 * (they stop being tail calls).  The pair also stays around the body when it is later inlined.
 * Dump: -fdump-tree-all contains "*.spanprof" (-fdump-tree-spanprof alone is rejected by GCC 12,
 * which parses options before plugins register passes).
 */
#include "spanplugin.h"
#include "hash-set.h"
#include "memmodel.h"  /* MEMMODEL_RELAXED */
#include "spanprof.h"   /* SPANPROF_KIND_* */

/* The runtime hooks, built once.  GC roots: they outlive any one function. */
static tree enter_decl;
static tree exit_decl;
static tree progress_decl;
static tree setjmp_depth_decl;
static tree setjmp_return_decl;

const struct ggc_root_tab spanplugin_instrument_roots[] = {
  { &enter_decl, 1, sizeof (enter_decl), gt_ggc_mx_tree_node, gt_pch_nx_tree_node },
  { &exit_decl, 1, sizeof (exit_decl), gt_ggc_mx_tree_node, gt_pch_nx_tree_node },
  { &progress_decl, 1, sizeof (progress_decl), gt_ggc_mx_tree_node, gt_pch_nx_tree_node },
  { &setjmp_depth_decl, 1, sizeof (setjmp_depth_decl), gt_ggc_mx_tree_node, gt_pch_nx_tree_node },
  { &setjmp_return_decl, 1, sizeof (setjmp_return_decl), gt_ggc_mx_tree_node,
    gt_pch_nx_tree_node },
  LAST_GGC_ROOT_TAB
};

/* Every hook is declared `weak`: an object compiled with the plugin links without the runtime
 * (a build's host tools often get the CFLAGS but not the LIBS), and each inserted call is made
 * only when the hook's address is not null (add_guard).  The flip side: a weak reference alone
 * neither pulls libspanprof.a's member out of the archive nor keeps libspanprof.so under
 * --as-needed; `pkg-config --libs spanprof` links it with --no-as-needed (see docs/manual.md, *Linking*).
 * The exception: with the inline path (inline.cc) the span's hooks are strong (WEAK false), as
 * the inline code needs the runtime's data anyway. */
static void
make_hook (tree decl, bool weak = true)
{
  TREE_NOTHROW (decl) = 1;
  if (weak)
    declare_weak (decl);
}

/* void NAME (struct spanprof_site *, void *frame), as in spanprof.h, declared nothrow so the
 * finally clause needs no EH region of its own, weak (above), and `noplt`: in
 * position-independent code the call goes through the GOT instead of a PLT stub (~1 ns less per
 * span with the shared runtime; the address test loads the same GOT entry, so the call then
 * goes through a register; with the static runtime the linker turns the load into a `lea`).
 * Not `leaf`: keep assumptions about the runtime to the minimum. */
static tree
build_hook_decl (const char *name)
{
  tree fntype = build_function_type_list (void_type_node,
                                         build_pointer_type (spanplugin_site_type ()),
                                         ptr_type_node, NULL_TREE);
  tree decl = build_fn_decl (name, fntype);
  DECL_ATTRIBUTES (decl) = tree_cons (get_identifier ("noplt"), NULL_TREE, NULL_TREE);
  make_hook (decl, !spanplugin_inline_possible ());
  return decl;
}

static void
build_hook_decls (void)
{
  if (!enter_decl)
    enter_decl = build_hook_decl ("__spanprof_enter");
  if (!exit_decl)
    exit_decl = build_hook_decl (SPANPLUGIN_EXIT_HOOK);
  if (!progress_decl)
    {
      /* void __spanprof_progress (struct spanprof_site *), nothrow and weak like the others. */
      tree fntype = build_function_type_list (void_type_node,
                                             build_pointer_type (spanplugin_site_type ()),
                                             NULL_TREE);
      progress_decl = build_fn_decl ("__spanprof_progress", fntype);
      make_hook (progress_decl);
    }
}

/* Appends `if (&HOOK != 0) goto call; else goto SKIP;  call:` to SEQ. */
static void
add_hook_test (gimple_seq *seq, tree hook, tree skip, location_t loc)
{
  tree call = create_artificial_label (loc);
  gcond *test = gimple_build_cond (NE_EXPR, build_fold_addr_expr (hook), null_pointer_node,
                                   call, skip);
  gimple_set_location (test, loc);
  gimple_seq_add_stmt (seq, test);
  gimple_seq_add_stmt (seq, gimple_build_label (call));
}

/* Appends to SEQ the guard of a call to HOOK for SITE (see spanprof.h):
 *
 *     state = __atomic_load_4 (&SITE.state, relaxed);   a plain load on x86
 *     if (state != SPANPROF_STATE_OFF) goto test; else goto skip;
 *   test:
 *     if (&HOOK != 0) goto call; else goto skip;          (not with the inline path: HOOK NULL)
 *   call:
 *
 * and returns the label `skip`, for the caller to append after the call (the inline path's late
 * pass finds the state this load read, and tests it again, inline.cc).  The state test comes
 * first: with recording off it is all that runs (a load from a static of this object, one
 * compare, one branch taken the same way every time); the address test only runs on the way to
 * a call.  A site stays NEW (0) until its first call, which registers it, so a NEW site must
 * call: only OFF is tested.  The state is read afresh before each call (the enter call may just
 * have changed it), as a relaxed atomic load: never cached across calls or hoisted out of a
 * loop, and seen by ThreadSanitizer as the atomic read it is (the runtime stores the state
 * atomically while other threads test it).  Plain labels and conditional gotos, as the gimplifier writes an `if` before "lower":
 * in a finally clause, lower_try_finally copies them (renamed) for each way out.  With PATCH, a
 * span's patch point comes first (patch.cc): a jump to the load, which the runtime turns into a
 * no-op going straight to `skip` once the site is OFF for good. */
static tree
add_guard (gimple_seq *seq, tree hook, tree site, location_t loc, bool patch = false)
{
  tree skip = create_artificial_label (loc);
  tree test = create_artificial_label (loc);
  if (patch)
    {
      /*   asm goto (<patch point>) : guard;  goto skip;  guard:   (patch.cc) */
      tree guard = create_artificial_label (loc);
      gasm *point = spanplugin_build_patch_point (site, guard);
      gimple_set_location (point, loc);
      gimple_seq_add_stmt (seq, point);
      gimple_seq_add_stmt (seq, gimple_build_goto (skip));
      gimple_seq_add_stmt (seq, gimple_build_label (guard));
    }
  tree state = create_tmp_var (uint32_type_node, "spanprof_state");
  gcall *load = gimple_build_call (builtin_decl_explicit (BUILT_IN_ATOMIC_LOAD_4), 2,
                                   spanplugin_site_state (site),
                                   build_int_cst (integer_type_node, MEMMODEL_RELAXED));
  gimple_call_set_lhs (load, state);
  gimple_set_location (load, loc);
  gimple_seq_add_stmt (seq, load);
  gcond *off = gimple_build_cond (NE_EXPR, state,
                                  build_int_cst (uint32_type_node, SPANPROF_STATE_OFF),
                                  test, skip);
  gimple_set_location (off, loc);
  gimple_seq_add_stmt (seq, off);
  gimple_seq_add_stmt (seq, gimple_build_label (test));
  if (hook)
    add_hook_test (seq, hook, skip, loc);
  return skip;
}

/* Appends the guarded `frame = __builtin_dwarf_cfa (); HOOK (&SITE, frame);` to SEQ.
 * The canonical frame address (one `lea`, no frame pointer needed) names the activation
 * independently of the frame's size: a callee inlined into its caller gets the caller's,
 * siblings called from one frame share one, a frame a longjmp jumped over has a lower one.
 * That is how the runtime finds frames a longjmp abandoned.  The cleanup computes it again
 * rather than keeping a register live across the whole body. */
static void
add_unguarded_hook_call (gimple_seq *seq, tree hook, tree site, location_t loc)
{
  tree frame = create_tmp_var (ptr_type_node, "spanprof_frame");
  gcall *get_frame = gimple_build_call (builtin_decl_explicit (BUILT_IN_DWARF_CFA), 0);
  gimple_call_set_lhs (get_frame, frame);
  gimple_set_location (get_frame, loc);
  gimple_seq_add_stmt (seq, get_frame);
  gcall *call = gimple_build_call (hook, 2, build_fold_addr_expr (site), frame);
  gimple_set_location (call, loc);
  gimple_seq_add_stmt (seq, call);
}

/* The span's enter and exit, behind their guards: with the inline path (INLINE_PATH, inline.cc)
 * recorded inline when the state allows and through the runtime otherwise; without it, calls to
 * the hooks (weak ones, unless the inline path is on for this compilation).  The inline path's
 * exit is one call here, its guard written by the late pass with the rest (inline.cc): a test
 * at every way out that the optimisers and late warnings never see (GCC 11's predicate analysis
 * gives up on a variable set before it and used after it, where the plain build's does not).
 * The enter's guard label `skip` is returned rather than placed when OFF_LABEL is given: the
 * caller puts the copy of the body that runs while the span is off there (offpath.cc), after
 * the fresh parameters.  OWN_POINT false: the guard has no patch point, the caller's entry
 * point comes before it (the split shape, split.cc). */
static void
add_enter (gimple_seq *seq, tree fndecl, tree site, location_t loc, bool inline_path,
           tree *off_label, bool own_point = true)
{
  bool weak = !spanplugin_inline_possible ();
  tree skip = add_guard (seq, weak ? enter_decl : NULL_TREE, site, loc,
                         own_point && spanplugin_patch_possible ());
  if (off_label)
    spanplugin_fresh_params (seq, fndecl, loc);
  if (inline_path)
    spanplugin_add_inline_enter (seq, site, loc);
  else
    add_unguarded_hook_call (seq, enter_decl, site, loc);
  if (off_label)
    *off_label = skip;
  else
    gimple_seq_add_stmt (seq, gimple_build_label (skip));
}

static void
add_exit (gimple_seq *seq, tree site, location_t loc, bool inline_path)
{
  if (inline_path)
    {
      spanplugin_add_inline_exit (seq, site, exit_decl, loc);
      return;
    }
  bool weak = !spanplugin_inline_possible ();
  tree skip = add_guard (seq, weak ? exit_decl : NULL_TREE, site, loc,
                         spanplugin_patch_possible ());
  add_unguarded_hook_call (seq, exit_decl, site, loc);
  gimple_seq_add_stmt (seq, gimple_build_label (skip));
}

/* Appends the guarded `__spanprof_progress (&SITE);` to SEQ. */
static void
add_progress_call (gimple_seq *seq, tree site, location_t loc)
{
  tree skip = add_guard (seq, progress_decl, site, loc);
  gcall *call = gimple_build_call (progress_decl, 1, build_fold_addr_expr (site));
  gimple_set_location (call, loc);
  gimple_seq_add_stmt (seq, call);
  gimple_seq_add_stmt (seq, gimple_build_label (skip));
}

/* size_t __spanprof_setjmp_depth (void) and void __spanprof_setjmp_return (size_t), as in
 * spanprof.h.  nothrow, weak and noplt like the other hooks, and `leaf`: they never call back into
 * the program nor longjmp, so in a function that calls setjmp they get no abnormal edge to the
 * setjmp receiver (every other call there does), which would only hamper optimisation.  Not
 * `pure`: the depth call must stay where it is, before the returns-twice call. */
static void
build_setjmp_decls (void)
{
  if (setjmp_depth_decl)
    return;
  tree attrs = tree_cons (get_identifier ("leaf"), NULL_TREE,
                          tree_cons (get_identifier ("noplt"), NULL_TREE, NULL_TREE));
  tree fntype = build_function_type_list (size_type_node, NULL_TREE);
  setjmp_depth_decl = build_fn_decl ("__spanprof_setjmp_depth", fntype);
  DECL_ATTRIBUTES (setjmp_depth_decl) = attrs;
  make_hook (setjmp_depth_decl);
  fntype = build_function_type_list (void_type_node, size_type_node, NULL_TREE);
  setjmp_return_decl = build_fn_decl ("__spanprof_setjmp_return", fntype);
  DECL_ATTRIBUTES (setjmp_return_decl) = copy_list (attrs);
  make_hook (setjmp_return_decl);
}

/* walk_gimple_seq_mod callback: around a call that may return twice (setjmp, _setjmp,
 * sigsetjmp, __sigsetjmp, __builtin_setjmp, savectx, vfork, getcontext, anything declared
 * returns_twice), writes
 *
 *     depth = 0;  if (&__spanprof_setjmp_depth != 0) depth = __spanprof_setjmp_depth ();
 *     [lhs =] setjmp (...);
 *     if (&__spanprof_setjmp_return != 0) __spanprof_setjmp_return (depth);
 *
 * (the hooks are weak: without the runtime linked in neither call is made; there is no site,
 * hence no state test).  The second call runs after each return: the first, where it finds the stack as deep as
 * before and does nothing, and each one through longjmp/siglongjmp/setcontext, where the spans
 * entered since are gone and it drops their frames.  `depth` is set before the call and never
 * written after it, so it is what the C standard promises survives a longjmp: GCC keeps it
 * where a longjmp restores it (a callee-saved register or the frame), with no -Wclobbered
 * warning (it is a compiler temporary, not a variable of the program).  Sets the bool
 * *WI->info. */
static tree
instrument_returns_twice (gimple_stmt_iterator *gsi, bool *handled_ops, struct walk_stmt_info *wi)
{
  gcall *call = dyn_cast<gcall *> (gsi_stmt (*gsi));
  if (!call || !(gimple_call_flags (call) & ECF_RETURNS_TWICE))
    return NULL_TREE;
  *handled_ops = true;
  build_setjmp_decls ();
  location_t loc = gimple_location (call);
  tree depth = create_tmp_var (size_type_node, "spanprof_setjmp_depth");
  gimple_seq before = NULL;
  gassign *zero = gimple_build_assign (depth, build_zero_cst (size_type_node));
  gimple_set_location (zero, loc);
  gimple_seq_add_stmt (&before, zero);
  tree skip = create_artificial_label (loc);
  add_hook_test (&before, setjmp_depth_decl, skip, loc);
  gcall *get = gimple_build_call (setjmp_depth_decl, 0);
  gimple_call_set_lhs (get, depth);
  gimple_set_location (get, loc);
  gimple_seq_add_stmt (&before, get);
  gimple_seq_add_stmt (&before, gimple_build_label (skip));
  gsi_insert_seq_before (gsi, before, GSI_SAME_STMT);

  gimple_seq after = NULL;
  skip = create_artificial_label (loc);
  add_hook_test (&after, setjmp_return_decl, skip, loc);
  gcall *repair = gimple_build_call (setjmp_return_decl, 1, depth);
  gimple_set_location (repair, loc);
  gimple_seq_add_stmt (&after, repair);
  gimple_seq_add_stmt (&after, gimple_build_label (skip));
  /* Leaves *GSI on the returns-twice call; the walk then visits the inserted statements, none
   * of which returns twice. */
  gsi_insert_seq_after (gsi, after, GSI_SAME_STMT);
  if (spanplugin_opts.verbose)
    {
      tree callee = gimple_call_fndecl (call);
      if (callee)
        inform (loc, "spanplugin: shadow stack repaired after each return of %qD", callee);
      else
        inform (loc, "spanplugin: shadow stack repaired after each return of this call");
    }
  *(bool *) wi->info = true;
  return NULL_TREE;
}

/* Instruments every returns-twice call in BODY (see above); returns whether there was one. */
static bool
instrument_setjmp_calls (gimple_seq *body)
{
  bool found = false;
  struct walk_stmt_info wi;
  memset (&wi, 0, sizeof wi);
  wi.info = &found;
  walk_gimple_seq_mod (body, instrument_returns_twice, NULL, &wi);
  return found;
}

static const pass_data span_pass_data = {
  GIMPLE_PASS,      /* type */
  "spanprof",       /* name */
  OPTGROUP_NONE,    /* optinfo_flags */
  TV_NONE,          /* tv_id */
  PROP_gimple_any,  /* properties_required: structured GIMPLE, before "lower" */
  0,                /* properties_provided */
  0,                /* properties_destroyed */
  0,                /* todo_flags_start */
  0,                /* todo_flags_finish */
};

namespace {

/* Keys of functions already reported for carrying both span and nospan, or (verbose) as left
 * out for their size. */
hash_set<tree> conflicts_reported;
hash_set<tree> small_reported;

class span_pass : public gimple_opt_pass
{
public:
  span_pass (gcc::context *ctxt) : gimple_opt_pass (span_pass_data, ctxt) {}

  /* A new object per instance, as the pass manager expects. */
  opt_pass *clone () final override { return new span_pass (m_ctxt); }

  /* Every function: the choice (select.cc) needs the merged attributes and is made in execute. */
  bool gate (function *fun) final override
  {
    return fun && fun->decl;
  }

  unsigned int execute (function *fun) final override;
};

/* Whether FNDECL gets its span: what select.cc chose, with the diagnostics that go with it;
 * *BY_OPTION tells whether an option rather than the attribute chose it. */
static bool
wants_span (tree fndecl, tree key, function *fun, bool *by_option)
{
  int size = 0;
  switch (spanplugin_select (fndecl, key, fun, &size))
    {
    case SPANPLUGIN_SKIP:
      return false;
    case SPANPLUGIN_SKIP_SMALL:
      /* Once per function, as the note of an instrumented one; naked ones, silently. */
      if (spanplugin_opts.verbose && !lookup_attribute ("naked", DECL_ATTRIBUTES (fndecl))
          && (fndecl == key || !small_reported.add (key)))
        {
          if (lookup_attribute ("always_inline", DECL_ATTRIBUTES (fndecl)))
            inform_n (DECL_SOURCE_LOCATION (fndecl), size,
                      "spanplugin: left out %qs: %d statement, always inlined (min-size=%d)",
                      "spanplugin: left out %qs: %d statements, always inlined (min-size=%d)",
                      lang_hooks.decl_printable_name (key, 1), size, spanplugin_opts.min_size);
          else
            inform_n (DECL_SOURCE_LOCATION (fndecl), size,
                      "spanplugin: left out %qs: %d statement, no loop (min-size=%d)",
                      "spanplugin: left out %qs: %d statements, no loop (min-size=%d)",
                      lang_hooks.decl_printable_name (key, 1), size, spanplugin_opts.min_size);
        }
      return false;
    case SPANPLUGIN_CONFLICT:
      /* Once per function, not once per clone. */
      if (fndecl == key || !conflicts_reported.add (key))
        error_at (DECL_SOURCE_LOCATION (fndecl),
                  "%qs and %qs attributes on the same function %qD",
                  SPANPLUGIN_ATTR_NAME, SPANPLUGIN_NOSPAN_ATTR_NAME, key);
      return false;
    case SPANPLUGIN_BY_OPTION:
      /* A naked function has no frame to put calls in; options skip it silently. */
      *by_option = true;
      return !lookup_attribute ("naked", DECL_ATTRIBUTES (fndecl));
    case SPANPLUGIN_BY_ATTRIBUTE:
      if (lookup_attribute ("naked", DECL_ATTRIBUTES (fndecl)))
        {
          warning_at (DECL_SOURCE_LOCATION (fndecl), OPT_Wattributes,
                      "%qs attribute ignored on a %<naked%> function", SPANPLUGIN_ATTR_NAME);
          return false;
        }
      return true;
    }
  gcc_unreachable ();
}

/* Whether FNDECL gets a progress point: by attribute, or by name (progress=GLOB, with the same
 * exceptions as the options that choose spans); never in the functions that never get a span
 * either (they only forward to one that has the point). */
static bool
wants_progress (tree fndecl, tree key)
{
  if (spanplugin_is_cdtor_forwarder (fndecl) || spanplugin_is_thunk (fndecl))
    return false;
  bool naked = lookup_attribute ("naked", DECL_ATTRIBUTES (fndecl)) != NULL_TREE;
  if (spanplugin_has_progress (fndecl))
    {
      if (naked)
        warning_at (DECL_SOURCE_LOCATION (fndecl), OPT_Wattributes,
                    "%qs attribute ignored on a %<naked%> function",
                    SPANPLUGIN_PROGRESS_ATTR_NAME);
      return !naked;
    }
  return !naked && spanplugin_selectable (fndecl, key)
         && spanplugin_name_matches (spanplugin_opts.progress, key);
}

/* The site of KIND (span or progress point) for FNDECL, built when KEY has none yet (C++ cdtor
 * clones share their origin's), with the verbose note once per site, not once per clone. */
static tree
get_site (tree fndecl, tree key, unsigned kind, bool by_option, location_t loc)
{
  tree site = spanplugin_lookup_site (key, kind);
  if (site != NULL_TREE)
    return site;
  /* Copied: in C++ the printable name lives in a small ring of buffers that later calls
   * reuse. */
  bool is_span = kind == SPANPROF_KIND_SPAN;
  char *name = xstrdup (is_span ? spanplugin_span_name (fndecl, key)
                                : spanplugin_progress_name (fndecl, key));
  site = spanplugin_build_site (fndecl, key, name, kind, by_option);
  if (spanplugin_opts.verbose && is_span)
    inform (loc, "spanplugin: instrumented %qs", name);
  else if (spanplugin_opts.verbose)
    inform (loc, "spanplugin: progress point %qs", name);
  free (name);
  return site;
}

unsigned int
span_pass::execute (function *fun)
{
  tree fndecl = fun->decl;
  gimple_seq body = gimple_body (fndecl);
  if (body == NULL)
    return 0;

  /* C++ cdtor clones share their origin's sites; the first clone seen builds them. */
  tree key = spanplugin_site_key (fndecl);
  bool by_option = false;
  bool span = wants_span (fndecl, key, fun, &by_option);
  if (spanplugin_has_span (fndecl) && spanplugin_has_nospan (fndecl))
    return 0;  /* wants_span reported the conflict: leave the function alone */
  bool progress = wants_progress (fndecl, key);
  /* Every function, span or not: a longjmp back to any setjmp abandons the spans entered since.
   * (A naked function has no frame for the saved depth.) */
  if (!lookup_attribute ("naked", DECL_ATTRIBUTES (fndecl))
      && instrument_setjmp_calls (&body) && !span && !progress)
    gimple_set_body (fndecl, body);
  if (!span && !progress)
    return 0;

  build_hook_decls ();
  location_t begin_loc = DECL_SOURCE_LOCATION (fndecl);
  location_t end_loc = fun->function_end_locus != UNKNOWN_LOCATION
                         ? fun->function_end_locus : begin_loc;
  gimple_seq new_body = NULL;
  gimple_seq cleanup = NULL;

  /* The inline path for spans chosen by their attribute and for those an option chose that the
   * default size rule keeps; a smaller one (min-size below its default) calls the runtime
   * (spanplugin_small_body).  Judged on the body as written, before the off copy is made. */
  bool inline_path = span && spanplugin_inline_possible ()
                     && (spanplugin_opts.inline_path == SPANPLUGIN_INLINE_ALL || !by_option
                         || !spanplugin_small_body (fndecl));
  /* A small span's body gets a copy that runs while the span is off (offpath.cc); a progress
   * point has a site of its own to test on every way out, so its function keeps one body.
   * With patch points, the recording body then goes to a clone where it can (split.cc). */
  gimple_seq off_body = span && !progress ? spanplugin_off_copy (fun, body) : NULL;
  bool split = off_body && spanplugin_split_possible (fun, fndecl);
  tree off_label = NULL_TREE;
  tree split_done = NULL_TREE;

  /* The span first: the progress point's call goes after the exit call, so the work is done
   * (and timed) when the point counts it. */
  if (span)
    {
      tree site = get_site (fndecl, key, SPANPROF_KIND_SPAN, by_option, begin_loc);
      /* Enter at the function's opening, exit at its closing brace: where a debugger or a
       * sampling profiler expects code that belongs to the function as a whole. */
      /* (A split function's note comes from the split, which may still refuse it.) */
      if (off_body && !split && spanplugin_opts.verbose)
        inform (begin_loc, "spanplugin: %qD runs a copy of its body while its span is off",
                fndecl);
      if (split)
        {
          /*   asm goto (<entry point>) : on;  <copy of body>  goto done;
           *   on:  <enter guard>  try { <body> } finally { <exit> }  done:   */
          tree on_label = create_artificial_label (begin_loc);
          gasm *point = spanplugin_build_patch_point (site, on_label);
          gimple_set_location (point, begin_loc);
          gimple_seq_add_stmt (&new_body, point);
          gimple_seq_add_seq (&new_body, off_body);
          off_body = NULL;
          split_done = create_artificial_label (end_loc);
          gimple_seq_add_stmt (&new_body, gimple_build_goto (split_done));
          gimple_seq_add_stmt (&new_body, gimple_build_label (on_label));
          add_enter (&new_body, fndecl, site, begin_loc, inline_path, NULL, false);
          spanplugin_split_later (fndecl);
        }
      else
        /* The guard of the enter call chooses the copy: `off` when it would skip the call. */
        add_enter (&new_body, fndecl, site, begin_loc, inline_path,
                   off_body ? &off_label : NULL);
      add_exit (&cleanup, site, end_loc, inline_path);
    }
  if (progress)
    {
      tree site = get_site (fndecl, key, SPANPROF_KIND_PROGRESS, false, begin_loc);
      add_progress_call (&cleanup, site, end_loc);
    }

  gtry *tf = gimple_build_try (body, cleanup, GIMPLE_TRY_FINALLY);
  gimple_seq_add_stmt (&new_body, tf);
  if (split_done)
    gimple_seq_add_stmt (&new_body, gimple_build_label (split_done));
  if (off_body)
    {
      /*   goto done;  off: <copy of body>  done:   (the end of the function) */
      tree done = create_artificial_label (end_loc);
      gimple_seq_add_stmt (&new_body, gimple_build_goto (done));
      gimple_seq_add_stmt (&new_body, gimple_build_label (off_label));
      gimple_seq_add_seq (&new_body, off_body);
      gimple_seq_add_stmt (&new_body, gimple_build_label (done));
    }
  /* Like gimplify_function_tree: the body must stay a single outer GIMPLE_BIND. */
  gbind *bind = gimple_build_bind (NULL_TREE, new_body, NULL_TREE);
  gimple_seq seq = NULL;
  gimple_seq_add_stmt (&seq, bind);
  gimple_set_body (fndecl, seq);
  return 0;
}

} // anon namespace

opt_pass *
spanplugin_make_pass (gcc::context *ctxt)
{
  return new span_pass (ctxt);
}
