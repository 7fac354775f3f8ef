#!/bin/sh
# run.sh — `spanprof serve` (make check-live): the live profiles of running processes over HTTP,
# against stand-ins for the processes (responder.c: a Unix socket answering with a snapshot file
# the test writes, live/protocol.h's framing around a JSON profile and a pprof profile) and for
# Pyroscope (receiver.py), read back by curl, promtool and `go tool pprof`:
#   metrics            /metrics of two processes (server.json, worker.json) with --max-spans 3:
#                      exactly metrics.expected (escaping, "(other)", the histogram's buckets),
#                      and `promtool check metrics` passes it
#   monotonic          a later snapshot whose sampled calls went down and times up: the calls
#                      published stay at their largest, the times follow; then an exec (a new
#                      start): the new image's series alone, from its own counts
#   final              PID.START.final read once (its process counted ended) and unlinked
#   profile-window     /debug/pprof/profile?seconds=2 while the process goes from server-a to
#                      server-b: exactly the difference per stack, pid labels, both processes
#   profile-final      a process that ends during the window: counted up to its final snapshot
#   profile-cumulative without seconds, and ?pid=: the snapshots' stacks whole, one process
#   push               --push to receiver.py every second: name, from, until and format in the
#                      query, a body `go tool pprof` reads with the interval's values
#   hostile            bad parameters get 400 with one line, other paths 404, POST 405, a 20 KB
#                      query a 4xx, 60 connections at once, 2,000 mutated requests (httpfuzz.py:
#                      none may hang); serve answers /metrics after all that
#   record-serve       `spanprof record --serve`: CMD sees SPANPROF_LIVE=RUN/live, serve answers
#                      while CMD runs, RUN/live is gone afterwards
#   runtime-*          with the real runtime (skipped while it does not answer SPANPROF_LIVE):
#                      phases.c built whole-program (-fplugin-arg-spanplugin-all, no markup)
#                      runs phase A then phase B; `go tool pprof -seconds 3` taken in phase B
#                      holds phase_b, not phase_a, with calls within 10% of what the program
#                      itself counted in windows of that length (window_range.awk: on a busy
#                      machine its rate moves from one second to the next), and the real
#                      runtime's /metrics passes promtool with phase_b's histogram counting its
#                      calls (runtime-window); a real prometheus scraping serve every second:
#                      rate(spanprof_span_calls_total{span="phase_b"}[5s]) within 25% of the
#                      program's own rates over 5 s (runtime-prometheus); a pre-fork server
#                      (a parent and 3 workers, one replaced): every worker's pid in /metrics
#                      (runtime-prefork)
#   runtime-hot-series startup.c (150 start-up spans, 3 s idle, then requests) scraped from its
#                      start by serve with default options and a real prometheus:
#                      handle_request's rate queryable 5 s into the load, within 10% of the
#                      program's own rate
#   runtime-idle-connections  20 connections to the real runtime's socket that say nothing: a
#                      request beside them answered within 1 s
#   runtime-snapshot-rate     requests in a loop: at most ten snapshots a second (live_seq), each
#                      taken after its request; at most 200 answers a second;
#                      a second of requests in a loop: at most 200 answers
#   runtime-slow-reader       a client that asks for a snapshot larger than the socket's buffer
#                      and reads nothing (5 s of the live thread): a "spans" request sent
#                      meanwhile is answered within 8 s, not told its line never came
#   runtime-idle-window       a 2 s window as the program goes idle after 2 s of requests,
#                      sampled and exact: time in main alone (the requests' shares, and the
#                      clock's rate that converts their ticks, do not move)
#   timeout            a process that never answers: /metrics within 2 s of the socket timeout,
#                      spanprof_scrape_errors_total 1
#   hot-series         150 start-up spans, then a hot one appears: its series within three
#                      scrapes (default --max-spans 100), its whole count, the same series from
#                      then on, "(other)" never going down
#   silent             three sockets that never answer and a stopped process beside a live one:
#                      every scrape (three in turn, three at once) within 3 s with the live one
#                      in it, spanprof_sockets_silent 4; the stopped one published again once
#                      continued
#   abandoned          12 one-hour windows whose clients hang up after 1 s: 10 refused (2 from
#                      one address), the rest ended with their clients, /metrics answers (12:
#                      fewer than serve's 16 connections from one address, a bound of its own)
#   push-reply         a push target answering 50 MB: serve's stdout stays its one line
#   cap                300 processes end: 256 kept, 44 forgotten
#   listen-all         --listen 0.0.0.0:0: served, with one warning line
#   planted            (root) a link planted in DIR to a socket of a process running as nobody,
#                      and such a socket moved in: neither asked nor published, one line each;
#                      a directory others can write to refused with exit 1
# Each test starts its own serve on a free loopback port.
#
# Environment: TOOL (the spanprof command), RESPONDER (testsuite/live/responder.c, built), CURL,
# PROMTOOL, GO, PYTHON (each empty: the tests that need it are skipped).  ONLY, REGEN: lib.sh.
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"

make_work_dir
mkdir -p "$work/home" "$work/tmp"
export HOME="$work/home" GOCACHE="$work/home/cache" GOPATH="$work/home/go" GOENV=off \
       GOPROXY=off GOFLAGS= GOTOOLCHAIN=local GOTELEMETRY=off PPROF_TMPDIR="$work/tmp" \
       PPROF_BINARY_PATH="$work/none"
if [ -z "${CURL:-}" ]; then
    skip "live: curl not found (install the Debian package curl and re-run ./configure)"
    finish
fi

pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    for p in $pids; do wait "$p" 2>/dev/null; done
    pids=""
}
trap 'cleanup; rm -rf "$work"' EXIT

# wait_for SECONDS COMMAND...: true as soon as COMMAND succeeds (tried every 0.1 s), false after
# SECONDS.
wait_for() {
    lib_deadline=$(($(date +%s) + $1))
    shift
    while ! "$@" 2>/dev/null; do
        [ "$(date +%s)" -ge "$lib_deadline" ] && return 1
        sleep 0.1
    done
}

# frame JSON PPROF OUT: the snapshot of live/protocol.h around a JSON profile and a pprof file.
frame() {
    { printf 'spanprof-live 1\njson %d\n' "$(wc -c <"$1")"; cat "$1"
      printf '\npprof %d\n' "$(wc -c <"$2")"; cat "$2"; printf '\nend\n'; } >"$3.tmp"
    mv "$3.tmp" "$3"
}

# The stand-in processes' stacks: a server at two moments (a, then b: handle +2,500, idle new)
# and a worker, as folded lines made into pprof by the tool.
printf 'main;handle 1000\nmain;handle;parse 500\n' >"$work/server-a.folded"
printf 'main;handle 3500\nmain;handle;parse 500\nmain;idle 700\n' >"$work/server-b.folded"
printf 'main;job 7000000\n' >"$work/worker.folded"
for f in server-a server-b worker; do
    "$TOOL" convert -o "$work/$f.pb.gz" "$work/$f.folded" >/dev/null || exit 2
done
frame "$here/server.json" "$work/server-a.pb.gz" "$work/server-a.snap"
frame "$here/worker.json" "$work/worker.pb.gz" "$work/worker.snap"

# respond DIR PID SNAPFILE: a stand-in process PID answering on DIR/PID.sock.
respond() {
    "$RESPONDER" "$1/$2.sock" "$3" "$1/$2.log" &
    pids="$pids $!"
    wait_for 10 test -S "$1/$2.sock"
}

