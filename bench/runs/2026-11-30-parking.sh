#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue 28, 2026-11-30 (eighteenth session): pieces of a unit the writer has
# no buffer for park until one frees (forwarder/write/parking.c) rather than
# a pwrite each. 8-byte pieces of 4 ranks interleaved (fwdio-interleaved,
# rank r's piece i at (4 i + r) 8), past the writers' budget from 2^22
# pieces per rank on, through the core API and through the MPI-IO layer,
# before (a25872d) and after in turn; seconds from open to close (max over
# ranks) and, for the core API, the writers' pwrite calls. On tmpfs,
# nothing else running. Rerun from the repository root after building
# build and the tree before:
#   git worktree add /work/wt-before-park a25872d
#   cmake -S /work/wt-before-park -B /work/wt-before-park/build \
#     -DCMAKE_BUILD_TYPE=RelWithDebInfo
#   cmake --build /work/wt-before-park/build --target fwdio-interleaved fwdio-mpiio
#   REPS=2 bash bench/runs/2026-11-30-parking.sh
# (The tree before prints no pwrite calls: its fwdio-interleaved has no
# such line.) Raw output: $FWDIO_RESULTS_DIR/2026-11-30-parking (outside
# the repository).
set -euo pipefail
R=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-30-parking}
mkdir -p "$R"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
B=$(realpath "${BUILD:-build}")
BEFORE=${BEFORE:-/work/wt-before-park/build}
DIR=${SCRATCH:-/dev/shm/parking}
mkdir -p "$DIR"
rm -f /dev/shm/vader_segment.* 2>/dev/null || true
run() { # tree mode pieces [layer]
    local tree=$1 mode=$2 pieces=$3 env=()
    [ "${4:-}" = layer ] && env=(-x LD_PRELOAD="$tree/mpiio/libfwdio-mpiio.so" -x FWDIO_MPIIO='*.out')
    (cd "$DIR" && mpiexec -n 4 "${env[@]}" "$tree/bench/fwdio-interleaved" --mode "$mode" \
        --pieces "$pieces" --piece 8)
    rm -f "$DIR/interleaved.out"
}
for rep in $(seq 1 "${REPS:-2}"); do
    for pieces in ${PIECES:-2097152 4194304 8388608}; do
        for which in before after; do
            tree=$B
            [ $which = before ] && tree=$BEFORE
            echo "== rep $rep $pieces $which core; load $(cut -d' ' -f1 /proc/loadavg)"
            run "$tree" core "$pieces"
            # the layer before at 2^23: 78 s in the seventeenth session
            if [ $which = after ] || [ "$pieces" -lt 8388608 ]; then
                echo "== rep $rep $pieces $which layer"
                run "$tree" mpiio "$pieces" layer
            fi
        done
    done
done 2>&1 | tee "$R/parking.txt"
