# zlib.sh — zlib: the deflate/inflate library and its example and minigzip programs, built as
# a static and a shared library (so spans live in a shared object too); `make test` runs the
# examples against both.  Single-threaded, many small functions, little recursion.
PACKAGE=zlib
# Floors, not exact counts: a Debian point release may add or drop a function or two.
MIN_SPANS=130
MIN_HIT=60

real_build() {
    # zlib's own configure takes CC, CFLAGS and LDFLAGS from the environment; it has no LIBS,
    # and LDFLAGS come before the objects, where --as-needed (the toolchain's default) would
    # drop a library nothing has asked for yet.
    CC="$CC" CFLAGS="$CFLAGS" LDFLAGS="$LDFLAGS ${LIBS:+-Wl,--no-as-needed $LIBS}" ./configure && make -j2
}

real_test() {
    make test
}
