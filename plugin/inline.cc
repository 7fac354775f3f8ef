/* inline.cc — the inline path: the enter and exit of a span recorded by the instrumented code
 * itself, without calling the runtime, while the site is in the counting state
 * (SPANPROF_STATE_COUNT: SPANPROF=count and SPANPROF=sample) or in exact recording's plain one
 * (SPANPROF_STATE_FAST: bare rdtsc timestamps, no histogram).
 *
 * Through the runtime's entry points (runtime/record/hotpath.h, inlined into span.c), a span
 * costs a call and a return at each end besides the work: 1.3 ns of the 3.9 ns a counting span
 * call adds through them on the micro-benchmark, and the caller's registers around it.  This file
 * writes the same work as GIMPLE, against the layout spanprof.h publishes (SPANPROF_ABI_*), and
 * leaves every other case to the runtime: a site in any other state, a dead or full top frame, a
 * child found neither by the parent's hint nor in the thread's child cache, an exit that is not
 * the top frame's.  Written before "lower", as plain labels and conditional gotos (instrument.cc
 * does the same), so that lower_try_finally can copy the exit onto every way out.
 *
 * Only for x86-64 with 64-bit pointers (the offsets, the `lea` naming the entering code and the
 * signal-atomic `addq` are that target's) and without ThreadSanitizer; elsewhere, and with
 * inline=0, instrument.cc emits calls.  Objects with the inline path refer to the runtime
 * strongly under versioned names, so a runtime of another layout fails the link (spanprof.h,
 * section 5).
 */
#include "spanplugin.h"
#include "memmodel.h"  /* MEMMODEL_SEQ_CST */
#include "predict.h"
#include "gimple-predict.h"  /* gimple_build_predict: the runtime calls are the rare way */
#include "spanprof.h"   /* SPANPROF_ABI_*, SPANPROF_STATE_FAST, SPANPROF_STATE_COUNT */

/* The runtime's TLS pointer and its enter for objects with the inline path.  GC roots. */
static tree thread_decl;
static tree enter_abi_decl;

const struct ggc_root_tab spanplugin_inline_roots[] = {
  { &thread_decl, 1, sizeof (thread_decl), gt_ggc_mx_tree_node, gt_pch_nx_tree_node },
  { &enter_abi_decl, 1, sizeof (enter_abi_decl), gt_ggc_mx_tree_node, gt_pch_nx_tree_node },
  LAST_GGC_ROOT_TAB
};

bool
spanplugin_inline_possible (void)
{
#if defined(__x86_64__)
  /* A native compiler's target is the plugin's own host; -m32 and -mx32 are left out.  So is
   * -fsanitize=thread: its runtime sees the inline path's plain stores and `addq` as races with
   * the report writers' atomic loads (the runtime, built with it, uses atomics instead). */
  return spanplugin_opts.inline_path && TYPE_PRECISION (ptr_type_node) == 64
         && POINTER_SIZE == 64 && !(flag_sanitize & SANITIZE_THREAD);
#else
  return false;
#endif
}

/* extern __thread void *SPANPROF_ABI_THREAD, initial-exec (one %fs-relative load after the GOT
 * load, as the runtime reads it), and void SPANPROF_ABI_ENTER (site *, void *, uintptr_t). */
static void
build_decls (void)
{
  if (thread_decl)
    return;
  thread_decl = build_decl (BUILTINS_LOCATION, VAR_DECL, get_identifier (SPANPROF_ABI_THREAD),
                            ptr_type_node);
  TREE_PUBLIC (thread_decl) = 1;
  DECL_EXTERNAL (thread_decl) = 1;
  DECL_ARTIFICIAL (thread_decl) = 1;
  set_decl_tls_model (thread_decl, TLS_MODEL_INITIAL_EXEC);
  tree fntype = build_function_type_list (void_type_node,
                                         build_pointer_type (spanplugin_site_type ()),
                                         ptr_type_node, pointer_sized_int_node, NULL_TREE);
  enter_abi_decl = build_fn_decl (SPANPROF_ABI_ENTER, fntype);
  TREE_NOTHROW (enter_abi_decl) = 1;
  DECL_ATTRIBUTES (enter_abi_decl) = tree_cons (get_identifier ("noplt"), NULL_TREE, NULL_TREE);
}

/* A builder for the statements of one inline sequence, all at one location. */
struct emitter
{
  gimple_seq *seq;
  location_t loc;