# serve DIR ARGS...: starts spanprof serve on a free loopback port; sets $port and $serve_pid.
serve() {
    lib_dir=$1
    shift
    "$TOOL" serve --listen 127.0.0.1:0 "$@" "$lib_dir" >"$lib_dir.out" 2>"$lib_dir.err" &
    serve_pid=$!
    pids="$pids $serve_pid"
    wait_for 20 grep -q 'http://' "$lib_dir.out" || { echo "  serve did not start:"; cat "$lib_dir.err"; return 1; }
    port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$lib_dir.out")
}

get() {
    "$CURL" -sS --max-time 30 "http://127.0.0.1:$port$1"
}

# status PATH [CURL-OPTIONS]: the HTTP status code, a space, the body's first line.
status() {
    lib_path=$1
    shift
    "$CURL" -sS --max-time 30 -o "$work/body" -w '%{http_code}' "$@" "http://127.0.0.1:$port$lib_path"
    printf ' %s\n' "$(head -n 1 "$work/body")"
}

# pprof_raw FILE: `go tool pprof -raw`'s samples of FILE, one "VALUES: FRAMES [LABELS]" a line,
# sorted, with frame ids replaced by names.
pprof_raw() {
    "$GO" tool pprof -symbolize=none -raw "$1" 2>/dev/null | awk '
        /^Samples:/ { s = 1; next } /^Locations/ { s = 0; l = 1; next } /^Mappings/ { l = 0 }
        s && /^ *[0-9]/ { n++; line[n] = $0; next }
        s && /^ *[a-z]+:\[/ { lab[n] = lab[n] " " $1; next }
        l && /^ *[0-9]+:/ { sub(":", "", $1); name[$1] = $4 }
        END { for (i = 1; i <= n; i++) { split(line[i], a, ":"); m = split(a[2], ids, " ");
              st = ""; for (j = m; j >= 1; j--) st = st (st ? ";" : "") name[ids[j]];
              gsub(/^ +| +$/, "", a[1]); gsub(/ +/, " ", a[1]); print a[1] ": " st lab[i] } }' | sort
}

if selected metrics || selected monotonic; then
    d="$work/metrics"
    mkdir -p "$d"
    cp "$work/server-a.snap" "$d/s.snap"
    respond "$d" 4242 "$d/s.snap" && respond "$d" 5151 "$work/worker.snap" && serve "$d" --max-spans 3
    get /metrics >"$work/metrics.txt"
    if selected metrics; then
        compare_expected metrics "/metrics of server.json and worker.json" "$work/metrics.txt"
        asked=$(sort -u "$d/4242.log" "$d/5151.log" | tr '\n' ' ')
        if [ "$asked" = "answered spans " ]; then
            pass "metrics [the processes asked for their spans only]"
        else
            fail "metrics [the processes asked for their spans only]"
            echo "  | their logs: $asked"
        fi
        if [ -n "${PROMTOOL:-}" ]; then
            "$PROMTOOL" check metrics <"$work/metrics.txt" >"$work/promtool.out" 2>&1
            st=$?
            result $st "metrics [promtool check metrics]"
            [ $st -eq 0 ] || sed 's/^/  | /' "$work/promtool.out"
        else
            skip "metrics [promtool check metrics]: promtool not found (Debian package prometheus)"
        fi
    fi
    if selected monotonic; then
        # sampled estimates: calls went down (990), times went up; and a bucket's bound written
        # one more (2125001: the same bucket, which must not count twice)
        sed -e 's/"calls": 1000, "total_ns": 2500000000/"calls": 990, "total_ns": 2600000000/' \
            -e 's/\[2125000, 500\]/[2125001, 500]/' "$here/server.json" >"$work/server-wobble.json"
        frame "$work/server-wobble.json" "$work/server-a.pb.gz" "$d/s.snap"
        sleep 0.6   # an answer is reused for half a second
        get /metrics >"$work/metrics2.txt"
        got=$(grep -E '^spanprof_span_(calls|seconds)_total\{pid="4242",exe="server",span="handle"\}|^spanprof_span_duration_seconds_count\{pid="4242",exe="server",span="handle"\}' "$work/metrics2.txt")
        want='spanprof_span_calls_total{pid="4242",exe="server",span="handle"} 1000
spanprof_span_seconds_total{pid="4242",exe="server",span="handle"} 2.600000000
spanprof_span_duration_seconds_count{pid="4242",exe="server",span="handle"} 1000'
        if [ "$got" = "$want" ]; then pass "monotonic [calls kept at 1000, total 2.6 s, histogram count 1000]"
        else fail "monotonic: got"; echo "$got" | sed 's/^/  | /'; fi
        # the process execs: a new image (another start), its counters from 0, its series alone
        sed -e 's/"start_unix_ns": 1700000000123456789/"start_unix_ns": 1700000009000000000/' \
            -e 's/"calls": 1000, "total_ns": 2500000000/"calls": 5, "total_ns": 2000/' \
            "$here/server.json" >"$work/server-exec.json"
        frame "$work/server-exec.json" "$work/server-a.pb.gz" "$d/s.snap"
        sleep 0.6
        get /metrics >"$work/metrics3.txt"
        got=$(grep -E '^spanprof_span_calls_total\{pid="4242",exe="server",span="handle"\}|^spanprof_process_start_time_seconds\{pid="4242"' "$work/metrics3.txt")
        want='spanprof_process_start_time_seconds{pid="4242",exe="server"} 1700000009.000000000
spanprof_span_calls_total{pid="4242",exe="server",span="handle"} 5'
        if [ "$got" = "$want" ]; then pass "monotonic [an exec'd image: its own series, calls 5, no duplicates]"
        else fail "monotonic: after exec, got"; echo "$got" | sed 's/^/  | /'; fi
        if [ -n "${PROMTOOL:-}" ]; then
            "$PROMTOOL" check metrics <"$work/metrics3.txt" >"$work/promtool3.out" 2>&1
            result $? "monotonic [promtool check metrics after the exec]"
        fi
    fi
    cleanup
fi

if selected final; then
    d="$work/final"
    mkdir -p "$d"
    serve "$d"
    cp "$work/worker.snap" "$d/5151.123456.final"
    if wait_for 10 test ! -e "$d/5151.123456.final"; then
        get /metrics >"$work/final.txt"
        got=$(grep -E '^spanprof_(processes|processes_ended_total) |^spanprof_span_calls_total' "$work/final.txt")
        want='spanprof_processes 0
spanprof_processes_ended_total 1
spanprof_span_calls_total{pid="5151",exe="worker",span="job"} 7'
        if [ "$got" = "$want" ]; then pass "final [read once, unlinked, the process ended with 7 calls]"
        else fail "final: got"; echo "$got" | sed 's/^/  | /'; fi
    else
        fail "final: 5151.123456.final was not unlinked within 10 s"
    fi
    cleanup
fi

if [ -z "${GO:-}" ]; then
    skip "profile-window profile-cumulative push: go not found (Debian package golang-go)"
else
    if selected profile-window || selected profile-cumulative || selected profile-final; then
        d="$work/profile"
        mkdir -p "$d"
        cp "$work/server-a.snap" "$d/s.snap"
        respond "$d" 4242 "$d/s.snap" && respond "$d" 5151 "$work/worker.snap" && serve "$d"
        if selected profile-window; then
            : >"$d/4242.log"
            get '/debug/pprof/profile?seconds=2' >"$work/window.pb.gz" &
            fetch=$!
            # the window's first snapshot taken: the process moves on to server-b
            wait_for 10 grep -q answered "$d/4242.log"
            frame "$here/server.json" "$work/server-b.pb.gz" "$d/s.snap"
            wait $fetch
            got=$(pprof_raw "$work/window.pb.gz")
            # server-b less server-a: handle 3500-1000, parse 500-500 (left out), idle new; worker
            # did nothing
            want='2500: main;handle pid:[4242]
700: main;idle pid:[4242]'
            if [ "$got" = "$want" ]; then pass "profile-window [handle 2500, idle 700, nothing else]"
            else fail "profile-window: got"; echo "$got" | sed 's/^/  | /'; fi
            dur=$("$GO" tool pprof -symbolize=none -raw "$work/window.pb.gz" 2>/dev/null | sed -n 's/^Duration: //p')
            case $dur in 2.[0-9]*) pass "profile-window [duration $dur: the window]" ;;
                         *) fail "profile-window: duration '$dur', not the 2 s window" ;; esac
        fi
        if selected profile-final; then
            # the process ends during the window: its socket goes, its final snapshot (server-b)
            # comes; the window counts up to it
            d2="$work/profile-final"
            mkdir -p "$d2"
            cp "$work/server-a.snap" "$d2/s.snap"
            "$RESPONDER" "$d2/4242.sock" "$d2/s.snap" "$d2/4242.log" &
            ender=$!
            wait_for 10 test -S "$d2/4242.sock"
            port_before=$port
            serve "$d2"
            get '/debug/pprof/profile?seconds=2' >"$work/final-window.pb.gz" &
            fetch=$!
            wait_for 10 grep -q answered "$d2/4242.log"
            kill $ender
            wait $ender 2>/dev/null
            rm -f "$d2/4242.sock"
            frame "$here/server.json" "$work/server-b.pb.gz" "$d2/.4242.77.tmp"
            mv "$d2/.4242.77.tmp" "$d2/4242.77.final"
            wait $fetch
            got=$(pprof_raw "$work/final-window.pb.gz")
            want='2500: main;handle pid:[4242]
