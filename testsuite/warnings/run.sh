#!/bin/sh
# run.sh — warning parity: a program built with the plugin (`-fplugin-arg-spanplugin-all`, the
# inline path on: every span it can) gets exactly the warnings of its plain build.
#
# Compiles each NAME.c (with $CC) and NAME.cc (with $CXX) in this directory at -O1, -O2, -O3
# and -Os with -Wall -Wextra, once without the plugin and once with it, and compares the set of
# warnings of each build — "FILE:LINE: [-WKIND]", each once, sorted — with NAME.expected: the
# plain build's warnings, which the build with the plugin must match.  Each file holds code on which the
# plugin's code once changed what GCC's warnings found (predicate analysis of
# -Wmaybe-uninitialized, the late access warnings), and at least one warning both builds give,
# so that a compiler printing none at all cannot pass.  Lines in a test file:
#   warnings-flags: ...     extra compiler flags for both builds (the rest of the line, up to "*/")
#   warnings-gcc: N         needs GCC N or later (SKIP otherwise)
#   warnings-skip: N LEVEL  not at -LEVEL with GCC N (SKIP; the file says why)
# Environment: PLUGIN (path to spanplugin.so, required), CC (default gcc), CXX (default g++),
#   INCLUDE_DIR (spanprof.h's directory), LEVELS (default "O1 O2 O3 Os").  ONLY="a b" runs only
#   those tests; REGEN=1 rewrites the expected files from the plain -O1 build (see ../lib.sh).
# Output: "PASS NAME [gcc -O2]" (with the plugin) / "PASS NAME [gcc -O2, without plugin]", the
#   diff on a FAIL, then "warnings: N passed, M failed".  Exit status 1 if any test failed, 2 on
#   a setup error.
CC=${CC:-gcc}
CXX=${CXX:-g++}
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
need_plugin
make_work_dir

# The value of a "warnings-KEY:" line in file $2, without a trailing "*/".
directive () {
    file_directive "warnings-$1" "$2"
}

# The warnings of a compiler's output, as "FILE:LINE: [-WKIND]", each once.
warnings () {
    sed -n 's|^\([^ :]*:[0-9]*\):[0-9]*: warning: .*\[\(-W[^]]*\)\]$|\1: [\2]|p' | sort -u
}

# run_one NAME FILE COMPILER LABEL FLAGS PLUGIN-FLAGS: compile FILE, compare its warnings with
# NAME.expected.
run_one () {
    name=$1 file=$2 compiler=$3 label=$4 build_flags=$5 plugin_flags=$6
    cmd="$compiler $plugin_flags -fdiagnostics-plain-output -Wall -Wextra $build_flags -c $file -o /dev/null"
    # Run inside this directory so locations read "FILE:LINE", without a path.
    # shellcheck disable=SC2086 # a word list
    (cd "$here" && $cmd) >"$work/out" 2>&1
    if grep -q ': error:' "$work/out"; then
        fail "$name [$label]: does not build"
        echo "  $cmd"
        sed 's/^/  | /' "$work/out"
        return
    fi
    warnings <"$work/out" >"$work/got"
    compare_expected "$name" "$label" "$work/got" "compiled in $here with: $cmd"
}

test_file () {
    case $1 in *.cc) compiler=$CXX tag=g++ ;; *) compiler=$CC tag=gcc ;; esac
    needs=$(directive gcc "$1")
    if [ -n "$needs" ]; then
        major=$($compiler -dumpversion | sed 's/\..*//')
        if [ "$major" -lt "$needs" ]; then
            skip "$2 [$tag]: needs GCC $needs or later"
            return
        fi
    fi
    flags=$(directive flags "$1")
    not_here=$(directive skip "$1")
    major=$($compiler -dumpversion | sed 's/\..*//')
    for level in ${LEVELS:-O1 O2 O3 Os}; do
        if [ "$not_here" = "$major $level" ]; then
            skip "$2 [$tag -$level]: not with GCC $major (see $2.${1##*.})"
            continue
        fi
        run_one "$2" "${1##*/}" "$compiler" "$tag -$level, without plugin" "-$level $flags" ""
        run_one "$2" "${1##*/}" "$compiler" "$tag -$level" "-$level $flags" \
            "-fplugin=$PLUGIN -fplugin-arg-spanplugin-all -I$INCLUDE_DIR"
    done
}

for_each_test test_file c cc
summary
