# lib.sh — what the test runners share: counting results, comparing an output with its expected
# file (or rewriting it with REGEN=1), choosing samples with SAMPLES, and the closing line.
# A runner sets `here` (its folder) and `suite` (its name), then sources this file.
# shellcheck shell=sh disable=SC2154 # `here` and `suite` come from the runner

passed=0
failed=0
skipped=0

pass() {
    echo "PASS $*"
    passed=$((passed + 1))
}

fail() {
    echo "FAIL $*"
    failed=$((failed + 1))
}

skip() {
    echo "SKIP $*"
    skipped=$((skipped + 1))
}

# selected NAME: true when SAMPLES (space-separated names; empty means all) includes NAME.
selected() {
    [ -z "${SAMPLES:-}" ] && return 0
    case " $SAMPLES " in *" $1 "*) return 0 ;; esac
    return 1
}

# print_run DIR: the start of a sample's normalised result, from the files a runner left in DIR
# (status, stdout, stderr).
print_run() {
    echo "# exit $(cat "$1/status")"
    echo "# stdout"
    cat "$1/stdout"
    echo "# stderr"
    cat "$1/stderr"
}

# compare_expected NAME LABEL ACTUAL HINT [CONTEXT]
# Compares the file ACTUAL with $here/NAME.expected; on a mismatch prints CONTEXT (e.g. the
# build command), the diff and HINT (how to regenerate).  With REGEN=1 it rewrites the expected
# file instead.
compare_expected() {
    expected="$here/$1.expected"
    if [ "${REGEN:-0}" = 1 ]; then
        cp "$3" "$expected"
        echo "REGEN $1 [$2] -> $expected"
        return 0
    fi
    if diff -u "$expected" "$3" >"$3.diff" 2>&1; then
        pass "$1 [$2]"
        return 0
    fi
    fail "$1 [$2]"
    if [ -n "${5:-}" ]; then echo "  $5"; fi
    sed 's/^/  /' "$3.diff"
    echo "  if the new output is right: $4"
    return 1
}

# summary: the closing line "SUITE: N passed, N failed[, N skipped]"; false if anything failed.
summary() {
    if [ "$skipped" -gt 0 ]; then
        echo "$suite: $passed passed, $failed failed, $skipped skipped"
    else
        echo "$suite: $passed passed, $failed failed"
    fi
    [ "$failed" -eq 0 ]
}
