// cxx.cc — C++ new/delete go through malloc/free (libstdc++): counted per span like malloc.
#include <spanprof.h>
#include <cstdio>
#include <vector>

struct Obj {
    char data[48];
};

static Obj *volatile kept;

__attribute__((span, noinline)) void news()
{
    for (int i = 0; i < 10; i++) {
        Obj *o = new Obj;
        kept = o;
        delete o;
    }
    int *a = new int[25];
    kept = reinterpret_cast<Obj *>(a);
    delete[] a;
    kept = new Obj; // leaked: live in "news"
}

__attribute__((span, noinline)) size_t vec()
{
    std::vector<int> v(1000);
    return v.size();
}

int main()
{
    news();
    std::printf("size %zu\n", vec());
    return 0;
}
