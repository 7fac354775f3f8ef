# xz-utils.sh — xz-utils: liblzma and the xz tool, an autotools build; `make check` runs
# liblzma's unit tests (tuktest), decompresses the test files and round-trips generated data
# through every filter chain.  Big encoder/decoder state machines, function pointers, and
# liblzma's threaded encoder support is built in (--enable-threads is the default).
PACKAGE=xz-utils
MIN_SPANS=600
MIN_HIT=250

real_build() {
    # Static only: libtool would otherwise compile everything twice.
    ./configure CC="$CC" CFLAGS="$CFLAGS" LDFLAGS="$LDFLAGS" LIBS="$LIBS" \
        --disable-shared --disable-nls --disable-doc && make -j2
}

real_test() {
    make -j2 check
}