700: main;idle pid:[4242]'
            if [ "$got" = "$want" ]; then pass "profile-final [a process ended in the window: counted up to its final snapshot]"
            else fail "profile-final: got"; echo "$got" | sed 's/^/  | /'; fi
            port=$port_before
        fi
        if selected profile-cumulative; then
            get '/debug/pprof/profile' >"$work/cumul.pb.gz"
            got=$(pprof_raw "$work/cumul.pb.gz")
            s=$(cmp -s "$d/s.snap" "$work/server-a.snap" && echo a || echo b)
            if [ "$s" = a ]; then h=1000; else h=3500; fi
            want=$(printf '%s\n' "$h: main;handle pid:[4242]" "500: main;handle;parse pid:[4242]" \
                   "7000000: main;job pid:[5151]" $( [ "$s" = b ] && echo "700:_main;idle_pid:[4242]") |
                   tr _ ' ' | sort)
            if [ "$got" = "$want" ]; then pass "profile-cumulative [both processes whole]"
            else fail "profile-cumulative: got"; echo "$got" | sed 's/^/  | /'; fi
            get '/debug/pprof/profile?pid=5151' >"$work/one.pb.gz"
            got=$(pprof_raw "$work/one.pb.gz")
            if [ "$got" = "7000000: main;job pid:[5151]" ]; then pass "profile-cumulative [?pid=5151: that process only]"
            else fail "profile-cumulative ?pid=5151: got"; echo "$got" | sed 's/^/  | /'; fi
        fi
        cleanup
    fi

    if selected push; then
        if [ -z "${PYTHON:-}" ]; then
            skip "push: python3 not found"
        else
            d="$work/push"
            mkdir -p "$d" "$work/bodies"
            "$PYTHON" "$here/receiver.py" 0 "$work/push.log" "$work/bodies" >"$work/receiver.port" &
            pids="$pids $!"
            wait_for 10 test -s "$work/receiver.port"
            rport=$(cat "$work/receiver.port")
            cp "$work/server-a.snap" "$d/s.snap"
            respond "$d" 4242 "$d/s.snap"
            serve "$d" --push "http://127.0.0.1:$rport/" --interval 1 --service app
            wait_for 20 test -s "$work/push.log"
            first=$(head -n 1 "$work/push.log")
            frame "$here/server.json" "$work/server-b.pb.gz" "$d/s.snap"
            wait_for 20 test "$(wc -l <"$work/push.log")" -ge 2
            second=$(sed -n 2p "$work/push.log")
            pattern='^/ingest\?name=app%7Bpid%3D4242%2Cexe%3Dserver%7D&from=[0-9]{10}&until=[0-9]{10}&format=pprof$'
            if echo "$first" | grep -Eq "$pattern" && echo "$second" | grep -Eq "$pattern"; then
                pass "push [query: name=app{pid=4242,exe=server}, from, until, format=pprof]"
            else
                fail "push: the query strings"; printf '  | %s\n' "$first" "$second"
            fi
            from2=$(echo "$second" | sed 's/.*from=\([0-9]*\).*/\1/')
            until1=$(echo "$first" | sed 's/.*until=\([0-9]*\).*/\1/')
            until2=$(echo "$second" | sed 's/.*until=\([0-9]*\).*/\1/')
            if [ "$from2" = "$until1" ] && [ "$until2" -ge "$from2" ]; then
                pass "push [the second interval starts where the first ended: $from2]"
            else fail "push: from $from2 after until $until1 (until $until2)"; fi
            got1=$(pprof_raw "$work/bodies/body.1")
            got2=$(pprof_raw "$work/bodies/body.2")
            want1='1000: main;handle pid:[4242]
500: main;handle;parse pid:[4242]'
            want2='2500: main;handle pid:[4242]
700: main;idle pid:[4242]'
            if [ "$got1" = "$want1" ] && [ "$got2" = "$want2" ]; then
                pass "push [bodies: the whole profile, then the interval's difference]"
            else
                fail "push: bodies"; printf '%s\n--\n%s\n' "$got1" "$got2" | sed 's/^/  | /'
            fi
            cleanup
        fi
    fi
fi

if selected hostile; then
    d="$work/hostile"
    mkdir -p "$d"
    respond "$d" 5151 "$work/worker.snap" && serve "$d"
    got=$( {
        status '/debug/pprof/profile?seconds=0'
        status '/debug/pprof/profile?seconds=abc'
        status '/debug/pprof/profile?seconds=3601'
        status '/debug/pprof/profile?seconds=-1'
        status '/debug/pprof/profile?seconds=1e3'
        status '/debug/pprof/profile?pid=x'
        status '/nope'
        status '/metrics/../etc/passwd' --path-as-is
        status '/metrics' -X POST -d 'x=1'
      } )
    want='400 seconds must be a whole number from 1 to 3600
400 seconds must be a whole number from 1 to 3600
400 seconds must be a whole number from 1 to 3600
400 seconds must be a whole number from 1 to 3600
400 seconds must be a whole number from 1 to 3600
400 pid must be a process id (a whole number > 0)
404 no such page: try /metrics or /debug/pprof/profile
404 no such page: try /metrics or /debug/pprof/profile
405 only GET and HEAD'
    if [ "$got" = "$want" ]; then pass "hostile [bad parameters 400, paths 404, POST 405]"
    else fail "hostile: got"; echo "$got" | sed 's/^/  | /'; fi
    long=$(head -c 20000 /dev/zero | tr '\0' a)
    code=$("$CURL" -sS --max-time 30 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/metrics?x=$long")
    case $code in 4??) pass "hostile [a 20 KB query: $code]" ;; *) fail "hostile: a 20 KB query got '$code'" ;; esac
    # 60 connections at once, each sending half a request and stalling
    i=0
    stalled=""
    while [ $i -lt 60 ]; do
        (printf 'GET /metrics HTTP/1.1\r\nHost: x\r\n'; sleep 3) | "$CURL" -s --max-time 5 "telnet://127.0.0.1:$port" >/dev/null 2>&1 &
        stalled="$stalled $!"
        i=$((i + 1))
    done
    sleep 1
    wait_for 30 sh -c "\"$CURL\" -s --max-time 5 http://127.0.0.1:$port/metrics | grep -q '^spanprof_processes 1'"
    result $? "hostile [60 stalled connections: /metrics answers again]"
    for p in $stalled; do wait "$p"; done
    if [ -n "${PYTHON:-}" ]; then
        fuzzed=$("$PYTHON" "$here/httpfuzz.py" "$port" 2000)
        case $fuzzed in
        *" 0 hung") pass "hostile [$fuzzed]" ;;
        *) fail "hostile: $fuzzed" ;;
        esac
    fi
    if kill -0 "$serve_pid" 2>/dev/null; then pass "hostile [serve still running]"; else fail "hostile: serve ended"; fi
    cleanup
