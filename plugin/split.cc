/* split.cc — a span's recording body moved out of its function into a clone, so that while the
 * span is off the function is its own code plus one no-op.
 *
 * The off copy (offpath.cc) keeps a switched-off span's function free of the instrumentation's
 * frame and lost tail calls, but both bodies still live in one function: the inliner counts
 * them both (a small span stops being inlined where the plain build inlines it), and the
 * recording body's calls decide the registers of the whole function.  So, with patch points
 * (patch.cc), instrument.cc gives a span whose body gets the off copy this shape instead:
 *
 *     asm goto (<entry point>) : on;     a jump as compiled, a no-op once the span is off
 *     <copy of body>                     what runs while the span is off
 *   on:
 *     <enter guard> try { <body> } finally { <exit guards> }
 *
 * and this pass, a small IPA pass right after "visibility" (every function lowered, with its
 * CFG, not yet in SSA form nor inlined anywhere), makes of each such F two functions:
 *
 *     F              the entry point, then the copy of the body; at `on`, a call
 *                    `return F.spanprof.N (args);` predicted cold (a tail call where the ABI
 *                    allows one)
 *     F.spanprof.N   a local clone (GCC's function versioning) that takes `on` straight away:
 *                    the enter guard, the body and its exits, as instrument.cc wrote them;
 *                    never inlined
 *
 * so F's size, frame and registers are the plain build's, and a copy of F inlined into a caller
 * carries the entry point and the cold call: a span switched on records its inlined copies too,
 * each through the clone.  Exactness is the clone's: its enter and exit guards are the ones
 * every span has.  Functions that cannot be split this way keep the shape above, which is
 * correct on its own (the entry point chooses between the copies): variadic ones (the arguments
 * cannot be passed on), nested ones, always_inline ones, those with an argument or a result
 * passed by invisible reference or returned in memory, and those GCC will not version
 * (tree_versionable_function_p).  split=0 turns this off.  The clone's name, F.spanprof.N, is
 * what debuggers and sampling profilers show for the code that ran while the span recorded.
 *
 * Only bodies given the off copy (off-copy=N statements) are split: they are already compiled
 * twice, so the split costs little compile time, where splitting every span compiled SQLite
 * half as long again for a few more hundredths of run time while off (BENCHMARKS.md).
 */
#include "spanplugin.h"
#include "cfghooks.h"        /* create_empty_bb, redirect_edge_and_branch */
#include "tree-cfg.h"        /* label_to_block */
#include "tree-cfgcleanup.h" /* cleanup_tree_cfg */
#include "predict.h"         /* PRED_COLD_LABEL */
#include "cfgloop.h"         /* add_bb_to_loop */
#include "gimple-predict.h"  /* gimple_build_predict */

/* The functions instrument.cc gave the split shape in this unit, waiting for the pass.  GC root:
 * the decls must outlive the functions' own passes. */
static vec<tree, va_gc> *split_functions;

const struct ggc_root_tab spanplugin_split_roots[] = {
  { &split_functions, 1, sizeof (split_functions), gt_ggc_mx_vec_tree_va_gc_,
    gt_pch_nx_vec_tree_va_gc_ },
  LAST_GGC_ROOT_TAB
};

bool
spanplugin_split_possible (function *fun, tree fndecl)
{
  if (!spanplugin_opts.split || !spanplugin_patch_possible () || !optimize)
    return false;
  if (stdarg_p (TREE_TYPE (fndecl)) || fun->static_chain_decl
      || DECL_DISREGARD_INLINE_LIMITS (fndecl)
      || lookup_attribute ("always_inline", DECL_ATTRIBUTES (fndecl)))
    return false;
  tree result_type = TREE_TYPE (TREE_TYPE (fndecl));
  tree result = DECL_RESULT (fndecl);
  if (!VOID_TYPE_P (result_type)
      && (!is_gimple_reg_type (result_type) || (result && DECL_BY_REFERENCE (result))))
    return false;
  for (tree parm = DECL_ARGUMENTS (fndecl); parm; parm = DECL_CHAIN (parm))
    if (DECL_BY_REFERENCE (parm) || TREE_ADDRESSABLE (TREE_TYPE (parm)))
      return false;
  return true;
}

