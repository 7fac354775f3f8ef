#!/bin/sh
# run.sh — SPANPROF_BUDGET: builds budgeted.c whole-program with every function a span and runs
# it for 2 s (sample: 4 s) under a 5 % budget.  budgetcheck.py compares the JSON profile with the
# program's own counts and the runtime's share at the last tick; the summary printed per case is
# free of times and compared with CASE.expected.
#   exact     tiny() is switched off (and then fully off), its count a lower bound; the
#             attribute-marked span and the long spans are not, their counts exact; no stack
#             under tiny, no anomaly; at least half of the chain, whose spans are each within
#             the budget against their own time but not together, is switched off
#   count     the same with SPANPROF=count (no timestamps: the most called first)
#   sample    the same with SPANPROF=sample
#   threads   four threads inside the spans while they are switched off; three of them end, and
#             the last tick, after that, still finds the share under 50 % (each case checks
#             that): their time since the tick before comes with their calls
#   phase     budgeted.c's phase rounds: once the program has changed nothing for a while the
#             looks slow down (fewer than 250 a second, against 1,000), and the new call paths
#             of the second half wake them: tiny2 is switched off as tiny is
#   lead      budgeted.c's lead rounds under a 10 % budget: lookup(), a fifth of the program's
#             time in calls that each cost more than the budget's share of their own time but
#             fit in the budget together, leads and is not switched off; tiny is
#   none      no budget: nothing switched off, every count exact, no "budget" in the profile
#   line      the exit line on a terminal names the spans switched off in the order they were,
#             tiny among them (a 50 % budget; on a busy machine now(), as cheap and called more
#             often in the first ticks, is sometimes switched off a tick before it)
#   select    SPANPROF_BUDGET=100 measures and switches nothing off; spanprof select --budget 5
#             on that profile lists tiny (not marked, work, medium; the chain too when tiny's
#             estimated cost leaves room to weigh it: ../cli's select-* cases fix that rule); a
#             rebuild with the list has
#             no tiny span and runs with every count exact; select on a 5 % budget's profile
#             lists what it switched off; spanprof report marks tiny's calls as a lower bound,
#             also in two such profiles merged;
#             select on a profile without a budget says what it needs
#   bad       one warning line per bad value, and no budget
#
# Environment: CC, PLUGIN, INCLUDE_DIR, LIBDIR, TOOL.  ONLY, REGEN as in ../lib.sh.
# shellcheck shell=sh source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
make_work_dir

exe=$work/budgeted
cmd="$CC -O2 -fplugin=$PLUGIN -fplugin-arg-spanplugin-all -fplugin-arg-spanplugin-min-size=0 -I$INCLUDE_DIR $here/budgeted.c -o $exe -L$LIBDIR -Wl,--no-as-needed -lspanprof -Wl,-rpath,$LIBDIR -pthread"
# shellcheck disable=SC2086 # a word list
build "budgeted" "$work/build.log" $cmd || finish

