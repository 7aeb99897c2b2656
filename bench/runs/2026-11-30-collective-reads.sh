#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue 28, 2026-11-30 (nineteenth session): a collective read right after a
# collective write (fwdio-mpiio-calls' "rounds": every rank
# MPI_File_write_at_all's 1 KiB at its own offset, then MPI_File_read_at_all's
# it back, 200 rounds), plain MPI-IO, the layer before 4b97f46 (every
# collective read ended a step of its own) and after, in turn within every
# repetition, 2 and 4 ranks, tmpfs. With HDF5_BUILD set (an HDF5 build with
# its parallel tests, outside the repository), also HDF5's
# t_filters_parallel on 4 ranks in the same three modes (the program behind
# the finding: 12,908 collective reads per rank, each right after a write).
# Rerun from the repository root after building build, and the tree before
# (git worktree add $BEFORE 07dd49d; cmake -S $BEFORE -B $BEFORE/build
# -DCMAKE_BUILD_TYPE=RelWithDebInfo; cmake --build $BEFORE/build --target
# fwdio-mpiio), nothing else running:
#   REPS=5 BEFORE=/work/wt-before-read [HDF5_BUILD=DIR] \
#       bash bench/runs/2026-11-30-collective-reads.sh
# Raw output: $FWDIO_RESULTS_DIR/2026-11-30-collective-reads (outside the repository).
set -euo pipefail
R=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-30-collective-reads}
mkdir -p "$R"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
B=$(realpath "${BUILD:-build}")
BEFORE=$(realpath "${BEFORE:?the tree before 4b97f46, built (see above)}")
DIR=${SCRATCH:-/dev/shm/collective-reads}
mkdir -p "$DIR"
rm -f /dev/shm/vader_segment.* 2>/dev/null || true
layer() { echo "-x LD_PRELOAD=$1/mpiio/libfwdio-mpiio.so -x FWDIO_MPIIO=*"; }
for rep in $(seq 1 "${REPS:-5}"); do
    for np in 2 4; do
        for mode in plain before after; do
            echo "== rep $rep np $np $mode; load $(cut -d' ' -f1 /proc/loadavg)"
            case $mode in
            plain) env= ;;
            before) env=$(layer "$BEFORE/build") ;;
            after) env=$(layer "$B") ;;
            esac
            # shellcheck disable=SC2086
            mpiexec -n $np $env "$B/bench/fwdio-mpiio-calls" --dir "$DIR" --calls 1 --files 1 \
                --rounds 200
        done
    done
    if [ -n "${HDF5_BUILD:-}" ]; then
        for mode in plain before after; do
            case $mode in
            plain) env= ;;
            before) env=$(layer "$BEFORE/build") ;;
            after) env=$(layer "$B") ;;
            esac
            rm -rf "$DIR/h5" && mkdir -p "$DIR/h5"
            t0=$(date +%s.%N)
            # shellcheck disable=SC2086
            (cd "$DIR/h5" && mpiexec -n 4 -x HDF5_ALARM_SECONDS=3600 $env \
                "$HDF5_BUILD/bin/t_filters_parallel" >"$R/t_filters_parallel.$mode.$rep" 2>&1) ||
                echo "t_filters_parallel $mode failed (rc $?)"
            echo "== rep $rep t_filters_parallel np 4 $mode: $(echo "$(date +%s.%N) - $t0" | bc) s;" \
                "load $(cut -d' ' -f1 /proc/loadavg)"
        done
    fi
done 2>&1 | tee "$R/rounds.txt"
rm -rf "$DIR"
