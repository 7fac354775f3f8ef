#!/bin/sh
# run.sh — the long-running-program tests: signal deaths, crashes, dumps on a signal and on a
# timer, exec and descendants, two copies of the runtime, libraries unloaded, thread
# churn.  Builds each sample in this folder with spanplugin (gcc -O2, linked with libspanprof.so unless it says otherwise),
# runs it with SPANPROF=count and SPANPROF_FOLDED=out.folded (no %p: the naming rules are under
# test) in a folder of its own, and compares with NAME.expected: its exit status (with the
# signal's name when it died by one), stdout, stderr and every file it left, pids replaced by PID
# (its own) and CHILD (any other).  Values are call counts, so they are exact.
#
# Environment: CC, PLUGIN, INCLUDE_DIR, LIBDIR, PROFDUMP, TOOL (the spanprof command),
# TRACECHECK, RUNTIME_LIBS.  Optional: ONLY="a b"; REGEN=1 rewrites the expected files, EMULATOR
# runs the programs (see ../lib.sh);
# SAMPLE_CFLAGS, added to every compile and link (the sanitizer runs of `make check-sanitize`).
# A sample may carry lines:  test-env: VAR=VALUE ...   extra environment
#                            test-build: static        linked with libspanprof.a
#                            test-build: fully-static  the same, and -static
#                            test-driver: NAME         run by driver_NAME below instead
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
make_work_dir
SAMPLE_CFLAGS=${SAMPLE_CFLAGS:-}
# SIGQUIT and crashes: no core files (dash and bash both have ulimit -c).
# shellcheck disable=SC3045
ulimit -c 0 2>/dev/null

directive() {
    sed -n "s|.*$1: \\([^*]*[^* ]\\).*|\\1|p" "$2" | head -n 1
}

# build_prog SRC EXE [static|rdynamic|fully-static|none]  (none: no plugin, no runtime)
build_prog() {
    plugin="-fplugin=$PLUGIN"
    case ${3:-} in
    none) link="-pthread -ldl" plugin= ;;
    static) link="-Wl,-u,__spanprof_enter $LIBDIR/libspanprof.a $RUNTIME_LIBS -pthread -ldl" ;;
    rdynamic) link="-rdynamic -Wl,-u,__spanprof_enter $LIBDIR/libspanprof.a $RUNTIME_LIBS -pthread -ldl" ;;
    fully-static) link="-static -Wl,-u,__spanprof_enter $LIBDIR/libspanprof.a $RUNTIME_LIBS -pthread" ;;
    *) link="-L$LIBDIR -Wl,--no-as-needed -lspanprof -Wl,-rpath,$LIBDIR -pthread -ldl" ;;
    esac
    cmd="$CC -g -O2 $SAMPLE_CFLAGS $plugin -I$INCLUDE_DIR $1 -o $2 $link"
    # shellcheck disable=SC2086 # cmd is a word list
    $cmd >"$2.log" 2>&1
}

# Every signal's default action for the programs the tests signal, even where the tests run with
# some ignored (SIGINT and SIGQUIT in a background job, SIGHUP under nohup): an ignored signal
# stays ignored across exec, and the program would not die of it.  coreutils' env has
# --default-signal since 8.31.
default_signals=""
if env --default-signal true 2>/dev/null; then
    default_signals="--default-signal"
fi

# run DIR [ARGS...]: runs $exe in DIR (its pid in DIR/pid, its status in DIR/status), in the
# foreground (a shell ignores SIGINT and SIGQUIT in background jobs).  The line the waiting shell
# adds to the program's stderr when a signal killed it ("Terminated") is dropped.
run() {
    d=$1
    shift
    # shellcheck disable=SC2086,SC2016 # test_env is a list of assignments; $$ is the inner shell's
    sh -c 'cd "$1" && shift && sh -c "echo \$\$ >pid && exec \"\$@\"" sh "$@" >stdout 2>stderr
           echo $? >rc' sh "$d" env $default_signals SPANPROF=count SPANPROF_FOLDED=out.folded $test_env \
        ${EMULATOR:-} "$exe" "$@" 2>/dev/null
    record_status "$d" "$(cat "$d/rc")"
    sed -i '/^\(Terminated\|Hangup\|Quit\|Interrupt\|Aborted\|Segmentation fault\)$/d' "$d/stderr"
}

# start DIR [ARGS...]: the same in the background (where a shell ignores SIGINT and SIGQUIT).
start() {
    d=$1
    shift
    # shellcheck disable=SC2086 # test_env is a list of assignments
    (cd "$d" && exec env SPANPROF=count SPANPROF_FOLDED=out.folded $test_env ${EMULATOR:-} "$exe" \
        "$@" >stdout 2>stderr) &
    echo $! >"$d/pid"
}

record_status() {
    st=$2
    if [ "$st" -gt 128 ]; then st="$st (SIG$(kill -l $((st - 128))))"; fi
    echo "$st" >"$1/status"
}

# finish DIR: waits for the program started in DIR and records its status.
finish() {
    wait "$(cat "$1/pid")" 2>/dev/null
    record_status "$1" $?
}

