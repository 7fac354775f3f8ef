#!/bin/sh
# run.sh — objects compiled with the plugin link and run without the runtime: every sample here
# stands for a build-time tool that a project compiles with its CFLAGS (the plugin, with
# -fplugin-arg-spanplugin-all, every function: min-size=0) but links without its LIBS.  Each sample is built at -O0, -O1,
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
    flags="$compiler -g -fchecking -Wall -Wextra -Werror $level -fplugin=$PLUGIN -fplugin-arg-spanplugin-all -fplugin-arg-spanplugin-min-size=0 -fplugin-arg-spanplugin-exclude-file=/usr/* -I$INCLUDE_DIR"
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
summary
