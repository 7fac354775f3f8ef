#!/bin/sh
# run.sh — patch points (spanprof.h, section 6): points.c, built whole-program with every
# function a span, reports its calls and, per span, whether its points are still the compiled
# jumps or no-ops; each case compares that report (and the run's exit status and stderr) with
# CASE.expected.
#   off       SPANPROF=0: every point is a no-op, the program's output unchanged
#   on        recording: every point still a jump; the profile's calls exact
#   budget    four threads calling tiny() while a 5 % budget switches it off: tiny's points
#             become no-ops under them, marked's stay jumps, the program's calls all made
#   nopatch   -fplugin-arg-spanplugin-patch=0: no points at all, recording off as before
#   spans     SPANPROF_SPANS=marked,nosuch with SPANPROF_SLOW=work:1s: marked and work record
#             (their points jumps, their calls in the profile), the rest are no-ops; one warning
#             line for nosuch; the profile's spans_chosen and patch_points_off; a build
#             without points records the same spans
#   dlopen    SPANPROF=0 with a library loaded twice by dlopen (loadlib.c, every function a span):
#             its points are no-ops by the time its code runs, each time it is loaded
#   dlopen_spans SPANPROF_SPANS=marked,lib_work: the spans it leaves out no-ops in the library as
#             in the program, lib_work's jumps; the profile has lib_work's two calls, no lib_tiny
#   dlopen_slow SPANPROF_SLOW=lib_work:1ns: the capture of a call of the library, still waiting
#             for the writer when the library is unloaded, is written at exit with its spans named
#   denied    SPANPROF=0 where mprotect refuses writable executable pages (a seccomp filter set
#             before the runtime starts, the runtime linked statically): one warning line, the
#             jumps stay and the program runs as before (not under an emulator, whose own
#             system calls a guest's filter would catch)
#   denied_on as denied, recording main only (SPANPROF_SPANS) with SPANPROF_LIVE: the program
#             asks its own live socket to switch tiny on, which the state alone does (the jumps
#             are all there): the answer lists it on, the profile has all its calls; one warning
#   trap      (x86-64) an int3 over a patched point of tiny(), as a thread meets one while the
#             runtime writes it: the runtime's SIGTRAP handler takes the call past the point
#   split     tiny's own code (objdump) makes no call and saves no register, and branches to its
#             clone tiny.spanprof.0, which records (plugin/split.cc); the patch=0 build's does
#   gc        -ffunction-sections -Wl,--gc-sections: a function nothing calls is still removed,
#             with its points (a point's note goes with its function's section)
#   switch    switch.c: eight threads calling two spans that the program switches on and off
#             by request 1,000 times (100 under an emulator), starting off (SPANPROF_SPANS): the
#             calls made while on counted exactly, no anomaly, every switch in the profile
#   spans_cmd `spanprof spans PID` beside switch.c: the listing, `off` and `on` by glob, a span
#             a thread sleeps in (stopping, and still stopping when switched on again), a glob
#             that names nothing; then the profile: no anomaly but the sleeper's open frame
#
# Environment: CC, PLUGIN, INCLUDE_DIR, LIBDIR, PROFDUMP, TOOL (the spanprof command),
# RUNTIME_LIBS (what a program linked with libspanprof.a needs besides).  ONLY, REGEN, EMULATOR as in ../lib.sh.
# shellcheck shell=sh source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
need_plugin
make_work_dir

all="-fplugin=$PLUGIN -fplugin-arg-spanplugin-all -fplugin-arg-spanplugin-min-size=0 -I$INCLUDE_DIR"
link="-L$LIBDIR -Wl,--no-as-needed -lspanprof -Wl,-rpath,$LIBDIR -pthread"
# shellcheck disable=SC2086 # word lists
build "points" "$work/build.log" $CC -O2 $all "$here/points.c" -o "$work/points" $link &&
    build "points, patch=0" "$work/nopatch.log" $CC -O2 $all -fplugin-arg-spanplugin-patch=0 \
        "$here/points.c" -o "$work/nopatch-points" $link &&
    build "loadlib.so" "$work/build.log" $CC -O2 $all -fPIC -shared "$here/loadlib.c" \
        -o "$work/loadlib.so" || finish

