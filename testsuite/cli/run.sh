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

# `spanprof record --trace` merging a process's trace whose otherData is damaged
# (damaged-trace.json: a negative start_monotonic_ns, once taken as a start 2^64 ns later): the
# trace is refused with the file and the field named, the profile still assembled, and the
# closing line does not list the trace.json and timeline.html that were not written.
if selected record-damaged-trace; then
    mkdir "$work/damaged-trace"
    (cd "$work/damaged-trace" && "$tool" record --trace -o run -- sh -c \
        'd=${SPANPROF_TRACE%/*}; cp "$0/damaged-trace.json" $d/1.trace.json; cp "$0/sample.json" $d/1.json; cp "$0/merge-a.folded.txt" $d/1.folded' \
        "$here" >out 2>err; echo "--- exit $?" >status)
    # Its messages only (the report between them is report's own test), the flame graph page
    # left out of the closing line (written only where speedscope is built).
    { echo "--- stdout"; cat "$work/damaged-trace/out"; echo "--- stderr"
      grep '^spanprof: ' "$work/damaged-trace/err" | grep -v 'needs speedscope' | sed -e "s|$work/|WORK/|" -e 's/, flamegraph.html//'
      cat "$work/damaged-trace/status"; } >"$work/actual"
    compare_expected record-damaged-trace "spanprof record --trace (a process's damaged trace)" "$work/actual"
fi

# What `spanprof view` embeds in its page (the profile in base64, after loadFileFromBase64's
# name), decoded: speedscope's file format made from folded stacks (view-small.folded.txt: one
# sampled profile, values in ns; with --unit=bytes, in bytes) and from a trace
# (view-threads.trace.json: a profile per thread, in ns, the busiest — worker — shown first; the
# idle thread, with no span, left out), pretty-printed by json_pp; a trace with events this does
# not convert (view-foreign.trace.json, a complete event) embedded byte for byte as it is, and so
# one whose pid no integer holds (view-huge-pid.trace.json: 1e308, once cast to one); a run
# directory of `spanprof record` viewed as its profile.folded, into its flamegraph.html, named
# after the program of its profile.json; the stretch a timeline opens on (view-zoom.trace.json:
# 12 requests of 10 µs whose 400 ns steps are 1/24 of a 9.6 µs stretch, the last six with 24
# steps, not 20: from the seventh's start, 160 µs, less 1/64 of the stretch); the differential
# page of `spanprof diff --html` and of `spanprof view` of a differential file (the change, with
# its two root frames, first); a flight-recorder capture (view-capture.trace.json: the slow
# handle on main, not the busier worker, shown first, the call marked by a frame of its own, the
# earlier handle not, opening on the call with a tenth of its 10 ms either side); and every
# page's title.
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
         "$tool" view -o "$work/foreign.html" view-foreign.trace.json &&
         "$tool" view -o "$work/huge-pid.html" view-huge-pid.trace.json) >>"$work/view.log" 2>&1
        mkdir "$work/run"
        cp "$here/view-small.folded.txt" "$work/run/profile.folded"
        cp "$here/diff-before.json" "$work/run/profile.json"
        "$tool" view "$work/run/" >"$work/run.out" 2>&1
        (cd "$here" && "$tool" view -o "$work/zoom.html" view-zoom.trace.json &&
         "$tool" diff --folded "$work/change.folded" --html "$work/diff.html" merge-a.folded.txt merge-b.folded.txt &&
         "$tool" view -o "$work/change.html" "$work/change.folded" &&
         "$tool" view -o "$work/capture.html" view-capture.trace.json) >>"$work/view.log" 2>&1
        {
            echo "# view-small.folded.txt"
            embedded "$work/small.html" | json_pp -json_opt canonical,pretty
            echo "# view --unit=bytes view-small.folded.txt: unit"
            embedded "$work/bytes.html" | json_pp -json_opt canonical,pretty | grep '"unit"'
            echo "# view-threads.trace.json"
            embedded "$work/threads.html" | json_pp -json_opt canonical,pretty
            echo "# view-foreign.trace.json, embedded as it is"
            embedded "$work/foreign.html" | cmp - "$here/view-foreign.trace.json" && echo same
            echo "# view-huge-pid.trace.json, embedded as it is"
            embedded "$work/huge-pid.html" | cmp - "$here/view-huge-pid.trace.json" && echo same
            echo "# view RUN/: the page it writes, and the profile in it"
            sed "s|$work|WORK|" "$work/run.out"
            embedded "$work/run/flamegraph.html" | json_pp -json_opt canonical,pretty | grep -c '"name" : "app"'
            embedded "$work/run/flamegraph.html" | json_pp -json_opt canonical,pretty | grep '"endValue"'
            echo "# view view-zoom.trace.json: the stretch it opens on"
            grep 'var from' "$work/zoom.html"
            echo "# diff --html PAGE: the profiles, the change first; its frames"
            embedded "$work/diff.html" | json_pp -json_opt canonical,pretty |
                grep -E '"(activeProfileIndex|name)"'
            echo "# view of the differential file: the same profiles"
            embedded "$work/change.html" | json_pp -json_opt canonical,pretty |
                grep -E '"(activeProfileIndex|name)"'
            echo "# view view-capture.trace.json: the thread shown first, the frames, the stretch"
            embedded "$work/capture.html" | json_pp -json_opt canonical,pretty |
                grep -E '"(activeProfileIndex|name)"'
            grep 'var from' "$work/capture.html"
            echo "# titles"
            for page in small bytes threads foreign run/flamegraph zoom diff change capture; do
                printf '%s: ' "$page"
                sed -n 's/.*<title>\(.*\)<\/title>.*/\1/p' "$work/$page.html"
            done
        } 2>&1 | sed 's/"spanprof [0-9][^"]*"/"spanprof (release)"/' >"$work/embedded"
        compare_expected view-embedded "spanprof view: the embedded profiles" "$work/embedded"
    fi
