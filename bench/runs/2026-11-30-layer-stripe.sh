#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue 28, 2026-11-30 (fifteenth session): unmodified LAMMPS (lmp, dump
# custom/mpiio of the LJ melt, a snapshot every 5 of 60 steps) through the
# file-system emulator (4 targets of 50 MB/s, 1 MiB stripes, 1 ms per
# request), plain MPI-IO beside the layer with fwdio's default stripes
# (16 MiB: a ~1.9 MB snapshot is one writer's, written by one I/O thread at
# one target's pace), with FWDIO_STRIPE_SIZE=1M (the emulator's stripe unit,
# as a striping_unit hint would set it), asynchronous syncs and the tier;
# modes interleaved and paired (bench/mpiio_compare). Rerun from the
# repository root after building build, nothing else running:
#   REPS=5 bash bench/runs/2026-11-30-layer-stripe.sh [np2] [np8]
# Raw output: $FWDIO_RESULTS_DIR/2026-11-30-layer-stripe (outside the repository).
set -euo pipefail
R=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-30-layer-stripe}
mkdir -p "$R"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
REPS=${REPS:-5}
BUILD=${BUILD:-build}
PFS4="--targets 4 --stripe 1M --bw 50M --latency 1 --start-target 0"
ARGS="--client lammps --cells 20 --steps 60 --every 5 --reps $REPS --tier --stripe 1M --build $BUILD"
run() {
    case $1 in
    np2) bench/mpiio_compare --ranks 2 --hosts 2 --pfs "$PFS4" $ARGS \
        --csv "$R/np2.csv" | tee "$R/np2.txt" ;;
    np8) bench/mpiio_compare --ranks 8 --hosts 4 --pfs "$PFS4" $ARGS \
        --csv "$R/np8.csv" | tee "$R/np8.txt" ;;
    *) echo "unknown step $1" >&2; return 2 ;;
    esac
}
steps=("$@")
[[ ${#steps[@]} -gt 0 ]] || steps=(np2 np8)
for s in "${steps[@]}"; do
    echo "=== $s: $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
    run "$s"
done