# run_case NAME PROGRAM ARGS [VAR=VALUE...]: PROGRAM ARGS in a folder of its own, its exit
# status, stderr and stdout compared with NAME.expected (stdout through FILTER, if set).
run_case() {
    name=$1 prog=$2 args=$3
    shift 3
    d=$work/$name
    mkdir -p "$d"
    # shellcheck disable=SC2086 # a word list; EMULATOR a command
    (cd "$d" && env SPANPROF_FOLDED= "$@" ${EMULATOR:-} "$prog" $args >stdout 2>stderr
     echo $? >status)
    {
        echo "# exit $(cat "$d/status")"
        echo "# stderr"
        cat "$d/stderr"
        echo "# stdout"
        ${FILTER:-cat} "$d/stdout"
    } >"$d.actual"
    compare_expected "$name" "gcc -O2" "$d.actual"
}

# rounds_free: the report without the counts of a timed run (they vary), each checked instead:
# tiny PER_ROUND calls a round, marked one.
rounds_free() {
    awk '$1 == "rounds" { r = $2; next }
         $1 == "tiny" && NF == 2 && $2 ~ /^[0-9]+$/ { print "tiny calls: " ($2 == r * 100000 ? "100000 a round" : "WRONG " $2); next }
         $1 == "marked" && NF == 2 && $2 ~ /^[0-9]+$/ { print "marked calls: " ($2 == r ? "one a round" : "WRONG " $2); next }
         { print }' "$1"
}

if selected off; then
    run_case off "$work/points" 0 SPANPROF=0
fi

if selected on; then
    run_case on "$work/points" 0 SPANPROF=1 SPANPROF_JSON=p.json
    # The profile's counts: the program's own.
    calls=$("$PROFDUMP" "$work/on/p.json" | awk '$1 == "span" { print $2, $3 }' | sort | tr '\n' ' ')
    [ "$calls" = "main calls=1 marked calls=1 tiny calls=100000 work calls=1 " ]
    result $? "on: the profile's calls are the program's (got: $calls)"
fi

if selected budget; then
    FILTER=rounds_free run_case budget "$work/points" "2 4" SPANPROF_BUDGET=5
fi

if selected nopatch; then
    run_case nopatch "$work/nopatch-points" 0 SPANPROF=0
fi

if selected spans; then
    run_case spans "$work/points" 0 SPANPROF_SPANS=marked,nosuch SPANPROF_SLOW=work:1s \
        SPANPROF_JSON=p.json
    for build in points nopatch-points; do
        mkdir -p "$work/spans-$build"
        # shellcheck disable=SC2086 # EMULATOR a command
        (cd "$work/spans-$build" && SPANPROF_SPANS=marked,nosuch SPANPROF_SLOW=work:1s \
            SPANPROF_FOLDED= SPANPROF_JSON=p.json ${EMULATOR:-} "$work/$build" 0 >/dev/null 2>&1)
        calls=$("$PROFDUMP" "$work/spans-$build/p.json" | awk '$1 == "span" { print $2, $3 }' | sort | tr '\n' ' ')
        [ "$calls" = "marked calls=1 work calls=1 " ]
        result $? "spans [$build]: the profile holds the spans chosen (got: $calls)"
    done
    grep -q '"spans_chosen": "marked,nosuch,work"' "$work/spans-points/p.json" &&
        sed -n 's/.*"patch_points_off": \([0-9]*\).*/\1/p' "$work/spans-points/p.json" |
        awk '{ exit !($1 >= 4) }'
    result $? "spans: the profile names the patterns and counts the points made no-ops"
    ! grep -q '"patch_points_off"' "$work/spans-nopatch-points/p.json"
    result $? "spans: a build without points counts none"
fi

if selected dlopen; then
    run_case dlopen "$work/points" 0 SPANPROF=0 POINTS_DLOPEN="$work/loadlib.so"
fi

if selected dlopen_spans; then
    run_case dlopen_spans "$work/points" 0 SPANPROF_SPANS=marked,lib_work \
        POINTS_DLOPEN="$work/loadlib.so" SPANPROF_JSON=p.json
    calls=$("$PROFDUMP" "$work/dlopen_spans/p.json" | awk '$1 == "span" { print $2, $3 }' | sort | tr '\n' ' ')
    [ "$calls" = "lib_work calls=2 marked calls=1 " ]
    result $? "dlopen_spans: the profile holds the spans chosen, the library's from both loads (got: $calls)"
