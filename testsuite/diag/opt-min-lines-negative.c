/* diag-flags: -fplugin-arg-spanplugin-all -fplugin-arg-spanplugin-min-lines=-3 */
/* A negative line count is rejected like any other non-number. */
int f (void) { return 0; }
