# bzip2.sh — bzip2: the block-sorting compressor, built with its plain Makefile (no configure);
# `make check` compresses and decompresses the three sample files at several block sizes and
# compares them with the reference output.  Single-threaded, long hot loops in few functions.
PACKAGE=bzip2
MIN_SPANS=100
MIN_HIT=40

real_build() {
    # The Makefile takes CC, CFLAGS and LDFLAGS on the command line and has no LIBS, so the
    # runtime goes into LDFLAGS, which come before the objects: --no-as-needed keeps it.  Its default CFLAGS carry -D_FILE_OFFSET_BITS=64: keep it.
    make -j2 CC="$CC" CFLAGS="$CFLAGS -D_FILE_OFFSET_BITS=64" LDFLAGS="$LDFLAGS ${LIBS:+-Wl,--no-as-needed $LIBS}" bzip2 bzip2recover
}

real_test() {
    make check CC="$CC" CFLAGS="$CFLAGS -D_FILE_OFFSET_BITS=64" LDFLAGS="$LDFLAGS ${LIBS:+-Wl,--no-as-needed $LIBS}"
}
