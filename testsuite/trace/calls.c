/* calls.c — trace sample for the inline path: 100,000 calls of a chain of three marked spans
 * (outer → inner → leaf) on one thread.  Once each span is registered (its first call, which
 * the runtime answers), the plugin's inline code records every call itself and has the runtime
 * push only its two trace events, so a traced run calls the runtime's entry points three times
 * in all (runtime_calls.c counts). */
static volatile unsigned long sink;

__attribute__((span, noinline)) static void leaf(unsigned long i) { sink += i; }

__attribute__((span, noinline)) static void inner(unsigned long i)
{
    leaf(i);
    sink ^= i;
}

__attribute__((span, noinline)) static void outer(unsigned long i)
{
    inner(i);
    sink += 1;
}

int main(void)
{
    for (unsigned long i = 0; i < 100000; i++)
        outer(i);
    return 0;
}