# case NAME ARGS [VAR=VALUE...]: a run of RUN_S seconds (default 2: budgeted 2 ARGS) in its own
# folder with the profile checked.
case_run() {
    name=$1 args=$2
    shift 2
    d=$work/$name
    mkdir -p "$d"
    # shellcheck disable=SC2086 # a word list
    (cd "$d" && env SPANPROF_JSON=p.json SPANPROF_FOLDED=p.folded "$@" "$exe" "${RUN_S:-2}" $args \
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
        grep '^spanprof: ' "$d/out" | tr -d '\r' |
            sed 's/[0-9]* spans\{0,1\} switched off (\([a-z_]* at [0-9.]* s, \)*tiny at [0-9.]* s[^)]*); \(its count is a lower bound\|their counts are lower bounds\)$/N switched off (tiny at T s...); lower bounds/'
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

# names FILE: the names an exclude list holds, one per line.
names() {
    grep -v '^#' "$1" | sed 's/ *#.*//'
}

test_select() {
    d=$work/select
    mkdir -p "$d"
    (cd "$d" && SPANPROF_BUDGET=100 SPANPROF_JSON=measured.json SPANPROF_FOLDED= "$exe" 1 >/dev/null)
    (cd "$d" && SPANPROF_BUDGET=5 SPANPROF_JSON=budget5.json SPANPROF_FOLDED= "$exe" 1 >/dev/null)
    {
        echo "# SPANPROF_BUDGET=100: switched off: $(grep -c '"switched_off": {' "$d/measured.json")"
        "$TOOL" select --budget 5 -o "$d/list.txt" "$d/measured.json" 2>"$d/select.err"
        echo "# select --budget 5: exit $?, $(grep -v '^spanprof: warning: by the profile' "$d/select.err" |
            sed 's/: [0-9.]*% of.*/: .../; s/[0-9]* functions\{0,1\} left/N left/')"
        head -n 2 "$d/list.txt" | sed 's/[0-9]* functions\{0,1\} left/N left/; s|from .*|from PROFILE|'
        for f in tiny marked work medium; do
            names "$d/list.txt" | grep -qx "$f" && echo "listed: $f" || echo "not listed: $f"
        done
        cmd2="$CC -O2 -fplugin=$PLUGIN -fplugin-arg-spanplugin-all -fplugin-arg-spanplugin-min-size=0 -fplugin-arg-spanplugin-exclude-list=$d/list.txt -I$INCLUDE_DIR $here/budgeted.c -o $d/rebuilt -L$LIBDIR -Wl,--no-as-needed -lspanprof -Wl,-rpath,$LIBDIR -pthread"
        # shellcheck disable=SC2086 # a word list
        $cmd2 >"$d/build.log" 2>&1 || { echo "the rebuild failed:"; cat "$d/build.log"; }
        (cd "$d" && SPANPROF_JSON=r.json SPANPROF_FOLDED=r.folded ./rebuilt 1 >r.out)
        echo "# the rebuild, no budget:"
        python3 "$here/budgetcheck.py" "$d/r.json" "$d/r.folded" "$d/r.out" | grep -v '^\(work\|medium\|marked\): switched'
        echo "# select on a 5 % budget's profile:"
        "$TOOL" select "$d/budget5.json" 2>/dev/null | grep '^tiny ' | sed 's/ at [0-9.]* s after [0-9]* calls of [0-9]* ns/ at T s after N calls of M ns/'
        echo "# spanprof report:"
        "$TOOL" report "$d/budget5.json" | awk '/^tiny / { sub(/>=[0-9]+/, ">=N", $3); print "tiny, calls", $3 }
            /^cost budget/ { sub(/[0-9]+ spans? switched/, "N switched"); print }'
        echo "# two such profiles merged, reported:"
        "$TOOL" merge -o "$d/merged.json" "$d/budget5.json" "$d/budget5.json" >/dev/null
        "$TOOL" report "$d/merged.json" | awk '/^tiny / { sub(/>=[0-9]+/, ">=N", $3); print "tiny, calls", $3 }
            /^cost budget/ { sub(/[0-9]+ spans? switched/, "N switched"); print }'
        "$TOOL" select "$d/merged.json" 2>/dev/null | grep -c '^tiny ' | sed 's/^/tiny listed by select: /'
        echo "# select on the rebuild's profile, without a budget:"
        "$TOOL" select "$d/r.json" 2>&1 | sed "s|$d/||"
    } >"$d.actual" 2>&1
    compare_expected select "gcc -O2" "$d.actual"
}

selected exact && case_run exact 1 SPANPROF_BUDGET=5
selected count && case_run count 1 SPANPROF=count SPANPROF_BUDGET=5
# Sampled means need samples: beside busy loops 2 s once left 9 of the chain's 17 spans on.
if selected sample; then
    RUN_S=4
    case_run sample 1 SPANPROF=sample SPANPROF_BUDGET=5
    RUN_S=2
fi
selected threads && case_run threads "4 rest" SPANPROF_BUDGET=5
selected phase && case_run phase "1 phase" SPANPROF_BUDGET=5
selected lead && case_run lead "1 lead" SPANPROF_BUDGET=10
selected none && case_run none 1
selected line && test_line
selected bad && test_bad
selected select && test_select
summary
