/* diag-flags: -fplugin-arg-spanplugin-exclude=f* -fplugin-arg-spanplugin-verbose */
/* exclude filters only what all / functions= select: a warning; attributes are not filtered. */
int __attribute__ ((span)) f (void) { return 0; }
