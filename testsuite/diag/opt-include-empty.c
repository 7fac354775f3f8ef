/* diag-flags: -fplugin-arg-spanplugin-all -fplugin-arg-spanplugin-include= */
/* include= with an empty list. */
int f (void) { return 0; }
