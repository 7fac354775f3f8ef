# lib.sh — what every test runner shares: a scratch folder, the PASS/FAIL/SKIP lines and their
# counts, choosing tests by name (ONLY), building a sample, comparing an output with its expected
# file (or rewriting that file with REGEN=1) and the closing line "SUITE: N passed, N failed".
#
# A runner sources this file first (`. "$(dirname "$0")/../lib.sh"`), which sets `here`, the
# runner's folder, and `suite`, the suite's name: the folder's for a run.sh (plugin/run.sh is
# "plugin", run by `make check-plugin`), the script's otherwise (e2e/coz.sh is "coz").
# Expected files are named TEST.expected and sit in the runner's folder; a test run in several
# variants (compilers, optimisation levels) has one expected file for all of them.
#
# Environment, for every runner:
#   ONLY="a b"  run only the tests of those names (empty: all)
#   REGEN=1     rewrite each expected file from the test's first variant instead of comparing;
#               the other variants are then compared with the new file
#   EMULATOR    runs the programs the tests build when they are for another machine (a cross
#               build's tests, make check-arm64: "qemu-aarch64 -L /usr/aarch64-linux-gnu")
# Every mismatch ends with the command that regenerates that test's expected file:
#   make check-SUITE REGEN=1 ONLY=TEST
# (a runner that make runs under another target's name sets check_target, e.g. check-e2e).
# shellcheck shell=sh disable=SC2034 # the variables set here are read by the runners
set -u
here=$(cd "$(dirname "$0")" && pwd)
suite=${0##*/}
suite=${suite%.sh}
[ "$suite" = run ] && suite=${here##*/}

# Fixed message language and ASCII quotes in compiler and tool output, whatever the caller's locale.
LC_ALL=C
export LC_ALL

passed=0
failed=0
skipped=0
regenerated=0
lib_regenerated=' '  # names of the tests whose expected file this run rewrote
lib_filtered=0       # 1 once a runner asked `selected`

pass() {
    echo "PASS $*"
    passed=$((passed + 1))
}

fail() {
    echo "FAIL $*"
    failed=$((failed + 1))
}

skip() {
    echo "SKIP $*"
    skipped=$((skipped + 1))
}

# result STATUS LABEL: PASS LABEL when STATUS is 0, FAIL LABEL otherwise (for checks that are a
# command's exit status).
result() {
    if [ "$1" -eq 0 ]; then pass "$2"; else fail "$2"; fi
}

# selected NAME: true when ONLY (space-separated names; empty means all) includes NAME.
selected() {
    lib_filtered=1
    [ -z "${ONLY:-}" ] && return 0
    case " $ONLY " in *" $1 "*) return 0 ;; esac
    return 1
}

# for_each_test FUNCTION EXT...: calls `FUNCTION PATH NAME` for every NAME.EXT in the runner's
# folder (the extensions in the order given) that ONLY selects.
for_each_test() {
    lib_function=$1
    shift
    for lib_ext in "$@"; do
        for lib_path in "$here"/*."$lib_ext"; do
            [ -f "$lib_path" ] || continue
            lib_name=${lib_path##*/}
            lib_name=${lib_name%."$lib_ext"}
            selected "$lib_name" || continue
            "$lib_function" "$lib_path" "$lib_name"
        done
    done
}

# make_work_dir: a fresh scratch folder in $work, removed when the runner exits or is interrupted.
make_work_dir() {
    work=$(mktemp -d "${TMPDIR:-/tmp}/spanprof-$suite.XXXXXX") || exit 2
    trap 'rm -rf "$work"' EXIT
    trap 'exit 130' INT TERM
}

