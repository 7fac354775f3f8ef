#!/bin/sh
# run.sh — diagnostics tests for the spanprof GCC plugin.
#
# Compiles each NAME.c (with $CC) and NAME.cc (with $CXX) in this directory with the plugin and
# compares the diagnostics GCC prints — only the lines containing ": error:", ": warning:" or
# ": note:", exactly as printed — with NAME.expected.  Lines in a test file:
#   diag-flags: ...    extra compiler flags (the rest of the line, up to "*/")
#   diag-mode: both    also compile without the plugin; the same expected output applies
# Environment: PLUGIN (path to spanplugin.so, required), CC (default gcc), CXX (default g++),
#   INCLUDE_DIR (spanprof.h's directory, default ../../include from here).  ONLY="a b" runs only
#   those tests; REGEN=1 rewrites the expected files (see ../lib.sh).
# Output: "PASS NAME [gcc]" / "FAIL NAME [gcc]" (+ the command, the diff and the command that
#   regenerates the expected file), then "diag: N passed, M failed".  Exit status 1 if any test
#   failed, 2 on a setup error.
CC=${CC:-gcc}
CXX=${CXX:-g++}
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
need_plugin
make_work_dir

# The value of a "diag-KEY:" line in file $2, without a trailing "*/".
directive () {
    file_directive "diag-$1" "$2"
}

# Keeps the diagnostic lines; the plugin's path (it appears in GCC's "failed to initialize
# plugin" error) becomes the word PLUGIN so expected files do not depend on the build tree.
filter () {
    grep -E ': (error|warning|note):' | awk -v p="$PLUGIN" '{
        while ((i = index($0, p)) > 0) $0 = substr($0, 1, i - 1) "PLUGIN" substr($0, i + length(p))
        print }'
}

# run_one NAME FILE COMPILER LABEL USE_PLUGIN FLAGS: compile FILE, compare with NAME.expected.
run_one () {
    name=$1 file=$2 compiler=$3 label=$4 with_plugin=$5 flags=$6
    plugin_flags=
    if [ "$with_plugin" = yes ]; then
        plugin_flags="-fplugin=$PLUGIN"
    else
        label="$label, without plugin"
    fi
    cmd="$compiler $plugin_flags -fdiagnostics-plain-output -I$INCLUDE_DIR $flags -c $file -o /dev/null"
    # Run inside this directory so locations read "FILE:LINE:COL", without a path.
    # shellcheck disable=SC2086 # a word list
    (cd "$here" && $cmd) >"$work/out" 2>&1
    filter <"$work/out" >"$work/got"
    compare_expected "$name" "$label" "$work/got" "compiled in $here with: $cmd"
}

# test_file SRC NAME: with the plugin and, for "diag-mode: both", without.
test_file () {
    case $1 in *.cc) compiler=$CXX tag=g++ ;; *) compiler=$CC tag=gcc ;; esac
    flags=$(directive flags "$1")
    run_one "$2" "${1##*/}" "$compiler" "$tag" yes "$flags"
    if [ "$(directive mode "$1")" = both ]; then
        run_one "$2" "${1##*/}" "$compiler" "$tag" no "$flags"
    fi
}

for_each_test test_file c cc
summary