fi

if selected record-serve; then
    rport=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    (cd "$work" && "$TOOL" record -o run --serve "127.0.0.1:$rport" -- sh -c '
        echo "live=$SPANPROF_LIVE"
        i=0
        while [ $i -lt 100 ]; do
            "$0" -s "http://127.0.0.1:$1/metrics" >metrics.txt && break
            sleep 0.1; i=$((i + 1))
        done
        grep "^spanprof_processes " metrics.txt' "$CURL" "$rport" >"$work/record.out" 2>"$work/record.err")
    got="$(cat "$work/record.out"); $( [ -e "$work/run/live" ] && echo "run/live left" || echo "run/live removed")"
    want="live=$work/run/live
spanprof_processes 0; run/live removed"
    if [ "$got" = "$want" ]; then pass "record-serve [SPANPROF_LIVE=run/live, /metrics while CMD runs, run/live removed]"
    else fail "record-serve: got"; echo "$got" | sed 's/^/  | /'; sed 's/^/  ! /' "$work/record.err"; fi
fi

# ---- with the real runtime ----
runtime_tests="runtime-window runtime-prometheus runtime-prefork runtime-hot-series runtime-idle-connections runtime-snapshot-rate runtime-idle-window
               runtime-slow-reader"
want_runtime=0
for t in $runtime_tests; do selected "$t" && want_runtime=1; done
if [ $want_runtime = 1 ]; then
    need_plugin
    rt="$work/rt"
    mkdir -p "$rt/probe"
    cp "$here/phases.c" "$rt/phases.c"
    if ! build "runtime" "$rt/build.log" $CC -O1 -fplugin="$PLUGIN" -fplugin-arg-spanplugin-all \
            -I"$INCLUDE_DIR" "$rt/phases.c" -o "$rt/phases" -L"$LIBDIR" -Wl,--no-as-needed -lspanprof \
            -Wl,-rpath,"$LIBDIR" -pthread; then
        :
    else
        # does the runtime answer SPANPROF_LIVE?
        (cd "$rt" && SPANPROF_LIVE="$rt/probe" exec "$rt/phases" 3 0 "$rt/probe.mark" >/dev/null 2>&1) &
        probe=$!
        if wait_for 5 sh -c "ls '$rt/probe' | grep -q '\.sock\$'"; then has_live=1; else has_live=0; fi
        wait $probe
        if [ $has_live = 0 ]; then
            for t in $runtime_tests; do selected "$t" && skip "$t: the runtime does not answer SPANPROF_LIVE"; done
        fi
    fi
fi
if [ $want_runtime = 1 ] && [ "${has_live:-0}" = 1 ] && { selected runtime-window || selected runtime-prometheus; }; then
    d="$rt/live"
    mkdir -p "$d"
    serve "$d"
    if selected runtime-prometheus && [ -n "${PROMETHEUS:-}" ]; then
        pport=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        printf 'global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: spanprof\n    static_configs:\n      - targets: ["127.0.0.1:%s"]\n' "$port" >"$rt/prometheus.yml"
        "$PROMETHEUS" --config.file="$rt/prometheus.yml" --storage.tsdb.path="$rt/tsdb" \
            --web.listen-address="127.0.0.1:$pport" >"$rt/prometheus.log" 2>&1 &
        pids="$pids $!"
        wait_for 60 "$CURL" -sf "http://127.0.0.1:$pport/-/ready" >/dev/null || echo "  prometheus is not ready after 60 s"
    fi
    (cd "$rt" && SPANPROF_LIVE="$d" SPANPROF_HISTOGRAM=1 exec "$rt/phases" 4 20 "$rt/mark" >"$rt/phases.out" 2>"$rt/phases.err") &
    prog=$!
    wait_for 60 grep -q 'phase B' "$rt/mark"
    sleep 1
    if selected runtime-window; then
        (cd "$rt" && "$GO" tool pprof -symbolize=none -raw -seconds 3 \
            "http://127.0.0.1:$port/debug/pprof/profile" >"$rt/window.raw" 2>"$rt/window.err")
    fi
    if selected runtime-window; then
        get /metrics >"$rt/real.metrics"
        if [ -n "${PROMTOOL:-}" ]; then
            "$PROMTOOL" check metrics <"$rt/real.metrics" >"$rt/promtool.out" 2>&1
            st=$?
            result $st "runtime-window [promtool check metrics of the real runtime's /metrics]"
            [ $st -eq 0 ] || sed 's/^/  | /' "$rt/promtool.out"
        fi
        calls=$(sed -n 's/^spanprof_span_calls_total{.*span="phase_b"} //p' "$rt/real.metrics")
        count=$(sed -n 's/^spanprof_span_duration_seconds_count{.*span="phase_b"} //p' "$rt/real.metrics")
        le1ms=$(sed -n 's/^spanprof_span_duration_seconds_bucket{.*span="phase_b",le="0.001"} //p' "$rt/real.metrics")
        # every activation in the histogram but the one running as the snapshot was taken, through
        # several scrapes (a runtime bucket's bound has been seen written two ways in turn: kept
        # bucket by bucket, it counted twice), and the 200 µs spins mostly under 1 ms
        if [ -n "$calls" ] && [ -n "$count" ] && [ "$count" -le "$calls" ] && [ "$count" -ge $((calls - 1)) ] &&
           [ "$calls" -gt 0 ] && [ "${le1ms:-0}" -ge $((count * 9 / 10)) ]; then
            pass "runtime-window [phase_b's histogram: $count of $calls calls, $le1ms under 1 ms]"
        else
            fail "runtime-window: phase_b's histogram: count '$count', calls '$calls', under 1 ms '$le1ms'"
        fi
    fi
    if selected runtime-prometheus && [ -n "${PROMETHEUS:-}" ]; then
        # 8 s of phase B scraped, the 5 s range inside it
        sleep 8
        "$CURL" -s "http://127.0.0.1:$pport/api/v1/query" \
            --data-urlencode 'query=rate(spanprof_span_calls_total{span="phase_b"}[5s])' >"$rt/query.json"
    fi
    wait $prog
    tenths=$(sed -n 's/^b_tenths //p' "$rt/phases.out")
    if selected runtime-window; then
        # -raw's samples: "CALLS WALL...: IDS" with the ids of the locations, leaf first
        b_id=$(sed -n 's/^ *\([0-9]*\): .* phase_b .*/\1/p' "$rt/window.raw" | head -n 1)
        a_id=$(sed -n 's/^ *\([0-9]*\): .* phase_a .*/\1/p' "$rt/window.raw" | head -n 1)
        b_calls=$(awk -v id="$b_id" '/^Samples:/ {s=1; next} /^Locations/ {s=0} s && /:/ { split($0, a, ":"); split(a[2], ids, " "); if (ids[1] == id) { split(a[1], v, " "); n += v[1] } } END { print n + 0 }' "$rt/window.raw")
        a_calls=$(awk -v id="${a_id:-none}" '/^Samples:/ {s=1; next} /^Locations/ {s=0} s && /:/ { split($0, a, ":"); split(a[2], ids, " "); if (ids[1] == id) { split(a[1], v, " "); n += v[1] } } END { print n + 0 }' "$rt/window.raw")
        dur=$(sed -n 's/^Duration: \([0-9.]*\).*/\1/p' "$rt/window.raw")
        range=$(echo "$tenths" | awk -v d="${dur:-0}" -f "$here/window_range.awk")
        verdict=$(echo "$range" | awk -v b="$b_calls" -v a="$a_calls" -v d="${dur:-0}" '{
            lo = $1; hi = $2; ok = a == 0 && lo > 0 && b >= 0.9 * lo && b <= 1.1 * hi
            printf("%s phase_b %d calls in %.2f s, the program counted %d to %d in windows that long; phase_a %d calls", (ok ? "ok" : "bad"), b, d, lo, hi, a) }')
        case $verdict in ok*) pass "runtime-window [${verdict#ok }]" ;;
            *) fail "runtime-window: ${verdict#bad }"; sed 's/^/  | /' "$rt/window.err" "$rt/window.raw" | head -40 ;; esac
    fi
    if selected runtime-prometheus; then
        if [ -z "${PROMETHEUS:-}" ]; then
            skip "runtime-prometheus: prometheus not found (Debian package prometheus)"
        else
            prate=$("$PYTHON" -c 'import json, sys; r = json.load(open(sys.argv[1]))["data"]["result"]; print(sum(float(x["value"][1]) for x in r) if r else 0)' "$rt/query.json" 2>/dev/null)
            range=$(echo "$tenths" | awk -v d=5 -f "$here/window_range.awk")
            verdict=$(echo "$range" | awk -v p="${prate:-0}" -v d=5 '{
                lo = $1; hi = $2; ok = lo > 0 && p >= 0.75 * lo / d && p <= 1.25 * hi / d
                printf("%s rate() %.1f/s, the program'"'"'s own %.1f/s to %.1f/s over 5 s", (ok ? "ok" : "bad"), p, lo / d, hi / d) }')
            case $verdict in ok*) pass "runtime-prometheus [${verdict#ok }]" ;;
                *) fail "runtime-prometheus: ${verdict#bad }"; sed 's/^/  | /' "$rt/query.json"; echo ;; esac
        fi
    fi
    cleanup
