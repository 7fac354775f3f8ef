/* inline.cc — the inline path: the enter and exit of a span recorded by the instrumented code
 * itself, without calling the runtime, while the site is in the counting state
 * (SPANPROF_STATE_COUNT: SPANPROF=count and SPANPROF=sample), in exact recording's plain one
 * (SPANPROF_STATE_FAST: bare rdtsc timestamps, no histogram) or in that one with tracing
 * (SPANPROF_STATE_TRACE: each enter and exit also an event of the thread's trace ring, pushed
 * by one call of the runtime's push; SPANPROF_TRACE and the flight recorder).
 *
 * Through the runtime's entry points (runtime/record/hotpath.h, inlined into span.c), a span
 * costs a call and a return at each end besides the work: 1.3 ns of the 3.9 ns a counting span
 * call adds through them on the micro-benchmark, and the caller's registers around it.  This file
 * writes the same work as GIMPLE, against the layout spanprof.h publishes (SPANPROF_ABI_*), and
 * leaves every other case to the runtime: a site in any other state, a dead or full top frame, a
 * child found neither by the parent's hint nor in the thread's child cache, an exit that is not
 * the top frame's.
 *
 * In two steps.  Before "lower", instrument.cc asks for the enter and the exit, and gets plain
 * calls: the enter SPANPROF_ABI_ENTER (&site, cfa, entry) behind instrument.cc's test of the
 * state, the exit __spanprof_exit (&site, cfa) without one (the runtime's exit does nothing for
 * an OFF site), the site marked as recorded inline (mark_site).  So lower_try_finally copies the
 * exit onto every way out, inlining copies both into callers, and the GIMPLE optimisers and the
 * late warnings (-Wmaybe-uninitialized's predicate analysis, -Wdangling-pointer) see one opaque
 * nothrow call at each end: the branches of the inline code, and of the exit's test, made them
 * warn where the plain build does not.  Then a pass of this file after the last of them
 * ("optimized", before "expand"; at every -O level, and in the LTO ltrans stage when the plugin
 * is given at link time) writes each such call out as the inline code, the exit's test of the
 * state first, on SSA form and the CFG: the call itself stays as the way to the runtime, on the
 * rare branches.  Where that pass does not run (-flto without the plugin at link time) the calls
 * stay calls, to the same runtime entry points, and record the same: only slower (and the exit's
 * call is made with recording off too).  With inline-copies=0 the pass leaves the copies GCC
 * inlined into other functions as calls too, the exit's given only its guard: each copy of the
 * inline code adds some hundreds of bytes for GCC's later passes to compile (zstd's -all build:
 * BENCHMARKS.md).
 *
 * Only for 64-bit pointers (the offsets) on x86-64 (`lea` names the entering code, rdtsc times,
 * a plain `addq` counts, signal-atomically) and aarch64 (`adr`, isb + mrs cntvct_el0, the
 * counts as relaxed atomic adds: GCC's ldadd or ldxr/stxr, see runtime/record/counter.h; the
 * frame's return address is not read there, as the runtime does not read it: target.h), and
 * without ThreadSanitizer; elsewhere, and with inline=0, instrument.cc emits calls to the weak
 * hooks.  Objects with the inline path refer to
 * the runtime strongly under versioned names, so a runtime of another layout fails the link
 * (spanprof.h, section 5).
 */
#include "spanplugin.h"
#include "memmodel.h"  /* MEMMODEL_SEQ_CST, MEMMODEL_RELAXED */
#include "ssa.h"
#include "cfgloop.h"
#include "tree-into-ssa.h"  /* mark_virtual_operands_for_renaming */
#include "tree-dfa.h"       /* get_addr_base_and_unit_offset */
#include "tree-cfg.h"       /* gimple_block_label */
#include "spanprof.h"   /* SPANPROF_ABI_*, SPANPROF_STATE_FAST, SPANPROF_STATE_COUNT */

/* The runtime's TLS pointer and its enter for objects with the inline path.  GC roots. */
static tree thread_decl;
static tree enter_abi_decl;
static tree trace_push_decl;

const struct ggc_root_tab spanplugin_inline_roots[] = {
  { &thread_decl, 1, sizeof (thread_decl), gt_ggc_mx_tree_node, gt_pch_nx_tree_node },
  { &enter_abi_decl, 1, sizeof (enter_abi_decl), gt_ggc_mx_tree_node, gt_pch_nx_tree_node },
  { &trace_push_decl, 1, sizeof (trace_push_decl), gt_ggc_mx_tree_node, gt_pch_nx_tree_node },
  LAST_GGC_ROOT_TAB
};

/* The mark of a site whose exit is recorded inline (mark_site).  A space, so no attribute a
 * program writes can be spelled so; in DECL_ATTRIBUTES, so LTO streams it with the site. */
#define INLINE_SITE_MARK "spanprof inline"

/* The target is the one of the compiler that loads the plugin, known from that compiler's own
 * target headers (tm.h, through gcc-plugin.h): a cross plugin is built on one machine for a
 * compiler that writes code for another (an x86-64 plugin for aarch64-linux-gnu-gcc), so the
 * __x86_64__ of the machine that compiles the plugin says nothing about the code it writes.
 * X86_64_REGPARM_MAX is defined by config/i386/i386.h alone. */
#if defined(X86_64_REGPARM_MAX)
#define SPANPLUGIN_TARGET_X86 1
#else
#define SPANPLUGIN_TARGET_X86 0
#endif
#if defined(GCC_AARCH64_H)
#define SPANPLUGIN_TARGET_AARCH64 1
#else
#define SPANPLUGIN_TARGET_AARCH64 0
#endif

