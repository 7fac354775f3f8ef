#!/bin/sh
# run.sh — the flight recorder (SPANPROF_FLIGHT, SPANPROF_SLOW): builds reqloop.c whole-program
# (-fplugin-arg-spanplugin-all, no markup) and runs it in the cases below.  Each capture is
# checked by tracecheck (a valid Chrome trace: every thread's events nest and never go back in
# time) and flightcheck (the window, the slow call, the other thread); the summary printed per
# case is free of times and counts that vary, and is compared with CASE.expected.
#   loop         handle:2ms, 0.5 s window, 5 s: a handful of captures (rate-limited to one a
#                second), each with a handle of >= 2 ms ending its window, nothing outside the
#                window, the other thread's events; the ~6 ms stall inside every slow handle
#                that called it by the program's own clock (a busy machine also makes plain
#                requests that slow: those are captures too), at least one such capture (up
#                to three runs: beside busy loops a preempted plain request was once the
#                slowest of every second);
#                spanprof report DIR lists them all
#   never        a threshold no call reaches: no directory, no file
#   globs        'zz*:1ms,st?ll:2ms': the first rule names nothing (one warning), the second
#                stall; only stall's captures
#   alone        SPANPROF_SLOW=stall:2ms without SPANPROF_FLIGHT: stall's captures, each of the
#                default 1-second window
#   rate         SPANPROF_SLOW_INTERVAL=0.5 for 3 s: at most 7 captures; SPANPROF_SLOW_MAX=2:
#                exactly 2 files; SPANPROF_SLOW_MAX_BYTES=200000 beside a capture of 150,000
#                bytes: exactly one more (the first brings the directory over the limit)
#   threads      short-lived threads start and end beside the workers: captures still valid
#   fork         a fork child records on its own: captures of both pids, each trace its own
#   term         SIGTERM (handled by the runtime) right after the first slow request: the
#                capture is written before the process dies of the signal
#   crash        a worker faults halfway: the process dies of SIGSEGV as it would have, the
#                folded profile is written, and one capture SIGSEGV.PID.TIME of the last
#                0.5 s (both threads' events, the crashing one's among them), no temporary file
#   request      spanprof dump --flight PID: a capture asked for, printed by path
#   min          SPANPROF_FLIGHT_MIN=10us: only calls of >= 10 us in the captures (6 s: on a
#                busy machine requests a preemption held up are slow too, and a capture keeps
#                the slowest of its burst, so a short run may capture none that stalled)
#   record       spanprof record --slow handle:2ms --flight 0.5: captures in DIR/slow, listed
#   full_disk    the capture directory on a full file system: one error line, the profile
#                still written (root only: a small tmpfs)
#   bad_values   one warning line per bad value, and the defaults
#   names        names that match no span, each with one warning line: a typo ('hanlde'), a
#                function the size rule left without a span (fault), in SPANPROF_SLOW and
#                SPANPROF_COZ_PROGRESS; none for a name that has one (handle)
#   busy         busy.c (marked spans, no -all): a main thread writing at least 10 M span events
#                per CPU second, one 20 ms request each second; SPANPROF_SLOW=request:10ms alone,
#                the default ring: every capture holds the whole request and the nap inside it
#                (the ring is overwritten in ~26 ms, long before the capture is written: the
#                events are secured as the call ends)
#
# Environment: CC, PLUGIN, INCLUDE_DIR, LIBDIR, TRACECHECK, FLIGHTCHECK, TOOL.  ONLY, REGEN as in
# ../lib.sh.
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
make_work_dir

exe=$work/reqloop
cmd="$CC -O2 -g -fplugin=$PLUGIN -fplugin-arg-spanplugin-all -I$INCLUDE_DIR $here/reqloop.c -o $exe -L$LIBDIR -Wl,--no-as-needed -lspanprof -Wl,-rpath,$LIBDIR -pthread"
# shellcheck disable=SC2086 # a word list
build "reqloop" "$work/build.log" $cmd || finish
busy=$work/busy
cmd="$CC -O2 -g -fplugin=$PLUGIN -I$INCLUDE_DIR $here/busy.c -o $busy -L$LIBDIR -Wl,--no-as-needed -lspanprof -Wl,-rpath,$LIBDIR -pthread"
# shellcheck disable=SC2086 # a word list
build "busy" "$work/build-busy.log" $cmd || finish

