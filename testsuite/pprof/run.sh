#!/bin/sh
# run.sh — pprof output, read back by its real consumer, Go's `go tool pprof`.  Builds calls.c
# (known call counts on known stacks, two threads) with spanplugin and, per case, writes a pprof
# file at exit (SPANPROF_PPROF) or with `spanprof convert`, then compares what `go tool pprof`
# prints (exact call counts per stack; times masked) with CASE.expected:
#   runtime-threads  SPANPROF_PPROF=…%p… with SPANPROF_THREADS=1: stacks per thread, thread labels
#   runtime-merged   SPANPROF_PPROF without threads: the threads' equal stacks summed
#   runtime-count    SPANPROF=count: calls/count only (no clock was read)
#   convert-json     `spanprof convert` of the JSON profile: one sample per span, file and line
#   convert-cpu      the same of a SPANPROF_CPU=1 run: a cpu sample type, each span's value its
#                    JSON cpu_self_ns
#   convert-folded   `spanprof convert --calls --threads` of folded stacks written with
#                    SPANPROF=count SPANPROF_THREADS=1 SPANPROF_FILE_LINE=1
#   runtime-alloc    SPANPROF_ALLOC=1 with libspanprof-alloc.so: allocations per stack, exact,
#                    and per span from `spanprof convert` of the same run's JSON profile
#   static-runtime   the program linked with libspanprof.a, SPANPROF=count: runtime-count's profile
#   merge            `spanprof merge` of three runs' pprof files (SPANPROF_THREADS=1): calls
#                    per stack and thread tripled, wall times the exact sums of the inputs'; a
#                    count-mode profile, a folded file and gzip'd text refused with a message
#   runtime-idle     SPANPROF_IDLE=1 SPANPROF_THREADS=1: a "(outside spans)" sample per thread
#                    (wall time only), every stack's wall time the folded file's, and the main
#                    thread's stacks adding up to the run's wall time
#
# Environment: CC, PLUGIN, INCLUDE_DIR, LIBDIR, PROFDUMP, TOOL (the spanprof command), GO (the go command;
# empty: skipped).  Optional: ONLY="case …"; REGEN=1 rewrites the expected files (testsuite/lib.sh).
# `go tool pprof` gets its own HOME, caches and temporary directory under the scratch directory,
# and no network (GOPROXY=off, -symbolize=none: the files already name every function).
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"

if [ -z "${GO:-}" ]; then
    skip "pprof: go not found (install the Debian package golang-go and re-run ./configure)"
    finish
fi
make_work_dir
mkdir -p "$work/home" "$work/tmp"
export HOME="$work/home" GOCACHE="$work/home/cache" GOPATH="$work/home/go" GOENV=off \
       GOPROXY=off GOFLAGS= GOTOOLCHAIN=local GOTELEMETRY=off PPROF_TMPDIR="$work/tmp" \
       PPROF_BINARY_PATH="$work/none"

# The source is compiled from the scratch directory by its bare name, so profiles say calls.c.
cp "$here/calls.c" "$work/calls.c"

# pprof_show FILE MODE...: `go tool pprof` on FILE with the options of each MODE, normalised:
# run-dependent lines (start time, duration, wall-time values) masked, the scratch path dropped.
pprof_show() {
    file=$1
    shift
    for mode in "$@"; do
        echo "# go tool pprof $mode"
        # shellcheck disable=SC2086 # MODE is a list of options
        (cd "$work" && "$GO" tool pprof -symbolize=none $mode "$file" 2>&1)
        echo "# exit $?"
    done | sed -e "s|$work/||g" \
               -e '/^Time: /d' \
               -e 's/^Duration: [1-9][^,]*/Duration: (set)/' \
               -e 's/^\( *[0-9][0-9]*\)  *[0-9][0-9]*\(: [0-9 ]*\)$/\1 (ns)\2/'
}

# raw_to_folded: `go tool pprof -raw` of a calls/wall profile as sorted folded stacks with the
# wall time (root first, frames joined by ';').
raw_to_folded() {
    awk '/^Samples:/ { part = "s"; next }
         /^Locations/ { part = "l"; next }
         /^Mappings/ { part = "" }
         part == "s" && /^ *[0-9]+ +[0-9]+:/ {
             n++; ns[n] = $2; sub(/:$/, "", ns[n]); sub(/^[^:]*: */, ""); ids[n] = $0 }
         part == "l" && /^ *[0-9]+: / { id = $1; sub(/:$/, "", id); name[id] = $4 }
         END {
             for (i = 1; i <= n; i++) {
                 k = split(ids[i], f, " "); stack = ""
                 for (j = k; j >= 1; j--) stack = stack (j < k ? ";" : "") name[f[j]]
                 print stack " " ns[i]
             }
         }' | sort
}

