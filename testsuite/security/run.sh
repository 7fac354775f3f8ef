#!/bin/sh
# run.sh — the trust tests (docs/manual.md, *Security*): what the runtime does with an environment and
# output paths it must not trust and with signals that land while it starts, and what the
# spanprof tool does with outputs that fail, hostile inputs and processes it must not harm.
#
# The runtime:
#   privileged    a setuid-root copy and a file-capability copy of edges.c, run as another user
#                 with every output pointed at a root-only place: nothing written, nothing said;
#                 the same program unprivileged writes where it is told (the control)
#   retitle       a program that rewrites its process title as servers do, then forks: parent
#                 and child write exact profiles to the paths given at start
#   link_foreign  a symbolic link of another user at the output path (to a file, and dangling):
#                 its target left alone, one error line, at exit, on SIGTERM and after a crash
#   link_own      the user's own links are followed: to a file, dangling, /dev/stdout into a pipe
#   own_stdout    an output that is the program's own stdout or stderr (/dev/stdout, /dev/fd/1,
#                 /proc/self/fd/2, the redirected file's own name) into a file (> and >>) and a
#                 pipe: appended after every line the program printed, none lost
#   fifo          a FIFO at the output path: left alone, one error line, the program ends at
#                 once (exit, SIGTERM, crash)
#   long_name     an output whose file name is 248 characters long
#   sigrace       a handler with a span, run by signals raised inside the runtime's start-up
# The tool:
#   cli_full_disk merge, convert and view writing to a full file system: an error, and every
#                 existing file as it was (merge -o all.folded all.folded b.folded included)
#   cli_paths     merge -o at a link of another user, the user's own link, a FIFO, a long name
#   dump          `spanprof dump` refusing refused signals and processes that do not catch the
#                 signal, and 20 dumps sent while the program starts: none killed by the signal
#   hostile       a gzip bomb for merge, a start_time and a trace ts out of range, a file name
#                 with "<!--<script>" for view, a folded file whose first line is 5,000 bytes
#   record_dirs   `record` refusing directories that are not wholly its own, --force or not: a
#                 user's file among the processes' files, an earlier run's outputs beside an
#                 empty processes/ (refused without --force), a directory or processes/ of
#                 another user, a processes/ or a DIR that is a link, a group-writable DIR:
#                 every file as it was afterwards; an earlier run with --force: its files gone
#
# Programs run with SPANPROF=count (exact values), under `timeout` (a hang shows as SIGKILL).
# Each test's result is compared with TEST.expected.  The tests that need another user (root,
# setpriv, and for the file capability setcap) are skipped, saying why, where they cannot run.
#
# Environment: CC, PLUGIN, INCLUDE_DIR, LIBDIR, PROFDUMP, RUNTIME_LIBS, TOOL (spanprof).  Optional: ONLY, REGEN
# (see ../lib.sh).
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
need_plugin
make_work_dir
chmod 755 "$work" # the runs as another user must reach the programs
# shellcheck disable=SC3045 # dash and bash both have ulimit -c
ulimit -c 0 2>/dev/null
nobody=65534

# build_prog SRC EXE [static]: with the plugin, linked with the shared runtime or the static one.
build_prog() {
    case ${3:-} in
    static) link="-Wl,-u,__spanprof_enter $LIBDIR/libspanprof.a $RUNTIME_LIBS -pthread -ldl" ;;
    *) link="-L$LIBDIR -Wl,--no-as-needed -lspanprof -Wl,-rpath,$LIBDIR -pthread -ldl" ;;
    esac
    # shellcheck disable=SC2086 # link is a word list
    build "$(basename "$1" .c): ${3:-shared}" "$2.log" $CC -g -O2 -fplugin="$PLUGIN" -I"$INCLUDE_DIR" "$1" \
        -o "$2" $link
}

# run DIR [AS...] -- VAR=VALUE... -- ARGS...: runs $exe in DIR with SPANPROF=count and those
# variables, prefixed by AS (e.g. setpriv ...); its status, stdout and stderr go to files in DIR.
run() {
    run_dir=$1
    shift
    run_as=""
    while [ "$1" != -- ]; do run_as="$run_as $1"; shift; done
    shift
    run_vars=""
    while [ "$1" != -- ]; do run_vars="$run_vars $1"; shift; done
    shift
    # The shell's own line about a death by signal ("Terminated") goes to /dev/null.
    # shellcheck disable=SC2086 # word lists
    (cd "$run_dir" && exec $run_as timeout -s KILL 30 env SPANPROF=count $run_vars "$exe" "$@" \
        >"$run_dir/.stdout" 2>"$run_dir/.stderr") 2>/dev/null
    run_status=$?
    if [ "$run_status" -gt 128 ]; then
        run_status="$run_status (SIG$(kill -l $((run_status - 128))))"
    fi
    echo "$run_status" >"$run_dir/.status"
}

