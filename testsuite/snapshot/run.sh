#!/bin/sh
# run.sh — the runtime's side of live profiles (SPANPROF_LIVE=DIR, docs/manual.md *Live
# profiles*): what a running process answers on its socket, and what it leaves when it ends.
# phases.c runs under the test's control (a command a line on its stdin, a line back when done),
# so every snapshot is taken between two commands and its counts are exact; liveget.c asks.
#
#   counts      snapshots after 1,000 calls of phase_a, 500 of phase_b, a thread's 300: each
#               holds exactly those, with the process's identity and histograms; at exit the
#               final snapshot is left in DIR and the socket is gone
#   fork        a fork child answers on a socket of its own with its own counts; killed by
#               SIGTERM it leaves its final snapshot and still dies of SIGTERM
#   exec        an exec'd image takes the socket over (same pid) with its own counts; the image
#               it replaced left its final snapshot
#   hostile     unknown, overlong and missing requests get one error line, and so do 2,000
#               mutated ones (a snapshot only for those that start with the request line);
#               clients that go away, 40 at once, a client that sends nothing: the program's
#               output, counts and exit status are its own, and a snapshot afterwards is exact
#   other_user  another user cannot connect (the directory is 0700, the socket 0600)
#   bad_dir     SPANPROF_LIVE naming a file, a directory others can write to, or another
#               user's directory: one warning line, no socket, the program as without it
#
# Programs run with SPANPROF=count.  Each test's output is compared with TEST.expected.
# Environment: CC, PLUGIN, INCLUDE_DIR, LIBDIR, PROFDUMP.  Optional: ONLY, REGEN (see ../lib.sh).
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
need_plugin
make_work_dir
chmod 755 "$work"
nobody=65534
top=$here/../..

build "phases" "$work/phases.log" $CC -g -O2 -fplugin="$PLUGIN" -I"$INCLUDE_DIR" "$here/phases.c" \
    -o "$work/phases" -L"$LIBDIR" -Wl,--no-as-needed -lspanprof -Wl,-rpath,"$LIBDIR" -pthread || finish
build "liveget" "$work/liveget.log" $CC -g -O2 -I"$top" "$here/liveget.c" -o "$work/liveget" || finish
liveget=$work/liveget

# start DIR VAR=VALUE...: runs phases in DIR (SPANPROF=count, SPANPROF_LIVE=DIR/live unless
# given) with its stdin on the FIFO DIR/in (held open on descriptor 3) and stdout, stderr and
# exit status in DIR/out, DIR/err, DIR/status; sets $pid.
start() {
    s_dir=$1
    shift
    mkdir -p "$s_dir"
    mkfifo "$s_dir/in"
    : >"$s_dir/out"
    (cd "$s_dir" && timeout -s KILL 60 env SPANPROF=count SPANPROF_LIVE="$s_dir/live" "$@" \
        "$work/phases" <in >out 2>err; echo $? >status) 2>/dev/null &
    exec 3>"$s_dir/in"
    lines=0
    pid=""
}

# first DIR COMMAND: says the first command, after which the program has its socket (its first
# span made it); sets $pid from the socket's name.
first() {
    say "$1" "$2"
    pid=$(cd "$1/live" && ls -- *.sock 2>/dev/null | sed 's/\.sock$//')
}

# wait_for SECONDS PATTERN: true once a file matches the shell pattern (within SECONDS).
wait_for() {
    w_n=0
    # shellcheck disable=SC2086 # the pattern is expanded on purpose
    while ! ls -d $2 >/dev/null 2>&1 && [ "$w_n" -lt $(($1 * 20)) ]; do sleep 0.05; w_n=$((w_n + 1)); done
    # shellcheck disable=SC2086
    ls -d $2 >/dev/null 2>&1
}

# say DIR COMMAND: sends COMMAND and waits (20 s at most) for its answer line in DIR/out.
say() {
    echo "$2" >&3
    lines=$((lines + 1))
    n=0
    while [ "$(wc -l <"$1/out")" -lt "$lines" ] && [ "$n" -lt 400 ]; do sleep 0.05; n=$((n + 1)); done
}

# finish_prog DIR: closes the program's stdin and waits for it to end (its status in DIR/status).
finish_prog() {
    exec 3>&-
    n=0
    while [ ! -s "$1/status" ] && [ "$n" -lt 600 ]; do sleep 0.05; n=$((n + 1)); done
}

# snap LABEL SOCKET [REQUEST]: "## LABEL", then the snapshot's counts and identity (pid as
# PID); REQUEST: a word to ask with instead of "snapshot" ("spans").
snap() {
    echo "## $1"
    "$liveget" ${3:+-r "$3"} "$2" "$work/snap" | sed "s/$pid/PID/g"
    "$PROFDUMP" --live "$work/snap.json" | sed "s/pid=$pid /pid=PID /"
}

# final LABEL FILE: the same for a final snapshot file.
final() {
    echo "## $1"
    "$liveget" -f "$2" "$work/snap"
    "$PROFDUMP" --live "$work/snap.json" | sed "s/pid=$pid /pid=PID /"
}

# listing DIR: the entries of DIR, pids as PID and start times as START.
listing() {
    (cd "$1" && ls -A) | sed -e 's/^[0-9][0-9]*\./PID./' -e 's/\.[0-9][0-9]*\.final$/.START.final/'
}

ending() {
    echo "## exit $(cat "$1/status")"
    echo "## stdout"
    cat "$1/out"
    echo "## stderr"
    cat "$1/err"
}

