#!/bin/sh
# run.sh — SPANPROF_BUDGET: builds budgeted.c whole-program with every function a span and runs
# it for 2 s under a 5 % budget.  budgetcheck.py compares the JSON profile with the program's own
# counts; the summary printed per case is free of times and compared with CASE.expected.
#   exact     tiny() is switched off (and then fully off), its count a lower bound; the
#             attribute-marked span and the long spans are not, their counts exact; no stack
#             under tiny, no anomaly
#   count     the same with SPANPROF=count (no timestamps: the most called first)
#   sample    the same with SPANPROF=sample
#   threads   four threads inside the spans while they are switched off
#   none      no budget: nothing switched off, every count exact, no "budget" in the profile
#   line      the exit line on a terminal names the span switched off (a 50 % budget: tiny is
#             the only span over it)
#   bad       one warning line per bad value, and no budget
#
# Environment: CC, PLUGIN, INCLUDE_DIR, LIBDIR.  ONLY, REGEN as in ../lib.sh.
# shellcheck shell=sh source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
make_work_dir

exe=$work/budgeted
cmd="$CC -O2 -fplugin=$PLUGIN -fplugin-arg-spanplugin-all -fplugin-arg-spanplugin-min-size=0 -I$INCLUDE_DIR $here/budgeted.c -o $exe -L$LIBDIR -Wl,--no-as-needed -lspanprof -Wl,-rpath,$LIBDIR -pthread"
# shellcheck disable=SC2086 # a word list
build "budgeted" "$work/build.log" $cmd || finish

# case NAME THREADS [VAR=VALUE...]: a 2 s run in its own folder with the profile checked.
case_run() {
    name=$1 threads=$2
    shift 2
    d=$work/$name
    mkdir -p "$d"
    (cd "$d" && env SPANPROF_JSON=p.json SPANPROF_FOLDED=p.folded "$@" "$exe" 2 "$threads" \
        >stdout 2>stderr; echo $? >status)
    {
        echo "# exit $(cat "$d/status"), stderr:"
        cat "$d/stderr"
        python3 "$here/budgetcheck.py" "$d/p.json" "$d/p.folded" "$d/stdout"
    } >"$d.actual" 2>&1
    compare_expected "$name" "gcc -O2" "$d.actual"
}

test_line() {
    d=$work/line
    mkdir -p "$d"
    (cd "$d" && SPANPROF_BUDGET=50 SPANPROF_FOLDED=p.folded script -qec "$exe 2" /dev/null \
        >out 2>&1)
    {
        grep '^spanprof: ' "$d/out" | tr -d '\r' | sed 's/after [0-9]* calls/after N calls/'
    } >"$d.actual" 2>&1
    compare_expected line "gcc -O2" "$d.actual"
}

test_bad() {
    d=$work/bad
    mkdir -p "$d"
    {
        for v in abc 0 -5 150 5x; do
            echo "# SPANPROF_BUDGET=$v"
            (cd "$d" && SPANPROF_BUDGET=$v SPANPROF_JSON=p.json SPANPROF_FOLDED= "$exe" 0.3 2>&1 >/dev/null)
            grep -c '"budget"' "$d/p.json"
        done
    } >"$d.actual" 2>&1
    compare_expected bad "gcc -O2" "$d.actual"
}

selected exact && case_run exact 1 SPANPROF_BUDGET=5
selected count && case_run count 1 SPANPROF=count SPANPROF_BUDGET=5
selected sample && case_run sample 1 SPANPROF=sample SPANPROF_BUDGET=5
selected threads && case_run threads 4 SPANPROF_BUDGET=5
selected none && case_run none 1
selected line && test_line
selected bad && test_bad
summary
