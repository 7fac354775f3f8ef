#!/bin/sh
# run.sh — objects compiled with the plugin link and run without the runtime: every sample here
# stands for a build-time tool that a project compiles with its CFLAGS (the plugin, with
# -fplugin-arg-spanplugin-all, every function: min-size=0; inline=0, the way such tools are built)
# but links without its LIBS.  Each sample is built at -O0, -O1,
# -O2, -O3, -Os and -O2 -flto (-fchecking, -Wall -Wextra -Werror), C samples with gcc and as C++
# with g++, C++ samples with g++ (the C++ library's functions left out: which of them a build
# keeps depends on the level), twice:
#   - without the runtime: it must link, reference the runtime only weakly (nm's "w" lines) and
#     run with its normal output, writing no profile;
#   - with the runtime, linked as `pkg-config --libs spanprof` does (--no-as-needed): the same
#     output, and the profile it records.
# Both results go to NAME.expected, one file for every compiler and level.
#
# Environment: CC, CXX, PLUGIN, INCLUDE_DIR, LIBDIR (holds libspanprof.so), PROFDUMP.
# Optional: ONLY="a b" to run only those samples; REGEN=1 to rewrite the expected files.
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
need_plugin
make_work_dir

# The names the program leaves undefined that belong to spanprof, with nm's symbol type.
undefined_spanprof() {
    nm -u "$1" | awk '$2 ~ /spanprof/ { print $1, $2 }' | sort -k 2
}

# run_in DIR VAR=VALUE...: runs DIR/prog in DIR, leaving status, stdout and stderr there.
run_in() {
    lib_dir=$1
    shift
    (cd "$lib_dir" && env "$@" ./prog >stdout 2>stderr; echo $? >status)
}

run_one() {
    src=$1 name=$2 label=$3 compiler=$4 level=$5
    base="$work/$name.$(echo "$label" | tr -c 'A-Za-z0-9+\n' '_')"
    mkdir -p "$base.without" "$base.with"
    flags="$compiler -g -fchecking -Wall -Wextra -Werror $level -fplugin=$PLUGIN -fplugin-arg-spanplugin-all -fplugin-arg-spanplugin-min-size=0 -fplugin-arg-spanplugin-inline=0 -fplugin-arg-spanplugin-exclude-file=/usr/* -I$INCLUDE_DIR"
    cmd="$flags $src -o $base.without/prog"
    # shellcheck disable=SC2086 # word lists
    build "$name [$label] without the runtime" "$base.without/build.log" $cmd || return
    with="$flags $src -o $base.with/prog -L$LIBDIR -Wl,--no-as-needed -lspanprof -Wl,-rpath,$LIBDIR"
    # shellcheck disable=SC2086 # word lists
    build "$name [$label] with the runtime" "$base.with/build.log" $with || return
    run_in "$base.without" SPANPROF_JSON=out.json SPANPROF_FOLDED=out.folded
    run_in "$base.with" SPANPROF_JSON=out.json SPANPROF_FOLDED=out.folded
    {
        echo "## without the runtime"
        echo "# undefined"
        undefined_spanprof "$base.without/prog"
        print_run "$base.without"
        echo "# files left"
        (cd "$base.without" && ls | grep -v -e '^prog$' -e '^build.log$' -e '^status$' \
            -e '^stdout$' -e '^stderr$')
        echo "## with the runtime"
        print_run "$base.with"
        echo "# profile"
        "$PROFDUMP" "$base.with/out.json" "$base.with/out.folded" 2>&1
    } >"$base.actual"
    compare_expected "$name" "$label" "$base.actual" "built with: $cmd"
}

test_sample() {
    case $1 in
    *.c) compilers="gcc=$CC g++=$CXX@-x@c++" ;;
    *) compilers="g++=$CXX" ;;
    esac
    for entry in $compilers; do
        tag=${entry%%=*}
        compiler=$(echo "${entry#*=}" | tr '@' ' ')
        for level in O0 O1 O2 O3 Os O2-flto; do
            flags=$(echo "-$level" | sed 's/-flto/ -flto/')
            run_one "$1" "$2" "$tag $flags" "$compiler" "$flags"
        done
    done
}

for_each_test test_sample c cc

# The other side: an object with the inline path (the default) names the runtime's layout in
# versioned symbols, so it does not link without the runtime, nor with a runtime of another
# layout (stood for here by a library exporting the hooks under the previous version's names):
# the link fails and names the missing symbol.
abi_link_fails() {
    selected abi-mismatch || return 0
    d="$work/abi"
    mkdir -p "$d"
    cat >"$d/other.c" <<'EOF_OTHER'
__thread void *__spanprof_thread_abi0;
void __spanprof_enter_abi0(void *site, void *frame, unsigned long entry) {}
void __spanprof_enter(void *site, void *frame) {}
void __spanprof_exit(void *site, void *frame) {}
EOF_OTHER
    # A span with a loop: one the inline path records by default.
    printf '__attribute__((span)) int f(int n) { int s = 0; for (int i = 0; i < n; i++) s += i; return s; }\nint main(void) { return f(1); }\n' >"$d/prog.c"
    if ! "$CC" -shared -fPIC "$d/other.c" -o "$d/libspanprof.so" 2>"$d/other.log" ||
        ! $CC -O2 -c -fplugin="$PLUGIN" -I"$INCLUDE_DIR" "$d/prog.c" -o "$d/prog.o" 2>"$d/cc.log"; then
        fail "abi-mismatch: building the test (see $d)"
        return
    fi
    for how in "without the runtime|" "with a runtime of another layout|-L$d -Wl,--no-as-needed -lspanprof"; do
        # shellcheck disable=SC2086 # a word list
        if $CC "$d/prog.o" ${how#*|} -o "$d/prog" 2>"$d/link.log"; then
            fail "abi-mismatch: an object with the inline path links ${how%|*}"
        elif grep -q "undefined reference to \`__spanprof_thread_abi1'" "$d/link.log"; then
            pass "abi-mismatch: an object with the inline path fails to link ${how%|*}, naming __spanprof_thread_abi1"
        else
            fail "abi-mismatch: the link ${how%|*} failed without naming __spanprof_thread_abi1:"
            sed 's/^/  /' "$d/link.log"
        fi
    done
}
abi_link_fails
summary
