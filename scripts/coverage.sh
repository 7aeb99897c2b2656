#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Which library source files a set of tests reaches: builds fwdio with gcov
# instrumentation (build-coverage/, Debug, the threading checks on as in the
# sanitizer builds), runs the tests of one ctest label, and lists every source
# file of runtime/, forwarder/ and mpiio/ with the share of its lines they
# executed. Exits non-zero if any file was not reached at all.
#
# The default label is `sanitize`, the subset the ASan and TSan builds of
# scripts/test.sh run: this is how the suite shows that every library file is
# still exercised under both sanitizers.
#
# Usage: scripts/coverage.sh [--label LABEL] [--build DIR] [--jobs N]
#   --label LABEL   ctest label to run (default sanitize)
#   --build DIR     build tree (default build-coverage)
#   --jobs N        ctest -j (default as scripts/test.sh: FWDIO_TEST_JOBS or 4)
set -euo pipefail

say() { printf 'coverage: %s\n' "$*"; }
die() { printf 'coverage: error: %s\n' "$*" >&2; exit 1; }

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
label=sanitize
build=build-coverage
jobs=${FWDIO_TEST_JOBS:-4}
while [[ $# -gt 0 ]]; do
    case $1 in
        --label) label=${2:?--label needs a value}; shift 2 ;;
        --build) build=${2:?--build needs a value}; shift 2 ;;
        --jobs) jobs=${2:?--jobs needs a value}; shift 2 ;;
        -h|--help)
            sed -n '3,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
            exit 0 ;;
        *) die "unknown argument: $1 (see --help)" ;;
    esac
done
[[ $build == /* ]] || build=$repo_root/$build

# Open MPI's (the default MPI here): root and oversubscription. The tests of
# an MPICH build need neither (tests/CMakeLists.txt).
if [[ $(id -u) -eq 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_rmaps_base_oversubscribe=1

bash "$repo_root/scripts/setup.sh" "$build" -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_FLAGS=--coverage -DCMAKE_EXE_LINKER_FLAGS=--coverage \
    -DCMAKE_SHARED_LINKER_FLAGS=--coverage
find "$build" -name '*.gcda' -delete
say "running ctest -L $label in $build"
ctest --test-dir "$build" -L "$label" -j "$jobs" --output-on-failure </dev/null ||
    say "some tests failed (coverage still listed)"

# The library's object of a source file: CMake puts a target's objects under
# CMakeFiles/<target>.dir/<source path relative to the target's directory>.
# Only the library targets count (unit tests compile some sources again).
object_of() {
    local src=$1 rel=${1#"$repo_root"/}
    case $rel in
        mpiio/*) printf '%s' "$build/mpiio/CMakeFiles/fwdio-mpiio.dir/${rel#mpiio/}.gcno" ;;
        *) printf '%s' "$build/CMakeFiles/fwdio.dir/$rel.gcno" ;;
    esac
}

unreached=0
total_files=0
printf '%-28s %8s %8s\n' file lines executed
for src in "$repo_root"/runtime/*.c "$repo_root"/forwarder/*.c "$repo_root"/mpiio/*.c; do
    rel=${src#"$repo_root"/}
    total_files=$((total_files + 1))
    gcno=$(object_of "$src")
    if [[ ! -f $gcno ]]; then
        printf '%-28s %8s %8s  NOT BUILT\n' "$rel" - -
        unreached=$((unreached + 1))
        continue
    fi
    # -o names the object file: gcov finds <object>.gcno/.gcda beside it.
    line=$(cd "$build" && gcov -n -o "${gcno%.gcno}.o" "$src" 2>/dev/null |
           awk -v f="$(basename "$src")" '
               /^File / { want = index($0, "/" f "'"'"'") > 0 }
               want && /^Lines executed:/ { print; exit }')
    pct=$(sed -nE 's/^Lines executed:([0-9.]+)% of ([0-9]+).*/\1/p' <<<"$line")
    n=$(sed -nE 's/^Lines executed:([0-9.]+)% of ([0-9]+).*/\2/p' <<<"$line")
    if [[ -z $pct ]]; then
        pct=0.00
        n=$(grep -c '' "$src")
    fi
    mark=""
    if awk -v p="$pct" 'BEGIN { exit !(p == 0) }'; then
        mark="  NOT REACHED"
        unreached=$((unreached + 1))
    fi
    printf '%-28s %8s %7s%%%s\n' "$rel" "$n" "$pct" "$mark"
done
if [[ $unreached -gt 0 ]]; then
    say "$unreached of $total_files library files not reached by label $label"
    exit 1
fi
say "all $total_files library files reached by label $label"
