#!/bin/sh
# run.sh — the tests of a cross build for arm64 (./configure --host=aarch64-linux-gnu; make
# check-arm64): the other suites' runners, unchanged, with every program they build and the
# build's own tools (profdump, tracecheck, the spanprof command, all arm64 programs) run by
# EMULATOR (qemu-aarch64).  Their expected files are the x86-64 ones: the same calls and stacks.
# Each program runs as a process of its own name, as natively: the kernel names a process (and
# its main thread, whose name profiles show) after the file executed, which would be qemu's, so
# qemu is executed through a link of the program's name.
#
#   plugin     the sample matrix: every sample at -O0, -O2, -O3, -O2 -flto and -O3 -flto, C with
#              gcc and as C++ with g++, exact and count modes (early returns, recursion, threads,
#              fork, exceptions, setjmp/longjmp repair, tail calls, noreturn, progress points)
#   pac        the samples that longjmp (the repair reads and compares return addresses), and
#              recursion and threads, at -O0 and -O2 with pointer authentication: the samples
#              built with PAC_FLAGS (-mbranch-protection=standard), the runtime in PAC_LIBDIR too
#              (qemu's default CPU signs and checks return addresses)
#   signals    spans in signal handlers (10 kHz SIGALRM, alternate stacks, siglongjmp, signals
#              at start-up and while call paths are made), at -O2
#   lifecycle  signal deaths, dumps, dlclose, two runtimes, thread churn, the writer thread
#   sample     SPANPROF=sample: exact calls, the sampler thread, fork, no EINTR
#   trace      SPANPROF_TRACE: threads, a ring that wraps, thread churn (the inline code's push)
#   patch      patch points: nops with recording off, a budget's spans patched under threads
#   cli        the tool's own tests
#
# What is not run under qemu, and why (each named by a SKIP line):
#   - the tests that fork while the runtime's writer thread runs (plugin, sample and trace fork,
#     lifecycle's dlclose): qemu 7.2 (Debian 12) aborts the child on its own assertions
#     (qemu_plugin_vcpu_init_hook, cpu_exec) when a guest with threads forks;
#   - lifecycle's thread_churn: its resident sizes are qemu's, whose translation caches grow
#     with the threads (6 GB after 20,000, against 64 MiB natively);
#   - sample's sampler_thread: it lists /proc/self/task, where qemu's own thread shows;
#   - the lifecycle tests that exec (exec_*, descendants): qemu-user runs one program; a program
#     it runs that execs an arm64 program asks the kernel, which cannot run it without a binfmt
#     handler for qemu (not registered on a build machine by default);
#   - the lifecycle tests whose program dies of SIGSEGV, SIGABRT or SIGQUIT (crash*, abort,
#     signal_death, own_handler*): qemu reports the guest's core-dumping signal on stderr itself
#     ("qemu: uncaught target signal …"), which the expected stderr does not have;
#   - the signals suite's allocation mode, the sample suite's allocation test and the trace
#     suite's inline test (a library counting calls into the runtime): LD_PRELOAD in
#     the environment is read by qemu's own (x86-64) dynamic loader too, which refuses the arm64
#     library on stderr;
#   - the sample suite's accuracy tests: they load every core with busy loops and compare time
#     shares, which under an emulator are the emulator's.
#
# Environment: as the runners: CC, CXX, PLUGIN, INCLUDE_DIR, LIBDIR, PROFDUMP, TRACECHECK, TOOL,
# RUNTIME_LIBS; EMULATOR (required: the command that runs an arm64 program); PAC_LIBDIR and
# PAC_FLAGS (the pac suite, skipped without them).  ONLY picks suites ("plugin signals"); REGEN
# is passed to the runners.
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
if [ -z "${EMULATOR:-}" ]; then
    echo "arm64: EMULATOR is empty: configure a cross build (./configure --host=aarch64-linux-gnu) with qemu-user installed" >&2
    exit 2
fi
make_work_dir
suites=${ONLY:-plugin pac signals lifecycle sample trace patch cli}
ONLY=

