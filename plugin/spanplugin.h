/* spanplugin.h — declarations shared between the files of the spanprof GCC plugin.
 *
 *   attribute.cc  the `span` attribute: registration, checking, name lookup
 *   site.cc       the static struct spanprof_site descriptor emitted per function
 *   instrument.cc the GIMPLE pass that wraps a function body in enter/try/finally-exit
 *   plugin.cc     plugin_init: version check, arguments, callbacks, __SPANPROF__
 */
#ifndef SPANPLUGIN_H
#define SPANPLUGIN_H

#include "compat.h"

/* Name the attribute is registered under (and spelled in diagnostics). */
#define SPANPLUGIN_ATTR_NAME "span"

/* -fplugin-arg-spanplugin-verbose: a note per instrumented function. */
extern bool spanplugin_verbose;

/* attribute.cc */
void spanplugin_register_attributes (void *event_data, void *user_data);
bool spanplugin_has_span (tree fndecl);
const char *spanplugin_span_name (tree fndecl);

/* site.cc */
tree spanplugin_site_type (void);
tree spanplugin_build_site (tree fndecl, const char *name);
extern const struct ggc_root_tab spanplugin_site_roots[];

/* instrument.cc */
opt_pass *spanplugin_make_pass (gcc::context *ctxt);
extern const struct ggc_root_tab spanplugin_instrument_roots[];

#endif /* SPANPLUGIN_H */
