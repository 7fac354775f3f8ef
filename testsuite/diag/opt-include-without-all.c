/* diag-flags: -fplugin-arg-spanplugin-include=f* */
/* include only restricts all: a warning, and the plugin still loads (g keeps its span). */
int f (void) { return 0; }
int __attribute__ ((span)) g (void) { return 0; }
