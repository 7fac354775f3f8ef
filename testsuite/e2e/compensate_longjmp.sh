#!/bin/sh
# compensate_longjmp.sh — compensation when longjmp abandons spans (compensate_longjmp.c: parse
# longjmps out of 8 recursive activations of itself, 200,000 times).  An abandoned activation's
# exit never ran, so compensation may take out of it only what its enter cost.
#   One run writes JSON, folded stacks and pprof; the expected file holds its time-free
#   figures: no stack and no span at 0 ns (taking a whole call's cost out of each abandoned
#   activation left "request;parse 0" and, on a machine measuring 18-21 ns a call, both spans at
#   0), and each span's total and self time the same in the JSON, in the folded stacks, and in
#   `spanprof report` of either (within their rounding).  pprof is compared too when go is there.
#   Then fifteen compensated runs of 5,000 requests and fifteen with SPANPROF_COMPENSATE=0, each
#   figure from each stack's lowest value over the runs: compensated, not above the
#   uncompensated figure, nor below it less the whole measured cost of every call it holds (the
#   runs are separate, and a busy machine slows some throughout: 50 % of it allowed above, 20 %
#   below; compensation that added the calls' cost instead would more than double the figures).
# Environment: CC, PLUGIN, INCLUDE_DIR, LIBDIR, PROFDUMP, TOOL (the spanprof command), GO.
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
check_target=check-e2e
need_plugin
make_work_dir
selected compensate_longjmp || finish
build_sample "$here/compensate_longjmp.c" compensate_longjmp "${CC:-gcc} -O2" "${CC:-gcc} -O2" || finish

# json_times NAME.json SPAN: "TOTAL SELF" in ns, from the JSON.
json_times() {
    "$PROFDUMP" --times "$dir/$1" | awk -v s="$2" '$1 == s { split($2, t, "="); split($3, f, "="); print t[2], f[2] }'
}
# folded_times FILE SPAN: "TOTAL SELF" from folded stacks: the lines through SPAN, the lines
# that end in it.
folded_times() {
    awk -v s="$2" '{ n = split($1, f, ";"); for (i = 1; i <= n; i++) if (f[i] == s) { t += $2; break }
                     if (f[n] == s) self += $2 } END { printf "%d %d\n", t, self }' "$dir/$1"
}
# report_times PROFILE SPAN: "TOTAL SELF" in ns from `spanprof report`'s table (as printed:
# rounded to its last digit).
report_times() {
    "$TOOL" report "$dir/$1" | awk -v s="$2" '
        function ns(v, u) { return v * (u == "s" ? 1e9 : u == "ms" ? 1e6 : u == "µs" ? 1e3 : 1) }
        $1 == s { printf "%.0f %.0f\n", ns($4, $5), ns($6, $7) }'
}
# close A B SLACK: |A - B| <= SLACK.
close() {
    awk -v a="$1" -v b="$2" -v s="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= s) }'
}
# agree SPAN WHAT JSON FOLDED REPORT_JSON REPORT_FOLDED: one line, "agree" or the figures.
# Folded values are each node's rounded to the ns (up to 9 lines); report's are rounded to
# its last digit: 5 µs on a time in ms.
agree() {
    if close "$3" "$4" 9 && close "$3" "$5" 5000 && close "$4" "$6" 5000; then
        echo "$1 $2: agree"
    else
        echo "$1 $2: JSON $3, folded $4, report of JSON $5, report of folded $6"
    fi
}

