#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build fwdio and run its test suite with ctest: first the normal build
# (build/, every test), then an ASan+UBSan build (build-asan/) and a TSan
# build (build-tsan/), which build and run the sanitizer subset (ctest label
# `sanitize`: tests/CMakeLists.txt says what it holds and why;
# scripts/coverage.sh shows that it reaches every library source file), all
# with Open MPI; then a shorter leg against MPICH (build-mpich/, configured
# with -DMPI_EXECUTABLE_SUFFIX=.mpich), which builds the target mpich-tests
# and runs the unit tests and the MPICH subset (ctest -L '^(unit|mpich)$':
# tests/CMakeLists.txt says what it holds), or says it is skipped where
# MPICH is not installed (mpicc.mpich, mpiexec.mpich).
# Prints each build's build and test time and its ten slowest tests; ends
# with one line "N passed, N failed" over all suites and exits non-zero if
# any suite failed to build or had a failing test.
#
# Usage: scripts/test.sh [--quick] [ctest args...]
#   --quick                    the normal build only (same as
#                              FWDIO_TEST_SANITIZERS=0 FWDIO_TEST_MPICH=0)
#   ctest args                 passed to every ctest run, e.g. -R install
# Environment:
#   FWDIO_TEST_SANITIZERS=0    skip the sanitizer builds
#   FWDIO_TEST_MPICH=0|1       skip the MPICH leg (1: run it with --quick too)
#   FWDIO_TEST_JOBS=N          ctest -j N (default 8 per core: 16 on 2 cores):
#                              tests run side by side while the sum of their
#                              ranks (each test's PROCESSORS) is at most N.
#                              A test's ranks mostly wait (MPI start-up, the
#                              watchdog and fault cases' pauses, each other):
#                              the normal build kept 2 cores 54% busy at -j 4,
#                              90% at -j 16 (docs/results/test-suite.md)
#   FWDIO_TEST_TIMEOUT=S       timeout of a test that sets none (default 600)
#
# Sanitizer options and suppressions reach the tests through the ENVIRONMENT
# property set in CMake (cmake/sanitizer_env.cmake, tests/sanitizers/).
set -Eeuo pipefail
# A command that fails outside the suites' own checks ends the script: say
# where, so that a suite cut short is never silent.
trap 'printf "test: error: line %d: a command exited with %d\n" "$LINENO" "$?" >&2' ERR

say() { printf 'test: %s\n' "$*"; }

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

sanitizers=${FWDIO_TEST_SANITIZERS:-1}
mpich=${FWDIO_TEST_MPICH:-}
quick=0
ctest_args=()
for arg in "$@"; do
    case $arg in
        --quick) sanitizers=0; quick=1 ;;
        -h|--help)
            sed -n '3,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
            exit 0 ;;
        *) ctest_args+=("$arg") ;;
    esac
done
[[ -n $mpich ]] || mpich=$((quick ? 0 : 1))
jobs=${FWDIO_TEST_JOBS:-$((8 * $(nproc 2>/dev/null || echo 2)))}
timeout=${FWDIO_TEST_TIMEOUT:-600}
# This script's settings are not the tests': fwdio reports FWDIO_* variables
# it does not know on stderr.
unset FWDIO_TEST_SANITIZERS FWDIO_TEST_MPICH FWDIO_TEST_JOBS FWDIO_TEST_TIMEOUT