bool
spanplugin_inline_possible (void)
{
#if SPANPLUGIN_TARGET_X86
  /* x86 targets: -m32 and -mx32 are left out.  So is -fsanitize=thread: its runtime sees the
   * inline path's plain stores and `addq` as races with the report writers' atomic loads (the
   * runtime, built with it, uses atomics instead). */
  return spanplugin_opts.inline_path && TYPE_PRECISION (ptr_type_node) == 64
         && POINTER_SIZE == 64 && !(flag_sanitize & SANITIZE_THREAD);
#elif SPANPLUGIN_TARGET_AARCH64
  /* LP64 only (-mabi=ilp32 has 32-bit pointers); no ThreadSanitizer, as on x86. */
  return spanplugin_opts.inline_path && TYPE_PRECISION (ptr_type_node) == 64
         && POINTER_SIZE == 64 && !(flag_sanitize & SANITIZE_THREAD);
#else
  return false;
#endif
}

/* void SPANPROF_ABI_ENTER (site *, void *, uintptr_t), nothrow and `noplt` like the hooks. */
static void
build_enter_decl (void)
{
  if (enter_abi_decl)
    return;
  tree fntype = build_function_type_list (void_type_node,
                                         build_pointer_type (spanplugin_site_type ()),
                                         ptr_type_node, pointer_sized_int_node, NULL_TREE);
  enter_abi_decl = build_fn_decl (SPANPROF_ABI_ENTER, fntype);
  TREE_NOTHROW (enter_abi_decl) = 1;
  DECL_ATTRIBUTES (enter_abi_decl) = tree_cons (get_identifier ("noplt"), NULL_TREE, NULL_TREE);
}

/* extern __thread void *SPANPROF_ABI_THREAD, initial-exec (one %fs-relative load after the GOT
 * load, as the runtime reads it).  Made in the late pass, so in the LTO ltrans stage too: the
 * unit's own declaration when it has one (its symbol table knows the name). */
static tree
get_thread_decl (void)
{
  if (thread_decl)
    return thread_decl;
  symtab_node *known = symtab_node::get_for_asmname (get_identifier (SPANPROF_ABI_THREAD));
  if (known && VAR_P (known->decl))
    return thread_decl = known->decl;
  thread_decl = build_decl (BUILTINS_LOCATION, VAR_DECL, get_identifier (SPANPROF_ABI_THREAD),
                            ptr_type_node);
  TREE_PUBLIC (thread_decl) = 1;
  DECL_EXTERNAL (thread_decl) = 1;
  DECL_ARTIFICIAL (thread_decl) = 1;
  set_decl_tls_model (thread_decl, TLS_MODEL_INITIAL_EXEC);
  return thread_decl;
}

/* uint64_t SPANPROF_ABI_TRACE_PUSH (site *, uintptr_t), nothrow, leaf and `noplt`: made in the
 * late pass, so the unit's own declaration when it has one, as get_thread_decl. */
static tree
get_trace_push_decl (void)
{
  if (trace_push_decl)
    return trace_push_decl;
  symtab_node *known = symtab_node::get_for_asmname (get_identifier (SPANPROF_ABI_TRACE_PUSH));
  if (known && TREE_CODE (known->decl) == FUNCTION_DECL)
    return trace_push_decl = known->decl;
  tree fntype = build_function_type_list (uint64_type_node, ptr_type_node, pointer_sized_int_node,
                                         NULL_TREE);
  trace_push_decl = build_fn_decl (SPANPROF_ABI_TRACE_PUSH, fntype);
  TREE_NOTHROW (trace_push_decl) = 1;
  DECL_ATTRIBUTES (trace_push_decl)
    = tree_cons (get_identifier ("noplt"), NULL_TREE,
                 tree_cons (get_identifier ("leaf"), NULL_TREE, NULL_TREE));
  return trace_push_decl;
}

/* Marks SITE as one whose exit the late pass writes out: its exit call is __spanprof_exit, the
 * same hook a span that calls the runtime uses (spanplugin_small_body), so the call alone does
 * not tell. */
static void
mark_site (tree site)
{
  if (!lookup_attribute (INLINE_SITE_MARK, DECL_ATTRIBUTES (site)))
    DECL_ATTRIBUTES (site) = tree_cons (get_identifier (INLINE_SITE_MARK), NULL_TREE,
                                        DECL_ATTRIBUTES (site));
}

/* A volatile asm statement TEMPLATE with one output OUT under CONSTRAINT (and CLOBBER, or NULL),
 * or with OUT as an in/out memory operand (CONSTRAINT "+m") and the input IN ("er", or NULL). */
static gasm *
build_asm (const char *templ, const char *constraint, tree out, tree in, const char *clobber)
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
  if (TREE_CODE (out) == SSA_NAME)
    SSA_NAME_DEF_STMT (out) = g;
  return g;
}

/* Appends `frame = __builtin_dwarf_cfa ();` to SEQ and returns the temporary: the activation's
 * name, as instrument.cc passes it to the runtime. */
static tree
add_frame_address (gimple_seq *seq, location_t loc)
{
  tree cfa = create_tmp_var (ptr_type_node, "spanprof_frame");
  gcall *get = gimple_build_call (builtin_decl_explicit (BUILT_IN_DWARF_CFA), 0);
  gimple_call_set_lhs (get, cfa);
  gimple_set_location (get, loc);
  gimple_seq_add_stmt (seq, get);
  return cfa;
}

/* Appends to SEQ the enter of SITE on the inline path, for a site whose state the caller found
 * not OFF (instrument.cc's guard):
 *
 *     cfa = __builtin_dwarf_cfa ();  entry = <address of this code>;
 *     SPANPROF_ABI_ENTER (&SITE, cfa, entry);
 *
 * a call the late pass writes out as the inline enter (expand_enter), keeping it as the way to
 * the runtime. */
