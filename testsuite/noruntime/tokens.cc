// tokens.cc — the C++ side of keywords.c: a host tool built with the plugin and linked without
// the runtime, whose spans include an exception thrown through them, inline functions and a
// template (COMDAT sites), a constructor/destructor pair and a lambda.
#include <spanprof.h>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

struct Lexer {
    explicit Lexer(const std::string &text) : text_(text) {}
    ~Lexer() { std::printf("lexer done at %zu\n", pos_); }
    __attribute__((span)) std::string next();
    bool done() const { return pos_ >= text_.size(); }

private:
    std::string text_;
    std::size_t pos_ = 0;
};

std::string Lexer::next()
{
    while (pos_ < text_.size() && text_[pos_] == ' ')
        pos_++;
    std::size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != ' ')
        pos_++;
    std::string word = text_.substr(start, pos_ - start);
    if (word == "?")
        throw std::invalid_argument("bad token");
    return word;
}

template <typename T> [[gnu::span]] inline T twice(T value)
{
    return value + value;
}

int main()
{
    int tokens = 0, errors = 0;
    {
        Lexer lexer("int x ? = 4 ; ? return x");
        while (!lexer.done()) {
            try {
                std::string word = lexer.next();
                if (!word.empty())
                    tokens++;
            } catch (const std::invalid_argument &) {
                errors++;
            }
        }
    }
    auto count = [](const std::vector<int> &v) {
        int n = 0;
        for (int x : v)
            n += x > 1;
        return n;
    };
    std::printf("tokens %d errors %d twice %d %.1f big %d\n", tokens, errors, twice(21), twice(1.25),
                count({ 1, 2, 3 }));
    return 0;
}
