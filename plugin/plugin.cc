/* plugin.cc — entry point of spanplugin.so, the spanprof GCC plugin.
 *
 * Usage:  gcc -fplugin=/path/to/spanplugin.so [-fplugin-arg-spanplugin-KEY[=VALUE] ...] ...
 *
 * Options (-fplugin-arg-spanplugin-*); any other key is an error:
 *   -fplugin-arg-spanplugin-verbose   a note "spanplugin: instrumented 'NAME'" at each
 *                                     instrumented function
 *
 * Effects: registers the `span` function attribute (attribute.cc), inserts the instrumenting
 * pass before "lower" (instrument.cc), and defines the macro __SPANPROF__=1 so spanprof.h's
 * SPAN / SPAN_NAMED macros expand to the attribute.
 *
 * For -flto, pass -fplugin at link time too if lto1 should load it; the instrumentation itself
 * is already done at compile time, so lto1 only needs the plugin to load cleanly.
 */
#include "spanplugin.h"
#include "plugin-version.h"   /* gcc_version: the GCC these headers come from */

#ifndef SPANPROF_VERSION
#define SPANPROF_VERSION "0.1.0"
#endif

/* Required by GCC to load the plugin. */
int plugin_is_GPL_compatible;

bool spanplugin_verbose;

static struct plugin_info spanplugin_info = {
  SPANPROF_VERSION,
  "Instruments functions marked __attribute__((span)) with calls into the spanprof runtime.\n"
  "Options:\n"
  "  -fplugin-arg-spanplugin-verbose   note each instrumented function\n",
};

/* Returns false (after an error) if an argument is unknown or malformed. */
static bool
parse_arguments (const struct plugin_name_args *info)
{
  bool ok = true;
  for (int i = 0; i < info->argc; i++)
    {
      const struct plugin_argument *arg = &info->argv[i];
      if (strcmp (arg->key, "verbose") == 0)
        {
          if (arg->value)
            {
              error ("spanplugin: option %<-fplugin-arg-%s-%s%> takes no value",
                     info->base_name, arg->key);
              ok = false;
            }
          spanplugin_verbose = true;
        }
      else
        {
          error ("spanplugin: unknown option %<-fplugin-arg-%s-%s%>", info->base_name, arg->key);
          ok = false;
        }
    }
  return ok;
}

static void
define_macro (void *event_data, void *user_data)
{
  spanplugin_cpp_define ("__SPANPROF__=1");
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
  if (!parse_arguments (info))
    return 1;

  const char *name = info->base_name;
  register_callback (name, PLUGIN_INFO, NULL, &spanplugin_info);
  register_callback (name, PLUGIN_REGISTER_GGC_ROOTS, NULL,
                     const_cast<ggc_root_tab *> (spanplugin_site_roots));
  register_callback (name, PLUGIN_REGISTER_GGC_ROOTS, NULL,
                     const_cast<ggc_root_tab *> (spanplugin_instrument_roots));
  register_callback (name, PLUGIN_ATTRIBUTES, spanplugin_register_attributes, NULL);

  struct register_pass_info pass_info;
  pass_info.pass = spanplugin_make_pass (g);
  pass_info.reference_pass_name = "lower";
  pass_info.ref_pass_instance_number = 1;
  pass_info.pos_op = PASS_POS_INSERT_BEFORE;
  register_callback (name, PLUGIN_PASS_MANAGER_SETUP, NULL, &pass_info);

  /* __SPANPROF__: PLUGIN_PRAGMAS is the first event at which cpplib is ready (earlier, in
   * plugin_init, cpp_define crashes).  It fires in cc1/cc1plus also for -E, before the built-in
   * and command-line macros are processed, so a command-line -U__SPANPROF__ still wins.  lto1
   * never raises it and has no preprocessor. */
  register_callback (name, PLUGIN_PRAGMAS, define_macro, NULL);
  return 0;
}