  void add (gimple *g)
  {
    gimple_set_location (g, loc);
    gimple_seq_add_stmt (seq, g);
  }
  void label (tree l) { gimple_seq_add_stmt (seq, gimple_build_label (l)); }
  /* The label of the runtime call: predicted not taken, as a label marked `cold` is, so that
   * the inline path is the straight line and the call goes out of the way. */
  void cold_label (tree l)
  {
    label (l);
    add (gimple_build_predict (PRED_COLD_LABEL, NOT_TAKEN));
  }
  tree new_label () { return create_artificial_label (loc); }
  /* A fresh temporary set to RHS. */
  tree let (tree type, tree rhs, const char *name)
  {
    tree t = create_tmp_var (type, name);
    add (gimple_build_assign (t, rhs));
    return t;
  }
  tree let_op (tree type, enum tree_code code, tree a, tree b, const char *name)
  {
    tree t = create_tmp_var (type, name);
    add (gimple_build_assign (t, code, a, b));
    return t;
  }
  /* if (A CODE B) goto YES; else goto NO; */
  void branch (enum tree_code code, tree a, tree b, tree yes, tree no)
  {
    add (gimple_build_cond (code, a, b, yes, no));
  }
  /* if (A CODE B) goto YES;  (falls through to a fresh label otherwise) */
  void branch_if (enum tree_code code, tree a, tree b, tree yes)
  {
    tree no = new_label ();
    branch (code, a, b, yes, no);
    label (no);
  }
  /* A fresh temporary holding __builtin_dwarf_cfa (): the activation's name, as instrument.cc
   * passes it to the runtime. */
  tree frame_address ()
  {
    tree cfa = create_tmp_var (ptr_type_node, "spanprof_frame");
    gcall *get = gimple_build_call (builtin_decl_explicit (BUILT_IN_DWARF_CFA), 0);
    gimple_call_set_lhs (get, cfa);
    add (get);
    return cfa;
  }
  void fence ()
  {
    add (gimple_build_call (builtin_decl_explicit (BUILT_IN_ATOMIC_SIGNAL_FENCE), 1,
                            build_int_cst (integer_type_node, MEMMODEL_SEQ_CST)));
  }
};

/* A volatile asm statement TEMPLATE with one output OUT under CONSTRAINT (and CLOBBER, or NULL),
 * or with OUT as an in/out memory operand (CONSTRAINT "+m") and the input IN ("er", or NULL). */
static void
add_asm (emitter &e, const char *templ, const char *constraint, tree out, tree in,
         const char *clobber)
{
  vec<tree, va_gc> *outputs = NULL, *inputs = NULL, *clobbers = NULL;
  vec_safe_push (outputs, build_tree_list (build_tree_list (NULL_TREE,
                                                            build_string (strlen (constraint) + 1,
                                                                          constraint)),
                                           out));
  if (in)
    vec_safe_push (inputs, build_tree_list (build_tree_list (NULL_TREE, build_string (3, "er")),
                                            in));
  if (clobber)
    vec_safe_push (clobbers, build_tree_list (NULL_TREE,
                                              build_string (strlen (clobber) + 1, clobber)));
  gasm *g = gimple_build_asm_vec (templ, inputs, outputs, clobbers, NULL);
  gimple_asm_set_volatile (g, true);
  e.add (g);
}

/* A fresh temporary holding the time-stamp counter: rdtsc, as the runtime's __rdtsc (). */
static tree
read_tsc (emitter &e)
{
  tree now = create_tmp_var (uint64_type_node, "spanprof_now");
  add_asm (e, "rdtsc\n\tsalq $32, %%rdx\n\torq %%rdx, %%rax", "=a", now, NULL_TREE, "rdx");
  return now;
}

/* *MEM += VALUE (or 1, VALUE NULL) in one instruction (counter.h: signal-atomic, no lock). */
static void
add_to_counter (emitter &e, tree mem, tree value)
{
  add_asm (e, "addq %1, %0", "+m", mem, value ? value : build_int_cst (uint64_type_node, 1),
           NULL);
}

/* The TYPE-typed memory at BASE + OFFSET, with alias set 0 (a ref-all pointer type): the
 * runtime's data may alias anything the program holds. */
static tree
mem_at (tree type, tree base, HOST_WIDE_INT offset)
{
  tree ref_all = build_pointer_type_for_mode (char_type_node, ptr_mode, true);
  return build2 (MEM_REF, type, base, build_int_cst (ref_all, offset));
}