# emulate PROGRAM ARGS...: EMULATOR (qemu and its options) run through a link named PROGRAM.
mkdir -p "$work/bin" "$work/names"
qemu=$(command -v "${EMULATOR%% *}") || {
    echo "arm64: EMULATOR's program '${EMULATOR%% *}' is not found" >&2
    exit 2
}
qemu_options=${EMULATOR#"${EMULATOR%% *}"}
cat >"$work/bin/emulate" <<EOF
#!/bin/sh
name=\$(basename "\$1")
link="$work/names/\$name/\$name"
[ -e "\$link" ] || { mkdir -p "\${link%/*}" && ln -s "$qemu" "\$link"; } 2>/dev/null
exec "\$link"$qemu_options "\$@"
EOF
chmod +x "$work/bin/emulate"
EMULATOR=$work/bin/emulate

# The build's tools, as commands that run them under the emulator.
for tool in PROFDUMP TRACECHECK TOOL; do
    eval "path=\${$tool:-}"
    [ -n "$path" ] || continue
    wrapper="$work/bin/$(basename "$path")"
    printf '#!/bin/sh\nexec %s %s "$@"\n' "$EMULATOR" "$path" >"$wrapper"
    chmod +x "$wrapper"
    eval "$tool=\$wrapper"
done
export EMULATOR PROFDUMP TRACECHECK TOOL

# suite NAME[:LABEL] ONLY-LIST VAR=VALUE...: runs NAME's runner with those tests (empty: all)
# and that environment; its PASS/FAIL/SKIP lines are shown and counted here.
suite() {
    name=${1%%:*} label=${1#*:} only=$2
    shift 2
    echo "## $label${only:+: $only}"
    env ONLY="$only" "$@" sh "$here/../$name/run.sh" >"$work/$name.log" 2>&1
    cat "$work/$name.log"
    line=$(tail -n 1 "$work/$name.log")
    n_pass=$(echo "$line" | sed -n 's/.*: \([0-9]*\) passed.*/\1/p')
    n_fail=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
    n_skip=$(echo "$line" | sed -n 's/.* \([0-9]*\) skipped.*/\1/p')
    if [ -z "$n_pass" ] || [ -z "$n_fail" ]; then
        fail "$name: the runner ended without its summary line"
        return
    fi
    passed=$((passed + n_pass))
    failed=$((failed + n_fail))
    skipped=$((skipped + ${n_skip:-0}))
}

# tests_but SUITE TESTS: the names of SUITE's test programs but those TESTS.
tests_but() {
    for t in "$here/../$1"/*.c "$here/../$1"/*.cc; do
        [ -f "$t" ] || continue
        t=${t##*/}
        t=${t%.*}
        case " $2 " in *" $t "*) ;; *) printf '%s ' "$t" ;; esac
    done
}

# not_run SUITE TESTS REASON: a SKIP line per test.
not_run() {
    for t in $2; do skip "$1 $t under qemu: $3"; done
}

for s in $suites; do
    case $s in
    plugin)
        suite plugin "$(tests_but plugin fork)"
        not_run plugin fork "qemu 7.2 aborts a child forked by a guest with threads"
        ;;
    signals)
        suite signals "" LEVELS=-O2 SIGNAL_MODES="default count sample histogram cpu trace"
        not_run signals "sigalrm-alloc" "LD_PRELOAD is read by qemu's own dynamic loader too"
        ;;
    lifecycle)
        exec_tests="descendants exec_clean_env exec_self exec_self_pid exec_static"
        core_tests="abort crash crash_chained own_handler own_handler_early signal_death"
        suite lifecycle "$(tests_but lifecycle "$exec_tests $core_tests writer_stuck dlclose thread_churn")"
        not_run lifecycle dlclose "qemu 7.2 aborts a child forked by a guest with threads"
        not_run lifecycle thread_churn "resident sizes are qemu's, its caches grow with the threads"
        not_run lifecycle "$exec_tests" "exec of an arm64 program needs a binfmt handler for qemu"
        not_run lifecycle "$core_tests" "qemu reports the core-dumping signal on stderr itself"
        not_run lifecycle writer_stuck "LD_PRELOAD is read by qemu's own dynamic loader too"
        ;;
    sample)
        suite sample "before_first_span no_eintr"
        not_run sample fork "qemu 7.2 aborts a child forked by a guest with threads"
        not_run sample sampler_thread "it lists /proc/self/task, where qemu's own thread shows"
        not_run sample "accuracy accuracy_long accuracy_one_cpu" \
            "busy loops on every core, and time shares that are the emulator's"
        ;;
    trace)
        suite trace "full tiny churn bad-buffer inline"
        not_run trace fork "qemu 7.2 aborts a child forked by a guest with threads"
        ;;
    pac)
        if [ -z "${PAC_LIBDIR:-}" ] || [ -z "${PAC_FLAGS:-}" ]; then
            skip "pac: PAC_LIBDIR and PAC_FLAGS are not set"
            continue
        fi
        suite "plugin:pac ($PAC_FLAGS)" \
            "longjmp noreturn recursion setjmp_callback setjmp_indirect setjmp_nested setjmp_recursion setjmp_stack_args setjmp_threads threads" \
            LIBDIR="$PAC_LIBDIR" SAMPLE_CFLAGS="$PAC_FLAGS" LEVELS="O0 O2"
        ;;
    patch) suite patch "" RUNTIME_LIBS="${RUNTIME_LIBS:-}" ;;
    cli) suite cli "" SPANPROF_TOOL="$TOOL" ;;
    *)
        echo "arm64: no suite here is named '$s' (plugin pac signals lifecycle sample trace patch cli)" >&2
        exit 2
        ;;
    esac
done
summary