fi

# `spanprof spans` against running processes.  spans_case PID ARGS... runs `spanprof spans PID
# ARGS...` and prints it as a section of an expected file, the pid written PID and the scratch
# folder WORK; wait_exec PID NAME waits (5 s at most) until process PID runs NAME, so that
# /proc/PID/environ is its own environment, not the shell's it was forked from.
spans_case() {
    spans_pid=$1
    shift
    "$tool" spans "$spans_pid" "$@" >"$work/spans.out" 2>"$work/spans.err"
    spans_status=$?
    { echo "# spans PID${*:+ $*}"; echo "--- stdout"; cat "$work/spans.out"; echo "--- stderr"
      cat "$work/spans.err"; echo "--- exit $spans_status"; } |
        sed -e "s|$work|WORK|g" -e "s|process $spans_pid|process PID|g" -e "s|/$spans_pid\.sock|/PID.sock|g"
}
wait_exec() {
    for _ in $(seq 50); do
        [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ] && return 0
        sleep 0.1
    done
    return 1
}
# wait_file PATH: waits (5 s at most) until PATH exists.
wait_file() {
    for _ in $(seq 50); do
        [ -e "$1" ] && return 0
        sleep 0.1
    done
    return 1
}

# spans-process: processes without an answer to give, each one line on stderr and exit 1: one
# without SPANPROF_LIVE; one whose DIR, relative, is taken from its working directory and holds
# no socket; one with a symbolic link planted at DIR/PID.sock, and one with a regular file there
# (neither asked); one with SPANPROF=0; and GLOBs that make a request line longer than a process
# takes (refused before any process is looked at).
if selected spans-process; then
    mkdir -p "$work/proc/live" "$work/planted" "$work/plain"
    env -u SPANPROF_LIVE sleep 60 & nolive=$!
    (cd "$work/proc" && exec env SPANPROF_LIVE=live sleep 60) & nosock=$!
    env SPANPROF_LIVE="$work/planted" sleep 60 & planted=$!
    env SPANPROF_LIVE="$work/plain" sleep 60 & plain=$!
    env SPANPROF=0 SPANPROF_LIVE="$work/proc/live" sleep 60 & off=$!
    for p in $nolive $nosock $planted $plain $off; do wait_exec "$p" sleep; done
    ln -s /dev/null "$work/planted/$planted.sock"
    : >"$work/plain/$plain.sock"
    {
        spans_case "$nolive"
        spans_case "$nosock"
        spans_case "$planted" off main
        spans_case "$plain"
        spans_case "$off"
        # "switch on GLOB\n": 1025 bytes, one over; 1024 passes on to the (missing) process
        spans_case 1 on "$(printf 'a%.0s' $(seq 1014))" | sed 's/aaaa*/GLOB-OF-1014/'
        spans_case 2147483646 on "$(printf 'a%.0s' $(seq 1013))" | sed 's/aaaa*/GLOB-OF-1013/'
    } >"$work/spans-process" 2>&1
    kill "$nolive" "$nosock" "$planted" "$plain" "$off"
    compare_expected spans-process "spanprof spans against processes that cannot answer" "$work/spans-process"
fi

