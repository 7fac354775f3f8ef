/* offpath.cc — the copy of a small span's body that runs while its recording is off.
 *
 * With the enter and exit calls merely skipped, a function still pays for being able to make
 * them: its arguments live across the possible enter call, so they go to callee-saved registers
 * (a push and a pop on every call), the value it returns lives across the possible exit call,
 * and a call whose value it returns is no longer a tail call.  A leaf of six instructions ending
 * in a jump grows to twenty with a frame.  Branch probabilities do not help: the register
 * allocator gives a variable one place for the whole function.
 *
 * So for a small body instrument.cc emits two copies, chosen once at the function's opening:
 *
 *     if (site.state != OFF && &__spanprof_enter != 0) goto on; else goto off;
 *   on:   enter call;  try { <body> } finally { guarded exit call };  goto done;
 *   off:  <copy of body>
 *   done:
 *
 * (With patch points, split.cc then moves the `on` copy into a clone of the function.)
 * The copy is the original code, which GCC compiles as if there were no instrumentation (no
 * frame where there was none, tail calls kept).  Taking it is exact: the runtime writes OFF
 * once, never changes it afterwards, and a function that entered the `on` copy tests the state
 * again before its exit call as before (a cost budget writes OFF only once no call can still be
 * inside the `on` copy: the runtime's collect/budgetoff.c).  The copy is made with GCC's own
 * copy_gimple_seq_and_replace_locals (local variables and labels renamed, static locals and
 * parameters shared).  Code GCC cannot safely have twice in one function is left as it was:
 * `asm goto` and basic asm statements (the kind that defines symbols; GCC itself copies the
 * others when it inlines or unrolls), labels whose address is taken (computed gotos,
 * `&&label` in a static table), nonlocal labels and gotos, calls that may return twice
 * (setjmp: the longjmp repair must stay in the one copy), the frame of nested functions,
 * OpenMP and transactional-memory regions.  Only bodies of at most `off-copy=N` statements are
 * copied (plugin.cc): the frame and the lost tail call matter on small functions, where they
 * are a large part of the time, and the limit bounds the growth of the code.  A function that
 * also has a progress point keeps one body (instrument.cc): the point's own site is tested on
 * every way out.  With `verbose`, a note names each function given the copy.
 */
#include "spanplugin.h"

/* NULL_TREE if STMT may be in a body twice, counted in *COUNT (debug statements, labels and
 * binds do not count); non-null otherwise. */
static tree
copyable_stmt (gimple *stmt, int *count)
{
  switch (gimple_code (stmt))
    {
    case GIMPLE_ASM:
      /* GCC itself copies asm statements (inlining, unrolling), but not `asm goto`, and a basic
       * asm (no operands) is the kind that defines symbols. */
      if (gimple_asm_nlabels (as_a<gasm *> (stmt)) != 0 || gimple_asm_input_p (as_a<gasm *> (stmt)))
        return integer_one_node;
      break;
    case GIMPLE_TRANSACTION:
      return integer_one_node;
    case GIMPLE_LABEL:
      {
        tree label = gimple_label_label (as_a<glabel *> (stmt));
        if (FORCED_LABEL (label) || DECL_NONLOCAL (label))
          return integer_one_node;
        break;
      }
    case GIMPLE_GOTO:
      if (TREE_CODE (gimple_goto_dest (stmt)) != LABEL_DECL)
        return integer_one_node;
      break;
    case GIMPLE_CALL:
      if (gimple_call_flags (stmt) & ECF_RETURNS_TWICE)
        return integer_one_node;
      break;
    default:
      if (is_gimple_omp (stmt))
        return integer_one_node;
      break;
    }
  if (!is_gimple_debug (stmt) && gimple_code (stmt) != GIMPLE_BIND
      && gimple_code (stmt) != GIMPLE_LABEL)
    ++*count;
  return NULL_TREE;
}

/* walk_gimple_seq callbacks: count the statements in *(int *) WI->info, stop the walk (a
 * non-null return, with *HANDLED_OPS set as walk_gimple_stmt then requires) at anything the
 * body may not contain twice. */
static tree
check_stmt (gimple_stmt_iterator *gsi, bool *handled_ops, struct walk_stmt_info *wi)
{
  tree stop = copyable_stmt (gsi_stmt (*gsi), (int *) wi->info);
  if (stop)
    *handled_ops = true;
  return stop;
}

/* The frame object of nested functions (DECL_NONLOCAL_FRAME) and labels a nested function
 * jumps to must stay single. */
static tree
check_op (tree *tp, int *walk_subtrees, void *data)
{
  (void) data;
  tree t = *tp;
  if (TYPE_P (t))
    {
      *walk_subtrees = 0;
      return NULL_TREE;
    }
  if (VAR_P (t) && DECL_NONLOCAL_FRAME (t))
    return t;
  if (TREE_CODE (t) == LABEL_DECL && (FORCED_LABEL (t) || DECL_NONLOCAL (t)))
    return t;
  return NULL_TREE;
}

/* Returns a copy of BODY (FUN's, as the pass finds it) for the `off` path, or NULL when the
 * option is off, the function is not optimised, BODY is larger than the limit or holds
 * something that must not be duplicated (see above). */
gimple_seq
spanplugin_off_copy (function *fun, gimple_seq body)
{
  if (spanplugin_opts.off_copy_max <= 0 || !optimize)
    return NULL;
  if (fun->static_chain_decl || fun->has_nonlocal_label || fun->has_forced_label_in_static
      || fun->calls_setjmp)
    return NULL;
  int count = 0;
  struct walk_stmt_info wi;
  memset (&wi, 0, sizeof wi);
  wi.info = &count;
  if (walk_gimple_seq (body, check_stmt, check_op, &wi) != NULL
      || count > spanplugin_opts.off_copy_max)
    return NULL;
  return copy_gimple_seq_and_replace_locals (body);
}

/* Appends to SEQ, for each integer or pointer parameter of FNDECL that can live in a register,
 *
 *     __asm__ ("" : "=r" (param) : "0" (param));
 *
 * which emits nothing.  It goes on the `on` path before the enter call: from there on that
 * path uses a value GCC cannot tell is the incoming one, so the parameter does not need to
 * live across the enter call on both paths.  Without it, GCC keeps the two copies' common uses
 * in one register for the whole function: one that survives calls, saved and restored on every
 * call, the `off` path's included, and merges their common computations before the choice.
 * (The price: on the `on` path, constants a caller passes are not folded into the body after
 * inlining.) */
void
spanplugin_fresh_params (gimple_seq *seq, tree fndecl, location_t loc)
{
  for (tree parm = DECL_ARGUMENTS (fndecl); parm; parm = DECL_CHAIN (parm))
    {
      tree type = TREE_TYPE (parm);
      if (TREE_ADDRESSABLE (parm) || TREE_THIS_VOLATILE (parm)
          || !(INTEGRAL_TYPE_P (type) || POINTER_TYPE_P (type))
          || TYPE_PRECISION (type) > BITS_PER_WORD)
        continue;
      vec<tree, va_gc> *outputs = NULL;
      vec<tree, va_gc> *inputs = NULL;
      vec_safe_push (outputs, build_tree_list (build_tree_list (NULL_TREE,
                                                                build_string (3, "=r")),
                                               parm));
      vec_safe_push (inputs, build_tree_list (build_tree_list (NULL_TREE, build_string (2, "0")),
                                              parm));
      gasm *fresh = gimple_build_asm_vec ("", inputs, outputs, NULL, NULL);
      gimple_set_location (fresh, loc);
      gimple_seq_add_stmt (seq, fresh);
    }
}