fi
if [ $want_runtime = 1 ] && [ "${has_live:-0}" = 1 ] && selected runtime-hot-series; then
    # a server-like program scraped from its start by serve with default options and a real
    # prometheus: 150 start-up spans, 3 s idle, then requests; handle_request's rate is
    # queryable 5 s into the load, and within 10% of the program's own rate
    if [ -z "${PROMETHEUS:-}" ]; then
        skip "runtime-hot-series: prometheus not found (Debian package prometheus)"
    elif build "runtime-hot-series" "$rt/startup.log" $CC -O1 -fplugin="$PLUGIN" -fplugin-arg-spanplugin-all \
            -I"$INCLUDE_DIR" "$here/startup.c" -o "$rt/startup" -L"$LIBDIR" -Wl,--no-as-needed -lspanprof \
            -Wl,-rpath,"$LIBDIR"; then
        d="$rt/hot"
        mkdir -p "$d"
        serve "$d"
        pport=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        printf 'global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: spanprof\n    static_configs:\n      - targets: ["127.0.0.1:%s"]\n' "$port" >"$rt/hot.yml"
        "$PROMETHEUS" --config.file="$rt/hot.yml" --storage.tsdb.path="$rt/hot-tsdb" \
            --web.listen-address="127.0.0.1:$pport" >"$rt/hot-prometheus.log" 2>&1 &
        pids="$pids $!"
        wait_for 60 "$CURL" -sf "http://127.0.0.1:$pport/-/ready" >/dev/null || echo "  prometheus is not ready after 60 s"
        (cd "$rt" && SPANPROF_LIVE="$d" exec "$rt/startup" 3 14 "$rt/load.mark" >"$rt/startup.out" 2>"$rt/startup.err") &
        prog=$!
        # a scrape while it idles after its start-up, as any scrape from its start has one
        wait_for 60 grep -q idle "$rt/load.mark"
        get /metrics >"$rt/idle.metrics"
        wait_for 60 grep -q load "$rt/load.mark"
        sleep 5
        query='rate(spanprof_span_calls_total{span="handle_request"}[5s])'
        "$CURL" -s "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$query" >"$rt/hot-5s.json"
        sleep 6
        "$CURL" -s "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$query" >"$rt/hot-11s.json"
        get /metrics >"$rt/hot.metrics"
        wait $prog
        rate=$(sed -n 's/^request_rate //p' "$rt/startup.out")
        value() { "$PYTHON" -c 'import json, sys; r = json.load(open(sys.argv[1]))["data"]["result"]; print(sum(float(x["value"][1]) for x in r) if r else "none")' "$1" 2>/dev/null; }
        at5=$(value "$rt/hot-5s.json")
        at11=$(value "$rt/hot-11s.json")
        startups=$(grep -c '^spanprof_span_calls_total{.*span="startup_' "$rt/hot.metrics")
        verdict=$(awk -v p="$at11" -v r="${rate:-0}" -v q="$at5" 'BEGIN { ok = q != "none" && r > 0 && p >= 0.9 * r && p <= 1.1 * r
            dev = r > 0 ? 100 * (p - r) / r : 0
            printf("%s 5 s into the load: %s/s; then %.1f/s against the program'"'"'s own %.1f/s (%+.1f%%)", (ok ? "ok" : "bad"), q, p, r, dev) }')
        case $verdict in ok*) pass "runtime-hot-series [${verdict#ok }; $startups start-up spans kept a series]" ;;
            *) fail "runtime-hot-series: ${verdict#bad }"; grep -c '^spanprof_span_calls_total' "$rt/hot.metrics" | sed 's/^/  | series: /' ;; esac
    fi
    cleanup
fi
if [ $want_runtime = 1 ] && [ "${has_live:-0}" = 1 ] &&
   { selected runtime-idle-connections || selected runtime-snapshot-rate; }; then
    # the real runtime's socket: 20 connections of its own user that say nothing do not hold up
    # a request; 200 requests in a loop make at most ten snapshots a second
    d="$rt/idle"
    mkdir -p "$d"
    (cd "$rt" && SPANPROF_LIVE="$d" exec "$rt/phases" 0 8 "$rt/idle.mark" >/dev/null 2>&1) &
    prog=$!
    pids="$pids $prog"
    wait_for 30 sh -c "ls '$d' | grep -q '\.sock\$'"
    sock="$d/$(ls "$d" | grep '\.sock$' | head -n 1)"
    "$PYTHON" - "$sock" >"$rt/idle.out" 2>&1 <<'PY'
import re, socket, sys, time
path = sys.argv[1]
def ask(request):
    c = socket.socket(socket.AF_UNIX)
    c.connect(path)
    c.sendall(request)
    data = b""
    while True:
        b = c.recv(65536)
        if not b:
            return data
        data += b
idle = []
for i in range(20):
    c = socket.socket(socket.AF_UNIX)
    c.connect(path)
    idle.append(c)
t0 = time.monotonic()
first = ask(b"spans\n").split(b"\n", 1)[0].decode(errors="replace")
print("idle-connections %.2f %s" % (time.monotonic() - t0, first))
for c in idle:
    c.close()
seqs = []
t0 = time.monotonic()
while time.monotonic() - t0 < 1.5:
    m = re.search(rb'"live_seq": *([0-9]+)', ask(b"spans\n"))
    seqs.append(int(m.group(1)) if m else -1)
fresh = all(b > a for a, b in zip(seqs, seqs[1:]))
print("snapshot-rate %.2f %d %d %d" % (time.monotonic() - t0, len(seqs), seqs[-1] - seqs[0] + 1, fresh))
answers = 0
t0 = time.monotonic()
while time.monotonic() - t0 < 1:
    answers += ask(b"nonsense\n").startswith(b"error ")
