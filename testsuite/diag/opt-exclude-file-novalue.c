/* diag-flags: -fplugin-arg-spanplugin-all -fplugin-arg-spanplugin-exclude-file */
/* exclude-file without =GLOB,... */
int f (void) { return 0; }