static tree
load (emitter &e, tree type, tree base, HOST_WIDE_INT offset, const char *name)
{
  return e.let (type, mem_at (type, base, offset), name);
}

static void
store (emitter &e, tree base, HOST_WIDE_INT offset, tree value)
{
  e.add (gimple_build_assign (mem_at (TREE_TYPE (value), base, offset), value));
}

/* The frame's fields, as spanprof__push_frame writes them (twice: see there). */
static void
store_frame (emitter &e, tree frame, tree node, tree cfa, tree entry, tree ret)
{
  store (e, frame, SPANPROF_ABI_FRAME_NODE, node);
  store (e, frame, SPANPROF_ABI_FRAME_CFA, cfa);
  store (e, frame, SPANPROF_ABI_FRAME_ENTRY, entry);
  store (e, frame, SPANPROF_ABI_FRAME_RETURN, ret);
}

/* Appends to SEQ the inline enter of SITE, for a site whose STATE is neither OFF nor anything
 * the caller already branched away (instrument.cc tests OFF first):
 *
 *     cfa = __builtin_dwarf_cfa ();  entry = <address of this code>;
 *     if (state != COUNT && state != FAST) goto call;
 *     t = SPANPROF_ABI_THREAD;  f = t->top;  ret = *(cfa - 8);
 *     if (f->cfa <= cfa && (f->cfa != cfa || f->entry == entry || f->ret != ret)) goto call;
 *     if (f == t->limit) goto call;
 *     n = f->node->hint;
 *     if (n->site != &SITE) {
 *         n = t->child_cache[slot (f->node, &SITE)];
 *         if (n->site != &SITE || n->parent != f->node) goto call;
 *     }
 *     n->calls += 1;  push (f + 1: n, cfa, entry, ret);
 *     (f + 1)->start = state == FAST ? rdtsc : 0;  goto done;
 *   call:
 *     SPANPROF_ABI_ENTER (&SITE, cfa, entry);
 *   done:
 *
 * The tests are the runtime's (hotpath.h, spanprof__record_enter), in its order; so are the
 * stores.  No call on the way through: 59 instructions for the enter and the exit together
 * (callgrind, counting; 81 through the entry points). */
