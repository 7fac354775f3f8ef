# check-all.sh — what `make check` runs: every suite named on the command line, each through its
# own make target, even after one has failed, then one summary of suites and tests with the
# command that reruns each failure; false if anything failed.
#
# Usage: sh testsuite/check-all.sh LOG_DIR SUITE... [-- SKIPPED_SUITE...]
# MAKE is the make to run the suites with.  Each suite's output goes to the terminal and to
# LOG_DIR/SUITE.log.  Tests are counted from the runners' closing lines ("NAME: N passed,
# N failed[, N skipped]", testsuite/lib.sh) and Check's ("Checks: N, Failures: N, Errors: N");
# a suite that printed none counts as one test, passed or failed by its exit status, and a failed
# suite whose lines show no failure (a runner that stopped early) counts one failed test more.
# shellcheck shell=sh
set -u
log_dir=$1
shift
mkdir -p "$log_dir"
make_cmd=${MAKE:-make}

suites_passed=0 suites_failed=0 suites_skipped=0
tests_passed=0 tests_failed=0 tests_skipped=0
failures=''
skipping=0
for suite in "$@"; do
    if [ "$suite" = -- ]; then
        skipping=1
        continue
    fi
    if [ "$skipping" = 1 ]; then
        suites_skipped=$((suites_skipped + 1))
        failures_skipped="${failures_skipped:-}  $suite (not configured)
"
        continue
    fi
    log="$log_dir/$suite.log"
    echo "=== $suite"
    # The status crosses the pipe through a file: the pipeline's own is tee's.
    { $make_cmd --no-print-directory "$suite"; echo $? >"$log.status"; } 2>&1 | tee "$log"
    status=$(cat "$log.status")
    rm -f "$log.status"
    # This suite's test counts: p f s, summed over its closing lines.
    counts=$(awk '
        /^[A-Za-z0-9_.-]+: [0-9]+ passed, [0-9]+ failed/ {
            p += $2; f += $4; if ($7 ~ /^skipped/) s += $6; seen = 1 }
        /^[0-9]+%: Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+/ {
            n = $3 + 0; bad = $5 + $7; p += n - bad; f += bad; seen = 1 }
        END { print (seen ? 1 : 0), p + 0, f + 0, s + 0 }' "$log")
    seen=${counts%% *}
    rest=${counts#* }
    p=${rest%% *}; rest=${rest#* }
    f=${rest%% *}; s=${rest#* }
    if [ "$seen" = 0 ]; then
        p=0 f=0 s=0
        if [ "$status" = 0 ]; then p=1; else f=1; fi
    elif [ "$status" != 0 ] && [ "$f" = 0 ]; then
        f=1
    fi
    tests_passed=$((tests_passed + p))
    tests_failed=$((tests_failed + f))
    tests_skipped=$((tests_skipped + s))
    if [ "$status" = 0 ]; then
        suites_passed=$((suites_passed + 1))
    else
        suites_failed=$((suites_failed + 1))
        failures="$failures  $suite: $make_cmd $suite   (output: $log)
"
    fi
done

echo
echo "=== make check: summary"
echo "suites: $suites_passed passed, $suites_failed failed, $suites_skipped skipped"
[ -n "${failures_skipped:-}" ] && printf 'skipped:\n%s' "$failures_skipped"
[ -n "$failures" ] && printf 'failed, rerun each with:\n%s' "$failures"
echo "tests, counted from each suite's closing lines (a suite without one counts as one test):"
line="$tests_passed passed, $tests_failed failed"
[ "$tests_skipped" -gt 0 ] && line="$line, $tests_skipped skipped"
echo "$line"
[ "$suites_failed" = 0 ]
