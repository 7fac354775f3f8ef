#!/bin/sh
# run.sh — diagnostics tests for the spanprof GCC plugin.
#
# Compiles each *.c (with $CC) and *.cc (with $CXX) in this directory with the plugin and
# compares the diagnostics GCC prints — only the lines containing ": error:", ": warning:" or
# ": note:", exactly as printed — with FILE.expected.  Lines in a test file:
#   diag-flags: ...    extra compiler flags (the rest of the line, up to "*/")
#   diag-mode: both    also compile without the plugin; the same expected output applies
# Environment: PLUGIN (path to spanplugin.so, required), CC (default gcc), CXX (default g++),
#   INCLUDE_DIR (spanprof.h's directory, default ../../include from here).
# Output: "PASS name" / "FAIL name" (+ diff and the command that regenerates the expected file),
#   then "diag: N passed, M failed".  Exit status 1 if any test failed, 2 on a setup error.

CC=${CC:-gcc}
CXX=${CXX:-g++}
here=$(cd "$(dirname "$0")" && pwd)
INCLUDE_DIR=${INCLUDE_DIR:-$here/../../include}

if [ -z "$PLUGIN" ] || [ ! -f "$PLUGIN" ]; then
    echo "run.sh: set PLUGIN to the path of spanplugin.so" >&2
    exit 2
fi
case $PLUGIN in /*) ;; *) PLUGIN=$(pwd)/$PLUGIN ;; esac
case $INCLUDE_DIR in /*) ;; *) INCLUDE_DIR=$(pwd)/$INCLUDE_DIR ;; esac

# Fixed message language and ASCII quotes, whatever the caller's locale.
LC_ALL=C
export LC_ALL

tmp=$(mktemp -d "${TMPDIR:-/tmp}/spanprof-diag.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM

passed=0
failed=0

# The value of a "diag-KEY:" line in file $2, without a trailing "*/".
directive () {
    sed -n "s|.*diag-$1:[[:space:]]*\\(.*\\)\$|\\1|p" "$2" | sed 's|[[:space:]]*\*/.*$||' | head -n 1
}

# Keeps the diagnostic lines; the plugin's path (it appears in GCC's "failed to initialize
# plugin" error) becomes the word PLUGIN so expected files do not depend on the build tree.
filter () {
    grep -E ': (error|warning|note):' | awk -v p="$PLUGIN" '{
        while ((i = index($0, p)) > 0) $0 = substr($0, 1, i - 1) "PLUGIN" substr($0, i + length(p))
        print }'
}

# run_one NAME COMPILER USE_PLUGIN FLAGS: compile, compare, report.
run_one () {
    name=$1 compiler=$2 with_plugin=$3 flags=$4
    if [ "$with_plugin" = yes ]; then
        plugin_flags="-fplugin=$PLUGIN"
        label=$name
    else
        plugin_flags=
        label="$name (without plugin)"
    fi
    cmd="$compiler $plugin_flags -fdiagnostics-plain-output -I$INCLUDE_DIR $flags -c $name -o /dev/null"
    # Run inside this directory so locations read "NAME:LINE:COL", without a path.
    (cd "$here" && $cmd) >"$tmp/out" 2>&1
    filter <"$tmp/out" >"$tmp/got"
    if diff -u "$here/$name.expected" "$tmp/got" >"$tmp/diff" 2>&1; then
        echo "PASS $label"
        passed=$((passed + 1))
    else
        echo "FAIL $label"
        cat "$tmp/diff"
        echo "  to regenerate: (cd $here && LC_ALL=C $cmd 2>&1 | grep -E ': (error|warning|note):' | sed 's|$PLUGIN|PLUGIN|g' > $name.expected)"
        failed=$((failed + 1))
    fi
}

for src in "$here"/*.c "$here"/*.cc; do
    [ -f "$src" ] || continue
    name=$(basename "$src")
    case $name in *.cc) compiler=$CXX ;; *) compiler=$CC ;; esac
    flags=$(directive flags "$src")
    run_one "$name" "$compiler" yes "$flags"
    if [ "$(directive mode "$src")" = both ]; then
        run_one "$name" "$compiler" no "$flags"
    fi
done

echo "diag: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
