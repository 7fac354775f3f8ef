#!/bin/sh
# cmake.sh — the installed CMake package, used as the README says, from a scratch project built
# against a scratch install (a prefix no linker or loader searches): find_package(spanprof) and
# target_link_libraries(... spanprof::spanprof) build a program whose marked function is a span
# and that runs without LD_LIBRARY_PATH; spanprof_instrument(TARGET ALL) instruments that one
# target whole-program (its unmarked functions are spans) and no other; a target that does not
# use the package is not instrumented at all; a bad spanprof_instrument call is a CMake error.
# A static, an object and a shared library instrumented with ALL each give their spans to a
# program that links them and is neither instrumented nor compiled with the plugin: the runtime
# comes with the library, also through another static library's private link; a program given
# the objects as $<TARGET_OBJECTS:...> links spanprof::runtime itself.
# Environment: MAKE, CC, PROFDUMP.  Skipped when cmake is not installed.
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
top=$(cd "$here/../.." && pwd)
make_work_dir
selected cmake || finish
if ! command -v cmake >/dev/null 2>&1; then
    skip "cmake: cmake is not installed (apt-get install cmake)"
    finish
fi
prefix=$work/opt
$MAKE -s -C "$top" install prefix="$prefix" plugindir="$prefix/gcc-plugins" >"$work/install.log" 2>&1
result $? "cmake: make install into a scratch prefix"
test -f "$prefix/lib/cmake/spanprof/spanprofConfig.cmake"
result $? "cmake: lib/cmake/spanprof/spanprofConfig.cmake installed"

project=$work/project
mkdir -p "$project"
cat >"$project/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.15)
project(scratch C)
find_package(spanprof 0.1 REQUIRED)
add_executable(marked marked.c)
target_link_libraries(marked PRIVATE spanprof::spanprof)
add_executable(whole whole.c)
target_link_libraries(whole m)    # the plain signature: spanprof_instrument must not clash with it
spanprof_instrument(whole ALL OPTIONS min-size=0)   # every function, the small ones too
add_executable(plain plain.c)

# Libraries instrumented whole-program, used by programs that are not.
add_library(static_lib STATIC static_lib.c)
spanprof_instrument(static_lib ALL OPTIONS min-size=0)
add_executable(static use_static.c)
target_link_libraries(static static_lib)
add_library(wrapper STATIC wrapper.c)          # the runtime through a private link ($<LINK_ONLY:...>)
target_link_libraries(wrapper PRIVATE static_lib)
add_executable(wrapped use_wrapped.c)
target_link_libraries(wrapped PRIVATE wrapper)
add_library(object_lib OBJECT object_lib.c)
spanprof_instrument(object_lib ALL OPTIONS min-size=0)
add_executable(object use_object.c)
target_link_libraries(object PRIVATE object_lib)
add_executable(objects use_objects.c $<TARGET_OBJECTS:object_lib>)
target_link_libraries(objects PRIVATE spanprof::runtime)   # objects alone carry no link
add_library(shared_lib SHARED shared_lib.c)
spanprof_instrument(shared_lib ALL OPTIONS min-size=0)
add_executable(shared use_shared.c)
target_link_libraries(shared PRIVATE shared_lib)
CMAKE
# Each library: KIND_work calls KIND_step; each program calls KIND_work twice, 3 steps in all.
for kind in static object shared; do
    cat >"$project/${kind}_lib.c" <<C
static volatile int sink;
__attribute__((noinline)) static void ${kind}_step(int i) { sink += i; }
__attribute__((noinline)) void ${kind}_work(int n)
{
    for (int i = 0; i < n; i++)
        ${kind}_step(i);
}
C
done
for prog in static:static object:object objects:object shared:shared; do
    cat >"$project/use_${prog%%:*}.c" <<C
