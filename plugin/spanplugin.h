/* spanplugin.h — declarations shared between the files of the spanprof GCC plugin.
 *
 *   attribute.cc  the `span`, `nospan` and `progress` attributes: registration, checking, names
 *   options.cc    parsing the -fplugin-arg-spanplugin-* options into spanplugin_opts
 *   select.cc     which functions get a span (attributes, then option-driven selection)
 *   site.cc       the struct spanprof_site descriptor, one per span and one per progress point
 *                 (shared by C++ cdtor clones, COMDAT for inline/template functions)
 *   offpath.cc    the copy of a small body that runs while its span is off (no frame, tail
 *                 calls kept)
 *   inline.cc     the inline path: a span's enter and exit recorded without a call while the
 *                 runtime counts or times with bare rdtsc (spanprof.h's SPANPROF_ABI_*): calls
 *                 before "lower", written out as inline code by a late pass before "expand"
 *   patch.cc      patch points: the jump in front of each enter and exit guard that the runtime
 *                 turns into a no-op once a span is off for good, listed in a note
 *   split.cc      the small IPA pass that moves a span's recording body into a clone its
 *                 function calls from a cold path, leaving the function its own code
 *   instrument.cc the GIMPLE pass that wraps a function body in enter/try/finally-exit(+progress)
 *                 and brackets every setjmp-like call with the longjmp repair; every inserted
 *                 call behind an inline test (site not OFF, weak hook linked in; the inline
 *                 path's exit gets its test from the late pass)
 *   plugin.cc     plugin_init: version check, callbacks, __SPANPROF__; lists every option
 */
#ifndef SPANPLUGIN_H
#define SPANPLUGIN_H

#include "compat.h"

/* Names the attributes are registered under (and spelled in diagnostics). */
#define SPANPLUGIN_ATTR_NAME "span"
#define SPANPLUGIN_NOSPAN_ATTR_NAME "nospan"
#define SPANPLUGIN_PROGRESS_ATTR_NAME "progress"

/* options.cc: the values of the -fplugin-arg-spanplugin-* options (see plugin.cc). */
struct spanplugin_options
{
  bool verbose;             /* verbose: a note per instrumented function */
  bool all;                 /* all: every eligible function */
  bool functions_given;     /* functions=FILE was given (even if the file lists no name) */
  int min_lines;            /* min-lines=N, 0 when not given */
  int min_size;             /* min-size=N: `all` leaves out loopless functions of fewer
                             * statements (select.cc); 0: every function */
  int off_copy_max;         /* off-copy=N: largest body (statements) copied for the off path,
                             * 0: none (offpath.cc) */
  int inline_path;          /* inline=0|1|all: 1, spans the default size rule keeps recorded
                             * inline (inline.cc), smaller ones by calls; SPANPLUGIN_INLINE_ALL,
                             * every span inline; 0: calls to weak hooks only, objects link
                             * without the runtime */
  bool inline_copies;       /* inline-copies=0|1: 1 (the default), copies of a span GCC
                             * inlined into other functions get the inline path too; 0, their
                             * guarded calls (inline.cc) */
  bool split;               /* split=0|1: 1 (the default, with patch points), the recording
                             * body in a clone of the function (split.cc) */
  bool patch;               /* patch=0|1: 1 (the default), patch points in front of the
                             * guards where the inline path is possible (patch.cc) */
  vec<char *> include;      /* include=GLOB,...: restricts `all` */
  vec<char *> exclude;      /* exclude=GLOB,...: on names */
  vec<char *> exclude_file; /* exclude-file=GLOB,...: on source files */
  vec<char *> functions;    /* the names/globs read from the functions=FILE files */
  vec<char *> progress;     /* progress=GLOB,...: functions made progress points by name */
};
extern spanplugin_options spanplugin_opts;
bool spanplugin_parse_options (const struct plugin_name_args *info);

/* attribute.cc */
void spanplugin_register_attributes (void *event_data, void *user_data);
bool spanplugin_has_span (tree fndecl);
bool spanplugin_has_nospan (tree fndecl);
bool spanplugin_has_progress (tree fndecl);
const char *spanplugin_span_name (tree fndecl, tree key);
const char *spanplugin_progress_name (tree fndecl, tree key);

/* select.cc */
/* Whether an option may choose FNDECL (whose span key is KEY) at all: not compiler-made, not
 * no_instrument_function, not an extern inline body. */
