#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue 28, 2026-11-30 (seventeenth session): a writer's record of which
# bytes of a unit arrived, a range tree per unit before (bade197) and a
# bounded set after (runtime/util/byteset.c: a bitmap once the tree would
# take more). 8-byte pieces of 4 ranks interleaved (HDF5's t_bigio column
# write: 2^21 pieces per rank; fwdio-interleaved, rank r's piece i at
# (4 i + r) 8), through the core API and through the MPI-IO layer, plain
# MPI-IO beside them; seconds from open to close (max over ranks) and each
# rank's peak memory (/usr/bin/time), the builds in turn within every
# repetition, on tmpfs. Rerun from the repository root, nothing else
# running, after building build and the tree before:
#   git worktree add /work/wt-before-byteset bade197
#   cmake -S /work/wt-before-byteset -B /work/wt-before-byteset/build \
#     -DCMAKE_BUILD_TYPE=RelWithDebInfo
#   cmake --build /work/wt-before-byteset/build --target fwdio-interleaved fwdio-mpiio
#   REPS=3 bash bench/runs/2026-11-30-interleaved-record.sh
# Raw output: $FWDIO_RESULTS_DIR/2026-11-30-interleaved-record (outside the
# repository).
set -euo pipefail
R=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-30-interleaved-record}
mkdir -p "$R"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
B=$(realpath "${BUILD:-build}")
BEFORE=${BEFORE:-/work/wt-before-byteset/build}
DIR=${SCRATCH:-/dev/shm/interleaved-record}
mkdir -p "$DIR"
rm -f /dev/shm/vader_segment.* 2>/dev/null || true
PIECES=${PIECES:-2097152} # per rank, as t_bigio
run() { # tree mode [layer]
    local tree=$1 mode=$2 env=()
    [ "${3:-}" = layer ] && env=(-x LD_PRELOAD="$tree/mpiio/libfwdio-mpiio.so" -x FWDIO_MPIIO='*.out')
    (cd "$DIR" && mpiexec -n 4 "${env[@]}" /usr/bin/time -f "peak %M KB" \
        "$tree/bench/fwdio-interleaved" --mode "$mode" --pieces "$PIECES" --piece 8)
    rm -f "$DIR/interleaved.out"
}
for rep in $(seq 1 "${REPS:-3}"); do
    for which in before after; do
        tree=$B
        [ $which = before ] && tree=$BEFORE
        echo "== rep $rep $which core; load $(cut -d' ' -f1 /proc/loadavg)"
        run "$tree" core
        echo "== rep $rep $which layer"
        run "$tree" mpiio layer
    done
    echo "== rep $rep plain MPI-IO"
    run "$B" mpiio
done 2>&1 | tee "$R/interleaved-record.txt"