# wait_for FILE: up to 10 s.
wait_for() {
    i=0
    while [ ! -e "$1" ] && [ $i -lt 500 ]; do
        sleep 0.02
        i=$((i + 1))
    done
}

# describe DIR: the run's normalised result and every file it left.
describe() {
    d=$1
    pid=$(cat "$d/pid")
    print_run "$d" | sed -e "s|$d|DIR|g" -e "s|$LIBDIR|LIBDIR|g"
    for f in "$d"/out.* "$d"/.*tmp; do
        [ -f "$f" ] || continue
        name=$(basename "$f" | sed -e "s/\\b$pid\\b/PID/g" -e 's/\b[0-9]\{2,\}\b/CHILD/g')
        case $f in
        *.json) body=$("$PROFDUMP" "$f" 2>&1) ;;
        *) body=$(cat "$f") ;;
        esac
        printf '%s\n' "# file $name" "$body" | tr '\n' '\001'
        echo
    done | sort | tr '\001' '\n'
}

driver_default() {
    run "$1"
    describe "$1"
}

driver_signals() {
    for sig in INT TERM HUP QUIT; do
        mkdir -p "$1/$sig"
        run "$1/$sig" "$sig"
        echo "## SIG$sig"
        describe "$1/$sig"
    done
}

driver_ignored() {
    # shellcheck disable=SC2086 # test_env is a list of assignments
    (cd "$1" && trap '' TERM && exec env SPANPROF=count SPANPROF_FOLDED=out.folded $test_env \
        ${EMULATOR:-} "$exe" >stdout 2>stderr) &
    echo $! >"$1/pid"
    finish "$1"
    describe "$1"
}

# stuck: the program with writer_stuck_lib.inc preloaded (its writer thread never finishes).
driver_stuck() {
    if ! $CC -O2 -fPIC -shared -x c "$here/writer_stuck_lib.inc" -o "$1/stuck.so" -ldl \
        >"$1/stuck.log" 2>&1; then
        cat "$1/stuck.log"
        return
    fi
    test_env="$test_env LD_PRELOAD=$1/stuck.so"
    run "$1"
    describe "$1"
}

# same-as-exit: the run that exits and the run killed by SIGTERM leave the same folded stacks.
driver_same_as_exit() {
    mkdir -p "$1/exit" "$1/term"
    run "$1/exit" exit
    run "$1/term" term
    echo "## exit: $(cat "$1/exit/status"), SIGTERM: $(cat "$1/term/status")"
    sed -e 's/[0-9]\{4,\}/N/g' -e "s|$here/||g" "$1/exit/out.folded" | sort >"$1/exit.folded"
    sed -e 's/[0-9]\{4,\}/N/g' -e "s|$here/||g" "$1/term/out.folded" | sort >"$1/term.folded"
    echo "## at exit: runs of lines with the same first frame, last frame and value; deepest"
    awk -F';' '{ print (NF > 2 ? $1 ";...;" $NF : $0) }' "$1/exit.folded" | uniq -c
    awk -F';' '{ if (NF > max) max = NF } END { print max " frames" }' "$1/exit.folded"
    echo "## difference"
    diff "$1/exit.folded" "$1/term.folded"
}

# same-stacks-as-exit: as same-as-exit, for times (values dropped).
driver_same_stacks_as_exit() {
    mkdir -p "$1/exit" "$1/term"
    run "$1/exit" exit
    run "$1/term" term
    echo "## exit: $(cat "$1/exit/status"), SIGTERM: $(cat "$1/term/status")"
    for how in exit term; do
        sed -e 's/ [0-9]*$//' -e "s|$here/||g" "$1/$how/out.folded" | sort >"$1/$how.stacks"
    done
    echo "## at exit, stacks not in the deep recursion"
    grep -v 'deep.*deep' "$1/exit.stacks"
    echo "## difference"
    diff "$1/exit.stacks" "$1/term.stacks"
}

# dump: `spanprof dump PID` after each phase of the program, the files as each dump left them.
driver_dump() {
    start "$1"
    pid=$(cat "$1/pid")
    for n in 1 2; do
        wait_for "$1/phase$n"
        echo "## spanprof dump, phase $n"
        "$TOOL" dump "$pid" 2>&1 | sed -e "s|$1|DIR|g" -e "s/\\b$pid\\b/PID/g"
        cat "$1/out.folded"
        "$PROFDUMP" "$1/out.json" 2>&1
        touch "$1/go$n"
    done
    finish "$1"
    echo "## at exit"
    describe "$1"
    echo "## spanprof dump of a process that has no dump signal"
    "$TOOL" dump $$ 2>&1 | sed "s/\\b$$\\b/PID/g"
    echo "## spanprof dump of no process"
    "$TOOL" dump 2147483646 2>&1
}

# interval: the timer's dump seen, then SIGKILL.
driver_interval() {
    start "$1"
    wait_for "$1/phase1"
    i=0
    while ! grep -q '^tick 7$' "$1/out.folded" 2>/dev/null && [ $i -lt 500 ]; do
        sleep 0.02
        i=$((i + 1))
    done
    kill -KILL "$(cat "$1/pid")"
    finish "$1"
    describe "$1"
}