#include <stdio.h>
void ${prog#*:}_work(int n);
int main(void)
{
    ${prog#*:}_work(2);
    ${prog#*:}_work(1);
    puts("${prog%%:*}");
    return 0;
}
C
done
cat >"$project/wrapper.c" <<'C'
void static_work(int n);
void wrapper_work(void) { static_work(2); static_work(1); }
C
cat >"$project/use_wrapped.c" <<'C'
#include <stdio.h>
void wrapper_work(void);
int main(void)
{
    wrapper_work();
    puts("wrapped");
    return 0;
}
C
cat >"$project/marked.c" <<'C'
#include <spanprof.h>
#include <stdio.h>
static volatile int sink;
__attribute__((span, noinline)) static void marked_work(int i) { sink += i; }
__attribute__((noinline)) static void unmarked_work(int i) { sink -= i; }
int main(void)
{
    for (int i = 0; i < 3; i++)
        marked_work(i);
    unmarked_work(1);
    puts("marked");
    return 0;
}
C
sed -e 's/marked_work/whole_work/g; s/"marked"/"whole"/' -e 's/#include <spanprof.h>//' \
    -e 's/__attribute__((span, noinline))/__attribute__((noinline))/' "$project/marked.c" >"$project/whole.c"
sed -e 's/marked_work/plain_work/g; s/"marked"/"plain"/' -e 's/#include <spanprof.h>//' \
    -e 's/__attribute__((span, noinline))/__attribute__((noinline))/' "$project/marked.c" >"$project/plain.c"

(cd "$project" && cmake -S . -B build -DCMAKE_C_COMPILER="${CC:-gcc}" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON) >"$work/configure.log" 2>&1
status=$?
result $status "cmake: a project using find_package + target_link_libraries configures"
[ $status -eq 0 ] || sed 's/^/  | /' "$work/configure.log"
# One build per program, so that one that does not link is named alone.
programs="marked whole plain static wrapped object objects shared"
for prog in $programs; do
    (cd "$project" && cmake --build build --target "$prog") >"$work/build-$prog.log" 2>&1
    status=$?
    result $status "cmake: program '$prog' builds"
    [ $status -eq 0 ] || sed 's/^/  | /' "$work/build-$prog.log"
done

# Each program run from its own folder, no LD_LIBRARY_PATH: the rpath finds the runtime.
for prog in $programs; do
    mkdir -p "$work/run-$prog"
    (cd "$work/run-$prog" && env -u LD_LIBRARY_PATH SPANPROF_JSON=app.json SPANPROF_FOLDED=app.folded \
        "$project/build/$prog" >stdout 2>stderr)
    echo "# $prog: exit $?, stdout $(cat "$work/run-$prog/stdout")" >>"$work/actual"
    cat "$work/run-$prog/stderr" >>"$work/actual"
    if [ -f "$work/run-$prog/app.json" ]; then
        "$PROFDUMP" "$work/run-$prog/app.json" "$work/run-$prog/app.folded" | grep '^span ' >>"$work/actual"
    else
        echo "(no profile)" >>"$work/actual"
    fi
done
{
    echo "# marked: exit 0, stdout marked"
    echo "span marked_work calls=3"
    echo "# whole: exit 0, stdout whole"
    echo "span main calls=1"
    echo "span unwhole_work calls=1"
    echo "span whole_work calls=3"
    echo "# plain: exit 0, stdout plain"
    echo "(no profile)"
    for prog in static:static wrapped:static object:object objects:object shared:shared; do
        echo "# ${prog%%:*}: exit 0, stdout ${prog%%:*}"
        echo "span ${prog#*:}_step calls=3"
        echo "span ${prog#*:}_work calls=2"
    done
} >"$work/expected"
compare_files "cmake: the marked target's span, the whole-program target's every function, nothing from the plain one, the instrumented libraries' functions in the programs that link them" \
    "$work/expected" "$work/actual" "cmake/spanprofConfig.cmake.in builds these targets"

# Linking an instrumented library does not bring the plugin into the program's own compiles.
grep -- '-fplugin.*/use_[a-z]*\.c"' "$project/build/compile_commands.json" >"$work/plugin-in-programs"
result $((! $?)) "cmake: the programs that link instrumented libraries are compiled without the plugin"
[ -s "$work/plugin-in-programs" ] && sed 's/^/  | /' "$work/plugin-in-programs"

nm "$project/build/plain" | grep -q spanprof
result $((! $?)) "cmake: the target that does not use the package has no spanprof symbol"

# A call the function cannot take: a CMake error naming the problem.
cat >>"$project/CMakeLists.txt" <<'CMAKE'
spanprof_instrument(whole FUNCTIONS no-such-list.txt)
CMAKE
(cd "$project" && cmake -S . -B build) >"$work/bad.log" 2>&1
status=$?
tr -s " \n" "  " <"$work/bad.log" | grep -q "spanprof_instrument: FUNCTIONS file .[^ ]*/no-such-list.txt. does not exist"
result $(( status == 0 || $? )) "cmake: spanprof_instrument with a missing FUNCTIONS file is a CMake error naming it"
summary