fi

if selected dlopen_slow; then
    run_case dlopen_slow "$work/points" 0 SPANPROF_SLOW=lib_work:1ns SPANPROF_SLOW_DIR=slow \
        POINTS_DLOPEN="$work/loadlib.so"
    set -- "$work"/dlopen_slow/slow/lib_work.*.trace.json
    [ $# -eq 1 ] && grep -q '"name": *"lib_tiny"' "$1"
    result $? "dlopen_slow: one capture of lib_work, its library's spans named (got: $(ls "$work/dlopen_slow/slow" 2>&1 | tr '\n' ' '))"
fi

if selected denied || selected denied_on; then
    if [ -n "${EMULATOR:-}" ]; then
        skip "denied, denied_on: a seccomp filter of the guest would filter the emulator's own calls"
    else
        # shellcheck disable=SC2086 # word lists
        build "denied" "$work/denied.log" $CC -O2 $all "$here/points.c" -o "$work/denied-points" \
            "$LIBDIR/libspanprof.a" $RUNTIME_LIBS -ldl -lm
    fi
fi

if selected denied && [ -x "$work/denied-points" ]; then
    run_case denied "$work/denied-points" 0 SPANPROF=0 POINTS_DENY=1
fi

# here_free FILE: FILE without this folder's path in the file names it shows.
here_free() {
    sed "s|$here/||g" "$1"
}

if selected denied_on && [ -x "$work/denied-points" ]; then
    FILTER=here_free run_case denied_on "$work/denied-points" 0 POINTS_DENY=1 POINTS_SWITCH=tiny \
        SPANPROF_SPANS=main SPANPROF_LIVE=live SPANPROF_JSON=p.json
    calls=$("$PROFDUMP" "$work/denied_on/p.json" | awk '$1 == "span" { print $2, $3 }' | sort | tr '\n' ' ')
    [ "$calls" = "main calls=1 tiny calls=100000 " ]
    result $? "denied_on: the span switched on records every call since (got: $calls)"
fi

if selected trap; then
    case $("${CC:-gcc}" -dumpmachine) in
    x86_64*) run_case trap "$work/points" 0 SPANPROF=0 POINTS_TRAP=1 ;;
    *) skip "trap: the int3 protocol is x86-64's" ;;
    esac
fi

if selected gc; then
    printf '%s\n' '__attribute__((span, noinline)) int gc_unused(int x) { return x * 5 + 1; }' \
        '__attribute__((span, noinline)) int gc_used(int x) { return x * 3 + 1; }' \
        'int main(int argc, char **argv) { (void)argv; return gc_used(argc) == 4 ? 0 : 1; }' \
        >"$work/gc.c"
    # shellcheck disable=SC2086 # word lists
    if build "gc" "$work/gc.log" $CC -O2 -ffunction-sections -Wl,--gc-sections \
        -fplugin="$PLUGIN" -I"$INCLUDE_DIR" "$work/gc.c" -o "$work/gc" $link; then
        # shellcheck disable=SC2086 # EMULATOR a command
        (SPANPROF=0 ${EMULATOR:-} "$work/gc"; echo "exit $?") >"$work/gc.out" 2>&1
        got="$(cat "$work/gc.out"); $(nm "$work/gc" | grep -c ' T gc_') functions; $(readelf -n "$work/gc" | grep -c 0x53507031) points"
        [ "$got" = "exit 0; 1 functions; 2 points" ]
        result $? "gc: the unused function and its points removed, the used one's kept (got: $got)"
    fi
fi

if selected split; then
    # own_code PROGRAM FUNCTION: FUNCTION's instructions in PROGRAM, one per line.
    own_code() {
        "${CC%gcc*}objdump" -d --no-show-raw-insn "$1" |
            awk -v f="<$2>:" '$2 == f { on = 1; next } /^$/ { on = 0 } on'
    }
    # Calls or register saves (x86-64: call, push; aarch64: bl, blr, stp), and branches to the clone.
    frame='[[:space:]](call|push|bl|blr|stp)[[:space:]]'
    got="$(own_code "$work/points" tiny | grep -Ec "$frame") calls or saves, $(own_code "$work/points" tiny | grep -c '<tiny\.spanprof\.0>') branches to the clone"
    [ "$got" = "0 calls or saves, 1 branches to the clone" ]
    result $? "split: tiny's own code makes no call and saves no register, its clone records (got: $got)"
    got=$(own_code "$work/nopatch-points" tiny | grep -Ec "$frame")
    [ "$got" -gt 0 ]
    result $? "split: without patch points, tiny's code holds the recording's calls or saves (got: $got)"