# churn: as default, then the JSON's "threads" entries one a line, sorted (the running thread's
# tid as TID): threads that ended are merged into one entry per name, listed where the first
# of them ended.
driver_churn() {
    run "$1"
    describe "$1"
    echo "## JSON threads"
    tr -d ' \n' <"$1/out.json" | sed -e 's/.*"threads":\[\([^]]*\)\].*/\1/' -e 's/},{/}\n{/g' \
        -e 's/"tid":[0-9]*/"tid":TID/g' | sort
    echo
}

# two-runtimes: the program with the static runtime, the library with the shared one; then the
# program linked with -rdynamic; then the other way round (the program with the shared runtime,
# the library with the static one inside).
driver_two_runtimes() {
    cp "$here/two_runtimes_lib.inc" "$1/lib.c"
    for lib in shared static; do
        case $lib in
        shared) link="-L$LIBDIR -Wl,--no-as-needed -lspanprof -Wl,-rpath,$LIBDIR" ;;
        static) link="-Wl,-u,__spanprof_enter $LIBDIR/libspanprof.a $RUNTIME_LIBS -pthread" ;;
        esac
        # shellcheck disable=SC2086 # link is a word list
        if ! $CC -O2 -fPIC -shared -fplugin="$PLUGIN" -I"$INCLUDE_DIR" "$1/lib.c" \
            -o "$1/lib$lib.so" $link >"$1/lib.log" 2>&1; then
            cat "$1/lib.log"
            return
        fi
    done
    for how in static:shared rdynamic:shared shared:static; do
        prog=${how%%:*} lib=${how#*:}
        mkdir -p "$1/$prog"
        exe="$1/$prog/prog"
        build_prog "$src" "$exe" "$([ "$prog" = shared ] || echo "$prog")" || cat "$exe.log"
        echo "## program: $prog runtime; library: $lib runtime"
        run "$1/$prog" "$1/lib$lib.so"
        describe "$1/$prog"
    done
}

# dlclose: the library loaded and unloaded twice, its spans recorded by the program's runtime
# (shared; static with -rdynamic) or by a runtime inside the library (shared or static), which
# then goes away with it; the second load at the same place or, "moved", at another, or with
# "settings", after the program changed the environment the runtime reads.
driver_dlclose() {
    cp "$here/dlclose_lib.inc" "$1/lib.c"
    for lib in plain shared static; do
        case $lib in
        plain) link="" ;;
        shared) link="-L$LIBDIR -Wl,--no-as-needed -lspanprof -Wl,-rpath,$LIBDIR" ;;
        static) link="-Wl,-u,__spanprof_enter $LIBDIR/libspanprof.a $RUNTIME_LIBS -pthread" ;;
        esac
        # shellcheck disable=SC2086 # link is a word list
        if ! $CC -O2 $SAMPLE_CFLAGS -fPIC -shared -fplugin="$PLUGIN" -I"$INCLUDE_DIR" \
            "$1/lib.c" -o "$1/lib$lib.so" $link >"$1/lib.log" 2>&1; then
            cat "$1/lib.log"
            return
        fi
    done
    for how in shared:plain:same shared:plain:moved rdynamic:plain:same none:shared:same \
        none:shared:moved none:static:same none:shared:settings; do
        prog=${how%%:*} rest=${how#*:}
        lib=${rest%%:*} where=${rest#*:}
        d="$1/$prog-$lib-$where"
        mkdir -p "$d"
        exe="$d/prog"
        build_prog "$src" "$exe" "$([ "$prog" = shared ] || echo "$prog")" || cat "$exe.log"
        echo "## program: $prog runtime; library: $lib; second load: $where"
        run "$d" "$1/lib$lib.so" "$where"
        describe "$d"
        # The JSON has one entry per span and progress point, not one per load of the library.
        for entry in lib_work lib-tick; do
            echo "# entries named $entry in out.json: $(grep -c "\"$entry\"" "$d/out.json")"
        done
        # The trace's events keep the library's names.
        echo "# trace.json"
        "$TRACECHECK" "$d/trace.json" 2>&1 | sed "s|$d/||g"
        grep -o '"name": *"lib_[a-z]*"' "$d/trace.json" | sort | uniq -c
    done
}

for src in "$here"/*.c; do
    name=$(basename "$src" .c)
    selected "$name" || continue
    dir="$work/$name"
    mkdir -p "$dir"
    exe="$dir/prog"
    test_env=$(directive test-env "$src")
    driver=$(directive test-driver "$src" | tr - _)
    if ! build_prog "$src" "$exe" "$(directive test-build "$src")"; then
        fail "$name: does not build"
        sed 's/^/  | /' "$exe.log"
        continue
    fi
    "driver_${driver:-default}" "$dir" >"$dir/actual" 2>&1
    compare_expected "$name" "gcc -O2" "$dir/actual"
done

summary