# The MPI tests start mpirun, which refuses root unless told twice; they run
# more ranks than this machine has cores. (Open MPI's variables: MPICH's
# mpiexec runs as root and oversubscribes without being told.)
if [[ $(id -u) -eq 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_rmaps_base_oversubscribe=1

# name  build dir  what to build  ctest label[!label to leave out] ("-": every
# test)  extra cmake args. ThreadSanitizer finds races between threads: the
# tests of label single-thread (unit tests of pure logic that start no
# thread: plan, placement, assembly, budget, byte ranges) run under ASan and
# UBSan only.
suites=("default build all -")
if [[ $sanitizers != 0 ]]; then
    suites+=("asan build-asan sanitize-tests sanitize -DFWDIO_SANITIZE=address"
             "tsan build-tsan sanitize-tests sanitize!single-thread -DFWDIO_SANITIZE=thread")
fi
# MPICH beside Open MPI (Debian: libmpich-dev, mpich, which scripts/setup.sh
# installs): the MPI's compiler and launcher are mpicc.mpich and
# mpiexec.mpich (cmake/mpi.cmake). Checked when the leg's turn comes, after
# the first build's setup.sh has installed what was missing.
if [[ $mpich != 0 ]]; then
    suites+=("mpich build-mpich mpich-tests ^(unit|mpich)$ -DMPI_EXECUTABLE_SUFFIX=.mpich")
fi

total_passed=0
total_failed=0
failed_suites=()
timings=()

# Prints the ten slowest tests of a ctest log ("... Test #N: name ... Passed 1.23 sec").
# awk reads to the end (head would close the pipe early: sort's SIGPIPE then
# fails the pipeline under pipefail and ends the script).
slowest_tests() {
    sed -nE 's/^.*Test +#[0-9]+: ([^ ]+) .* ([0-9]+\.[0-9]+) sec$/\2 \1/p' "$1" |
        sort -rn | awk 'NR <= 10 { printf "test:   %8.2f s  %s\n", $1, $2 }'
}

# Runs one suite; adds to the totals. A suite that does not build, or whose
# ctest runs no test, counts as one failure, so it cannot pass unseen.
run_suite() {
    local name=$1 dir=$2 target=$3 label=$4
    shift 4
    local log t0 build_s test_s
    local -a target_args=() label_args=()
    [[ $target == all ]] || target_args=(--target "$target")
    [[ $label == - ]] || label_args=(-L "${label%%!*}")
    [[ $label != *!* ]] || label_args+=(-LE "${label#*!}")
    say "=== $name: building $dir${label_args[*]:+ (the tests of label $label)}"
    t0=$SECONDS
    if ! bash "$repo_root/scripts/setup.sh" "${target_args[@]}" "$dir" "$@"; then
        say "=== $name: build FAILED"
        total_failed=$((total_failed + 1))
        failed_suites+=("$name (build)")
        timings+=("$(printf '%-8s %7d %7s %7s' "$name" $((SECONDS - t0)) - -)")
        return
    fi
    build_s=$((SECONDS - t0))
    say "=== $name: built in $build_s s; running ctest -j $jobs${label_args[*]:+ ${label_args[*]}} in $dir"
    log=$(mktemp "${TMPDIR:-/tmp}/fwdio-ctest.XXXXXX")
    local rc=0
    t0=$SECONDS
    ctest --test-dir "$repo_root/$dir" --output-on-failure --timeout "$timeout" \
        -j "$jobs" "${label_args[@]}" "${ctest_args[@]}" </dev/null 2>&1 | tee "$log" || rc=$?
    test_s=$((SECONDS - t0))
    timings+=("$(printf '%-8s %7d %7d %7d' "$name" "$build_s" "$test_s" $((build_s + test_s)))")
    say "=== $name: ctest took $test_s s; its ten slowest tests:"
    slowest_tests "$log"

    # ctest closes with "NN% tests passed, F tests failed out of T".
    local line passed failed
    line=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1 || true)
    rm -f -- "$log"
    if [[ -z $line ]]; then
        say "=== $name: ctest ran no test (exit $rc)"
        total_failed=$((total_failed + 1))
        failed_suites+=("$name (no tests)")
        return
    fi
    failed=$(sed -E 's/^.* ([0-9]+) tests? failed out of ([0-9]+).*$/\1/' <<<"$line")
    passed=$(( $(sed -E 's/^.* failed out of ([0-9]+).*$/\1/' <<<"$line") - failed ))
    if [[ $rc -ne 0 && $failed -eq 0 ]]; then
        # ctest failed without a failing test (e.g. a bad argument): count it.
        failed=1
    fi
    say "=== $name: $passed passed, $failed failed"
    total_passed=$((total_passed + passed))
    total_failed=$((total_failed + failed))
    [[ $failed -eq 0 ]] || failed_suites+=("$name")
}

start=$SECONDS
for suite in "${suites[@]}"; do
    read -r -a words <<<"$suite"
    if [[ ${words[0]} == mpich ]] &&
        ! { command -v mpicc.mpich && command -v mpiexec.mpich; } >/dev/null 2>&1; then
        say "=== mpich: skipped: MPICH is not installed (no mpicc.mpich or mpiexec.mpich;" \
            "apt-get install libmpich-dev mpich, or run scripts/setup.sh)"
        timings+=("$(printf '%-8s %7s %7s %7s' mpich skipped - -)")
        continue
    fi
    run_suite "${words[@]}"
done

say "build     build s  test s  total s"
for line in "${timings[@]}"; do
    say "$line"
done
say "finished in $((SECONDS - start)) s"
if [[ ${#failed_suites[@]} -gt 0 ]]; then
    say "failed: ${failed_suites[*]}"
fi
printf '%d passed, %d failed\n' "$total_passed" "$total_failed"
if [[ $total_failed -ne 0 ]]; then
    exit 1
fi