test_counts() {
    d=$work/counts
    start "$d" SPANPROF=1 SPANPROF_HISTOGRAM=1
    first "$d" "a 1000"
    {
        echo "## live directory"
        stat -c '%a' "$d/live"
        stat -c '%a %F' "$d/live/$pid.sock"
        snap "after a 1000" "$d/live/$pid.sock"
        say "$d" "b 500"
        snap "after b 500" "$d/live/$pid.sock"
        snap "after b 500, spans only" "$d/live/$pid.sock" spans
        say "$d" "thread 300"
        snap "after a thread's b 300" "$d/live/$pid.sock"
        say "$d" "exit"
        finish_prog "$d"
        echo "## live directory after exit"
        listing "$d/live"
        final "final" "$d/live/$pid".*.final
        ending "$d"
    } >"$work/counts.out" 2>&1
    compare_expected counts live "$work/counts.out"
}

test_fork() {
    d=$work/fork
    start "$d"
    first "$d" "a 10"
    parent=$pid
    {
        say "$d" "fork 20"
        child=$(sed -n 's/^child //p' "$d/out")
        wait_for 5 "$d/live/$child.sock" || echo "no socket for the child"
        snap "parent" "$d/live/$parent.sock"
        pid=$child
        snap "child" "$d/live/$child.sock"
        kill -TERM "$child"
        wait_for 10 "$d/live/$child.*.final" || echo "no final snapshot for the child"
        final "child's final, after SIGTERM" "$d/live/$child".*.final
        rm -f "$d/live/$child".*.final
        [ -e "$d/live/$child.sock" ] && echo "the child's socket is still there"
        pid=$parent
        say "$d" "exit"
        finish_prog "$d"
        echo "## live directory after exit"
        listing "$d/live"
        ending "$d" | sed "s/^child $child/child CHILD/"
    } >"$work/fork.out" 2>&1
    # The child's death: a zombie reaped by no one here; its status is the kernel's business.
    compare_expected fork live "$work/fork.out"
}

test_exec() {
    d=$work/exec
    start "$d"
    first "$d" "a 10"
    {
        echo "exec 30" >&3
        wait_for 10 "$d/live/$pid.*.final" || echo "no final snapshot for the first image"
        first=$(ls "$d/live/$pid".*.final)
        say "$d" "b 5"
        snap "second image" "$d/live/$pid.sock"
        final "first image's final" "$first"
        rm -f "$first"
        say "$d" "exit"
        finish_prog "$d"
        echo "## live directory after exit"
        listing "$d/live"
        final "second image's final" "$d/live/$pid".*.final
        ending "$d"
    } >"$work/exec.out" 2>&1
    compare_expected exec live "$work/exec.out"
}

test_hostile() {
    d=$work/hostile
    start "$d"
    first "$d" "a 100"
    sock=$d/live/$pid.sock
    long=$(printf '%0200d' 0)
    {
        echo "## unknown request"
        "$liveget" -s 'hello\n' "$sock"
        echo "## overlong request"
        "$liveget" -s "$long" "$sock"
        echo "## the request with more after it"
        "$liveget" -s 'snapshot\nsnapshot\n' "$sock"
        echo "## nothing sent (1 s)"
        "$liveget" -q "$sock"
        echo "## 2,000 mutated requests"
        "$liveget" -z 2000 "$sock"
        echo "## 20 clients that close at once"
        i=0
        while [ $i -lt 20 ]; do "$liveget" -c "$sock" >/dev/null; i=$((i + 1)); done
        echo "## 40 clients at once"
        i=0
        jobs=""
        while [ $i -lt 40 ]; do
            "$liveget" "$sock" >"$work/many.$i" &
            jobs="$jobs $!"
            i=$((i + 1))
        done
        # shellcheck disable=SC2086 # a list of pids
        wait $jobs
        cat "$work"/many.* | sort | uniq -c | sed 's/^ *//'
        say "$d" "b 7"
        snap "afterwards" "$sock"
        say "$d" "exit"
        finish_prog "$d"
        ending "$d"
    } >"$work/hostile.out" 2>&1
    compare_expected hostile live "$work/hostile.out"
}

test_other_user() {
    if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
        skip "other_user: needs root and setpriv (to connect as another user)"
        return
    fi
    d=$work/other_user
    start "$d"
    first "$d" "a 3"
    {
        echo "## as another user"
        setpriv --reuid=$nobody --regid=$nobody --clear-groups "$liveget" "$d/live/$pid.sock"
        echo "## the directory opened to all, the socket still 0600"
        chmod 755 "$d/live"
        setpriv --reuid=$nobody --regid=$nobody --clear-groups "$liveget" "$d/live/$pid.sock"
        chmod 700 "$d/live"
        say "$d" "exit"
        finish_prog "$d"
        ending "$d"
    } >"$work/other_user.out" 2>&1
    compare_expected other_user live "$work/other_user.out"
}

test_bad_dir() {
    d=$work/bad_dir
    mkdir -p "$d"
    : >"$d/file"
    mkdir -m 777 "$d/open"
    chmod 777 "$d/open" # whatever the umask
    {
        for live in "$d/file" "$d/open" "$d/theirs"; do
            case $live in
            */theirs)
                if [ "$(id -u)" -ne 0 ]; then echo "## (theirs: needs root to chown)"; continue; fi
                mkdir -m 700 "$live"
                chown $nobody "$live"
                ;;
            esac
            echo "## SPANPROF_LIVE=${live#"$d"/}"
            printf 'a 2\nexit\n' | (cd "$d" && env SPANPROF=count SPANPROF_LIVE="$live" \
                "$work/phases" 2>&1; echo "exit $?") | sed "s|$d/||"
            if [ -d "$live" ]; then ls -A "$live"; fi
        done
    } >"$work/bad_dir.out" 2>&1
    compare_expected bad_dir live "$work/bad_dir.out"
}

for t in counts fork exec hostile other_user bad_dir; do
    selected "$t" && "test_$t"
done
summary
