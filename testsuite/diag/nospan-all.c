/* diag-flags: -fplugin-arg-spanplugin-all -fplugin-arg-spanplugin-min-size=0 -fplugin-arg-spanplugin-verbose */
/* In all-mode: nospan and no_instrument_function functions are left alone, naked ones silently. */
int __attribute__ ((nospan)) quiet (void) { return 0; }
int __attribute__ ((no_instrument_function)) untouched (void) { return 1; }
__attribute__ ((naked)) void bare (void) { __asm__ ("ret"); }
int counted (void) { return quiet () + untouched (); }
