# window_range.awk — from phases.c's "b_tenths" counts (its phase_b calls in each tenth of a
# second, one line), the fewest and the most calls any window of D seconds held: "LO HI".  A
# window of D seconds taken elsewhere (a pprof window, a prometheus range) starts and ends
# inside tenths, so LO is the least over D - 0.1 s of whole tenths and HI the most over
# D + 0.1 s.  The last tenth (phase B's end, cut short) is left out.
# Usage: echo "$tenths" | awk -v d=SECONDS -f window_range.awk
function extreme(len, want_max,   i, j, sum, best, found) {
    found = 0
    for (i = 1; i + len - 1 <= n; i++) {
        sum = 0
        for (j = i; j < i + len; j++)
            sum += t[j]
        if (!found || (want_max ? sum > best : sum < best))
            best = sum
        found = 1
    }
    return found ? best : 0
}
{
    n = NF - 1
    for (i = 1; i <= n; i++)
        t[i] = $i
    len = int(d * 10 + 0.5)
    printf "%d %d\n", extreme(len - 1 > 0 ? len - 1 : 1, 0), extreme(len + 1, 1)
}