print("answer-rate %.2f %d" % (time.monotonic() - t0, answers))
PY
    if selected runtime-idle-connections; then
        got=$(sed -n 's/^idle-connections //p' "$rt/idle.out")
        verdict=$(echo "$got" | awk '{ ok = $1 <= 1.0 && $2 == "spanprof-live" && $3 == 1; print (ok ? "ok" : "bad") }')
        if [ "$verdict" = ok ]; then pass "runtime-idle-connections [20 silent connections: a request answered in ${got%% *} s]"
        else fail "runtime-idle-connections: '$got'"; sed 's/^/  | /' "$rt/idle.out"; fi
    fi
    if selected runtime-snapshot-rate; then
        got=$(sed -n 's/^snapshot-rate //p' "$rt/idle.out")
        verdict=$(echo "$got" | awk '{ ok = $2 >= 5 && $3 <= $1 * 10 + 2 && $4 == 1; printf("%s %d snapshots, each taken after its request, for %d requests in a loop over %.2f s", (ok ? "ok" : "bad"), $3, $2, $1) }')
        case $verdict in ok*) pass "runtime-snapshot-rate [${verdict#ok }]" ;;
            *) fail "runtime-snapshot-rate: ${verdict#bad }"; sed 's/^/  | /' "$rt/idle.out" ;; esac
        got=$(sed -n 's/^answer-rate //p' "$rt/idle.out")
        verdict=$(echo "$got" | awk '{ ok = $2 >= 20 && $2 <= $1 * 200 + 2; printf("%s %d answers in %.2f s of bad requests in a loop", (ok ? "ok" : "bad"), $2, $1) }')
        case $verdict in ok*) pass "runtime-snapshot-rate [${verdict#ok }]" ;;
            *) fail "runtime-snapshot-rate: ${verdict#bad }, not at most 200 a second"; sed 's/^/  | /' "$rt/idle.out" ;; esac
    fi
    kill "$prog" 2>/dev/null
    cleanup
fi
if [ $want_runtime = 1 ] && [ "${has_live:-0}" = 1 ] && selected runtime-slow-reader; then
    # a program whose snapshot (1,500 spans, about 350 KB) outgrows the socket's buffer; two
    # clients connect, the first asks for the snapshot and reads nothing, holding the live
    # thread in its send; the second sends "spans" meanwhile, within its second: its line came in
    # time, so it is answered once the send gives up (5 s in all, however the client reads:
    # within 8 s), not told that its request never came
    awk 'BEGIN { print "/* 1,500 spans, each called once, then waits to be killed */"
        print "#include <unistd.h>\nstatic volatile unsigned long sink;"
        for (i = 0; i < 1500; i++)
            printf("__attribute__((noinline)) void a_span_with_a_rather_long_name_%d(void) { for (int i = 0; i < 3; i++) sink++; }\n", i)
        print "int main(void)\n{"
        for (i = 0; i < 1500; i++) printf("    a_span_with_a_rather_long_name_%d();\n", i)
        print "    for (;;)\n        pause();\n}" }' >"$rt/many.c"
    if build "runtime-slow-reader" "$rt/many.log" $CC -O1 -fplugin="$PLUGIN" -fplugin-arg-spanplugin-all \
            -I"$INCLUDE_DIR" "$rt/many.c" -o "$rt/many" -L"$LIBDIR" -Wl,--no-as-needed -lspanprof \
            -Wl,-rpath,"$LIBDIR"; then
        d="$rt/slow"
        mkdir -p "$d"
        (cd "$rt" && SPANPROF_LIVE="$d" exec "$rt/many" >/dev/null 2>&1) &
        prog=$!
        pids="$pids $prog"
        wait_for 30 test -S "$d/$prog.sock"
        got=$("$PYTHON" - "$d/$prog.sock" <<'PY'
import socket, sys, time
path = sys.argv[1]
slow = socket.socket(socket.AF_UNIX)
slow.connect(path)
time.sleep(0.1)
asker = socket.socket(socket.AF_UNIX)
asker.settimeout(20)
asker.connect(path)  # taken in by the live thread, after the slow client
time.sleep(0.1)
slow.sendall(b"snapshot\n")  # and reads nothing
time.sleep(0.3)
asker.sendall(b"spans\n")  # within its second
t0 = time.monotonic()
data = b""
try:
    while True:
        b = asker.recv(65536)
        if not b:
            break
        data += b
except OSError as e:
    data += b"(" + str(e).encode() + b")"
print("%.1f %s" % (time.monotonic() - t0, data.split(b"\n", 1)[0].decode(errors="replace")))
slow.close()
PY
)
        case $got in
            [0-7].*" spanprof-live 1") pass "runtime-slow-reader [a request made while another client read nothing: answered after ${got%% *} s]" ;;
            *) fail "runtime-slow-reader: the request made while another client read nothing got '$got'" ;;
        esac
        kill "$prog" 2>/dev/null
        cleanup
    fi
fi
if [ $want_runtime = 1 ] && [ "${has_live:-0}" = 1 ] && selected runtime-idle-window && [ -n "${GO:-}" ]; then
    # SPANPROF=sample, a window taken as the program goes idle after 2 s of requests: nothing but
    # main (open all through it) has time in it; the requests' shares, settled before it, do not
    # move
    if build "runtime-idle-window" "$rt/startup-w.log" $CC -O1 -fplugin="$PLUGIN" -fplugin-arg-spanplugin-all \
            -I"$INCLUDE_DIR" "$here/startup.c" -o "$rt/startup-w" -L"$LIBDIR" -Wl,--no-as-needed -lspanprof \
            -Wl,-rpath,"$LIBDIR"; then
        d="$rt/idlew"
        mkdir -p "$d"
        serve "$d"
        for mode in sample 1; do
            rm -f "$rt/idlew.mark"
            (cd "$rt" && BUSY_S=2 SPANPROF=$mode SPANPROF_LIVE="$d" exec "$rt/startup-w" 4 0 "$rt/idlew.mark" >/dev/null 2>&1) &
            prog=$!
            wait_for 60 grep -q idle "$rt/idlew.mark"
            get '/debug/pprof/profile?seconds=2' >"$rt/idle-window.pb.gz"
            wait $prog
            got=$(pprof_raw "$rt/idle-window.pb.gz" | awk -F': ' '{ split($1, v, " ") } v[1] == 0 && $2 !~ /^main pid/ && (v[2] > 0 || v[3] > 0)')
            if [ -z "$got" ]; then pass "runtime-idle-window [SPANPROF=$mode: an idle window, time in main alone]"
            else fail "runtime-idle-window: SPANPROF=$mode: stacks with time and no calls:"; echo "$got" | sed 's/^/  | /'; fi
        done
    fi
    cleanup
fi
if [ $want_runtime = 1 ] && [ "${has_live:-0}" = 1 ] && selected runtime-prefork; then
    d="$rt/prefork"
    mkdir -p "$d"
    serve "$d"
    # run in the scratch folder: the workers' own profiles land there
    (cd "$rt" && WORKERS=3 SPANPROF_LIVE="$d" exec "$rt/phases" 0 0 "$rt/prefork.mark" >/dev/null 2>&1) &
    prog=$!
    pids="$pids $prog"
    wait_for 60 grep -q done "$rt/prefork.mark"
    workers=$(grep -v done "$rt/prefork.mark" | tr '\n' ' ')
    all_in() {
        get /metrics >"$rt/prefork.metrics" || return 1
        for w in $workers; do grep -q "^spanprof_span_calls_total{pid=\"$w\",.*span=\"phase_b\"}" "$rt/prefork.metrics" || return 1; done
    }
    if wait_for 60 all_in; then pass "runtime-prefork [workers $workers(one replaced) all in /metrics]"
    else fail "runtime-prefork: not every worker of $workers in /metrics:"; grep '^spanprof_span_calls_total' "$rt/prefork.metrics" | sed 's/^/  | /'; fi
    kill "$prog"
    cleanup
