#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue 28, 2026-11-30 (eighteenth session): the MPI-IO layer on interleaved
# 8-byte pieces (fwdio-interleaved --mode mpiio: one MPI_File_write_at_all
# of a vector view per rank, 4 ranks), before (a25872d: the layer's extents
# halved by a rebuild every 2^19 adds, a view of more than 2^22 runs handed
# back to ompio) and after (bb4650f, 31a49ec), plain ompio beside them;
# seconds from open to close (max over ranks), tmpfs, nothing else running.
# Rerun from the repository root after building build and the tree before
# (bench/runs/2026-11-30-parking.sh says how):
#   REPS=2 bash bench/runs/2026-11-30-layer-pieces.sh
# Raw output: $FWDIO_RESULTS_DIR/2026-11-30-layer-pieces (outside the
# repository).
set -euo pipefail
R=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-30-layer-pieces}
mkdir -p "$R"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
B=$(realpath "${BUILD:-build}")
BEFORE=${BEFORE:-/work/wt-before-park/build}
DIR=${SCRATCH:-/dev/shm/layer-pieces}
mkdir -p "$DIR"
rm -f /dev/shm/vader_segment.* 2>/dev/null || true
run() { # tree pieces [layer]
    local tree=$1 pieces=$2 env=()
    [ "${3:-}" = layer ] && env=(-x LD_PRELOAD="$tree/mpiio/libfwdio-mpiio.so" -x FWDIO_MPIIO='*.out')
    (cd "$DIR" && mpiexec -n 4 "${env[@]}" "$tree/bench/fwdio-interleaved" --mode mpiio \
        --pieces "$pieces" --piece 8)
    rm -f "$DIR/interleaved.out"
}
for rep in $(seq 1 "${REPS:-2}"); do
    for pieces in ${PIECES:-2097152 4194304 8388608}; do
        echo "== rep $rep $pieces before layer; load $(cut -d' ' -f1 /proc/loadavg)"
        run "$BEFORE" "$pieces" layer
        echo "== rep $rep $pieces after layer"
        run "$B" "$pieces" layer
        # plain ompio: once (29.7 s at 2^22, 71-80 s at 2^23)
        if [ "$rep" = 1 ]; then
            echo "== rep $rep $pieces plain"
            run "$B" "$pieces"
        fi
    done
done 2>&1 | tee "$R/layer-pieces.txt"