# spans-live: fake-sites.py, a stand-in answering as the runtime would, asked in turn: the listing
# (a name with a control character printed as '?'), a switch of two GLOBs (one request, joined
# with a comma: the requests it got are printed last), the runtime's errors (no span matches; an
# older runtime's unknown request), no spans, and malformed answers: an unknown state, no end
# line, more after it, not the sites' magic; then its socket left with nobody listening.
if selected spans-live; then
    if ! command -v python3 >/dev/null 2>&1; then
        skip "spans-live: python3 not found"
    else
        mkdir -p "$work/live/answers"
        a=$work/live/answers
        # sites_answer NAME LINES: the answer "spanprof-sites 1" then LINES (escapes as printf's %b)
        sites_answer() { printf 'spanprof-sites 1\n%b' "$2" >"$a/$1"; }
        sites_answer listing 'on\tdecode_frame\tsrc/codec/decode.c\t120\noff\thelper\tsrc/util.c\t7\nstopping\tparse\tsrc/parse.c\t10\non\tweird\0033[2Jname\tsrc/w.c\t3\nend\n'
        sites_answer switched 'off\thelper\tsrc/util.c\t7\noff\tparse\tsrc/parse.c\t10\nend\n'
        printf 'error no span matches nosuch*\n' >"$a/nomatch"
        printf 'error unknown request\n' >"$a/unknown"
        sites_answer empty 'end\n'
        sites_answer state 'maybe\tparse\tsrc/parse.c\t10\nend\n'
        sites_answer cut 'on\tparse\tsrc/parse.c\t10\n'
        sites_answer after 'end\nend\n'
        printf 'spanprof-live 1\njson 2\n{}\n' >"$a/magic"
        (cd "$work" && exec env SPANPROF_LIVE=live python3 "$here/fake-sites.py" "$work/live/log" \
            "$a/listing" "$a/switched" "$a/nomatch" "$a/unknown" "$a/empty" "$a/state" "$a/cut" \
            "$a/after" "$a/magic") 2>"$work/live/fake.err" & fake=$!
        if ! wait_file "$work/live/$fake.sock"; then
            fail "spans-live: fake-sites.py did not start"
            sed 's/^/  | /' "$work/live/fake.err"
        else
            {
                spans_case "$fake"
                spans_case "$fake" off 'parse*' helper
                spans_case "$fake" on 'nosuch*'
                for _ in unknown empty state cut after magic gone; do spans_case "$fake"; done
                echo "# the requests fake-sites.py got"
                cat "$work/live/log"
                cat "$work/live/fake.err"
            } >"$work/spans-live" 2>&1
            compare_expected spans-live "spanprof spans against a stand-in for a process" "$work/spans-live"
        fi
        kill "$fake" 2>/dev/null
    fi
fi

# spans-other-user: as root, a process of another user (nobody) is refused before anything of it
# is read; so is a socket of root's own process that another user listens on (fake-sites.py as
# nobody, linked into the process's DIR), which is never sent a request.
if selected spans-other-user; then
    if [ "$(id -u)" -ne 0 ]; then
        skip "spans-other-user: needs root (to run processes as another user)"
    elif ! command -v setpriv >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
        skip "spans-other-user: needs setpriv (util-linux) and python3"
    else
        mkdir -p "$work/other/mine" "$work/other/theirs"
        chown 65534:65534 "$work/other/theirs"
        printf 'spanprof-sites 1\non\tsecret\tsrc/secret.c\t1\nend\n' >"$work/other/answer"
        setpriv --reuid=65534 --regid=65534 --clear-groups sleep 60 & theirs=$!
        env SPANPROF_LIVE="$work/other/mine" sleep 60 & mine=$!
        (exec env SPANPROF_LIVE="$work/other/theirs" AS_UID=65534 python3 "$here/fake-sites.py" \
            "$work/other/log" "$work/other/answer") 2>"$work/other/fake.err" & fake=$!
        wait_exec "$theirs" sleep
        wait_exec "$mine" sleep
        if ! wait_file "$work/other/theirs/$fake.sock"; then
            fail "spans-other-user: fake-sites.py did not start"
            sed 's/^/  | /' "$work/other/fake.err"
        else
            ln "$work/other/theirs/$fake.sock" "$work/other/mine/$mine.sock"
            {
                spans_case "$theirs"
                spans_case "$mine" off secret
                for _ in $(seq 50); do [ -s "$work/other/log" ] && break; sleep 0.1; done
                echo "# the requests fake-sites.py got (an empty line: nothing)"
                cat "$work/other/log"
                cat "$work/other/fake.err"
            } >"$work/spans-other-user" 2>&1
            compare_expected spans-other-user "spanprof spans against another user's process and socket" "$work/spans-other-user"
        fi
        kill "$theirs" "$mine" "$fake" 2>/dev/null
    fi
fi

# Damaged inputs (fuzz.py): every value of each JSON input swapped for one of another type, and
# each input cut short, given to report, convert, view, diff and merge: refused or read, never a
# death by signal, a sanitizer's report or a hang.
if selected fuzz; then
    if [ -n "${EMULATOR:-}" ]; then
        skip "fuzz: the tool runs under $EMULATOR (thousands of runs; the x86-64 build and its sanitizer build are fuzzed)"
    elif command -v python3 >/dev/null 2>&1; then
        mkdir -p "$work/fuzz"
        python3 "$here/fuzz.py" "$tool" "$here" "$work/fuzz" >"$work/fuzz.out" 2>&1
        st=$?
        result $st "fuzz [$(tail -n 1 "$work/fuzz.out")]"
        [ $st -eq 0 ] || head -n 20 "$work/fuzz.out" | sed 's/^/  | /'
    else
        skip "fuzz: python3 not found"
    fi
fi

summary
