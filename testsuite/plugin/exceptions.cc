// exceptions.cc — a C++ exception unwinding through spans runs their exits; spans get readable
// qualified names (namespace, class, template).
#include <spanprof.h>
#include <cstdio>
#include <stdexcept>

namespace store {

struct Parser {
    __attribute__((span)) int parse(int value);
};

__attribute__((noinline)) void check(int value)
{
    if (value % 3 == 0)
        throw std::runtime_error("multiple of three");
}

int Parser::parse(int value)
{
    check(value);
    return value * 2;
}

template <typename T> [[gnu::span]] T twice(T value)
{
    return value + value;
}

} // namespace store

[[gnu::span("load")]] int load(store::Parser &parser, int value)
{
    return parser.parse(value);
}

int main()
{
    store::Parser parser;
    int ok = 0, failed = 0;
    for (int i = 0; i < 10; i++) {
        try {
            ok += load(parser, i);
        } catch (const std::exception &) {
            failed++;
        }
    }
    std::printf("ok=%d failed=%d twice=%d\n", ok, failed, store::twice(21));
    return 0;
}
