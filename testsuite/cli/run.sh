#!/bin/sh
# run.sh — tests of the spanprof command-line tool (tools/).
#
# Each case is NAME.args: the arguments (one line, split by the shell) given to the tool, run in
# this directory. Its stdout, stderr and exit status are compared with NAME.expected, laid out as
#   --- stdout / ... / --- stderr / ... / --- exit N
# so each stream is checked on its own (stdout and stderr interleave unpredictably in a pipe).
#
# Usage: SPANPROF_TOOL=/path/to/spanprof sh testsuite/cli/run.sh
#   ONLY="a b" runs only those cases; REGEN=1 rewrites their expected files from the tool's current
#   output (check it with git diff; see ../lib.sh).
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
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
make_work_dir

# Runs the tool with the arguments $1 and writes its combined record to $2.
run_case() {
    # Word splitting of $1 is wanted: the file holds a command line.
    # shellcheck disable=SC2086
    (cd "$here" && "$tool" $1 >"$work/out" 2>"$work/err")
    status=$?
    { echo "--- stdout"; cat "$work/out"; echo "--- stderr"; cat "$work/err"; echo "--- exit $status"; } >"$2"
}

# test_case ARGS-FILE NAME
test_case() {
    args=$(cat "$1")
    run_case "$args" "$work/actual"
    compare_expected "$2" "spanprof $args" "$work/actual"
}

for_each_test test_case args

# coz's two formats: the same experiments as text (causal.coz) and as JSON Lines (causal.jsonl)
# must give byte-identical output. Each is copied to a file named "profile" in its own folder
# and run from there, so even the header's file name is the same.
if selected coz-formats-identical; then
    for format in coz jsonl; do
        mkdir -p "$work/$format"
        cp "$here/causal.$format" "$work/$format/profile"
        cp "$here/causal.json" "$work/$format/spans.json"
        (cd "$work/$format" && "$tool" coz profile spans.json >out 2>&1; echo "exit $?" >>out)
    done
    compare_files "coz-formats-identical [causal.coz and causal.jsonl]" "$work/coz/out" \
        "$work/jsonl/out" "spanprof coz must read both of coz's formats to the same table"
fi
# `spanprof record` given a program of another machine (a 64-byte ELF header of an aarch64
# executable, which the kernel refuses: ENOEXEC): the message names its machine and qemu, not the
# shell's "Syntax error" that execvp's fallback to /bin/sh printed.  Under an emulator (make
# check-arm64) the tool is itself an aarch64 program and says why the kernel refuses its own kind.
if selected record-foreign-elf; then
    if [ -n "${EMULATOR:-}" ]; then
        skip "record-foreign-elf: the tool runs under $EMULATOR"
    else
        mkdir "$work/foreign"
        # e_ident: ELF, 64-bit, little-endian, version 1; e_type 2 (executable); e_machine 183
        # (aarch64); e_version 1; the rest zero.
        { printf '\177ELF\002\001\001\000\000\000\000\000\000\000\000\000'
          printf '\002\000\267\000\001\000\000\000'
          head -c 40 /dev/zero; } >"$work/foreign/prog"
        chmod +x "$work/foreign/prog"
        (cd "$work/foreign" && "$tool" record -o run -- ./prog >out 2>err; echo "--- exit $?" >status)
        { echo "--- stdout"; cat "$work/foreign/out"; echo "--- stderr"; cat "$work/foreign/err"
          cat "$work/foreign/status"; } >"$work/actual"
        compare_expected record-foreign-elf "spanprof record -- ./prog (an aarch64 ELF header)" "$work/actual"
    fi
fi

# What `spanprof view` embeds in its page (the profile in base64, after loadFileFromBase64's
# name), decoded: speedscope's file format made from folded stacks (view-small.folded.txt: one
# sampled profile, values in ns; with --unit=bytes, in bytes) and from a trace
# (view-threads.trace.json: a profile per thread, in ns, the busiest — worker — shown first; the
# idle thread, with no span, left out), pretty-printed by json_pp; a trace with events this does
# not convert (view-foreign.trace.json, a complete event) embedded byte for byte as it is; a run
# directory of `spanprof record` viewed as its profile.folded, into its flamegraph.html.
# Needs speedscope's files (built with npm): skipped without them.
if selected view-embedded; then
    embedded() { # embedded PAGE: the decoded profile
        perl -ne 'print "$1\n" if /loadFileFromBase64\("[^"]*", "([^"]*)"\)/' "$1" | base64 -d
    }
    if ! (cd "$here" && "$tool" view -o "$work/small.html" view-small.folded.txt) >"$work/view.log" 2>&1; then
        if grep -q "needs speedscope" "$work/view.log"; then
            skip "view-embedded: speedscope is not built (needs npm)"
        else
            fail "view-embedded: spanprof view view-small.folded.txt"
            sed 's/^/  | /' "$work/view.log"
        fi
    else
        (cd "$here" && "$tool" view --unit=bytes -o "$work/bytes.html" view-small.folded.txt &&
         "$tool" view -o "$work/threads.html" view-threads.trace.json &&
         "$tool" view -o "$work/foreign.html" view-foreign.trace.json) >>"$work/view.log" 2>&1
        mkdir "$work/run"
        cp "$here/view-small.folded.txt" "$work/run/profile.folded"
        "$tool" view "$work/run/" >"$work/run.out" 2>&1
        {
            echo "# view-small.folded.txt"
            embedded "$work/small.html" | json_pp -json_opt canonical,pretty
            echo "# view --unit=bytes view-small.folded.txt: unit"
            embedded "$work/bytes.html" | json_pp -json_opt canonical,pretty | grep '"unit"'
            echo "# view-threads.trace.json"
            embedded "$work/threads.html" | json_pp -json_opt canonical,pretty
            echo "# view-foreign.trace.json, embedded as it is"
            embedded "$work/foreign.html" | cmp - "$here/view-foreign.trace.json" && echo same
            echo "# view RUN/: the page it writes, and the profile in it"
            sed "s|$work|WORK|" "$work/run.out"
            embedded "$work/run/flamegraph.html" | json_pp -json_opt canonical,pretty | grep -c '"name" : "profile.folded"'
            embedded "$work/run/flamegraph.html" | json_pp -json_opt canonical,pretty | grep '"endValue"'
        } 2>&1 | sed 's/"spanprof [0-9][^"]*"/"spanprof (release)"/' >"$work/embedded"
        compare_expected view-embedded "spanprof view: the embedded profiles" "$work/embedded"
    fi
fi

summary