void
spanplugin_split_later (tree fndecl)
{
  vec_safe_push (split_functions, fndecl);
}

/* The entry point instrument.cc put first in FUN (the last statement of its first block that
 * is not empty: versioning gives the clone an empty one before it; an asm goto ends a block),
 * or NULL. */
static gasm *
entry_point (function *fun, gimple_stmt_iterator *where)
{
  basic_block first = single_succ (ENTRY_BLOCK_PTR_FOR_FN (fun));
  gimple_stmt_iterator gsi = gsi_last_nondebug_bb (first);
  while (gsi_end_p (gsi) && single_succ_p (first)
         && single_succ (first) != EXIT_BLOCK_PTR_FOR_FN (fun))
    {
      first = single_succ (first);
      gsi = gsi_last_nondebug_bb (first);
    }
  if (gsi_end_p (gsi))
    return NULL;
  gasm *point = dyn_cast<gasm *> (gsi_stmt (gsi));
  if (!point || !spanplugin_is_patch_point (point))
    return NULL;
  for (gimple_stmt_iterator before = gsi_start_bb (first); gsi_stmt (before) != point;
       gsi_next (&before))
    if (gimple_code (gsi_stmt (before)) != GIMPLE_LABEL && !is_gimple_debug (gsi_stmt (before)))
      return NULL;
  *where = gsi;
  return point;
}

/* The edge from POINT's block to its label `on`. */
static edge
on_edge (function *fun, gasm *point)
{
  basic_block on = label_to_block (fun, TREE_VALUE (gimple_asm_label_op (point, 0)));
  return find_edge (gimple_bb (point), on);
}

/* In the clone: the entry point removed, its block going straight to `on`; the copy of the body
 * becomes unreachable and goes. */
static void
take_on_path (function *fun, tree)
{
  gimple_stmt_iterator gsi;
  gasm *point = entry_point (fun, &gsi);
  gcc_assert (point);
  basic_block bb = gimple_bb (point);
  edge on = on_edge (fun, point);
  gcc_assert (on);
  for (edge_iterator ei = ei_start (bb->succs); ei_safe_edge (ei);)
    if (ei_edge (ei) != on)
      remove_edge (ei_edge (ei));
    else
      ei_next (&ei);
  gsi_remove (&gsi, true);
  on->flags = EDGE_FALLTHRU;
  on->probability = profile_probability::always ();
}

/* In F: `on` replaced by a cold block `[tmp =] CLONE (parameters); return [tmp];`; the recording
 * body becomes unreachable and goes. */
static void
call_clone (function *fun, tree clone)
{
  gimple_stmt_iterator gsi;
  gasm *point = entry_point (fun, &gsi);
  gcc_assert (point);
  edge on = on_edge (fun, point);
  gcc_assert (on);
  tree fndecl = fun->decl;
  gimple_seq seq = NULL;
  gimple_seq_add_stmt (&seq, gimple_build_predict (PRED_COLD_LABEL, NOT_TAKEN));
  auto_vec<tree> args;
  for (tree parm = DECL_ARGUMENTS (fndecl); parm; parm = DECL_CHAIN (parm))
    {
      tree arg = parm;
      if (is_gimple_reg_type (TREE_TYPE (parm)) && !is_gimple_val (parm))
        {
          /* A parameter whose address is taken is read into a temporary first. */
          arg = create_tmp_var (TREE_TYPE (parm));
          gimple_seq_add_stmt (&seq, gimple_build_assign (arg, parm));
        }
      args.safe_push (arg);
    }
  gcall *call = gimple_build_call_vec (clone, args);
  tree result = NULL_TREE;
  if (!VOID_TYPE_P (TREE_TYPE (TREE_TYPE (fndecl))))
    {
      result = create_tmp_var (TREE_TYPE (TREE_TYPE (fndecl)));
      gimple_call_set_lhs (call, result);
    }
  gimple_set_location (call, gimple_location (point));
  gimple_seq_add_stmt (&seq, call);
  greturn *ret = gimple_build_return (result);
  gimple_set_location (ret, gimple_location (point));
  gimple_seq_add_stmt (&seq, ret);

  basic_block call_bb = create_empty_bb (gimple_bb (point));
  if (current_loops)
    add_bb_to_loop (call_bb, gimple_bb (point)->loop_father);
  call_bb->count = on->count ();
  gimple_stmt_iterator at = gsi_start_bb (call_bb);
  gsi_insert_seq_after (&at, seq, GSI_NEW_STMT);
  make_edge (call_bb, EXIT_BLOCK_PTR_FOR_FN (fun), 0);
  redirect_edge_and_branch (on, call_bb);
}