void
spanplugin_add_inline_enter (gimple_seq *seq, tree site, location_t loc)
{
  build_enter_decl ();
  mark_site (site);
  tree cfa = add_frame_address (seq, loc);
  /* The address of this code, as a call's return address would name it: each inlined or
   * cloned copy of the function gets its own.  Volatile, so that no two copies are merged. */
  tree entry = create_tmp_var (pointer_sized_int_node, "spanprof_entry");
#if SPANPLUGIN_TARGET_AARCH64
  gasm *lea = build_asm ("adr %0, .", "=r", entry, NULL_TREE, NULL);
#else
  gasm *lea = build_asm ("lea 0(%%rip), %0", "=r", entry, NULL_TREE, NULL);
#endif
  gimple_set_location (lea, loc);
  gimple_seq_add_stmt (seq, lea);
  gcall *call = gimple_build_call (enter_abi_decl, 3, build_fold_addr_expr (site), cfa, entry);
  gimple_set_location (call, loc);
  gimple_seq_add_stmt (seq, call);
}

/* Appends to SEQ the exit of SITE on the inline path, unguarded:
 * `cfa = __builtin_dwarf_cfa ();  EXIT_HOOK (&SITE, cfa);`, written out by the late pass with
 * its test of the state (expand_exit). */
void
spanplugin_add_inline_exit (gimple_seq *seq, tree site, tree exit_hook, location_t loc)
{
  mark_site (site);
  tree cfa = add_frame_address (seq, loc);
  gcall *call = gimple_build_call (exit_hook, 2, build_fold_addr_expr (site), cfa);
  gimple_set_location (call, loc);
  gimple_seq_add_stmt (seq, call);
}

/* ---- the late pass: the calls written out --------------------------------------------------- */

/* A builder of inline code in the CFG, in SSA form: statements appended to the block BB, each
 * branch ending it with two edges, the runtime call CALL_BB (the call the code replaces, alone in
 * its block) on the rare ones, DONE_BB the rest of the function.  Blocks are entered in order,
 * after every edge into them is made, so each one's count is the sum of its incoming edges'. */
struct emitter
{
  basic_block bb;
  basic_block call_bb;
  basic_block done_bb;
  location_t loc;
  cgraph_node *node;

  void add (gimple *g)
  {
    gimple_set_location (g, loc);
    gimple_stmt_iterator gsi = gsi_last_bb (bb);
    gsi_insert_after (&gsi, g, GSI_NEW_STMT);
  }
  /* A call of a builtin, with its call-graph edge (every call of a body has one). */
  void add_call (gcall *g)
  {
    add (g);
    node->create_edge (cgraph_node::get_create (gimple_call_fndecl (g)), g, bb->count);
  }
  /* A fresh SSA name set to RHS (a load, a constant, a variable). */
  tree let (tree type, tree rhs, const char *name)
  {
    tree t = make_temp_ssa_name (type, NULL, name);
    add (gimple_build_assign (t, rhs));
    return t;
  }
  tree let_op (tree type, enum tree_code code, tree a, tree b, const char *name)
  {
    tree t = make_temp_ssa_name (type, NULL, name);
    add (gimple_build_assign (t, code, a, b));
    return t;
  }
  tree let_conv (tree type, tree a, const char *name)
  {
    tree t = make_temp_ssa_name (type, NULL, name);
    add (gimple_build_assign (t, NOP_EXPR, a));
    return t;
  }
  /* A new empty block, in BB's loop. */
  basic_block new_block ()
  {
    basic_block b = create_empty_bb (bb);
    if (current_loops)
      add_bb_to_loop (b, bb->loop_father);
    return b;
  }
  /* Continues in B, whose incoming edges are all made. */
  void enter (basic_block b)
  {
    bb = b;
    set_count (b);
  }
  static void set_count (basic_block b)
  {
    profile_count count = profile_count::zero ();
    edge e;
    edge_iterator ei;
    FOR_EACH_EDGE (e, ei, b->preds)
      count += e->count ();
    b->count = count;
  }
  /* Ends BB with `if (A CODE B)`: to YES with probability P, else to NO. */
  void branch (enum tree_code code, tree a, tree b, basic_block yes, basic_block no,
               profile_probability p)
  {
    add (gimple_build_cond (code, a, b, NULL_TREE, NULL_TREE));
    make_edge (bb, yes, EDGE_TRUE_VALUE)->probability = p;
    make_edge (bb, no, EDGE_FALSE_VALUE)->probability = p.invert ();
  }
  /* if (A CODE B) to YES with probability P; else on in a new block. */
  void branch_if (enum tree_code code, tree a, tree b, basic_block yes, profile_probability p)
  {
    basic_block no = new_block ();
    branch (code, a, b, yes, no, p);
    enter (no);
  }
  /* if (A CODE B) to the runtime call: as rare as a branch to a label marked `cold`. */
  void to_call_if (enum tree_code code, tree a, tree b)
  {
    branch_if (code, a, b, call_bb, profile_probability::very_unlikely ());
  }
  void to_done ()
  {
    make_single_succ_edge (bb, done_bb, EDGE_FALLTHRU);
  }
  void fence ()
  {
    add_call (gimple_build_call (builtin_decl_explicit (BUILT_IN_ATOMIC_SIGNAL_FENCE), 1,
                                 build_int_cst (integer_type_node, MEMMODEL_SEQ_CST)));
  }
  void add_asm (const char *templ, const char *constraint, tree out, tree in,
                const char *clobber)
  {
    add (build_asm (templ, constraint, out, in, clobber));
  }
};

/* A fresh SSA name holding the tick counter, as the runtime's spanprof__tsc_read
 * (runtime/record/target.h): rdtsc, or isb + mrs cntvct_el0. */
static tree
read_tsc (emitter &e)
{
  tree now = make_temp_ssa_name (uint64_type_node, NULL, "spanprof_now");
#if SPANPLUGIN_TARGET_AARCH64
  e.add_asm ("isb\n\tmrs %0, cntvct_el0", "=r", now, NULL_TREE, NULL);
#else
  e.add_asm ("rdtsc\n\tsalq $32, %%rdx\n\torq %%rdx, %%rax", "=a", now, NULL_TREE, "rdx");
#endif
  return now;
}