void
spanplugin_add_inline_enter (gimple_seq *seq, tree site, tree state, location_t loc)
{
  build_decls ();
  emitter e = { seq, loc };
  tree uptr = pointer_sized_int_node;
  tree site_addr = build_fold_addr_expr (site);
  tree call = e.new_label (), done = e.new_label ();

  tree cfa = e.frame_address ();
  /* The address of this code, as a call's return address would name it: each inlined or
   * cloned copy of the function gets its own.  Volatile, so that no two copies are merged. */
  tree entry = create_tmp_var (uptr, "spanprof_entry");
  add_asm (e, "lea 0(%%rip), %0", "=r", entry, NULL_TREE, NULL);
  tree inline_state = e.new_label ();
  e.branch_if (EQ_EXPR, state, build_int_cst (uint32_type_node, SPANPROF_STATE_COUNT),
               inline_state);
  e.branch_if (NE_EXPR, state, build_int_cst (uint32_type_node, SPANPROF_STATE_FAST), call);
  e.label (inline_state);

  tree t = e.let (ptr_type_node, thread_decl, "spanprof_thread");
  tree f = load (e, ptr_type_node, t, SPANPROF_ABI_THREAD_TOP, "spanprof_top");
  tree ret = load (e, uptr, cfa, -(HOST_WIDE_INT) sizeof (void *), "spanprof_return");
  tree cfa_int = e.let (uptr, fold_convert (uptr, cfa), "spanprof_cfa");
  /* The top frame dead or re-entered: f->cfa <= cfa && (f->cfa != cfa || ...). */
  tree f_cfa = load (e, uptr, f, SPANPROF_ABI_FRAME_CFA, "spanprof_top_cfa");
  tree alive = e.new_label (), same = e.new_label ();
  e.branch (GT_EXPR, f_cfa, cfa_int, alive, same);
  e.label (same);
  e.branch_if (NE_EXPR, f_cfa, cfa_int, call);
  e.branch_if (EQ_EXPR, load (e, uptr, f, SPANPROF_ABI_FRAME_ENTRY, "spanprof_top_entry"), entry,
               call);
  e.branch (NE_EXPR, load (e, uptr, f, SPANPROF_ABI_FRAME_RETURN, "spanprof_top_return"), ret,
            call, alive);
  e.label (alive);
  e.branch_if (EQ_EXPR, f, load (e, ptr_type_node, t, SPANPROF_ABI_THREAD_LIMIT, "spanprof_limit"),
               call);

  /* The child: the parent's hint, else the thread's cache (childcache.h). */
  tree parent = load (e, ptr_type_node, f, SPANPROF_ABI_FRAME_NODE, "spanprof_parent");
  tree n = create_tmp_var (ptr_type_node, "spanprof_node");
  e.add (gimple_build_assign (n, mem_at (ptr_type_node, parent, SPANPROF_ABI_NODE_HINT)));
  tree found = e.new_label (), cache = e.new_label ();
  e.branch (EQ_EXPR, load (e, ptr_type_node, n, SPANPROF_ABI_NODE_SITE, "spanprof_hint_site"),
            site_addr, found, cache);
  e.label (cache);
  tree h = e.let_op (uint64_type_node, LSHIFT_EXPR,
                     e.let (uint64_type_node, fold_convert (uint64_type_node, site_addr),
                            "spanprof_site"),
                     build_int_cst (integer_type_node, 16), "spanprof_hash");
  h = e.let_op (uint64_type_node, BIT_XOR_EXPR, h,
                e.let (uint64_type_node, fold_convert (uint64_type_node, parent), "spanprof_p"),
                "spanprof_hash");
  h = e.let_op (uint64_type_node, MULT_EXPR, h,
                build_int_cst (uint64_type_node, SPANPROF_ABI_CHILD_HASH), "spanprof_hash");
  h = e.let_op (uint64_type_node, RSHIFT_EXPR, h,
                build_int_cst (integer_type_node, 64 - SPANPROF_ABI_CHILD_CACHE_BITS),
                "spanprof_slot");
  h = e.let_op (uint64_type_node, MULT_EXPR, h, build_int_cst (uint64_type_node, sizeof (void *)),
                "spanprof_slot");
  tree slot = e.let_op (ptr_type_node, POINTER_PLUS_EXPR, t,
                        e.let (sizetype, fold_convert (sizetype, h), "spanprof_slot"),
                        "spanprof_slot");
  e.add (gimple_build_assign (n, mem_at (ptr_type_node, slot, SPANPROF_ABI_THREAD_CHILD_CACHE)));
  e.branch_if (NE_EXPR, load (e, ptr_type_node, n, SPANPROF_ABI_NODE_SITE, "spanprof_c_site"),
               site_addr, call);
  e.branch_if (NE_EXPR, load (e, ptr_type_node, n, SPANPROF_ABI_NODE_PARENT, "spanprof_c_parent"),
               parent, call);
  e.label (found);

  add_to_counter (e, mem_at (uint64_type_node, n, SPANPROF_ABI_NODE_CALLS), NULL_TREE);
  /* The push: fields, top (the commit), fields again (spanprof__push_frame). */
  tree g = e.let_op (ptr_type_node, POINTER_PLUS_EXPR, f, size_int (SPANPROF_ABI_FRAME_SIZE),
                     "spanprof_new_top");
  store_frame (e, g, n, cfa_int, entry, ret);
  e.fence ();
  store (e, t, SPANPROF_ABI_THREAD_TOP, g);
  e.fence ();
  store_frame (e, g, n, cfa_int, entry, ret);
  /* The start last, so the bookkeeping above is not charged to the span: rdtsc (FAST) or 0. */
  tree timed = e.new_label (), untimed = e.new_label ();
  e.branch (EQ_EXPR, state, build_int_cst (uint32_type_node, SPANPROF_STATE_FAST), timed,
            untimed);
  e.label (timed);
  store (e, g, SPANPROF_ABI_FRAME_START, read_tsc (e));
  e.add (gimple_build_goto (done));
  e.label (untimed);
  store (e, g, SPANPROF_ABI_FRAME_START, build_zero_cst (uint64_type_node));
  e.add (gimple_build_goto (done));

  e.cold_label (call);
  e.add (gimple_build_call (enter_abi_decl, 3, site_addr, cfa, entry));
  e.label (done);
}

/* Appends to E's sequence the pop of SITE's frame at frame address CFA, for the exit of a site
 * counting (NOW NULL) or timed (NOW: the exit's timestamp): the test that the top frame is this
 * activation's (else to CALL), the duration charged when timed, the pop, then to DONE. */