# in_range N LOW HIGH WHAT: "WHAT: LOW to HIGH" when LOW <= N <= HIGH, else N itself.
in_range() {
    if [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; then
        echo "$4: $2 to $3"
    else
        echo "$4: $1 (expected $2 to $3)"
    fi
}

# captures DIR [FLIGHTCHECK-OPTIONS...]: checks every capture of DIR; prints what they all say
# (sorted, each line once); flightcheck's summary of each is kept in $work/check_DIR/CAPTURE.fc.
captures() {
    cdir=$1
    shift
    chk=$work/check$(echo "${cdir#"$work"}" | tr / _)
    mkdir -p "$chk"
    for capture in "$cdir"/*.trace.json; do
        [ -f "$capture" ] || continue
        f=$chk/${capture##*/}
        n_captures=$((n_captures + 1))
        if "$TRACECHECK" "$capture" >"$f.tc" 2>&1; then
            threads=$(grep -c '^thread ' "$f.tc")
            good=$(grep -c '^thread .*, balanced, monotonic,' "$f.tc")
            [ "$threads" = "$good" ] && echo "tracecheck: every thread nests, monotonic" ||
                { echo "tracecheck: $f:"; cat "$f.tc"; }
        else
            echo "tracecheck: $capture is not a trace"
        fi
        "$FLIGHTCHECK" "$@" "$capture" >"$f.fc" 2>&1
        grep -v '^inner: \|^threads: ' "$f.fc"
        # A capture that misses something: its run information (threads' event counts, the
        # trigger) goes into the diff, to tell a lost window from a missing event.
        if grep -v '^inner: ' "$f.fc" | grep -q ': no$'; then
            echo "(${capture##*/}, written $(stat -c %y "$capture"): $(tail -n 1 "$capture"))"
        fi
    done | sort | uniq
}

# run_loop DIR ARGS...: reqloop ARGS in DIR (stdout, stderr, status kept there).
run_loop() {
    d=$1
    shift
    mkdir -p "$d"
    (cd "$d" && SPANPROF_FOLDED=profile.folded "$exe" "$@" >stdout 2>stderr; echo $? >status)
}

# outcome DIR: the run's exit status and its stderr.
outcome() {
    echo "# exit $(cat "$1/status"), stderr:"
    cat "$1/stderr"
}

