/* diag-flags: -fplugin-arg-spanplugin-all -fplugin-arg-spanplugin-exclude=a,,b */
/* An empty pattern inside the list (a stray comma) is an error. */
int f (void) { return 0; }