/* The TYPE-typed memory at BASE + OFFSET, with alias set 0 (a ref-all pointer type): the
 * runtime's data may alias anything the program holds. */
static tree
mem_at (tree type, tree base, HOST_WIDE_INT offset)
{
  tree ref_all = build_pointer_type_for_mode (char_type_node, ptr_mode, true);
  return build2 (MEM_REF, type, base, build_int_cst (ref_all, offset));
}

/* The uint64_t at BASE + OFFSET += VALUE (or 1, VALUE NULL), signal-atomically as counter.h's
 * spanprof__count_add: on x86 one `addq` (no lock); on aarch64 a relaxed atomic add. */
static void
add_to_counter (emitter &e, tree base, HOST_WIDE_INT offset, tree value)
{
  if (!value)
    value = build_int_cst (uint64_type_node, 1);
#if SPANPLUGIN_TARGET_AARCH64
  tree addr = e.let_op (ptr_type_node, POINTER_PLUS_EXPR, base, size_int (offset),
                        "spanprof_counter");
  e.add_call (gimple_build_call (builtin_decl_explicit (BUILT_IN_ATOMIC_FETCH_ADD_8), 3, addr,
                                 value, build_int_cst (integer_type_node, MEMMODEL_RELAXED)));
#else
  e.add_asm ("addq %1, %0", "+m", mem_at (uint64_type_node, base, offset), value, NULL);
#endif
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

/* A fresh SSA name holding the tick of SITE_ADDR's enter (EXIT 0) or exit (EXIT 1) event,
 * pushed into the thread's trace ring by SPANPROF_ABI_TRACE_PUSH: one call, out of line.  The
 * push written out here instead took some twenty instructions at every enter and every copy of
 * every exit, in every mode's code: zstd's zstd_lazy.c built with -all had 623 kB of text, 520 kB
 * with the call, 444 kB without a traced branch (BENCHMARKS.md). */
static tree
push_event (emitter &e, tree site_addr, unsigned exit)
{
  tree tick = make_temp_ssa_name (uint64_type_node, NULL, "spanprof_now");
  gcall *g = gimple_build_call (get_trace_push_decl (), 2, site_addr,
                                build_int_cst (pointer_sized_int_node, exit));
  gimple_call_set_lhs (g, tick);
  e.add_call (g);
  return tick;
}

static tree
state_const (tree state, unsigned value)
{
  return build_int_cst (TREE_TYPE (state), value);
}

/* Reads SITE's state afresh into E's block: a relaxed atomic load, as instrument.cc's guard. */
static tree
load_state (emitter &e, tree site)
{
  tree state = make_temp_ssa_name (uint32_type_node, NULL, "spanprof_state");
  gcall *g = gimple_build_call (builtin_decl_explicit (BUILT_IN_ATOMIC_LOAD_4), 2,
                                spanplugin_site_state (site),
                                build_int_cst (integer_type_node, MEMMODEL_RELAXED));
  gimple_call_set_lhs (g, state);
  e.add_call (g);
  return state;
}

/* The inline enter, in place of CALL = SPANPROF_ABI_ENTER (&SITE, cfa, entry) (E open on it),
 * for a site whose STATE is not OFF:
 *
 *     if (state != COUNT && state != FAST && state != TRACE) goto call;
 *     t = SPANPROF_ABI_THREAD;  f = t->top;  ret = *(cfa - 8);
 *     if (f->cfa <= cfa && (f->cfa != cfa || f->entry == entry || f->ret != ret)) goto call;
 *     if (f == t->limit) goto call;
 *     n = f->node->hint;
 *     if (n->site != &SITE) {
 *         n = t->child_cache[slot (f->node, &SITE)];
 *         if (n->site != &SITE || n->parent != f->node) goto call;
 *     }
 *     n->calls += 1;  push (f + 1: n, cfa, entry, ret);
 *     (f + 1)->start = state == COUNT ? 0 : state == FAST ? rdtsc : push_event (enter);
 *     goto done;
 *   call:
 *     SPANPROF_ABI_ENTER (&SITE, cfa, entry);
 *   done:
 *
 * The tests are the runtime's (hotpath.h, spanprof__record_enter), in its order; so are the
 * stores.  No call on the way through: 59 instructions for the enter and the exit together
 * (callgrind, counting; 81 through the entry points); tracing adds the two pushes' calls
 * (push_event). */
static void
expand_enter (emitter &e, gcall *call, tree state)
{
  tree site_addr = gimple_call_arg (call, 0);
  tree cfa = gimple_call_arg (call, 1);
  tree entry = gimple_call_arg (call, 2);
  tree uptr = TREE_TYPE (entry);

  basic_block inline_state = e.new_block ();
  e.branch_if (EQ_EXPR, state, state_const (state, SPANPROF_STATE_COUNT), inline_state,
               profile_probability::even ());
  e.branch_if (EQ_EXPR, state, state_const (state, SPANPROF_STATE_FAST), inline_state,
               profile_probability::likely ());
  e.branch (NE_EXPR, state, state_const (state, SPANPROF_STATE_TRACE), e.call_bb, inline_state,
            profile_probability::very_unlikely ());
  e.enter (inline_state);

  tree t = e.let (ptr_type_node, get_thread_decl (), "spanprof_thread");
  tree f = load (e, ptr_type_node, t, SPANPROF_ABI_THREAD_TOP, "spanprof_top");
#if SPANPLUGIN_TARGET_AARCH64
  tree ret = build_zero_cst (uptr); /* not at a fixed place: unused, as by the runtime */
#else
  tree ret = load (e, uptr, cfa, -(HOST_WIDE_INT) sizeof (void *), "spanprof_return");
#endif
  tree cfa_int = e.let_conv (uptr, cfa, "spanprof_cfa");
  /* The top frame dead or re-entered: f->cfa <= cfa && (f->cfa != cfa || ...). */
  tree f_cfa = load (e, uptr, f, SPANPROF_ABI_FRAME_CFA, "spanprof_top_cfa");
  basic_block alive = e.new_block (), same = e.new_block ();
  e.branch (GT_EXPR, f_cfa, cfa_int, alive, same, profile_probability::very_likely ());
  e.enter (same);
  e.to_call_if (NE_EXPR, f_cfa, cfa_int);
  e.to_call_if (EQ_EXPR, load (e, uptr, f, SPANPROF_ABI_FRAME_ENTRY, "spanprof_top_entry"), entry);
  e.branch (NE_EXPR, load (e, uptr, f, SPANPROF_ABI_FRAME_RETURN, "spanprof_top_return"), ret,
            e.call_bb, alive, profile_probability::very_unlikely ());
  e.enter (alive);
  e.to_call_if (EQ_EXPR, f,
                load (e, ptr_type_node, t, SPANPROF_ABI_THREAD_LIMIT, "spanprof_limit"));

  /* The child: the parent's hint, else the thread's cache (childcache.h). */
  tree parent = load (e, ptr_type_node, f, SPANPROF_ABI_FRAME_NODE, "spanprof_parent");
  tree hint = load (e, ptr_type_node, parent, SPANPROF_ABI_NODE_HINT, "spanprof_node");
  basic_block found = e.new_block (), cache = e.new_block ();
  basic_block hint_bb = e.bb;
  e.branch (EQ_EXPR, load (e, ptr_type_node, hint, SPANPROF_ABI_NODE_SITE, "spanprof_hint_site"),
            site_addr, found, cache, profile_probability::likely ());
  e.enter (cache);
  tree h = e.let_op (uint64_type_node, LSHIFT_EXPR,
                     e.let_conv (uint64_type_node, site_addr, "spanprof_site"),
                     build_int_cst (integer_type_node, 16), "spanprof_hash");
  h = e.let_op (uint64_type_node, BIT_XOR_EXPR, h,
                e.let_conv (uint64_type_node, parent, "spanprof_p"), "spanprof_hash");
  h = e.let_op (uint64_type_node, MULT_EXPR, h,
                build_int_cst (uint64_type_node, SPANPROF_ABI_CHILD_HASH), "spanprof_hash");
  h = e.let_op (uint64_type_node, RSHIFT_EXPR, h,
                build_int_cst (integer_type_node, 64 - SPANPROF_ABI_CHILD_CACHE_BITS),
                "spanprof_slot");
  h = e.let_op (uint64_type_node, MULT_EXPR, h, build_int_cst (uint64_type_node, sizeof (void *)),
                "spanprof_slot");
  tree slot = e.let_op (ptr_type_node, POINTER_PLUS_EXPR, t,
                        e.let_conv (sizetype, h, "spanprof_slot"), "spanprof_slot");
  tree cached = load (e, ptr_type_node, slot, SPANPROF_ABI_THREAD_CHILD_CACHE, "spanprof_node");
  e.to_call_if (NE_EXPR, load (e, ptr_type_node, cached, SPANPROF_ABI_NODE_SITE, "spanprof_c_site"),
                site_addr);
  basic_block cache_bb = e.bb;
  e.branch (NE_EXPR, load (e, ptr_type_node, cached, SPANPROF_ABI_NODE_PARENT, "spanprof_c_parent"),
            parent, e.call_bb, found, profile_probability::very_unlikely ());
  e.enter (found);
  tree n = make_temp_ssa_name (ptr_type_node, NULL, "spanprof_node");
  gphi *phi = create_phi_node (n, found);
  add_phi_arg (phi, hint, find_edge (hint_bb, found), e.loc);
  add_phi_arg (phi, cached, find_edge (cache_bb, found), e.loc);

  add_to_counter (e, n, SPANPROF_ABI_NODE_CALLS, NULL_TREE);
  /* The push: fields, top (the commit), fields again (spanprof__push_frame). */
  tree g = e.let_op (ptr_type_node, POINTER_PLUS_EXPR, f, size_int (SPANPROF_ABI_FRAME_SIZE),
                     "spanprof_new_top");
  store_frame (e, g, n, cfa_int, entry, ret);
  e.fence ();
  store (e, t, SPANPROF_ABI_THREAD_TOP, g);
  e.fence ();
  store_frame (e, g, n, cfa_int, entry, ret);
  /* The start last, so the bookkeeping above is not charged to the span: 0 (COUNT, told from the
   * other two by one bit, so that the cheapest mode pays one test), rdtsc (FAST) or the tick of
   * the enter event (TRACE). */
  static_assert ((SPANPROF_STATE_COUNT & 1) == 0 && (SPANPROF_STATE_FAST & 1) == 1
                 && (SPANPROF_STATE_TRACE & 1) == 1, "COUNT alone of the inline states is even");
  basic_block timed = e.new_block (), untimed = e.new_block ();
  e.branch (NE_EXPR, e.let_op (TREE_TYPE (state), BIT_AND_EXPR, state, state_const (state, 1),
                               "spanprof_timed"),
            state_const (state, 0), timed, untimed, profile_probability::even ());
  e.enter (timed);
  basic_block fast = e.new_block (), traced = e.new_block ();
  e.branch (EQ_EXPR, state, state_const (state, SPANPROF_STATE_FAST), fast, traced,
            profile_probability::likely ());
  e.enter (fast);
  store (e, g, SPANPROF_ABI_FRAME_START, read_tsc (e));
  e.to_done ();
  e.enter (traced);
  /* The frame read back after the call (the top it published: a signal handler restores it), so
   * that nothing of this code lives across the call in a register the function must save. */
  tree tick = push_event (e, site_addr, 0);
  tree t_again = e.let (ptr_type_node, get_thread_decl (), "spanprof_thread");
  store (e, load (e, ptr_type_node, t_again, SPANPROF_ABI_THREAD_TOP, "spanprof_top"),
         SPANPROF_ABI_FRAME_START, tick);
  e.to_done ();
  e.enter (untimed);
  store (e, g, SPANPROF_ABI_FRAME_START, build_zero_cst (uint64_type_node));
  e.to_done ();
}

/* The test that the top frame is the activation at frame address CFA_INT of SITE (else to the
 * call): loads the thread T, its top frame F and F's node NODE. */
static void
add_pop_test (emitter &e, tree site_addr, tree cfa_int, tree *t, tree *f, tree *node)
{
  *t = e.let (ptr_type_node, get_thread_decl (), "spanprof_thread");
  *f = load (e, ptr_type_node, *t, SPANPROF_ABI_THREAD_TOP, "spanprof_top");
  *node = load (e, ptr_type_node, *f, SPANPROF_ABI_FRAME_NODE, "spanprof_node");
  e.to_call_if (NE_EXPR, load (e, ptr_type_node, *node, SPANPROF_ABI_NODE_SITE, "spanprof_site"),
                site_addr);
  e.to_call_if (NE_EXPR, load (e, TREE_TYPE (cfa_int), *f, SPANPROF_ABI_FRAME_CFA,
                               "spanprof_top_cfa"),
                cfa_int);
}

/* The rest of the pop of frame F (of node NODE) of thread T, whose test has passed: the duration
 * charged when timed (NOW not NULL), the pop, then to the rest. */
static void
add_charge_pop (emitter &e, tree t, tree f, tree node, tree now)
{
  if (now)
    {
      /* d = max ((int64_t) (now - start), 0): total and the parent's child time (counter.h). */
      tree d = e.let_op (uint64_type_node, MINUS_EXPR, now,
                         load (e, uint64_type_node, f, SPANPROF_ABI_FRAME_START, "spanprof_start"),
                         "spanprof_ticks");
      tree sd = e.let_conv (long_long_integer_type_node, d, "spanprof_ticks");
      sd = e.let_op (long_long_integer_type_node, MAX_EXPR, sd,
                     build_zero_cst (long_long_integer_type_node), "spanprof_ticks");
      d = e.let_conv (uint64_type_node, sd, "spanprof_ticks");
      add_to_counter (e, node, SPANPROF_ABI_NODE_TOTAL, d);
      tree parent = load (e, ptr_type_node, f,
                          SPANPROF_ABI_FRAME_NODE - (HOST_WIDE_INT) SPANPROF_ABI_FRAME_SIZE,
                          "spanprof_parent");
      add_to_counter (e, parent, SPANPROF_ABI_NODE_CHILD, d);
    }
  e.fence ();
  tree below = e.let_op (ptr_type_node, POINTER_PLUS_EXPR, f,
                         size_int (-(HOST_WIDE_INT) SPANPROF_ABI_FRAME_SIZE), "spanprof_new_top");
  store (e, t, SPANPROF_ABI_THREAD_TOP, below);
  e.to_done ();
}

/* The pop of SITE's frame at frame address CFA_INT, for the exit of a site counting (NOW NULL)
 * or timed (NOW: the exit's timestamp): the test that the top frame is this activation's (else
 * to the call), the duration charged when timed, the pop, then to the rest. */
static void
add_pop (emitter &e, tree site_addr, tree cfa_int, tree now)
{
  tree t, f, node;
  add_pop_test (e, site_addr, cfa_int, &t, &f, &node);
  add_charge_pop (e, t, f, node, now);
}

/* The exit's guard, in place of the exit call of SITE (E open on it): the patch point first
 * (patch.cc: a jump to the test, a no-op past it once OFF), then past the call when the state,
 * read afresh and returned, is OFF. */
static tree
add_exit_guard (emitter &e, tree site)
{
  if (spanplugin_patch_possible ())
    {
      basic_block guard = e.new_block ();
      e.add (spanplugin_build_patch_point (site, gimple_block_label (guard)));
      make_edge (e.bb, guard, 0)->probability = profile_probability::unlikely ();
      make_edge (e.bb, e.done_bb, EDGE_FALLTHRU)->probability = profile_probability::likely ();
      e.enter (guard);
    }
  tree state = load_state (e, site);
  e.branch_if (EQ_EXPR, state, state_const (state, SPANPROF_STATE_OFF), e.done_bb,
               profile_probability::even ());
  return state;
}

/* The inline exit, in place of CALL = __spanprof_exit (&SITE, cfa) (E open on it), with the
 * guard instrument.cc writes for the calls (a relaxed atomic load of the state, read afresh):
 *
 *     state = SITE.state;
 *     if (state == OFF) goto done;
 *     if (state == COUNT) { POP; goto done; }
 *     if (state == FAST) { now = rdtsc;  POP's test; }
 *     else if (state != TRACE) goto call;
 *     else { POP's test;  now = push_event (exit);  t, f, node read again; }
 *     the rest of POP, charging now - start;  goto done;
 *   call:
 *     __spanprof_exit (&SITE, cfa);
 *   done:
 *
 * behind the site's patch point (patch.cc: a jump to the test; once the site is OFF, a no-op
 * going straight to done), where POP is add_pop's:
 * `f = t->top;  if (f->node->site != &SITE || f->cfa != cfa) goto call;`, when timed `d = max ((int64_t) (now - f->start), 0);  f->node->total += d;
 * (f - 1)->node->child += d;`, then `t->top = f - 1`: spanprof__record_exit's work, its
 * timestamp first, so the bookkeeping is not charged (the trace's push comes after the test).
 * Counting and timing get a tail each, so the counting one tests the state once. */
static void
expand_exit (emitter &e, gcall *call, tree site)
{
  tree site_addr = gimple_call_arg (call, 0);
  tree state = add_exit_guard (e, site);
  tree cfa_int = e.let_conv (pointer_sized_int_node, gimple_call_arg (call, 1), "spanprof_cfa");
  basic_block counting = e.new_block (), other = e.new_block ();
  e.branch (EQ_EXPR, state, state_const (state, SPANPROF_STATE_COUNT), counting, other,
            profile_probability::even ());
  e.enter (counting);
  add_pop (e, site_addr, cfa_int, NULL_TREE);
  e.enter (other);
  /* The timestamp: rdtsc (FAST), or the exit event's tick (TRACE), its push made once the top
   * frame is known to be this activation's (else the runtime pushes it); then one tail. */
  basic_block fast = e.new_block (), traced = e.new_block (), timed = e.new_block ();
  e.branch (EQ_EXPR, state, state_const (state, SPANPROF_STATE_FAST), fast, traced,
            profile_probability::likely ());
  e.enter (fast);
  tree rdtsc = read_tsc (e);
  tree v[2][3]; /* thread, top frame, its node: FAST's from its test, TRACE's read back */
  add_pop_test (e, site_addr, cfa_int, &v[0][0], &v[0][1], &v[0][2]);
  make_single_succ_edge (e.bb, timed, EDGE_FALLTHRU);
  basic_block fast_end = e.bb;
  e.enter (traced);
  e.to_call_if (NE_EXPR, state, state_const (state, SPANPROF_STATE_TRACE));
  add_pop_test (e, site_addr, cfa_int, &v[1][0], &v[1][1], &v[1][2]);
  tree pushed = push_event (e, site_addr, 1);
  /* Read back after the call (a signal handler leaves the top as it found it), so that nothing
   * of this code lives across it in a register the function must save. */
  v[1][0] = e.let (ptr_type_node, get_thread_decl (), "spanprof_thread");
  v[1][1] = load (e, ptr_type_node, v[1][0], SPANPROF_ABI_THREAD_TOP, "spanprof_top");
  v[1][2] = load (e, ptr_type_node, v[1][1], SPANPROF_ABI_FRAME_NODE, "spanprof_node");
  make_single_succ_edge (e.bb, timed, EDGE_FALLTHRU);
  basic_block traced_end = e.bb;
  e.enter (timed);
  tree joined[3];
  for (int i = 0; i < 3; i++)
    {
      joined[i] = make_temp_ssa_name (ptr_type_node, NULL, "spanprof_pop");
      gphi *phi = create_phi_node (joined[i], timed);
      add_phi_arg (phi, v[0][i], find_edge (fast_end, timed), e.loc);
      add_phi_arg (phi, v[1][i], find_edge (traced_end, timed), e.loc);
    }
  tree now = make_temp_ssa_name (uint64_type_node, NULL, "spanprof_now");
  gphi *phi = create_phi_node (now, timed);
  add_phi_arg (phi, rdtsc, find_edge (fast_end, timed), e.loc);
  add_phi_arg (phi, pushed, find_edge (traced_end, timed), e.loc);
  add_charge_pop (e, joined[0], joined[1], joined[2], now);
}

/* Whether FNDECL's assembler name is NAME. */
static bool
decl_named (tree fndecl, const char *name)
{
  const char *asmname = IDENTIFIER_POINTER (DECL_ASSEMBLER_NAME (fndecl));
  if (asmname[0] == '*')
    asmname++;
  return strcmp (asmname, name) == 0;
}

enum marker { NOT_A_MARKER, ENTER_MARKER, EXIT_MARKER };

/* What STMT is: an enter or exit call the inline path asked for (its site in *SITE), or
 * neither.  By the callee's name, as the LTO ltrans stage has its own declarations; the exit by
 * its site's mark too (mark_site).  The frame address must be the SSA name
 * __builtin_dwarf_cfa set, as it is when the calls are made. */
static marker
marker_of (gimple *stmt, tree *site)
{
  gcall *call = dyn_cast<gcall *> (stmt);
  if (!call)
    return NOT_A_MARKER;
  tree fndecl = gimple_call_fndecl (call);
  if (!fndecl || gimple_call_num_args (call) < 2 || gimple_call_lhs (call))
    return NOT_A_MARKER;
  tree site_addr = gimple_call_arg (call, 0);
  if (TREE_CODE (site_addr) != ADDR_EXPR || !VAR_P (TREE_OPERAND (site_addr, 0))
      || TREE_CODE (gimple_call_arg (call, 1)) != SSA_NAME)
    return NOT_A_MARKER;
  *site = TREE_OPERAND (site_addr, 0);
  if (gimple_call_num_args (call) == 3 && decl_named (fndecl, SPANPROF_ABI_ENTER))
    return ENTER_MARKER;
  if (gimple_call_num_args (call) == 2 && decl_named (fndecl, SPANPLUGIN_EXIT_HOOK)
      && lookup_attribute (INLINE_SITE_MARK, DECL_ATTRIBUTES (*site)))
    return EXIT_MARKER;
  return NOT_A_MARKER;
}

/* Whether ADDR (an argument) is the address of SITE's state. */
static bool
is_state_of (tree addr, tree site)
{
  if (TREE_CODE (addr) != ADDR_EXPR)
    return false;
  poly_int64 offset, state_offset;
  tree base = get_addr_base_and_unit_offset (TREE_OPERAND (addr, 0), &offset);
  tree state = TREE_OPERAND (spanplugin_site_state (site), 0);
  return base == site && get_addr_base_and_unit_offset (state, &state_offset) == site
         && known_eq (offset, state_offset);
}

/* The state instrument.cc's guard read before CALL, an enter of SITE: the SSA name set by the
 * nearest relaxed load of SITE's state that dominates CALL with no other call in between (the
 * frame address aside), as the guard reads it just before.  NULL_TREE if there is none, which
 * no code the plugin emits gives; then the caller reads it afresh.  Needs dominators. */
static tree
guard_state (gcall *call, tree site)
{
  basic_block bb = gimple_bb (call);
  gimple_stmt_iterator gsi = gsi_for_stmt (call);
  gsi_prev (&gsi);
  for (int blocks = 0; blocks < 16; blocks++)
    {
      for (; !gsi_end_p (gsi); gsi_prev (&gsi))
        {
          gcall *c = dyn_cast<gcall *> (gsi_stmt (gsi));
          if (!c || gimple_call_builtin_p (c, BUILT_IN_DWARF_CFA))
            continue;
          tree lhs = gimple_call_lhs (c);
          if (gimple_call_builtin_p (c, BUILT_IN_ATOMIC_LOAD_4)
              && is_state_of (gimple_call_arg (c, 0), site) && lhs && TREE_CODE (lhs) == SSA_NAME)
            return lhs;
          return NULL_TREE;
        }
      bb = get_immediate_dominator (CDI_DOMINATORS, bb);
      if (!bb || bb == ENTRY_BLOCK_PTR_FOR_FN (cfun))
        return NULL_TREE;
      gsi = gsi_last_bb (bb);
    }
  return NULL_TREE;
}

/* Opens E on CALL: its block split before and after it, so that CALL is alone in CALL_BB
 * between the block of the code before it (where E continues, with no edge out yet) and the
 * block of the code after it.  A call at the end of its block (one that may reach a setjmp
 * receiver keeps its abnormal edge there) gets a new empty block after it.  False, with nothing
 * changed, if CALL has not exactly one ordinary way on. */
static bool
open_on (emitter &e, gcall *call)
{
  basic_block bb = gimple_bb (call);
  bool last = gsi_stmt (gsi_last_bb (bb)) == call;
  edge on = NULL;
  if (last)
    {
      edge s;
      edge_iterator ei;
      FOR_EACH_EDGE (s, ei, bb->succs)
        if (!(s->flags & (EDGE_ABNORMAL | EDGE_EH)))
          {
            if (on)
              return false;
            on = s;
          }
      if (!on)
        return false;
    }
  gimple_stmt_iterator gsi = gsi_for_stmt (call);
  gsi_prev (&gsi);
  e.call_bb = split_block (bb, gsi_end_p (gsi) ? NULL : gsi_stmt (gsi))->dest;
  if (last)
    {
      /* The split moved the edges out along with the call. */
      e.done_bb = split_edge (find_edge (e.call_bb, on->dest));
    }
  else
    e.done_bb = split_block (e.call_bb, call)->dest;
  remove_edge (find_edge (bb, e.call_bb));
  e.bb = bb;
  e.loc = gimple_location (call);
  /* The call is now the rare way, followed by more code: never a tail call. */
  gimple_call_set_tail (call, false);
  return true;
}

/* Whether STMT came into this function with an inlined copy of another (its block is inside
 * one of an inlined function's outer scope). */
static bool
in_inlined_copy (gimple *stmt)
{
  for (tree b = gimple_block (stmt); b && TREE_CODE (b) == BLOCK; b = BLOCK_SUPERCONTEXT (b))
    if (inlined_function_outer_scope_p (b))
      return true;
  return false;
}

struct marker_call
{
  gcall *call;
  marker kind;
  tree site;
  tree state;
};

static const pass_data inline_pass_data = {
  GIMPLE_PASS,         /* type */
  "spanprof_inline",   /* name */
  OPTGROUP_NONE,       /* optinfo_flags */
  TV_NONE,             /* tv_id */
  PROP_ssa | PROP_cfg, /* properties_required */
  0,                   /* properties_provided */
  0,                   /* properties_destroyed */
  0,                   /* todo_flags_start */
  0,                   /* todo_flags_finish */
};

namespace {

class inline_pass : public gimple_opt_pass
{
public:
  inline_pass (gcc::context *ctxt) : gimple_opt_pass (inline_pass_data, ctxt) {}
  opt_pass *clone () final override { return new inline_pass (m_ctxt); }
  bool gate (function *fun) final override { return spanplugin_inline_possible (); }
  unsigned int execute (function *fun) final override;
};

unsigned int
inline_pass::execute (function *fun)
{
  /* First every marker and its guard's state, on the dominators of the CFG as it is: writing
   * one out puts code between two blocks, which changes no dominance between old statements. */
  auto_vec<marker_call> markers;
  calculate_dominance_info (CDI_DOMINATORS);
  basic_block bb;
  FOR_EACH_BB_FN (bb, fun)
    for (gimple_stmt_iterator gsi = gsi_start_bb (bb); !gsi_end_p (gsi); gsi_next (&gsi))
      {
        marker_call m;
        m.kind = marker_of (gsi_stmt (gsi), &m.site);
        if (m.kind == NOT_A_MARKER)
          continue;
        m.call = as_a<gcall *> (gsi_stmt (gsi));
        m.state = m.kind == ENTER_MARKER ? guard_state (m.call, m.site) : NULL_TREE;
        markers.safe_push (m);
      }
  free_dominance_info (CDI_DOMINATORS);
  if (markers.is_empty ())
    return 0;

  cgraph_node *node = cgraph_node::get (fun->decl);
  for (marker_call &m : markers)
    {
      /* inline-copies=0: a copy inlined into this function keeps its calls, the enter's behind
       * instrument.cc's guard, the exit's behind the guard added here. */
      bool calls = !spanplugin_opts.inline_copies && in_inlined_copy (m.call);
      if (calls && m.kind == ENTER_MARKER)
        continue;
      emitter e;
      e.node = node;
      if (!open_on (e, m.call))
        continue;
      if (calls)
        {
          add_exit_guard (e, m.site);
          make_single_succ_edge (e.bb, e.call_bb, EDGE_FALLTHRU);
        }
      else if (m.kind == ENTER_MARKER)
        expand_enter (e, m.call, m.state ? m.state : load_state (e, m.site));
      else
        expand_exit (e, m.call, m.site);
      emitter::set_count (e.call_bb);
      emitter::set_count (e.done_bb);
    }
  /* New loads, stores and calls: their virtual operands, and the PHIs of them at the joins. */
  mark_virtual_operands_for_renaming (fun);
  return TODO_update_ssa_only_virtuals;
}

} // anon namespace

opt_pass *
spanplugin_make_inline_pass (gcc::context *ctxt)
{
  return new inline_pass (ctxt);
}
