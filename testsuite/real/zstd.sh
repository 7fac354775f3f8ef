# zstd.sh — zstd: the Zstandard compressor (source package libzstd), built the way its own
# tests/Makefile builds it: the multithreaded zstd CLI, datagen and poolTests (~2000 functions
# instrumented).  The test is `make -C tests test-pool`: poolTests drives lib/common/pool.c's
# thread pool — dozens of worker threads, jobs queued while the pool is resized and freed.
# `check` (playTests.sh, with multithreaded -T round trips) passes instrumented too, but takes
# about nine minutes there (forty seconds plain): too slow for this suite.
PACKAGE=libzstd
MIN_SPANS=1500
MIN_HIT=15
# Some test process must have run spans on more than one thread.
MIN_THREADS=2

# tests/Makefile passes its own MOREFLAGS down to programs/Makefile, whose object directory is
# named after a hash of the flags: zstd is built from tests/, so that `make -C tests check` finds
# it built.
# CC and CFLAGS come from the environment (on the command line they would override the
# Makefiles' own additions); LDFLAGS come before the objects there, hence --no-as-needed.
zstd_make() {
    LDFLAGS="$LDFLAGS ${LIBS:+-Wl,--no-as-needed $LIBS}" make -C tests "$@"
}

real_build() {
    zstd_make -j2 zstd datagen poolTests
}

real_test() {
    zstd_make test-pool
}