# stalled_captures CHECKDIR: of the captures whose slow handle called stall (by the program's
# clock, flightcheck --stalls), how many hold it in the trace.
stalled_captures() {
    yes=$(cat "$1"/*.fc | grep -c '^inner: yes$')
    no=$(cat "$1"/*.fc | grep -c '^inner: no$')
    [ "$yes" -ge 1 ] && echo "captures of a request that stalled: at least 1" ||
        echo "no capture of a request that stalled"
    echo "captures of a request that stalled, without the stall in the trace: $no"
}

count_files() {
    find "$1" -maxdepth 1 -name "${2:-*}.trace.json" 2>/dev/null | wc -l
}

# One try of the loop case, its summary in $d.actual.
try_loop() {
    rm -rf "$d" "$work/check_loop_caps"
    REQLOOP_STALLS=stalls SPANPROF_SLOW=handle:2ms SPANPROF_FLIGHT=0.5 SPANPROF_SLOW_DIR=caps \
        run_loop "$d" 5
    {
        outcome "$d"
        captures "$d/caps" --min-ms 2 --inner stall --stalls "$d/stalls"
        n=$(count_files "$d/caps")
        in_range "$n" 2 7 "captures (one a second at most)"
        stalled_captures "$work/check_loop_caps"
        echo "# spanprof report caps"
        (cd "$d" && "$TOOL" report caps) >"$d/report" 2>&1
        head -n 2 "$d/report" | sed 's/^[0-9]* flight-recorder/N flight-recorder/'
        listed=$(grep -c '^  20.*  handle  ' "$d/report")
        [ "$listed" = "$n" ] && echo "every capture listed, span handle" || echo "listed $listed of $n"
        grep -q 'slowest inside: parse .*stall' "$d/report" && echo "a slow call's slowest descendants: parse, stall"
    } >"$d.actual" 2>&1
}

# Beside busy loops a preempted plain request can be the slowest of every second, so that no
# capture holds a stalled one (once in a whole make check beside four): up to three tries.
test_loop() {
    d=$work/loop
    for attempt in 1 2 3; do
        try_loop
        grep -q '^captures of a request that stalled: at least 1$' "$d.actual" && break
        echo "  loop: try $attempt captured no stalled request"
    done
    compare_expected loop "gcc -O2" "$d.actual"
}

test_never() {
    d=$work/never
    SPANPROF_SLOW=handle:10s SPANPROF_FLIGHT=0.5 SPANPROF_SLOW_DIR=caps run_loop "$d" 1
    {
        outcome "$d"
        [ -e "$d/caps" ] && echo "caps exists: $(ls "$d/caps")" || echo "no capture directory"
        grep -c '^worker;handle ' "$d/profile.folded"
    } >"$d.actual" 2>&1
    compare_expected never "gcc -O2" "$d.actual"
}

test_globs() {
    d=$work/globs
    SPANPROF_SLOW='zz*:1ms,st?ll:2ms' SPANPROF_FLIGHT=0.3 SPANPROF_SLOW_DIR=caps run_loop "$d" 2
    {
        outcome "$d"
        captures "$d/caps" --min-ms 2
        in_range "$(count_files "$d/caps" 'stall.*')" 1 3 "stall captures"
        echo "other captures: $(find "$d/caps" -name '*.trace.json' ! -name 'stall.*' | wc -l)"
    } >"$d.actual" 2>&1
    compare_expected globs "gcc -O2" "$d.actual"
}

test_alone() {
    d=$work/alone
    SPANPROF_SLOW=stall:2ms SPANPROF_SLOW_DIR=caps run_loop "$d" 2
    {
        outcome "$d"
        captures "$d/caps" --min-ms 2
        in_range "$(count_files "$d/caps" 'stall.*')" 1 3 "stall captures"
        echo "windows: $(cat "$d"/caps/*.trace.json | grep -o '"window_s": *[0-9.]*' | sort -u | tr -d ' ')"
    } >"$d.actual" 2>&1
    compare_expected alone "gcc -O2" "$d.actual"
}

test_rate() {
    d=$work/rate
    SPANPROF_SLOW=handle:2ms SPANPROF_FLIGHT=0.2 SPANPROF_SLOW_DIR=caps SPANPROF_SLOW_INTERVAL=0.5 \
        run_loop "$d" 3
    d2=$work/rate-max
    SPANPROF_SLOW=handle:2ms SPANPROF_FLIGHT=0.2 SPANPROF_SLOW_DIR=caps SPANPROF_SLOW_INTERVAL=0.1 \
        SPANPROF_SLOW_MAX=2 run_loop "$d2" 2
    d3=$work/rate-bytes
    mkdir -p "$d3/caps"
    head -c 150000 /dev/zero >"$d3/caps/earlier.1.20260101T000000.000Z.trace.json"
    SPANPROF_SLOW=handle:2ms SPANPROF_FLIGHT=0.2 SPANPROF_SLOW_DIR=caps SPANPROF_SLOW_INTERVAL=0.1 \
        SPANPROF_SLOW_MAX_BYTES=200000 run_loop "$d3" 2
    {
        echo "# interval 0.5 s for 3 s: exit $(cat "$d/status"), stderr:"
        cat "$d/stderr"
        in_range "$(count_files "$d/caps")" 2 7 "captures"
        echo "# SPANPROF_SLOW_MAX=2: exit $(cat "$d2/status"), stderr:"
        cat "$d2/stderr"
        echo "captures: $(count_files "$d2/caps")"
        echo "other files: $(find "$d2/caps" -type f ! -name '*.trace.json' | wc -l)"
        echo "# SPANPROF_SLOW_MAX_BYTES=200000, a capture of 150,000 bytes there: exit $(cat "$d3/status"), stderr:"
        cat "$d3/stderr"
        echo "captures written: $(($(count_files "$d3/caps") - 1))"
        bytes=$(cat "$d3"/caps/*.trace.json | wc -c)
        [ "$bytes" -ge 200000 ] && echo "the directory's captures reached the limit"
    } >"$d.actual" 2>&1
    compare_expected rate "gcc -O2" "$d.actual"
}

test_threads() {
    d=$work/threads
    SPANPROF_SLOW=handle:2ms SPANPROF_FLIGHT=0.5 SPANPROF_SLOW_DIR=caps run_loop "$d" 3 threads
    {
        outcome "$d"
        captures "$d/caps" --min-ms 2
        in_range "$(count_files "$d/caps")" 1 4 "captures"
        more=0
        for f in "$work"/check_threads_caps/*.fc; do
            t=$(sed -n 's/^threads: //p' "$f")
            [ "${t:-0}" -gt 3 ] && more=$((more + 1))
        done
        [ "$more" -gt 0 ] && echo "a capture holds threads that ended (more than 3 threads)" ||
            echo "no capture holds more than 3 threads"
    } >"$d.actual" 2>&1
    compare_expected threads "gcc -O2" "$d.actual"
}

test_fork() {
    d=$work/fork
    SPANPROF_SLOW=handle:2ms SPANPROF_FLIGHT=0.3 SPANPROF_SLOW_DIR=caps run_loop "$d" 2.5 fork
    {
        outcome "$d"
        captures "$d/caps" --min-ms 2
        pids=$(find "$d/caps" -name 'handle.*.trace.json' | sed 's|.*/handle\.\([0-9]*\)\..*|\1|' | sort -u | wc -l)
        echo "pids with captures: $pids"
        own=0 all=0
        for f in "$d"/caps/handle.*.trace.json; do
            p=$(echo "$f" | sed 's|.*/handle\.\([0-9]*\)\..*|\1|')
            all=$((all + 1))
            grep -q "\"pid\":$p," "$f" && ! grep '"ph":"[BE]"' "$f" | grep -qv "\"pid\":$p," && own=$((own + 1))
        done
        [ "$own" = "$all" ] && echo "every capture holds its own process's events only" ||
            echo "$((all - own)) of $all captures hold another process's events"
    } >"$d.actual" 2>&1
    compare_expected fork "gcc -O2" "$d.actual"
}