run_sample SPANPROF_JSON=p.json SPANPROF_FOLDED=p.folded SPANPROF_PPROF=p.pb.gz
out="$work/compensate_longjmp.out"
{
    echo "## one run, compensated"
    print_run "$dir"
    echo "# folded stacks, values 0 or +"
    awk '{ print $1, ($2 > 0 ? "+" : $2) }' "$dir/p.folded"
    echo "# JSON"
    "$PROFDUMP" "$dir/p.json"
    "$PROFDUMP" --compensation "$dir/p.json" | sed 's/=[0-9.]*/=N/g'
    for s in parse request; do
        set -- $(json_times p.json $s)
        echo "$s total $([ "$1" -gt 0 ] && echo + || echo "$1") self $([ "$2" -gt 0 ] && echo + || echo "$2")"
    done
    echo "# the same from the JSON, the folded stacks and spanprof report of each"
    for s in parse request; do
        j=$(json_times p.json $s) f=$(folded_times p.folded $s)
        rj=$(report_times p.json $s) rf=$(report_times p.folded $s)
        # shellcheck disable=SC2086 # pairs of numbers
        agree $s total ${j% *} ${f% *} ${rj% *} ${rf% *}
        # shellcheck disable=SC2086
        agree $s self ${j#* } ${f#* } ${rj#* } ${rf#* }
    done
} >"$out"
compare_expected compensate_longjmp "${CC:-gcc} -O2" "$out" "$cmd"

# pprof: each stack's wall value is its node's self time, as in the folded stacks.
if command -v "${GO:-go}" >/dev/null 2>&1; then
    "${GO:-go}" tool pprof -raw "$dir/p.pb.gz" >"$dir/p.raw" 2>&1
    awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0; l = 1; next } /^Mappings/ { l = 0 }
         s && NF >= 3 { v[++n] = $2; k[n] = $3 } l && /^ *[0-9]+:/ { sub(":", "", $1); name[$1] = $4 }
         END { for (i = 1; i <= n; i++) self[name[k[i]]] += v[i]; for (x in self) print x, self[x] }' \
        "$dir/p.raw" | sort >"$dir/pprof.self"
    for s in parse request; do echo "$s $(folded_times p.folded $s | cut -d' ' -f2)"; done >"$dir/folded.self"
    cmp -s "$dir/pprof.self" "$dir/folded.self"
    result $? "compensate_longjmp: pprof's wall time per span equals the folded stacks' ($(tr '\n' ' ' <"$dir/pprof.self"))"
else
    skip "compensate_longjmp: pprof (no go to read it)"
fi

# Fifteen runs each way, alternating, of 5,000 requests each (about a millisecond): short
# enough for most to run between two preemptions on a busy machine (runs of 20,000, 4 ms, beside
# four busy loops were preempted nearly all, and their lowest figures still differed by a third
# from one set of runs to the next).  Noise only adds time, so each stack's lowest value over the
# runs is taken, then added up into the figures.  A figure can lose at most the whole cost of
# the calls it holds: a total its own and those below it (all of them here: 9 a request for
# request, 8 for parse), a self time its own and its children's (2 and 15).
requests=5000
: >"$dir/runs"
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
    for mode in 1 0; do
        (cd "$dir" && env SPANPROF_COMPENSATE=$mode SPANPROF_JSON=r.json SPANPROF_FOLDED=r.folded \
            ./prog $requests >/dev/null) || fail "compensate_longjmp: a run of $requests requests failed"
        c=$("$PROFDUMP" --compensation "$dir/r.json" | sed -n 's/^call_ns=\([0-9.]*\).*/\1/p')
        awk -v m=$mode -v c="${c:-0}" '{ print m, $1, $2, c }' "$dir/r.folded" >>"$dir/runs"
    done
done
awk -v n=$requests '
    BEGIN { calls["request", "total"] = 9 * n; calls["parse", "total"] = 8 * n
            calls["request", "self"] = 2 * n; calls["parse", "self"] = 15 * n }
    { k = $1 SUBSEP $2; if (!(k in low) || $3 < low[k]) low[k] = $3; if ($1 && $4 > call) call = $4 }
    END { bad = 0
      for (k in low) { split(k, p, SUBSEP); t = p[1] ? "c" : "u"; n = split(p[2], f, ";")
        m[t, "request", "total"] += low[k]; if (n == 1) m[t, "request", "self"] += low[k]
        if (f[n] == "parse") { m[t, "parse", "total"] += low[k]; m[t, "parse", "self"] += low[k] } }
      for (key in calls) { split(key, p, SUBSEP)
        c = m["c", p[1], p[2]]; u = m["u", p[1], p[2]]; lowest = u - calls[p[1], p[2]] * call
        printf "  %s %s: compensated %d, uncompensated %d, lowest allowed %d\n", p[1], p[2], c, u, lowest
        if (c > u * 1.5 || c < lowest - u * 0.2) bad = 1 }
      exit bad }' "$dir/runs" >"$dir/bounds"
result $? "compensate_longjmp: compensated times at most the uncompensated ones, at least those less every call's cost"
cat "$dir/bounds"
finish