# raw_to_folded_threads: the same for a profile with thread labels, each stack under its thread
# (frame names may hold spaces: "(outside spans)").
raw_to_folded_threads() {
    awk '/^Samples:/ { part = "s"; next }
         /^Locations/ { part = "l"; next }
         /^Mappings/ { part = "" }
         part == "s" && /^ *[0-9]+ +[0-9]+:/ {
             n++; ns[n] = $2; sub(/:$/, "", ns[n]); sub(/^[^:]*: */, ""); ids[n] = $0; next }
         part == "s" && /thread:\[/ { t = $0; sub(/^.*thread:\[/, "", t); sub(/\].*$/, "", t); th[n] = t }
         part == "l" && /^ *[0-9]+: / {
             id = $1; sub(/:$/, "", id); nm = $0
             sub(/^ *[0-9]+: [^ ]* M=[0-9]+ /, "", nm); sub(/ [^ ]*:[0-9]+ s=[0-9]+$/, "", nm)
             name[id] = nm }
         END {
             for (i = 1; i <= n; i++) {
                 k = split(ids[i], f, " "); stack = th[i]
                 for (j = k; j >= 1; j--) stack = stack ";" name[f[j]]
                 print stack " " ns[i]
             }
         }' | sort
}

build_calls() { # build_calls NAME LINK-FLAGS...: calls.c into $work/NAME
    name=$1
    shift
    cd "$work" || return 1
    # shellcheck disable=SC2086 # LINK-FLAGS may hold several flags in one word
    build "$name" "$work/$name.log" $CC -O2 -g -fplugin="$PLUGIN" -I"$INCLUDE_DIR" calls.c \
        -o "$name" $* -pthread
    built=$?
    cd "$here" || return 1
    return $built
}

# run_case NAME EXE ENV...: runs EXE in its own directory with ENV, prints its exit status,
# stdout and stderr and names the files it wrote.
run_case() {
    name=$1 exe=$2
    shift 2
    dir="$work/$name"
    mkdir -p "$dir"
    (cd "$dir" && env SPANPROF_FOLDED= "$@" "$work/$exe" >stdout 2>stderr)
    echo $? >"$dir/status"
    print_run "$dir"
    echo "# files"
    (cd "$dir" && ls | grep -v '^std\|^status$' | sed 's/[0-9][0-9]*/PID/')
}

check_case() { # check_case NAME: compares $work/NAME.actual
    compare_expected "$1" "go tool pprof" "$work/$1.actual"
}

build_calls calls -L"$LIBDIR" -Wl,--no-as-needed -lspanprof -Wl,-rpath,"$LIBDIR" || finish

if selected runtime-threads; then
    {
        run_case runtime-threads calls SPANPROF_THREADS=1 SPANPROF_PPROF=calls.%p.pb.gz
        pprof_show "$(cd "$work" && echo runtime-threads/calls.*.pb.gz)" "-traces -sample_index=calls" -raw
    } >"$work/runtime-threads.actual"
    check_case runtime-threads
fi

if selected runtime-merged; then
    {
        run_case runtime-merged calls SPANPROF_PPROF=calls.pb.gz SPANPROF_FOLDED=calls.folded
        pprof_show runtime-merged/calls.pb.gz "-top -sample_index=calls" "-traces -sample_index=calls"
        # The wall times, which the expected file cannot hold, must be the folded file's.
        (cd "$work/runtime-merged" && "$GO" tool pprof -symbolize=none -raw calls.pb.gz 2>&1) |
            raw_to_folded >"$work/runtime-merged/from-pprof"
        if sort "$work/runtime-merged/calls.folded" | cmp -s - "$work/runtime-merged/from-pprof"; then
            echo "# wall/nanoseconds per stack: the folded file's"
        else
            echo "# wall/nanoseconds per stack differ from the folded file's:"
            sort "$work/runtime-merged/calls.folded" | diff - "$work/runtime-merged/from-pprof"
        fi
    } >"$work/runtime-merged.actual"
    check_case runtime-merged
fi

if selected runtime-count; then
    {
        run_case runtime-count calls SPANPROF=count SPANPROF_PPROF=calls.pb.gz
        pprof_show runtime-count/calls.pb.gz -raw
    } >"$work/runtime-count.actual"
    check_case runtime-count
fi

# SPANPROF_CPU=1's JSON converted: a cpu/nanoseconds sample type, each span's value its JSON
# cpu_self_ns (the run's CPU times vary: compared, not printed).
if selected convert-cpu; then
    {
        run_case convert-cpu calls SPANPROF_CPU=1 SPANPROF_JSON=calls.json
        echo "# spanprof convert calls.json"
        (cd "$work/convert-cpu" && "$TOOL" convert calls.json 2>&1; echo "# exit $?")
        (cd "$work" && "$GO" tool pprof -symbolize=none -raw convert-cpu/calls.json.pb.gz 2>&1) |
            sed -n '/^Samples:/{n;p;}'
        (cd "$work" && "$GO" tool pprof -symbolize=none -raw convert-cpu/calls.json.pb.gz 2>&1) |
            awk '/^Samples:/ { part = "s"; next } /^Locations/ { part = "l"; next }
                 /^Mappings/ { part = "" }
                 part == "s" && /^ *[0-9]+ +[0-9]+ +[0-9]+:/ { n++; cpu[n] = $3; sub(/:$/, "", cpu[n]); loc[n] = $4 }
                 part == "l" && /^ *[0-9]+: / { id = $1; sub(/:$/, "", id); name[id] = $4 }
                 END { for (i = 1; i <= n; i++) print name[loc[i]], cpu[i] }' | sort >"$work/convert-cpu/pprof"
        "$PROFDUMP" --times "$work/convert-cpu/calls.json" |
            sed -n 's/^\([^ ]*\) .*cpu_self_ns=\([0-9]*\).*/\1 \2/p' | sort >"$work/convert-cpu/json"
        if [ -s "$work/convert-cpu/json" ] && cmp -s "$work/convert-cpu/json" "$work/convert-cpu/pprof"; then
            echo "each span's cpu value is its JSON cpu_self_ns"
        else
            echo "cpu values differ from the JSON's cpu_self_ns:"
            diff "$work/convert-cpu/json" "$work/convert-cpu/pprof"
        fi
    } >"$work/convert-cpu.actual"
    check_case convert-cpu
fi

if selected convert-json; then
    {
        run_case convert-json calls SPANPROF_JSON=calls.json
        echo "# spanprof convert calls.json"
        (cd "$work/convert-json" && "$TOOL" convert calls.json 2>&1; echo "# exit $?")
        pprof_show convert-json/calls.json.pb.gz "-top -sample_index=calls" -raw
    } >"$work/convert-json.actual"
    check_case convert-json
fi

if selected convert-folded; then
    {
        run_case convert-folded calls SPANPROF=count SPANPROF_THREADS=1 SPANPROF_FILE_LINE=1 \
            SPANPROF_FOLDED=calls.folded
        echo "# spanprof convert --calls --threads -o calls.pb.gz calls.folded"
        (cd "$work/convert-folded" && "$TOOL" convert --calls --threads -o calls.pb.gz calls.folded 2>&1
         echo "# exit $?")
        pprof_show convert-folded/calls.pb.gz -traces -raw
    } >"$work/convert-folded.actual"
    check_case convert-folded
fi

if selected runtime-alloc; then
    {
        run_case runtime-alloc calls LD_PRELOAD="$LIBDIR/libspanprof-alloc.so" SPANPROF_ALLOC=1 \
            SPANPROF_PPROF=calls.pb.gz SPANPROF_JSON=calls.json
        pprof_show runtime-alloc/calls.pb.gz "-traces -sample_index=alloc_objects" \
            "-top -sample_index=alloc_space"
        echo "# spanprof convert calls.json"
        (cd "$work/runtime-alloc" && "$TOOL" convert calls.json 2>&1; echo "# exit $?")
        pprof_show runtime-alloc/calls.json.pb.gz "-top -sample_index=alloc_objects" \
            "-top -sample_index=alloc_space"
    } >"$work/runtime-alloc.actual"
    check_case runtime-alloc
fi

if selected runtime-idle; then
    {
        run_case runtime-idle calls SPANPROF_IDLE=1 SPANPROF_THREADS=1 SPANPROF_PPROF=calls.pb.gz \
            SPANPROF_FOLDED=calls.folded SPANPROF_JSON=calls.json
        pprof_show runtime-idle/calls.pb.gz -raw
        (cd "$work/runtime-idle" && "$GO" tool pprof -symbolize=none -raw calls.pb.gz 2>&1) |
            raw_to_folded_threads >"$work/runtime-idle/from-pprof"
        if sort "$work/runtime-idle/calls.folded" | cmp -s - "$work/runtime-idle/from-pprof"; then
            echo "# wall/nanoseconds per stack: the folded file's"
        else
            echo "# wall/nanoseconds per stack differ from the folded file's:"
            sort "$work/runtime-idle/calls.folded" | diff - "$work/runtime-idle/from-pprof"
        fi
        # The main thread's time runs from the process's start: its stacks, the time outside
        # spans included, add up to the run's wall time (two clocks, read a moment apart: 10%).
        wall=$(sed -n 's/^ *"wall_ns": \([0-9]*\),*$/\1/p' "$work/runtime-idle/calls.json" | head -n 1)
        awk -v wall="$wall" '/^main;/ { sum += $NF }
            END { d = sum - wall; if (d < 0) d = -d
                  if (wall > 0 && d <= wall / 10) print "# main thread: stacks add up to the wall time"
                  else print "# main thread: stacks add up to " sum " ns, the wall time is " wall " ns" }' \
            "$work/runtime-idle/calls.folded"
    } >"$work/runtime-idle.actual"
    check_case runtime-idle
fi

if selected merge; then
    {
        run_case merge calls SPANPROF_THREADS=1 SPANPROF_PPROF=calls.%p.pb.gz >/dev/null
        run_case merge calls SPANPROF_THREADS=1 SPANPROF_PPROF=calls.%p.pb.gz >/dev/null
        run_case merge calls SPANPROF_THREADS=1 SPANPROF_PPROF=calls.%p.pb.gz
        d="$work/merge"
        echo "# spanprof merge -o merged.pb.gz calls.PID.pb.gz (3 files)"
        (cd "$d" && "$TOOL" merge -o merged.pb.gz calls.*.pb.gz 2>&1; echo "# exit $?")
        pprof_show merge/merged.pb.gz "-traces -sample_index=calls" -raw
        # Wall times: the merged file's, stack by stack, are the sums of the inputs'.
        for f in "$d"/calls.*.pb.gz; do
            (cd "$d" && "$GO" tool pprof -symbolize=none -raw "$f" 2>&1) | raw_to_folded_threads
        done | awk '{ v = $NF; sub(/ [0-9]+$/, ""); sum[$0] += v } END { for (k in sum) print k " " sum[k] }' |
            sort >"$d/summed"
        (cd "$d" && "$GO" tool pprof -symbolize=none -raw merged.pb.gz 2>&1) | raw_to_folded_threads >"$d/merged"
        if cmp -s "$d/summed" "$d/merged"; then
            echo "# wall/nanoseconds per stack and thread: the sums of the inputs'"
        else
            echo "# wall/nanoseconds per stack and thread differ from the sums of the inputs':"
            diff "$d/summed" "$d/merged"
        fi
        # Inputs of another kind.
        mkdir -p "$d/count"
        (cd "$d/count" && SPANPROF=count SPANPROF_FOLDED=calls.folded SPANPROF_PPROF=count.pb.gz "$work/calls" >/dev/null)
        printf 'not a profile\n' | gzip >"$d/text.gz"
        set -- "$d"/calls.*.pb.gz
        one=${1##*/}
        for args in "count/count.pb.gz $one" "$one count/calls.folded" "$one text.gz"; do
            echo "# spanprof merge -o bad.pb.gz $args" | sed 's/[0-9][0-9]*/PID/g'
            # shellcheck disable=SC2086 # a list of files
            (cd "$d" && "$TOOL" merge -o bad.pb.gz $args 2>&1; echo "# exit $?") | sed 's/calls\.[0-9]*\./calls.PID./g'
        done
    } >"$work/merge.actual"
    check_case merge
fi

# The static runtime carries the encoder too; linked as the manual says.
if selected static-runtime && build_calls calls-static -u __spanprof_enter "$LIBDIR/libspanprof.a" \
       "$(pkg-config --libs json-c libprotobuf-c zlib)"; then
    {
        run_case static-runtime calls-static SPANPROF=count SPANPROF_PPROF=calls.pb.gz
        pprof_show static-runtime/calls.pb.gz -raw
    } >"$work/static-runtime.actual"
    check_case static-runtime
fi

summary