fi

if selected timeout; then
    d="$work/timeout"
    mkdir -p "$d"
    HANG=1 "$RESPONDER" "$d/7777.sock" "$work/worker.snap" "$d/7777.log" &
    pids="$pids $!"
    wait_for 10 test -S "$d/7777.sock"
    serve "$d"
    t0=$(date +%s)
    get /metrics >"$work/timeout.txt"
    t1=$(date +%s)
    got=$(grep '^spanprof_scrape_errors_total' "$work/timeout.txt")
    if [ "$got" = "spanprof_scrape_errors_total 1" ] && [ $((t1 - t0)) -le 4 ]; then
        pass "timeout [answered in $((t1 - t0)) s, one scrape error]"
    else fail "timeout: '$got' after $((t1 - t0)) s"; fi
    cleanup
fi

# spans SPEC...: a snapshot's JSON whose spans are SPEC's "NAME:CALLS:TOTAL_NS" (pid 4242).
spans_json() {
    "$PYTHON" - "$@" <<'PY'
import json, sys
spans = [{"name": n, "file": "s.c", "line": i + 1, "calls": int(c), "total_ns": int(t),
          "self_ns": int(t), "cpu_total_ns": int(t), "cpu_self_ns": int(t)}
         for i, (n, c, t) in enumerate(a.split(":") for a in sys.argv[1:])]
print(json.dumps({"version": 1, "pid": 4242, "program": "/opt/app/server", "exe": "/opt/app/server",
                  "start_unix_ns": 1700000000123456789, "wall_ns": 1, "spans": spans}))
PY
}

if selected hot-series && [ -n "${PYTHON:-}" ]; then
    # 150 start-up spans, then a hot span appears and grows: with the default --max-spans (100)
    # it gets its series within three scrapes, and the series stay put from then on
    d="$work/hot"
    mkdir -p "$d"
    startup=""
    i=0
    while [ $i -lt 150 ]; do startup="$startup s$i:1:$(( (i + 1) * 1000 ))"; i=$((i + 1)); done
    # shellcheck disable=SC2086 # the span list is meant to split
    spans_json $startup >"$work/hot0.json"
    frame "$work/hot0.json" "$work/server-a.pb.gz" "$d/s.snap"
    respond "$d" 4242 "$d/s.snap" && serve "$d"
    get /metrics >"$work/hot-0.txt"
    n=1
    got_at=""
    while [ $n -le 6 ]; do
        # shellcheck disable=SC2086
        spans_json $startup "processCommand:$((n * 50000)):$((n * 100000000))" >"$work/hot$n.json"
        frame "$work/hot$n.json" "$work/server-a.pb.gz" "$d/s.snap"
        sleep 0.6
        get /metrics >"$work/hot-$n.txt"
        if [ -z "$got_at" ] && grep -q '^spanprof_span_calls_total{.*span="processCommand"}' "$work/hot-$n.txt"; then
            got_at=$n
        fi
        n=$((n + 1))
    done
    series() { grep '^spanprof_span_calls_total' "$1" | sed 's/.*span="\([^"]*\)".*/\1/' | sort | tr '\n' ' '; }
    first=$(grep -c '^spanprof_span_calls_total' "$work/hot-0.txt")
    if [ -n "$got_at" ] && [ "$got_at" -le 3 ]; then
        pass "hot-series [processCommand has its series at scrape $got_at after it appeared]"
    else
        fail "hot-series: processCommand has no series after 6 scrapes (of $first series at the first)"
    fi
    calls=$(sed -n 's/^spanprof_span_calls_total{.*span="processCommand"} //p' "$work/hot-6.txt")
    if [ "$calls" = 300000 ]; then pass "hot-series [its counter: every call since the start, 300000]"
    else fail "hot-series: processCommand's counter '$calls', not 300000"; fi
    if [ -n "$got_at" ] && [ "$(series "$work/hot-$got_at.txt")" = "$(series "$work/hot-6.txt")" ] &&
       [ "$(grep -c '^spanprof_span_calls_total' "$work/hot-6.txt")" = 101 ]; then
        pass "hot-series [the same 100 spans and (other) in every scrape since]"
    else
        fail "hot-series: the series changed after processCommand got its own, or not 100 + (other)"
    fi
    # (other) never goes backwards, though a span moved out of it
    others=$(for f in 0 1 2 3 4 5 6; do sed -n 's/^spanprof_span_calls_total{.*span="(other)"} //p' "$work/hot-$f.txt"; done | tr '\n' ' ')
    if printf '%s\n' $others | sort -n -c 2>/dev/null; then pass "hot-series [(other)'s calls never go down: $others]"
    else fail "hot-series: (other)'s calls went down: $others"; fi
    cleanup
fi

if selected silent; then
    # three sockets that never answer and a process stopped with SIGSTOP beside one that
    # answers: every scrape within 3 s with the live one in it; three at once too
    d="$work/silent"
    mkdir -p "$d"
    for p in 7001 7002 7003; do
        HANG=1 "$RESPONDER" "$d/$p.sock" "$work/worker.snap" "$d/$p.log" &
        pids="$pids $!"
    done
    respond "$d" 6006 "$work/worker.snap"
    stopped=$!
    respond "$d" 5151 "$work/worker.snap"
    wait_for 10 test -S "$d/7003.sock"
    kill -STOP "$stopped"
    serve "$d"
    slow=""
    for round in 1 2 3; do
        t0=$(date +%s.%N)
        get /metrics >"$work/silent-$round.txt"
        t1=$(date +%s.%N)
        took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf("%.1f", b - a) }')
        live=$(grep -c '^spanprof_span_calls_total{pid="5151"' "$work/silent-$round.txt")
        awk -v t="$took" 'BEGIN { exit !(t <= 3) }' && [ "$live" = 1 ] || slow="$slow round $round: $took s, live $live;"
    done
    for i in 1 2 3; do get /metrics >"$work/silent-c$i.txt" & done
    t0=$(date +%s.%N)
    wait_for 10 sh -c "test -s '$work/silent-c1.txt' && test -s '$work/silent-c2.txt' && test -s '$work/silent-c3.txt'"
    t1=$(date +%s.%N)
    took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf("%.1f", b - a) }')
    awk -v t="$took" 'BEGIN { exit !(t <= 3) }' || slow="$slow three at once: $took s;"
    if [ -z "$slow" ]; then pass "silent [4 silent sockets: three scrapes and three at once, each within 3 s]"
    else fail "silent:$slow"; fi
    got=$(grep -E '^spanprof_sockets_silent |^spanprof_process_up' "$work/silent-3.txt")
    want='spanprof_sockets_silent 4
spanprof_process_up{pid="5151",exe="worker"} 1'
    if [ "$got" = "$want" ]; then pass "silent [spanprof_sockets_silent 4, the live one up]"
    else fail "silent: got"; echo "$got" | sed 's/^/  | /'; fi
    kill -CONT "$stopped"
    if wait_for 15 sh -c "\"$CURL\" -s http://127.0.0.1:$port/metrics | grep -q '^spanprof_process_up{pid=\"6006\",exe=\"worker\"} 1'"; then
        pass "silent [the stopped process, continued, is published again]"
    else fail "silent: the continued process is not up again within 15 s"; fi
    cleanup
fi

