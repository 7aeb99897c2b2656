#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issues 30 and 31, 2026-11-29: mdlj checkpointing through the file-system
# emulator (4 targets, 1 MiB stripes, 1 ms per request, 50 MB/s each: the
# storage waits) with fwdio against the peers a user would pick instead:
# MPI_File_write_at_all (mpiio), MPI_File_iwrite_at_all waited at the next
# output (mpiio-async), and writing each rank's part to node-local storage
# then copying it with a thread (local-copy, the way SCR and VeloC flush),
# and fwdio with its node-local tier for the checkpoints (fwdio-tier),
# beside no output (none): time to solution, blocked time and CPU, paired
# by repetition, the order rotating (bench/mdlj_compare).
# Steps:
#   np2   2 ranks over 2 simulated hosts (one rank per core)
#   np8   8 ranks over 4 simulated hosts
# Rerun from the repository root after building build (scripts/setup.sh),
# with nothing else running:
#   REPS=3 bash bench/runs/2026-11-29-mdlj-peers.sh [np2] [np8]
# Raw output: $FWDIO_RESULTS_DIR/2026-11-29-mdlj-peers (outside the repository).
set -euo pipefail
R=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-29-mdlj-peers}
mkdir -p "$R"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
REPS=${REPS:-3}
PFS4="--targets 4 --stripe 1M --bw 50M --latency 1 --start-target 0"
MODES=${MODES:-fwdio,fwdio-tier,mpiio,mpiio-async,local-copy,none}
# 100,000 atoms: a 4.8 MB checkpoint every 10 steps, no trajectory, so that
# the checkpoints are what the storage waits for.
ARGS="--atoms 100000 --steps 60 --every 0 --checkpoint-every 10 --reps $REPS --modes $MODES"

run() {
    case $1 in
    np2) bench/mdlj_compare --ranks 2 --hosts 2 --pfs "$PFS4" $ARGS \
        --csv "$R/np2.csv" | tee "$R/np2.txt" ;;
    np8) bench/mdlj_compare --ranks 8 --hosts 4 --pfs "$PFS4" $ARGS \
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
