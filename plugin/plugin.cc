/* plugin.cc — entry point of spanplugin.so, the spanprof GCC plugin.
 *
 * Usage:  gcc -fplugin=/path/to/spanplugin.so [-fplugin-arg-spanplugin-KEY[=VALUE] ...] ...
 *
 * Options (-fplugin-arg-spanplugin-*); any other key, and any malformed value, is an error and
 * the plugin refuses to load:
 *   verbose            a note "spanplugin: instrumented 'NAME'" once per span and a note
 *                      "spanplugin: progress point 'NAME'" once per progress point (not per
 *                      clone); a note per call that may return twice (setjmp...), which gets
 *                      the longjmp repair
 *   all                instrument every function defined in the unit but the small ones
 *                      (min-size below), and except: functions with
 *                      `nospan` or `no_instrument_function`, compiler-made (DECL_ARTIFICIAL)
 *                      functions other than lambda bodies, thunks, gnu_inline extern inline
 *                      always_inline functions, naked functions (silently), C++ cdtor clones
 *                      that only forward (D0, -fdeclone-ctor-dtor), and what the filters drop
 *   include=GLOB,...   with `all`: only functions whose name matches one of the patterns
 *   functions=FILE     instrument the functions whose name matches a line of FILE, as if they
 *                      carried `span` (same exceptions as `all`).  FILE: one name or glob per
 *                      line; blanks around it, blank lines and '#' to end of line are ignored.
 *                      May be given more than once.
 *   exclude=GLOB,...       filters: drop functions whose name matches;
 *   exclude-list=FILE      ... whose name matches a line of FILE (as functions=; `spanprof
 *                          select` writes one from a profile);
 *   exclude-file=GLOB,...  ... whose source file (as the compiler names it) matches;
 *   min-lines=N            ... that span fewer than N source lines (the line of the name to
 *                          the closing brace).  These filter `all` and `functions=` only.
 *   min-size=N             with `all` (not `functions=`): leave out functions of fewer than N
 *                          statements (high GIMPLE, before inlining) that have no loop and do not
 *                          call themselves (always_inline ones: loop or not), main excepted;
 *                          default SPANPLUGIN_MIN_SIZE_DEFAULT
 *                          (50); 0: every function.  With `verbose`, a note names each one
 *                          left out and its size.
 *   progress=GLOB,...      make the functions whose name matches a coz progress point, as if
 *                          they carried `progress` (same exceptions as `all`), with or without
 *                          a span; each return is a visit.  Works with or without `all`.
 *   off-copy=N             with optimisation on (-O1 and above), a span's function whose body
 *                          has at most N statements (GIMPLE, default SPANPLUGIN_OFF_COPY_DEFAULT;
 *                          a call to an always_inline function counts as its body)
 *                          gets a second copy of it that runs while the span is off: the original
 *                          code, without a frame or a lost tail call (offpath.cc).  0: no copy.
 *   inline=0|1|all         1 (the default, on x86-64 and aarch64): a span's enter and exit are
 *                          recorded by inline code, without a call, while the runtime counts,
 *                          or times with bare rdtsc or cntvct_el0, tracing or not (inline.cc) —
 *                          for spans chosen by the attribute, and for
 *                          those chosen by an option whose body the default size rule keeps (a
 *                          loop, or min-size's default of statements); smaller ones (min-size=0,
 *                          functions=), inlined into many callers, call the runtime.  all: every
 *                          span inline.
 *                          Either way the objects need the runtime at link time, and one of
 *                          another layout fails the link (spanprof.h, section 5).  0: calls
 *                          only, to weak hooks, so the objects link without the runtime.
 *   inline-copies=0|1      1 (the default): the copies of a span that GCC inlined into other
 *                          functions carry its inline path too.  0: they call the runtime from
 *                          behind the same guards (patch point, test of the state), so recording
 *                          off costs what it did and recording costs a call at each end of them;
 *                          the function's own body keeps the inline path.  Far less code to
 *                          compile where many spans are inlined (inline.cc).
 *   patch=0|1              1 (the default, where the inline path is on): a jump in front of
 *                          each span's enter and exit guards, listed in a note, which the
 *                          runtime turns into a no-op once the span is off for good (patch.cc,
 *                          spanprof.h section 6).  0: the guards alone, as before.
 *   split=0|1              1 (the default, with patch points): a body given the off copy keeps
 *                          it as the function's own code, and its recording body moves to a
 *                          clone (F.spanprof.N) that the function calls from behind its entry
 *                          point, so while off the function is its plain code and a no-op
 *                          (split.cc).  0: both bodies in the function.
 * Names are the span names without attribute: "f" in C, the qualified name in C++
 * ("ns::Parser::parse", "ns::tmax<int>", "A::A", "main()::<lambda(int)>::operator()").
 * Patterns use fnmatch (PATTERN, NAME, 0): '*' matches any characters, '/' and ':' included;
 * '?', '[...]' and '\' escapes as in the shell (so `operator*` needs `operator\*`).
 * Lists are comma-separated and accumulate over repeated options; empty patterns are errors.
 * include/exclude/exclude-list/exclude-file/min-lines without a selecting option only draw a
 * warning.
 * The `span` attribute always wins: such a function is instrumented whatever the options say
 * (`span` together with `nospan` is an error).
 *
 * A span chosen by an option (not by its attribute) is emitted as SPANPROF_KIND_SPAN_BY_OPTION,
 * so that the runtime can tell what a user marked by hand: under coz only those are latency
 * points by default.  Progress points come from the `progress` attribute and progress=.
 *
 * Effects: registers the `span`, `nospan` and `progress` attributes (attribute.cc), inserts the
 * instrumenting pass before "lower" (instrument.cc; it also brackets every call that may return
 * twice, setjmp and the like, in every function, with the runtime's longjmp repair; every call
 * it inserts is skipped inline when the site is off; with inline=0 every reference to the
 * runtime is weak, so the objects also link without it), inserts the inline path's late pass
 * after "optimized" (inline.cc: the enter and exit calls of the inline path written out as inline
 * code once the GIMPLE optimisers and the late warnings have run, so the warnings are those of
 * the plain build), and defines the macro __SPANPROF__=1 so spanprof.h's SPAN / SPAN_NAMED /
 * PROGRESS_POINT macros expand to the attributes.
 *
 * For -flto, pass -fplugin at link time too: the instrumentation itself is done at compile time,
 * but the inline path is written out in the ltrans stage, by lto1 with the plugin loaded.  Without
 * it the objects still link and record the same, through calls to the runtime.
 */
