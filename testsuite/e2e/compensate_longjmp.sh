#!/bin/sh
# compensate_longjmp.sh — compensation when longjmp abandons spans (compensate_longjmp.c: parse
# longjmps out of 8 recursive activations of itself, 200,000 times).  An abandoned activation's
# exit never ran, so compensation may take out of it only what its enter cost.
#   One run writes JSON, folded stacks and pprof; the expected file holds its time-free
#   figures: no stack and no span at 0 ns (taking a whole call's cost out of each abandoned
#   activation left "request;parse 0" and, on a machine measuring 18-21 ns a call, both spans at
#   0), and each span's total and self time the same in the JSON, in the folded stacks, and in
#   `spanprof report` of either (within their rounding).  pprof is compared too when go is there.
#   Then, from the same JSON's times as recorded ("recorded_total_ns", "recorded_self_ns"), what
#   compensation took out of each span's total and self time: within what the calls each holds
#   cost (the run's own measured call_ns), and from request's self at least its own calls' inside
#   part.  One run's figures against each other: no second run whose machine was busier.
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

# What compensation took out of each figure, from the same run's JSON (its times as recorded
# beside the compensated ones, so no second run and no machine noise): never negative, never
# more than the whole measured cost of the calls the figure holds (a total its own and those
# below it: 9 a request for request, 8 for parse; a self time its own and its children's: 2
# and 15), and out of request's self time at least the inside part of its own calls, whose
# exits all ran (compensation that took nothing, or added the cost, fails here).  Each figure
# is rounded to the ns apart: 2 ns of room.
requests=200000
set -- $("$PROFDUMP" --compensation "$dir/p.json" | sed -n 's/^call_ns=\([0-9.]*\) inside_ns=\([0-9.]*\).*/\1 \2/p')
call=${1:-0} inside=${2:-0}
"$PROFDUMP" --times "$dir/p.json" | awk -v n=$requests -v call="$call" -v inside="$inside" '
    BEGIN { held["request", "total"] = 9; held["parse", "total"] = 8
            held["request", "self"] = 2; held["parse", "self"] = 15 }
    { for (i = 2; i <= NF; i++) { split($i, kv, "="); f[$1, kv[1]] = kv[2] } }
    END { bad = call <= 0
      for (k in held) { split(k, p, SUBSEP)
        got = f[p[1], p[2] "_ns"]; rec = f[p[1], "recorded_" p[2] "_ns"]
        most = held[k] * n * call + 2; least = (k == "request" SUBSEP "self") ? n * inside - 2 : 0
        printf "  %s %s: %d ns as recorded, %d compensated, %d taken out (allowed %.0f to %.0f)\n",
               p[1], p[2], rec, got, rec - got, least, most
        if (rec == "" || rec - got > most || rec - got < least) bad = 1 }
      exit bad }' >"$dir/bounds"
result $? "compensate_longjmp: taken out of each time, at most what its calls cost, out of request's self at least its own calls' inside part (call_ns $call, inside_ns $inside)"
cat "$dir/bounds"
finish