# describe DIR: the run's status, stdout and stderr, then every entry in DIR (names with pids
# as PID): a regular file with its contents (JSON through profdump), a link with its target, a
# FIFO as such.
describe() {
    echo "# exit $(cat "$1/.status")"
    echo "# stdout"
    cat "$1/.stdout"
    echo "# stderr"
    sed -e "s|$1/||g" "$1/.stderr"
    (cd "$1" && find . -mindepth 1 ! -name '.stdout' ! -name '.stderr' ! -name '.status' |
        sort) | while read -r f; do
        name=$(echo "${f#./}" | sed 's/[0-9]\{2,\}/PID/g')
        if [ -L "$1/$f" ]; then
            echo "# link $name -> $(readlink "$1/$f")"
        elif [ -p "$1/$f" ]; then
            echo "# fifo $name"
        elif [ -d "$1/$f" ]; then
            echo "# dir $name"
        else
            echo "# file $name"
            case $f in
            *.json) "$PROFDUMP" "$1/$f" 2>&1 ;;
            *) cat "$1/$f" ;;
            esac
        fi
    done
}

edges=$work/edges
build_prog "$here/edges.c" "$edges" || finish
edges_static=$work/edges-static
build_prog "$here/edges.c" "$edges_static" static || finish

# ---- privileged ---------------------------------------------------------------------------
test_privileged() {
    why=""
    [ "$(id -u)" -eq 0 ] || why="needs root (to make setuid and capability copies)"
    [ -n "$why" ] || command -v setpriv >/dev/null || why="setpriv is missing (util-linux)"
    [ -n "$why" ] || command -v setcap >/dev/null || why="setcap is missing (libcap2-bin)"
    if [ -n "$why" ]; then
        skip "privileged: $why"
        return
    fi
    # The static runtime: a privileged program ignores the library path of the build tree.
    cp "$edges_static" "$work/setuid"
    chmod 4755 "$work/setuid"
    cp "$edges_static" "$work/filecap"
    chmod 755 "$work/filecap"
    if ! setcap cap_net_bind_service+ep "$work/filecap" 2>"$work/setcap.log"; then
        skip "privileged: setcap failed here ($(cat "$work/setcap.log"))"
        return
    fi
    cp "$edges_static" "$work/plain"
    chmod 755 "$work/plain"
    as_nobody="setpriv --reuid=$nobody --regid=$nobody --clear-groups"
    {
        for prog in setuid filecap plain; do
            d=$work/priv-$prog
            mkdir -p "$d/protected" "$d/open"
            echo precious >"$d/protected/precious"
            chmod 755 "$d" "$d/protected"
            chmod 1777 "$d/open"
            exe=$work/$prog
            # Every output aimed at the root-only folder, the default folded file in the caller's
            # folder (open), a misspelt variable and a bad value that would draw warnings.
            run "$d/open" $as_nobody -- SPANPROF_FOLDED="$d/protected/precious" \
                SPANPROF_JSON="$d/protected/new.json" SPANPROF_TRACE="$d/protected/trace.json" \
                SPANPROF_PPROF="$d/protected/new.pb.gz" SPANPROF_LIVE="$d/protected/live" \
                SPANPROF_THREADS=yes SPANPROF_TYPO=1 \
                -- privileged
            echo "## $prog, run as another user"
            describe "$d/open" | sed "s|$d|DIR|g"
            if [ "$prog" = plain ]; then
                run "$d/open" $as_nobody -- SPANPROF_FOLDED="$d/open/allowed.folded" -- privileged
                echo "## $prog, run as another user, writing where it may"
                describe "$d/open" | sed "s|$d|DIR|g"
            fi
            echo "## $prog: the root-only folder afterwards"
            echo "files: $(cd "$d/protected" && ls -A | tr '\n' ' ')"
            echo "precious: $(cat "$d/protected/precious")"
        done
    } >"$work/privileged.actual" 2>&1
    compare_expected privileged "gcc -O2, static runtime" "$work/privileged.actual"
}

