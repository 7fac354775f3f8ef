/* diag-flags: -fplugin-arg-spanplugin-all -fplugin-arg-spanplugin-min-lines=abc */
/* min-lines takes a non-negative decimal number; anything else is an error naming the option. */
int f (void) { return 0; }