bool spanplugin_selectable (tree fndecl, tree key);
/* Whether FNDECL's printable name (KEY's) matches one of PATTERNS. */
bool spanplugin_name_matches (const vec<char *> &patterns, tree key);
enum spanplugin_choice
{
  SPANPLUGIN_SKIP,          /* not instrumented */
  SPANPLUGIN_SKIP_SMALL,    /* `all` chose it, but it is too small to be worth a span */
  SPANPLUGIN_BY_ATTRIBUTE,  /* carries `span` */
  SPANPLUGIN_BY_OPTION,     /* chosen by all / include / functions= */
  SPANPLUGIN_CONFLICT       /* carries both `span` and `nospan`: an error */
};
/* KEY: the function whose span FNDECL's is (see spanplugin_site_key); FUN: FNDECL's body.
 * *SIZE gets the body's statement count when min-size was applied. */
spanplugin_choice spanplugin_select (tree fndecl, tree key, function *fun, int *size);
/* Whether FNDECL's body is one the default size rule would leave out (min-size's default): a
 * span an option gives it anyway (min-size=0, functions=) calls the runtime rather than take the
 * inline path (instrument.cc), as its copies inlined into every caller would each carry it. */
bool spanplugin_small_body (tree fndecl);

/* inline.cc */
#define SPANPLUGIN_INLINE_ALL 2
/* Whether the inline path is on for this compilation (option and target). */
bool spanplugin_inline_possible (void);
/* The enter and exit calls of the inline path, for instrument.cc (before "lower"), and the late
 * pass that writes them out as inline code (after the GIMPLE optimisers and late warnings). */
void spanplugin_add_inline_enter (gimple_seq *seq, tree site, location_t loc);
void spanplugin_add_inline_exit (gimple_seq *seq, tree site, tree exit_hook, location_t loc);
opt_pass *spanplugin_make_inline_pass (gcc::context *ctxt);
extern const struct ggc_root_tab spanplugin_inline_roots[];

/* patch.cc */
/* Whether spans get patch points in this compilation (option and target). */
bool spanplugin_patch_possible (void);
/* A patch point for SITE: `asm goto` whose label is ON_LABEL (the guard), the fall-through
 * the way past the call. */
gasm *spanplugin_build_patch_point (tree site, tree on_label);
/* Whether STMT is a patch point built by spanplugin_build_patch_point (or a copy of one). */
bool spanplugin_is_patch_point (const gasm *stmt);
/* PLUGIN_FINISH_UNIT: the unit's share of its object's initialiser for patch points. */
void spanplugin_patch_finish_unit (void *gcc_data, void *user_data);

/* The runtime's exit hook (spanprof.h): the calls' and the inline path's. */
#define SPANPLUGIN_EXIT_HOOK "__spanprof_exit"

/* site.cc */
tree spanplugin_site_type (void);
tree spanplugin_site_key (tree fndecl);
/* KIND: SPANPROF_KIND_SPAN or SPANPROF_KIND_PROGRESS; a function may have one site of each.
 * BY_OPTION: a span chosen by an option, emitted as SPANPROF_KIND_SPAN_BY_OPTION. */
tree spanplugin_lookup_site (tree key, unsigned kind);
tree spanplugin_build_site (tree fndecl, tree key, const char *name, unsigned kind,
                            bool by_option);
tree spanplugin_site_state (tree site);
extern const struct ggc_root_tab spanplugin_site_roots[];

/* Default of off-copy=N (see plugin.cc). */
#define SPANPLUGIN_OFF_COPY_DEFAULT 40
/* Default of min-size=N (see plugin.cc, select.cc).  At 50, whole-program builds of zstd and
 * SQLite keep every function perf ranks hot that has code of its own, redis all but three small
 * ones, jsoncpp its reader and writer; the small helpers and members left out made most of the
 * calls (docs/manual.md). */
#define SPANPLUGIN_MIN_SIZE_DEFAULT 50

/* offpath.cc */
gimple_seq spanplugin_off_copy (function *fun, gimple_seq body);
void spanplugin_fresh_params (gimple_seq *seq, tree fndecl, location_t loc);

/* split.cc */
/* Whether FNDECL (FUN), if its body gets the off copy, can be split: the option, patch points,
 * and a signature whose arguments and result can be passed on to the clone. */
bool spanplugin_split_possible (function *fun, tree fndecl);
/* FNDECL has the split shape: the pass makes the clone. */
void spanplugin_split_later (tree fndecl);
opt_pass *spanplugin_make_split_pass (gcc::context *ctxt);
extern const struct ggc_root_tab spanplugin_split_roots[];

/* instrument.cc */
opt_pass *spanplugin_make_pass (gcc::context *ctxt);
extern const struct ggc_root_tab spanplugin_instrument_roots[];

#endif /* SPANPLUGIN_H */
