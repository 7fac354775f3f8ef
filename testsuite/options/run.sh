#!/bin/sh
# run.sh — README.md's tables of environment variables against the runtime's option table: every
# SPANPROF_* row of the README (in whichever table of it) must be the row the table prints, and
# every variable of the table must have its row.
#
# Environment: OPTIONSDOC (prints the table's rows), README (README.md).  There is no expected file
# to regenerate: README.md is the one, and its rows are written by hand from optionsdoc's.
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
make_work_dir

"$OPTIONSDOC" | sort >"$work/table"
# shellcheck disable=SC2016 # Markdown's backquotes, not a command
grep -E '^\| `SPANPROF(_[A-Z_]+)?` \|' "$README" | sort >"$work/readme"
compare_files "README rows [$(wc -l <"$work/table") variables]" "$work/table" "$work/readme" \
    "the rows to put in README.md: build/optionsdoc (from runtime/config/options.c)" \
    "- the option table, + README.md"
summary
