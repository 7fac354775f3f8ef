#!/bin/sh
# record.sh — `spanprof record` end to end, on record_prog.c (built with the plugin): a program
# that forks and execs itself and exits 3; a refused and a forced second run into the same
# directory; a directory that is not a run's, and one whose processes/ is a link; Ctrl-C
# (SIGINT to the process group), SIGTERM to record alone and a crash, each passed on as the
# same signal after the profile is assembled;
# a command that does not exist; a directory named with a %; a command that leaves no profile
# (exit 0, and killed by SIGKILL); record with its stderr closed; --trace; diff of two runs (with --folded); --coz --progress
# naming a function without a span (refused before the run) and one with; and the runtime's
# line naming its files when stderr is a terminal.  One transcript, record.expected, with the
# scratch folder's path and pids replaced; the pages' presence is checked when speedscope is
# built (its absence only drops them from the transcript).
# Environment: CC, PLUGIN, INCLUDE_DIR, LIBDIR, TOOL.
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
need_plugin
make_work_dir
LC_ALL=C
export LC_ALL
selected record || finish
build_sample "$here/record_prog.c" record "${CC:-gcc} -O2" "${CC:-gcc} -O2" || finish
prog=$dir/prog
out=$work/record.out
: >"$out"
cd "$work" || exit 2

# What a run leaves, without times: record's stderr lines of its own (minus the pages, which
# need speedscope), the command's stdout sorted (processes run side by side), the processes'
# files by kind, and the spans and calls `spanprof report` reads from the directory.
show() { # show LABEL DIR STATUS
    {
        echo "## $1"
        echo "# exit $3"
        echo "# stdout"
        sort stdout
        echo "# stderr (spanprof's lines)"
        grep '^spanprof: \|^next: ' stderr | grep -v '^spanprof: view needs' |
            sed -e "s|$work|WORK|g" -e 's/, flamegraph.html//; s/, timeline.html//; s/, alloc.html//' \
                -e 's/ | open [^ ]* in a browser//'
        if [ -d "$2/processes" ]; then
            echo "# $2/processes"
            ls "$2/processes" | sed 's/^[0-9]*//' | sort | uniq -c
            echo "# spanprof report $2: spans and calls"
            "$TOOL" report "$2" 2>&1 | sed "s|$work|WORK|g" |
                awk '/^program:|^folded stacks:/ { sub(/.*\(/, "("); print } /^spanprof:/ { print }
                     $1 == "work" || $1 == "nap" || $1 == "main" { print $1, $3 }'
        fi
    } >>"$out"
}
# record DIR ARGS...: runs record in $work, the transcript's files left in place.
record() {
    "$TOOL" record "$@" >stdout 2>stderr
}

record -o run1 -- "$prog" 2
show "fork and exec, exit 3" run1 $?
[ -f run1/profile.json ] && [ -f run1/profile.folded ]
result $? "record: run1 has profile.json and profile.folded"
if [ -f "$(dirname "$TOOL")/speedscope/index.html" ] || [ -n "${SPANPROF_SPEEDSCOPE_DIR:-}" ]; then
    grep -q 'loadFileFromBase64' run1/flamegraph.html
    result $? "record: run1/flamegraph.html is a speedscope page"
fi

record -o run1 -- "$prog" 2
show "the same directory again: refused" run1 $?
record -o run1 --force -- "$prog" 1
show "--force: the earlier run replaced" run1 $?

mkdir foreign && echo keep >foreign/notes.txt
record -o foreign -- "$prog" 0
show "a directory that holds no run: refused" foreign $?
[ "$(cat foreign/notes.txt)" = keep ]
result $? "record: a foreign directory's file left alone"

# A processes/ that is a link (planted, or a mistake): refused even with --force, and nothing
# where it points is removed.
mkdir -p linked victim && echo keep >victim/notes.txt && ln -s ../victim linked/processes
record -o linked --force -- "$prog" 0
show "a processes link, with --force: refused" linked $?
[ "$(cat victim/notes.txt)" = keep ]
result $? "record: the file a processes link points to left alone"

record -o missing -- ./no-such-program
show "a command that does not exist" missing $?

# A directory with % in its name: the runtime expands %p and %% in its paths, so record doubles
# every % (the profiles went to a directory named after the pid, and were lost).
record -o 'pct%p' -- "$prog" 0
show "a directory named pct%p" 'pct%p' $?

# A command that ran but left no profile: said, and record fails (125) where CMD exited 0; a
# command killed by SIGKILL is named so.
record -o plain -- sh -c 'exit 0'
show "a command without spanprof, exit 0" plain $?
record -o killed -- sh -c 'kill -9 $$'
show "a command killed by SIGKILL" killed $?

# Record with its stderr closed (2>&-): the run is assembled all the same (the first directory
# record opened took fd 2, and the report went into it), and the command still finds its
# stderr closed, as its caller left it.
"$TOOL" record -o closed -- \
    sh -c '"$0" 0; if [ -e /proc/$$/fd/2 ]; then echo "stderr open"; else echo "stderr closed"; fi' \
    "$prog" >stdout 2>&-
status=$?
: >stderr
show "record 2>&-" closed $status
ls closed | grep -v '\.html$' >>"$out"

