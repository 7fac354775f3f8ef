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
 * are a large part of the time, and the limit bounds the growth of the code.  A call to a
 * function GCC inlines whatever its size (always_inline) counts as that function's statements
 * too, and those of the always_inline functions it calls in turn: their bodies land in both
 * copies past the inliner's growth limits.  (Counted as one statement, a short wrapper around a
 * large always_inline template, of which zstd has dozens, was compiled whole twice: with every
 * function a span, zstd_lazy.c took 16 times the plain build's compile time.)  A function that
 * also has a progress point keeps one body (instrument.cc): the point's own site is tested on
 * every way out.  With `verbose`, a note names each function given the copy.
 */
#include "spanplugin.h"

/* A body's size as the off copy's limit sees it: statements (debug statements, labels and binds
 * do not count), always_inline callees' included. */
struct body_count
{
  int count;
  int limit;   /* past it the walk stops: the body is not copied */
  int depth;   /* always_inline calls followed to reach this body */
};

/* Deeper chains of always_inline calls than this count as too large. */
#define FORCED_INLINE_DEPTH 8

static bool
forced_inline_p (tree fn)
{
  return fn && TREE_CODE (fn) == FUNCTION_DECL
         && (DECL_DISREGARD_INLINE_LIMITS (fn)
             || lookup_attribute ("always_inline", DECL_ATTRIBUTES (fn)));
}

static void add_forced_inline (tree fn, body_count *c);

/* walk_tree callback over a body not yet in GIMPLE (a callee the compiler has not reached):
 * what becomes a statement (assignments, calls, returns, conditions, jumps) counts one. */
static tree
generic_count_op (tree *tp, int *walk_subtrees, void *data)
{
  body_count *c = (body_count *) data;
  tree t = *tp;
  if (TYPE_P (t) || DECL_P (t))
    {
      *walk_subtrees = 0;
      return NULL_TREE;
    }
  switch (TREE_CODE (t))
    {
    case CALL_EXPR:
      if (forced_inline_p (get_callee_fndecl (t)))
        add_forced_inline (get_callee_fndecl (t), c);
      /* fall through */
    case MODIFY_EXPR:
    case INIT_EXPR:
    case RETURN_EXPR:
    case COND_EXPR:
    case GOTO_EXPR:
    case SWITCH_EXPR:
      c->count++;
      break;
    default:
      break;
    }
  return c->count > c->limit ? t : NULL_TREE;
}

static bool
counted_stmt (gimple *stmt)
{
  return !is_gimple_debug (stmt) && gimple_code (stmt) != GIMPLE_BIND
         && gimple_code (stmt) != GIMPLE_LABEL;
}

/* walk_gimple_seq callback over an always_inline callee's GIMPLE body: counts only (what GCC
 * inlines it may have twice). */
static tree
callee_count_stmt (gimple_stmt_iterator *gsi, bool *handled_ops, struct walk_stmt_info *wi)
{
  body_count *c = (body_count *) wi->info;
  gimple *stmt = gsi_stmt (*gsi);
  if (is_gimple_call (stmt) && forced_inline_p (gimple_call_fndecl (stmt)))
    add_forced_inline (gimple_call_fndecl (stmt), c);
  c->count += counted_stmt (stmt);
  if (c->count <= c->limit)
    return NULL_TREE;
  *handled_ops = true;  /* as walk_gimple_stmt requires of a callback that stops the walk */
  return integer_one_node;
}

/* Adds to C the size of FN's body, which GCC will inline at the call: in GIMPLE when the
 * compiler has reached it already (in its blocks once it has a CFG), else as the front end left
 * it; nothing for a function defined elsewhere. */
static void
add_forced_inline (tree fn, body_count *c)
{
  if (c->count > c->limit)
    return;
  if (c->depth >= FORCED_INLINE_DEPTH)
    {
      c->count = c->limit + 1;
      return;
    }
  body_count inner = { c->count, c->limit, c->depth + 1 };
  function *callee = DECL_STRUCT_FUNCTION (fn);
  struct walk_stmt_info wi;
  memset (&wi, 0, sizeof wi);
  wi.info = &inner;
  if (callee && callee->cfg)  /* lowered: its statements are in its blocks */
    {
      basic_block bb;
      FOR_EACH_BB_FN (bb, callee)
        if (walk_gimple_seq (bb_seq (bb), callee_count_stmt, NULL, &wi) != NULL)
          break;
    }
  else if (gimple_has_body_p (fn))
    walk_gimple_seq (gimple_body (fn), callee_count_stmt, NULL, &wi);
  else if (DECL_SAVED_TREE (fn))
    walk_tree_without_duplicates (&DECL_SAVED_TREE (fn), generic_count_op, &inner);
  c->count = inner.count;
}

/* NULL_TREE if STMT may be in a body twice, counted in C; non-null otherwise, or once the
 * count is past the limit. */
static tree
copyable_stmt (gimple *stmt, body_count *c)
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
      if (forced_inline_p (gimple_call_fndecl (stmt)))
        add_forced_inline (gimple_call_fndecl (stmt), c);
      break;
    default:
      if (is_gimple_omp (stmt))
        return integer_one_node;
      break;
    }
  c->count += counted_stmt (stmt);
  return c->count > c->limit ? integer_one_node : NULL_TREE;
}

/* walk_gimple_seq callbacks: count the statements in *(body_count *) WI->info, stop the walk (a
 * non-null return, with *HANDLED_OPS set as walk_gimple_stmt then requires) at anything the
 * body may not contain twice, or past the limit. */
static tree
check_stmt (gimple_stmt_iterator *gsi, bool *handled_ops, struct walk_stmt_info *wi)
{
  tree stop = copyable_stmt (gsi_stmt (*gsi), (body_count *) wi->info);
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
  body_count count = { 0, spanplugin_opts.off_copy_max, 0 };
  struct walk_stmt_info wi;
  memset (&wi, 0, sizeof wi);
  wi.info = &count;
  if (walk_gimple_seq (body, check_stmt, check_op, &wi) != NULL)
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