test_term() {
    d=$work/term
    SPANPROF_SLOW=handle:2ms SPANPROF_FLIGHT=0.5 SPANPROF_SLOW_DIR=caps run_loop "$d" 10 term
    {
        outcome "$d"
        captures "$d/caps" --min-ms 2
        echo "captures: $(count_files "$d/caps")"
        echo "temporary files left: $(find "$d/caps" -name '.*' -type f | wc -l)"
    } >"$d.actual" 2>&1
    compare_expected term "gcc -O2" "$d.actual"
}

test_crash() {
    d=$work/crash
    (ulimit -c 0; SPANPROF_SLOW=handle:2ms SPANPROF_FLIGHT=0.5 SPANPROF_SLOW_DIR=caps \
        run_loop "$d" 2 crash)
    {
        outcome "$d"
        echo "profile: $(grep -c '^worker;handle ' "$d/profile.folded") handle line"
        echo "crash captures: $(count_files "$d/caps" 'SIGSEGV.*')"
        for f in "$d"/caps/SIGSEGV.*.trace.json; do
            "$TRACECHECK" "$f" >"$f.tc" 2>&1 && [ "$(grep -c '^thread ' "$f.tc")" = \
                "$(grep -c '^thread .*, balanced, monotonic,' "$f.tc")" ] &&
                echo "tracecheck: every thread nests, monotonic" || cat "$f.tc"
            "$FLIGHTCHECK" "$f"
            rm -f "$f.tc"
        done
        echo "temporary files left: $(find "$d" -name '.*.tmp' | wc -l)"
        (cd "$d" && "$TOOL" report caps) | grep -c '(crash: SIGSEGV)' | sed 's/^/listed by spanprof report: /'
    } >"$d.actual" 2>&1
    compare_expected crash "gcc -O2" "$d.actual"
}