fi

if selected switch || selected spans_cmd; then
    # shellcheck disable=SC2086 # word lists
    build "switch" "$work/switch.log" $CC -O2 $all "$here/switch.c" -o "$work/switch" $link
fi

if selected switch && [ -x "$work/switch" ]; then
    rounds=1000
    [ -n "${EMULATOR:-}" ] && rounds=100
    d=$work/switch-run
    mkdir -m 700 "$d"
    # shellcheck disable=SC2086 # EMULATOR a command
    (cd "$d" && env SPANPROF_FOLDED= SPANPROF_LIVE="$d" SPANPROF_SPANS=leaf SPANPROF_JSON=p.json \
        ${EMULATOR:-} "$work/switch" $rounds >out 2>err; echo $? >status)
    [ "$(cat "$d/status")" = 0 ] && [ ! -s "$d/err" ]
    result $? "switch: $rounds switches by request, each answered as asked (exit $(cat "$d/status"); $(head -c 300 "$d/err"))"
    got=$("$PROFDUMP" "$d/p.json" | awk -v out="$d/out" '
        BEGIN { while ((getline l < out) > 0) { split(l, f, " "); made[f[1]] = f[2] } }
        $1 == "span" { split($3, kv, "="); calls[$2] = kv[2] }
        $1 == "anomaly" { anomalies = anomalies " " $2 }
        END {
            c = "WRONG " calls["counted"] " of " made["counted_on"]
            if (calls["counted"] == made["counted_on"]) c = "exact"
            l = "WRONG " calls["leaf"] " of " made["leaf"]
            if (calls["leaf"] == made["leaf"]) l = "exact"
            b = "WRONG " calls["busy"] " of " made["busy"]
            if (calls["busy"] > 0 && calls["busy"] <= made["busy"]) b = "some"
            printf "counted %s, leaf %s, busy %s, anomalies%s", c, l, b, anomalies == "" ? " none" : anomalies
        }')
    [ "$got" = "counted exact, leaf exact, busy some, anomalies none" ]
    result $? "switch: the calls made while on, exactly, and no anomaly (got: $got)"
    switches=$(grep -o '"on": *\(true\|false\)' "$d/p.json" | sort | uniq -c | awk '{ printf "%s%s %s", sep, $1, $3; sep = ", " }')
    [ "$switches" = "$rounds false, $rounds true" ]
    result $? "switch: the profile lists each span's switches (got: $switches)"
fi

if selected spans_cmd && [ -x "$work/switch" ]; then
    d=$work/spans-cmd
    mkdir -m 700 "$d"
    # shellcheck disable=SC2086 # EMULATOR a command
    (cd "$d" && exec env SPANPROF_FOLDED= SPANPROF_LIVE="$d" SPANPROF_SPANS=leaf,resident \
        SPANPROF_JSON=p.json ${EMULATOR:-} "$work/switch" wait "$d/stop" >out 2>err) &
    pid=$!
    for _ in $(seq 500); do
        [ -S "$d/$pid.sock" ] && [ -s "$d/out" ] && break
        sleep 0.02
    done
    set -f # the requests' globs are the runtime's to match
    {
        for request in "" "on counted" "off c* busy" "off resident" "on resident" "on nosuch"; do
            echo "# spanprof spans PID $request"
            # shellcheck disable=SC2086 # the request's words
            "$TOOL" spans "$pid" $request 2>&1
            echo "# exit $?"
        done
    } | sed "s|$here/||; s|$pid|PID|g" >"$d.actual"
    set +f
    touch "$d/stop"
    wait "$pid"
    echo "# the program: exit $?" >>"$d.actual"
    "$PROFDUMP" "$d/p.json" | grep -v '^span \(busy\|leaf\) calls=\|^threads=' >>"$d.actual"
    compare_expected spans_cmd "gcc -O2" "$d.actual"
fi

summary