# ---- retitle --------------------------------------------------------------------------------
test_retitle() {
    for kind in shared static; do
        d=$work/retitle-$kind
        mkdir -p "$d"
        exe=$edges
        [ $kind = static ] && exe=$edges_static
        run "$d" -- SPANPROF_FOLDED=out.folded SPANPROF_JSON=out-%p.json -- retitle
        describe "$d" >"$d.actual" 2>&1
        compare_expected retitle "gcc -O2, $kind runtime" "$d.actual"
    done
}


# each_ending TEST PREPARE VAR=VALUE...: edges run at a normal exit, on SIGTERM and after a crash,
# each time in a fresh folder made ready by PREPARE DIR, with those variables; the three
# descriptions compared with TEST.expected.
each_ending() {
    case_name=$1 prepare=$2
    shift 2
    exe=$edges
    for how in exit term segv; do
        d=$work/$case_name-$how
        mkdir -p "$d"
        "$prepare" "$d"
        run "$d" -- "$@" -- $how
        echo "## $how"
        describe "$d"
    done >"$work/$case_name.actual" 2>&1
    compare_expected "$case_name" "gcc -O2" "$work/$case_name.actual"
}
# ---- links ----------------------------------------------------------------------------------
# plant DIR: a file of root's, a link to it and a dangling link, both owned by another user.
plant() {
    echo precious >"$1/victim"
    ln -s victim "$1/out.folded"
    ln -s created-by-profile "$1/dangling.json"
    chown -h "$nobody:$nobody" "$1/out.folded" "$1/dangling.json"
}

test_link_foreign() {
    if [ "$(id -u)" -ne 0 ]; then
        skip "link_foreign: needs root (to make links owned by another user)"
        return
    fi
    each_ending link_foreign plant SPANPROF_FOLDED=out.folded SPANPROF_JSON=dangling.json
}

test_link_own() {
    exe=$edges
    d=$work/link-own
    mkdir -p "$d/target"
    echo "old contents" >"$d/target/mine.folded"
    ln -s target/mine.folded "$d/out.folded"
    ln -s target/new.json "$d/out.json"
    run "$d" -- SPANPROF_FOLDED=out.folded SPANPROF_JSON=out.json -- exit
    {
        describe "$d"
        echo "## SPANPROF_FOLDED=/dev/stdout, stdout a pipe"
        (cd "$d" && SPANPROF=count SPANPROF_FOLDED=/dev/stdout timeout -s KILL 30 "$exe" exit |
            cat)
    } >"$work/link_own.actual" 2>&1
    compare_expected link_own "gcc -O2" "$work/link_own.actual"
}

# ---- own_stdout -------------------------------------------------------------------------------
# own CASE VAR=VALUE... : runs `edges print` in a fresh folder with SPANPROF=count and those
# variables, its stdout and stderr redirected as CASE says (out.txt and err.txt hold a line
# beforehand for >>); then both files (the 5,000 x of the long line shortened) and the folder's
# other entries.  JSON on stderr: err.txt's lines before it, then the profile through profdump.
own() {
    own_case=$1
    shift
    own_n=$((own_n + 1))
    d=$work/own-$own_n
    mkdir -p "$d"
    echo "## $own_case, $*"
    (
        cd "$d" || exit
        case $own_case in
        '>') env SPANPROF=count "$@" timeout -s KILL 30 "$exe" print >out.txt 2>err.txt ;;
        '>>')
            echo "before" >out.txt && echo "before" >err.txt
            env SPANPROF=count "$@" timeout -s KILL 30 "$exe" print >>out.txt 2>>err.txt
            ;;
        '| cat') env SPANPROF=count "$@" timeout -s KILL 30 "$exe" print 2>err.txt | cat >out.txt ;;
        esac
    )
    for f in out.txt err.txt; do
        echo "# $f"
        case " $* " in
        *" SPANPROF_JSON=/dev/stderr "*)
            if [ $f = err.txt ]; then
                own_lines=2
                [ "$own_case" = '>>' ] && own_lines=3
                head -n $own_lines "$d/$f"
                tail -n +$((own_lines + 1)) "$d/$f" >"$d.json"
                "$PROFDUMP" "$d.json" 2>&1 | sed "s|$d.json|the rest of err.txt|"
                continue
            fi
            ;;
        esac
        sed 's/x\{5000\}/<5000 times x>/' "$d/$f"
    done
    echo "# other files: $(cd "$d" && ls -A | grep -v -x -e out.txt -e err.txt | tr '\n' ' ')"
}

