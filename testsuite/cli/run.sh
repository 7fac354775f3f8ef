#!/bin/sh
# run.sh — tests of the spanprof command-line tool (tools/).
#
# Each case is NAME.args: the arguments (one line, split by the shell) given to the tool, run in
# this directory. Its stdout, stderr and exit status are compared with NAME.expected, laid out as
#   --- stdout / ... / --- stderr / ... / --- exit N
# so each stream is checked on its own (stdout and stderr interleave unpredictably in a pipe).
#
# Usage: SPANPROF_TOOL=/path/to/spanprof sh testsuite/cli/run.sh [--update NAME...]
#   --update NAME...  rewrite NAME.expected from the tool's current output (check it with git diff)
set -u

dir=$(cd "$(dirname "$0")" && pwd)
tool=${SPANPROF_TOOL:-}
if [ -z "$tool" ]; then
    echo "run.sh: set SPANPROF_TOOL to the spanprof binary to test" >&2
    exit 2
fi
case $tool in /*) ;; *) tool=$(pwd)/$tool ;; esac
if [ ! -x "$tool" ]; then
    echo "run.sh: SPANPROF_TOOL='$tool' is not an executable file" >&2
    exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/spanprof-cli.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM

# Runs case $1 and writes its combined record to $2.
run_case() {
    args=$(cat "$dir/$1.args")
    # Word splitting of $args is wanted: the file holds a command line.
    # shellcheck disable=SC2086
    (cd "$dir" && LC_ALL=C "$tool" $args >"$tmp/out" 2>"$tmp/err")
    status=$?
    { echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"; echo "--- exit $status"; } >"$2"
}

if [ "${1:-}" = "--update" ]; then
    shift
    for name in "$@"; do
        run_case "$name" "$dir/$name.expected" && echo "updated $name.expected"
    done
    exit 0
fi

pass=0
fail=0
for args_file in "$dir"/*.args; do
    name=$(basename "$args_file" .args)
    run_case "$name" "$tmp/actual"
    if [ -f "$dir/$name.expected" ] && cmp -s "$dir/$name.expected" "$tmp/actual"; then
        echo "PASS: $name"
        pass=$((pass + 1))
    else
        echo "FAIL: $name (spanprof $(cat "$args_file"))"
        diff -u "$dir/$name.expected" "$tmp/actual" 2>&1 | sed 's/^/    /'
        echo "    if the new output is right: SPANPROF_TOOL=$tool sh $dir/run.sh --update $name"
        fail=$((fail + 1))
    fi
done
# coz's two formats: the same experiments as text (causal.coz) and as JSON Lines (causal.jsonl)
# must give byte-identical output. Each is copied to a file named "profile" in its own folder
# and run from there, so even the header's file name is the same.
for format in coz jsonl; do
    mkdir -p "$tmp/$format"
    cp "$dir/causal.$format" "$tmp/$format/profile"
    cp "$dir/causal.json" "$tmp/$format/spans.json"
    (cd "$tmp/$format" && LC_ALL=C "$tool" coz profile spans.json >out 2>&1; echo "exit $?" >>out)
done
if cmp -s "$tmp/coz/out" "$tmp/jsonl/out"; then
    echo "PASS: coz-formats-identical"
    pass=$((pass + 1))
else
    echo "FAIL: coz-formats-identical (spanprof coz on causal.coz and on causal.jsonl differ)"
    diff -u "$tmp/coz/out" "$tmp/jsonl/out" | sed 's/^/    /'
    fail=$((fail + 1))
fi

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
