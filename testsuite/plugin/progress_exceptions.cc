// progress_exceptions.cc — a progress point counts when a C++ exception leaves its function as
// well as on normal returns, and after the span's exit when the function has both; the default
// name is the qualified C++ name.
#include <spanprof.h>
#include <stdexcept>
#include <stdio.h>

namespace store {
struct Parser {
    __attribute__((span, progress, noinline)) int parse(int x)
    {
        if (x % 4 == 0)
            throw std::runtime_error("bad record");
        return x * 2;
    }
};

[[gnu::progress("store.batch")]] __attribute__((noinline)) int batch(Parser &p, int first)
{
    int sum = 0;
    for (int i = first; i < first + 4; i++)
        sum += p.parse(i);  // i == first (a multiple of 4) throws: the batch ends by exception
    return sum;
}
} // namespace store

int main()
{
    store::Parser p;
    int ok = 0, failed = 0;
    for (int i = 0; i < 10; i++) {
        try {
            ok += p.parse(i) > 0;
        } catch (const std::exception &) {
            failed++;
        }
    }
    int batches_failed = 0;
    for (int b = 0; b < 3; b++) {
        try {
            store::batch(p, 4 * b);
        } catch (const std::exception &) {
            batches_failed++;
        }
    }
    printf("ok=%d failed=%d batches_failed=%d\n", ok, failed, batches_failed);
    return 0;
}
