/* loadlib.c — a library that points.c loads with dlopen (POINTS_DLOPEN), built like it with
 * every function a span: lib_tiny() called 1,000 times by lib_work(1000).  Its points are
 * patched as it is loaded, before lib_work runs, when start-up patched the program's. */
__attribute__((noinline)) long lib_tiny(long x)
{
    return x * 3 + 1;
}

__attribute__((noinline)) long lib_work(long n)
{
    long s = 0;
    for (long i = 0; i < n; i++)
        s += lib_tiny(i);
    return s;
}
