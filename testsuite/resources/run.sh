#!/bin/sh
# run.sh — the resource-profile tests: builds every sample in this folder with spanplugin (-O0 and
# -O2; C with gcc, C++ with g++), runs it with libspanprof-alloc.so preloaded and SPANPROF_ALLOC=1,
# and compares exit status, output, the resource fields of its profile (profdump --resources) and
# its allocation flame graph (stacks only, values dropped) with NAME.expected.
#
# Environment: CC, CXX, PLUGIN, INCLUDE_DIR, LIBDIR, PROFDUMP; HAVE_LIBUNWIND=yes for samples
# marked "test: needs-libunwind".  Optional: ONLY="a b"; REGEN=1 rewrites the expected files from
# the -O0 build (see ../lib.sh).
# A sample may carry lines:  /* test-env: VAR=VALUE ... */   extra environment (may override)
#                            /* test: no-preload */          run without the interposer
#                            /* test: needs-libunwind */     skipped without libunwind
#                            /* test-libs: NAME ... */       libNAME.so built next to the program
#                                 from SAMPLE_lib.inc with -DLIB_FN=NAME, for it to dlopen
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
make_work_dir

describe_run() {
    dir=$1 pid=$2
    print_run "$dir"
    for json in "$dir/out.$pid.json" "$dir"/out.*.json; do
        [ -f "$json" ] || continue
        other=${json%.json}
        other=${other##*.}
        if [ "$json" = "$dir/out.$pid.json" ]; then
            [ -n "${seen_main:-}" ] && continue
            seen_main=1
            echo "# profile"
        elif [ "$other" = "$pid" ]; then
            continue
        else
            echo "# profile of a child process"
        fi
        "$PROFDUMP" --resources "$json" 2>&1 | grep -v '^span \|^threads=\|^anomaly '
    done
    seen_main=
    if [ -f "$dir/alloc.$pid.folded" ]; then
        echo "# allocation stacks"
        sed 's/ [0-9]*$//' "$dir/alloc.$pid.folded" | sort -u
        # The estimate of the bytes allocated under each stack is checked by the sample itself
        # printing the true total; here: the sum of the values.
        awk '{ s += $NF } END { printf "# estimated bytes %d\n", s }' "$dir/alloc.$pid.folded" \
            >"$dir/estimate"
    fi
}

run_one() {
    src=$1 name=$2 label=$3 compiler=$4 level=$5
    build_sample "$src" "$name" "$label" "$compiler -g $level" || return
    # shellcheck disable=SC2013,SC2086 # the directive is a list of words; so are the flags
    for lib in $(sed -n 's|.*test-libs: \(.*\) \*/.*|\1|p' "$src"); do
        build "$name [$label]: lib$lib.so" "$dir/lib$lib.log" $compiler -g $level -fPIC -shared \
            -DLIB_FN="$lib" -x c "${src%.*}_lib.inc" -o "$dir/lib$lib.so" || return
    done
    preload="$LIBDIR/libspanprof-alloc.so"
    grep -q 'test: no-preload' "$src" && preload=
    run_sample LD_PRELOAD="$preload" SPANPROF_ALLOC=1 SPANPROF_HISTOGRAM=1 SPANPROF_JSON="$dir/out.%p.json" \
        SPANPROF_FOLDED= SPANPROF_ALLOC_FOLDED="$dir/alloc.%p.folded"
    describe_run "$dir" "$(cat "$dir/pid")" >"$dir/actual"
    if [ -f "$dir/estimate" ] && grep -q '^expect-bytes ' "$dir/stdout"; then
        # Sampled estimate within 25% of the true total (its spread is about 5% here).
        want=$(sed -n 's/^expect-bytes //p' "$dir/stdout")
        got=$(sed 's/# estimated bytes //' "$dir/estimate")
        if [ "$got" -lt $((want * 3 / 4)) ] || [ "$got" -gt $((want * 5 / 4)) ]; then
            echo "# estimate $got is not within 25% of $want" >>"$dir/actual"
        fi
    fi
    compare_expected "$name" "$label" "$dir/actual" "built with: $cmd"
}

# test_sample SRC NAME: both levels for one sample.
test_sample() {
    if grep -q 'test: needs-libunwind' "$1" && [ "${HAVE_LIBUNWIND:-no}" != yes ]; then
        skip "$2: built without libunwind (apt-get install libunwind-dev, re-run ./configure)"
        return
    fi
    case $1 in
    *.c) tag=gcc compiler=$CC ;;
    *) tag=g++ compiler=$CXX ;;
    esac
    for level in -O0 -O2; do
        run_one "$1" "$2" "$tag $level" "$compiler" "$level"
    done
}

for_each_test test_sample c cc
summary