static void
add_pop (emitter &e, tree site_addr, tree cfa, tree now, tree call, tree done)
{
  tree uptr = pointer_sized_int_node;
  tree t = e.let (ptr_type_node, thread_decl, "spanprof_thread");
  tree f = load (e, ptr_type_node, t, SPANPROF_ABI_THREAD_TOP, "spanprof_top");
  tree node = load (e, ptr_type_node, f, SPANPROF_ABI_FRAME_NODE, "spanprof_node");
  e.branch_if (NE_EXPR, load (e, ptr_type_node, node, SPANPROF_ABI_NODE_SITE, "spanprof_site"),
               site_addr, call);
  e.branch_if (NE_EXPR, load (e, uptr, f, SPANPROF_ABI_FRAME_CFA, "spanprof_top_cfa"),
               e.let (uptr, fold_convert (uptr, cfa), "spanprof_cfa"), call);
  if (now)
    {
      /* d = max ((int64_t) (now - start), 0): total and the parent's child time (counter.h). */
      tree d = e.let_op (uint64_type_node, MINUS_EXPR, now,
                         load (e, uint64_type_node, f, SPANPROF_ABI_FRAME_START, "spanprof_start"),
                         "spanprof_ticks");
      tree sd = e.let (long_long_integer_type_node, fold_convert (long_long_integer_type_node, d),
                       "spanprof_ticks");
      sd = e.let_op (long_long_integer_type_node, MAX_EXPR, sd,
                     build_zero_cst (long_long_integer_type_node), "spanprof_ticks");
      d = e.let (uint64_type_node, fold_convert (uint64_type_node, sd), "spanprof_ticks");
      add_to_counter (e, mem_at (uint64_type_node, node, SPANPROF_ABI_NODE_TOTAL), d);
      tree parent = load (e, ptr_type_node, f,
                          SPANPROF_ABI_FRAME_NODE - (HOST_WIDE_INT) SPANPROF_ABI_FRAME_SIZE,
                          "spanprof_parent");
      add_to_counter (e, mem_at (uint64_type_node, parent, SPANPROF_ABI_NODE_CHILD), d);
    }
  e.fence ();
  tree below = e.let_op (ptr_type_node, POINTER_PLUS_EXPR, f,
                         size_int (-(HOST_WIDE_INT) SPANPROF_ABI_FRAME_SIZE), "spanprof_new_top");
  store (e, t, SPANPROF_ABI_THREAD_TOP, below);
  e.add (gimple_build_goto (done));
}

/* Appends to SEQ the inline exit of SITE, for a site whose STATE is not OFF:
 *
 *     cfa = __builtin_dwarf_cfa ();
 *     if (state == COUNT) { POP; goto done; }
 *     if (state != FAST) goto call;
 *     now = rdtsc;  POP, charging now - start;  goto done;
 *   call:
 *     EXIT_HOOK (&SITE, cfa);
 *   done:
 *
 * where POP is add_pop's: `f = t->top;  if (f->node->site != &SITE || f->cfa != cfa) goto call;`,
 * when timed `d = max ((int64_t) (now - f->start), 0);  f->node->total += d;
 * (f - 1)->node->child += d;`, then `t->top = f - 1`: spanprof__record_exit's work, its
 * timestamp first, so the bookkeeping is not charged.  The two modes get a tail each, so the
 * counting one tests the state once. */
void
spanplugin_add_inline_exit (gimple_seq *seq, tree site, tree state, tree exit_hook,
                            location_t loc)
{
  build_decls ();
  emitter e = { seq, loc };
  tree site_addr = build_fold_addr_expr (site);
  tree call = e.new_label (), done = e.new_label ();

  tree cfa = e.frame_address ();
  tree counting = e.new_label (), other = e.new_label ();
  e.branch (EQ_EXPR, state, build_int_cst (uint32_type_node, SPANPROF_STATE_COUNT), counting,
            other);
  e.label (counting);
  add_pop (e, site_addr, cfa, NULL_TREE, call, done);
  e.label (other);
  e.branch_if (NE_EXPR, state, build_int_cst (uint32_type_node, SPANPROF_STATE_FAST), call);
  add_pop (e, site_addr, cfa, read_tsc (e), call, done);

  e.cold_label (call);
  e.add (gimple_build_call (exit_hook, 2, site_addr, cfa));
  e.label (done);
}
