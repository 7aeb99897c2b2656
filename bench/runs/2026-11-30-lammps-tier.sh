#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue 31, 2026-11-30: LAMMPS's melt with a snapshot every few steps through
# the file-system emulator (4 targets, 1 MiB stripes, 1 ms per request,
# 50 MB/s each, as 2026-11-29-mdlj-peers.sh), the dump written by fwdio
# straight, by fwdio through its node-local tier (lammps-fwdio --local-dir,
# the stream of --format lammps included), by LAMMPS's dump custom and by
# dump custom/mpiio, beside no output: time to solution, and for the tier
# the drain's time after it (bench/lammps_compare, paired by repetition,
# the order rotating; every dump verified against dump custom).
# Steps:
#   np2   2 ranks over 2 simulated hosts (one rank per core)
#   np8   8 ranks over 4 simulated hosts
# Rerun from the repository root after building build (scripts/setup.sh),
# with nothing else running:
#   REPS=3 bash bench/runs/2026-11-30-lammps-tier.sh [np2] [np8]
# Raw output: $FWDIO_RESULTS_DIR/2026-11-30-lammps-tier (outside the repository).
set -euo pipefail
R=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-30-lammps-tier}
mkdir -p "$R"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
REPS=${REPS:-3}
PFS4="--targets 4 --stripe 1M --bw 50M --latency 1 --start-target 0"
MODES=${MODES:-fwdio,fwdio-tier,native,mpiio}
FORMAT=${FORMAT:-lammps}
# 32,000 atoms, a snapshot every 5 of 60 steps: 13 snapshots of ~1.5 MB.
ARGS="--atoms 32000 --steps 60 --every 5 --reps $REPS --modes $MODES --format $FORMAT"

run() {
    case $1 in
    np2) bench/lammps_compare --ranks 2 --hosts 2 --pfs "$PFS4" $ARGS \
        --csv "$R/np2.csv" | tee "$R/np2.txt" ;;
    np8) bench/lammps_compare --ranks 8 --hosts 4 --pfs "$PFS4" $ARGS \
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
