/* diag-flags: -fplugin-arg-spanplugin-all -fplugin-arg-spanplugin-min-size=12x */
/* min-size takes a non-negative decimal number of statements; anything else is an error naming the option. */
int f (void) { return 0; }
