/* nospan applies to functions only and takes no argument. */
int __attribute__ ((nospan)) v;
int __attribute__ ((nospan ("x"))) f (void) { return 0; }