test_own_stdout() {
    exe=$edges
    own_n=0
    {
        own '>' SPANPROF_FOLDED=/dev/stdout
        own '>>' SPANPROF_FOLDED=/dev/stdout
        own '| cat' SPANPROF_FOLDED=/dev/stdout
        own '>' SPANPROF_FOLDED=/dev/fd/1
        own '>' SPANPROF_FOLDED=out.txt
        own '>>' SPANPROF_FOLDED=/proc/self/fd/2
        own '>' SPANPROF_JSON=/dev/stderr SPANPROF_FOLDED=none.folded
        own '>>' SPANPROF_JSON=/dev/stderr SPANPROF_FOLDED=/dev/stdout
    } >"$work/own_stdout.actual" 2>&1
    compare_expected own_stdout "gcc -O2" "$work/own_stdout.actual"
}

# ---- fifo -------------------------------------------------------------------------------------
make_fifos() {
    mkfifo "$1/out.folded" "$1/out.json"
}

test_fifo() {
    each_ending fifo make_fifos SPANPROF_FOLDED=out.folded SPANPROF_JSON=out.json
}

# ---- long_name ----------------------------------------------------------------------------------
test_long_name() {
    exe=$edges
    d=$work/long-name
    mkdir -p "$d"
    # 248 characters: the temporary name (".NAME.PID.tmp") cannot have them all.
    name=$(printf '%0241d' 0 | tr 0 n).folded
    run "$d" -- SPANPROF_FOLDED="$name" -- exit
    describe "$d" | sed 's/n\{241\}/<241 times n>/' >"$work/long_name.actual" 2>&1
    compare_expected long_name "gcc -O2" "$work/long_name.actual"
}

# ---- sigrace ----------------------------------------------------------------------------------
test_sigrace() {
    d=$work/sigrace
    mkdir -p "$d"
    exe=$d/prog
    build_prog "$here/sigrace.c" "$exe" static || return
    build "sigrace: preload" "$d/preload.log" $CC -O2 -fPIC -shared -x c \
        "$here/sigrace_preload.inc" -o "$d/preload.so" -ldl || return
    mkdir -p "$d/run"
    run "$d/run" -- LD_PRELOAD="$d/preload.so" SPANPROF_FOLDED=out.folded -- 
    describe "$d/run" >"$work/sigrace.actual" 2>&1
    compare_expected sigrace "gcc -O2, static runtime" "$work/sigrace.actual"
}

# ---- the tool ---------------------------------------------------------------------------------
# tool DIR ARGS...: runs the spanprof tool in DIR (killed after 20 s: a hang is a failure, exit 137);
# prints its status, stdout and stderr.
tool() {
    tool_dir=$1
    shift
    (cd "$tool_dir" && timeout -s KILL 20 "$TOOL" "$@" >"$work/tool.out" 2>"$work/tool.err")
    echo "\$ spanprof $* -> exit $?"
    sed "s|$tool_dir/||g" "$work/tool.out" "$work/tool.err"
}

# listing DIR: every entry, with a regular file's first line and size.
listing() {
    (cd "$1" && find . -mindepth 1 | sort) | while read -r f; do
        if [ -L "$1/$f" ]; then
            echo "  ${f#./} -> $(readlink "$1/$f")"
        elif [ -p "$1/$f" ]; then
            echo "  ${f#./} (fifo)"
        elif [ -f "$1/$f" ]; then
            echo "  ${f#./}: $(wc -c <"$1/$f") bytes, first line: $(head -c 60 "$1/$f" | head -n 1)"
        fi
    done
}

test_cli_full_disk() {
    d=$work/full
    mkdir -p "$d"
    if [ "$(id -u)" -ne 0 ] || ! mount -t tmpfs -o size=128k tmpfs "$d" 2>/dev/null; then
        skip "cli_full_disk: needs root to mount a small tmpfs"
        return
    fi
    {
        (cd "$d" && printf 'main;parse 100\nmain;digest 200\n' >all.folded &&
            printf 'main;parse 5\n' >b.folded &&
            printf '{"spans":[{"name":"a","calls":1}]}\n' >a.json)
        # Fill the file system, leaving less than any output needs.
        dd if=/dev/zero of="$d/filler" bs=1k count=200 2>/dev/null
        echo "## before (the filler left out)"
        listing "$d" | grep -v filler
        tool "$d" merge -o all.folded all.folded b.folded
        tool "$d" convert -o all.pb.gz all.folded
        tool "$d" view -o all.html all.folded
        echo "## after"
        listing "$d" | grep -v filler
    } >"$work/cli_full_disk.actual" 2>&1
    umount "$d"
    compare_expected cli_full_disk "spanprof" "$work/cli_full_disk.actual"
}

