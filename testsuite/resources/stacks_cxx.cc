// stacks_cxx.cc — sampled allocation stacks in C++: native frames in the memory flame graph are
// demangled (store::Table::make(), operator new) and sit under the span that called them.
/* test: needs-libunwind */
/* test-env: SPANPROF_ALLOC_STACKS=1 SPANPROF_ALLOC_SAMPLE=524288 */
#include <spanprof.h>
#include <cstdio>

enum { N = 64, SIZE = 1 << 20 };
static char *volatile sink;

namespace store {
struct Table {
    __attribute__((noinline)) void make()
    {
        char *p = new char[SIZE];
        sink = p;
        delete[] p;
        __asm__ volatile("" ::: "memory"); // not a tail call: keep this frame
    }
};
} // namespace store

[[gnu::span, gnu::noinline]] void build()
{
    store::Table table;
    for (int i = 0; i < N; i++)
        table.make();
}

int main()
{
    build();
    std::printf("expect-bytes %d\n", N * SIZE);
    return 0;
}