test_request() {
    d=$work/request
    mkdir -p "$d"
    (cd "$d" && { SPANPROF_FLIGHT=0.3 SPANPROF_DUMP_SIGNAL=USR2 SPANPROF_SLOW_DIR=caps \
        "$exe" 4 quiet >stdout 2>stderr & echo $! >"$d/pid"; wait $!; echo $? >"$d/status"; }) &
    runner=$!
    # The process is ready once its writer thread runs (dump checks it): retry until a deadline.
    i=0
    until [ -s "$d/pid" ] && "$TOOL" dump --flight --timeout 5 "$(cat "$d/pid")" >"$d/dump.out" 2>"$d/dump.err"; do
        i=$((i + 1))
        [ $i -ge 100 ] && break
        sleep 0.05
    done
    wait "$runner"
    {
        echo "# dump: $(sed "s|$d/||; s|request\.[0-9]*\.[0-9T]*\.[0-9]*Z|request.PID.TIME|" "$d/dump.out")"
        outcome "$d"
        captures "$d/caps"
        echo "captures: $(count_files "$d/caps" 'request.*')"
    } >"$d.actual" 2>&1
    compare_expected request "gcc -O2" "$d.actual"
}

test_min() {
    d=$work/min
    REQLOOP_STALLS=stalls SPANPROF_SLOW=handle:2ms SPANPROF_FLIGHT=0.5 SPANPROF_FLIGHT_MIN=10us \
        SPANPROF_SLOW_DIR=caps run_loop "$d" 6
    {
        outcome "$d"
        captures "$d/caps" --min-ms 2 --min-us 10 --inner stall --stalls "$d/stalls"
        stalled_captures "$work/check_min_caps"
        in_range "$(count_files "$d/caps")" 1 7 "captures"
        grep -c '^worker;handle ' "$d/profile.folded"
    } >"$d.actual" 2>&1
    compare_expected min "gcc -O2" "$d.actual"
}

test_record() {
    d=$work/record
    mkdir -p "$d"
    (cd "$d" && "$TOOL" record -o run --slow handle:2ms --flight 0.5 -- "$exe" 2.5 >stdout 2>stderr;
        echo $? >status)
    {
        echo "# exit $(cat "$d/status")"
        sed -n '/flight-recorder capture/,$p' "$d/stderr" | head -n 2 |
            sed 's/^[0-9]* flight-recorder/N flight-recorder/'
        captures "$d/run/slow" --min-ms 2
        in_range "$(count_files "$d/run/slow")" 1 4 "captures"
        (cd "$d" && "$TOOL" report run) >"$d/report" 2>&1
        grep -q 'flight-recorder captures* in run/slow/' "$d/report" && echo "spanprof report run lists them"
        (cd "$d" && "$TOOL" record -o run -- "$exe" 0.2 quiet >/dev/null 2>"$d/again.err")
        echo "# again without --force: $(tail -n 1 "$d/again.err")"
        (cd "$d" && "$TOOL" record -o run --force -- "$exe" 0.2 quiet >/dev/null 2>&1)
        echo "# with --force: captures left: $(count_files "$d/run/slow")"
    } >"$d.actual" 2>&1
    compare_expected record "gcc -O2" "$d.actual"
}

test_full_disk() {
    d=$work/full
    mkdir -p "$d/caps"
    if [ "$(id -u)" -ne 0 ] || ! mount -t tmpfs -o size=128k tmpfs "$d/caps" 2>/dev/null; then
        skip "full_disk: needs root to mount a small tmpfs"
        return
    fi
    dd if=/dev/zero of="$d/caps/filler" bs=1k count=200 2>/dev/null
    SPANPROF_SLOW=handle:2ms SPANPROF_FLIGHT=0.5 SPANPROF_SLOW_DIR=caps SPANPROF_SLOW_INTERVAL=0.2 \
        run_loop "$d" 2
    {
        echo "# exit $(cat "$d/status"), stderr:"
        sed "s|'caps/handle\.[0-9]*\.[0-9T]*\.[0-9]*Z\.trace\.json'|'caps/handle.PID.TIME.trace.json'|" "$d/stderr"
        echo "files in caps: $(find "$d/caps" -type f ! -name filler | wc -l)"
        echo "profile: $(grep -c '^worker;handle;parse;stall ' "$d/profile.folded") stall line, $(grep -c '^worker;handle ' "$d/profile.folded") handle line"
    } >"$d.actual" 2>&1
    umount "$d/caps"
    compare_expected full_disk "gcc -O2" "$d.actual"
}

