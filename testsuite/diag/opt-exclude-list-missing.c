/* diag-flags: -fplugin-arg-spanplugin-all -fplugin-arg-spanplugin-exclude-list=no-such-file.txt */
/* An unreadable exclude list: the error names the option and gives the reason. */
int f (void) { return 0; }
