#!/bin/sh
# run.sh — README.md's tables of environment variables against the runtime's option table: every
# SPANPROF_* row of the README (in whichever table of it) must be the row the table prints, and
# every variable of the table must have its row.
#
# Environment: OPTIONSDOC (prints the table's rows), README (README.md).
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC2034 # read by lib.sh
suite=options
# shellcheck source=testsuite/lib.sh
. "$here/../lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/spanprof-options-tests.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$OPTIONSDOC" | sort >"$work/table"
grep -E '^\| `SPANPROF(_[A-Z_]+)?` \|' "$README" | sort >"$work/readme"
if diff -u "$work/table" "$work/readme" >"$work/diff"; then
    pass "README rows [$(wc -l <"$work/table") variables]"
else
    fail "README rows (- the option table, + README.md)"
    sed 's/^/  /' "$work/diff"
    echo "  the rows to put in README.md: build/optionsdoc (from runtime/config/options.c)"
fi
summary
