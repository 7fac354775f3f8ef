/* diag-flags: -fplugin-arg-spanplugin-all -fplugin-arg-spanplugin-include */
/* include without =GLOB,... */
int f (void) { return 0; }