# need_plugin: stops with status 2 unless PLUGIN names the built spanplugin.so; makes PLUGIN and
# INCLUDE_DIR (default: this tree's include/) absolute, for runners that compile in other folders.
need_plugin() {
    if [ -z "${PLUGIN:-}" ] || [ ! -f "$PLUGIN" ]; then
        echo "$suite: set PLUGIN to the path of spanplugin.so (PLUGIN='${PLUGIN:-}' is not a file)" >&2
        exit 2
    fi
    INCLUDE_DIR=${INCLUDE_DIR:-$here/../../include}
    case $PLUGIN in /*) ;; *) PLUGIN=$(pwd)/$PLUGIN ;; esac
    case $INCLUDE_DIR in /*) ;; *) INCLUDE_DIR=$(pwd)/$INCLUDE_DIR ;; esac
}

# build LABEL LOG COMMAND...: runs a build command with its output in LOG; when it fails, counts
# "FAIL LABEL: does not build", shows the command and its output, and returns false.
build() {
    lib_label=$1 lib_log=$2
    shift 2
    "$@" >"$lib_log" 2>&1 && return 0
    fail "$lib_label: does not build"
    echo "  $*"
    sed 's/^/  | /' "$lib_log"
    return 1
}

# file_directive KEY FILE: the value of FILE's first "KEY: VALUE" line, without a trailing "*/"
# (a test program's settings, written in its comments).
file_directive() {
    sed -n "s|.*$1:[[:space:]]*\\(.*\\)\$|\\1|p" "$2" | sed 's|[[:space:]]*\*/.*$||' | head -n 1
}

# build_sample SRC NAME LABEL COMPILER-AND-FLAGS: compiles and links the sample SRC with the
# plugin and the runtime into $dir/prog, $dir being a fresh folder for this variant of test NAME;
# sets $cmd (the build command, for messages) and $test_env (the assignments of the sample's
# "/* test-env: VAR=VALUE ... */" line).  False, after a counted FAIL, when it does not build.
# SAMPLE_PLUGIN_ARGS: -fplugin-arg-spanplugin-* options for every sample (after -fplugin).
build_sample() {
    dir="$work/$2.$(echo "$3" | tr -c 'A-Za-z0-9+\n' '_')"
    mkdir -p "$dir"
    cmd="$4 -fplugin=$PLUGIN ${SAMPLE_PLUGIN_ARGS:-} -I$INCLUDE_DIR $1 -x none -o $dir/prog -L$LIBDIR -Wl,--no-as-needed -lspanprof -Wl,-rpath,$LIBDIR -pthread"
    test_env=$(sed -n 's|.*test-env: \(.*\) \*/.*|\1|p' "$1")
    # shellcheck disable=SC2086 # a word list
    build "$2 [$3]" "$dir/build.log" $cmd
}

# run_sample VAR=VALUE...: runs $dir/prog in $dir with that environment, then the sample's own
# test-env; leaves its exit status, stdout, stderr and pid in files of those names in $dir.
run_sample() {
    # shellcheck disable=SC2086 # test_env is a list of assignments, EMULATOR a command
    (cd "$dir" && env "$@" $test_env ${EMULATOR:-} "$dir/prog" >stdout 2>stderr & echo $! >"$dir/pid"
     wait $!; echo $? >"$dir/status")
}

# print_run DIR: the start of a sample's normalised result, from the files a runner left in DIR
# (status, stdout, stderr).
print_run() {
    echo "# exit $(cat "$1/status")"
    echo "# stdout"
    cat "$1/stdout"
    echo "# stderr"
    cat "$1/stderr"
}

# compare_files LABEL EXPECTED ACTUAL ADVICE [CONTEXT]: PASS LABEL when the two files are equal;
# otherwise FAIL LABEL, then CONTEXT (e.g. the build command), the diff and ADVICE (what to do,
# usually the command that regenerates the expected file).
compare_files() {
    if diff -u "$2" "$3" >"$3.diff" 2>&1; then
        pass "$1"
        return 0
    fi
    fail "$1"
    if [ -n "${5:-}" ]; then echo "  $5"; fi
    sed 's/^/  /' "$3.diff"
    echo "  $4"
    return 1
}

# compare_expected NAME LABEL ACTUAL [CONTEXT]: compares the file ACTUAL with $here/NAME.expected
# (see compare_files).  With REGEN=1 the first variant of NAME rewrites the expected file instead.
compare_expected() {
    lib_expected="$here/$1.expected"
    lib_hint="if the new output is right: make ${check_target:-check-$suite} REGEN=1 ONLY=$1"
    if [ "${REGEN:-0}" = 1 ]; then
        case $lib_regenerated in
        *" $1 "*)
            # Rewriting cannot help: this variant disagrees with the one that wrote the file.
            lib_hint="this variant's output differs from the one REGEN=1 just wrote: the variants disagree"
            ;;
        *)
            cp "$3" "$lib_expected"
            echo "REGEN $1 [$2] -> $lib_expected"
            lib_regenerated="$lib_regenerated$1 "
            regenerated=$((regenerated + 1))
            return 0
            ;;
        esac
    fi
    compare_files "$1 [$2]" "$lib_expected" "$3" "$lib_hint" "${4:-}"
}

# summary: the closing line "SUITE: N passed, N failed[, N skipped][, N rewritten]" (rewritten:
# expected files, with REGEN=1); false if anything failed.
summary() {
    lib_line="$suite: $passed passed, $failed failed"
    [ "$skipped" -gt 0 ] && lib_line="$lib_line, $skipped skipped"
    [ "$regenerated" -gt 0 ] && lib_line="$lib_line, $regenerated rewritten"
    if [ -n "${ONLY:-}" ] && [ "$lib_filtered" = 1 ] &&
        [ $((passed + failed + skipped + regenerated)) -eq 0 ]; then
        echo "$suite: no test here is named ONLY='$ONLY'"
    fi
    echo "$lib_line"
    [ "$failed" -eq 0 ]
}

# finish: summary, then exit with its status (for a runner that stops early).
finish() {
    summary
    exit
}
