#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue 28, 2026-11-30 (sixteenth session): a small file through the MPI-IO
# layer (open, every rank MPI_File_write_at of --small bytes at its own
# offset, close: fwdio-mpiio-calls' "small file"), plain MPI-IO, the layer
# holding a small file's bytes back (FWDIO_MPIIO_HOLD, default 256K) and the
# layer with nothing held (FWDIO_MPIIO_HOLD=0, the behaviour before), and
# the 4 MiB write call beside them; on tmpfs, the three modes in turn within
# every repetition, 2 and 4 ranks. Rerun from the repository root after
# building build, nothing else running (stale shared-memory segments of
# killed jobs slow MPI_File_open: they are removed first):
#   REPS=7 bash bench/runs/2026-11-30-small-hold.sh [SMALL_BYTES...]
# Raw output: $FWDIO_RESULTS_DIR/2026-11-30-small-hold (outside the repository).
set -euo pipefail
R=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-30-small-hold}
mkdir -p "$R"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
B=$(realpath "${BUILD:-build}")
DIR=${SCRATCH:-/dev/shm/small-hold}
mkdir -p "$DIR"
rm -f /dev/shm/vader_segment.* 2>/dev/null || true
LAYER="-x LD_PRELOAD=$B/mpiio/libfwdio-mpiio.so -x FWDIO_MPIIO=*.out"
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(64K)
for small in "${sizes[@]}"; do
    for rep in $(seq 1 "${REPS:-7}"); do
        for np in 2 4; do
            for mode in plain held none; do
                echo "== small $small rep $rep np $np $mode; load $(cut -d' ' -f1 /proc/loadavg)"
                case $mode in
                plain) env= ;;
                held) env="$LAYER" ;;
                none) env="$LAYER -x FWDIO_MPIIO_HOLD=0" ;;
                esac
                # shellcheck disable=SC2086
                mpiexec -n $np $env "$B/bench/fwdio-mpiio-calls" --dir "$DIR" --calls 10 \
                    --files 40 --small "$small"
            done
        done
    done 2>&1 | tee "$R/small-$small.txt"
done
rm -rf "$DIR"