/* Runs FN on FUN's body with FUN as the current function, then tidies its CFG and call graph. */
static void
edit_function (tree fndecl, void (*fn) (function *, tree), tree arg)
{
  tree saved_decl = current_function_decl;
  push_cfun (DECL_STRUCT_FUNCTION (fndecl));
  current_function_decl = fndecl;
  gimple_register_cfg_hooks ();
  fn (cfun, arg);
  cleanup_tree_cfg ();
  cgraph_edge::rebuild_edges ();
  pop_cfun ();
  current_function_decl = saved_decl;
}

static void
split_function (cgraph_node *node)
{
  tree fndecl = node->decl;
  function *fun = DECL_STRUCT_FUNCTION (fndecl);
  gimple_stmt_iterator gsi;
  if (!fun || !fun->cfg || !entry_point (fun, &gsi))
    return;
  cgraph_node *clone = node->create_version_clone_with_body (vNULL, NULL, NULL, NULL, NULL,
                                                             "spanprof");
  if (spanplugin_opts.verbose && clone)
    inform (DECL_SOURCE_LOCATION (fndecl),
            "spanplugin: %qD runs its own code while its span is off, and records through %qE",
            fndecl, DECL_NAME (clone->decl));
  else if (spanplugin_opts.verbose)
    inform (DECL_SOURCE_LOCATION (fndecl),
            "spanplugin: %qD runs a copy of its body while its span is off", fndecl);
  if (!clone)
    return;
  /* The clone is the recording body: inlined back into F, it would undo the split. */
  DECL_UNINLINABLE (clone->decl) = 1;
  edit_function (clone->decl, take_on_path, NULL_TREE);
  edit_function (fndecl, call_clone, clone->decl);
}

namespace {

const pass_data split_pass_data = {
  SIMPLE_IPA_PASS,
  "spanprof_split",
  OPTGROUP_NONE,
  TV_NONE,
  0, /* properties_required */
  0, /* properties_provided */
  0, /* properties_destroyed */
  0, /* todo_flags_start */
  0, /* todo_flags_finish */
};

class split_pass : public simple_ipa_opt_pass
{
public:
  split_pass (gcc::context *ctxt) : simple_ipa_opt_pass (split_pass_data, ctxt) {}
  bool gate (function *) final override { return split_functions != NULL; }
  unsigned int execute (function *) final override;
};

unsigned int
split_pass::execute (function *)
{
  vec<tree, va_gc> *todo = split_functions;
  split_functions = NULL;
  for (tree fndecl : *todo)
    {
      /* A static function nobody calls may be gone already. */
      cgraph_node *node = cgraph_node::get (fndecl);
      if (node && node->definition && node->has_gimple_body_p ())
        split_function (node);
    }
  vec_free (todo);
  return 0;
}

} // anon namespace

opt_pass *
spanplugin_make_split_pass (gcc::context *ctxt)
{
  return new split_pass (ctxt);
}