test_cli_paths() {
    d=$work/cli-paths
    mkdir -p "$d/target"
    {
        (cd "$d" && printf 'main;parse 100\n' >a.folded && printf 'main;parse 5\n' >b.folded &&
            echo precious >victim && echo "old merged" >target/merged.folded &&
            ln -s target/merged.folded mine.folded && mkfifo pipe.folded)
        if [ "$(id -u)" -eq 0 ]; then
            ln -s victim "$d/theirs.folded" && chown -h "$nobody:$nobody" "$d/theirs.folded"
            tool "$d" merge -o theirs.folded a.folded b.folded
        else
            echo "(the link of another user needs root: left out)"
        fi
        tool "$d" merge -o mine.folded a.folded b.folded
        tool "$d" merge -o pipe.folded a.folded b.folded
        long=$(printf '%0241d' 0 | tr 0 n).folded
        tool "$d" merge -o "$long" a.folded b.folded | sed 's/n\{241\}/<241 times n>/'
        listing "$d" | sed 's/n\{241\}/<241 times n>/'
    } >"$work/cli_paths.actual" 2>&1
    compare_expected cli_paths "spanprof" "$work/cli_paths.actual"
}

test_dump() {
    d=$work/dump
    mkdir -p "$d"
    {
        # Signals the runtime refuses, then USR2 to a program without the runtime that inherited
        # the variable: each would kill it.
        for sig in KILL SEGV USR2; do
            (cd "$d" && SPANPROF_DUMP_SIGNAL=$sig exec sleep 30) &
            pid=$!
            sleep 0.2
            tool "$d" dump "$pid" | sed "s/\b$pid\b/PID/g"
            kill -0 "$pid" 2>/dev/null && echo "process alive" || echo "process gone"
            kill "$pid"
            wait "$pid" 2>/dev/null
        done
        # Dumps sent as soon as the program exists: refused until it catches the signal,
        # written afterwards, never a death by SIGUSR2 (status 140).  Any other status is a
        # different fault: said on the terminal, not compared.
        killed=0
        for i in $(seq 20); do
            (cd "$d" && SPANPROF=count SPANPROF_DUMP_SIGNAL=USR2 SPANPROF_FOLDED=race.folded \
                exec "$edges" exit >/dev/null 2>&1) &
            pid=$!
            "$TOOL" dump --timeout 5 "$pid" >/dev/null 2>&1
            wait "$pid"
            st=$?
            [ "$st" -eq 140 ] && killed=$((killed + 1))
            [ "$st" -eq 0 ] || [ "$st" -eq 140 ] ||
                echo "dump: start-up run $i of edges ended with status $st" >>"$work/dump.other"
        done
        echo "20 dumps at start-up: $killed killed by SIGUSR2"
    } >"$work/dump.actual" 2>&1
    compare_expected dump "spanprof" "$work/dump.actual"
    [ ! -s "$work/dump.other" ] || cat "$work/dump.other"
}

test_hostile() {
    d=$work/hostile
    mkdir -p "$d"
    {
        # 300 MiB of zeros in some 300 KB of gzip.
        head -c 314572800 /dev/zero | gzip -c >"$d/bomb.pb.gz"
        tool "$d" merge -o out.pb.gz bomb.pb.gz bomb.pb.gz
        printf '{"version":1,"start_time":"3000-01-01T00:00:00.000Z","wall_ns":1,"clock":"tsc",%s\n' \
            '"spans":[{"name":"a","file":"a.c","line":1,"calls":1,"total_ns":1,"self_ns":1}]}' \
            >"$d/future.json"
        tool "$d" convert -o future.pb.gz future.json
        printf '{"traceEvents":[{"name":"a","ph":"B","pid":1,"tid":1,"ts":-9223372036854775807},%s\n' \
            '{"name":"a","ph":"E","pid":1,"tid":1,"ts":1}]}' >"$d/trace.json"
        tool "$d" view -o trace.html trace.json
        printf 'main;parse 100\n' >"$d/x<!--<script>.folded"
        tool "$d" view -o page.html "x<!--<script>.folded"
        echo "the page's loading call: $(grep -o 'loadFileFromBase64([^,]*' "$d/page.html")"
        echo "\"<!--\" in the page's scripts: $(grep -c '<!--' "$d/page.html")"
        long_frame=$(printf '%05000d' 0 | tr 0 f)
        printf 'main;%s 7\nmain 1\n' "$long_frame" >"$d/deep.folded"
        tool "$d" merge -o merged.folded deep.folded deep.folded
        echo "merged: $(sed "s/$long_frame/<5000 times f>/" "$d/merged.folded" | tr '\n' ' ')"
        listing "$d" | grep -v -e bomb -e 'x<' -e 'deep.folded' -e 'merged.folded' \
            -e '\.json' -e 'page.html'
    } >"$work/hostile.actual" 2>&1
    compare_expected hostile "spanprof" "$work/hostile.actual"
}

