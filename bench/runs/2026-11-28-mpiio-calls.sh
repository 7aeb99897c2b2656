#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue 28 (drop-in MPI-IO): what an MPI-IO write call and a small file cost
# with and without the layer (fwdio-mpiio-calls), and many small interleaved
# pieces through the core API, plain MPI-IO and the layer (fwdio-interleaved),
# this build beside the one before the third session (8c66d9e,
# "before"). Rerun from the repository root after building build (any build
# type; the figures in docs/results/mpiio-layer.md are RelWithDebInfo, the
# default of scripts/setup.sh) and the "before" tree:
#   git worktree add /work/wt-before-28 8c66d9e
#   cmake -S /work/wt-before-28 -B /work/wt-before-28/build -DCMAKE_BUILD_TYPE=RelWithDebInfo
#   cp bench/interleaved.c /work/wt-before-28/bench/ && tail -6 bench/CMakeLists.txt \
#     >> /work/wt-before-28/bench/CMakeLists.txt
#   cmake --build /work/wt-before-28/build --target fwdio-interleaved fwdio-mpiio
#   bash bench/runs/2026-11-28-mpiio-calls.sh [calls] [interleaved]
# Nothing else may run meanwhile: every figure is a ratio of runs side by side.
set -euo pipefail
R=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-28-mpiio-calls}
mkdir -p "$R"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
B=$(realpath "${BUILD:-build}")
BEFORE=${BEFORE:-/work/wt-before-28/build}
# tmpfs: the page cache with no disk behind it, so no writeback of dirty
# pages throttles the calls (on ext4 a plain 4 MiB write call moved from 0.9
# to 9 ms between repetitions).
DIR=${SCRATCH:-/dev/shm/mpiio-calls}
mkdir -p "$DIR"
LAYER="-x LD_PRELOAD=$B/mpiio/libfwdio-mpiio.so -x FWDIO_MPIIO=*.out"
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(calls interleaved)
for step in "${steps[@]}"; do
    case $step in
    calls)
        for rep in 1 2 3; do
            for np in 1 2 4; do
                echo "== rep $rep np $np plain; load $(cut -d' ' -f1 /proc/loadavg)"
                mpiexec -n $np "$B/bench/fwdio-mpiio-calls" --dir "$DIR" --calls 10 --files 20
                echo "== rep $rep np $np layer"
                # shellcheck disable=SC2086
                mpiexec -n $np $LAYER "$B/bench/fwdio-mpiio-calls" --dir "$DIR" --calls 10 --files 20
            done
        done 2>&1 | tee "$R/calls.txt"
        rm -f "$DIR/calls.out"
        ;;
    interleaved)
        for n in 32768 131072 524288; do
            for tree in "$B" "$BEFORE"; do
                echo "== $tree pieces $n; load $(cut -d' ' -f1 /proc/loadavg)"
                (cd "$DIR" && mpiexec -n 2 "$tree/bench/fwdio-interleaved" --mode core --pieces $n)
                (cd "$DIR" && mpiexec -n 2 -x LD_PRELOAD="$tree/mpiio/libfwdio-mpiio.so" \
                    -x FWDIO_MPIIO='*.out' "$tree/bench/fwdio-interleaved" --mode mpiio --pieces $n)
            done
            echo "== plain MPI-IO pieces $n"
            (cd "$DIR" && mpiexec -n 2 "$B/bench/fwdio-interleaved" --mode mpiio --pieces $n)
        done 2>&1 | tee "$R/interleaved.txt"
        rm -f "$DIR/interleaved.out"
        ;;
    *) echo "unknown step $step (calls, interleaved)" >&2; exit 2 ;;
    esac
done