test_bad_values() {
    d=$work/bad
    long=$(printf '%05000d' 0)
    {
        for v in SPANPROF_FLIGHT=abc SPANPROF_FLIGHT=0 SPANPROF_FLIGHT_BYTES=-1 \
            SPANPROF_FLIGHT_MIN=5 SPANPROF_FLIGHT_MIN=0us SPANPROF_SLOW=handle \
            SPANPROF_SLOW=handle:5xs SPANPROF_SLOW=:5ms SPANPROF_SLOW=handle:2ms, \
            SPANPROF_SLOW_DIR=$long SPANPROF_SLOW_MAX=0 SPANPROF_SLOW_INTERVAL=-1; do
            echo "# ${v%%=*}=$(echo "${v#*=}" | cut -c1-20)"
            mkdir -p "$d"
            (cd "$d" && env SPANPROF_FLIGHT=0.2 "$v" SPANPROF_FOLDED= "$exe" 0.05 quiet 2>&1 >/dev/null | sed "s/$long/LONG/")
        done
        echo "# SPANPROF_FLIGHT_MIN without SPANPROF_FLIGHT or SPANPROF_SLOW"
        (cd "$d" && SPANPROF_FLIGHT_MIN=10us SPANPROF_FOLDED= "$exe" 0.05 quiet 2>&1 >/dev/null)
        echo "# SPANPROF_FLIGHT with SPANPROF=count"
        (cd "$d" && SPANPROF=count SPANPROF_FLIGHT=1 SPANPROF_FOLDED= "$exe" 0.05 quiet 2>&1 >/dev/null)
        echo "# no capture written: $(find "$d" -name '*.trace.json' | wc -l)"
    } >"$d.actual" 2>&1
    compare_expected bad_values "gcc -O2" "$d.actual"
}

test_names() {
    d=$work/names
    mkdir -p "$d"
    {
        echo "# SPANPROF_SLOW=hanlde:1ms,fault:1ms,handle:10s SPANPROF_COZ_PROGRESS='dig*,faul?'"
        (cd "$d" && SPANPROF_SLOW=hanlde:1ms,fault:1ms,handle:10s SPANPROF_COZ_PROGRESS='dig*,faul?' \
            SPANPROF_FOLDED= "$exe" 0.05 quiet 2>&1 >/dev/null)
        echo "# exit $?"
    } >"$d.actual" 2>&1
    compare_expected names "gcc -O2" "$d.actual"
}

test_busy() {
    d=$work/busy_run
    mkdir -p "$d"
    (cd "$d" && BUSY_RATE=rate SPANPROF_SLOW=request:10ms SPANPROF_SLOW_INTERVAL=0.5 \
        SPANPROF_SLOW_DIR=caps SPANPROF_FOLDED= "$busy" 3.2 >stdout 2>stderr; echo $? >status)
    {
        outcome "$d"
        cat "$d/stdout"
        rate=$(cat "$d/rate")
        [ "$rate" -ge 10000000 ] && echo "main thread: at least 10 M span events per CPU second" ||
            echo "main thread: $rate span events per CPU second (expected at least 10 M)"
        captures "$d/caps" --min-ms 20 --inner nap
        in_range "$(count_files "$d/caps")" 3 3 "captures"
        echo "# captures whose request is not whole: $(cat "$d"/caps/*.trace.json |
            grep -c '"slow_call_whole":false')"
    } >"$d.actual" 2>&1
    compare_expected busy "gcc -O2" "$d.actual"
}

for t in loop never globs alone rate threads fork term crash request min record full_disk bad_values names busy; do
    selected "$t" && "test_$t"
done
summary