# Ctrl-C: SIGINT to the whole process group, as a terminal sends it (perl puts record in a
# process group of its own with SIGINT at its default, which a background shell job lacks).
perl -e 'use POSIX; my $pid = fork; if (!$pid) { setpgid(0, 0); $SIG{INT} = "DEFAULT";
         open STDOUT, ">", "stdout"; open STDERR, ">", "stderr"; exec @ARGV; exit 127 }
         sleep 1; kill "INT", -$pid; waitpid($pid, 0);
         print WIFSIGNALED($?) ? "signal " . WTERMSIG($?) : "exit " . WEXITSTATUS($?)' \
    "$TOOL" record -o int -- "$prog" nap >status
show "Ctrl-C" int "$(cat status)"

"$TOOL" record -o term -- "$prog" nap >stdout 2>stderr &
recorder=$!
sleep 1
kill -TERM $recorder
{ wait $recorder; } 2>/dev/null
show "SIGTERM to record" term $?

record -o crash -- "$prog" crash
show "a crash" crash $?
# A run where one process crashed and one did not: the footer counts both, and says the crashed
# one's stacks are in profile.folded but not in profile.json and the report (1 process merged).
record -o mixed -- sh -c '"$0" 0; "$0" crash; true' "$prog"
show "one process crashes, one does not" mixed $?

record -o traced --trace --mode count -- "$prog" 1
show "--trace --mode count" traced $?
test "$(find traced/processes -name '*.trace.json' | wc -l)" -eq 2
result $? "record: --trace wrote a trace per process"
# trace.json: both processes' events, a track (pid) each, on one time line: per process, in the
# order of its first event, its begin and end events (the parent's 3 calls, then the child's 5).
{
    echo "## --trace: trace.json, events per process in the order they start"
    awk '/"ph":"[BE]"/ {
            p = $0; sub(/.*"pid":/, "", p); sub(/,.*/, "", p)
            t = $0; sub(/.*"ts":/, "", t); sub(/[,}].*/, "", t)
            n[p]++; if (!(p in first) || t + 0 < first[p]) first[p] = t + 0 }
         END { for (p in n) print first[p], n[p] }' traced/trace.json | sort -n | cut -d' ' -f2
} >>"$out"
# A trace ring that overflows: said, with how much of the run the trace still holds.
SPANPROF_TRACE_BUFFER=1 record -o overflow --trace --mode count -- "$prog" many
show "--trace, a 1 MiB ring and 80,000 events" overflow $?

"$TOOL" diff --folded diff.folded run1 traced >stdout 2>stderr
status=$?
{
    echo "## diff run1 traced"
    echo "# exit $status"
    awk '$1 == "work" || $1 == "main" { print $1, $3, $4, $5 }' stdout
    echo "# diff.folded (stacks, and whether each side has a value)"
    awk '{ print $1, ($2 > 0), ($3 > 0) }' diff.folded
    cat stderr
} >>"$out"

# --coz --progress naming a function the size rule left without a span (record_tiny.c, built
# whole-program): refused (125) before the program runs, which would leave a file "ran", with
# how to make it a progress point; a glob that names a span runs it.  A stand-in coz on PATH
# runs the command as it is: record's checks come before coz, which writes no profile here.
# shellcheck disable=SC2086 # CC may be a word list
if build "record_tiny.c [whole-program]" "$work/tiny.log" ${CC:-gcc} -O2 -fplugin="$PLUGIN" \
    -fplugin-arg-spanplugin-all -I"$INCLUDE_DIR" "$here/record_tiny.c" -o "$work/tiny" \
    -L"$LIBDIR" -Wl,--no-as-needed -lspanprof -Wl,-rpath,"$LIBDIR"; then
    mkdir -p fakebin
    printf '#!/bin/sh\nwhile [ "$1" != --- ]; do shift; done\nshift\nexec "$@"\n' >fakebin/coz
    chmod +x fakebin/coz
    for glob in tiny 'x,wor*'; do
        rm -f ran
        PATH="$work/fakebin:$PATH" record -o "coz-$glob" --coz --progress "$glob" -- ./tiny
        show "--coz --progress $glob, tiny left without a span by its size" "coz-$glob" $?
        if [ -e ran ]; then echo "# the program ran" >>"$out"; else echo "# the program did not run" >>"$out"; fi
    done
fi

# The runtime's closing line: on a terminal (script(1) gives the program one), not in a pipe,
# and not with SPANPROF_QUIET=1.
if command -v script >/dev/null 2>&1; then
    for quiet in 0 1; do
        SPANPROF_QUIET=$quiet SPANPROF_FOLDED=tty.folded script -qec "$prog 0" /dev/null </dev/null >tty.out 2>&1
        echo "## on a terminal, SPANPROF_QUIET=$quiet" >>"$out"
        tr -d '\r' <tty.out | sed "s|$work|WORK|g" >>"$out"
    done
    SPANPROF_FOLDED=pipe.folded "$prog" 0 2>&1 | cat >pipe.out
    echo "## in a pipe" >>"$out"
    cat pipe.out >>"$out"
else
    skip "record: the terminal line (script(1) is not installed)"
fi

compare_expected record "${CC:-gcc} -O2" "$out" "$cmd"
finish
