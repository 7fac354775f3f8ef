# rowtable.awk — one Markdown row of a real-program benchmark table (speedtest1.sh, zstd.sh) from
# the runs recorded in the results file, "LABEL|REP|CPU|WALL|RSS_KIB|BYTES|STATE" lines: the
# median CPU seconds, the median of the CPU ratio to the "plain" run of the same repetition, the
# median wall seconds and peak RSS, and the output's size.  Variables: label (the row), what
# (its description).  Usage: awk -F'|' -v label=... -v what=... -f rowtable.awk RESULTS
function median(a, n,    i, j, t) {
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function size(b) {
    return b >= 1e9 ? sprintf("%.1f GB", b / 1e9) : b >= 1e6 ? sprintf("%.1f MB", b / 1e6) : b >= 1e3 ? sprintf("%.0f kB", b / 1e3) : b " B"
}
$1 == "plain" { base[$2] = $3 }
$1 == label { n++; cpu[n] = $3; wall[n] = $4; rss[n] = $5; bytes = $6; state = $7; rep[n] = $2 }
END {
    if (state == "pending") { printf "| %s | %s | pending: the runtime does not know this setting yet | | | | |\n", label, what; exit }
    if (state == "failed") { printf "| %s | %s | failed | | | | |\n", label, what; exit }
    for (i = 1; i <= n; i++) ratio[i] = base[rep[i]] > 0 ? cpu[i] / base[rep[i]] : 0
    printf "| %s | %s | %.2f | %.2f | %.2f | %.1f MiB | %s |\n", label, what, median(cpu, n),
           median(ratio, n), median(wall, n), median(rss, n) / 1024, size(bytes)
}