if selected abandoned; then
    # 12 windows of an hour whose clients hang up at once: refused beyond 2 from one address,
    # ended with their clients; /metrics answers at once.  Fewer than MAX_PER_IP (16) connections:
    # with 20, a slow serve (the sanitizer build) still held 16 of them open when the last came,
    # and the connection bound, not the window bound, closed those unanswered
    d="$work/abandoned"
    mkdir -p "$d"
    respond "$d" 5151 "$work/worker.snap" && serve "$d"
    i=0
    while [ $i -lt 12 ]; do
        "$CURL" -s -o "$work/abandoned.$i" -w '%{http_code}\n' --max-time 1 \
            "http://127.0.0.1:$port/debug/pprof/profile?seconds=3600" >>"$work/abandoned.codes" 2>/dev/null &
        i=$((i + 1))
    done
    wait_for 10 test "$(wc -l <"$work/abandoned.codes" 2>/dev/null)" -ge 12
    refused=$(grep -c '^503$' "$work/abandoned.codes")
    body=$(cat "$work/abandoned.0" "$work/abandoned.1" "$work/abandoned.2" 2>/dev/null | grep -m 1 'too many')
    if [ "$refused" = 10 ] && [ "$body" = "too many profile windows from this address at once (2): try again when one ends" ]; then
        pass "abandoned [10 of 12 windows refused: '$body']"
    else fail "abandoned: $refused refused, body '$body'"; fi
    sleep 2
    threads=$(sed -n 's/^Threads:[[:space:]]*//p' "/proc/$serve_pid/status")
    code=$("$CURL" -sS --max-time 3 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/metrics")
    # serve's own threads: the main one, libmicrohttpd's listener and at most the /metrics one
    if [ "$code" = 200 ] && [ "$threads" -le 3 ]; then
        pass "abandoned [the hung-up windows ended: $threads threads, /metrics $code]"
    else fail "abandoned: $threads threads, /metrics '$code'"; fi
    cleanup
fi

if selected push-reply && [ -n "${PYTHON:-}" ]; then
    # a push target that answers 50 MB: nothing of it on serve's stdout
    d="$work/push-reply"
    mkdir -p "$d" "$work/reply-bodies"
    REPLY_BYTES=50000000 "$PYTHON" "$here/receiver.py" 0 "$work/reply.log" "$work/reply-bodies" >"$work/reply.port" &
    pids="$pids $!"
    wait_for 10 test -s "$work/reply.port"
    respond "$d" 4242 "$work/server-a.snap"
    serve "$d" --push "http://127.0.0.1:$(cat "$work/reply.port")" --interval 1
    wait_for 20 test -s "$work/reply.log"
    sleep 2
    out=$(wc -c <"$d.out")
    lines=$(wc -l <"$d.out")
    if [ "$lines" = 1 ] && [ "$out" -lt 200 ]; then pass "push-reply [a 50 MB reply: serve's stdout is its one line]"
    else fail "push-reply: serve's stdout holds $out bytes in $lines lines"; fi
    cleanup
fi

if selected cap; then
    # 300 processes end: the 256 that ended last stay, 44 forgotten
    d="$work/cap"
    mkdir -p "$d"
    serve "$d"
    i=1
    while [ $i -le 300 ]; do cp "$work/worker.snap" "$d/$((10000 + i)).1.final"; i=$((i + 1)); done
    wait_for 20 sh -c "! ls '$d' | grep -q final"
    get /metrics >"$work/cap.txt"
    got=$(grep -E '^spanprof_processes_ended_total|^spanprof_processes_forgotten_total' "$work/cap.txt"; grep -c '^spanprof_span_calls_total' "$work/cap.txt")
    want='spanprof_processes_ended_total 300
spanprof_processes_forgotten_total 44
256'
    if [ "$got" = "$want" ]; then pass "cap [300 ended: 256 kept, 44 forgotten]"
    else fail "cap: got"; echo "$got" | sed 's/^/  | /'; fi
    cleanup
fi

if selected planted; then
    if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null 2>&1; then
        skip "planted: needs root and setpriv (util-linux) to run a process as another user"
    else
        # DIR is root's; a link planted there to a socket of a process running as nobody, and
        # such a socket moved in: neither published; root's own process is
        other=$(mktemp -d)
        chmod 755 "$other"
        chown nobody "$other"
        cp "$work/server-a.snap" "$other/s.snap"
        chmod 644 "$other/s.snap"
        d="$work/planted"
        mkdir -m 700 "$d"
        for name in linked moved; do
            setpriv --reuid=nobody --regid=nogroup --clear-groups "$RESPONDER" "$other/$name.sock" \
                "$other/s.snap" "$other/$name.log" &
            pids="$pids $!"
            wait_for 10 test -S "$other/$name.sock"
        done
        ln -s "$other/linked.sock" "$d/4242.sock"
        mv "$other/moved.sock" "$d/4343.sock"
        respond "$d" 5151 "$work/worker.snap"
        serve "$d"
        get /metrics >"$work/planted.txt"
        get '/debug/pprof/profile' >"$work/planted.pb.gz"
        got=$(grep -E '^spanprof_span_calls_total|^spanprof_entries_refused' "$work/planted.txt")
        want='spanprof_entries_refused 2
spanprof_span_calls_total{pid="5151",exe="worker",span="job"} 7'
        if [ "$got" = "$want" ]; then pass "planted [only root's own process published; 2 entries refused]"
        else fail "planted: got"; echo "$got" | sed 's/^/  | /'; fi
        nobody=$(id -u nobody)
        got=$(grep -v '^spanprof serve: http' "$d.err" | sed "s|$d/||")
        want="spanprof serve: 4242.sock: a symbolic link: not followed, not published
spanprof serve: 4343.sock: its process runs as uid $nobody, neither the directory's owner (uid 0) nor serve's user (uid 0): not published"
        if [ "$got" = "$want" ]; then pass "planted [one line each, saying why]"
        else fail "planted: stderr"; echo "$got" | sed 's/^/  | /'; fi
        if [ -n "${GO:-}" ]; then
            got=$(pprof_raw "$work/planted.pb.gz")
            if [ "$got" = "7000000: main;job pid:[5151]" ]; then pass "planted [the profile: root's process only]"
            else fail "planted: the profile holds"; echo "$got" | sed 's/^/  | /'; fi
        fi
        if grep -Eq 'answered (spans|snapshot)' "$other/moved.log" 2>/dev/null; then
            fail "planted: the other user's process was asked"
        else pass "planted [the other user's process was never asked]"; fi
        cleanup
        # a directory others can write to is refused whole
        chmod 777 "$d"
        "$TOOL" serve --listen 127.0.0.1:0 "$d" >"$work/w.out" 2>"$work/w.err"
        st=$?
        got="$st $(sed "s|$d|DIR|" "$work/w.err")"
        want="1 spanprof serve: 'DIR': other users can write to it, so anyone could plant a socket there (chmod go-w it); nothing is served from it"
        if [ "$got" = "$want" ]; then pass "planted [a directory others can write to: refused, exit 1]"
        else fail "planted: got"; echo "$got" | sed 's/^/  | /'; fi
        rm -rf "$other"
    fi
fi

if selected listen-all; then
    # every interface: served, with a warning saying who can then read the profiles
    d="$work/listen-all"
    mkdir -p "$d"
    "$TOOL" serve --listen 0.0.0.0:0 "$d" >"$d.out" 2>"$d.err" &
    pids="$pids $!"
    wait_for 20 grep -q 'http://' "$d.out"
    got=$(cat "$d.err")
    want="spanprof serve: warning: 0.0.0.0:0 is not a loopback address: whoever can reach it can read every profile served (their function names, call counts and times); put a firewall or an authenticating proxy in front"
    if [ "$got" = "$want" ]; then pass "listen-all [0.0.0.0: one warning line]"
    else fail "listen-all: stderr"; echo "$got" | sed 's/^/  | /'; fi
    cleanup
fi

finish