# tree DIR: every entry under DIR, a directory as such, a link with its target, a file with its
# contents.
tree() {
    (cd "$1" && find . -mindepth 1 | sort) | while read -r f; do
        if [ -L "$1/$f" ]; then
            echo "  ${f#./} -> $(readlink "$1/$f")"
        elif [ -d "$1/$f" ]; then
            echo "  ${f#./}/"
        else
            echo "  ${f#./}: $(cat "$1/$f")"
        fi
    done
}

# Each case is refused before CMD runs (CMD, `true`, would leave no profile: 125 all the same,
# so the directory afterwards tells a refusal from a run).
test_record_dirs() {
    d=$work/record-dirs
    mkdir -p "$d"
    {
        mkdir -p "$d/force/processes"
        echo 'print(1)' >"$d/force/processes/worker.py"
        echo '{}' >"$d/force/processes/123.json"
        echo "## --force, a user's file among the processes' files"
        tool "$d" record -o force --force -- true
        tree "$d/force"

        mkdir -p "$d/outputs/processes"
        echo coz >"$d/outputs/profile.coz"
        echo page >"$d/outputs/alloc.html"
        echo folded >"$d/outputs/alloc.folded"
        echo "## outputs beside an empty processes/, without --force"
        tool "$d" record -o outputs -- true
        tree "$d/outputs"

        if [ "$(id -u)" -eq 0 ]; then
            mkdir -p "$d/theirs/processes"
            echo '{}' >"$d/theirs/processes/1.json"
            chown -R "$nobody:$nobody" "$d/theirs"
            echo "## a directory of another user, with --force"
            tool "$d" record -o theirs --force -- true
            tree "$d/theirs"
            mkdir -p "$d/planted/processes"
            chown "$nobody:$nobody" "$d/planted/processes"
            echo "## an empty processes/ of another user"
            tool "$d" record -o planted -- true
            tree "$d/planted"
        else
            echo "(directories of another user need root: left out)"
        fi

        mkdir -p "$d/linked" "$d/victim"
        echo '{}' >"$d/victim/7.json"
        ln -s ../victim "$d/linked/processes"
        echo "## a processes/ that is a link, with --force"
        tool "$d" record -o linked --force -- true
        tree "$d/linked"
        tree "$d/victim"

        mkdir -p "$d/real/processes"
        echo '{}' >"$d/real/processes/8.json"
        ln -s real "$d/alias"
        echo "## a DIR that is a link, with --force"
        tool "$d" record -o alias --force -- true
        tree "$d/real"

        mkdir -p "$d/earlier/processes"
        for f in processes/123.json processes/123.2.folded processes/.124.json.124.tmp \
            processes/125.alloc.folded processes/.125.folded.125.crash.tmp profile.json \
            profile.coz alloc.html .flamegraph.html.99.tmp; do
            echo old >"$d/earlier/$f"
        done
        echo "## an earlier run, with --force: its files removed, CMD run"
        tool "$d" record -o earlier --force -- true
        tree "$d/earlier"

        mkdir -p "$d/shared"
        chmod 775 "$d/shared"
        echo "## a group-writable DIR"
        tool "$d" record -o shared -- true
        tree "$d/shared"
    } >"$work/record_dirs.actual" 2>&1
    compare_expected record_dirs "spanprof" "$work/record_dirs.actual"
}

for t in privileged retitle link_foreign link_own own_stdout fifo long_name sigrace cli_full_disk \
    cli_paths dump hostile record_dirs; do
    selected "$t" && "test_$t"
done
summary