#include "spanplugin.h"
#include "plugin-version.h"   /* gcc_version: the GCC these headers come from */

/* The release, from configure.ac's AC_INIT (the Makefile passes it). */
#ifndef SPANPROF_VERSION
#error "SPANPROF_VERSION comes from the build (configure.ac's AC_INIT): build with make"
#endif

/* Required by GCC to load the plugin. */
int plugin_is_GPL_compatible;

static struct plugin_info spanplugin_info = {
  SPANPROF_VERSION,
  "Instruments functions marked __attribute__((span)), or selected by options, with calls into\n"
  "the spanprof runtime; __attribute__((nospan)) opts a function out;\n"
  "__attribute__((progress)) makes a function a coz progress point.\n"
  "Options (-fplugin-arg-spanplugin-KEY[=VALUE]):\n"
  "  verbose               note each instrumented function, progress point and setjmp\n"
  "  all                   instrument every eligible function in the unit\n"
  "  include=GLOB,...      with all: only functions whose name matches\n"
  "  functions=FILE        instrument the functions named (or globbed) in FILE, one per line\n"
  "  progress=GLOB,...     make the functions whose name matches coz progress points\n"
  "  exclude=GLOB,...      do not select functions whose name matches\n"
  "  exclude-file=GLOB,... do not select functions from matching source files\n"
  "  min-lines=N           do not select functions shorter than N lines\n"
  "  inline=0|1|all        record spans inline (1: those the size rule keeps; 0: calls\n"
  "                        only, objects link without the runtime)\n"
  "  patch=0|1             patch points the runtime turns into no-ops for spans that are\n"
  "                        off for good (1, the default where the inline path is on)\n"
  "  split=0|1             a small span's recording body in a clone the function\n"
  "                        calls (1, the default with patch points)\n"
  "Filters apply to all and functions=; the span attribute always wins.\n",
};

static void
define_macro (void *event_data, void *user_data)
{
  spanplugin_cpp_define ("__SPANPROF__=1");
}

/* PASS inserted at POS of the first instance of the pass named REFERENCE. */
static void
add_pass (const char *plugin, opt_pass *pass, const char *reference,
          enum pass_positioning_ops pos)
{
  struct register_pass_info info;
  info.pass = pass;
  info.reference_pass_name = reference;
  info.ref_pass_instance_number = 1;
  info.pos_op = pos;
  register_callback (plugin, PLUGIN_PASS_MANAGER_SETUP, NULL, &info);
}

int
plugin_init (struct plugin_name_args *info, struct plugin_gcc_version *version)
{
  /* A plugin is tied to the exact GCC build whose headers it was compiled against. */
  if (!plugin_default_version_check (version, &gcc_version))
    {
      error ("spanplugin: built for GCC %s, cannot load into GCC %s",
             gcc_version.basever, version->basever);
      return 1;
    }
  if (!spanplugin_parse_options (info))
    return 1;

  const char *name = info->base_name;
  register_callback (name, PLUGIN_INFO, NULL, &spanplugin_info);
  register_callback (name, PLUGIN_REGISTER_GGC_ROOTS, NULL,
                     const_cast<ggc_root_tab *> (spanplugin_site_roots));
  register_callback (name, PLUGIN_REGISTER_GGC_ROOTS, NULL,
                     const_cast<ggc_root_tab *> (spanplugin_instrument_roots));
  register_callback (name, PLUGIN_REGISTER_GGC_ROOTS, NULL,
                     const_cast<ggc_root_tab *> (spanplugin_inline_roots));
  register_callback (name, PLUGIN_REGISTER_GGC_ROOTS, NULL,
                     const_cast<ggc_root_tab *> (spanplugin_split_roots));
  register_callback (name, PLUGIN_ATTRIBUTES, spanplugin_register_attributes, NULL);

  add_pass (name, spanplugin_make_pass (g), "lower", PASS_POS_INSERT_BEFORE);
  /* The inline path written out after every GIMPLE optimisation and late warning (inline.cc). */
  add_pass (name, spanplugin_make_inline_pass (g), SPANPLUGIN_LATE_PASS_AFTER,
            PASS_POS_INSERT_AFTER);
  add_pass (name, spanplugin_make_split_pass (g), "visibility", PASS_POS_INSERT_AFTER);

  /* __SPANPROF__: PLUGIN_PRAGMAS is the first event at which cpplib is ready (earlier, in
   * plugin_init, cpp_define crashes).  It fires in cc1/cc1plus also for -E, before the built-in
   * and command-line macros are processed, so a command-line -U__SPANPROF__ still wins.  lto1
   * never raises it and has no preprocessor. */
  register_callback (name, PLUGIN_PRAGMAS, define_macro, NULL);
  register_callback (name, PLUGIN_FINISH_UNIT, spanplugin_patch_finish_unit, NULL);
  return 0;
}
